//! The suite each store runs: turns followed live and resumed, requests answered from other
//! clients, interrupts, a restart mid-turn, one stream for several sessions, listing.

use crate::support::*;
use qilin_protocol::{CallStatus, Event, EventBody, FinishReason, RequestResolution};
use serde_json::json;

/// A turn of several steps with calls, its text and arguments streamed slowly enough that a
/// client can drop in the middle.
const TOUR: &str = r#"
chunk_delay_ms: 2
turns:
  - say: Let me look around the workspace first.
    calls:
      - tool: glob
        args: {pattern: "*"}
  - say: Now the notes file, whole, to see what it says.
    calls:
      - tool: glob
        args: {pattern: "*.txt"}
  - say: The workspace has an agent file and a notes file with two lines in it.
"#;

/// A turn that reads (needing approval), then asks a question, then answers.
const READ_AND_ASK: &str = r#"
turns:
  - calls:
      - tool: read
        args: {path: notes.txt}
  - calls:
      - tool: question
        args: {questions: [{id: colour, question: "Which colour?", options: [red, blue]}]}
  - say: "Done: blue it is."
"#;

/// Follows a turn, dropping the connection after a random number of events each time and
/// resuming from the last `id` seen (alternately by `Last-Event-ID` and by `?after=`): every
/// event arrives exactly once and in order, and they are the stored ones.
pub async fn a_turn_followed_with_random_drops_arrives_exactly_once(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("tour.yaml", TOUR);
    let server = world.serve().await;
    let session = server.create("tour.yaml").await;
    server.start_turn(&session, "Tour the workspace").await;
    let path = format!("/api/sessions/{session}/events/stream");
    let mut seen: Vec<Event> = Vec::new();
    let mut reconnects = 0;
    'follow: loop {
        let last = seen.last().map(|event| event.seq.to_string());
        let mut stream = match (&last, reconnects % 2) {
            (Some(last), 0) => server.stream(&path, Some(last)).await,
            (Some(last), _) => server.stream(&format!("{path}?after={last}"), None).await,
            (None, _) => server.stream(&path, None).await,
        };
        let take = fastrand::usize(1..12);
        for _ in 0..take {
            let (_, event) = stream.next_event().await.expect("the stream goes on");
            let done = finishes_turn(&event);
            seen.push(event);
            if done {
                break 'follow;
            }
        }
        drop(stream);
        reconnects += 1;
    }
    assert!(
        reconnects > 2,
        "the turn was followed across several connections"
    );
    for (index, event) in seen.iter().enumerate() {
        assert_eq!(event.seq, index as u64 + 1, "each event once, in order");
    }
    let stored = server.all_events(&session).await;
    assert_eq!(
        serde_json::to_value(&seen).unwrap(),
        serde_json::to_value(&stored[..seen.len()]).unwrap(),
        "the stream carries the stored events"
    );
    assert_consistent(&stored);
    let Some(EventBody::TurnFinished { reason, .. }) = stored.last().map(|e| &e.body) else {
        panic!("the log ends with the turn");
    };
    assert_eq!(*reason, FinishReason::Completed);
    let view = server.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(view.status, 200);
    assert_eq!(view.body["headSeq"], json!(stored.len()));
    assert_eq!(view.body["activeTurn"], json!(null));
    server.stop().await;
    world.finish().await;
}

/// A retried start with the same `clientTurnId` starts nothing new; another prompt while the
/// turn runs gets 409 naming the running turn; a malformed or empty prompt gets 400.
pub async fn retried_turns_start_once_and_a_second_prompt_is_refused(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("ask.yaml", READ_AND_ASK);
    let server = world.serve().await;
    let session = server.create("ask.yaml").await;
    let turns = format!("/api/sessions/{session}/turns");
    let first = server
        .post(
            &turns,
            json!({"prompt": "go", "clientTurnId": "tab-1-turn-1"}),
        )
        .await;
    assert_eq!(first.status, 202, "{first:?}");
    assert_eq!(first.body["repeated"], json!(false));
    let retried = server
        .post(
            &turns,
            json!({"prompt": "go", "clientTurnId": "tab-1-turn-1"}),
        )
        .await;
    assert_eq!(retried.status, 202, "{retried:?}");
    assert_eq!(retried.body["repeated"], json!(true));
    assert_eq!(retried.body["turnId"], first.body["turnId"]);
    let second = server
        .post(
            &turns,
            json!({"prompt": "something else", "clientTurnId": "tab-2"}),
        )
        .await;
    assert_eq!(second.status, 409, "{second:?}");
    assert_eq!(second.code(), "turn_running");
    assert_eq!(second.body["turnId"], first.body["turnId"]);
    assert!(second.body["message"].as_str().unwrap().len() > 10);
    let empty = server.post(&turns, json!({"prompt": ""})).await;
    assert!(
        empty.status == 400 || empty.status == 409,
        "an empty prompt is refused: {empty:?}"
    );
    let view = server.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(view.body["activeTurn"], first.body["turnId"]);
    wait_for_events(&server, &session, |events| {
        events
            .iter()
            .any(|e| matches!(e.body, EventBody::RequestOpened(_)))
    })
    .await;
    let started = server
        .all_events(&session)
        .await
        .iter()
        .filter(|event| matches!(event.body, EventBody::TurnStarted { .. }))
        .count();
    assert_eq!(started, 1, "one turn started");
    let interrupted = server
        .post(&format!("/api/sessions/{session}/interrupt"), json!({}))
        .await;
    assert_eq!(interrupted.status, 200, "{interrupted:?}");
    server.stop().await;
    world.finish().await;
}

