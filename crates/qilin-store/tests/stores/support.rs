//! Builders of sessions and events, and a store under test with its cleanup.

use futures_util::StreamExt;
use qilin_protocol::{
    AgentInfo, CallPresentation, CallStatus, CallerKind, ContentBlock, Event, EventBody,
    FinishReason, Question, RequestAsk, RequestOpenedEvent, RequestResolution,
    RequestResolvedEvent, SessionStartedEvent, ToolResultEvent, ToolStartEvent,
};
use qilin_store::{EventStore, NewSession, StoreError};
use std::sync::Arc;
use std::time::Duration;

/// The longest a test waits for a stream before it calls the store stuck.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A store under test and what must go when the test ends.
pub struct Harness {
    /// The store.
    pub store: Arc<dyn EventStore>,
    /// Runs after the store is dropped (removes a PostgreSQL schema; a folder goes by itself).
    pub cleanup: Option<Box<dyn FnOnce() -> futures_util::future::BoxFuture<'static, ()> + Send>>,
    /// Kept alive as long as the store.
    pub _folder: Option<tempfile::TempDir>,
}

impl Harness {
    /// Drops the store, then cleans up after it.
    pub async fn finish(self) {
        drop(self.store);
        if let Some(cleanup) = self.cleanup {
            cleanup().await;
        }
    }
}

/// The time of the `n`-th tick of a test: 1 ms apart, in the protocol's format.
pub fn time(n: u64) -> String {
    let (ms, s) = (n % 1000, n / 1000);
    let (sec, min) = (s % 60, s / 60);
    let (minute, hour) = (min % 60, min / 60);
    format!("2026-11-30T{:02}:{minute:02}:{sec:02}.{ms:03}Z", 10 + hour)
}

/// A new session of `workspace` created at tick `tick`.
pub fn new_session(id: &str, workspace: &str, tick: u64) -> NewSession {
    NewSession {
        id: id.to_string(),
        workspace: workspace.to_string(),
        agent: "coder".into(),
        agent_file: Some(format!("{workspace}/coder.agent")),
        model: "scripted:demo.yaml".into(),
        created_at: time(tick),
        parent_session_id: None,
        parent_call_id: None,
    }
}

/// An event at `seq`, timed by its seq (plus `offset` ticks).
pub fn event(seq: u64, offset: u64, body: EventBody) -> Event {
    Event {
        seq,
        time: time(offset + seq),
        body,
    }
}

/// A `turn.started` with `prompt`.
pub fn turn_started(turn: &str, prompt: &str) -> EventBody {
    EventBody::TurnStarted {
        turn_id: turn.into(),
        prompt: prompt.into(),
        client_turn_id: Some(format!("client-{turn}")),
    }
}

/// A completed `turn.finished`.
pub fn turn_finished(turn: &str) -> EventBody {
    EventBody::TurnFinished {
        turn_id: turn.into(),
        reason: FinishReason::Completed,
        message: None,
    }
}

/// A text delta carrying `text`.
pub fn text(text: &str) -> EventBody {
    EventBody::StepTextDelta {
        turn_id: "t1".into(),
        step: 1,
        text: text.into(),
    }
}

/// An approval request for call `call`.
pub fn request_opened(request: &str, call: &str) -> EventBody {
    EventBody::RequestOpened(RequestOpenedEvent {
        request_id: request.into(),
        call_id: call.into(),
        parent_call_id: Some("code-1".into()),
        tool_name: "bash".into(),
        ask: RequestAsk::Approval {
            reason: "bash needs approval".into(),
            presentation: CallPresentation::new("Run", "rm -rf build"),
            arguments: serde_json::json!({"command": "rm -rf build", "timeout": 30}),
            detail: None,
        },
        child_session_id: None,
        child_name: None,
    })
}

