use crate::support::{
    FakeServer, PNG_BASE64, Reply, drain, events, first_request, fixture, next_request, pieces,
    quick_settings, response,
};
use qilin_model::{
    AnthropicConfig, AnthropicProvider, Message, ModelError, ModelEvent, ModelProvider, StopReason,
};
use qilin_protocol::Usage;
use serde_json::json;

fn provider(server: &FakeServer) -> AnthropicProvider {
    let mut config = AnthropicConfig::new(server.url(""), "sk-ant-test");
    config.http = quick_settings();
    AnthropicProvider::new(config).expect("provider")
}

fn delta(id: &str, text: &str) -> ModelEvent {
    ModelEvent::ToolCallDelta {
        id: id.into(),
        arguments_delta: text.into(),
    }
}

const READ_ID: &str = "toolu_01T1x1fJ34qAmk2tNTrN7Up6";
const GREP_ID: &str = "toolu_01Bv9qR5ZHfW8k3nDxYc2LmA";

#[tokio::test]
async fn text_and_tool_use_blocks_become_events_in_order() {
    let server = FakeServer::start(vec![Reply::sse(pieces(
        &fixture("anthropic_text_and_two_calls.sse"),
        29,
    ))])
    .await;
    let got = events(provider(&server).stream(first_request("claude-sonnet-4-5"))).await;
    let expected = vec![
        ModelEvent::TextDelta("I'll read".into()),
        ModelEvent::TextDelta(" the file.".into()),
        ModelEvent::ToolCallStart {
            id: READ_ID.into(),
            name: "read".into(),
        },
        delta(READ_ID, "{\"path\": \"sr"),
        delta(READ_ID, "c/main.rs\"}"),
        ModelEvent::ToolCallEnd { id: READ_ID.into() },
        ModelEvent::ToolCallStart {
            id: GREP_ID.into(),
            name: "grep".into(),
        },
        delta(GREP_ID, "{\"pattern\":"),
        delta(GREP_ID, " \"TODO\"}"),
        ModelEvent::ToolCallEnd { id: GREP_ID.into() },
        ModelEvent::Usage(Usage {
            input_tokens: 472 + 1830,
            output_tokens: 89,
            cache_read_tokens: 1830,
            cache_write_tokens: 0,
        }),
        ModelEvent::Finished {
            stop_reason: StopReason::ToolUse,
        },
    ];
    assert_eq!(got, expected);
}

#[tokio::test]
async fn the_request_marks_the_stable_prefix_for_the_cache() {
    let server =
        FakeServer::start(vec![Reply::sse(vec![fixture("anthropic_final_text.sse")])]).await;
    let answer = response(provider(&server).stream(first_request("claude-sonnet-4-5"))).await;
    assert_eq!(answer.text, "Both files are fine.");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        request.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "stream": true,
            "system": [{
                "type": "text",
                "text": "You are Qilin, a careful coding agent.",
                "cache_control": {"type": "ephemeral"},
            }],
            "tools": [
                {
                    "name": "read",
                    "description": "Read a file.\n\nUse read before editing.",
                    "input_schema": {
                        "type": "object",
                        "properties": {"path": {"type": "string", "description": "The file to read."}},
                        "required": ["path"],
                    },
                },
                {
                    "name": "grep",
                    "description": "Search file contents with a regular expression.",
                    "input_schema": {
                        "type": "object",
                        "properties": {"pattern": {"type": "string", "description": "The regex."}},
                        "required": ["pattern"],
                    },
                    "cache_control": {"type": "ephemeral"},
                },
            ],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Check src/main.rs for TODOs."}]},
            ],
        })
    );
}

#[tokio::test]
async fn the_next_request_answers_every_call_under_its_id_with_the_same_prefix() {
    let server = FakeServer::start(vec![
        Reply::sse(pieces(&fixture("anthropic_text_and_two_calls.sse"), 100)),
        Reply::sse(pieces(&fixture("anthropic_final_text.sse"), 100)),
    ])
    .await;
    let model = provider(&server);
    let first = first_request("claude-sonnet-4-5");
    let answer = response(model.stream(first.clone())).await;
    let mut second = next_request(&first, &answer);
    second
        .messages
        .push(Message::user("Also say which is longer."));
    let last = response(model.stream(second)).await;
    assert_eq!(last.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(last.usage.cache_read_tokens, 2302);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let (one, two) = (&requests[0].body, &requests[1].body);
    assert_eq!(one["system"], two["system"], "the system prompt is stable");
    assert_eq!(one["tools"], two["tools"], "the tools list is stable");
    assert_eq!(one["messages"][0], two["messages"][0]);
    assert_eq!(
        two["messages"].as_array().unwrap()[1..],
        [
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "I'll read the file."},
                {"type": "tool_use", "id": READ_ID, "name": "read", "input": {"path": "src/main.rs"}},
                {"type": "tool_use", "id": GREP_ID, "name": "grep", "input": {"pattern": "TODO"}},
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": READ_ID, "content": [
                    {"type": "text", "text": "fn main() {}"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}},
                ]},
                {"type": "tool_result", "tool_use_id": GREP_ID, "is_error": true,
                 "content": [{"type": "text", "text": "INVALID_ARGUMENTS"}]},
                {"type": "text", "text": "Also say which is longer."},
            ]}),
        ]
    );
}

