//! Code mode's speed, side by side: `run_code` with one no-op tool call (in-process and in a
//! warm worker), 10,000 sequential tool calls in one run, and the same two workloads done the
//! way a subprocess sandbox does them (CPython spawned per run, `sdk` speaking JSON over
//! stdio to the host), plus the cost of type checking.
//!
//! ```sh
//! cargo build --release -p qilin-cli             # the worker binary for the pooled figures
//! cargo bench -p qilin-codemode --bench code --features type-check
//! # QILIN_BIN=/path/to/qilin to use another worker binary
//! ```

use qilin_codemode::{
    CodeLimits, CodeMode, PoolOptions, RunCode, WorkerPool, python_stubs, type_check,
};
use qilin_protocol::CallStatus;
use qilin_test_tools::Noop;
use qilin_tool::{Caller, Executor, Session, ToolCall, ToolRegistry};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ONE_CALL: &str = "sdk.tool.call('noop')";
const TEN_THOUSAND: &str = "for i in range(10000):\n    sdk.tool.call('noop')";

fn executor(mode: CodeMode, data: &std::path::Path) -> Executor {
    let mut registry = ToolRegistry::new();
    registry.register(Noop).expect("noop registers");
    registry
        .register(RunCode::new(mode))
        .expect("run_code registers");
    let session = Session::new("bench", data, data.join("data"));
    Executor::new(Arc::new(registry), Arc::new(session))
}

async fn run_code(executor: &Executor, code: &str, n: usize) -> Duration {
    let started = Instant::now();
    let outcome = executor
        .dispatch(
            ToolCall {
                call_id: format!("b{n}"),
                name: "run_code".into(),
                arguments: json!({ "code": code }),
            },
            Caller::Direct,
        )
        .await;
    let elapsed = started.elapsed();
    assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.error);
    elapsed
}

struct Figures(Vec<Duration>);

impl Figures {
    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort();
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted[index]
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn line(label: &str, figures: &Figures) {
    println!(
        "{label:<58} p50 {:>11}  p99 {:>11}  (n={})",
        ms(figures.percentile(0.5)),
        ms(figures.percentile(0.99)),
        figures.0.len()
    );
}

async fn measure(executor: &Executor, code: &str, warmup: usize, n: usize) -> Figures {
    for i in 0..warmup {
        run_code(executor, code, i).await;
    }
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        times.push(run_code(executor, code, warmup + i).await);
    }
    Figures(times)
}

fn worker_binary() -> Option<PathBuf> {
    let path = std::env::var_os("QILIN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/release/qilin")
        });
    path.exists().then_some(path)
}

/// The `sdk` of a subprocess sandbox: each call is a JSON line on stdout, answered by a JSON
/// line on stdin.
const CPYTHON_DRIVER: &str = r#"
import json, sys
class _Tool:
    def call(self, name, args=None, **kwargs):
        args = dict(args or {}, **kwargs)
        sys.stdout.write(json.dumps({"call": name, "args": args}) + "\n")
        sys.stdout.flush()
        reply = json.loads(sys.stdin.readline())
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["output"]
class _Sdk:
    tool = _Tool()
sdk = _Sdk()
exec(sys.argv[1])
sys.stdout.write(json.dumps({"done": True}) + "\n")
"#;

/// Runs `code` in a fresh CPython, serving its tool calls through the execution layer.
async fn cpython_run(executor: &Executor, code: &str, n: usize) -> Duration {
    let started = Instant::now();
    let mut child = Command::new("python3")
        .args(["-c", CPYTHON_DRIVER, code])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut calls = 0;
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).expect("read") == 0 {
            break;
        }
        let request: Value = serde_json::from_str(&line).expect("json from python");
        if request.get("done").is_some() {
            break;
        }
        calls += 1;
        let outcome = executor
            .dispatch(
                ToolCall {
                    call_id: format!("py{n}.{calls}"),
                    name: request["call"].as_str().unwrap_or_default().to_string(),
                    arguments: request["args"].clone(),
                },
                Caller::Code {
                    parent_call_id: format!("py{n}"),
                },
            )
            .await;
        let reply = match outcome.output {
            Some(output) => json!({ "output": output }),
            None => json!({ "error": format!("{:?}", outcome.error) }),
        };
        writeln!(stdin, "{reply}").expect("write");
        stdin.flush().expect("flush");
    }
    drop(stdin);
    let status = child.wait().expect("python3 exits");
    assert!(status.success(), "python3 failed");
    started.elapsed()
}

