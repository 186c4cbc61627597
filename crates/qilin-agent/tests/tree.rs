//! The conversation tree folded from recorded event logs (JSON lines, as on the wire).

use qilin_agent::{ConversationTree, Phase, TurnItem};
use qilin_protocol::{CallStatus, CallerKind, Event};

fn log(name: &str) -> Vec<Event> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}:{}: {e}", i + 1))
        })
        .collect()
}

#[test]
fn code_mode_calls_nest_under_their_run_code_call() {
    let tree = ConversationTree::from_events(&log("code_mode_turn.jsonl"));
    assert_eq!(tree.turns.len(), 1);
    let turn = &tree.turns[0];
    assert_eq!(turn.prompt, "Which files mention TODO?");
    let kinds: Vec<&str> = turn
        .items
        .iter()
        .map(|item| match item {
            TurnItem::Text { .. } => "text",
            TurnItem::Reasoning { .. } => "reasoning",
            TurnItem::Tool { .. } => "tool",
        })
        .collect();
    assert_eq!(kinds, ["text", "tool", "text"]);
    let TurnItem::Text { text, .. } = &turn.items[0] else {
        panic!()
    };
    assert_eq!(text, "Let me search.");

    let run = tree.call("call_1").unwrap();
    assert_eq!(run.tool_name, "run_code");
    assert_eq!(run.phase, Phase::Done);
    assert_eq!(run.sub_calls.len(), 2);
    let grep = &run.sub_calls[0];
    assert_eq!(
        (grep.tool_name.as_str(), grep.caller),
        ("grep", CallerKind::Code)
    );
    assert_eq!(grep.outcome.as_ref().unwrap().status, CallStatus::Ok);
    let read = &run.sub_calls[1];
    assert_eq!(read.outcome.as_ref().unwrap().status, CallStatus::Error);
    assert_eq!(read.sub_calls.len(), 0);
    assert_eq!(tree.call("code_2").unwrap().tool_name, "read");
    assert!(tree.preparing_arguments.is_empty());
}

#[test]
fn a_preparing_call_keeps_its_raw_arguments_beside_the_node() {
    let events = log("preparing_turn.jsonl");
    let mut tree = ConversationTree::default();
    for event in &events[..4] {
        tree.apply(event);
    }
    let node = tree.call("call_1").unwrap();
    assert_eq!(node.phase, Phase::Preparing);
    assert_eq!(node.arguments, None);
    assert_eq!(tree.preparing_arguments["call_1"], "{\"command\": \"ls -");
    let before = node.clone();
    tree.apply(&events[4]);
    assert_eq!(
        tree.call("call_1").unwrap(),
        &before,
        "streaming arguments does not touch the node"
    );
    for event in &events[5..] {
        tree.apply(event);
    }
    let node = tree.call("call_1").unwrap();
    assert_eq!(node.phase, Phase::Done);
    assert_eq!(node.progress, "a\nb\n");
    assert_eq!(node.arguments.as_ref().unwrap()["command"], "ls -la");
    assert!(tree.preparing_arguments.is_empty());
    assert_eq!(
        tree.turns[0].finished,
        Some(qilin_protocol::FinishReason::Completed)
    );
}

#[test]
fn folding_all_at_once_equals_folding_one_by_one() {
    let events = log("code_mode_turn.jsonl");
    let whole = ConversationTree::from_events(&events);
    let mut stepwise = ConversationTree::default();
    for event in &events {
        stepwise.apply(event);
    }
    assert_eq!(
        serde_json::to_value(&whole).unwrap(),
        serde_json::to_value(&stepwise).unwrap()
    );
}

/// `fixtures/demo_turn.jsonl` is the event log `qilin demo --fast --json` printed.
#[test]
fn a_recorded_demo_turn_folds_into_root_calls_with_nested_code_calls() {
    let tree = ConversationTree::from_events(&log("demo_turn.jsonl"));
    assert_eq!(tree.turns.len(), 1);
    let roots: Vec<&str> = tree.turns[0]
        .items
        .iter()
        .filter_map(|item| match item {
            TurnItem::Tool { node } => Some(node.tool_name.as_str()),
            TurnItem::Text { .. } | TurnItem::Reasoning { .. } => None,
        })
        .collect();
    assert_eq!(roots, ["glob", "grep", "run_code", "read", "edit", "bash"]);
    let run_code = tree.turns[0]
        .items
        .iter()
        .find_map(|item| match item {
            TurnItem::Tool { node } if node.tool_name == "run_code" => Some(node),
            _ => None,
        })
        .unwrap();
    let nested: Vec<(&str, CallerKind, Phase)> = run_code
        .sub_calls
        .iter()
        .map(|n| (n.tool_name.as_str(), n.caller, n.phase))
        .collect();
    assert_eq!(
        nested,
        [
            ("grep", CallerKind::Code, Phase::Done),
            ("table_query", CallerKind::Code, Phase::Done)
        ]
    );
    assert!(
        tree.preparing_arguments.is_empty(),
        "every streamed call was dispatched"
    );
    let all_done = tree.turns[0].items.iter().all(|item| match item {
        TurnItem::Tool { node } => node.phase == Phase::Done && node.outcome.is_some(),
        TurnItem::Text { .. } | TurnItem::Reasoning { .. } => true,
    });
    assert!(all_done);
    assert_eq!(
        tree.turns[0].finished,
        Some(qilin_protocol::FinishReason::Completed)
    );
}

