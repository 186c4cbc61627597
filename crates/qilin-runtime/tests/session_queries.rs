//! The session query tools in real sessions: a scripted session does some work (a call, a
//! `run_code` with nested calls), then another session of the workspace searches it, pages its
//! events and traces its calls — each tool's recorded result checked — and agent files that
//! narrow or turn off what the tools may read.

mod support;

use qilin_protocol::sessions::{
    HitField, SessionEventsOutput, SessionSearchOutput, SessionTrajectoryOutput, TrajectoryKind,
};
use qilin_protocol::{CallStatus, ContentBlock, Event, EventBody, ToolResultEvent};
use qilin_store::{EventStore, NewSession};
use support::{assert_consistent, fixture, stored};

const WORKER: &str = "\
name: worker
instructions: Work on the code.
tools: [read, session_search, session_events, session_trajectory]
code_mode: true
";

/// The id of the child session the narrowed session may read.
const CHILD: &str = "child-of-narrowed";

const WORK: &str = r#"
turns:
  - say: "I changed the retry logic in notes.txt and checked it."
    calls:
      - tool: read
        args: {path: notes.txt}
  - say: "Done."
  - calls:
      - tool: run_code
        args:
          code: |
            first = sdk.tool.call("read", {"path": "notes.txt"})
            print(len(first["text"]))
  - say: "Counted."
"#;

/// The recorded results of `tool` in `events`.
fn results<'a>(events: &'a [Event], tool: &str) -> Vec<&'a ToolResultEvent> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == tool => Some(result),
            _ => None,
        })
        .collect()
}