async fn bench() {
    let dir = tempfile::tempdir().expect("tempdir");
    let limits = CodeLimits {
        max_tool_calls: 20_000,
        wall_time_ms: 60_000,
        ..CodeLimits::default()
    };
    println!("code mode benchmarks (one run, side by side)\n");

    let in_process = executor(CodeMode::in_process(limits), dir.path());
    let a_in = measure(&in_process, ONE_CALL, 200, 2_000).await;
    line("(a) run_code + 1 no-op call, in-process", &a_in);

    let pooled = match worker_binary() {
        Some(binary) => {
            let mut options = PoolOptions::new(binary);
            options.max_workers = 1;
            let pool = WorkerPool::new(options);
            pool.start().await.expect("the workers start");
            let pooled = executor(CodeMode::workers(pool, limits), dir.path());
            let a_pool = measure(&pooled, ONE_CALL, 50, 500).await;
            line("(a) run_code + 1 no-op call, pooled worker (warm)", &a_pool);
            Some((pooled, a_pool))
        }
        None => {
            println!(
                "(a) pooled: skipped — build the worker with `cargo build --release -p qilin-cli` \
                 or set QILIN_BIN"
            );
            None
        }
    };

    let b_in = measure(&in_process, TEN_THOUSAND, 1, 5).await;
    line("(b) 10,000 sequential calls in one run, in-process", &b_in);
    if let Some((pooled, _)) = &pooled {
        let b_pool = measure(pooled, TEN_THOUSAND, 1, 5).await;
        line(
            "(b) 10,000 sequential calls in one run, pooled worker",
            &b_pool,
        );
    }

    let mut c_one = Vec::new();
    for n in 0..30 {
        c_one.push(cpython_run(&in_process, ONE_CALL, n).await);
    }
    let c_one = Figures(c_one);
    line(
        "(c) CPython spawned per run + JSON stdio sdk, 1 call",
        &c_one,
    );
    let mut c_many = Vec::new();
    for n in 0..3 {
        c_many.push(cpython_run(&in_process, TEN_THOUSAND, 100 + n).await);
    }
    let c_many = Figures(c_many);
    line(
        "(c) CPython spawned per run + JSON stdio sdk, 10,000 calls",
        &c_many,
    );

    let ratio =
        |fast: &Figures| c_one.percentile(0.5).as_secs_f64() / fast.percentile(0.5).as_secs_f64();
    println!(
        "\n(a) in-process is {:.0}x faster than (c) at p50",
        ratio(&a_in)
    );
    if let Some((_, a_pool)) = &pooled {
        println!("(a) pooled is {:.0}x faster than (c) at p50", ratio(a_pool));
    }

    let mut registry = ToolRegistry::new();
    registry.register(Noop).expect("noop registers");
    let stubs = python_stubs(registry.list());
    let code = "r = sdk.tool.call('noop')\nprint(r)\n";
    let started = Instant::now();
    type_check(code, &stubs).expect("clean code type-checks");
    let first = started.elapsed();
    let mut warm = Vec::new();
    for i in 0..50 {
        let code = format!("r = sdk.tool.call('noop')\nprint(r, {i})\n");
        let started = Instant::now();
        type_check(&code, &stubs).expect("clean code type-checks");
        warm.push(started.elapsed());
    }
    println!("\ntype check, first on a new checker: {}", ms(first));
    line("type check, warm (a new script each time)", &Figures(warm));
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(bench());
}
