//! The agent loop driven by the scripted model over real tools and the real execution layer.

use qilin_agent::{Agent, AgentPrompt, ConversationTree, LoopSettings, Phase};
use qilin_model::{Message, Script, ScriptedProvider};
use qilin_protocol::{
    CallPresentation, CallStatus, Detail, ErrorCode, Event, EventBody, FinishReason,
};
use qilin_test_tools::Echo;
use qilin_tool::{Executor, Session, Tool, ToolContext, ToolError, ToolRegistry, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Barrier;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Deserialize, JsonSchema)]
struct MeetArgs {
    /// Who arrives.
    name: String,
}

/// Waits until a second call arrives at the same meeting point; fails after two seconds alone.
#[derive(qilin_tool::Tool)]
#[tool(name = "meet", read_only)]
struct Meet(Arc<Barrier>);

impl Tool for Meet {
    type Args = MeetArgs;
    type Output = String;
    fn prompt_hint(&self) -> &str {
        "For tests."
    }
    fn present(&self, args: &MeetArgs) -> CallPresentation {
        CallPresentation::new("Meet", &args.name)
    }
    fn before_detail(&self, _: &MeetArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &MeetArgs, _: &ToolResult<String>) -> Option<Detail> {
        None
    }
    async fn call(&self, args: MeetArgs, _: &ToolContext) -> ToolResult<String> {
        match tokio::time::timeout(Duration::from_secs(2), self.0.wait()).await {
            Ok(_) => Ok(format!("{} met", args.name)),
            Err(_) => Err(ToolError::failed(
                "nobody came: the calls did not run at the same time",
            )),
        }
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct WaitArgs {}

/// Runs until cancelled.
#[derive(qilin_tool::Tool)]
#[tool(name = "wait_forever")]
struct WaitForever;

impl Tool for WaitForever {
    type Args = WaitArgs;
    type Output = String;
    fn prompt_hint(&self) -> &str {
        "For tests."
    }
    fn present(&self, _: &WaitArgs) -> CallPresentation {
        CallPresentation::new("Wait", "")
    }
    fn before_detail(&self, _: &WaitArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &WaitArgs, _: &ToolResult<String>) -> Option<Detail> {
        None
    }
    async fn call(&self, _: WaitArgs, cx: &ToolContext) -> ToolResult<String> {
        cx.cancellation().cancelled().await;
        Err(ToolError::new(ErrorCode::Interrupted, "stopped"))
    }
}

struct Fixture {
    agent: Agent,
    events: tokio::sync::mpsc::UnboundedReceiver<Event>,
    _dir: tempfile::TempDir,
}

fn fixture(script: &str, max_steps: u32) -> Fixture {
    let mut registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    registry.register(Meet(Arc::new(Barrier::new(2)))).unwrap();
    registry.register(WaitForever).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = Arc::new(Session::new("s", dir.path(), dir.path().join("data")));
    let events = session.events().subscribe();
    let tools = registry
        .tools_list(["echo", "meet", "wait_forever"])
        .unwrap();
    let executor = Executor::new(Arc::new(registry), session);
    let script = Script::parse(script, Path::new("test-script.yaml")).unwrap();
    let agent = Agent::new(
        Arc::new(ScriptedProvider::new(script)),
        AgentPrompt {
            system: "You are a test agent.".into(),
            tools,
        },
        executor,
        LoopSettings {
            model: "scripted".into(),
            max_steps,
            max_tokens: None,
            reasoning: None,
        },
    );
    Fixture {
        agent,
        events,
        _dir: dir,
    }
}

fn drain(events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(event) = events.try_recv() {
        out.push(event);
    }
    out
}

/// Every `tool.start` has exactly one `tool.result`, and sequence numbers have no gaps.
fn assert_consistent(events: &[Event]) {
    for (i, event) in events.iter().enumerate() {
        assert_eq!(
            event.seq,
            events[0].seq + i as u64,
            "gap in sequence numbers"
        );
    }
    let started: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolStart(s) => Some(s.call_id.as_str()),
            _ => None,
        })
        .collect();
    let finished: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some(r.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        started.iter().collect::<HashSet<_>>(),
        finished.iter().collect::<HashSet<_>>(),
        "every start has a result"
    );
    assert_eq!(started.len(), finished.len(), "one result per start");
}