/// A question request for call `call`.
pub fn question_opened(request: &str, call: &str) -> EventBody {
    EventBody::RequestOpened(RequestOpenedEvent {
        request_id: request.into(),
        call_id: call.into(),
        parent_call_id: None,
        tool_name: "question".into(),
        ask: RequestAsk::Question {
            questions: vec![Question {
                id: "q1".into(),
                question: "Which branch?".into(),
                options: Some(vec!["main".into(), "dev".into()]),
                multi_select: None,
            }],
        },
        child_session_id: None,
        child_name: None,
    })
}

/// The approval of request `request`.
pub fn request_resolved(request: &str, call: &str) -> EventBody {
    EventBody::RequestResolved(RequestResolvedEvent {
        request_id: request.into(),
        call_id: call.into(),
        parent_call_id: None,
        resolution: RequestResolution::Approved,
        resolved_by: "terminal".into(),
    })
}

/// A variety of events, so that every kind round-trips: the body for `seq`.
pub fn varied(seq: u64) -> EventBody {
    match seq % 5 {
        0 => EventBody::ToolStart(ToolStartEvent {
            call_id: format!("call-{seq}"),
            tool_name: "grep".into(),
            caller: CallerKind::Code,
            parent_call_id: Some("code-1".into()),
            arguments: serde_json::json!({"pattern": "TODO", "nested": {"n": seq, "u": "é✓"}}),
            presentation: CallPresentation::new("Search", "TODO"),
            before_detail: None,
        }),
        1 => EventBody::ToolResult(ToolResultEvent {
            call_id: format!("call-{seq}"),
            tool_name: "grep".into(),
            caller: CallerKind::Direct,
            parent_call_id: None,
            status: CallStatus::Ok,
            error_code: None,
            content: vec![ContentBlock::Text {
                text: format!("line {seq}\n\"quoted\" \\ tab\t"),
            }],
            user_reason: None,
            output: Some(serde_json::json!({"matches": [seq, seq + 1]})),
            detail: None,
            duration_ms: seq,
        }),
        2 => EventBody::SessionStarted(SessionStartedEvent {
            session_id: "s".into(),
            protocol_version: qilin_protocol::PROTOCOL_VERSION,
            agent: AgentInfo {
                name: "coder".into(),
                file: None,
                file_hash: Some("abc".into()),
                builtin: false,
            },
            model: "scripted:x".into(),
            workspace: "/w".into(),
            context: None,
            parent_session_id: Some("p".into()),
            parent_call_id: Some("call-1".into()),
        }),
        _ => text(&format!("delta {seq}")),
    }
}

/// Consecutive events `from..=to` with varied bodies.
pub fn events(from: u64, to: u64) -> Vec<Event> {
    (from..=to).map(|seq| event(seq, 0, varied(seq))).collect()
}

/// Reads `count` events from a follower, failing on an error or a stall.
pub async fn take(
    stream: &mut futures_util::stream::BoxStream<'static, Result<Event, StoreError>>,
    count: usize,
) -> Vec<Event> {
    let mut taken = Vec::with_capacity(count);
    while taken.len() < count {
        let next = tokio::time::timeout(PATIENCE, stream.next())
            .await
            .unwrap_or_else(|_| panic!("the follower stalled after {} events", taken.len()));
        match next {
            Some(Ok(event)) => taken.push(event),
            Some(Err(err)) => panic!("the follower failed after {} events: {err}", taken.len()),
            None => panic!("the follower ended after {} events", taken.len()),
        }
    }
    taken
}

/// Asserts that `events` are exactly `from..=to`, in order, as `expected` has them.
pub fn assert_run(events: &[Event], expected: &[Event], from: u64, to: u64) {
    let seqs: Vec<u64> = events.iter().map(|event| event.seq).collect();
    let wanted: Vec<u64> = (from..=to).collect();
    assert_eq!(
        seqs, wanted,
        "the follower's events are not exactly {from}..={to}"
    );
    for event in events {
        let original = &expected[usize::try_from(event.seq - 1).unwrap()];
        assert_eq!(
            event, original,
            "event {} differs from what was appended",
            event.seq
        );
    }
}

