use crate::support::{
    FakeServer, Reply, events, first_request, fixture, next_request, pieces, quick_settings,
    response,
};
use qilin_model::{
    AssistantToolCall, ModelEvent, ModelProvider, OpenAiConfig, OpenAiProvider, StopReason,
};
use qilin_protocol::Usage;
use serde_json::json;

fn provider(server: &FakeServer) -> OpenAiProvider {
    let mut config = OpenAiConfig::new(server.url("/v1/"), Some("sk-test".into()));
    config.http = quick_settings();
    OpenAiProvider::new(config).expect("provider")
}

fn delta(id: &str, text: &str) -> ModelEvent {
    ModelEvent::ToolCallDelta {
        id: id.into(),
        arguments_delta: text.into(),
    }
}

const READ_ID: &str = "call_Xq1fGZ9pTk3LMwHdBe2VnR7c";
const GREP_ID: &str = "call_M2bW8cYtN4rLq0ZpXe6KsJ1d";

#[tokio::test]
async fn text_and_two_streamed_calls_become_events_in_order() {
    let server = FakeServer::start(vec![Reply::sse(pieces(
        &fixture("openai_text_and_two_calls.sse"),
        37,
    ))])
    .await;
    let got = events(provider(&server).stream(first_request("gpt-4.1"))).await;
    let expected = vec![
        ModelEvent::TextDelta("Let me".into()),
        ModelEvent::TextDelta(" look at both.".into()),
        ModelEvent::ToolCallStart {
            id: READ_ID.into(),
            name: "read".into(),
        },
        delta(READ_ID, "{\"path\""),
        delta(READ_ID, ": \"src/main.rs\"}"),
        ModelEvent::ToolCallStart {
            id: GREP_ID.into(),
            name: "grep".into(),
        },
        delta(GREP_ID, "{\"pattern\": \"TO"),
        delta(GREP_ID, "DO\"}"),
        ModelEvent::ToolCallEnd { id: READ_ID.into() },
        ModelEvent::ToolCallEnd { id: GREP_ID.into() },
        ModelEvent::Usage(Usage {
            input_tokens: 412,
            output_tokens: 58,
            cache_read_tokens: 256,
            cache_write_tokens: 0,
        }),
        ModelEvent::Finished {
            stop_reason: StopReason::ToolUse,
        },
    ];
    assert_eq!(got, expected);
}

#[tokio::test]
async fn the_request_carries_the_prompt_tools_and_stream_options() {
    let server = FakeServer::start(vec![Reply::sse(vec![fixture("openai_final_text.sse")])]).await;
    response(provider(&server).stream(first_request("gpt-4.1"))).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        request.body,
        json!({
            "model": "gpt-4.1",
            "messages": [
                {"role": "system", "content": "You are Qilin, a careful coding agent."},
                {"role": "user", "content": "Check src/main.rs for TODOs."},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [
                {"type": "function", "function": {
                    "name": "read",
                    "description": "Read a file.\n\nUse read before editing.",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string", "description": "The file to read."}},
                        "required": ["path"],
                    },
                }},
                {"type": "function", "function": {
                    "name": "grep",
                    "description": "Search file contents with a regular expression.",
                    "parameters": {
                        "type": "object",
                        "properties": {"pattern": {"type": "string", "description": "The regex."}},
                        "required": ["pattern"],
                    },
                }},
            ],
            "max_tokens": 1024,
        })
    );
}