/// Every assistant tool call is answered by the next message under the same id.
fn assert_history_answered(history: &[Message]) {
    for (i, message) in history.iter().enumerate() {
        if let Message::Assistant { tool_calls, .. } = message
            && !tool_calls.is_empty()
        {
            let Some(Message::ToolResults { results }) = history.get(i + 1) else {
                panic!("assistant calls at {i} are not followed by their results");
            };
            let asked: Vec<_> = tool_calls.iter().map(|c| c.id.clone()).collect();
            let answered: Vec<_> = results.iter().map(|r| r.call_id.clone()).collect();
            assert_eq!(asked, answered);
        }
    }
}

#[tokio::test]
async fn calls_run_their_results_go_back_and_the_model_answers() {
    let mut f = fixture(
        r#"
turns:
  - say: "Let me echo twice."
    calls:
      - tool: echo
        args: {text: "one"}
      - tool: echo
        args: {text: "two"}
  - say: "Done: one, two."
"#,
        10,
    );
    let summary = f
        .agent
        .run_turn("echo please", CancellationToken::new())
        .await;
    let history = f.agent.history();
    assert_eq!(summary.reason, FinishReason::Completed);
    assert_eq!(summary.steps, 2);
    assert_eq!(summary.final_text, "Done: one, two.");
    assert_history_answered(&history);
    let Message::ToolResults { results } = &history[2] else {
        panic!("{history:?}")
    };
    assert!(!results[0].is_error);

    let events = drain(&mut f.events);
    assert_consistent(&events);
    let preparing = events
        .iter()
        .filter(|e| matches!(e.body, EventBody::ToolPreparing(_)))
        .count();
    assert!(preparing >= 4, "arguments streamed in pieces: {preparing}");
    let tree = ConversationTree::from_events(&events);
    let node = tree.call("call_2").unwrap();
    assert_eq!(node.phase, Phase::Done);
    assert_eq!(node.outcome.as_ref().unwrap().status, CallStatus::Ok);
    assert_eq!(tree.turns[0].finished, Some(FinishReason::Completed));
}

#[tokio::test]
async fn the_read_only_calls_of_one_step_run_concurrently() {
    let mut f = fixture(
        r#"
turns:
  - calls:
      - tool: meet
        args: {name: "a"}
      - tool: meet
        args: {name: "b"}
  - say: "They met."
"#,
        10,
    );
    f.agent.run_turn("meet", CancellationToken::new()).await;
    let history = f.agent.history();
    let Message::ToolResults { results } = &history[2] else {
        panic!("{history:?}")
    };
    assert!(results.iter().all(|r| !r.is_error), "{results:?}");
    assert_consistent(&drain(&mut f.events));
}

#[tokio::test]
async fn a_call_that_may_change_things_runs_after_the_calls_before_it_and_before_those_after() {
    let mut f = fixture(
        r#"
turns:
  - calls:
      - tool: meet
        args: {name: "a"}
      - tool: echo
        args: {text: "between"}
      - tool: meet
        args: {name: "b"}
  - say: "Done."
"#,
        10,
    );
    f.agent.run_turn("go", CancellationToken::new()).await;
    let events = drain(&mut f.events);
    assert_consistent(&events);
    let order: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolStart(s) => Some(format!("start {}", s.tool_name)),
            EventBody::ToolResult(r) => Some(format!("end {}", r.tool_name)),
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        [
            "start meet",
            "end meet",
            "start echo",
            "end echo",
            "start meet",
            "end meet"
        ]
    );
    // The first read-only call ran alone: the second waited behind the call between them.
    let history = f.agent.history();
    let Message::ToolResults { results } = &history[2] else {
        panic!("{history:?}")
    };
    assert!(results[0].is_error && !results[1].is_error, "{results:?}");
}

