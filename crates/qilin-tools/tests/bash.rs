//! `bash`, `job_output` and `job_kill` through the execution layer.

mod common;

use common::{appears, gone, harness, harness_with, named_sleep, process_name};
use qilin_protocol::{CallStatus, Detail, ErrorCode, EventBody, parse_spill_notice};
use qilin_tool::Services;
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn runs_in_the_workspace_and_reports_output_exit_code_and_presentation() {
    let mut h = harness();
    h.write("hello.txt", "hi there\n");
    let (output, text) = h
        .ok(
            "bash",
            json!({"command": "cat hello.txt && echo to-stderr >&2\necho second line"}),
        )
        .await;
    assert_eq!(output["kind"], "finished");
    assert_eq!(output["exit_code"], 0);
    assert_eq!(output["timed_out"], false);
    assert_eq!(output["output"], "hi there\nto-stderr\nsecond line\n");
    assert!(text.ends_with(" s]"), "{text}");
    assert!(text.contains("[exit code 0,"));
    let events = h.drain();
    let start = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolStart(start) => Some(start),
            _ => None,
        })
        .unwrap();
    assert_eq!(start.presentation.action, "Run command");
    assert_eq!(
        start.presentation.remark,
        "cat hello.txt && echo to-stderr >&2"
    );
    let progress: String = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolProgress(p) => Some(p.text.as_str()),
            _ => None,
        })
        .collect();
    assert!(progress.contains("hi there"), "live output: {progress:?}");
    let detail = events.iter().find_map(|e| match &e.body {
        EventBody::ToolResult(result) => result.detail.clone(),
        _ => None,
    });
    assert!(matches!(
        detail,
        Some(Detail::Shell { exit_code: Some(0), ref command, .. }) if command.starts_with("cat hello.txt")
    ));
}

#[tokio::test]
async fn a_failing_command_is_a_normal_result_with_its_exit_code_and_stdin_is_closed() {
    let h = harness();
    let (output, text) = h
        .ok(
            "bash",
            json!({"command": "read line; echo \"got [$line]\"; exit 3"}),
        )
        .await;
    assert_eq!(output["exit_code"], 3);
    assert!(text.contains("got []"), "{text}");
    assert!(text.contains("[exit code 3,"), "{text}");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let h = harness();
    let name = process_name("timeout");
    let command = format!("{} & echo started; wait", named_sleep(&name));
    let (output, text) = h
        .ok("bash", json!({"command": command, "timeout_secs": 1}))
        .await;
    assert_eq!(output["timed_out"], true);
    assert_eq!(output["signal"], "SIGKILL");
    assert_eq!(output["exit_code"], serde_json::Value::Null);
    assert!(text.contains("started"));
    assert!(text.contains("timed out"), "{text}");
    assert!(gone(&name).await, "the background sleep survived");
}