/// The request opened by the turn is seen by a client following the stream and answered by
/// another client; the first answer wins (a later one gets 409 naming who answered), a
/// reloaded client sees what is still open, and the turn goes on to its end.
pub async fn requests_are_answered_from_a_second_client_first_answer_wins(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("ask.yaml", READ_AND_ASK);
    let server = world.serve().await;
    let session = server.create("ask.yaml").await;
    let mut watcher = server
        .stream(&format!("/api/sessions/{session}/events/stream"), None)
        .await;
    server.start_turn(&session, "read and ask").await;
    let second = reqwest::Client::new();
    let mut answered = 0;
    let mut log = Vec::new();
    while let Some((_, event)) = watcher.next_event().await {
        let done = finishes_turn(&event);
        if let EventBody::RequestOpened(opened) = &event.body {
            assert!(!opened.call_id.is_empty(), "the request names its call");
            // A client loading the page now sees it open.
            let open = server
                .get(&format!("/api/sessions/{session}/requests"))
                .await;
            assert_eq!(open.status, 200);
            assert_eq!(
                open.body["requests"][0]["requestId"],
                json!(opened.request_id)
            );
            let view = server.get(&format!("/api/sessions/{session}")).await;
            assert_eq!(
                view.body["openRequests"][0]["requestId"],
                json!(opened.request_id)
            );
            let answer = if answered == 0 {
                json!({"reply": "approve", "clientId": "b"})
            } else {
                json!({"reply": "answer", "clientId": "b",
                       "answers": [{"id": "colour", "answer": ["blue"]}]})
            };
            let path = format!("/api/sessions/{session}/requests/{}", opened.request_id);
            let by_b = Server::send(
                second
                    .post(server.url(&path))
                    .bearer_auth(&server.token)
                    .json(&answer),
            )
            .await;
            assert_eq!(by_b.status, 200, "{by_b:?}");
            assert_eq!(by_b.body["resolvedBy"], json!("web:b"));
            let late = server
                .post(
                    &path,
                    json!({"reply": "deny", "clientId": "a", "reason": "no"}),
                )
                .await;
            assert_eq!(late.status, 409, "{late:?}");
            assert_eq!(late.code(), "already_answered");
            assert_eq!(late.body["resolvedBy"], json!("web:b"));
            answered += 1;
        }
        log.push(event);
        if done {
            break;
        }
    }
    assert_eq!(answered, 2, "an approval and a question");
    let stored = server.all_events(&session).await;
    assert_consistent(&stored);
    let resolutions: Vec<(&str, &RequestResolution)> = stored
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::RequestResolved(r) => Some((r.resolved_by.as_str(), &r.resolution)),
            _ => None,
        })
        .collect();
    assert_eq!(resolutions.len(), 2);
    assert!(matches!(
        resolutions[0],
        ("web:b", RequestResolution::Approved)
    ));
    assert!(matches!(
        resolutions[1],
        ("web:b", RequestResolution::Answered { .. })
    ));
    let statuses: Vec<CallStatus> = stored
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some(r.status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [CallStatus::Ok, CallStatus::Ok]);
    let unknown = server
        .post(
            &format!("/api/sessions/{session}/requests/no-such-request"),
            json!({"reply": "approve"}),
        )
        .await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    assert_eq!(unknown.code(), "unknown_request");
    server.stop().await;
    world.finish().await;
}

