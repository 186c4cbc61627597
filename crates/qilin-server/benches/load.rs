//! The load benchmark of `qilin serve`: a real server on 127.0.0.1 over a SQLite file (or the
//! PostgreSQL a `--database postgres://…` names), many sessions each running scripted turns
//! with tool calls, SSE clients attached over HTTP; then the resume of a long session.
//!
//! ```sh
//! cargo bench -p qilin-server --bench load -- [--sessions 200] [--clients 50] [--turns 3] [--database URL]
//! ```
//!
//! It prints the events committed per second, the delay from an event's timestamp (taken when
//! the runtime records it, before the commit) to an SSE client's receipt (p50, p99, max), the
//! peak memory of the process, and the time a client takes, connecting from `seq` 0 to a
//! 10,000-event session while a turn runs, to reach the first live event.

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use qilin_protocol::Event;
use qilin_runtime::{CodeSandbox, Runtime};
use qilin_server::{
    Access, LeaseTiming, ServerConfig, ServerState, SessionDefaults, Sessions, StreamOptions,
};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

const AGENT: &str = "\
name: loader
instructions: Look around.
tools: [glob, read]
skills:
  available: []
limits:
  max_steps: 100
";

struct Options {
    sessions: usize,
    clients: usize,
    turns: usize,
    database: Option<String>,
}

fn options() -> Options {
    let mut options = Options {
        sessions: 200,
        clients: 50,
        turns: 3,
        database: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--sessions" => options.sessions = value().parse().expect("--sessions N"),
            "--clients" => options.clients = value().parse().expect("--clients N"),
            "--turns" => options.turns = value().parse().expect("--turns N"),
            "--database" => options.database = Some(value()),
            // cargo bench passes `--bench`.
            _ => {}
        }
    }
    options
}

/// A script of `turns` agent turns: each step says a sentence and calls `glob` and `read`,
/// then answers.
fn load_script(turns: usize) -> String {
    let mut script = String::from("turns:\n");
    for _ in 0..turns {
        script.push_str(
            "  - say: Looking at the files of the workspace to see what is there.\n    calls:\n      - tool: glob\n        args: {pattern: \"*\"}\n      - tool: read\n        args: {path: notes.txt}\n",
        );
        script.push_str("  - say: The workspace holds the agent file and the notes.\n");
    }
    script
}

struct Bench {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Bench {
    async fn post(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.json().await.unwrap()
    }

    async fn get(&self, path: &str) -> serde_json::Value {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.json().await.unwrap()
    }

    async fn create(&self, script: &str) -> String {
        let created = self
            .post(
                "/api/sessions",
                json!({"model": format!("scripted:{script}")}),
            )
            .await;
        created["id"].as_str().unwrap().to_string()
    }

    async fn events(&self, session: &str, after: u64) -> reqwest::Response {
        self.http
            .get(format!(
                "{}/api/sessions/{session}/events/stream?after={after}",
                self.base
            ))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
    }