#[tokio::test]
async fn a_timeout_beyond_the_maximum_is_refused() {
    let h = harness();
    let message = h
        .err(
            "bash",
            json!({"command": "true", "timeout_secs": 601}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("timeout_secs"), "{message}");
    let message = h
        .err(
            "bash",
            json!({"command": "  "}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("`command` is empty"));
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_spills_everything() {
    let h = harness();
    let (output, text) = h.ok("bash", json!({"command": "seq 1 20000"})).await;
    assert!(text.starts_with("1\n2\n3\n"));
    assert!(text.contains("\n20000\n"));
    let notice = parse_spill_notice(output["output"].as_str().unwrap()).unwrap();
    assert!(notice.path.starts_with(h.data.path().to_str().unwrap()));
    let whole = std::fs::read_to_string(&notice.path).unwrap();
    assert_eq!(whole.lines().count(), 20000);
    assert_eq!(output["total_bytes"], whole.len() as u64);
    assert_eq!(output["spill_path"], notice.path);
}

#[tokio::test]
async fn cancelling_the_call_kills_the_process_group() {
    let h = harness();
    let name = process_name("cancel");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watched = name.clone();
    tokio::spawn(async move {
        assert!(appears(&watched).await);
        trigger.cancel();
    });
    let command = format!("{} & wait", named_sleep(&name));
    let outcome = h
        .call_cancellable("bash", json!({"command": command}), cancel)
        .await;
    assert_eq!(outcome.status, CallStatus::Interrupted);
    assert!(gone(&name).await, "the sleep survived the interruption");
}

#[tokio::test]
async fn a_background_job_runs_reports_new_output_and_ends() {
    let h = harness();
    let (receipt, text) = h
        .ok(
            "bash",
            json!({"command": "echo one; sleep 0.3; echo two; exit 4", "background": true}),
        )
        .await;
    assert_eq!(receipt["kind"], "started");
    assert_eq!(receipt["job_id"], "job-1");
    assert_eq!(receipt["cwd"], ".");
    assert!(text.contains("job_output"));
    let (report, _) = h
        .ok("job_output", json!({"job_id": "job-1", "wait_secs": 10}))
        .await;
    assert_eq!(report["state"], "exited");
    assert_eq!(report["exit_code"], 4);
    assert_eq!(report["new_output"], "one\ntwo\n");
    let (again, text) = h.ok("job_output", json!({"job_id": "job-1"})).await;
    assert_eq!(again["new_output"], "");
    assert!(text.contains("(no new output)"));
    assert!(text.contains("exited with code 4"));
}

#[tokio::test]
async fn job_kill_stops_the_whole_group_and_unknown_jobs_are_named() {
    let h = harness();
    let name = process_name("job-kill");
    let command = format!("{} & echo ready; wait", named_sleep(&name));
    h.ok("bash", json!({"command": command, "background": true}))
        .await;
    let (running, _) = h
        .ok("job_output", json!({"job_id": "job-1", "wait_secs": 1}))
        .await;
    assert_eq!(running["state"], "running");
    assert_eq!(running["new_output"], "ready\n");
    let (killed, _) = h.ok("job_kill", json!({"job_id": "job-1"})).await;
    assert_eq!(killed["state"], "killed");
    assert_eq!(killed["signal"], "SIGTERM");
    assert!(gone(&name).await);
    let message = h
        .err(
            "job_kill",
            json!({"job_id": "job-9"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`job-9`") && message.contains("job-1"),
        "{message}"
    );
}

#[tokio::test]
async fn jobs_die_with_the_session() {
    let h = harness();
    let name = process_name("job-session");
    let command = format!("{} & wait", named_sleep(&name));
    h.ok("bash", json!({"command": command, "background": true}))
        .await;
    assert!(appears(&name).await);
    drop(h);
    assert!(gone(&name).await, "a job outlived its session");
}

#[tokio::test]
async fn without_a_job_table_background_jobs_are_refused_clearly() {
    let h = harness_with(Services::default());
    let message = h
        .err(
            "bash",
            json!({"command": "sleep 1", "background": true}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(
        message.contains("background jobs are not available"),
        "{message}"
    );
    let message = h
        .err(
            "job_output",
            json!({"job_id": "job-1"}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(message.contains("no job table"));
}

#[tokio::test]
async fn long_job_output_is_cut_with_a_notice_and_the_log_keeps_everything() {
    let h = harness();
    h.ok(
        "bash",
        json!({"command": "seq 1 30000", "background": true}),
    )
    .await;
    let (report, _) = h
        .ok("job_output", json!({"job_id": "job-1", "wait_secs": 10}))
        .await;
    let shown = report["new_output"].as_str().unwrap();
    assert!(
        shown.starts_with("1\n2\n") && shown.contains("\n30000\n"),
        "{report}"
    );
    let notice = parse_spill_notice(shown).expect("a spill notice ends the output");
    assert_eq!(
        std::fs::read_to_string(&notice.path)
            .unwrap()
            .lines()
            .count(),
        30000
    );
    let log = std::fs::read_to_string(report["log_path"].as_str().unwrap()).unwrap();
    assert_eq!(log.lines().count(), 30000);
}
