//! The two figures of subagents, measured through a session built as `qilin run` builds one
//! (the workspace's SQLite database, code mode in process) with the scripted model:
//!
//! - **start → first request**: from the moment the parent's `agent` call is dispatched to the
//!   moment the child's model receives its first request (an instrumented scripted provider
//!   stamps each request; the child's model is its parent's). Also with the in-memory store, to
//!   tell the database's share apart.
//! - **gathered vs serial**: 20 children from one `run_code`, `asyncio.gather` over
//!   `sdk.tool.call_async("agent", …)` vs a loop of `sdk.tool.call("agent", …)`, 4 running at
//!   once (the default bound). Each child's model answers in about 250 ms (`chunk_delay_ms: 50`
//!   before each of its 5 streamed events), standing in for a model's latency.
//!
//! Run: `cargo bench -p qilin-runtime --bench subagents` (figures only: nothing is asserted on
//! time).

use qilin_model::{Message, ModelProvider, ModelRequest, ModelStream, Script, ScriptedProvider};
use qilin_protocol::CallStatus;
use qilin_runtime::{CodeSandbox, ModelChoice, Runtime, SessionHandle};
use qilin_store::{EventStore, MemoryStore, SqliteStore};
use qilin_tool::{Caller, ToolCall};
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The parent: `agent` and `read`, code mode on.
const LEAD: &str = "name: lead\ninstructions: Delegate.\ntools: [agent, read]\ncode_mode: true\n";

/// A model that answers from a script and notes when each conversation's first request came
/// (by the conversation's first user message: each child's prompt is its own).
struct Stamped {
    script: ScriptedProvider,
    first_request: Mutex<HashMap<String, Instant>>,
}

impl Stamped {
    fn new(script: &str) -> Self {
        Stamped {
            script: ScriptedProvider::new(
                Script::parse(script, Path::new("bench.yaml")).expect("script"),
            ),
            first_request: Mutex::new(HashMap::new()),
        }
    }

    fn first_request(&self, prompt: &str) -> Option<Instant> {
        self.first_request
            .lock()
            .expect("stamps")
            .get(prompt)
            .copied()
    }
}

impl ModelProvider for Stamped {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let now = Instant::now();
        if let Some(Message::User { text }) = request.messages.first() {
            self.first_request
                .lock()
                .expect("stamps")
                .entry(text.clone())
                .or_insert(now);
        }
        self.script.stream(request)
    }
}

/// Which store the session writes to.
#[derive(Clone, Copy)]
enum Store {
    Sqlite,
    Memory,
}

/// A temp workspace with the lead, a `quick` child (no model of its own: it gets the parent's)
/// and a `worker` child answering from `worker.yaml` in about 250 ms; the lead's session over
/// `store`, its model `model`.
async fn lead(dir: &Path, store: Store, model: Arc<dyn ModelProvider>) -> (Runtime, SessionHandle) {
    std::fs::create_dir_all(dir.join(".qilin")).expect("folder");
    std::fs::write(dir.join("lead.agent"), LEAD).expect("lead");
    std::fs::write(
        dir.join("quick.agent"),
        "name: quick\ninstructions: Answer.\ntools: [read]\n",
    )
    .expect("quick");
    std::fs::write(
        dir.join("worker.yaml"),
        "chunk_delay_ms: 50\nturns:\n  - say: the worker did what was asked\n",
    )
    .expect("worker script");
    std::fs::write(
        dir.join("worker.agent"),
        format!(
            "name: worker\ninstructions: Work.\ntools: [read]\nmodel: scripted:{}\n",
            dir.join("worker.yaml").display()
        ),
    )
    .expect("worker");
    std::fs::write(dir.join("notes.txt"), "a line to read\n").expect("notes");
    let store: Arc<dyn EventStore> = match store {
        Store::Sqlite => {
            Arc::new(SqliteStore::open_in_workspace(dir).expect("the workspace's database"))
        }
        Store::Memory => Arc::new(MemoryStore::new()),
    };
    let runtime = Runtime::new(store, CodeSandbox::InProcess);
    let session = runtime
        .session(dir)
        .agent_file(dir.join("lead.agent"))
        .no_sandbox(true)
        .model(ModelChoice::Provider {
            provider: model,
            model: "scripted".into(),
            label: "scripted:lead".into(),
        })
        .build()
        .await
        .expect("the lead's session");
    (runtime, session)
}