/// A turn with one `bash` call whose live output comes as the given progress events.
fn flooding_turn(progress: impl IntoIterator<Item = (String, Option<u64>)>) -> Vec<Event> {
    use qilin_protocol::{CallPresentation, EventBody, ToolProgressEvent, ToolStartEvent};
    let mut bodies = vec![
        EventBody::TurnStarted {
            turn_id: "turn-1".into(),
            prompt: "print a lot".into(),
            client_turn_id: None,
        },
        EventBody::ToolStart(ToolStartEvent {
            call_id: "c1".into(),
            tool_name: "bash".into(),
            caller: CallerKind::Direct,
            parent_call_id: None,
            arguments: serde_json::json!({"command": "yes"}),
            presentation: CallPresentation::new("Run", "yes"),
            before_detail: None,
        }),
    ];
    bodies.extend(progress.into_iter().map(|(text, omitted_bytes)| {
        EventBody::ToolProgress(ToolProgressEvent {
            call_id: "c1".into(),
            parent_call_id: None,
            omitted_bytes,
            text,
        })
    }));
    bodies
        .into_iter()
        .enumerate()
        .map(|(at, body)| Event {
            seq: at as u64 + 1,
            time: "2026-01-01T00:00:00.000Z".into(),
            body,
        })
        .collect()
}

#[test]
fn a_log_with_every_byte_of_a_flood_live_folds_within_the_live_bound() {
    // As a log recorded before live output was bounded holds it: 50 MB, every byte live.
    let chunk = "y\n".repeat(8 * 1024);
    let events = flooding_turn((0..3_200).map(|_| (chunk.clone(), None)));
    let tree = ConversationTree::from_events(&events);
    let node = tree.call("c1").unwrap();
    assert_eq!(node.progress.len(), qilin_protocol::LIVE_HEAD_BYTES);
    assert_eq!(node.progress_tail.len(), qilin_protocol::LIVE_TAIL_BYTES);
    assert_eq!(
        node.progress.len() as u64 + node.progress_omitted_bytes + node.progress_tail.len() as u64,
        3_200 * chunk.len() as u64
    );
    let json = serde_json::to_string(&tree).unwrap();
    assert!(
        json.len() < 2 * qilin_protocol::LIVE_MAX_BYTES,
        "{} bytes",
        json.len()
    );
}

#[test]
fn a_gap_in_live_output_shows_as_the_bytes_left_out_before_the_latest_output() {
    let events = flooding_turn([
        ("start\n".to_string(), None),
        ("a glimpse\n".to_string(), Some(1_000)),
        ("the end\n".to_string(), Some(500)),
    ]);
    let tree = ConversationTree::from_events(&events);
    let node = tree.call("c1").unwrap();
    assert_eq!(node.progress, "start\n");
    assert_eq!(
        node.progress_omitted_bytes,
        1_000 + "a glimpse\n".len() as u64 + 500
    );
    assert_eq!(node.progress_tail, "the end\n");
    let json = serde_json::to_value(node).unwrap();
    assert_eq!(json["progressOmittedBytes"], 1_510);
    assert_eq!(json["progressTail"], "the end\n");
    // A call with nothing left out carries neither field.
    let whole = ConversationTree::from_events(&flooding_turn([("all\n".to_string(), None)]));
    let json = serde_json::to_value(whole.call("c1").unwrap()).unwrap();
    assert!(json.get("progressOmittedBytes").is_none() && json.get("progressTail").is_none());
}

#[test]
fn an_agent_call_links_its_child_on_its_node_and_nested_ones_under_run_code() {
    let events = log("agent_turn.jsonl");
    let tree = ConversationTree::from_events(&events);
    let foreground = tree.call("call_1").unwrap();
    let child = foreground
        .child
        .as_ref()
        .expect("agent.started folds onto the call");
    assert_eq!(
        (
            child.session_id.as_str(),
            child.agent.as_str(),
            child.background
        ),
        ("child-a", "explore", false)
    );
    assert_eq!(child.description, "List crates");
    assert_eq!(child.name, None);

    let run = tree.call("call_2").unwrap();
    assert_eq!(run.child, None, "run_code itself starts no child");
    assert_eq!(run.sub_calls.len(), 1);
    let nested = &run.sub_calls[0];
    let child = nested
        .child
        .as_ref()
        .expect("the nested agent call's child");
    assert_eq!(
        (
            child.session_id.as_str(),
            child.name.as_deref(),
            child.background
        ),
        ("child-b", Some("counter"), true)
    );
    assert_eq!(tree.call("call_3").unwrap().child, None);

    let wire = serde_json::to_value(&tree.turns[0]).unwrap();
    let items = wire["items"].as_array().unwrap();
    let linked = items
        .iter()
        .find(|item| item["node"]["callId"] == "call_1")
        .unwrap();
    assert_eq!(
        linked["node"]["child"],
        serde_json::json!({
            "sessionId": "child-a",
            "agent": "explore",
            "description": "List crates",
            "background": false
        })
    );
}

#[test]
fn the_agent_events_round_trip_as_on_the_wire() {
    let path = format!(
        "{}/tests/fixtures/agent_turn.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let event: Event = serde_json::from_str(line).unwrap();
        let again: serde_json::Value = serde_json::to_value(&event).unwrap();
        let original: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(again, original, "{line}");
    }
    let finished = log("agent_turn.jsonl")
        .into_iter()
        .find_map(|event| match event.body {
            qilin_protocol::EventBody::AgentFinished(finished) => Some(finished),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        finished.record.status,
        qilin_protocol::agents::ChildStatus::Completed
    );
    assert_eq!(finished.record.answer.as_deref(), Some("42 lines"));
    assert_eq!(finished.record.usage.cost_usd, Some(0.001));
}
