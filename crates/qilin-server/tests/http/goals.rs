//! A session's goal over HTTP: set, read (in the session's view too), refused while open, and
//! a restart of the server with the goal active — it comes back paused, saying so, with its
//! accounting intact, and resumes to completion.

use crate::support::*;
use qilin_protocol::EventBody;
use qilin_protocol::goals::{GoalRecord, GoalStatus, PauseCause};
use serde_json::{Value, json};

/// The goal tools and bash, no check declared.
const GOAL_AGENT: &str = "\
name: goals
instructions: Work toward the goal.
tools: [goal_get, goal_create, goal_update, bash]
";

/// The goal's first turn runs a long command; the turn after it settles the goal.
const GOAL_SCRIPT: &str = r#"
turns:
  - say: Working on it.
    calls:
      - tool: bash
        args: {command: "sleep 30"}
  - calls:
      - tool: goal_update
        args: {status: complete, reason: "It outlived the restart", evidence: "resumed"}
  - say: Done.
"#;

async fn put(server: &Server, path: &str, body: Value) -> Answer {
    Server::send(server.request(reqwest::Method::PUT, path).json(&body)).await
}

async fn delete(server: &Server, path: &str) -> Answer {
    Server::send(server.request(reqwest::Method::DELETE, path)).await
}

fn record(answer: &Answer) -> GoalRecord {
    assert_eq!(answer.status, 200, "{answer:?}");
    serde_json::from_value(answer.body.clone()).unwrap()
}

/// The goal as `GET …/goal` gives it.
async fn goal_of(server: &Server, session: &str) -> GoalRecord {
    let answer = server.get(&format!("/api/sessions/{session}/goal")).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    serde_json::from_value(answer.body["goal"].clone()).unwrap()
}

pub async fn a_goal_survives_a_restart_paused_with_its_usage_and_resumes(backend: Backend) {
    let world = World::new(backend, GOAL_AGENT);
    world.script("goal.yaml", GOAL_SCRIPT);
    let first = world.serve().await;
    let session = first.create("goal.yaml").await;
    let path = format!("/api/sessions/{session}/goal");

    let none = first.get(&path).await;
    assert_eq!((none.status, &none.body), (200, &json!({"goal": null})));
    let unknown = put(&first, &path, json!({"objective": "x", "budget": 3})).await;
    assert_eq!(unknown.status, 400, "{unknown:?}");
    let blank = put(&first, &path, json!({"objective": "  "})).await;
    assert_eq!(blank.status, 400, "{blank:?}");
    let no_check = put(
        &first,
        &path,
        json!({"objective": "x", "checks": ["tests"]}),
    )
    .await;
    assert_eq!((no_check.status, no_check.code()), (400, "invalid_goal"));

    let set = record(
        &put(
            &first,
            &path,
            json!({"objective": "Outlive the restart", "maxTurns": 5}),
        )
        .await,
    );
    assert_eq!(
        (set.status, set.budget.turns),
        (GoalStatus::Active, Some(5))
    );
    let again = put(&first, &path, json!({"objective": "Another"})).await;
    assert_eq!((again.status, again.code()), (409, "goal_conflict"));
    let view = first.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(view.body["goal"]["id"], json!(set.id), "{view:?}");
    assert_eq!(view.body["goal"]["status"], json!("active"));

    // The goal's first turn started by itself; the server stops while its command runs.
    wait_for_events(&first, &session, |events| {
        events
            .iter()
            .any(|e| matches!(&e.body, EventBody::ToolStart(s) if s.tool_name == "bash"))
    })
    .await;
    first.stop().await;

    let second = world.serve().await;
    let paused = goal_of(&second, &session).await;
    assert_eq!(paused.status, GoalStatus::Paused);
    assert_eq!(paused.paused_because, Some(PauseCause::Restart));
    assert!(
        paused.reason.as_deref().unwrap().contains("stopped"),
        "{:?}",
        paused.reason
    );
    assert_eq!(paused.usage.turns, 1, "the interrupted turn is counted");
    assert!(paused.usage.tokens > 0);
    let view = second.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(view.body["goal"]["pausedBecause"], json!("restart"));
    let stored = second.all_events(&session).await;
    assert_consistent(&stored);
    assert!(stored.iter().any(|e| matches!(
        &e.body,
        EventBody::GoalUpdated(u) if u.goal.paused_because == Some(PauseCause::Restart)
            && u.by == qilin_protocol::goals::GoalActor::Runtime
    )));

    // One click resumes it: the accounting goes on from where it was.
    let resumed = record(&second.post(&format!("{path}/resume"), json!({})).await);
    assert_eq!(resumed.status, GoalStatus::Active);
    assert_eq!(resumed.usage, paused.usage);
    wait_for_events(&second, &session, |events| {
        events.iter().any(|e| {
            matches!(&e.body, EventBody::GoalUpdated(u) if u.goal.status == GoalStatus::Complete)
        })
    })
    .await;
    let done = goal_of(&second, &session).await;
    assert_eq!(done.status, GoalStatus::Complete);
    assert_eq!(done.evidence.as_deref(), Some("resumed"));
    assert!(done.usage.tokens > paused.usage.tokens);

    // A settled goal cannot be paused or cleared; a new one replaces it.
    let pause = second.post(&format!("{path}/pause"), json!({})).await;
    assert_eq!((pause.status, pause.code()), (409, "goal_conflict"));
    let clear = delete(&second, &path).await;
    assert_eq!(clear.status, 409, "{clear:?}");
    let missing = second.get("/api/sessions/no-such-session/goal").await;
    assert_eq!(missing.status, 404, "{missing:?}");

    let document = second.get("/api/openapi.json").await;
    for (route, method, id) in [
        ("/api/sessions/{id}/goal", "get", "getGoal"),
        ("/api/sessions/{id}/goal", "put", "setGoal"),
        ("/api/sessions/{id}/goal", "delete", "clearGoal"),
        ("/api/sessions/{id}/goal/pause", "post", "pauseGoal"),
        ("/api/sessions/{id}/goal/resume", "post", "resumeGoal"),
    ] {
        assert_eq!(
            document.body["paths"][route][method]["operationId"],
            json!(id)
        );
    }
    second.stop().await;
    world.finish().await;
}