/// An interrupt ends the turn: its waiting call ends `interrupted`, its request `cancelled`,
/// and answering it afterwards gets 410.
pub async fn an_interrupt_cancels_open_requests(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("ask.yaml", READ_AND_ASK);
    let server = world.serve().await;
    let session = server.create("ask.yaml").await;
    server.start_turn(&session, "read").await;
    wait_for_events(&server, &session, |events| {
        events
            .iter()
            .any(|e| matches!(e.body, EventBody::RequestOpened(_)))
    })
    .await;
    let open = server
        .get(&format!("/api/sessions/{session}/requests"))
        .await;
    let request = open.body["requests"][0]["requestId"]
        .as_str()
        .unwrap()
        .to_string();
    let interrupted = server
        .post(&format!("/api/sessions/{session}/interrupt"), json!({}))
        .await;
    assert_eq!(interrupted.status, 200, "{interrupted:?}");
    assert_eq!(interrupted.body["interrupted"], json!(true));
    wait_for_events(&server, &session, |events| {
        events.last().is_some_and(finishes_turn)
    })
    .await;
    let stored = server.all_events(&session).await;
    assert_consistent(&stored);
    assert!(stored.iter().any(|e| matches!(
        &e.body,
        EventBody::RequestResolved(r) if r.resolution == RequestResolution::Cancelled
    )));
    assert!(stored.iter().any(|e| matches!(
        &e.body,
        EventBody::ToolResult(r) if r.status == CallStatus::Interrupted
    )));
    let late = server
        .post(
            &format!("/api/sessions/{session}/requests/{request}"),
            json!({"reply": "approve"}),
        )
        .await;
    assert_eq!(late.status, 410, "{late:?}");
    assert_eq!(late.code(), "request_gone");
    let again = server
        .post(&format!("/api/sessions/{session}/interrupt"), json!({}))
        .await;
    assert_eq!(again.body["interrupted"], json!(false), "nothing runs now");
    let open = server
        .get(&format!("/api/sessions/{session}/requests"))
        .await;
    assert_eq!(open.body["requests"], json!([]));
    server.stop().await;
    world.finish().await;
}

/// The server stops while a turn waits for an approval; a new server on the same store has
/// the whole history, the waiting call `interrupted` and its request `cancelled` (answering
/// it gets 410), a client resumes its stream from the last `id` it saw across the restart
/// with nothing lost or repeated, and the conversation goes on.
pub async fn a_restart_mid_turn_keeps_history_and_the_conversation_goes_on(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("ask.yaml", READ_AND_ASK);
    let first = world.serve().await;
    let session = first.create("ask.yaml").await;
    let mut stream = first
        .stream(&format!("/api/sessions/{session}/events/stream"), None)
        .await;
    first.start_turn(&session, "read").await;
    let mut seen: Vec<Event> = Vec::new();
    let request = loop {
        let (_, event) = stream.next_event().await.expect("the turn goes on");
        let opened = match &event.body {
            EventBody::RequestOpened(opened) => Some(opened.request_id.clone()),
            _ => None,
        };
        seen.push(event);
        if let Some(request) = opened {
            break request;
        }
    };
    first.stop().await;
    // The stream ends with the server: what was committed meanwhile is read after.
    while let Some(message) = stream.next().await {
        if message.event == "message" {
            seen.push(serde_json::from_str(&message.data).unwrap());
        }
    }

    // The scripted model plays the answer after the ones the conversation holds.
    world.script(
        "ask.yaml",
        "turns:\n  - say: (played before the restart)\n  - say: Picking up where we stopped.\n",
    );
    let second = world.serve().await;
    let last = seen.last().unwrap().seq.to_string();
    let mut stream = second
        .stream(
            &format!("/api/sessions/{session}/events/stream"),
            Some(&last),
        )
        .await;
    let view = second.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(view.status, 200, "{view:?}");
    assert_eq!(
        view.body["activeTurn"],
        json!(null),
        "no turn runs after the restart"
    );
    assert_eq!(view.body["openRequests"], json!([]));
    let late = second
        .post(
            &format!("/api/sessions/{session}/requests/{request}"),
            json!({"reply": "approve"}),
        )
        .await;
    assert_eq!(late.status, 410, "{late:?}");
    let next_turn = second.start_turn(&session, "and now?").await;
    // Until the new turn ends: the interrupted turn's end, committed as the first server
    // stopped, may come on this stream rather than on the one that ended with it.
    loop {
        let (_, event) = stream.next_event().await.expect("the stream goes on");
        let done =
            matches!(&event.body, EventBody::TurnFinished { turn_id, .. } if *turn_id == next_turn);
        seen.push(event);
        if done {
            break;
        }
    }
    for (index, event) in seen.iter().enumerate() {
        assert_eq!(
            event.seq,
            index as u64 + 1,
            "each event once, in order, across the restart"
        );
    }
    let stored = second.all_events(&session).await;
    assert_eq!(stored.len(), seen.len());
    assert_consistent(&stored);
    let reasons: Vec<FinishReason> = stored
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::TurnFinished { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [FinishReason::Interrupted, FinishReason::Completed]
    );
    assert!(stored.iter().any(|e| matches!(
        &e.body,
        EventBody::ToolResult(r) if r.status == CallStatus::Interrupted && r.tool_name == "read"
    )));
    let said: String = stored
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::StepTextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(said, "Picking up where we stopped.");
    second.stop().await;
    world.finish().await;
}

