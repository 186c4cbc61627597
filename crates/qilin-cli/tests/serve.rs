//! `qilin serve` as a process: killed with `kill -9` mid-turn, then started again on the same
//! SQLite file, it has lost no event a client had seen, has closed the turn the dead process
//! left running (its call `interrupted`), and the conversation goes on. A second server on the
//! same SQLite file is refused, naming the first; `--demo` serves the demo as a live session.

mod support;

use qilin_protocol::{Event, EventBody, FinishReason};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{Served, finished, started, unsandboxed_serve};

const AGENT: &str = "\
name: slow
instructions: Look around, slowly.
tools: [glob]
skills:
  available: []
";

/// A turn that streams its text slowly, then calls `glob`; then an answer.
const SLOW: &str = "\
chunk_delay_ms: 40
turns:
  - say: Looking around the workspace slowly, one piece of text at a time, so that the server can be killed while the text is still streaming in.
    calls:
      - tool: glob
        args: {pattern: \"*\"}
  - say: Done looking.
";

/// `qilin serve` on the workspace of `dir` (its agent and model) and the SQLite file
/// `dir/qilin.db`, not yet started.
fn serve_command(dir: &Path) -> Command {
    unsandboxed_serve(dir, "slow")
}

fn serve(dir: &Path) -> Served {
    started(serve_command(dir))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_turn_loses_no_committed_event_and_the_conversation_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    workspace_in(dir.path());
    let client = reqwest::Client::new();

    let first = serve(dir.path());
    let session = first.create_session(&client).await;
    first.start_turn(&client, &session, "look around").await;
    let seen = first
        .wait_for(
            &client,
            &session,
            30,
            "the turn never got going",
            |events| events.len() >= 8,
        )
        .await;
    assert!(finished(&seen).is_empty(), "killed mid-turn");
    first.kill_9();

    let second = serve(dir.path());
    let after = second.events(&client, &session).await;
    assert!(after.len() >= seen.len(), "nothing lost");
    assert_eq!(
        serde_json::to_value(&after[..seen.len()]).unwrap(),
        serde_json::to_value(&seen).unwrap(),
        "every event a client saw is still there, unchanged"
    );
    for (index, event) in after.iter().enumerate() {
        assert_eq!(event.seq, index as u64 + 1, "gapless");
    }
    assert_eq!(
        finished(&after),
        [FinishReason::Interrupted],
        "the dead turn is closed"
    );
    let (status, view) = second
        .send(client.get(format!("{}/api/sessions/{session}", second.base)))
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["activeTurn"], Value::Null);

    let events = second.run_turn(&client, &session, "go on", 2).await;
    assert_ne!(
        finished(&events)[1],
        FinishReason::Interrupted,
        "{events:#?}"
    );
}

/// A lead that starts a background child in its first turn and collects it in its second, and
/// the child, which sleeps.
const LEAD_FILES: [(&str, &str); 3] = [
    (
        "lead.agent",
        "name: lead\ninstructions: Delegate.\ntools: [agent, agent_wait]\nskills:\n  available: []\n",
    ),
    (
        "lead.yaml",
        "turns:\n  - calls: [{tool: agent, args: {agent: sleeper, prompt: Sleep., description: Sleep, background: true}}]\n  - say: Started it.\n  - calls: [{tool: agent_wait, args: {timeout_ms: 20000}}]\n  - say: Collected.\n",
    ),
    (
        "sleeper.yaml",
        "turns:\n  - calls: [{tool: bash, args: {command: \"sleep 120\"}}]\n  - say: woke\n",
    ),
];

