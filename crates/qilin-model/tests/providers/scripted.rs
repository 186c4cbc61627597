use crate::support::{events, first_request, response};
use qilin_model::{
    AssistantToolCall, CHUNK_BYTES, ModelEvent, ModelProvider, SCRIPT_EXHAUSTED, Script,
    ScriptError, ScriptedProvider, StopReason,
};
use std::path::Path;
use std::time::Duration;

fn parse(source: &str) -> Result<Script, ScriptError> {
    Script::parse(source, Path::new("demo.yaml"))
}

const SCRIPT: &str = r#"
turns:
  - say: I'll look at the project first, starting with the layout.
    calls:
      - tool: glob
        args: {pattern: "src/**/*.rs", limit: 20}
      - tool: read
        args:
          path: src/main.rs
  - calls:
      - tool: grep
        raw: '{"pattern": "TODO", "path": '
      - tool: todo_write
  - say: Two TODO comments — both in src/main.rs.
"#;

/// The turn a request gets is the number of answers its conversation holds, so a session
/// resumed with a new provider goes on where it stopped.
#[tokio::test]
async fn each_request_takes_the_turn_after_the_answers_it_holds_and_ids_run_across_the_script() {
    let model = ScriptedProvider::new(parse(SCRIPT).expect("script"));
    let request = first_request("scripted");

    let first = response(model.stream(request.clone())).await;
    assert_eq!(
        first.text,
        "I'll look at the project first, starting with the layout."
    );
    assert_eq!(
        first.tool_calls,
        vec![
            AssistantToolCall {
                id: "call_1".into(),
                name: "glob".into(),
                arguments: r#"{"pattern":"src/**/*.rs","limit":20}"#.into(),
            },
            AssistantToolCall {
                id: "call_2".into(),
                name: "read".into(),
                arguments: r#"{"path":"src/main.rs"}"#.into(),
            },
        ]
    );
    assert_eq!(first.stop_reason, Some(StopReason::ToolUse));
    assert!(first.usage.input_tokens > 50, "{:?}", first.usage);
    assert!(first.usage.output_tokens > 10, "{:?}", first.usage);

    let mut request = request;
    request.messages.push(first.to_message());
    let second = response(model.stream(request.clone())).await;
    assert_eq!(second.text, "");
    assert_eq!(
        second.tool_calls,
        vec![
            AssistantToolCall {
                id: "call_3".into(),
                name: "grep".into(),
                arguments: r#"{"pattern": "TODO", "path": "#.into(),
            },
            AssistantToolCall {
                id: "call_4".into(),
                name: "todo_write".into(),
                arguments: "{}".into(),
            },
        ]
    );

    request.messages.push(second.to_message());
    let third = response(model.stream(request.clone())).await;
    assert_eq!(third.text, "Two TODO comments — both in src/main.rs.");
    request.messages.push(third.to_message());
    assert_eq!(third.stop_reason, Some(StopReason::EndTurn));

    for _ in 0..2 {
        let after = response(model.stream(request.clone())).await;
        assert_eq!(after.text, SCRIPT_EXHAUSTED);
        assert!(after.tool_calls.is_empty());
        assert_eq!(after.stop_reason, Some(StopReason::EndTurn));
    }
    assert_eq!(model.requests_answered(), 5);
}

