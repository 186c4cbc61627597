//! A `run_code` survives `kill -9` of `qilin serve`: the next server replays it from the call
//! journal — the calls it made before the kill are not run again, the rest run once — and the
//! turn goes on, the model reading the run's result. A run waiting on an approval when the
//! server dies asks again after the restart and continues once answered.

mod support;

use qilin_protocol::{CallStatus, Event, EventBody, FinishReason};
use serde_json::json;
use std::path::Path;
use support::{CODER, FIVE_CALLS, finished, said, started, unsandboxed_serve};

fn has_result(events: &[Event], call_id: &str) -> bool {
    events
        .iter()
        .any(|e| matches!(&e.body, EventBody::ToolResult(r) if r.call_id == call_id))
}

/// How many `tool.start` events each nested call of `run` has.
fn nested_starts(events: &[Event], run: &str) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolStart(start) if start.parent_call_id.as_deref() == Some(run) => {
                Some(start.call_id.clone())
            }
            _ => None,
        })
        .collect()
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_after_its_third_call_completes_after_the_restart_without_repeating_one() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("coder.agent"), CODER).unwrap();
    std::fs::write(workspace.join("coder.yaml"), FIVE_CALLS).unwrap();
    let client = reqwest::Client::new();

    let first = started(unsandboxed_serve(dir.path(), "coder"));
    let session = first.create_session(&client).await;
    first.start_turn(&client, &session, "append five").await;
    let seen = first
        .wait_for(
            &client,
            &session,
            60,
            "the third call never ended",
            |events| has_result(events, "call_1.3"),
        )
        .await;
    assert!(
        !has_result(&seen, "call_1.4"),
        "killed before the fourth call"
    );
    assert!(finished(&seen).is_empty());
    first.kill_9();
    assert_eq!(lines_of(&workspace.join("calls.txt")), ["1", "2", "3"]);

    let second = started(unsandboxed_serve(dir.path(), "coder"));
    let events = second
        .wait_for(&client, &session, 90, "the turn never finished", |events| {
            !finished(events).is_empty()
        })
        .await;
    assert_eq!(finished(&events), [FinishReason::Completed], "{events:#?}");
    assert_eq!(
        lines_of(&workspace.join("calls.txt")),
        ["1", "2", "3", "4", "5"],
        "calls 1–3 were not repeated; 4 and 5 ran once"
    );
    let run = events
        .iter()
        .rev()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.call_id == "call_1" => Some(result.clone()),
            _ => None,
        })
        .expect("the run's result");
    assert_eq!(run.status, CallStatus::Ok, "{run:?}");
    assert_eq!(run.output.as_ref().unwrap()["value"], "five calls");
    assert_eq!(
        nested_starts(&events, "call_1"),
        ["call_1.1", "call_1.2", "call_1.3", "call_1.4", "call_1.5"],
        "one card per call: the replayed ones were not recorded again"
    );
    let said = said(&events);
    assert!(said.contains("All five ran."), "the turn went on: {said}");
}

const CAREFUL: &str = "\
name: careful
instructions: Run code, asking before each command.
tools: [bash]
code_mode: true
skills:
  available: []
review:
  default: allow
  rules:
    - { tool: bash, decision: ask, reason: \"commands need approval\" }
";

const ONE_APPROVED_CALL: &str = r#"
turns:
  - calls:
      - tool: run_code
        args:
          code: |
            out = sdk.tool.call("bash", {"command": "echo approved >> calls.txt; echo done"})
            out
  - say: It ran.
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waiting_on_an_approval_asks_again_after_the_restart_and_continues_once_answered() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("careful.agent"), CAREFUL).unwrap();
    std::fs::write(workspace.join("careful.yaml"), ONE_APPROVED_CALL).unwrap();
    let client = reqwest::Client::new();

    let first = started(unsandboxed_serve(dir.path(), "careful"));
    let session = first.create_session(&client).await;
    first.start_turn(&client, &session, "run it").await;
    first
        .wait_for(&client, &session, 60, "no approval was asked", |events| {
            events
                .iter()
                .any(|e| matches!(&e.body, EventBody::RequestOpened(o) if o.call_id == "call_1.1"))
        })
        .await;
    first.kill_9();
    assert!(lines_of(&workspace.join("calls.txt")).is_empty());

    let second = started(unsandboxed_serve(dir.path(), "careful"));
    let events = second
        .wait_for(&client, &session, 60, "the approval was not asked again", |events| {
            events
                .iter()
                .filter(|e| matches!(&e.body, EventBody::RequestOpened(o) if o.call_id == "call_1.1"))
                .count()
                == 2
        })
        .await;
    assert!(finished(&events).is_empty(), "the turn is still open");
    let (status, open) = second
        .send(client.get(format!("{}/api/sessions/{session}/requests", second.base)))
        .await;
    assert_eq!(status, 200, "{open}");
    let requests = open["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 1, "only the new request is open: {open}");
    let request = requests[0]["requestId"].as_str().unwrap();
    let (status, answered) = second
        .send(
            client
                .post(format!(
                    "{}/api/sessions/{session}/requests/{request}",
                    second.base
                ))
                .json(&json!({"reply": "approve"})),
        )
        .await;
    assert_eq!(status, 200, "{answered}");

    let events = second
        .wait_for(&client, &session, 60, "the turn never finished", |events| {
            !finished(events).is_empty()
        })
        .await;
    assert_eq!(finished(&events), [FinishReason::Completed], "{events:#?}");
    assert_eq!(lines_of(&workspace.join("calls.txt")), ["approved"]);
    let run = events
        .iter()
        .rev()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.call_id == "call_1" => Some(result.clone()),
            _ => None,
        })
        .expect("the run's result");
    assert_eq!(run.status, CallStatus::Ok, "{run:?}");
}