/// A background child running when its server is killed: after the restart its parent takes it
/// back, hands its end (interrupted with the process, said so) over exactly once, and the child's
/// log is closed; nothing is run twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_a_running_child_hands_its_end_over_once_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    workspace_in(dir.path());
    let workspace = dir.path().join("workspace");
    for (name, text) in LEAD_FILES {
        std::fs::write(workspace.join(name), text).unwrap();
    }
    std::fs::write(
        workspace.join("sleeper.agent"),
        format!(
            "name: sleeper\ninstructions: Sleep.\ntools: [bash]\nmodel: scripted:{}\n",
            workspace.join("sleeper.yaml").display()
        ),
    )
    .unwrap();
    let client = reqwest::Client::new();
    let first = started(unsandboxed_serve(dir.path(), "lead"));
    let lead = first.create_session(&client).await;
    first.start_turn(&client, &lead, "start it").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let child = loop {
        let (_, children) = first
            .send(client.get(format!("{}/api/sessions?parent={lead}", first.base)))
            .await;
        if let Some(child) = children["sessions"][0]["id"].as_str() {
            let events = first.events(&client, child).await;
            if events.iter().any(|e| e.body.kind() == "tool.start")
                && finished(&first.events(&client, &lead).await).len() == 1
            {
                break child.to_string();
            }
        }
        assert!(
            Instant::now() < deadline,
            "the child never got to its sleep: {children}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    first.kill_9();

    let second = started(unsandboxed_serve(dir.path(), "lead"));
    assert_eq!(
        finished(&second.events(&client, &child).await),
        [FinishReason::Interrupted],
        "the child's turn is closed, not run again"
    );
    second.start_turn(&client, &lead, "collect it").await;
    let events = second
        .wait_for(
            &client,
            &lead,
            60,
            "the collecting turn never finished",
            |events| finished(events).len() == 2,
        )
        .await;
    assert_eq!(finished(&events)[1], FinishReason::Completed, "{events:#?}");
    let waited = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult(result) if result.tool_name == "agent_wait" => {
                result.output.clone()
            }
            _ => None,
        })
        .expect("agent_wait's output");
    assert_eq!(waited["finished"][0]["sessionId"], json!(child), "{waited}");
    assert_eq!(waited["finished"][0]["status"], "interrupted", "{waited}");
    let why = waited["finished"][0]["error"].as_str().unwrap_or_default();
    assert!(why.contains("process"), "{why}");
    let count = |kind: &str| events.iter().filter(|e| e.body.kind() == kind).count();
    assert_eq!(
        (
            count("agent.started"),
            count("agent.finished"),
            count("agent.delivered")
        ),
        (1, 1, 1)
    );
    let (_, children) = second
        .send(client.get(format!("{}/api/sessions?parent={lead}", second.base)))
        .await;
    assert_eq!(
        children["sessions"].as_array().map(Vec::len),
        Some(1),
        "{children}"
    );
}

/// A team: a lead with two teammates and two tasks. Its first turn is cut off by the kill while
/// it sleeps, teammate `a` mid-call with a message waiting for it; its second lists the team and
/// the tasks, then wakes `a`.
const TEAM_FILES: [(&str, &str); 4] = [
    (
        "lead.agent",
        "name: lead\ninstructions: Lead.\ntools: [agent, agent_send, agent_wait, agent_list, task_create, task_update, task_list, bash]\nskills:\n  available: []\n",
    ),
    (
        "lead.yaml",
        r#"turns:
  - calls:
      - {tool: task_create, args: {title: Write the parser}}
      - {tool: task_create, args: {title: Test the parser}}
  - calls:
      - {tool: agent, args: {agent: alpha, prompt: Write the parser (task 1)., description: Parser, name: a, background: true}}
      - {tool: agent, args: {agent: beta, prompt: Test the parser (task 2)., description: Tests, name: b, background: true}}
  - calls: [{tool: bash, args: {command: "sleep 0.5"}}]
  - calls: [{tool: agent_send, args: {to: a, message: "Unread note: mind the edge cases."}}]
  - calls: [{tool: bash, args: {command: "sleep 120"}}]
  - calls: [{tool: agent_list, args: {}}]
  - calls: [{tool: task_list, args: {}}]
  - calls: [{tool: agent_send, args: {to: a, message: "Wake up: how far are you?"}}]
  - calls: [{tool: agent_wait, args: {ids: [a], timeout_ms: 30000}}]
  - calls: [{tool: agent_list, args: {}}]
  - say: The team is back.
"#,
    ),
    (
        "alpha.yaml",
        r#"turns:
  - calls: [{tool: task_update, args: {id: "1", status: in_progress, assignee: a}}]
  - calls: [{tool: bash, args: {command: "sleep 120"}}]
  - say: read both notes
"#,
    ),
    (
        "beta.yaml",
        r#"turns:
  - calls: [{tool: task_update, args: {id: "2", status: in_progress, assignee: b}}]
  - say: ready
"#,
    ),
];

