//! The load benchmark of `qilin serve`: a real server on 127.0.0.1 over a SQLite file (or the
//! PostgreSQL a `--database postgres://…` names), many sessions each running scripted turns
//! with tool calls, SSE clients attached over HTTP; then the resume of a long session.
//!
//! ```sh
//! cargo bench -p qilin-server --bench load -- [--sessions 200] [--clients 50] [--turns 3] \
//!     [--chunk-delay-ms 0] [--database URL]
//! ```
//!
//! With `--chunk-delay-ms 0` the sessions run as fast as the CPU allows (a closed loop: the
//! events/s figure is the server's throughput at saturation); with `N > 0` the scripted model
//! pauses `N` ms before each streamed event, so the sessions together offer a steady load, and
//! the latency is that of a server not queueing behind itself.
//!
//! It prints the events committed per second; the delay from each event's commit to an SSE
//! client's receipt (p50, p99, max) — the commit instant is noted by a commit observer of the
//! store ([`qilin_store::EventStore::observe_commits`]), called on the store's writer right
//! after the transaction holding the event committed and before any follower is woken; the
//! receipt instant when the client's SSE parser yields the event; the clients run on a thread
//! and runtime of their own, so their own work does not queue behind the server's; the peak
//! memory of the process; and the time a client takes, connecting from `seq` 0 to a
//! 10,000-event session while a turn runs, to reach the first live event.

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use qilin_protocol::Event;
use qilin_runtime::{CodeSandbox, LeaseTiming, Runtime, SessionHost};
use qilin_server::{Access, ServerConfig, ServerState, SessionDefaults, StreamOptions};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
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
    chunk_delay_ms: u64,
    database: Option<String>,
}

fn options() -> Options {
    let mut options = Options {
        sessions: 200,
        clients: 50,
        turns: 3,
        chunk_delay_ms: 0,
        database: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--sessions" => options.sessions = value().parse().expect("--sessions N"),
            "--clients" => options.clients = value().parse().expect("--clients N"),
            "--turns" => options.turns = value().parse().expect("--turns N"),
            "--chunk-delay-ms" => {
                options.chunk_delay_ms = value().parse().expect("--chunk-delay-ms N");
            }
            "--database" => options.database = Some(value()),
            // cargo bench passes `--bench`.
            _ => {}
        }
    }
    options
}

