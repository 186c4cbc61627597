//! The latency auto review adds to a call: the same `read` call dispatched through a session
//! whose policy allows it, and through one whose policy sends it to a scripted reviewer that
//! answers at once (so the difference is Qilin's own work: the reviewer's input, the request,
//! streaming and parsing the verdict, the `tool.reviewed` event, the breaker's count).
//!
//! Run: `cargo bench -p qilin-runtime --bench review`

use qilin_model::{Script, ScriptedProvider};
use qilin_runtime::{CodeSandbox, ModelChoice, Runtime};
use qilin_store::{EventStore, MemoryStore};
use qilin_tool::{Caller, ToolCall};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const ALLOW: &str = r#"{"decision":"allow","risk":"low","user_reason":"Reading a note changes nothing.","model_message":""}"#;

fn agent(decision: &str) -> String {
    format!(
        "name: bench\ninstructions: Read.\ntools: [read]\nskills:\n  available: []\n\
         review:\n  rules:\n    - {{ tool: read, decision: {decision} }}\n  auto:\n    \
         model: scripted:reviewer.yaml\n    rules: \"Reading is allowed.\"\n"
    )
}

fn scripted(yaml: &str, label: &str) -> ModelChoice {
    ModelChoice::Provider {
        provider: Arc::new(ScriptedProvider::new(
            Script::parse(yaml, Path::new("bench.yaml")).expect("script"),
        )),
        model: "scripted".into(),
        label: label.into(),
    }
}

/// Per-call latencies of `calls` dispatches of one `read` call, after a warm-up.
async fn measure(decision: &str, calls: usize) -> Vec<Duration> {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".qilin")).expect("folder");
    std::fs::write(dir.path().join("bench.agent"), agent(decision)).expect("agent");
    std::fs::write(dir.path().join("notes.txt"), "a line to read\n".repeat(20)).expect("notes");
    let store = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(store as Arc<dyn EventStore>, CodeSandbox::InProcess);
    let reviewer = format!("turns:\n  - say: '{ALLOW}'\n");
    let session = runtime
        .session(dir.path())
        .agent_file(dir.path().join("bench.agent"))
        .no_sandbox(true)
        .model(scripted("turns:\n  - say: hi\n", "scripted:agent"))
        .reviewer_model(scripted(&reviewer, "scripted:reviewer"))
        .build()
        .await
        .expect("session");
    let executor = session.executor();
    let mut times = Vec::with_capacity(calls);
    for i in 0..calls + 50 {
        let call = ToolCall {
            call_id: format!("c{i}"),
            name: "read".into(),
            arguments: json!({"path": "notes.txt"}),
        };
        let started = Instant::now();
        let outcome = executor.dispatch(call, Caller::Direct).await;
        let took = started.elapsed();
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
        if i >= 50 {
            times.push(took);
        }
    }
    session.close().await.expect("close");
    times.sort();
    times
}

fn pick(times: &[Duration], q: f64) -> Duration {
    times[((times.len() - 1) as f64 * q) as usize]
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    const CALLS: usize = 2_000;
    let (plain, reviewed) =
        runtime.block_on(async { (measure("allow", CALLS).await, measure("auto", CALLS).await) });
    for (label, times) in [
        ("allowed by a rule", &plain),
        ("reviewed (scripted)", &reviewed),
    ] {
        println!(
            "read call, {label:<20} p50 {:>7.3} ms   p99 {:>7.3} ms   ({} calls)",
            millis(pick(times, 0.5)),
            millis(pick(times, 0.99)),
            times.len()
        );
    }
    let added_p50 = millis(pick(&reviewed, 0.5)) - millis(pick(&plain, 0.5));
    let added_p99 = millis(pick(&reviewed, 0.99)) - millis(pick(&plain, 0.99));
    println!("added by auto review: p50 {added_p50:.3} ms, p99 {added_p99:.3} ms (target < 5 ms)");
}