/// Every event of `events` once: seqs gapless from 1, each call started and ended at most once,
/// each request opened at most once.
fn each_once(events: &[Event]) {
    let mut starts = std::collections::HashSet::new();
    let mut results = std::collections::HashSet::new();
    let mut requests = std::collections::HashSet::new();
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event.seq, index as u64 + 1, "gapless, no seq twice");
        match &event.body {
            EventBody::ToolStart(start) => {
                assert!(starts.insert(start.call_id.clone()), "{start:?} twice")
            }
            EventBody::ToolResult(result) => {
                assert!(results.insert(result.call_id.clone()), "{result:?} twice")
            }
            EventBody::RequestOpened(opened) => assert!(
                requests.insert(opened.request_id.clone()),
                "{opened:?} twice"
            ),
            _ => {}
        }
    }
}

/// No call of `events` left running or waiting: each ended, the cut-off ones `interrupted`.
/// Gives the tools of the interrupted calls.
fn none_running(events: &[Event]) -> Vec<String> {
    let tree = qilin_protocol::ConversationTree::from_events(events);
    let mut interrupted = Vec::new();
    for event in events {
        if let EventBody::ToolStart(start) = &event.body {
            let node = tree.call(&start.call_id).expect("the call is in the tree");
            assert_eq!(node.phase, qilin_protocol::Phase::Done, "{node:?}");
            let outcome = node.outcome.as_ref().expect("an ended call has an outcome");
            if outcome.status == qilin_protocol::CallStatus::Interrupted {
                interrupted.push(start.tool_name.clone());
            }
        }
    }
    interrupted
}

/// The output of each call of `tool` in `events`, in order.
fn outputs(events: &[Event], tool: &str) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(result) if result.tool_name == tool => {
                Some(result.output.clone().unwrap_or(Value::Null))
            }
            _ => None,
        })
        .collect()
}

