//! Auto review over HTTP: the reviewer's refusals listed, and a person allowing one, after
//! which the retry turn runs exactly that call without review.

use crate::support::*;
use qilin_protocol::review::{ReviewEntry, ReviewGrant, ReviewVerdict};
use qilin_protocol::{CallStatus, EventBody};
use serde_json::json;

/// `bash` calls go to the scripted reviewer beside the workspace.
const REVIEWED_AGENT: &str = "\
name: reviewed
instructions: Run what you are asked to.
tools: [bash]
review:
  rules:
    - { tool: bash, decision: auto }
  auto:
    model: scripted:reviewer.yaml
    rules: \"Never write files the user did not ask for.\"
";

/// The reviewer denies every call.
const REVIEWER: &str = r#"
turns:
  - say: '{"decision":"deny","risk":"medium","user_reason":"The user did not ask for out.txt.","model_message":"Do not write out.txt unless the user asks."}'
"#;

/// The agent writes a file, is refused, and writes it again when allowed.
const AGENT_SCRIPT: &str = r#"
turns:
  - calls: [{tool: bash, args: {command: "echo pushed > out.txt"}}]
  - say: The reviewer refused.
  - calls: [{tool: bash, args: {command: "echo pushed > out.txt"}}]
  - say: Done.
"#;

fn finished_turns(events: &[qilin_protocol::Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.body, EventBody::TurnFinished { .. }))
        .count()
}

pub async fn a_refused_call_is_listed_and_allowed_over_http(backend: Backend) {
    let world = World::new(backend, REVIEWED_AGENT);
    world.script("reviewer.yaml", REVIEWER);
    world.script("agent.yaml", AGENT_SCRIPT);
    let server = world.serve().await;
    let session = server.create("agent.yaml").await;
    server.start_turn(&session, "go").await;
    wait_for_events(&server, &session, |events| finished_turns(events) == 1).await;

    let listed = server
        .get(&format!("/api/sessions/{session}/reviews"))
        .await;
    assert_eq!(listed.status, 200, "{listed:?}");
    let reviews: Vec<ReviewEntry> = serde_json::from_value(listed.body["reviews"].clone()).unwrap();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].call_id, "call_1");
    assert_eq!(reviews[0].review.verdict, ReviewVerdict::Deny);
    assert_eq!(
        reviews[0].review.user_reason,
        "The user did not ask for out.txt."
    );
    assert!(!reviews[0].granted);
    assert!(!world.workspace().join("out.txt").exists());

    let unknown = server
        .post(
            &format!("/api/sessions/{session}/reviews/call_9/allow"),
            json!({}),
        )
        .await;
    assert_eq!((unknown.status, unknown.code()), (404, "unknown_call"));
    let odd = server
        .post(
            &format!("/api/sessions/{session}/reviews/call_1/allow"),
            json!({"retry": true, "always": true}),
        )
        .await;
    assert_eq!(odd.status, 400, "{odd:?}");
    let nowhere = server.get("/api/sessions/no-such-session/reviews").await;
    assert_eq!(nowhere.status, 404, "{nowhere:?}");

    let allowed = server
        .post(
            &format!("/api/sessions/{session}/reviews/call_1/allow"),
            json!({}),
        )
        .await;
    assert_eq!(allowed.status, 201, "{allowed:?}");
    let grant: ReviewGrant = serde_json::from_value(allowed.body.clone()).unwrap();
    assert_eq!(
        (grant.call_id.as_str(), grant.tool_name.as_str()),
        ("call_1", "bash")
    );
    assert_eq!(grant.arguments, json!({"command": "echo pushed > out.txt"}));

    // The retry turn runs the same call, unreviewed.
    wait_for_events(&server, &session, |events| finished_turns(events) == 2).await;
    let events = server.all_events(&session).await;
    assert_consistent(&events);
    let retried = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult(result) if result.call_id == "call_2" => Some(result.status),
            _ => None,
        })
        .unwrap();
    assert_eq!(retried, CallStatus::Ok);
    assert!(world.workspace().join("out.txt").exists());
    assert!(events.iter().any(|e| matches!(
        &e.body,
        EventBody::ReviewGranted(granted) if granted.grant.used_by.as_deref() == Some("call_2")
    )));
    let listed = server
        .get(&format!("/api/sessions/{session}/reviews"))
        .await;
    assert_eq!(
        listed.body["reviews"][0]["granted"],
        json!(true),
        "{listed:?}"
    );

    // A call that ran was not refused: nothing to allow.
    let ran = server
        .post(
            &format!("/api/sessions/{session}/reviews/call_2/allow"),
            json!({"retry": false}),
        )
        .await;
    assert_eq!((ran.status, ran.code()), (409, "not_refused_by_reviewer"));
    server.stop().await;
}