#[tokio::test]
async fn arguments_that_are_not_a_json_object_go_back_under_raw_arguments() {
    let server =
        FakeServer::start(vec![Reply::sse(vec![fixture("anthropic_final_text.sse")])]).await;
    let mut request = first_request("claude-sonnet-4-5");
    request.messages.push(Message::assistant(
        "",
        vec![
            qilin_model::AssistantToolCall {
                id: "toolu_1".into(),
                name: "read".into(),
                arguments: "{\"path\": ".into(),
            },
            qilin_model::AssistantToolCall {
                id: "toolu_2".into(),
                name: "grep".into(),
                arguments: String::new(),
            },
        ],
    ));
    response(provider(&server).stream(request)).await;
    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "tool_use", "id": "toolu_1", "name": "read",
             "input": {"raw_arguments": "{\"path\": "}},
            {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {}},
        ])
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_ends_the_answer_with_its_usage_and_the_providers_message() {
    let stream = fixture("anthropic_final_text.sse").replace(
        "event: content_block_stop",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\nevent: content_block_stop",
    );
    let server = FakeServer::start(vec![Reply::sse(vec![stream])]).await;
    let items = drain(provider(&server).stream(first_request("claude-sonnet-4-5"))).await;
    assert_eq!(
        items[0],
        Ok(ModelEvent::TextDelta("Both files are fine.".into()))
    );
    assert_eq!(
        items[1..],
        [
            Ok(ModelEvent::Usage(Usage {
                input_tokens: 96 + 2302,
                output_tokens: 1,
                cache_read_tokens: 2302,
                cache_write_tokens: 0,
            })),
            Err(ModelError::Provider {
                provider: "Anthropic",
                kind: "overloaded_error".into(),
                message: "Overloaded".into(),
            })
        ]
    );
}

#[test]
fn the_key_is_required() {
    let err = AnthropicConfig::from_lookup(|_| None).unwrap_err();
    assert!(
        err.to_string().contains("ANTHROPIC_API_KEY is not set"),
        "{err}"
    );
    let config = AnthropicConfig::from_lookup(|name| match name {
        "ANTHROPIC_API_KEY" => Some("sk-ant".into()),
        "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:9/".into()),
        _ => None,
    })
    .unwrap();
    assert_eq!(config.base_url, "http://127.0.0.1:9/");
    assert_eq!(config.default_max_tokens, 8192);
}

#[tokio::test]
async fn thinking_blocks_become_reasoning_and_unknown_event_types_are_skipped() {
    let thinking = [
        r#"event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants a summary."}}"#,
        r#"event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}"#,
        r#"event: content_block_stop
data: {"type":"content_block_stop","index":0}"#,
        r#"event: future_event
data: {"type":"future_event","detail":{"anything":true}}"#,
    ]
    .map(|event| format!("{event}\n\n"))
    .concat();
    let stream = fixture("anthropic_final_text.sse")
        .replacen(
            "event: content_block_start",
            &format!("{thinking}event: content_block_start"),
            1,
        )
        .replace(
            "\"index\":0,\"content_block\":{\"type\":\"text\"",
            "\"index\":1,\"content_block\":{\"type\":\"text\"",
        )
        .replace(
            "\"index\":0,\"delta\":{\"type\":\"text_delta\"",
            "\"index\":1,\"delta\":{\"type\":\"text_delta\"",
        )
        .replace(
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta",
            "data: {\"type\":\"content_block_stop\",\"index\":1}\n\nevent: message_delta",
        );
    let server = FakeServer::start(vec![Reply::sse(pieces(&stream, 45))]).await;
    let got = events(provider(&server).stream(first_request("claude-sonnet-4-5"))).await;
    assert_eq!(
        got,
        vec![
            ModelEvent::ReasoningDelta("The user wants a summary.".into()),
            ModelEvent::ReasoningBlock(qilin_model::Reasoning::Text {
                text: "The user wants a summary.".into(),
                signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3h".into()),
            }),
            ModelEvent::TextDelta("Both files are fine.".into()),
            ModelEvent::Usage(Usage {
                input_tokens: 96 + 2302,
                output_tokens: 7,
                cache_read_tokens: 2302,
                cache_write_tokens: 0,
            }),
            ModelEvent::Finished {
                stop_reason: StopReason::EndTurn
            },
        ]
    );
}