/// `kill -9` of a server running a team mid-turn, then a restart: every event once, the tasks
/// and the unread message intact, no call left running (the cut-off ones `interrupted`), the
/// teammates idle — and the lead wakes one, which reads the unread message once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_a_team_running_keeps_tasks_and_messages_and_the_teammates_come_back_idle() {
    let dir = tempfile::tempdir().unwrap();
    workspace_in(dir.path());
    let workspace = dir.path().join("workspace");
    for (name, text) in TEAM_FILES {
        std::fs::write(workspace.join(name), text).unwrap();
    }
    for (name, tools) in [
        ("alpha", "task_update, task_list, agent_send, bash"),
        ("beta", "task_update, task_list, agent_send"),
    ] {
        std::fs::write(
            workspace.join(format!("{name}.agent")),
            format!(
                "name: {name}\ninstructions: Work.\ntools: [{tools}]\nmodel: scripted:{}\n",
                workspace.join(format!("{name}.yaml")).display()
            ),
        )
        .unwrap();
    }
    let client = reqwest::Client::new();
    let first = started(unsandboxed_serve(dir.path(), "lead"));
    let lead = first.create_session(&client).await;
    first
        .start_turn(&client, &lead, "Build the parser with a team.")
        .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    // Killed once the lead sleeps, `a` sleeps with the message unread, and `b` is idle.
    let (a, b) = loop {
        let events = first.events(&client, &lead).await;
        let started: Vec<(String, String)> = events
            .iter()
            .filter_map(|e| match &e.body {
                EventBody::AgentStarted(s) => Some((
                    s.name.clone().unwrap_or_default(),
                    s.child_session_id.clone(),
                )),
                _ => None,
            })
            .collect();
        let lead_sleeps = events.iter().any(|e| {
            matches!(&e.body,
            EventBody::ToolStart(s) if s.arguments["command"] == json!("sleep 120"))
        });
        let b_idle = events.iter().any(|e| {
            matches!(&e.body,
            EventBody::AgentMessage(m) if m.text == "ready")
        });
        if lead_sleeps && b_idle && started.len() == 2 {
            let id = |name: &str| started.iter().find(|(n, _)| n == name).unwrap().1.clone();
            let (a, b) = (id("a"), id("b"));
            let a_events = first.events(&client, &a).await;
            let a_sleeps = a_events.iter().any(|e| {
                matches!(&e.body,
                EventBody::ToolStart(s) if s.tool_name == "bash")
            });
            let a_has_note = a_events.iter().any(|e| {
                matches!(&e.body,
                EventBody::AgentMessage(m) if m.text.starts_with("Unread note"))
            });
            if a_sleeps && a_has_note {
                break (a, b);
            }
        }
        assert!(
            Instant::now() < deadline,
            "the team never got going: {events:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    first.kill_9();

    let second = started(unsandboxed_serve(dir.path(), "lead"));
    let lead_before = second.events(&client, &lead).await;
    assert_eq!(finished(&lead_before), [FinishReason::Interrupted]);
    assert_eq!(none_running(&lead_before), ["bash"], "the lead's sleep");
    let a_before = second.events(&client, &a).await;
    assert_eq!(
        finished(&a_before),
        [FinishReason::Interrupted],
        "not run again"
    );
    assert_eq!(none_running(&a_before), ["bash"], "a's sleep");
    second.start_turn(&client, &lead, "Go on.").await;
    let events = second
        .wait_for(
            &client,
            &lead,
            60,
            "the second turn never finished",
            |events| finished(events).len() == 2,
        )
        .await;
    assert_eq!(finished(&events)[1], FinishReason::Completed, "{events:#?}");
    each_once(&events);
    assert_eq!(none_running(&events), ["bash"], "only the cut-off sleep");
    // The teammates came back idle, not mid-turn.
    let listed = &outputs(&events, "agent_list")[0];
    for child in listed["children"].as_array().unwrap() {
        assert_eq!(child["status"], "idle", "{listed}");
    }
    // The task list, intact.
    let tasks = &outputs(&events, "task_list")[0]["tasks"];
    assert_eq!(tasks[0]["title"], "Write the parser", "{tasks}");
    assert_eq!(tasks[0]["status"], "in_progress", "{tasks}");
    assert_eq!(tasks[0]["assignee"], "a", "{tasks}");
    assert_eq!(tasks[1]["assignee"], "b", "{tasks}");
    assert_eq!(tasks.as_array().map(Vec::len), Some(2));
    // Woken, `a` read the unread note and the new message, and is idle again.
    let sent = &outputs(&events, "agent_send")[1];
    assert_eq!(sent["delivered"], "now", "{sent}");
    let after = outputs(&events, "agent_list");
    assert_eq!(after[1]["children"][0]["status"], "idle", "{after:?}");
    assert_eq!(
        after[1]["children"][0]["answer"], "read both notes",
        "{after:?}"
    );
    let a_events = second.events(&client, &a).await;
    each_once(&a_events);
    assert_eq!(none_running(&a_events), ["bash"]);
    let notes = |text: &str| {
        a_events
            .iter()
            .filter(|e| matches!(&e.body, EventBody::AgentMessage(m) if m.text.starts_with(text)))
            .count()
    };
    assert_eq!((notes("Unread note"), notes("Wake up")), (1, 1));
    assert_eq!(
        finished(&a_events),
        [FinishReason::Interrupted, FinishReason::Completed]
    );
    let b_events = second.events(&client, &b).await;
    each_once(&b_events);
    assert!(none_running(&b_events).is_empty());
    assert_eq!(finished(&b_events), [FinishReason::Completed]);
}

/// The workspace `qilin serve` serves in the tests: the slow agent, its script, a note.
fn workspace_in(dir: &Path) {
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("slow.agent"), AGENT).unwrap();
    std::fs::write(workspace.join("slow.yaml"), SLOW).unwrap();
    std::fs::write(workspace.join("notes.txt"), "a note\n").unwrap();
}

/// A second `qilin serve` on the SQLite file a first one serves exits at once with a message
/// naming the file and the first process; the first goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_the_same_sqlite_file_is_refused_and_the_first_serves_on() {
    let dir = tempfile::tempdir().unwrap();
    workspace_in(dir.path());
    let client = reqwest::Client::new();
    let first = serve(dir.path());

    let mut second = serve_command(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = second.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = second.kill();
            panic!("a second server on the same file started serving");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut second.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("in use by another Qilin process")
            && stderr.contains(&format!("pid {}", first.child.id()))
            && stderr.contains("qilin.db"),
        "the message names the file and the process holding it: {stderr}"
    );

    let (status, created) = first
        .send(
            client
                .post(format!("{}/api/sessions", first.base))
                .json(&json!({})),
        )
        .await;
    assert_eq!(status, 201, "the first server goes on: {created}");
}

