//! A session's schedules over HTTP: created (201, with its next fires and a `schedule.created`
//! event), refused when it cannot be honoured (422 naming what is wrong), listed per session and
//! in all, deleted.

use crate::support::*;
use qilin_protocol::schedules::{ScheduleRecord, ScheduleStatus};
use serde_json::json;

const AGENT: &str = "\
name: plain
instructions: Answer.
tools: [read]
";

pub async fn schedules_are_created_listed_and_deleted_over_http(backend: Backend) {
    let world = World::new(backend, AGENT);
    world.script("ok.yaml", "turns:\n  - say: ok\n");
    let server = world.serve().await;
    let session = server.create("ok.yaml").await;
    let path = format!("/api/sessions/{session}/schedules");

    let made = server
        .post(
            &path,
            json!({"prompt": "Check the build", "cron": "0 9 * * 1-5", "timezone": "Europe/Paris"}),
        )
        .await;
    assert_eq!(made.status, 201, "{made:?}");
    let made: ScheduleRecord = serde_json::from_value(made.body).unwrap();
    assert_eq!(made.session_id, session);
    assert_eq!(made.next_fires.len(), 3);
    assert!(
        made.description.contains("Europe/Paris"),
        "{}",
        made.description
    );

    let bad = server
        .post(&path, json!({"prompt": "x", "cron": "0 25 * * *"}))
        .await;
    assert_eq!(bad.status, 422, "{bad:?}");
    assert!(bad.body.to_string().contains("hour field"), "{bad:?}");
    let too_fast = server
        .post(&path, json!({"prompt": "x", "every": "10s"}))
        .await;
    assert_eq!(too_fast.status, 422, "{too_fast:?}");
    let no_agent = server
        .post(
            &path,
            json!({"prompt": "x", "every": "1h", "target": "new_session", "agent": "nobody"}),
        )
        .await;
    assert_eq!(no_agent.status, 422, "{no_agent:?}");
    let message = no_agent.body.to_string();
    assert!(message.contains("no agent `nobody`"), "{message}");
    assert!(message.contains("coder"), "it names what exists: {message}");
    let unknown_field = server
        .post(
            &path,
            json!({"prompt": "x", "every": "1h", "durable": true}),
        )
        .await;
    assert_eq!(unknown_field.status, 400, "{unknown_field:?}");

    let listed = server.get(&path).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(listed.body["schedules"][0]["id"], made.id.as_str());
    let all = server.get("/api/schedules").await;
    assert_eq!(all.status, 200, "{all:?}");
    assert_eq!(all.body["schedules"].as_array().unwrap().len(), 1);

    let gone = server
        .request(reqwest::Method::DELETE, &format!("{path}/{}", made.id))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 200);
    let gone: ScheduleRecord = gone.json().await.unwrap();
    assert_eq!(gone.status, ScheduleStatus::Deleted);
    let again = server
        .request(reqwest::Method::DELETE, &format!("{path}/{}", made.id))
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.status(),
        200,
        "a deleted schedule is returned as it is"
    );
    let missing = server
        .request(reqwest::Method::DELETE, &format!("{path}/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let empty = server.get(&path).await;
    assert_eq!(empty.body["schedules"], json!([]));
    let no_session = server.get("/api/sessions/nope/schedules").await;
    assert_eq!(no_session.status, 404);
}