/// One stream follows two sessions; each message names its session and carries a cursor of
/// both; reconnecting with the cursor resumes each where it was.
pub async fn one_stream_follows_several_sessions_and_resumes_each(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("tour.yaml", TOUR);
    let server = world.serve().await;
    let a = server.create("tour.yaml").await;
    let b = server.create("tour.yaml").await;
    server.start_turn(&a, "tour a").await;
    server.start_turn(&b, "tour b").await;
    let mut cursor = format!("{a}:0,{b}:0");
    let mut seen: std::collections::HashMap<String, Vec<u64>> = Default::default();
    let mut finished = std::collections::HashSet::new();
    let mut connections = 0;
    while finished.len() < 2 {
        let mut stream = match connections {
            0 => {
                server
                    .stream(&format!("/api/stream?sessions={cursor}"), None)
                    .await
            }
            _ => {
                server
                    .stream("/api/stream?sessions=ignored:0", Some(&cursor))
                    .await
            }
        };
        connections += 1;
        for _ in 0..fastrand::usize(3..20) {
            let message = stream.next().await.expect("the stream goes on");
            assert_eq!(message.event, "message", "{message:?}");
            let data: serde_json::Value = serde_json::from_str(&message.data).unwrap();
            let id = data["sessionId"].as_str().unwrap().to_string();
            let event: Event = serde_json::from_value(data["event"].clone()).unwrap();
            if finishes_turn(&event) {
                finished.insert(id.clone());
            }
            seen.entry(id).or_default().push(event.seq);
            cursor = message.id;
            if finished.len() == 2 {
                break;
            }
        }
    }
    assert!(connections > 1);
    for id in [&a, &b] {
        let stored = server.all_events(id).await;
        let expected: Vec<u64> = stored.iter().map(|e| e.seq).collect();
        assert_eq!(
            seen[id.as_str()],
            expected[..seen[id.as_str()].len()].to_vec()
        );
        assert_eq!(
            seen[id.as_str()].len(),
            stored.len(),
            "each session whole, once"
        );
    }
    let unknown = server.get("/api/stream?sessions=nope:0").await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    let malformed = server.get("/api/stream?sessions=abc").await;
    assert_eq!(malformed.status, 400, "{malformed:?}");
    assert_eq!(malformed.code(), "invalid_cursor");
    server.stop().await;
    world.finish().await;
}

/// Sessions are listed newest activity first, a page at a time; read; renamed; deleted.
pub async fn sessions_are_listed_newest_first_a_page_at_a_time(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("tour.yaml", TOUR);
    let server = world.serve().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(server.create("tour.yaml").await);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let mut listed = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut request = server
            .request(reqwest::Method::GET, "/api/sessions")
            .query(&[("limit", "2")]);
        if let Some(next) = &after {
            request = request.query(&[("after", next)]);
        }
        let page = Server::send(request).await;
        assert_eq!(page.status, 200, "{page:?}");
        for session in page.body["sessions"].as_array().unwrap() {
            listed.push(session["id"].as_str().unwrap().to_string());
        }
        match page.body["next"].as_str() {
            Some(next) => after = Some(next.to_string()),
            None => break,
        }
    }
    ids.reverse();
    assert_eq!(listed, ids, "newest first, each once");
    // A session's view names the server user's home, so a client can write paths as `~/…`.
    let read = server.get(&format!("/api/sessions/{}", ids[0])).await;
    assert_eq!(read.status, 200, "{read:?}");
    let home = std::env::var("HOME").expect("the tests run with HOME set");
    assert_eq!(read.body["home"], json!(home));
    assert!(
        read.body["workspace"]
            .as_str()
            .is_some_and(|w| w.starts_with('/'))
    );
    let renamed = Server::send(
        server
            .request(reqwest::Method::PATCH, &format!("/api/sessions/{}", ids[0]))
            .json(&json!({"title": "The tour"})),
    )
    .await;
    assert_eq!(renamed.status, 200, "{renamed:?}");
    assert_eq!(renamed.body["title"], json!("The tour"));
    let deleted = Server::send(server.request(
        reqwest::Method::DELETE,
        &format!("/api/sessions/{}", ids[1]),
    ))
    .await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
    let gone = server.get(&format!("/api/sessions/{}", ids[1])).await;
    assert_eq!(gone.status, 404);
    assert_eq!(gone.code(), "unknown_session");
    let bad = server.get("/api/sessions?limit=0").await;
    assert_eq!(bad.status, 400);
    server.stop().await;
    world.finish().await;
}

