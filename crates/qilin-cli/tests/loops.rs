//! A loop and its process: `qilin serve` killed with `kill -9` during an iteration (or while
//! its checks run), started again on the same SQLite file, goes on with the loop by itself —
//! nobody opens the session — recording the cut iteration `interrupted` and running the next
//! one, with nothing done twice; and `qilin loop` on the terminal, one line per iteration and
//! the reason it stopped.

mod support;

use qilin_protocol::loops::{IterationStatus, LoopRecord, LoopStatus, LoopStopReason};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{Served, started, unsandboxed_serve};

/// Bash, with a check that passes once `fixed.txt` exists.
const AGENT: &str = "\
name: looper
instructions: Work on the task.
tools: [bash]
skills:
  available: []
checks:
  - id: fixed
    description: fixed.txt exists.
    command: test -f fixed.txt
";

/// Each iteration adds a line to `attempts.txt`; it writes `fixed.txt` once `go.txt` exists,
/// else sleeps long enough for its server to be killed.
const SCRIPT: &str = r#"
turns:
  - calls:
      - tool: bash
        args: {command: "echo try >> attempts.txt; if [ -f go.txt ]; then echo ok > fixed.txt; else sleep 60; fi"}
  - say: Tried.
"#;

/// A workspace in `dir/workspace` with the agent and its script.
fn workspace_in(dir: &Path) -> std::path::PathBuf {
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("looper.agent"), AGENT).unwrap();
    std::fs::write(workspace.join("looper.yaml"), SCRIPT).unwrap();
    workspace
}

/// The loops of `session`, as `served` lists them.
async fn loops_of(served: &Served, client: &reqwest::Client, session: &str) -> Vec<LoopRecord> {
    let (status, loops) = served
        .send(client.get(format!("{}/api/sessions/{session}/loops", served.base)))
        .await;
    assert_eq!(status, 200, "{loops}");
    serde_json::from_value(loops).unwrap()
}