#[tokio::test]
async fn text_and_arguments_stream_in_small_pieces_with_every_call_ended() {
    let model = ScriptedProvider::new(parse(SCRIPT).expect("script"));
    let got = events(model.stream(first_request("scripted"))).await;
    let texts: Vec<&str> = got
        .iter()
        .filter_map(|event| match event {
            ModelEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(texts.len() >= 4, "{texts:?}");
    assert!(texts.iter().all(|text| text.len() <= CHUNK_BYTES));
    let glob_deltas = got
        .iter()
        .filter(|event| matches!(event, ModelEvent::ToolCallDelta { id, .. } if id == "call_1"))
        .count();
    assert_eq!(
        glob_deltas,
        r#"{"pattern":"src/**/*.rs","limit":20}"#
            .len()
            .div_ceil(CHUNK_BYTES)
    );

    let shape: Vec<&str> = got
        .iter()
        .filter_map(|event| match event {
            ModelEvent::TextDelta(_) | ModelEvent::ToolCallDelta { .. } => None,
            ModelEvent::ToolCallStart { .. } => Some("start"),
            ModelEvent::ToolCallEnd { .. } => Some("end"),
            ModelEvent::Usage(_) => Some("usage"),
            ModelEvent::Finished { .. } => Some("finished"),
            ModelEvent::ReasoningDelta(_) | ModelEvent::ReasoningBlock(_) => Some("reasoning"),
        })
        .collect();
    assert_eq!(shape, ["start", "end", "start", "end", "usage", "finished"]);
}

#[tokio::test]
async fn a_chunk_delay_keeps_the_same_events() {
    let script =
        parse("chunk_delay_ms: 2\nturns:\n  - say: hello there, slowly\n").expect("script");
    assert_eq!(script.chunk_delay(), Duration::from_millis(2));
    let slow = ScriptedProvider::new(script.clone());
    let fast = ScriptedProvider::new(script.with_chunk_delay(Duration::ZERO));
    assert_eq!(
        events(slow.stream(first_request("scripted"))).await,
        events(fast.stream(first_request("scripted"))).await
    );
}

fn error_of(source: &str) -> String {
    parse(source).expect_err("a bad script").to_string()
}

#[test]
fn yaml_errors_name_the_file_and_line() {
    let message = error_of("turns:\n  - say: hi\n    calls: [\n");
    assert!(message.starts_with("demo.yaml:4:"), "{message}");

    let message =
        error_of("turns:\n  - say: hi\n    calls:\n      - tool: read\n        arg: {path: a}\n");
    assert!(message.starts_with("demo.yaml:5:"), "{message}");
    assert!(
        message.contains("unknown field `arg`, expected one of `tool`, `args`, `raw`"),
        "{message}"
    );

    let message = error_of(
        "turns:\n  - say: hi\n  - calls:\n      - tool: glob\n      - tool: read\n        args: {path: a}\n        raw: '{}'\n",
    );
    assert_eq!(
        message,
        "demo.yaml:5:9: turns[1].calls[1]: call of `read`: give `args` (a mapping) or `raw` \
         (argument text), not both"
    );

    let message = error_of("turns:\n  - calls:\n      - tool: read\n        args: [a, b]\n");
    assert_eq!(
        message,
        "demo.yaml:3:9: turns[0].calls[0]: call of `read`: `args` must be a mapping of argument \
         names to values (use `raw` for any other argument text)"
    );

    let message = error_of("turns:\n  - say: hi\n  - {}\n");
    assert_eq!(
        message,
        "demo.yaml:3:5: turns[1]: a turn needs `say` (text), `calls` (a list of calls) or both"
    );

    let message = error_of("turn:\n  - say: hi\n");
    assert!(
        message.starts_with("demo.yaml:1:1: unknown field `turn`"),
        "{message}"
    );
}

#[test]
fn a_missing_file_is_named() {
    let err = Script::load(Path::new("/nonexistent/demo.yaml")).unwrap_err();
    assert_eq!(err.file, Path::new("/nonexistent/demo.yaml"));
    assert!(
        err.to_string()
            .starts_with("/nonexistent/demo.yaml: cannot read the script"),
        "{err}"
    );
}

#[test]
fn the_documented_example_loads() {
    let doc = include_str!("../../SCRIPTED.md");
    let start = doc.find("```yaml\n").expect("a yaml example") + "```yaml\n".len();
    let end = start + doc[start..].find("```").expect("the example's end");
    let script = parse(&doc[start..end]).expect("the documented example");
    assert_eq!(script.turns().len(), 4);
    assert_eq!(script.chunk_delay(), Duration::from_millis(15));
    let cut = &script.turns()[3];
    assert_eq!(cut.think, "The file is long; I will write it in one call.");
    assert_eq!(cut.stop, Some(qilin_model::StopReason::MaxTokens));
    assert_eq!(script.turns()[1].calls[0].id, "call_3");
    assert_eq!(
        script.turns()[0].calls[1].arguments,
        r#"{"path":"src/main.rs","limit":40}"#
    );

    let shown = doc.find("```text\n").expect("an error example") + "```text\n".len();
    let shown_error = doc[shown..].lines().next().expect("a line");
    let actual = parse("turns:\n  - say: hi\n  - say: ok\n    calls:\n      - tool: read\n        args: {}\n      - tool: read\n        arg: {path: a}\n")
        .expect_err("bad")
        .to_string();
    assert_eq!(shown_error, actual);
}

#[tokio::test]
async fn a_turn_can_reason_first_and_name_its_stop_reason() {
    let script = parse(
        "turns:\n  - think: Write it all at once.\n    calls:\n      - tool: write\n        raw: '{\"path\": \"a.md\", \"content\": \"# A'\n    stop: max_tokens\n  - say: Sorry, no.\n    stop: refusal\n",
    )
    .expect("script");
    let model = ScriptedProvider::new(script);
    let got = events(model.stream(first_request("scripted"))).await;
    assert_eq!(
        got[..3],
        [
            ModelEvent::ReasoningDelta("Write it all".into()),
            ModelEvent::ReasoningDelta(" at once.".into()),
            ModelEvent::ReasoningBlock(qilin_model::Reasoning::Text {
                text: "Write it all at once.".into(),
                signature: None,
            }),
        ]
    );
    assert!(got.contains(&ModelEvent::ToolCallEnd {
        id: "call_1".into()
    }));
    assert_eq!(
        got.last(),
        Some(&ModelEvent::Finished {
            stop_reason: StopReason::MaxTokens
        })
    );
    let mut request = first_request("scripted");
    request
        .messages
        .push(qilin_model::Message::assistant("Writing.", Vec::new()));
    let refusal = response(model.stream(request)).await;
    assert_eq!(refusal.text, "Sorry, no.");
    assert_eq!(refusal.stop_reason, Some(StopReason::Refusal));
    let err = error_of("turns:\n  - say: hi\n    stop: done\n");
    assert!(
        err.contains("`stop: done` is not a stop reason; write one of end_turn, tool_use"),
        "{err}"
    );
}