/// Two server processes on one PostgreSQL: a session created on the first is followed live
/// from the second, and its turn is started and its request answered through the second
/// (relayed to the first, which runs it); each client sees every event once, in order.
pub async fn two_servers_on_one_database_share_a_live_session(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("ask.yaml", READ_AND_ASK);
    let first = world.serve().await;
    let second = world.serve().await;
    let session = first.create("ask.yaml").await;
    let path = format!("/api/sessions/{session}/events/stream");
    let mut on_first = first.stream(&path, None).await;
    let mut on_second = second.stream(&path, None).await;
    let started = second
        .post(
            &format!("/api/sessions/{session}/turns"),
            json!({"prompt": "read and ask", "clientTurnId": "t1"}),
        )
        .await;
    assert_eq!(
        started.status, 202,
        "relayed to the process running it: {started:?}"
    );
    let mut seen_second = Vec::new();
    let mut answered = 0;
    loop {
        let (_, event) = on_second
            .next_event()
            .await
            .expect("the second sees it live");
        let done = finishes_turn(&event);
        if let EventBody::RequestOpened(opened) = &event.body {
            let answer = if answered == 0 {
                json!({"reply": "approve", "clientId": "second"})
            } else {
                json!({"reply": "answer", "clientId": "second",
                       "answers": [{"id": "colour", "answer": ["red"]}]})
            };
            let path = format!("/api/sessions/{session}/requests/{}", opened.request_id);
            let reply = second.post(&path, answer).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            let late = first.post(&path, json!({"reply": "dismiss"})).await;
            assert_eq!(late.status, 409, "{late:?}");
            answered += 1;
        }
        seen_second.push(event.seq);
        if done {
            break;
        }
    }
    let mut seen_first = Vec::new();
    while seen_first.len() < seen_second.len() {
        let (_, event) = on_first.next_event().await.expect("the first sees it too");
        seen_first.push(event.seq);
    }
    let stored = first.all_events(&session).await;
    assert_consistent(&stored);
    let expected: Vec<u64> = stored.iter().map(|e| e.seq).collect();
    assert_eq!(seen_second, expected);
    assert_eq!(seen_first, expected);
    let view = second.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(view.body["hosted"], json!(false), "the first runs it");
    second.stop().await;
    first.stop().await;
    world.finish().await;
}

/// `POST /api/sessions/{id}/compact`: refused with nothing to compact and while a turn runs;
/// between turns it answers with the recorded summary, which the next turn starts from.
pub async fn compact_summarises_between_turns_and_is_refused_while_one_runs(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    // A long first answer, so the summary makes the conversation smaller.
    let long_answer = "The notes file has two lines, and both of them are short. ".repeat(40);
    world.script(
        "compact.yaml",
        &format!(
            "chunk_delay_ms: 1\nturns:\n  - say: {long_answer}\n  - say: \"**Goal**: know the \
             notes. **Done**: two short lines.\"\n  - say: Still two lines.\n"
        ),
    );
    let server = world.serve().await;
    let session = server.create("compact.yaml").await;
    let compact = format!("/api/sessions/{session}/compact");

    let nothing = server.post(&compact, json!({})).await;
    assert_eq!(nothing.status, 409, "{nothing:?}");
    assert_eq!(nothing.code(), "nothing_to_compact");

    let turn = server.start_turn(&session, "What do the notes say?").await;
    let busy = server.post(&compact, json!({})).await;
    assert_eq!(busy.status, 409, "{busy:?}");
    assert_eq!(busy.code(), "turn_running");
    assert_eq!(busy.body["turnId"], json!(turn));
    wait_for_events(&server, &session, |events| {
        events.last().is_some_and(finishes_turn)
    })
    .await;

    let compacted = server.post(&compact, json!({})).await;
    assert_eq!(compacted.status, 200, "{compacted:?}");
    assert_eq!(
        compacted.body["summary"],
        json!("**Goal**: know the notes. **Done**: two short lines.")
    );
    let before = compacted.body["estimatedTokensBefore"].as_u64().unwrap();
    let after = compacted.body["estimatedTokensAfter"].as_u64().unwrap();
    assert!(after < before, "{compacted:?}");
    // In the log before the answer came.
    let events = server.all_events(&session).await;
    let Some(EventBody::ContextCompacted(recorded)) = events.last().map(|e| &e.body) else {
        panic!("the log ends with the compaction: {events:?}");
    };
    assert_eq!(
        serde_json::to_value(recorded).unwrap(),
        compacted.body,
        "the answer is the recorded event"
    );
    assert_eq!(recorded.replaces_through_seq, events.len() as u64 - 1);
    let again = server.post(&compact, json!({})).await;
    assert_eq!(again.code(), "nothing_to_compact", "{again:?}");

    server.start_turn(&session, "And now?").await;
    wait_for_events(&server, &session, |events| {
        events.last().is_some_and(finishes_turn)
    })
    .await;
    let events = server.all_events(&session).await;
    assert_consistent(&events);
    let Some(EventBody::TurnFinished { reason, .. }) = events.last().map(|e| &e.body) else {
        panic!("the log ends with the turn");
    };
    assert_eq!(*reason, FinishReason::Completed);

    // The snapshot carries every compaction whichever turns it returns, counted from the
    // session's first turn: the divider after turn 1 is known to a page of turn 2 alone.
    let snapshot = format!("/api/sessions/{session}/snapshot");
    let compacted_seq = events
        .iter()
        .find(|event| matches!(event.body, EventBody::ContextCompacted(_)))
        .map(|event| event.seq);
    let compaction = json!([{
        "seq": compacted_seq,
        "afterTurns": 1,
        "summary": "**Goal**: know the notes. **Done**: two short lines.",
        "usage": compacted.body["usage"],
        "estimatedTokensBefore": before,
        "estimatedTokensAfter": after,
    }]);
    let latest = server.get(&format!("{snapshot}?turns=1")).await;
    assert_eq!(latest.status, 200, "{latest:?}");
    assert_eq!(latest.body["headSeq"], json!(events.len()));
    assert_eq!(latest.body["totalTurns"], json!(2));
    assert_eq!(latest.body["firstTurn"], json!(1));
    assert_eq!(latest.body["turns"][0]["prompt"], json!("And now?"));
    assert_eq!(latest.body["turns"].as_array().map(Vec::len), Some(1));
    assert_eq!(latest.body["compactions"], compaction);
    let earlier = server.get(&format!("{snapshot}?turns=1&before=1")).await;
    assert_eq!(earlier.body["firstTurn"], json!(0));
    assert_eq!(
        earlier.body["turns"][0]["prompt"],
        json!("What do the notes say?")
    );
    assert_eq!(earlier.body["compactions"], compaction);
    let none = server.get(&format!("{snapshot}?turns=5&before=0")).await;
    assert_eq!(none.body["turns"], json!([]));
    assert_eq!(none.body["compactions"], compaction);

    let document = server.get("/api/openapi.json").await;
    let shape = &document.body["components"]["schemas"]["Snapshot"];
    assert!(
        shape["required"]
            .as_array()
            .is_some_and(|required| required.contains(&json!("compactions"))),
        "the document names the snapshot's compactions: {shape}"
    );
    assert_eq!(
        document.body["paths"]["/api/sessions/{id}/compact"]["post"]["operationId"],
        json!("compact")
    );
    server.stop().await;
    world.finish().await;
}