pub async fn a_goal_is_paused_and_cleared_over_http(backend: Backend) {
    let world = World::new(backend, GOAL_AGENT);
    world.script("goal.yaml", GOAL_SCRIPT);
    let server = world.serve().await;
    let session = server.create("goal.yaml").await;
    let path = format!("/api/sessions/{session}/goal");
    record(
        &put(
            &server,
            &path,
            json!({"objective": "Wait", "tokenBudget": 1000000}),
        )
        .await,
    );
    wait_for_events(&server, &session, |events| {
        events
            .iter()
            .any(|e| matches!(&e.body, EventBody::ToolStart(s) if s.tool_name == "bash"))
    })
    .await;
    // Pausing takes effect at once: the running turn ends interrupted.
    let paused = record(&server.post(&format!("{path}/pause"), json!({})).await);
    assert_eq!(paused.paused_because, Some(PauseCause::User));
    wait_for_events(&server, &session, |events| {
        events
            .iter()
            .any(|e| matches!(&e.body, EventBody::TurnFinished { .. }))
    })
    .await;
    // The interrupted turn spent the one turn this budget would allow: refused.
    let short = server
        .post(&format!("{path}/resume"), json!({"maxTurns": 1}))
        .await;
    assert_eq!(
        (short.status, short.code()),
        (409, "goal_conflict"),
        "{short:?}"
    );
    let still = goal_of(&server, &session).await;
    assert_eq!(
        (still.status, still.budget.turns),
        (GoalStatus::Paused, None)
    );
    let cleared = record(&delete(&server, &path).await);
    assert_eq!(cleared.status, GoalStatus::Cleared);
    let again = record(&delete(&server, &path).await);
    assert_eq!(again.status, GoalStatus::Cleared);
    let next = record(&put(&server, &path, json!({"objective": "Next", "maxTurns": 1})).await);
    assert_eq!(
        (next.id.as_str(), next.status),
        ("goal-2", GoalStatus::Active)
    );
    server.stop().await;
    world.finish().await;
}
