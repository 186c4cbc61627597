//! `qilin run --resume` of a session whose `qilin run` was killed (`kill -9`) while its
//! `run_code` ran: the resumed session replays the run from its call journal — the calls made
//! before the kill are not run again, the rest run once — the cut turn ends, shown, and then
//! the new prompt's turn runs.

mod support;

use qilin_protocol::{CallStatus, Event, EventBody, FinishReason};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use support::{CODER, FIVE_CALLS, said};

/// `qilin run` on `workspace`, JSON events on standard output.
fn qilin_run(workspace: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_qilin"));
    command
        .args(["run", "--json", "--no-sandbox", "--workspace"])
        .arg(workspace)
        .args(args)
        .env("NO_COLOR", "1")
        .env("QILIN_CONFIG", "/nonexistent/qilin-config.toml")
        .env_remove("QILIN_MODEL")
        .stdin(Stdio::null());
    command
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The session's whole log, as `qilin sessions export` writes it.
fn stored_events(workspace: &Path, session: &str) -> Vec<Event> {
    let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["sessions", "export", session, "--workspace"])
        .arg(workspace)
        .output()
        .expect("qilin sessions export runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_run_cut_by_kill_9_is_replayed_by_qilin_run_resume_then_the_new_prompt_runs() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    std::fs::write(workspace.join("coder.agent"), CODER).unwrap();
    std::fs::write(workspace.join("coder.yaml"), FIVE_CALLS).unwrap();
    let agent = workspace.join("coder.agent");
    let model = format!("scripted:{}", workspace.join("coder.yaml").display());

    let mut first = qilin_run(
        workspace,
        &[
            "--agent",
            agent.to_str().unwrap(),
            "--model",
            &model,
            "append five",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("qilin run starts");
    let mut session = String::new();
    for line in BufReader::new(first.stdout.take().unwrap()).lines() {
        let event: Event = serde_json::from_str(&line.expect("readable output")).unwrap();
        match &event.body {
            EventBody::SessionStarted(started) => session.clone_from(&started.session_id),
            EventBody::ToolResult(result) if result.call_id == "call_1.4" => {
                panic!("the fourth call ended before the kill")
            }
            EventBody::ToolResult(result) if result.call_id == "call_1.3" => break,
            _ => {}
        }
    }
    first.kill().unwrap(); // SIGKILL, during the code's own work after the third call
    first.wait().unwrap();
    assert!(!session.is_empty(), "the log named its session");
    assert_eq!(lines_of(&workspace.join("calls.txt")), ["1", "2", "3"]);

    let resumed = qilin_run(workspace, &["--resume", &session, "how did it go?"])
        .output()
        .expect("qilin run --resume runs");
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(
        lines_of(&workspace.join("calls.txt")),
        ["1", "2", "3", "4", "5"],
        "calls 1–3 were not repeated; 4 and 5 ran once"
    );

    let events = stored_events(workspace, &session);
    let finished: Vec<FinishReason> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::TurnFinished { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [FinishReason::Completed, FinishReason::Completed],
        "the cut turn ended, then the new one"
    );
    let mut results: HashMap<&str, Vec<CallStatus>> = HashMap::new();
    for event in &events {
        if let EventBody::ToolResult(result) = &event.body {
            results
                .entry(result.call_id.as_str())
                .or_default()
                .push(result.status);
        }
    }
    assert_eq!(results.len(), 6, "{results:?}");
    assert!(
        results
            .values()
            .all(|statuses| statuses == &[CallStatus::Ok]),
        "each call ended once, ok: {results:?}"
    );
    let said = said(&events);
    assert_eq!(said, "All five ran.Resumed and answered.");
    // What `--json` printed: the cut turn's end, then the whole new turn.
    let printed: Vec<Event> = String::from_utf8_lossy(&resumed.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(
        printed
            .iter()
            .any(|e| matches!(&e.body, EventBody::ToolResult(r) if r.call_id == "call_1.5")),
        "the replayed run's new calls are shown"
    );
    assert!(matches!(
        printed.last().map(|e| &e.body),
        Some(EventBody::TurnFinished {
            reason: FinishReason::Completed,
            ..
        })
    ));
}