/// `GET /api/search` finds what a session recorded — the prompt, the model's text, a call's
/// result — a page at a time, narrowed by tool; a query it cannot search is a 400 that says
/// why, never a 500.
pub async fn search_finds_recorded_text_and_refuses_bad_queries_clearly(backend: Backend) {
    let world = World::new(backend, ASKING_AGENT);
    world.script("tour.yaml", TOUR);
    let server = world.serve().await;
    let session = server.create("tour.yaml").await;
    server
        .start_turn(&session, "Look around the workspace")
        .await;
    wait_for_events(&server, &session, |events| {
        events.last().is_some_and(finishes_turn)
    })
    .await;
    let found = server.get("/api/search?q=notes%20file").await;
    assert_eq!(found.status, 200, "{found:?}");
    let hits = found.body["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{found:?}");
    assert!(hits.iter().all(|hit| hit["session"] == json!(session)));
    assert_eq!(
        hits[0]["field"],
        json!("text"),
        "the phrase ranks first: {found:?}"
    );
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("«notes file»")
            || hits[0]["snippet"]
                .as_str()
                .unwrap()
                .contains("«notes» «file»"),
        "{found:?}"
    );
    assert_eq!(hits[0]["turn"], json!(1));
    let prompt = server.get("/api/search?q=around&limit=1").await;
    assert_eq!(prompt.status, 200, "{prompt:?}");
    assert_eq!(prompt.body["hits"].as_array().unwrap().len(), 1);
    let next = prompt.body["next"].as_str().expect("a second page");
    let second = Server::send(server.request(reqwest::Method::GET, "/api/search").query(&[
        ("q", "around"),
        ("limit", "1"),
        ("cursor", next),
    ]))
    .await;
    assert_eq!(second.status, 200, "{second:?}");
    assert_ne!(second.body["hits"][0], prompt.body["hits"][0]);
    // Fields a form sends empty are as if not sent.
    let empty = server
        .get("/api/search?q=notes%20file&cursor=&after=&before=&agent=&tool=")
        .await;
    assert_eq!(empty.status, 200, "{empty:?}");
    assert_eq!(empty.body["hits"], found.body["hits"]);
    let in_glob = server.get("/api/search?q=txt&tool=glob").await;
    assert_eq!(in_glob.status, 200, "{in_glob:?}");
    let in_glob = in_glob.body["hits"].as_array().unwrap();
    assert!(!in_glob.is_empty() && in_glob.iter().all(|hit| hit["tool"] == json!("glob")));
    for (path, code) in [
        ("/api/search?q=*", "invalid_query"),
        ("/api/search?q=%22%20(%20-", "invalid_query"),
        ("/api/search?q=notes&after=yesterday", "invalid_query"),
        ("/api/search?q=notes&cursor=later", "invalid_cursor"),
        ("/api/search?q=notes&limit=0", "invalid_query"),
        ("/api/search?q=notes&agent=a%00b", "invalid_query"),
    ] {
        let refused = server.get(path).await;
        assert_eq!(refused.status, 400, "{path}: {refused:?}");
        assert_eq!(refused.code(), code, "{path}: {refused:?}");
    }
    let long = format!("/api/search?q={}", "retry%20".repeat(2000));
    assert_eq!(server.get(&long).await.status, 400);
    let missing = server.get("/api/search").await;
    assert_eq!(missing.status, 400, "{missing:?}");
    let quoted = server.get("/api/search?q=%22notes%22%20OR%20%2A").await;
    assert_eq!(quoted.status, 200, "{quoted:?}");
    server.stop().await;
    world.finish().await;
}