/// The text the model read of a result.
fn text(result: &ToolResultEvent) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// A first session doing some work, and its id.
async fn worked(f: &support::Fixture) -> String {
    let session = f.session(WORK, false).await;
    session
        .submit("Fix the retry logic", None)
        .unwrap()
        .finished()
        .await;
    session
        .submit("Count the notes from code", None)
        .unwrap()
        .finished()
        .await;
    let events = stored(&session).await;
    assert_consistent(&events);
    session.id().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_searches_reads_and_traces_another_one() {
    let f = fixture(WORKER);
    let earlier = worked(&f).await;
    let script = format!(
        r#"
turns:
  - calls:
      - tool: session_search
        args: {{query: "retry logic"}}
      - tool: session_events
        args: {{session: "{earlier}", types: ["turn.started", "step.text.delta"]}}
      - tool: session_trajectory
        args: {{session: "{earlier}"}}
      - tool: session_trajectory
        args: {{session: "{earlier}", turn: 9}}
  - say: "Found it."
"#
    );
    let session = f.session(&script, false).await;
    session
        .submit("Where did we change the retry logic?", None)
        .unwrap()
        .finished()
        .await;
    let events = stored(&session).await;
    assert_consistent(&events);

    let search = results(&events, "session_search");
    assert_eq!(search[0].status, CallStatus::Ok, "{}", text(search[0]));
    let found: SessionSearchOutput =
        serde_json::from_value(search[0].output.clone().unwrap()).unwrap();
    let in_earlier: Vec<_> = found.hits.iter().filter(|h| h.session == earlier).collect();
    let fields: Vec<HitField> = in_earlier.iter().map(|hit| hit.field).collect();
    assert!(fields.contains(&HitField::Prompt), "{found:#?}");
    assert!(fields.contains(&HitField::Text), "{found:#?}");
    assert!(
        in_earlier
            .iter()
            .all(|hit| hit.title == "Fix the retry logic")
    );
    assert!(in_earlier.iter().all(|hit| hit.score >= 1.0), "{found:#?}");
    let shown = text(search[0]);
    assert!(shown.contains("<recorded-data session=\""), "{shown}");
    assert!(shown.contains("not instructions"), "{shown}");
    assert!(
        shown.contains("«retry logic»") || shown.contains("«retry» «logic»"),
        "{shown}"
    );

    let page = results(&events, "session_events");
    assert_eq!(page[0].status, CallStatus::Ok, "{}", text(page[0]));
    let page: SessionEventsOutput =
        serde_json::from_value(page[0].output.clone().unwrap()).unwrap();
    let lines: Vec<(&str, Option<u32>, &str)> = page
        .events
        .iter()
        .map(|line| (line.kind.as_str(), line.turn, line.text.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            ("turn.started", Some(1), "prompt: Fix the retry logic"),
            (
                "step.text.delta",
                Some(1),
                "I changed the retry logic in notes.txt and checked it."
            ),
            ("step.text.delta", Some(1), "Done."),
            ("turn.started", Some(2), "prompt: Count the notes from code"),
            ("step.text.delta", Some(2), "Counted."),
        ]
    );
    assert_eq!(page.next, None);

    // The two read-only calls ran side by side: told apart by how they ended.
    let traces = results(&events, "session_trajectory");
    assert_eq!(traces.len(), 2);
    let whole = traces
        .iter()
        .find(|result| result.status == CallStatus::Ok)
        .unwrap_or_else(|| panic!("no trajectory succeeded: {}", text(traces[0])));
    let missing = traces
        .iter()
        .find(|result| result.status == CallStatus::Error)
        .unwrap_or_else(|| panic!("turn 9 was found: {}", text(traces[0])));
    let trace: SessionTrajectoryOutput =
        serde_json::from_value(whole.output.clone().unwrap()).unwrap();
    let shape: Vec<(u32, TrajectoryKind, Option<&str>)> = trace
        .nodes
        .iter()
        .map(|node| (node.depth, node.kind, node.tool.as_deref()))
        .collect();
    assert_eq!(
        shape,
        [
            (0, TrajectoryKind::Turn, None),
            (1, TrajectoryKind::Text, None),
            (1, TrajectoryKind::Call, Some("read")),
            (1, TrajectoryKind::Text, None),
            (0, TrajectoryKind::Turn, None),
            (1, TrajectoryKind::Call, Some("run_code")),
            (2, TrajectoryKind::Call, Some("read")),
            (1, TrajectoryKind::Text, None),
        ]
    );
    assert!(!trace.truncated && trace.spill.is_none());
    assert!(text(whole).contains("\n    [ok] read: "), "{}", text(whole));
    assert!(text(missing).contains("no turn 9"), "{}", text(missing));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_file_narrows_or_turns_off_what_the_tools_read() {
    let f = fixture(WORKER);
    let earlier = worked(&f).await;
    let script = format!(
        r#"
turns:
  - calls:
      - tool: session_search
        args: {{query: "retry logic"}}
      - tool: session_events
        args: {{session: "{earlier}"}}
      - tool: session_events
        args: {{session: "{CHILD}"}}
  - say: "ok"
"#
    );
    std::fs::write(f.agent(), format!("{WORKER}session_queries: session\n")).unwrap();
    let narrowed = f.session(&script, false).await;
    // A child session of the narrowed one (as its `agent` calls make them) stays in reach.
    f.store
        .create_session(NewSession {
            id: CHILD.into(),
            workspace: f.workspace().display().to_string(),
            agent: "explore".into(),
            agent_file: None,
            model: "scripted:child".into(),
            created_at: "2026-12-02T09:00:00.000Z".into(),
            parent_session_id: Some(narrowed.id().to_string()),
            parent_call_id: Some("call-1".into()),
        })
        .await
        .unwrap();
    f.store
        .append(
            CHILD,
            &[Event {
                seq: 1,
                time: "2026-12-02T09:00:01.000Z".into(),
                body: EventBody::TurnStarted {
                    turn_id: "turn-1".into(),
                    prompt: "Find the retry logic".into(),
                    client_turn_id: None,
                },
            }],
        )
        .await
        .unwrap();
    narrowed
        .submit("Where is the retry logic?", None)
        .unwrap()
        .finished()
        .await;
    let events = stored(&narrowed).await;
    let search = results(&events, "session_search");
    assert_eq!(search[0].status, CallStatus::Ok, "{}", text(search[0]));
    let found: SessionSearchOutput =
        serde_json::from_value(search[0].output.clone().unwrap()).unwrap();
    // The earlier session's hits are out of reach (its own may or may not be stored yet); its
    // child's are found.
    assert!(
        found
            .hits
            .iter()
            .all(|hit| hit.session == narrowed.id() || hit.session == CHILD),
        "{found:#?}"
    );
    assert!(
        found.hits.iter().any(|hit| hit.session == CHILD),
        "{found:#?}"
    );
    // The two calls run at once: the earlier session's page is refused, the child's read.
    let pages = results(&events, "session_events");
    let (refused, read): (Vec<_>, Vec<_>) = pages
        .iter()
        .partition(|page| page.status == CallStatus::Error);
    assert_eq!((refused.len(), read.len()), (1, 1), "{pages:#?}");
    assert!(
        text(refused[0]).contains("out of reach"),
        "{}",
        text(refused[0])
    );
    assert!(text(read[0]).contains(CHILD), "{}", text(read[0]));

    std::fs::write(f.agent(), format!("{WORKER}session_queries: off\n")).unwrap();
    let off = f.session(&script, false).await;
    off.submit("Where is the retry logic?", None)
        .unwrap()
        .finished()
        .await;
    let events = stored(&off).await;
    for tool in ["session_search", "session_events"] {
        let result = results(&events, tool);
        assert_eq!(result[0].status, CallStatus::Error);
        assert!(
            text(result[0]).contains("turned off"),
            "{}",
            text(result[0])
        );
    }
}
