//! What the bash sandbox costs per call: `bash` running `true` through the execution layer,
//! with the sandbox off and in each confined setting, in a small workspace and in one of
//! 20,000 files (the helper walks the workspace for `*.agent` files on every call); and the
//! same call in a persistent shell (`persistent: true`), whose sandbox starts once; with the
//! network while a Qilin server's token file is in the runtime folder (its port is refused
//! with Landlock rules allowing every other port); and the `write` tool in each workspace,
//! which checks the protected set (a walk of the workspace) before it writes. The bench runs
//! itself again with `XDG_RUNTIME_DIR` set to a temporary folder, so that token file is never
//! the user's.
//!
//! Run with `cargo bench -p qilin-tools --bench bash_sandbox` (with `QILIN_BIN=/path/to/qilin`
//! the helper is that binary's `qilin sandbox-exec`, else the small `qilin-sandbox-exec`).
//! Prints the median and 90th percentile of each over interleaved runs after a warm-up. On a
//! machine that cannot sandbox, only the `off` figures are printed.

use qilin_sandbox::{Sandbox, SandboxHelper, SandboxMode, SandboxSettings};
use qilin_tool::{Caller, Executor, Session, ToolCall, ToolRegistry};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RUNS: usize = 101;
const LARGE_FILES: usize = 20_000;
const FILES_PER_FOLDER: usize = 100;

/// An executor over `workspace` whose session has a sandbox set up as `settings` ask.
fn executor(workspace: &Path, data: &Path, settings: SandboxSettings) -> Option<Executor> {
    let helper = match std::env::var_os("QILIN_BIN") {
        Some(qilin) => SandboxHelper::new(qilin, ["sandbox-exec"]),
        None => SandboxHelper::new(
            env!("CARGO_BIN_EXE_qilin-sandbox-exec"),
            Vec::<String>::new(),
        ),
    };
    let sandbox = match Sandbox::start(settings, helper) {
        Ok(sandbox) => sandbox,
        Err(err) => {
            println!("skipped: {err}");
            return None;
        }
    };
    let mut services = qilin_tools::session_services();
    services.insert(Arc::new(sandbox));
    let mut registry = ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry).unwrap();
    let session = Session::new("bench", workspace, data).with_services(services);
    Some(Executor::new(Arc::new(registry), Arc::new(session)))
}

fn large_workspace(root: &Path) {
    for index in 0..LARGE_FILES {
        let folder = root.join(format!("d{}", index / FILES_PER_FOLDER));
        if index % FILES_PER_FOLDER == 0 {
            std::fs::create_dir_all(&folder).unwrap();
        }
        std::fs::write(folder.join(format!("f{index}.txt")), "x\n").unwrap();
    }
    std::fs::write(root.join("coder.agent"), "name: coder\n").unwrap();
}

fn percentile(sorted: &[Duration], p: usize) -> f64 {
    sorted[(sorted.len() - 1) * p / 100].as_secs_f64() * 1000.0
}

/// Set in the bench's own run with a temporary `XDG_RUNTIME_DIR`.
const CHILD: &str = "QILIN_BENCH_RUNTIME_DIR";