/// A step's start.
pub fn step_started(turn: &str, step: u32) -> EventBody {
    EventBody::StepStarted {
        turn_id: turn.into(),
        step,
    }
}

/// A step's end.
pub fn step_finished(turn: &str, step: u32) -> EventBody {
    EventBody::StepFinished {
        turn_id: turn.into(),
        step,
        usage: qilin_protocol::Usage::default(),
        stop_reason: None,
    }
}

/// A direct call of `tool` with `arguments`.
pub fn tool_start(call: &str, tool: &str, arguments: serde_json::Value) -> EventBody {
    EventBody::ToolStart(ToolStartEvent {
        call_id: call.into(),
        tool_name: tool.into(),
        caller: CallerKind::Direct,
        parent_call_id: None,
        arguments,
        presentation: CallPresentation::new("Run", tool),
        before_detail: None,
    })
}

/// The end of call `call` with `status`, the model seeing `text`.
pub fn tool_result(call: &str, tool: &str, status: CallStatus, text: &str) -> EventBody {
    EventBody::ToolResult(ToolResultEvent {
        call_id: call.into(),
        tool_name: tool.into(),
        caller: CallerKind::Direct,
        parent_call_id: None,
        status,
        error_code: None,
        content: vec![ContentBlock::text(text)],
        output: None,
        detail: None,
        duration_ms: 5,
        user_reason: None,
    })
}

/// Two sessions to search: `a` (workspace `/work/a`, agent `coder`) with two turns — prompts,
/// the model's text over several events, a call that succeeds and one that fails, Chinese
/// text — and `b` (workspace `/work/b`, agent `reviewer`) whose prompt has the words of `a`'s
/// phrase apart.
pub async fn searchable_sessions(store: &dyn EventStore) {
    store
        .create_session(new_session("a", "/work/a", 1))
        .await
        .unwrap();
    let mut reviewer = new_session("b", "/work/b", 2);
    reviewer.agent = "reviewer".into();
    store.create_session(reviewer).await.unwrap();
    let first_turn = [
        turn_started("t1", "Where did we change the retry logic?"),
        step_started("t1", 1),
        text("I changed the retry logic in client.rs"),
        text(" and added exponential backoff."),
        step_finished("t1", 1),
        tool_start(
            "c1",
            "bash",
            serde_json::json!({"command": "cargo test retry_backoff"}),
        ),
        tool_result("c1", "bash", CallStatus::Ok, "test retry_backoff ... ok"),
        tool_start(
            "c2",
            "bash",
            serde_json::json!({"command": "psql -f migrate.sql"}),
        ),
        tool_result(
            "c2",
            "bash",
            CallStatus::Error,
            "migration failed: relation users already exists",
        ),
        turn_finished("t1"),
    ];
    // The first turn in two appends, its step's text split across them.
    let first: Vec<Event> = first_turn
        .into_iter()
        .enumerate()
        .map(|(n, body)| event(n as u64 + 1, 0, body))
        .collect();
    store.append("a", &first[..3]).await.unwrap();
    store.append("a", &first[3..]).await.unwrap();
    let second_turn = [
        turn_started("t2", "请修改重试逻辑"),
        step_started("t2", 1),
        text("我们修改了重试逻辑，并增加了退避。"),
        step_finished("t2", 1),
        turn_finished("t2"),
    ];
    let second: Vec<Event> = second_turn
        .into_iter()
        .enumerate()
        .map(|(n, body)| event(n as u64 + 11, 1000, body))
        .collect();
    store.append("a", &second).await.unwrap();
    store
        .append(
            "b",
            &[
                event(
                    1,
                    0,
                    turn_started("t1", "the logic of how we retry is elsewhere"),
                ),
                event(2, 0, turn_finished("t1")),
            ],
        )
        .await
        .unwrap();
}