/// A script of `turns` agent turns: each step says a sentence and calls `glob` and `read`,
/// then answers; `chunk_delay_ms` before each streamed event.
fn load_script(turns: usize, chunk_delay_ms: u64) -> String {
    let mut script = format!("chunk_delay_ms: {chunk_delay_ms}\nturns:\n");
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

/// When each session's appends committed: its new head and the instant, in commit order.
type Commits = Arc<Mutex<HashMap<String, Vec<(u64, Instant)>>>>;

/// An event a client received: its session, its `seq` and the instant.
type Receipt = (String, u64, Instant);

/// Milliseconds from each received event's commit to its receipt, for the events committed
/// from `live` on (once every client's stream was open). An event stored before its client
/// connected (the session's `session.started`, committed when the session was created) reaches
/// it as history, which the resume figure times, not as a live delivery.
fn commit_to_client_ms(commits: &Commits, receipts: &[Receipt], live: Instant) -> Vec<f64> {
    let commits = commits.lock().unwrap();
    receipts
        .iter()
        .filter_map(|(session, seq, received)| {
            let heads = &commits[session];
            // The first commit whose head reaches the event is the one that held it.
            let index = heads.partition_point(|(head, _)| head < seq);
            let (_, committed) = heads[index];
            (committed >= live)
                .then(|| received.saturating_duration_since(committed).as_secs_f64() * 1000.0)
        })
        .collect()
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

/// Follows each of `sessions` over SSE from its start until `turns` turns finished, saying on
/// `connected` once every stream is open; returns what was received when.
async fn follow_all(
    base: String,
    token: String,
    sessions: Vec<String>,
    turns: usize,
    connected: tokio::sync::oneshot::Sender<()>,
) -> Vec<Receipt> {
    let http = reqwest::Client::new();
    let mut clients = Vec::new();
    for session in sessions {
        let response = http
            .get(format!(
                "{base}/api/sessions/{session}/events/stream?after=0"
            ))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        clients.push(tokio::spawn(async move {
            let mut receipts = Vec::new();
            let mut finished = 0;
            let mut messages = response.bytes_stream().eventsource();
            while let Some(Ok(message)) = messages.next().await {
                let received = Instant::now();
                if message.event != "message" {
                    continue;
                }
                let event: Event = serde_json::from_str(&message.data).unwrap();
                receipts.push((session.clone(), event.seq, received));
                if matches!(event.body, qilin_protocol::EventBody::TurnFinished { .. }) {
                    finished += 1;
                    if finished == turns {
                        break;
                    }
                }
            }
            receipts
        }));
    }
    let _ = connected.send(());
    let mut receipts = Vec::new();
    for client in clients {
        receipts.extend(client.await.unwrap());
    }
    receipts
}

#[tokio::main]
async fn main() {
    let options = options();
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("agent.agent"), AGENT).unwrap();
    std::fs::write(workspace.join("notes.txt"), "first line\nsecond line\n").unwrap();
    std::fs::write(
        workspace.join("load.yaml"),
        load_script(options.turns, options.chunk_delay_ms),
    )
    .unwrap();
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
    let commits: Commits = Arc::default();
    let noted = Arc::clone(&commits);
    store.observe_commits(Arc::new(move |session: &str, head: u64| {
        let now = Instant::now();
        noted
            .lock()
            .unwrap()
            .entry(session.to_string())
            .or_default()
            .push((head, now));
    }));
    let runtime = Runtime::new(store, CodeSandbox::InProcess);
    let host = SessionHost::new(runtime, "bench", LeaseTiming::default(), |builder| {
        builder.attended(true).no_sandbox(true)
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bound = listener.local_addr().unwrap();
    let token = Access::random_token().unwrap();
    let state = ServerState::new(ServerConfig {
        host,
        defaults: SessionDefaults {
            workspace: workspace.clone(),
            agent_file: Some(workspace.join("agent.agent")),
            model: None,
            no_sandbox: true,
            allowed_roots: Vec::new(),
        },
        access: Access::new(token.clone(), bound),
        stream: StreamOptions::default(),
        max_body: qilin_server::DEFAULT_MAX_BODY,
        connections: qilin_server::ConnectionLimits::default(),
    });
    tokio::spawn(qilin_server::serve(
        listener,
        state.clone(),
        std::future::pending(),
    ));
    let bench = Arc::new(Bench {
        base: format!("http://127.0.0.1:{}", bound.port()),
        token,
        http: reqwest::Client::new(),
    });
    println!(
        "qilin serve load: {} sessions x {} turns, {} SSE clients, chunk delay {} ms, store {}",
        options.sessions,
        options.turns,
        options.clients,
        options.chunk_delay_ms,
        database.split('?').next().unwrap_or_default()
    );

    let mut ids = Vec::new();
    for _ in 0..options.sessions {
        ids.push(bench.create("load.yaml").await);
    }
    // The clients follow the first sessions, each from its start, on a runtime of their own.
    let followed: Vec<String> = ids.iter().take(options.clients).cloned().collect();
    let (base, token, turns) = (bench.base.clone(), bench.token.clone(), options.turns);
    let (connected, all_connected) = tokio::sync::oneshot::channel();
    let clients = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(follow_all(base, token, followed, turns, connected))
    });
    all_connected.await.unwrap();
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
    let receipts = clients.join().unwrap();
    let mut delays = commit_to_client_ms(&commits, &receipts, started);
    delays.sort_by(f64::total_cmp);
    println!(
        "committed {committed} events in {:.2} s: {:.0} events/s",
        elapsed.as_secs_f64(),
        committed as f64 / elapsed.as_secs_f64()
    );
    println!(
        "commit to SSE client ({} live deliveries): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
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
    state.host().shutdown().await;
}
