//! A real `qilin serve` for the tests that start one: its command on a scripted agent, the
//! start-up (spawn, read the URL it prints and the token in it), the API calls the tests share,
//! and the kill; and the code-mode agent and script the tests that cut a run share.

// Each test file uses the part it needs.
#![allow(dead_code)]

use qilin_protocol::{Event, EventBody, FinishReason};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A code-mode agent with `bash`, for the runs a test cuts with `kill -9`. The code's own time
/// is not bounded at 10 s: on a loaded machine the second of work a script does to leave a
/// window for the kill takes much longer, and runs again when the run is replayed.
pub const CODER: &str = "\
name: coder
instructions: Run code.
tools: [bash]
code_mode: true
skills:
  available: []
limits:
  code: {wall_time_ms: 300000}
";

/// Five appends to `calls.txt`, with a second of the code's own work after the third (where a
/// test kills the process), then an answer that says what the model read; then the answer of
/// a next turn.
pub const FIVE_CALLS: &str = r#"
turns:
  - calls:
      - tool: run_code
        args:
          code: |
            for i in range(1, 6):
                sdk.tool.call("bash", {"command": f"echo {i} >> calls.txt"})
                if i == 3:
                    n = 0
                    while n < 3000000:
                        n += 1
            "five calls"
  - say: All five ran.
  - say: Resumed and answered.
"#;

/// A running `qilin serve`: its process, base URL, the path of the URL it printed and its
/// token. Its standard output is closed once the URL is read, as `qilin serve | head` would:
/// the server goes on serving. Dropped, it is killed.
pub struct Served {
    /// The server's process.
    pub child: Child,
    /// `http://HOST:PORT`, without a trailing slash.
    pub base: String,
    /// The path of the printed URL (`/`, or the demo session's page).
    pub page: String,
    /// The bearer token the printed URL carries.
    pub token: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `qilin serve` on `workspace`, running its `AGENT.agent` on the scripted model `AGENT.yaml`
/// beside it, storing in the SQLite file `dir/qilin.db`, its token file under `dir/run`; with
/// the sandbox. Not yet started.
pub fn scripted_serve(dir: &Path, workspace: &Path, agent: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_qilin"));
    command
        .arg("serve")
        .arg("--workspace")
        .arg(workspace)
        .arg("--agent")
        .arg(workspace.join(format!("{agent}.agent")))
        .arg("--model")
        .arg(format!(
            "scripted:{}",
            workspace.join(format!("{agent}.yaml")).display()
        ))
        .arg("--database")
        .arg(format!("sqlite:{}", dir.join("qilin.db").display()))
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .env("NO_COLOR", "1");
    command
}

/// [`scripted_serve`] on `dir/workspace`, without the sandbox (`--no-sandbox`).
pub fn unsandboxed_serve(dir: &Path, agent: &str) -> Command {
    let mut command = scripted_serve(dir, &dir.join("workspace"), agent);
    command.arg("--no-sandbox");
    command
}

/// Starts `command` (a `qilin serve`) and returns once it has printed its URL.
pub fn started(mut command: Command) -> Served {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("qilin serve starts");
    let stdout = child.stdout.take().expect("a piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("qilin serve prints its URL")
            .expect("readable output");
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_string();
        }
    };
    drop(lines);
    let (page, token) = url.split_once("#token=").expect("URL with a token");
    let host_end = page["http://".len()..]
        .find('/')
        .map_or(page.len(), |at| at + "http://".len());
    let (base, page) = page.split_at(host_end);
    Served {
        child,
        base: base.to_string(),
        page: page.to_string(),
        token: token.to_string(),
    }
}

impl Served {
    /// The port it listens on.
    pub fn port(&self) -> u16 {
        let port = self.base.rsplit(':').next().expect("a port in the URL");
        port.parse().expect("a port number")
    }

    /// Sends `request` with the token: its status and its body as JSON (`null` if it is not).
    pub async fn send(&self, request: reqwest::RequestBuilder) -> (u16, Value) {
        let response = request.bearer_auth(&self.token).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Creates a session of the server's agent and returns its id.
    pub async fn create_session(&self, client: &reqwest::Client) -> String {
        let (status, created) = self
            .send(
                client
                    .post(format!("{}/api/sessions", self.base))
                    .json(&json!({})),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        created["id"].as_str().unwrap().to_string()
    }

    /// Starts a turn of `session` with `prompt`.
    pub async fn start_turn(&self, client: &reqwest::Client, session: &str, prompt: &str) {
        let (status, started) = self
            .send(
                client
                    .post(format!("{}/api/sessions/{session}/turns", self.base))
                    .json(&json!({ "prompt": prompt })),
            )
            .await;
        assert_eq!(status, 202, "{started}");
    }

    /// Every event of `session`, page by page.
    pub async fn events(&self, client: &reqwest::Client, session: &str) -> Vec<Event> {
        let mut events: Vec<Event> = Vec::new();
        loop {
            let after = events.last().map_or(0, |event| event.seq);
            let (status, page) = self
                .send(client.get(format!(
                    "{}/api/sessions/{session}/events?after={after}&limit=1000",
                    self.base
                )))
                .await;
            assert_eq!(status, 200, "{page}");
            events.extend(serde_json::from_value::<Vec<Event>>(page["events"].clone()).unwrap());
            if page["more"] != json!(true) {
                return events;
            }
        }
    }

    /// Polls the session's events until `done` holds, for at most `secs` seconds; fails
    /// saying `what` once they are up.
    pub async fn wait_for(
        &self,
        client: &reqwest::Client,
        session: &str,
        secs: u64,
        what: &str,
        done: impl Fn(&[Event]) -> bool,
    ) -> Vec<Event> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let events = self.events(client, session).await;
            if done(&events) {
                return events;
            }
            assert!(Instant::now() < deadline, "{what}: {events:#?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Starts a turn of `prompt` and waits, at most a minute, until the session's log holds
    /// `turns` finished turns; returns the log.
    pub async fn run_turn(
        &self,
        client: &reqwest::Client,
        session: &str,
        prompt: &str,
        turns: usize,
    ) -> Vec<Event> {
        self.start_turn(client, session, prompt).await;
        self.wait_for(
            client,
            session,
            60,
            "the new turn never finished",
            |events| finished(events).len() == turns,
        )
        .await
    }

    /// Kills the server with SIGKILL and waits for it to be gone.
    pub fn kill_9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// The text the model said in `events`, all its steps' deltas joined.
pub fn said(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::StepTextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The reason each finished turn of `events` finished, in order.
pub fn finished(events: &[Event]) -> Vec<FinishReason> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::TurnFinished { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}
