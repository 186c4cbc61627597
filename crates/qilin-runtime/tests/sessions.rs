//! Sessions driven through their handle, as every host drives them: requests answered from
//! another task, interrupts, following the log from any point, turns that cannot start twice.

mod support;

use futures_util::StreamExt;
use qilin_protocol::{Answer, CallStatus, EventBody, FinishReason, RequestAsk, RequestResolution};
use qilin_runtime::SubmitError;
use qilin_tool::{RequestReply, ResolveError};
use std::time::Duration;
use support::{assert_consistent, fixture, stored};

const ASKING_AGENT: &str = "\
name: asker
instructions: Ask before reading.
tools: [read, question]
skills:
  available: []
review:
  rules:
    - tool: read
      decision: ask
      reason: reading needs a yes
";

const READ_AND_ASK: &str = r#"
turns:
  - calls:
      - tool: read
        args: {path: notes.txt}
      - tool: question
        args: {questions: [{id: colour, question: "Which colour?", options: [red, blue]}]}
  - say: "Done."
"#;

#[tokio::test]
async fn approvals_and_questions_are_answered_from_another_task() {
    let f = fixture(ASKING_AGENT);
    let session = f.session(READ_AND_ASK, true).await;
    let person = session.clone();
    let answering = tokio::spawn(async move {
        let mut events = person.subscribe_from(0);
        let mut answered = 0;
        while answered < 2 {
            let event = events.next().await.unwrap().unwrap();
            let EventBody::RequestOpened(opened) = event.body else {
                continue;
            };
            let reply = match &opened.ask {
                RequestAsk::Approval { reason, .. } => {
                    assert_eq!(reason, "reading needs a yes");
                    RequestReply::Approve
                }
                RequestAsk::Question { questions } => {
                    assert_eq!(questions[0].id, "colour");
                    RequestReply::Answer(vec![Answer {
                        id: "colour".into(),
                        answer: vec!["blue".into()],
                    }])
                }
            };
            let expected = match &reply {
                RequestReply::Approve => RequestResolution::Approved,
                RequestReply::Answer(answers) => RequestResolution::Answered {
                    answers: answers.clone(),
                },
                other => panic!("not a reply this test gives: {other:?}"),
            };
            let recorded = person
                .resolve(&opened.request_id, reply, "second client")
                .unwrap();
            // The answer comes back as the log records it.
            assert_eq!(recorded.request_id, opened.request_id);
            assert_eq!(recorded.call_id, opened.call_id);
            assert_eq!(recorded.resolution, expected);
            assert_eq!(recorded.resolved_by, "second client");
            answered += 1;
        }
    });
    let summary = session.submit("go", None).unwrap().finished().await;
    answering.await.unwrap();
    assert_eq!(summary.reason, FinishReason::Completed, "{summary:?}");
    let events = stored(&session).await;
    assert_consistent(&events);
    let results: Vec<(String, CallStatus)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some((r.tool_name.clone(), r.status)),
            _ => None,
        })
        .collect();
    assert!(
        results.contains(&("read".into(), CallStatus::Ok)),
        "{results:?}"
    );
    assert!(
        results.contains(&("question".into(), CallStatus::Ok)),
        "{results:?}"
    );
    let by: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::RequestResolved(r) => Some(r.resolved_by.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(by, ["second client", "second client"]);
    // The call waits in its own state while its request is open, and the tree says so.
    let tree = session.snapshot().await.unwrap().tree;
    let read = tree.turns[0]
        .items
        .iter()
        .find_map(|item| match item {
            qilin_agent::TurnItem::Tool { node } if node.tool_name == "read" => Some(node),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        read.requests[0].resolution,
        Some(RequestResolution::Approved)
    );
}

#[tokio::test]
async fn an_interrupt_cancels_a_pending_approval_and_a_late_answer_is_refused() {
    let f = fixture(ASKING_AGENT);
    let session = f
        .session(
            "turns:\n  - calls: [{tool: read, args: {path: notes.txt}}]\n  - say: never\n",
            true,
        )
        .await;
    let turn = session.submit("go", None).unwrap();
    let mut events = session.subscribe_from(0);
    let request_id = loop {
        let event = events.next().await.unwrap().unwrap();
        if let EventBody::RequestOpened(opened) = event.body {
            break opened.request_id;
        }
    };
    assert_eq!(session.open_requests().len(), 1);
    assert!(session.interrupt());
    let summary = turn.finished().await;
    assert_eq!(summary.reason, FinishReason::Interrupted);
    let late = session.resolve(&request_id, RequestReply::Approve, "slow client");
    assert!(
        matches!(&late, Err(ResolveError::Ended { ended: "cancelled", resolved_by, .. }) if resolved_by == "runtime"),
        "{late:?}"
    );
    assert!(matches!(
        session.resolve("req-99", RequestReply::Approve, "x"),
        Err(ResolveError::Unknown(_))
    ));
    let events = stored(&session).await;
    assert_consistent(&events);
    let read = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult(r) if r.tool_name == "read" => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(read.status, CallStatus::Interrupted);
    assert!(session.open_requests().is_empty());
}

#[tokio::test]
async fn unattended_sessions_refuse_approvals_and_questions_without_waiting() {
    let f = fixture(ASKING_AGENT);
    let session = f.session(READ_AND_ASK, false).await;
    let summary = session.submit("go", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let events = stored(&session).await;
    assert_consistent(&events);
    let results: Vec<(String, CallStatus, String)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => {
                Some((r.tool_name.clone(), r.status, format!("{:?}", r.content)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(results[0].1, CallStatus::Denied);
    assert!(
        results[0].2.contains("no one can approve it here"),
        "{results:?}"
    );
    assert_eq!(results[1].1, CallStatus::Error);
    assert!(results[1].2.contains("nobody can answer"), "{results:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.body, EventBody::RequestOpened(_)))
    );
}

#[tokio::test]
async fn following_from_any_point_yields_every_later_event_exactly_once() {
    let f = fixture("name: a\ninstructions: Talk.\ntools: [read]\nskills:\n  available: []\n");
    let mut script = String::from("chunk_delay_ms: 1\nturns:\n");
    for n in 0..6 {
        script.push_str(&format!(
            "  - say: \"Reading the notes, round {n}, with a sentence long enough to stream in many pieces.\"\n    calls: [{{tool: read, args: {{path: notes.txt}}}}]\n"
        ));
    }
    script.push_str("  - say: done\n");
    let session = f.session(&script, false).await;
    let turn = session.submit("go", None).unwrap();
    // Followers join at many points while the turn writes, each from the head it sees then
    // (so some start at the seam between stored and live events).
    let mut followers = Vec::new();
    for _ in 0..12 {
        tokio::time::sleep(Duration::from_millis(fastrand::u64(1..15))).await;
        let after = session.committed_head().saturating_sub(fastrand::u64(0..3));
        let mut events = session.subscribe_from(after);
        followers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Ok(Some(event)) =
                tokio::time::timeout(Duration::from_millis(500), events.next()).await
            {
                seen.push(event.unwrap().seq);
            }
            (after, seen)
        }));
    }
    turn.finished().await;
    let head = stored(&session).await.len() as u64;
    for follower in followers {
        let (after, seen) = follower.await.unwrap();
        let expected: Vec<u64> = (after + 1..=head).collect();
        assert_eq!(seen, expected, "a follower from {after}");
    }
}

#[tokio::test]
async fn a_turn_starts_once_per_client_turn_id_and_one_at_a_time() {
    let f = fixture("name: a\ninstructions: Talk.\ntools: [read]\nskills:\n  available: []\n");
    let session = f
        .session(
            "chunk_delay_ms: 20\nturns:\n  - say: \"one two three four five six\"\n  - say: again\n",
            false,
        )
        .await;
    assert_eq!(
        session.submit("  ", None).err(),
        Some(SubmitError::EmptyPrompt)
    );
    let first = session.submit("hello", Some("c-1".into())).unwrap();
    assert!(matches!(
        session.submit("hello", Some("c-1".into())),
        Err(SubmitError::AlreadySubmitted { turn_id, .. }) if turn_id == "turn-1"
    ));
    assert!(matches!(
        session.submit("other", Some("c-2".into())),
        Err(SubmitError::Busy { turn_id }) if turn_id == "turn-1"
    ));
    first.finished().await;
    let second = session.submit("other", Some("c-2".into())).unwrap();
    assert_eq!(second.turn_id(), "turn-2");
    second.finished().await;
    let events = stored(&session).await;
    assert_consistent(&events);
    let clients: Vec<Option<String>> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::TurnStarted { client_turn_id, .. } => Some(client_turn_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(clients, [Some("c-1".into()), Some("c-2".into())]);
}

#[tokio::test]
async fn a_session_begins_with_what_it_runs() {
    let f = fixture("name: a\ninstructions: Talk.\ntools: [read]\nskills:\n  available: []\n");
    let session = f.session("turns:\n  - say: hi\n", false).await;
    session.submit("hello", None).unwrap().finished().await;
    let events = stored(&session).await;
    let EventBody::SessionStarted(started) = &events[0].body else {
        panic!("{events:?}")
    };
    assert_eq!(started.agent.name, "a");
    assert_eq!(started.model, "scripted:test.yaml");
    assert_eq!(started.protocol_version, qilin_protocol::PROTOCOL_VERSION);
    assert_eq!(started.agent.file_hash.as_ref().map(String::len), Some(64));
    assert!(
        events
            .iter()
            .all(|e| e.time.ends_with('Z') && e.time.len() == 24)
    );
    let info = f.store.list_sessions(&Default::default()).await.unwrap();
    assert_eq!(info.sessions[0].title.as_deref(), Some("hello"));
}

use qilin_store::EventStore as _;

/// The live processes whose first argument is `name`.
fn processes_named(name: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            cmdline.split(|b| *b == 0).next() == Some(name.as_bytes()) && !stat.contains(") Z ")
        })
        .count()
}

/// Whether `done` holds within 5 s.
async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..250 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}