#[tokio::test]
async fn the_next_request_answers_every_call_under_its_id_with_the_same_prefix() {
    let server = FakeServer::start(vec![
        Reply::sse(pieces(&fixture("openai_text_and_two_calls.sse"), 64)),
        Reply::sse(pieces(&fixture("openai_final_text.sse"), 64)),
    ])
    .await;
    let model = provider(&server);
    let first = first_request("gpt-4.1");
    let answer = response(model.stream(first.clone())).await;
    assert_eq!(
        answer.tool_calls,
        vec![
            AssistantToolCall {
                id: READ_ID.into(),
                name: "read".into(),
                arguments: r#"{"path": "src/main.rs"}"#.into(),
            },
            AssistantToolCall {
                id: GREP_ID.into(),
                name: "grep".into(),
                arguments: r#"{"pattern": "TODO"}"#.into(),
            },
        ]
    );
    let second = next_request(&first, &answer);
    let last = response(model.stream(second)).await;
    assert_eq!(last.text, "Both files are fine.");
    assert_eq!(last.stop_reason, Some(StopReason::EndTurn));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let (one, two) = (&requests[0].body, &requests[1].body);
    assert_eq!(one["tools"], two["tools"], "the tools list is stable");
    assert_eq!(
        one["messages"].as_array().unwrap()[..2],
        two["messages"].as_array().unwrap()[..2],
        "the prompt prefix is stable"
    );
    assert_eq!(
        two["messages"].as_array().unwrap()[2..],
        [
            json!({
                "role": "assistant",
                "content": "Let me look at both.",
                "tool_calls": [
                    {"id": READ_ID, "type": "function",
                     "function": {"name": "read", "arguments": "{\"path\": \"src/main.rs\"}"}},
                    {"id": GREP_ID, "type": "function",
                     "function": {"name": "grep", "arguments": "{\"pattern\": \"TODO\"}"}},
                ],
            }),
            json!({"role": "tool", "tool_call_id": READ_ID,
                   "content": "fn main() {}\n\n[image: image/png, 70 bytes]"}),
            json!({"role": "tool", "tool_call_id": GREP_ID, "content": "Error: INVALID_ARGUMENTS"}),
        ]
    );
}

/// llama.cpp- and Ollama-style streams: a whole call in one chunk, no `index` on it, the finish
/// reason and usage in the same chunk, no id on the second call.
#[tokio::test]
async fn compatible_servers_with_whole_calls_and_missing_fields_are_read() {
    let stream = [
        r#"data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1746551429,"model":"qwen3:8b","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}}]},"finish_reason":null}]}"#,
        r#"data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1746551429,"model":"qwen3:8b","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"x\"}"}}]},"finish_reason":null}]}"#,
        r#"data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1746551430,"model":"qwen3:8b","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":90,"completion_tokens":20,"total_tokens":110}}"#,
        "data: [DONE]",
    ]
    .map(|line| format!("{line}\n\n"))
    .concat();
    let server = FakeServer::start(vec![Reply::sse(pieces(&stream, 50))]).await;
    let got = events(provider(&server).stream(first_request("qwen3:8b"))).await;
    let second_id = match &got[2] {
        ModelEvent::ToolCallStart { id, name } if name == "grep" => id.clone(),
        other => panic!("expected the grep call to start third, got {other:?}"),
    };
    assert!(second_id.starts_with("call_") && second_id != "call_a");
    let expected = vec![
        ModelEvent::ToolCallStart {
            id: "call_a".into(),
            name: "read".into(),
        },
        delta("call_a", "{\"path\":\"a.txt\"}"),
        ModelEvent::ToolCallStart {
            id: second_id.clone(),
            name: "grep".into(),
        },
        delta(&second_id, "{\"pattern\":\"x\"}"),
        ModelEvent::ToolCallEnd {
            id: "call_a".into(),
        },
        ModelEvent::ToolCallEnd {
            id: second_id.clone(),
        },
        ModelEvent::Usage(Usage {
            input_tokens: 90,
            output_tokens: 20,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        }),
        ModelEvent::Finished {
            stop_reason: StopReason::ToolUse,
        },
    ];
    assert_eq!(got, expected);
}

#[test]
fn the_environment_configures_the_server_and_key() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    };
    let local =
        OpenAiConfig::from_lookup(vars(&[("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")]))
            .expect("a local server needs no key");
    assert_eq!(local.base_url, "http://127.0.0.1:11434/v1");
    assert_eq!(local.api_key, None);

    let official = OpenAiConfig::from_lookup(vars(&[("OPENAI_API_KEY", "sk-1")])).unwrap();
    assert_eq!(official.base_url, OpenAiConfig::DEFAULT_BASE_URL);
    assert_eq!(official.api_key.as_deref(), Some("sk-1"));

    let err = OpenAiConfig::from_lookup(vars(&[("OPENAI_API_KEY", "  ")])).unwrap_err();
    assert!(
        err.to_string().contains("OPENAI_API_KEY is not set"),
        "{err}"
    );

    let err = OpenAiProvider::new(OpenAiConfig::new("127.0.0.1:8080/v1", None)).unwrap_err();
    assert!(
        err.to_string().contains("not an http:// or https:// URL"),
        "{err}"
    );
}
