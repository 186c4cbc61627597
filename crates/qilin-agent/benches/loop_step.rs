//! Loop overhead per step: an instant scripted model asks for one no-op call per step; the
//! figure is the wall time of a 20-step turn divided by its 21 model steps (streaming the
//! answer, `tool.preparing` events, dispatch, results back, the next request).
//!
//! Measured on a one-thread runtime (the loop's own cost) and on two worker threads (as
//! `qilin run` runs it: a call's task may wake on the other thread, and the figures then
//! vary from run to run with the machine's scheduling).
//!
//! Run: `cargo bench -p qilin-agent --bench loop_step`

use qilin_agent::{Agent, AgentPrompt, LoopSettings};
use qilin_model::{Script, ScriptedProvider};
use qilin_test_tools::Noop;
use qilin_tool::{Executor, Session, ToolRegistry};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const CALL_STEPS: usize = 20;
const RUNS: usize = 300;

fn script() -> Script {
    let mut yaml = String::from("turns:\n");
    for step in 0..CALL_STEPS {
        yaml.push_str(&format!(
            "  - say: \"step {step}\"\n    calls: [{{tool: noop, args: {{text: \"hello {step}\"}}}}]\n"
        ));
    }
    yaml.push_str("  - say: \"done\"\n");
    Script::parse(&yaml, Path::new("bench.yaml")).expect("the bench script parses")
}

fn main() {
    let single = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    measure("one thread", &single);
    let pooled = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    measure("two worker threads", &pooled);
}

/// Runs the turns on `runtime` and prints the per-step figures.
fn measure(label: &str, runtime: &tokio::runtime::Runtime) {
    let mut registry = ToolRegistry::new();
    registry.register(Noop).expect("register");
    let registry = Arc::new(registry);
    let tools = registry.tools_list(["noop"]).expect("tools");
    let data = std::env::temp_dir().join("qilin-bench-loop");
    let script = script();
    let mut per_step = Vec::with_capacity(RUNS);
    runtime.block_on(async {
        for run in 0..RUNS + 20 {
            let session = Arc::new(Session::new("bench", &data, &data));
            let mut events = session.events().subscribe();
            let agent = Agent::new(
                Arc::new(ScriptedProvider::new(script.clone())),
                AgentPrompt {
                    system: "You are a benchmark.".into(),
                    tools: tools.clone(),
                },
                Executor::new(Arc::clone(&registry), session),
                LoopSettings {
                    model: "scripted".into(),
                    max_steps: 100,
                    max_tokens: None,
                    reasoning: None,
                },
            );
            let started = Instant::now();
            let summary = agent.run_turn("go", CancellationToken::new()).await;
            let elapsed = started.elapsed();
            assert_eq!(summary.steps as usize, CALL_STEPS + 1);
            while events.try_recv().is_ok() {}
            if run >= 20 {
                per_step.push(elapsed / summary.steps);
            }
        }
    });
    per_step.sort();
    let pick = |q: f64| per_step[((per_step.len() - 1) as f64 * q) as usize];
    let mean: Duration = per_step.iter().sum::<Duration>() / per_step.len() as u32;
    println!(
        "agent loop, instant scripted model, {CALL_STEPS}-call turn, {label:<18}: per step mean {:.1} µs  p50 {:.1} µs  p99 {:.1} µs  ({RUNS} turns)",
        micros(mean),
        micros(pick(0.5)),
        micros(pick(0.99))
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
