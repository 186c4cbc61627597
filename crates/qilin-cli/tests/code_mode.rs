//! `run_code` in worker processes (the `qilin` binary serving `qilin subprocess`), and
//! `qilin code run` / `qilin tools stubs` end to end.

#[path = "../../qilin-codemode/tests/support/mod.rs"]
mod support;

use qilin_codemode::{CodeLimits, CodeMode, PoolOptions, WorkerPool};
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;
use support::Harness;

const QILIN: &str = env!("CARGO_BIN_EXE_qilin");

fn pooled(limits: CodeLimits) -> Harness {
    pooled_from(QILIN, limits)
}

fn pooled_from(binary: &str, limits: CodeLimits) -> Harness {
    let mut options = PoolOptions::new(binary);
    options.max_workers = 2;
    options.request_timeout = Duration::from_secs(20);
    Harness::new(CodeMode::workers(WorkerPool::new(options), limits))
}

fn limits() -> CodeLimits {
    CodeLimits {
        wall_time_ms: 1_000,
        memory_mb: 64,
        max_output_bytes: 2_000,
        max_concurrency: 10,
        ..CodeLimits::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_runs_tools_errors_and_gather_like_the_in_process_sandbox() {
    let h = pooled(limits());
    let run = h
        .run(
            r#"
import asyncio
out = {w: sdk.tool.call("echo", {"text": w})["length"] for w in ["ab", "cde"]}
try:
    sdk.tool.call("fail", message="nope")
except ToolError as e:
    out["error"] = sdk.tool.error(e)["code"]
labels = await asyncio.gather(*[sdk.tool.call_async("slow", ms=200, label=str(i)) for i in range(10)])
print(f"{len(labels)} labels")
out
"#,
        )
        .await;
    let output = run.output();
    assert_eq!(output["printed"], "10 labels\n");
    assert_eq!(
        output["value"],
        json!({"ab": 2, "cde": 3, "error": "TOOL_FAILED"})
    );
    assert_eq!(output["tool_calls"], 13);
    assert_eq!(h.gauge.max(), 10, "the gathered calls overlapped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traceback_from_a_worker_has_the_models_file_and_lines() {
    let h = pooled(limits());
    let run = h.run("print('hi')\nx = 1\nsdk.tool.call('nope')").await;
    let error = run.error();
    assert!(error.contains("File \"main.py\", line 3"), "{error}");
    assert!(error.contains("UNKNOWN_TOOL"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_scripts_end_in_clear_errors_and_the_next_run_works() {
    let h = pooled(limits());
    let cases: &[(&str, &str)] = &[
        ("open('/etc/passwd').read()", "PermissionError"),
        ("import os\nos.getenv('HOME')", "PermissionError"),
        ("import subprocess", "ModuleNotFoundError"),
        ("import socket", "ModuleNotFoundError"),
        ("__import__('os')", "NameError"),
        ("().__class__.__subclasses__()", "AttributeError"),
        ("while True:\n    pass", "wall_time_ms limit of 1000 ms"),
        ("s = 'x' * (10 * 1024 ** 3)", "memory_mb limit of 64 MiB"),
        (
            "x = []\nwhile True:\n    x.append('y' * 1000)",
            "memory_mb limit of 64 MiB",
        ),
        ("def f(n):\n    return f(n + 1)\nf(0)", "RecursionError"),
        (
            "while True:\n    print('z' * 1000)",
            "max_output_bytes is 2000",
        ),
        (
            "for i in range(100000):\n    sdk.tool.call('noop')",
            "max_tool_calls limit of 1000",
        ),
    ];
    for (code, expected) in cases {
        let run = h.run(code).await;
        let error = run.error();
        assert!(error.contains(expected), "{code:?} gave {error:?}");
        h.assert_healthy().await;
    }
}

/// The pids of this process's children running `<binary> subprocess`.
fn workers(binary: &str) -> Vec<String> {
    let expected = format!("{binary}\0subprocess\0").into_bytes();
    let me = std::process::id().to_string();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().to_string();
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let parent = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1));
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if parent == Some(me.as_str()) && cmdline == expected {
            pids.push(pid);
        }
    }
    pids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_worker_is_an_error_of_that_run_only() {
    // Workers of this test only: started through a link of their own, so that the workers
    // of tests running alongside are left alone.
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("qilin-crash-test");
    std::os::unix::fs::symlink(QILIN, &link).unwrap();
    let binary = link.to_str().unwrap().to_string();
    let h = pooled_from(
        &binary,
        CodeLimits {
            wall_time_ms: 10_000,
            ..limits()
        },
    );
    h.assert_healthy().await;
    let killer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let pids = workers(&binary);
        assert!(!pids.is_empty(), "no worker process found");
        for pid in pids {
            Command::new("kill").args(["-ABRT", &pid]).status().unwrap();
        }
    });
    let run = h.run("n = 0\nwhile True:\n    n += 1").await;
    killer.await.unwrap();
    let error = run.error();
    assert!(
        error.contains("sandbox worker running the code crashed"),
        "{error}"
    );
    h.assert_healthy().await;
}

fn qilin(args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(QILIN)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn code_run_prints_output_each_call_and_the_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "one\ntwo\n").unwrap();
    let workspace = dir.path().to_str().unwrap();
    let script = "r = sdk.tool.call('glob', {'pattern': '*.md'})\nprint('found')\n{'ok': True}\n";
    let (status, stdout, stderr) = qilin(&["code", "run", "-", "--workspace", workspace], script);
    assert_eq!(status, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("found\n[call code.1] glob ok "),
        "{stdout}"
    );
    assert!(stdout.ends_with("[value] {\"ok\":true}\n"), "{stdout}");

    let (status, stdout, _) = qilin(
        &["code", "run", "-", "--workspace", workspace, "--json"],
        script,
    );
    assert_eq!(status, 0);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["calls"][0]["tool"], "glob");
    assert_eq!(report["calls"][0]["status"], "ok");
    assert_eq!(report["value"], json!({"ok": true}));
}