/// Starts a loop until `check` passes (at most four iterations) in `qilin serve` on `dir`,
/// kills the server with `kill -9` once the workspace holds `marker`, writes `go.txt`, starts
/// another server on the same database and returns the loop as it finished — nobody opening
/// its session.
async fn loop_cut_by_kill_9(dir: &Path, check: &str, marker: &str) -> LoopRecord {
    let workspace = dir.join("workspace");
    let client = reqwest::Client::new();
    let first = started(unsandboxed_serve(dir, "looper"));
    let session = first.create_session(&client).await;
    let (status, looping) = first
        .send(
            client
                .post(format!("{}/api/sessions/{session}/loops", first.base))
                .json(&json!({"prompt": "Make the check pass.",
                              "until": {"checks": [check]}, "maxIterations": 4})),
        )
        .await;
    assert_eq!(status, 201, "{looping}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !workspace.join(marker).exists() {
        assert!(Instant::now() < deadline, "{marker} never appeared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill_9();
    std::fs::write(workspace.join("go.txt"), "go\n").unwrap();

    let second = started(unsandboxed_serve(dir, "looper"));
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let loops = loops_of(&second, &client, &session).await;
        if loops[0].status == LoopStatus::Finished {
            return loops[0].clone();
        }
        assert!(
            Instant::now() < deadline,
            "the loop never went on: {loops:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_iteration_the_loop_goes_on_by_itself_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace_in(dir.path());
    let record = loop_cut_by_kill_9(dir.path(), "fixed", "attempts.txt").await;
    assert_eq!(record.stop_reason, Some(LoopStopReason::ChecksPassed));
    assert_eq!(record.iterations.len(), 2, "{record:#?}");
    assert_eq!(record.iterations[0].status, IterationStatus::Interrupted);
    assert!(
        record.iterations[0]
            .outcome
            .as_deref()
            .unwrap()
            .contains("process running the loop stopped"),
        "{:?}",
        record.iterations[0].outcome
    );
    assert_eq!(record.iterations[1].status, IterationStatus::Finished);
    // Nothing ran twice: one attempt by the cut iteration, one by the next.
    let attempts = std::fs::read_to_string(workspace.join("attempts.txt")).unwrap();
    assert_eq!(attempts.lines().count(), 2, "{attempts}");
}

/// Bash, with a check that notes each run in `checks.txt` and waits, long enough for its
/// server to be killed, until `go.txt` exists.
const SLOW_CHECK_AGENT: &str = "\
name: looper
instructions: Work on the task.
tools: [bash]
skills:
  available: []
checks:
  - id: go
    description: go.txt exists.
    command: echo check >> checks.txt; test -f go.txt || sleep 60; test -f go.txt
";

/// Each iteration adds a line to `attempts.txt` and ends.
const QUICK_SCRIPT: &str = r#"
turns:
  - calls:
      - tool: bash
        args: {command: "echo try >> attempts.txt"}
  - say: Tried.
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_while_the_checks_run_the_loop_goes_on_by_itself_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace_in(dir.path());
    std::fs::write(workspace.join("looper.agent"), SLOW_CHECK_AGENT).unwrap();
    std::fs::write(workspace.join("looper.yaml"), QUICK_SCRIPT).unwrap();
    // Killed once the iteration's turn ended and its checks run: no session is mid-turn.
    let record = loop_cut_by_kill_9(dir.path(), "go", "checks.txt").await;
    assert_eq!(record.stop_reason, Some(LoopStopReason::ChecksPassed));
    assert_eq!(record.iterations.len(), 2, "{record:#?}");
    assert_eq!(record.iterations[0].status, IterationStatus::Interrupted);
    assert_eq!(record.iterations[1].status, IterationStatus::Finished);
    let attempts = std::fs::read_to_string(workspace.join("attempts.txt")).unwrap();
    assert_eq!(attempts.lines().count(), 2, "{attempts}");
    let checks = std::fs::read_to_string(workspace.join("checks.txt")).unwrap();
    assert_eq!(
        checks.lines().count(),
        2,
        "the cut run and the next: {checks}"
    );
}

#[test]
fn qilin_loop_prints_a_line_per_iteration_and_why_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace_in(dir.path());
    // Every iteration adds an attempt; the second one fixes it.
    std::fs::write(
        workspace.join("looper.yaml"),
        r#"
turns:
  - calls:
      - tool: bash
        args: {command: "echo try >> attempts.txt; if [ $(wc -l < attempts.txt) -ge 2 ]; then echo ok > fixed.txt; fi"}
  - say: Tried.
"#,
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .arg("loop")
        .arg("Make the check pass.")
        .args(["--until-checks", "fixed", "--max", "4", "--no-sandbox"])
        .arg("--workspace")
        .arg(&workspace)
        .arg("--agent")
        .arg(workspace.join("looper.agent"))
        .arg("--model")
        .arg(format!(
            "scripted:{}",
            workspace.join("looper.yaml").display()
        ))
        .env("HOME", dir.path())
        .env("XDG_RUNTIME_DIR", dir.path().join("run"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with("#1 · 1 file (+1 −0) · fixed failed · "),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("going on"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("#2 · 2 files (+1 −0) · fixed passed · "),
        "{}",
        lines[1]
    );
    assert!(lines[1].ends_with("checks passed"), "{}", lines[1]);
    assert!(
        lines[2].starts_with("Loop loop-1 finished: the checks passed after 2 iterations"),
        "{}",
        lines[2]
    );

    // A check that is not declared is refused, naming the declared ones.
    let refused = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .arg("loop")
        .arg("Fix it.")
        .args(["--until-checks", "lint", "--max", "2", "--no-sandbox"])
        .arg("--workspace")
        .arg(&workspace)
        .arg("--agent")
        .arg(workspace.join("looper.agent"))
        .arg("--model")
        .arg(format!(
            "scripted:{}",
            workspace.join("looper.yaml").display()
        ))
        .env("HOME", dir.path())
        .env("XDG_RUNTIME_DIR", dir.path().join("run"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("declared checks are: fixed"), "{stderr}");
}