/// `qilin serve --demo` prints the URL of the demo session's page; the page opens without the
/// token in a request, the server names the session as its demo, the session runs on the
/// scripted model, and its turn starts once a client follows it and runs to its answer,
/// calling tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_opens_on_a_live_demo_session_on_the_scripted_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_qilin"));
    command
        .args(["serve", "--demo", "--no-sandbox", "--workspace"])
        .arg(dir.path().join("demo"))
        .env("XDG_RUNTIME_DIR", dir.path().join("run"))
        .env("NO_COLOR", "1");
    let demo = started(command);
    let client = reqwest::Client::new();
    let session = demo
        .page
        .strip_prefix("/sessions/")
        .expect("the URL opens the demo session's page")
        .to_string();

    let (status, info) = demo
        .send(client.get(format!("{}/api/info", demo.base)))
        .await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["demoSession"], json!(session));
    let page = client
        .get(format!("{}{}", demo.base, demo.page))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200, "the page opens");
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let (status, view) = demo
        .send(client.get(format!("{}/api/sessions/{session}", demo.base)))
        .await;
    assert_eq!(status, 200, "{view}");
    assert!(
        view["model"].as_str().unwrap().starts_with("scripted:"),
        "{view}"
    );
    assert_eq!(
        view["turns"],
        json!(0),
        "nothing runs until someone watches"
    );

    // Following the session starts its turn.
    let watching = client
        .get(format!(
            "{}/api/sessions/{session}/events/stream",
            demo.base
        ))
        .bearer_auth(&demo.token)
        .send()
        .await
        .unwrap();
    assert_eq!(watching.status(), 200);
    let events = demo
        .wait_for(
            &client,
            &session,
            120,
            "the demo's turn never finished",
            |events| !finished(events).is_empty(),
        )
        .await;
    drop(watching);
    assert_eq!(finished(&events), [FinishReason::Completed], "{events:#?}");
    assert!(
        events
            .iter()
            .any(|event| matches!(event.body, EventBody::ToolStart(_))),
        "the demo calls tools"
    );
}

/// The scheduler's settings come from the command line: with `--schedule-tick 100ms` a
/// one-shot schedule fires within moments of its time, and with `--run-tokens 10` its run
/// ends `out_of_budget`, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_takes_the_scheduler_settings_from_its_options() {
    let dir = tempfile::tempdir().unwrap();
    workspace_in(dir.path());
    let client = reqwest::Client::new();
    let mut command = serve_command(dir.path());
    command.args(["--schedule-tick", "100ms", "--run-tokens", "10"]);
    let served = started(command);
    let session = served.create_session(&client).await;
    let at = chrono::Utc::now() + chrono::Duration::seconds(2);
    let path = format!("{}/api/sessions/{session}/schedules", served.base);
    let (status, made) = served
        .send(client.post(&path).json(&json!({
            "prompt": "look around",
            "at": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        })))
        .await;
    assert_eq!(status, 201, "{made}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let run = loop {
        let (status, listed) = served.send(client.get(&path)).await;
        assert_eq!(status, 200, "{listed}");
        let run = listed["schedules"][0]["lastRun"].clone();
        if run.is_object() && run["outcome"] != "running" {
            break run;
        }
        assert!(Instant::now() < deadline, "the run did not end: {listed}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(run["outcome"], "out_of_budget", "{run}");
    let message = run["message"].as_str().unwrap_or_default();
    assert!(message.contains("budget of 10 tokens"), "{run}");
}

/// `qilin serve --help` names the scheduler's options; a malformed one is refused, saying
/// what is expected.
#[test]
fn serve_help_names_the_scheduler_options_and_bad_values_are_refused() {
    let help = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for option in ["--schedule-tick", "--run-budget", "--run-tokens"] {
        assert!(text.contains(option), "{option} in {text}");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["serve", "--run-budget", "30"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("has no unit") && stderr.contains("30m"),
        "{stderr}"
    );
}