#[tokio::test]
async fn arguments_that_are_not_json_are_told_to_the_model_and_the_loop_goes_on() {
    let mut f = fixture(
        r#"
turns:
  - calls:
      - tool: echo
        raw: '{"text": "unterminated'
  - calls:
      - tool: echo
        args: {text: "fixed"}
  - say: "Recovered."
"#,
        10,
    );
    let summary = f.agent.run_turn("go", CancellationToken::new()).await;
    let history = f.agent.history();
    assert_eq!(summary.reason, FinishReason::Completed);
    let Message::ToolResults { results } = &history[2] else {
        panic!("{history:?}")
    };
    assert!(results[0].is_error);
    let qilin_protocol::ContentBlock::Text { text } = &results[0].content[0] else {
        panic!()
    };
    assert!(text.contains("not valid JSON"), "{text}");
    let Message::ToolResults { results } = &history[4] else {
        panic!("{history:?}")
    };
    assert!(!results[0].is_error);
    let events = drain(&mut f.events);
    assert_consistent(&events);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.body, EventBody::ToolResult(r)
        if r.call_id == "call_1" && r.error_code == Some(ErrorCode::InvalidArguments)))
    );
}

#[tokio::test]
async fn the_step_limit_ends_the_turn() {
    let mut f = fixture(
        r#"
turns:
  - calls: [{tool: echo, args: {text: "1"}}]
  - calls: [{tool: echo, args: {text: "2"}}]
  - calls: [{tool: echo, args: {text: "3"}}]
"#,
        2,
    );
    let summary = f.agent.run_turn("loop", CancellationToken::new()).await;
    let history = f.agent.history();
    assert_eq!(summary.reason, FinishReason::MaxSteps);
    assert_eq!(summary.steps, 2);
    assert_history_answered(&history);
    assert_consistent(&drain(&mut f.events));
}

#[tokio::test]
async fn an_interrupt_ends_running_calls_and_keeps_the_log_consistent() {
    let mut f = fixture(
        r#"
turns:
  - calls:
      - tool: wait_forever
        args: {}
      - tool: echo
        args: {text: "quick"}
  - say: "never reached"
"#,
        10,
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let summary = f.agent.run_turn("wait", cancel).await;
    let history = f.agent.history();
    assert_eq!(summary.reason, FinishReason::Interrupted);
    assert_history_answered(&history);
    let events = drain(&mut f.events);
    assert_consistent(&events);
    let statuses: Vec<CallStatus> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some(r.status),
            _ => None,
        })
        .collect();
    // `echo` may change things, so it waits for the call before it: the interrupt reaches it
    // before it runs.
    assert_eq!(
        statuses,
        [CallStatus::Interrupted, CallStatus::Interrupted],
        "{events:?}"
    );
    let EventBody::TurnFinished { reason, .. } = &events.last().unwrap().body else {
        panic!()
    };
    assert_eq!(*reason, FinishReason::Interrupted);
}

#[tokio::test]
async fn a_call_is_named_while_its_arguments_stream_and_each_name_is_sent_once() {
    let mut f = fixture(
        r#"
turns:
  - calls:
      - tool: meet
        args: {name: "Ada Lovelace of the Analytical Engine"}
  - say: "Met."
"#,
        10,
    );
    f.agent.run_turn("meet", CancellationToken::new()).await;
    let events = drain(&mut f.events);
    let mut named = Vec::new();
    let mut started = false;
    for event in &events {
        match &event.body {
            EventBody::ToolPreparing(preparing) => {
                assert!(!started, "presented after the call started");
                named.extend(preparing.presentation.clone());
            }
            EventBody::ToolStart(_) => started = true,
            _ => {}
        }
    }
    // The name grows as the arguments stream, each presentation sent once.
    assert!(named.len() >= 2, "{named:?}");
    assert!(named.windows(2).all(|pair| pair[0] != pair[1]), "{named:?}");
    assert!(named.iter().all(|p| p.action == "Meet"), "{named:?}");
    let last = named.last().unwrap();
    assert_eq!(last.remark, "Ada Lovelace of the Analytical Engine");
    // The tree names the call from the last one.
    let tree = ConversationTree::from_events(&events);
    assert_eq!(
        tree.call("call_1").unwrap().presentation.as_ref(),
        Some(last)
    );
}
