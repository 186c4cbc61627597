//! Loops over HTTP: started with `POST …/loops` (refused clearly when the body is wrong), listed
//! with `GET …/loops` while they run and after, and stopped with `POST …/loops/{id}/stop`
//! during an iteration, whose call ends interrupted.

use crate::support::*;
use qilin_protocol::loops::{IterationStatus, LoopRecord, LoopStatus, LoopStopReason};
use qilin_protocol::{CallStatus, EventBody};
use serde_json::json;

/// Bash, with a check that passes once `fixed.txt` exists.
const LOOP_AGENT: &str = "\
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

/// The first iteration sleeps (until it is stopped); the second one fixes it.
const LOOP_SCRIPT: &str = r#"
turns:
  - calls:
      - tool: bash
        args: {command: "echo try >> attempts.txt; if [ $(wc -l < attempts.txt) -ge 2 ]; then echo ok > fixed.txt; else sleep 30; fi"}
  - say: Tried.
"#;

fn record(answer: &Answer, status: u16) -> LoopRecord {
    assert_eq!(answer.status, status, "{answer:?}");
    serde_json::from_value(answer.body.clone()).unwrap()
}

/// The session's loops as `GET …/loops` gives them.
async fn loops_of(server: &Server, session: &str) -> Vec<LoopRecord> {
    let answer = server.get(&format!("/api/sessions/{session}/loops")).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    serde_json::from_value(answer.body.clone()).unwrap()
}

pub async fn a_loop_is_started_listed_and_stopped_over_http(backend: Backend) {
    let world = World::new(backend, LOOP_AGENT);
    world.script("loop.yaml", LOOP_SCRIPT);
    let server = world.serve().await;
    let session = server.create("loop.yaml").await;
    let path = format!("/api/sessions/{session}/loops");

    assert_eq!(loops_of(&server, &session).await, []);
    let unknown_field = server
        .post(
            &path,
            json!({"prompt": "x", "until": {}, "maxIterations": 2, "max": 3}),
        )
        .await;
    assert_eq!(unknown_field.status, 400, "{unknown_field:?}");
    let unknown_check = server
        .post(
            &path,
            json!({"prompt": "x", "until": {"checks": ["lint"]}, "maxIterations": 2}),
        )
        .await;
    assert_eq!(
        (unknown_check.status, unknown_check.code()),
        (400, "invalid_loop"),
        "{unknown_check:?}"
    );
    assert!(
        unknown_check.body["message"]
            .as_str()
            .unwrap()
            .contains("declared checks are: fixed")
    );

    // A first loop is stopped during its first iteration.
    let started = record(
        &server
            .post(
                &path,
                json!({"prompt": "Make the check pass.", "until": {"checks": ["fixed"]},
                       "maxIterations": 4}),
            )
            .await,
        201,
    );
    assert_eq!(started.status, LoopStatus::Running);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !world.workspace().join("attempts.txt").exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the iteration never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let listed = loops_of(&server, &session).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].iterations[0].status, IterationStatus::Running);
    let stopped = record(
        &server
            .post(&format!("{path}/{}/stop", started.loop_id), json!({}))
            .await,
        200,
    );
    assert_eq!(stopped.stop_reason, Some(LoopStopReason::Stopped));
    assert_eq!(stopped.iterations[0].status, IterationStatus::Interrupted);
    let child = stopped.iterations[0].session_id.clone().unwrap();
    let child_events = server.all_events(&child).await;
    assert!(child_events.iter().any(|event| matches!(
        &event.body,
        EventBody::ToolResult(result) if result.status == CallStatus::Interrupted
    )));
    let missing = server.post(&format!("{path}/loop-9/stop"), json!({})).await;
    assert_eq!((missing.status, missing.code()), (404, "unknown_loop"));

    // A second loop passes its check on its first iteration (the file now has a line).
    let second = record(
        &server
            .post(
                &path,
                json!({"prompt": "Make the check pass.", "until": {"checks": ["fixed"]},
                       "maxIterations": 3, "budget": {"tokens": 1000000}}),
            )
            .await,
        201,
    );
    assert_eq!(second.loop_id, "loop-2");
    let deadline = tokio::time::Instant::now() + PATIENCE * 2;
    let done = loop {
        let loops = loops_of(&server, &session).await;
        if loops[1].status == LoopStatus::Finished {
            break loops[1].clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "{loops:#?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(done.stop_reason, Some(LoopStopReason::ChecksPassed));
    assert_eq!(done.iterations.len(), 1);
    let stored = server.all_events(&session).await;
    assert_consistent(&stored);
    assert_eq!(
        qilin_loops::fold_loops(&stored),
        loops_of(&server, &session).await
    );
    let unknown_session = server.get("/api/sessions/no-such-session/loops").await;
    assert_eq!(unknown_session.status, 404, "{unknown_session:?}");
}