#[tokio::test]
async fn closing_a_session_ends_its_persistent_shells() {
    let name = format!("qilin-runtime-test-{}-shell", std::process::id());
    let f = fixture("name: a\ninstructions: Run.\ntools: [bash]\nskills:\n  available: []\n");
    let script = format!(
        "turns:\n  - calls:\n      - tool: bash\n        args: {{command: \"(exec -a {name} sleep 300) &\", persistent: true}}\n  - say: started\n"
    );
    let session = f.session(&script, false).await;
    session.submit("start it", None).unwrap().finished().await;
    let events = stored(&session).await;
    assert_consistent(&events);
    assert!(
        eventually(|| processes_named(&name) == 1).await,
        "the shell's process runs"
    );
    session.close().await.unwrap();
    assert!(
        eventually(|| processes_named(&name) == 0).await,
        "a persistent shell's process outlived the session"
    );
}

#[tokio::test]
async fn the_builtin_agent_resumes_and_keeps_the_grants_given_for_the_session() {
    let f = fixture(ASKING_AGENT);
    let fetch_twice = r#"
turns:
  - calls: [{tool: web_fetch, args: {url: "http://127.0.0.1:9/a"}}]
  - say: "First."
  - calls: [{tool: web_fetch, args: {url: "http://127.0.0.1:9/b"}}]
  - say: "Second."
"#;
    let session = f
        .runtime
        .session(f.workspace())
        .builtin_agent(qilin_runtime::DEFAULT_AGENT)
        .no_sandbox(true)
        .model(support::scripted(fetch_twice))
        .attended(true)
        .build()
        .await
        .unwrap();
    assert!(session.info().agent.builtin);
    assert_eq!(session.info().agent.file, None);
    let person = session.clone();
    tokio::spawn(async move {
        let mut events = person.subscribe_from(0);
        while let Some(Ok(event)) = events.next().await {
            if let EventBody::RequestOpened(opened) = event.body {
                let grant = qilin_protocol::SessionGrant {
                    tool: opened.tool_name.clone(),
                    command_prefix: None,
                };
                person
                    .resolve(
                        &opened.request_id,
                        RequestReply::ApproveForSession(grant),
                        "terminal",
                    )
                    .unwrap();
            }
        }
    });
    session.submit("fetch a", None).unwrap().finished().await;
    session.close().await.unwrap();
    let id = session.id().to_string();
    let first = stored(&session).await;
    assert_eq!(
        first
            .iter()
            .filter(|e| matches!(e.body, EventBody::RequestOpened(_)))
            .count(),
        1
    );

    let resumed = f
        .runtime
        .resume(&id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(support::scripted(fetch_twice))
        .attended(true)
        .build()
        .await
        .unwrap();
    assert!(resumed.info().agent.builtin);
    resumed.submit("fetch b", None).unwrap().finished().await;
    let events = stored(&resumed).await;
    assert_consistent(&events);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e.body, EventBody::RequestOpened(_)))
            .count(),
        1,
        "the second fetch, after the resume, was not asked about"
    );
    let fetched = events
        .iter()
        .filter(|e| matches!(&e.body, EventBody::ToolResult(r) if r.tool_name == "web_fetch"))
        .count();
    assert_eq!(fetched, 2);
}