/// A child session started by `agent` is hidden from the session list, listed with
/// `?parent=ID`, and named in its parent's view; each carries its parent's id and call.
pub async fn child_sessions_are_listed_under_their_parent(backend: Backend) {
    let world = World::new(
        backend,
        "name: lead\ninstructions: Delegate.\ntools: [agent, read]\ncode_mode: false\n",
    );
    let worker_script = world.workspace().join("worker.yaml");
    world.script("worker.yaml", "turns:\n  - say: worker done\n");
    std::fs::write(
        world.workspace().join("worker.agent"),
        format!(
            "name: worker\ninstructions: Work.\ntools: [read]\nmodel: scripted:{}\n",
            worker_script.display()
        ),
    )
    .unwrap();
    world.script(
        "lead.yaml",
        "turns:\n  - calls:\n      - tool: agent\n        args: {agent: worker, prompt: Work., description: Do the work}\n  - say: done\n",
    );
    let server = world.serve().await;
    let lead = server.create("lead.yaml").await;
    server.start_turn(&lead, "Delegate.").await;
    wait_for_events(&server, &lead, |events| {
        events
            .iter()
            .any(|e| matches!(e.body, EventBody::TurnFinished { .. }))
    })
    .await;
    let events = server.all_events(&lead).await;
    let call = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::AgentStarted(started) => Some(started.clone()),
            _ => None,
        })
        .expect("agent.started in the lead's log");

    let top = server.get("/api/sessions").await;
    assert_eq!(top.status, 200, "{top:?}");
    let ids: Vec<&str> = top.body["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [lead.as_str()], "the child is hidden under its parent");
    assert_eq!(top.body["sessions"][0]["parentSessionId"], json!(null));

    let children = server.get(&format!("/api/sessions?parent={lead}")).await;
    assert_eq!(children.status, 200, "{children:?}");
    let listed = children.body["sessions"].as_array().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], json!(call.child_session_id));
    assert_eq!(listed[0]["parentSessionId"], json!(lead));
    assert_eq!(listed[0]["parentCallId"], json!(call.call_id));
    assert_eq!(listed[0]["agent"], json!("worker"));

    let view = server.get(&format!("/api/sessions/{lead}")).await;
    assert_eq!(view.status, 200, "{view:?}");
    let named = view.body["children"].as_array().unwrap();
    assert_eq!(named.len(), 1);
    assert_eq!(named[0]["id"], json!(call.child_session_id));
    let child = server
        .get(&format!("/api/sessions/{}", call.child_session_id))
        .await;
    assert_eq!(child.body["parentSessionId"], json!(lead));
    assert_eq!(child.body["children"], json!([]));
    let none = server.get("/api/sessions?parent=nobody").await;
    assert_eq!(none.status, 200);
    assert_eq!(none.body["sessions"], json!([]));
    server.stop().await;
    world.finish().await;
}