/// Start → first request of `runs` foreground children (after 5 not counted), one at a time,
/// and each whole `agent` call (the child's model answers at once).
async fn start_latency(store: Store, runs: usize) -> (Vec<Duration>, Vec<Duration>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = Arc::new(Stamped::new("turns:\n  - say: done\n"));
    let (_runtime, session) = lead(
        dir.path(),
        store,
        Arc::clone(&model) as Arc<dyn ModelProvider>,
    )
    .await;

    let executor = session.executor();
    let mut times = Vec::with_capacity(runs);
    let mut calls = Vec::with_capacity(runs);
    for i in 0..runs + 5 {
        let prompt = format!("task {i}");
        let call = ToolCall {
            call_id: format!("agent-{i}"),
            name: "agent".into(),
            arguments: json!({"agent": "quick", "prompt": prompt, "description": "Answer"}),
        };
        let started = Instant::now();
        let outcome = executor.dispatch(call, Caller::Direct).await;
        let whole = started.elapsed();
        assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.content);
        let requested = model.first_request(&prompt).expect("the child's request");
        if i >= 5 {
            times.push(requested.duration_since(started));
            calls.push(whole);
        }
    }
    session.close().await.expect("close");
    times.sort();
    calls.sort();
    (times, calls)
}

/// The wall time of one `run_code` call running `code` (20 `worker` children).
async fn fan_out(code: &str) -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = Arc::new(Stamped::new("turns:\n  - say: done\n"));
    let (_runtime, session) = lead(dir.path(), Store::Sqlite, model).await;
    let call = ToolCall {
        call_id: "code".into(),
        name: "run_code".into(),
        arguments: json!({ "code": code }),
    };
    let started = Instant::now();
    let outcome = session.executor().dispatch(call, Caller::Direct).await;
    let took = started.elapsed();
    assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.content);
    session.close().await.expect("close");
    took
}

const GATHERED: &str = r#"import asyncio
done = await asyncio.gather(*[sdk.tool.call_async("agent", {"agent": "worker", "prompt": f"task {i}", "description": f"task {i}"}) for i in range(20)])
assert all(r["status"] == "completed" for r in done), done
"#;

const SERIAL: &str = r#"for i in range(20):
    r = sdk.tool.call("agent", {"agent": "worker", "prompt": f"task {i}", "description": f"task {i}"})
    assert r["status"] == "completed", r
"#;

fn pick(times: &[Duration], q: f64) -> Duration {
    times[((times.len() - 1) as f64 * q).round() as usize]
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The process's CPU time so far (user + system), from `/proc/self/stat`.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after `) state`.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|line| {
            line.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    const RUNS: usize = 100;
    println!("load before: {}", load());
    for (label, store) in [("SQLite", Store::Sqlite), ("memory", Store::Memory)] {
        let cpu_before = cpu_time();
        let (times, calls) = runtime.block_on(start_latency(store, RUNS));
        let cpu = cpu_time()
            .zip(cpu_before)
            .map(|(after, before)| millis(after - before) / (RUNS + 5) as f64);
        println!(
            "agent start -> child's first request ({label:<6}): p50 {:>6.2} ms  p95 {:>6.2} ms  \
             min {:>6.2} ms  max {:>6.2} ms  ({RUNS} children; {} ms CPU a child, whole run)",
            millis(pick(&times, 0.5)),
            millis(pick(&times, 0.95)),
            millis(times[0]),
            millis(times[times.len() - 1]),
            cpu.map_or("?".into(), |cpu| format!("{cpu:.1}")),
        );
        println!(
            "  the whole agent call, its child answering at once ({label:<6}): p50 {:>6.2} ms  \
             p95 {:>6.2} ms",
            millis(pick(&calls, 0.5)),
            millis(pick(&calls, 0.95)),
        );
    }
    const ROUNDS: usize = 3;
    let mut gathered = Vec::new();
    let mut serial = Vec::new();
    let (mut gathered_cpu, mut serial_cpu) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..ROUNDS {
        let before = cpu_time();
        gathered.push(runtime.block_on(fan_out(GATHERED)));
        let between = cpu_time();
        serial.push(runtime.block_on(fan_out(SERIAL)));
        let after = cpu_time();
        if let (Some(before), Some(between), Some(after)) = (before, between, after) {
            gathered_cpu += between - before;
            serial_cpu += after - between;
        }
    }
    let show = |times: &[Duration]| {
        times
            .iter()
            .map(|t| format!("{:.2}", t.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    gathered.sort();
    serial.sort();
    println!(
        "20 children, gathered (4 at once): {} s; one after another: {} s",
        show(&gathered),
        show(&serial)
    );
    println!(
        "CPU a run: gathered {:.2} s, one after another {:.2} s",
        gathered_cpu.as_secs_f64() / ROUNDS as f64,
        serial_cpu.as_secs_f64() / ROUNDS as f64
    );
    println!(
        "speed-up, median over median: {:.2}x (each child's model takes ~250 ms: 4x is the \
         ceiling)",
        pick(&serial, 0.5).as_secs_f64() / pick(&gathered, 0.5).as_secs_f64()
    );
    println!("load after: {}", load());
}
