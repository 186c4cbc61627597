//! Dispatch overhead of the execution layer for a no-op tool: lookup, validation, review,
//! presentation and the `tool.start`/`tool.result` events, with one event subscriber.
//!
//! Run: `cargo bench -p qilin-tool --bench dispatch`

use qilin_test_tools::Noop;
use qilin_tool::{
    Caller, ExecConfig, Executor, PolicyConfig, Reviewer, RulePolicy, Session, ToolCall,
    ToolRegistry,
};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn measure(label: &str, reviewer: Arc<dyn Reviewer>) {
    let mut registry = ToolRegistry::new();
    registry.register(Noop).expect("register noop");
    let data = std::env::temp_dir().join("qilin-bench-dispatch");
    let session = Arc::new(Session::new("bench", &data, &data));
    let mut events = session.events().subscribe();
    let executor =
        Executor::with_policy(Arc::new(registry), session, reviewer, ExecConfig::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let arguments = json!({"text": "hello", "count": 3});
    const BATCH: u32 = 1_000;
    const BATCHES: usize = 300;
    let mut per_call = Vec::with_capacity(BATCHES);
    runtime.block_on(async {
        for batch in 0..BATCHES + 20 {
            let started = Instant::now();
            for i in 0..BATCH {
                let call = ToolCall {
                    call_id: format!("c{i}"),
                    name: "noop".into(),
                    arguments: arguments.clone(),
                };
                let outcome = executor.dispatch(call, Caller::Direct).await;
                debug_assert!(outcome.error.is_none());
            }
            let elapsed = started.elapsed();
            while events.try_recv().is_ok() {}
            if batch >= 20 {
                per_call.push(elapsed / BATCH);
            }
        }
    });
    per_call.sort();
    let pick = |q: f64| per_call[((per_call.len() - 1) as f64 * q) as usize];
    let mean: Duration = per_call.iter().sum::<Duration>() / per_call.len() as u32;
    println!(
        "dispatch, no-op tool, {label:<22} mean {:>6.2} µs   p50 {:>6.2} µs   p99 {:>6.2} µs   ({} calls)",
        micros(mean),
        micros(pick(0.5)),
        micros(pick(0.99)),
        BATCH as usize * BATCHES
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    measure("allow-all reviewer", Arc::new(qilin_tool::AllowAll));
    let policy: PolicyConfig = serde_json::from_value(json!({
        "rules": [
            {"tool": "bash", "when": {"command": "rm\\s+-rf"}, "decision": "deny"},
            {"tool": "noop", "when": {"text": "^secret"}, "decision": "deny"}
        ]
    }))
    .expect("policy");
    measure(
        "two-rule policy",
        Arc::new(RulePolicy::new(policy).expect("policy")),
    );
}