/// A child's approvals surface in its parent's clients: each opens a request of the parent
/// naming the child, on the `agent` call that started it. The first is answered from the
/// parent's client (the answer resolves the child's own request); the second from the child's
/// own route (the parent's mirror closes the same way). Exactly one answer wins either way.
pub async fn a_childs_approval_is_answered_from_the_parents_client(backend: Backend) {
    let world = World::new(
        backend,
        "name: lead\ninstructions: Delegate.\ntools: [agent, read]\ncode_mode: false\n",
    );
    let reader_script = world.workspace().join("reader.yaml");
    world.script(
        "reader.yaml",
        "turns:\n  - calls:\n      - tool: read\n        args: {path: notes.txt}\n  \
         - calls:\n      - tool: read\n        args: {path: agent.agent}\n  - say: both read\n",
    );
    std::fs::write(
        world.workspace().join("reader.agent"),
        format!(
            "name: reader\ninstructions: Read.\ntools: [read]\nmodel: scripted:{}\n\
             review:\n  rules:\n    - tool: read\n      decision: ask\n      reason: reading needs a yes\n",
            reader_script.display()
        ),
    )
    .unwrap();
    world.script(
        "lead.yaml",
        "turns:\n  - calls:\n      - tool: agent\n        args: {agent: reader, prompt: Read., description: Read two files, name: r1}\n  - say: done\n",
    );
    let server = world.serve().await;
    let lead = server.create("lead.yaml").await;
    let mut watcher = server
        .stream(&format!("/api/sessions/{lead}/events/stream"), None)
        .await;
    server.start_turn(&lead, "Delegate.").await;
    let mut mirrors = Vec::new();
    let mut agent_call = None;
    while let Some((_, event)) = watcher.next_event().await {
        let done = finishes_turn(&event);
        if let EventBody::ToolStart(start) = &event.body
            && start.tool_name == "agent"
        {
            agent_call = Some(start.call_id.clone());
        }
        if let EventBody::RequestOpened(opened) = &event.body {
            let child = opened
                .child_session_id
                .clone()
                .expect("the request names the child");
            assert_eq!(opened.child_name.as_deref(), Some("r1"));
            assert_eq!(
                Some(&opened.call_id),
                agent_call.as_ref(),
                "on the agent call"
            );
            assert_eq!(opened.tool_name, "read");
            let open = server.get(&format!("/api/sessions/{lead}/requests")).await;
            assert_eq!(
                open.body["requests"][0]["requestId"],
                json!(opened.request_id)
            );
            assert_eq!(open.body["requests"][0]["childSessionId"], json!(child));
            assert_eq!(open.body["requests"][0]["childName"], json!("r1"));
            // The child's own request, open too (its log is stored on its own schedule).
            let deadline = tokio::time::Instant::now() + PATIENCE;
            let own_id = loop {
                let own = server.get(&format!("/api/sessions/{child}/requests")).await;
                if let Some(id) = own.body["requests"][0]["requestId"].as_str() {
                    break id.to_string();
                }
                assert!(tokio::time::Instant::now() < deadline, "{own:?}");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            };
            let parent_path = format!("/api/sessions/{lead}/requests/{}", opened.request_id);
            let child_path = format!("/api/sessions/{child}/requests/{own_id}");
            let (first, second) = match mirrors.len() {
                0 => (&parent_path, &child_path),
                _ => (&child_path, &parent_path),
            };
            let answered = server
                .post(first, json!({"reply": "approve", "clientId": "b"}))
                .await;
            assert_eq!(answered.status, 200, "{answered:?}");
            assert_eq!(answered.body["resolvedBy"], json!("web:b"));
            let late = server
                .post(second, json!({"reply": "deny", "clientId": "a"}))
                .await;
            assert_eq!(late.status, 409, "{late:?}");
            assert_eq!(late.code(), "already_answered");
            assert_eq!(late.body["resolvedBy"], json!("web:b"));
            mirrors.push((child, opened.request_id.clone(), own_id));
        }
        if done {
            break;
        }
    }
    assert_eq!(mirrors.len(), 2, "two approvals surfaced in the lead");
    let stored = server.all_events(&lead).await;
    assert_consistent(&stored);
    let resolved: Vec<(&str, &str, &RequestResolution)> = stored
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::RequestResolved(r) => {
                Some((r.request_id.as_str(), r.resolved_by.as_str(), &r.resolution))
            }
            _ => None,
        })
        .collect();
    assert_eq!(resolved.len(), 2, "each mirror ended once: {resolved:?}");
    for ((_, mirror, _), (id, by, resolution)) in mirrors.iter().zip(&resolved) {
        assert_eq!((mirror.as_str(), *by), (*id, "web:b"));
        assert_eq!(**resolution, RequestResolution::Approved);
    }
    let child = &mirrors[0].0;
    wait_for_events(&server, child, |events| {
        events
            .iter()
            .any(|e| matches!(e.body, EventBody::TurnFinished { .. }))
    })
    .await;
    let child_log = server.all_events(child).await;
    let own: Vec<(&str, &str)> = child_log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::RequestResolved(r) => Some((r.request_id.as_str(), r.resolved_by.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        own,
        [
            (mirrors[0].2.as_str(), "web:b"),
            (mirrors[1].2.as_str(), "web:b")
        ]
    );
    let reads: Vec<CallStatus> = child_log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some(r.status),
            _ => None,
        })
        .collect();
    assert_eq!(
        reads,
        [CallStatus::Ok, CallStatus::Ok],
        "both reads approved"
    );
    let open = server.get(&format!("/api/sessions/{lead}/requests")).await;
    assert_eq!(open.body["requests"], json!([]));
    server.stop().await;
    world.finish().await;
}