    /// Waits until `turns` turns of `session` have finished; returns its `headSeq`.
    async fn wait_idle(&self, session: &str, turns: u64) -> u64 {
        loop {
            let view = self.get(&format!("/api/sessions/{session}")).await;
            if view["turns"].as_u64() == Some(turns)
                && view["activeTurn"].is_null()
                && view["status"] != json!("running")
            {
                return view["headSeq"].as_u64().unwrap();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Milliseconds from the event's timestamp to now.
fn delay_ms(event: &Event) -> f64 {
    let stamped = chrono::DateTime::parse_from_rfc3339(&event.time).unwrap();
    let now = chrono::Utc::now();
    (now.timestamp_micros() - stamped.timestamp_micros()) as f64 / 1000.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn peak_memory_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| {
            value
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

#[tokio::main]
async fn main() {
    let options = options();
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("agent.agent"), AGENT).unwrap();
    std::fs::write(workspace.join("notes.txt"), "first line\nsecond line\n").unwrap();
    std::fs::write(workspace.join("load.yaml"), load_script(options.turns)).unwrap();
    // 10,000 text deltas of 12 bytes, then a slow answer that is followed live.
    let long = "x".repeat(12 * 10_000);
    std::fs::write(
        workspace.join("long.yaml"),
        format!("turns:\n  - say: \"{long}\"\n  - say: And one more thing, slowly.\n"),
    )
    .unwrap();

    let database = options
        .database
        .clone()
        .unwrap_or_else(|| format!("sqlite:{}", dir.path().join("qilin.db").display()));
    let store = qilin_store::open_database(Some(&database), &workspace)
        .await
        .unwrap();
    let runtime = Runtime::new(store, CodeSandbox::InProcess);
    let sessions = Sessions::new(
        runtime,
        "bench",
        SessionDefaults {
            workspace: workspace.clone(),
            agent_file: Some(workspace.join("agent.agent")),
            model: None,
            no_sandbox: true,
        },
        LeaseTiming::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bound = listener.local_addr().unwrap();
    let token = Access::random_token().unwrap();
    let state = ServerState::new(ServerConfig {
        sessions: sessions.clone(),
        access: Access::new(token.clone(), bound),
        stream: StreamOptions::default(),
        max_body: qilin_server::DEFAULT_MAX_BODY,
    });
    let app = qilin_server::app(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let bench = Arc::new(Bench {
        base: format!("http://127.0.0.1:{}", bound.port()),
        token,
        http: reqwest::Client::new(),
    });
    println!(
        "qilin serve load: {} sessions x {} turns, {} SSE clients, store {}",
        options.sessions,
        options.turns,
        options.clients,
        database.split('?').next().unwrap_or_default()
    );

    let mut ids = Vec::new();
    for _ in 0..options.sessions {
        ids.push(bench.create("load.yaml").await);
    }
    // The clients follow the first sessions, each from its start.
    let mut clients = Vec::new();
    for id in ids.iter().take(options.clients) {
        let response = bench.events(id, 0).await;
        let turns = options.turns;
        clients.push(tokio::spawn(async move {
            let mut delays = Vec::new();
            let mut finished = 0;
            let mut messages = response.bytes_stream().eventsource();
            while let Some(Ok(message)) = messages.next().await {
                if message.event != "message" {
                    continue;
                }
                let event: Event = serde_json::from_str(&message.data).unwrap();
                delays.push(delay_ms(&event));
                if matches!(event.body, qilin_protocol::EventBody::TurnFinished { .. }) {
                    finished += 1;
                    if finished == turns {
                        break;
                    }
                }
            }
            delays
        }));
    }
    let started = Instant::now();
    let mut runners = Vec::new();
    for id in ids.clone() {
        let bench = Arc::clone(&bench);
        let turns = options.turns;
        runners.push(tokio::spawn(async move {
            for turn in 0..turns {
                bench
                    .post(
                        &format!("/api/sessions/{id}/turns"),
                        json!({"prompt": format!("turn {turn}")}),
                    )
                    .await;
                bench.wait_idle(&id, turn as u64 + 1).await;
            }
            bench.wait_idle(&id, turns as u64).await
        }));
    }
    let mut committed = 0;
    for runner in runners {
        committed += runner.await.unwrap();
    }
    let elapsed = started.elapsed();
    let mut delays = Vec::new();
    for client in clients {
        delays.extend(client.await.unwrap());
    }
    delays.sort_by(f64::total_cmp);
    println!(
        "committed {committed} events in {:.2} s: {:.0} events/s",
        elapsed.as_secs_f64(),
        committed as f64 / elapsed.as_secs_f64()
    );
    println!(
        "timestamp to SSE client ({} deliveries): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        delays.len(),
        percentile(&delays, 0.50),
        percentile(&delays, 0.99),
        delays.last().copied().unwrap_or_default()
    );

    // Resume: a session of 10,000+ events; a client connects from seq 0 while a turn runs.
    let long = bench.create("long.yaml").await;
    bench
        .post(
            &format!("/api/sessions/{long}/turns"),
            json!({"prompt": "long"}),
        )
        .await;
    let head = bench.wait_idle(&long, 1).await;
    bench
        .post(
            &format!("/api/sessions/{long}/turns"),
            json!({"prompt": "more"}),
        )
        .await;
    let connected = Instant::now();
    let response = bench.events(&long, 0).await;
    let mut messages = response.bytes_stream().eventsource();
    let mut replayed = 0u64;
    let mut first_live = None;
    while let Some(Ok(message)) = messages.next().await {
        if message.event != "message" {
            continue;
        }
        let seq: u64 = message.id.parse().unwrap();
        assert_eq!(seq, replayed + 1, "in order, none lost");
        replayed = seq;
        if seq > head {
            first_live = Some(connected.elapsed());
            break;
        }
    }
    let first_live = first_live.expect("a live event");
    println!(
        "resume of a {head}-event session from seq 0: first live event after {:.1} ms",
        first_live.as_secs_f64() * 1000.0
    );
    println!("peak memory (VmHWM): {:.0} MiB", peak_memory_mib());
    sessions.shutdown().await;
}