/// An agent running workflows (and their calls) in code mode.
const FLOWS: &str = "\
name: flows
instructions: Run workflows.
tools: [bash, workflow_run, workflow_status]
code_mode: true
skills:
  available: []
limits:
  code: {wall_time_ms: 300000}
";

/// A workflow of five appends to `calls.txt`, a report section before them and one after,
/// with a second of the script's own work after the third append.
const FIVE_STEPS: &str = r#""""
description: Append five lines and report.
"""
sdk.report("Plan", "five appends")
for i in range(1, 6):
    sdk.tool.call("bash", {"command": f"echo {i} >> calls.txt"})
    if i == 3:
        n = 0
        while n < 3000000:
            n += 1
sdk.report("Done", "five lines")
"five calls"
"#;

/// Writes the `flows` agent, its script and the `five` workflow in `dir/workspace`.
fn flows_workspace(dir: &Path, script: &str) -> std::path::PathBuf {
    let workspace = dir.join("workspace");
    let workflows = workspace.join(".qilin").join("workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    std::fs::write(workflows.join("five.py"), FIVE_STEPS).unwrap();
    std::fs::write(workspace.join("flows.agent"), FLOWS).unwrap();
    std::fs::write(workspace.join("flows.yaml"), script).unwrap();
    workspace
}

/// The runs `workflow.started` and `workflow.finished` record, in order.
fn workflow_events(events: &[Event]) -> (Vec<String>, Vec<qilin_protocol::workflows::WorkflowRun>) {
    let started = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::WorkflowStarted(started) => Some(started.run.run_id.clone()),
            _ => None,
        })
        .collect();
    let finished = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::WorkflowFinished(finished) => Some(finished.run.clone()),
            _ => None,
        })
        .collect();
    (started, finished)
}

/// Checks the run resumed after the kill: one start, one end, completed under `wf1`, each
/// call a step once (the three journaled ones marked replayed), each report section once.
fn assert_resumed_once(events: &[Event]) {
    let (started, finished) = workflow_events(events);
    assert_eq!(started, ["wf1"], "no second workflow.started");
    assert_eq!(finished.len(), 1, "one workflow.finished: {finished:#?}");
    let run = &finished[0];
    assert_eq!(run.run_id, "wf1");
    assert_eq!(run.call_id.as_deref(), Some("call_1"));
    assert_eq!(
        run.status,
        qilin_protocol::workflows::WorkflowStatus::Completed,
        "{run:#?}"
    );
    assert_eq!(run.result, Some(json!("five calls")));
    let steps: Vec<(String, bool)> = run
        .steps
        .iter()
        .map(|step| {
            (
                step.call_id.clone().unwrap_or_else(|| step.title.clone()),
                step.replayed,
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("Plan".to_string(), false),
            ("call_1.1".to_string(), true),
            ("call_1.2".to_string(), true),
            ("call_1.3".to_string(), true),
            ("call_1.4".to_string(), false),
            ("call_1.5".to_string(), false),
            ("Done".to_string(), false),
        ],
        "{run:#?}"
    );
    assert!(
        run.steps
            .iter()
            .filter(|step| step.call_id.is_some())
            .all(|step| step.status.as_deref() == Some("ok")),
        "{run:#?}"
    );
    assert_eq!(
        nested_starts(events, "call_1"),
        ["call_1.1", "call_1.2", "call_1.3", "call_1.4", "call_1.5"],
        "one card per call: the replayed ones were not recorded again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_workflow_killed_after_its_third_call_completes_under_its_id_after_the_restart()
 {
    let dir = tempfile::tempdir().unwrap();
    let workspace = flows_workspace(
        dir.path(),
        "turns:\n  - calls:\n      - tool: workflow_run\n        args: {workflow: five}\n  - say: The workflow ran.\n",
    );
    let client = reqwest::Client::new();

    let first = started(unsandboxed_serve(dir.path(), "flows"));
    let session = first.create_session(&client).await;
    first.start_turn(&client, &session, "run five").await;
    let seen = first
        .wait_for(
            &client,
            &session,
            60,
            "the third call never ended",
            |events| has_result(events, "call_1.3"),
        )
        .await;
    assert!(
        !has_result(&seen, "call_1.4"),
        "killed before the fourth call"
    );
    assert!(finished(&seen).is_empty());
    first.kill_9();
    assert_eq!(lines_of(&workspace.join("calls.txt")), ["1", "2", "3"]);

    let second = started(unsandboxed_serve(dir.path(), "flows"));
    let events = second
        .wait_for(&client, &session, 90, "the turn never finished", |events| {
            !finished(events).is_empty()
        })
        .await;
    assert_eq!(finished(&events), [FinishReason::Completed], "{events:#?}");
    assert_resumed_once(&events);
    assert_eq!(
        lines_of(&workspace.join("calls.txt")),
        ["1", "2", "3", "4", "5"],
        "calls 1–3 were not repeated; 4 and 5 ran once"
    );
    let result = events
        .iter()
        .rev()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.call_id == "call_1" => Some(result.clone()),
            _ => None,
        })
        .expect("the workflow_run call's result");
    assert_eq!(result.status, CallStatus::Ok, "{result:?}");
    assert_eq!(result.output.as_ref().unwrap()["run"]["runId"], "wf1");
    assert_eq!(
        result.output.as_ref().unwrap()["run"]["status"],
        "completed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_workflow_killed_after_its_third_call_resumes_when_the_server_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = flows_workspace(
        dir.path(),
        "turns:\n  - calls:\n      - tool: workflow_run\n        args: {workflow: five, background: true}\n  - say: Started.\n  - say: Checking.\n",
    );
    let client = reqwest::Client::new();

    let first = started(unsandboxed_serve(dir.path(), "flows"));
    let session = first.create_session(&client).await;
    first.start_turn(&client, &session, "start five").await;
    let seen = first
        .wait_for(
            &client,
            &session,
            60,
            "the third call never ended",
            |events| has_result(events, "call_1.3"),
        )
        .await;
    assert!(
        !has_result(&seen, "call_1.4"),
        "killed before the fourth call"
    );
    assert_eq!(
        finished(&seen),
        [FinishReason::Completed],
        "the turn ended at once"
    );
    first.kill_9();
    assert_eq!(lines_of(&workspace.join("calls.txt")), ["1", "2", "3"]);

    // Nobody opens the session: the new server's recovery finds the run not finished in the
    // log, resumes the session and replays the run.
    let second = started(unsandboxed_serve(dir.path(), "flows"));
    let events = second
        .wait_for(&client, &session, 90, "the run never finished", |events| {
            !workflow_events(events).1.is_empty()
        })
        .await;
    assert_resumed_once(&events);
    assert_eq!(
        lines_of(&workspace.join("calls.txt")),
        ["1", "2", "3", "4", "5"],
        "calls 1–3 were not repeated; 4 and 5 ran once"
    );
    let run_results = events
        .iter()
        .filter(|e| matches!(&e.body, EventBody::ToolResult(r) if r.call_id == "call_1"))
        .count();
    assert_eq!(
        run_results, 1,
        "the workflow_run call returned once, before the kill"
    );
    // Each nested call ended once, after the workflow_run call returned.
    for call in ["call_1.1", "call_1.2", "call_1.3", "call_1.4", "call_1.5"] {
        let ends = events
            .iter()
            .filter(|e| matches!(&e.body, EventBody::ToolResult(r) if r.call_id == call))
            .count();
        assert_eq!(ends, 1, "{call} ended once");
    }
    // The session is hosted and goes on as any other.
    let events = second
        .run_turn(&client, &session, "how is it going?", 2)
        .await;
    assert_eq!(
        finished(&events),
        [FinishReason::Completed, FinishReason::Completed]
    );
    assert_eq!(workflow_events(&events).1.len(), 1, "the run ended once");
}