#[test]
fn code_run_exits_1_with_the_traceback_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().to_str().unwrap();
    let (status, stdout, stderr) = qilin(
        &["code", "run", "-", "--workspace", workspace],
        "print('a')\n\nraise KeyError('k')\n",
    );
    assert_eq!(status, 1);
    assert_eq!(stdout, "");
    assert!(stderr.contains("File \"main.py\", line 3"), "{stderr}");
    assert!(
        stderr.contains("Printed before the failure:\na\n"),
        "{stderr}"
    );
    assert!(stderr.contains("KeyError"), "{stderr}");
}

#[test]
fn tools_stubs_describes_the_named_tools_and_rejects_unknown_names() {
    let (status, stdout, stderr) = qilin(&["tools", "stubs", "glob"], "");
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("class GlobArgs(TypedDict):"), "{stdout}");
    assert!(
        stdout.contains("def call(self, name: Literal[\"glob\"]"),
        "{stdout}"
    );
    assert!(!stdout.contains("Literal[\"grep\"]"), "{stdout}");
    let (status, _, stderr) = qilin(&["tools", "stubs", "glbo"], "");
    assert_eq!(status, 1);
    assert!(stderr.contains("did you mean `glob`"), "{stderr}");
}

#[test]
fn code_run_spills_into_a_private_folder() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().to_str().unwrap();
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    let shared = std::env::temp_dir();
    let shared_before = mode(&shared);
    let script = "for i in range(3000):\n    print('line', i, 'of a long output')\n";
    let (status, out, err) = qilin(
        &["code", "run", "-", "--workspace", workspace, "--json"],
        script,
    );
    assert_eq!(status, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let printed = report["printed"].as_str().unwrap();
    let notice =
        qilin_protocol::parse_spill_notice(printed).expect("the printed output was spilled");
    let file = std::path::Path::new(&notice.path);
    let folder = file.ancestors().nth(2).unwrap();
    let name = folder.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("qilin-code-run-"), "{name}");
    assert_eq!(mode(folder), 0o700, "{}", folder.display());
    assert_eq!(mode(file), 0o600, "{}", file.display());
    // The shared folder the run's folder sits in keeps its mode.
    assert_eq!(folder.parent(), Some(shared.as_path()));
    assert_eq!(mode(&shared), shared_before, "{}", shared.display());
    std::fs::remove_dir_all(folder).unwrap();
}