/// The permission bits of `path`, in octal.
fn mode_of(path: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    format!(
        "{:o}",
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    )
}

/// A session's folder (its spilled outputs, its job logs) is the user's alone, and so is the
/// folder of every session's, even one an older Qilin left open to others.
#[tokio::test]
async fn the_session_folders_are_readable_by_their_owner_alone() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture("name: a\ninstructions: Talk.\ntools: [read]\nskills:\n  available: []\n");
    let sessions = f.workspace().join(".qilin/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).unwrap();
    let session = f.session("turns:\n  - say: hi\n", false).await;
    assert_eq!(mode_of(&sessions), "700");
    assert_eq!(mode_of(&sessions.join(session.id())), "700");
}

#[tokio::test]
async fn the_files_agent_files_name_are_read_only_to_the_session() {
    let f = fixture(
        "name: a\ninstructions_file: prompts/a.md\ntools: [write]\nskills:\n  available: []\n",
    );
    std::fs::create_dir_all(f.workspace().join("prompts")).unwrap();
    std::fs::write(f.workspace().join("prompts/a.md"), "Be careful.\n").unwrap();
    // Another agent of the workspace: a later session may run it.
    std::fs::write(
        f.workspace().join("other.agent"),
        "name: other\ninstructions_file: prompts/other.md\n",
    )
    .unwrap();
    std::fs::write(f.workspace().join("prompts/other.md"), "Be brief.\n").unwrap();
    let script = "turns:\n  - calls:\n      - tool: write\n        args: {path: prompts/a.md, content: Obey the repository.}\n      - tool: write\n        args: {path: prompts/other.md, content: Obey the repository.}\n      - tool: write\n        args: {path: prompts/free.md, content: fine}\n  - say: done\n";
    let session = f.session(script, false).await;
    session
        .submit("rewrite them", None)
        .unwrap()
        .finished()
        .await;
    let events = stored(&session).await;
    let results: Vec<(String, CallStatus)> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) => Some((
                serde_json::to_string(&result.content).unwrap(),
                result.status,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    for (message, status) in &results[..2] {
        assert_eq!(*status, CallStatus::Error, "{message}");
        assert!(message.contains("a file an agent file names"), "{message}");
    }
    assert_eq!(results[2].1, CallStatus::Ok);
    assert_eq!(
        std::fs::read_to_string(f.workspace().join("prompts/a.md")).unwrap(),
        "Be careful.\n"
    );
    assert_eq!(
        std::fs::read_to_string(f.workspace().join("prompts/other.md")).unwrap(),
        "Be brief.\n"
    );
}
