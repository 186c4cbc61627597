//! The loop against local servers speaking each provider's streaming format, asserting on the
//! next request the agent sends.

#[path = "support/server.rs"]
mod server;

use qilin_agent::{Agent, AgentPrompt, LoopSettings};
use qilin_model::{
    AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiConfig, OpenAiProvider,
};
use qilin_protocol::FinishReason;
use qilin_test_tools::{Echo, Secret};
use qilin_tool::{Executor, Session, ToolRegistry};
use serde_json::{Value, json};
use server::{serve, sse};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

async fn run_two_steps(provider: Arc<dyn ModelProvider>) -> FinishReason {
    let mut registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    registry.register(Secret).unwrap();
    let tools = registry.tools_list(["echo", "secret"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = Arc::new(Session::new("s", dir.path(), dir.path().join("data")));
    let agent = Agent::new(
        provider,
        AgentPrompt {
            system: "You are a careful agent.".into(),
            tools,
        },
        Executor::new(Arc::new(registry), session),
        LoopSettings {
            model: "test-model".into(),
            max_steps: 5,
            max_tokens: Some(1024),
            reasoning: None,
        },
    );
    agent
        .run_turn("Echo a and b.", CancellationToken::new())
        .await
        .reason
}

/// Two requests whose system prompt, tools (with no code-mode-only tool, read by
/// `name_pointer`) and first messages are the same; returns both message lists.
fn assert_stable_prefix<'a>(
    requests: &'a [Value],
    name_pointer: &str,
) -> (&'a [Value], &'a [Value]) {
    assert_eq!(requests.len(), 2);
    let (first, second) = (&requests[0], &requests[1]);
    assert_eq!(
        tool_names(&second["tools"], name_pointer),
        ["echo"],
        "no code-mode-only tool"
    );
    assert_eq!(first["system"], second["system"]);
    assert_eq!(first["tools"], second["tools"]);
    let first_messages = first["messages"].as_array().unwrap();
    let second_messages = second["messages"].as_array().unwrap();
    assert_eq!(
        first_messages[..],
        second_messages[..first_messages.len()],
        "prefix unchanged"
    );
    (first_messages, second_messages)
}

fn tool_names(tools: &Value, pointer: &str) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool.pointer(pointer).unwrap().as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn openai_compatible_every_call_is_answered_under_its_id_and_the_prefix_is_stable() {
    let step_one = sse(&[
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Echoing."},"finish_reason":null}]}"#,
        ),
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"echo","arguments":""}}]},"finish_reason":null}]}"#,
        ),
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"text\":"}}]},"finish_reason":null}]}"#,
        ),
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"a\"}"}}]},"finish_reason":null}]}"#,
        ),
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"echo","arguments":"{\"text\": \"b\"}"}}]},"finish_reason":null}]}"#,
        ),
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ),
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}"#,
        ),
        (None, "[DONE]"),
    ]);
    let step_two = sse(&[
        (
            None,
            r#"{"id":"y","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Both echoed."},"finish_reason":null}]}"#,
        ),
        (
            None,
            r#"{"id":"y","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ),
        (None, "[DONE]"),
    ]);
    let server = serve(vec![step_one, step_two]).await;
    let provider = OpenAiProvider::new(OpenAiConfig::new(
        format!("{}/v1", server.base_url),
        Some("k".into()),
    ))
    .unwrap();
    assert_eq!(
        run_two_steps(Arc::new(provider)).await,
        FinishReason::Completed
    );

    let requests = server.requests.lock().unwrap().clone();
    let (first_messages, second_messages) = assert_stable_prefix(&requests, "/function/name");
    let assistant = &second_messages[first_messages.len()];
    assert_eq!(assistant["role"], "assistant");
    let ids: Vec<&str> = assistant["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_a", "call_b"]);
    let answers: Vec<(&str, &str)> = second_messages[first_messages.len() + 1..]
        .iter()
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap(),
                m["content"].as_str().unwrap(),
            )
        })
        .collect();
    let echoed = |text: &str| {
        serde_json::to_string_pretty(&json!({"text": text, "length": text.chars().count()}))
            .unwrap()
    };
    assert_eq!(
        answers,
        [
            ("call_a", echoed("a").as_str()),
            ("call_b", echoed("b").as_str())
        ]
    );
}

#[tokio::test]
async fn anthropic_every_call_is_answered_under_its_id_and_the_prefix_is_stable() {
    let step_one = sse(&[
        (
            Some("message_start"),
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":100,"output_tokens":1}}}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"echo","input":{}}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"text\": "}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"a\"}"}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_b","name":"echo","input":{}}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"text\": \"b\"}"}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            Some("message_delta"),
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}}"#,
        ),
        (Some("message_stop"), r#"{"type":"message_stop"}"#),
    ]);
    let step_two = sse(&[
        (
            Some("message_start"),
            r#"{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":160,"output_tokens":1}}}"#,
        ),
        (
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            Some("content_block_delta"),
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Both echoed."}}"#,
        ),
        (
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            Some("message_delta"),
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}"#,
        ),
        (Some("message_stop"), r#"{"type":"message_stop"}"#),
    ]);
    let server = serve(vec![step_one, step_two]).await;
    let provider =
        AnthropicProvider::new(AnthropicConfig::new(server.base_url.clone(), "k")).unwrap();
    assert_eq!(
        run_two_steps(Arc::new(provider)).await,
        FinishReason::Completed
    );

    let requests = server.requests.lock().unwrap().clone();
    let (first_messages, second_messages) = assert_stable_prefix(&requests, "/name");
    let second = &requests[1];
    let assistant = &second_messages[first_messages.len()];
    let used: Vec<&str> = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(used, ["toolu_a", "toolu_b"]);
    let results = &second_messages[first_messages.len() + 1];
    assert_eq!(results["role"], "user");
    let answered: Vec<&str> = results["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(answered, ["toolu_a", "toolu_b"]);
    assert!(
        second["system"]
            .to_string()
            .contains("You are a careful agent.")
    );
}