fn main() {
    if std::env::var_os(CHILD).is_none() {
        let runtime = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(std::env::args_os().skip(1))
            .env("XDG_RUNTIME_DIR", runtime.path())
            .env(CHILD, "1")
            .status()
            .unwrap();
        std::process::exit(status.code().unwrap_or(1));
    }
    let server_token = qilin_sandbox::private_runtime_dir()
        .unwrap()
        .join(qilin_sandbox::token_file_name(9));
    let small = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(small.path().join(".git")).unwrap();
    std::fs::write(small.path().join("coder.agent"), "name: coder\n").unwrap();
    let large = tempfile::tempdir().unwrap();
    large_workspace(large.path());
    let data = tempfile::tempdir().unwrap();
    let settings = |mode, network| SandboxSettings {
        mode,
        network,
        ..SandboxSettings::default()
    };
    let cases = [
        ("off", small.path(), settings(SandboxMode::Off, false)),
        (
            "persistent, off",
            small.path(),
            settings(SandboxMode::Off, false),
        ),
        (
            "persistent, workspace-write",
            small.path(),
            settings(SandboxMode::WorkspaceWrite, false),
        ),
        (
            "workspace-write",
            small.path(),
            settings(SandboxMode::WorkspaceWrite, false),
        ),
        (
            "workspace-write, network",
            small.path(),
            settings(SandboxMode::WorkspaceWrite, true),
        ),
        (
            "workspace-write, network, server",
            small.path(),
            settings(SandboxMode::WorkspaceWrite, true),
        ),
        (
            "read-only",
            small.path(),
            settings(SandboxMode::ReadOnly, false),
        ),
        (
            "off, 20k files",
            large.path(),
            settings(SandboxMode::Off, false),
        ),
        (
            "workspace-write, 20k files",
            large.path(),
            settings(SandboxMode::WorkspaceWrite, false),
        ),
    ];
    let executors: Vec<(&str, Executor)> = cases
        .into_iter()
        .filter_map(|(name, workspace, settings)| {
            Some((name, executor(workspace, data.path(), settings)?))
        })
        .collect();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut timings: Vec<Vec<Duration>> = vec![Vec::new(); executors.len()];
    for run in 0..=RUNS {
        for (index, (name, executor)) in executors.iter().enumerate() {
            let call = ToolCall {
                call_id: format!("bench-{index}-{run}"),
                name: "bash".into(),
                arguments: if name.starts_with("persistent") {
                    json!({"command": "true", "persistent": true})
                } else {
                    json!({"command": "true"})
                },
            };
            let server = name.ends_with("server");
            if server {
                std::fs::write(&server_token, "{}").unwrap();
            }
            let started = Instant::now();
            let outcome = runtime.block_on(executor.dispatch(call, Caller::Direct));
            let elapsed = started.elapsed();
            if server {
                std::fs::remove_file(&server_token).unwrap();
            }
            let Some(output) = outcome.output else {
                panic!("{name}: {:?}", outcome.error);
            };
            assert_eq!(output["exit_code"], 0, "{name}: {output}");
            if run > 0 {
                timings[index].push(elapsed);
            }
        }
    }
    println!("`bash` running `true`, {RUNS} interleaved runs after a warm-up\n");
    println!("{:<34} {:>10} {:>10}", "sandbox", "p50 ms", "p90 ms");
    for ((name, _), mut times) in executors.iter().zip(timings) {
        times.sort();
        println!(
            "{name:<34} {:>10.2} {:>10.2}",
            percentile(&times, 50),
            percentile(&times, 90)
        );
    }
    let writers = [
        ("small workspace", small.path()),
        ("20k files", large.path()),
    ]
    .map(|(name, workspace)| {
        let mut registry = ToolRegistry::new();
        qilin_tools::register_builtins(&mut registry).unwrap();
        let session = Session::new("bench", workspace, data.path())
            .with_services(qilin_tools::session_services());
        (name, Executor::new(Arc::new(registry), Arc::new(session)))
    });
    let mut timings: Vec<Vec<Duration>> = vec![Vec::new(); writers.len()];
    for run in 0..=RUNS {
        for (index, (name, executor)) in writers.iter().enumerate() {
            let call = ToolCall {
                call_id: format!("write-{index}-{run}"),
                name: "write".into(),
                arguments: json!({"path": "notes/out.txt", "content": format!("run {run}\n")}),
            };
            let started = Instant::now();
            let outcome = runtime.block_on(executor.dispatch(call, Caller::Direct));
            let elapsed = started.elapsed();
            assert!(outcome.error.is_none(), "{name}: {:?}", outcome.error);
            if run > 0 {
                timings[index].push(elapsed);
            }
        }
    }
    println!("\n`write` of a small file (the protected set checked first), {RUNS} runs\n");
    println!("{:<28} {:>10} {:>10}", "workspace", "p50 ms", "p90 ms");
    for ((name, _), mut times) in writers.iter().zip(timings) {
        times.sort();
        println!(
            "{name:<28} {:>10.2} {:>10.2}",
            percentile(&times, 50),
            percentile(&times, 90)
        );
    }
}
