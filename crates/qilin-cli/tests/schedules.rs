//! `qilin schedules` end to end: `add` checks the agent it is given as the `agent` tool finds
//! agents, and records `schedule.created` in the session's log as the tool does; `rm` records
//! `schedule.deleted`.

use qilin_protocol::{Event, EventBody};
use std::path::Path;
use std::process::{Command, Output};

fn qilin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("QILIN_CONFIG", "/nonexistent/qilin-config.toml")
        .env_remove("QILIN_MODEL")
        .output()
        .expect("the qilin binary runs")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The session's log as `qilin sessions export` prints it.
fn log_of(workspace: &str, id: &str) -> Vec<Event> {
    let exported = qilin(&["sessions", "export", id, "--workspace", workspace]);
    assert!(exported.status.success(), "{}", text(&exported.stderr));
    text(&exported.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn add_checks_the_agent_and_add_and_rm_tell_the_session_log() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join(".qilin/skills/.keep"), "");
    write(
        &root.join("plain.agent"),
        "name: plain\ninstructions: Answer.\ntools: [read]\nskills:\n  available: []\n",
    );
    write(
        &root.join(".qilin/agents/nightly.agent"),
        "name: nightly\ninstructions: Check the build.\ntools: [read]\n",
    );
    write(&root.join("ok.yaml"), "turns:\n  - say: ok\n");
    let ws = root.to_str().unwrap();
    let model = format!("scripted:{}", root.join("ok.yaml").display());
    let agent = root.join("plain.agent");
    let ran = qilin(&[
        "run",
        "--agent",
        agent.to_str().unwrap(),
        "--workspace",
        ws,
        "--model",
        &model,
        "hello",
    ]);
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    let listed = qilin(&["sessions", "list", "--json", "--workspace", ws]);
    let sessions: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = sessions[0]["id"].as_str().unwrap().to_string();
    let head = log_of(ws, &id).len();

    let add = |agent: &str| {
        qilin(&[
            "schedules",
            "add",
            "--session",
            &id,
            "--every",
            "1h",
            "--new-session",
            "--agent",
            agent,
            "--workspace",
            ws,
            "check the build",
        ])
    };
    let refused = add("nobody");
    assert!(!refused.status.success());
    let message = text(&refused.stderr);
    assert!(message.contains("no agent `nobody`"), "{message}");
    assert!(
        message.contains("coder") && message.contains("explore"),
        "{message}"
    );
    assert_eq!(
        log_of(ws, &id).len(),
        head,
        "a refused schedule tells nothing"
    );

    let added = add("nightly");
    assert!(added.status.success(), "{}", text(&added.stderr));
    let log = log_of(ws, &id);
    assert_eq!(log.len(), head + 1);
    let EventBody::ScheduleCreated(created) = &log[head].body else {
        panic!("expected schedule.created: {:?}", log[head]);
    };
    assert_eq!(created.schedule.agent.as_deref(), Some("nightly"));
    assert_eq!(created.schedule.description, "every hour");
    let schedule_id = created.schedule.id.clone();
    assert!(text(&added.stdout).contains(&schedule_id));

    let removed = qilin(&["schedules", "rm", &schedule_id, "--workspace", ws]);
    assert!(removed.status.success(), "{}", text(&removed.stderr));
    let log = log_of(ws, &id);
    assert_eq!(log.len(), head + 2);
    let EventBody::ScheduleDeleted(deleted) = &log[head + 1].body else {
        panic!("expected schedule.deleted: {:?}", log[head + 1]);
    };
    assert_eq!(deleted.schedule_id, schedule_id);
}