#[tokio::test]
async fn openai_compatible_arguments_that_are_not_json_come_back_as_an_error_result() {
    let step_one = sse(&[
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_bad","type":"function","function":{"name":"echo","arguments":"{\"text\": \"unterminated"}}]},"finish_reason":null}]}"#,
        ),
        (
            None,
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ),
        (None, "[DONE]"),
    ]);
    let step_two = sse(&[
        (
            None,
            r#"{"id":"y","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Sorry, retrying later."},"finish_reason":"stop"}]}"#,
        ),
        (None, "[DONE]"),
    ]);
    let server = serve(vec![step_one, step_two]).await;
    let provider =
        OpenAiProvider::new(OpenAiConfig::new(format!("{}/v1", server.base_url), None)).unwrap();
    assert_eq!(
        run_two_steps(Arc::new(provider)).await,
        FinishReason::Completed
    );

    let requests = server.requests.lock().unwrap().clone();
    let messages = requests[1]["messages"].as_array().unwrap();
    let assistant = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"], "{\"text\": \"unterminated",
        "the model's own text goes back as it was"
    );
    let answer = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(answer["tool_call_id"], "call_bad");
    let content = answer["content"].as_str().unwrap();
    assert!(content.contains("not valid JSON"), "{content}");
}

/// An OpenAI stream: `content` as text (if any), then one `echo` call with exactly
/// `arguments` (if any), then `finish_reason`.
fn openai_answer(content: &str, arguments: Option<&str>, finish_reason: &str) -> String {
    let mut chunks = Vec::new();
    if !content.is_empty() {
        chunks.push(json!({"id":"s","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":content},"finish_reason":null}]}).to_string());
    }
    if let Some(arguments) = arguments {
        chunks.push(json!({"id":"s","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_cut","type":"function","function":{"name":"echo","arguments":arguments}}]},"finish_reason":null}]}).to_string());
    }
    chunks.push(json!({"id":"s","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":finish_reason}]}).to_string());
    chunks.push("[DONE]".to_string());
    let events: Vec<(Option<&str>, &str)> = chunks.iter().map(|c| (None, c.as_str())).collect();
    sse(&events)
}

async fn openai_turn(answers: Vec<String>) -> (qilin_agent::TurnSummary, Vec<Value>) {
    let server = serve(answers).await;
    let provider = OpenAiProvider::new(OpenAiConfig::new(
        format!("{}/v1", server.base_url),
        Some("k".into()),
    ))
    .unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    let tools = registry.tools_list(["echo"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = Arc::new(Session::new("s", dir.path(), dir.path().join("data")));
    let agent = Agent::new(
        Arc::new(provider),
        AgentPrompt {
            system: "Be brief.".into(),
            tools,
        },
        Executor::new(Arc::new(registry), session),
        LoopSettings {
            model: "m".into(),
            max_steps: 5,
            max_tokens: Some(64),
            reasoning: None,
        },
    );
    let summary = agent.run_turn("Go.", CancellationToken::new()).await;
    let requests = server.requests.lock().unwrap().clone();
    (summary, requests)
}

#[tokio::test]
async fn a_call_cut_by_the_token_limit_is_told_as_cut_and_the_turn_goes_on() {
    let (summary, requests) = openai_turn(vec![
        openai_answer("Writing.", Some(r#"{"text": "a very long te"#), "length"),
        openai_answer("Sent a shorter one.", None, "stop"),
    ])
    .await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let messages = requests[1]["messages"].as_array().unwrap();
    let told = messages.iter().find(|m| m["role"] == "tool").unwrap()["content"]
        .as_str()
        .unwrap();
    assert!(
        told.contains("cut off by the model's output token limit"),
        "{told}"
    );
    assert!(!told.contains("not valid JSON"), "{told}");
}

#[tokio::test]
async fn an_answer_cut_by_the_token_limit_ends_the_turn_as_such() {
    let (summary, _) = openai_turn(vec![openai_answer("The answer is", None, "length")]).await;
    assert_eq!(summary.reason, FinishReason::MaxTokens);
    assert!(summary.error.unwrap().contains("token limit"));
}

#[tokio::test]
async fn a_filtered_answer_ends_the_turn_as_refused() {
    let (summary, _) = openai_turn(vec![openai_answer("I can't", None, "content_filter")]).await;
    assert_eq!(summary.reason, FinishReason::Refused);
}
