//! The compatibility suite: streams written from each provider's documented wire format
//! (OpenAI, Anthropic, and the OpenAI-compatible servers vLLM, Ollama, llama.cpp, DeepSeek,
//! Mistral, Groq and xAI), replayed at the HTTP boundary, in pieces that cut events apart.
//! Each test names the behaviour a user of that provider would notice.

use crate::support::{
    FakeServer, Reply, drain, events, first_request, fixture, next_request, pieces, quick_settings,
    response,
};
use qilin_model::{
    AnthropicConfig, AnthropicProvider, AssistantToolCall, Message, ModelError, ModelEvent,
    ModelProvider, ModelRequest, OpenAiConfig, OpenAiProvider, Reasoning, ReasoningEffort,
    ReasoningSetting, StopReason,
};
use qilin_protocol::Usage;
use serde_json::{Value, json};

fn openai(server: &FakeServer) -> OpenAiProvider {
    let mut config = OpenAiConfig::new(server.url("/v1"), None);
    config.http = quick_settings();
    OpenAiProvider::new(config).expect("provider")
}

fn anthropic(server: &FakeServer) -> AnthropicProvider {
    let mut config = AnthropicConfig::new(server.url(""), "sk-ant-test");
    config.http = quick_settings();
    AnthropicProvider::new(config).expect("provider")
}

/// A recorded stream of the compatibility suite.
fn stream(name: &str) -> String {
    fixture(&format!("compat/{name}"))
}

/// A server replaying `names` in order, each cut into pieces of `size` bytes.
async fn replaying(names: &[&str], size: usize) -> FakeServer {
    let replies = names
        .iter()
        .map(|name| Reply::sse(pieces(&stream(name), size)))
        .collect();
    FakeServer::start(replies).await
}

fn usage(input_tokens: u64, output_tokens: u64, cache_read_tokens: u64) -> ModelEvent {
    ModelEvent::Usage(Usage {
        input_tokens,
        output_tokens,
        cache_read_tokens,
        cache_write_tokens: 0,
    })
}

fn finished(stop_reason: StopReason) -> ModelEvent {
    ModelEvent::Finished { stop_reason }
}

fn text(piece: &str) -> ModelEvent {
    ModelEvent::TextDelta(piece.into())
}

fn thought(piece: &str) -> ModelEvent {
    ModelEvent::ReasoningDelta(piece.into())
}

fn start(id: &str, name: &str) -> ModelEvent {
    ModelEvent::ToolCallStart {
        id: id.into(),
        name: name.into(),
    }
}

fn delta(id: &str, piece: &str) -> ModelEvent {
    ModelEvent::ToolCallDelta {
        id: id.into(),
        arguments_delta: piece.into(),
    }
}

fn end(id: &str) -> ModelEvent {
    ModelEvent::ToolCallEnd { id: id.into() }
}

fn unsigned(text: &str) -> Reasoning {
    Reasoning::Text {
        text: text.into(),
        signature: None,
    }
}

/// The assistant messages of a recorded request body.
fn assistant_messages(body: &Value) -> Vec<&Value> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|message| message["role"] == "assistant")
        .collect()
}

// ---- OpenAI ----

#[tokio::test]
async fn openai_a_refusal_is_the_answer_and_the_stop_reason_says_refusal() {
    let server = replaying(&["openai_refusal.sse"], 41).await;
    let got = events(openai(&server).stream(first_request("gpt-4o"))).await;
    assert_eq!(
        got,
        [
            text("I can't help"),
            text(" with writing that"),
            text(" malware."),
            usage(188, 11, 0),
            finished(StopReason::Refusal),
        ]
    );
}

#[tokio::test]
async fn openai_a_content_filter_stop_is_told_apart() {
    let server = replaying(&["openai_content_filter.sse"], 53).await;
    let answer = response(openai(&server).stream(first_request("gpt-4o"))).await;
    assert_eq!(answer.text, "Here is the scene you asked for:");
    assert_eq!(answer.stop_reason, Some(StopReason::ContentFilter));
}

#[tokio::test]
async fn openai_a_call_cut_by_the_token_limit_ends_and_the_stop_reason_says_max_tokens() {
    let server = replaying(&["openai_length_cut_call.sse"], 37).await;
    let got = events(openai(&server).stream(first_request("gpt-4.1"))).await;
    let id = "call_Lw8Tq2PzXr5Nm3Vb7Ck1Hd9J";
    assert_eq!(
        got,
        [
            start(id, "write"),
            delta(
                id,
                "{\"path\": \"docs/CHANGES.md\", \"content\": \"# Changes\\n\\n"
            ),
            delta(id, "## 2.4.0\\n\\n- The importer reads"),
            end(id),
            usage(1320, 64, 1024),
            finished(StopReason::MaxTokens),
        ]
    );
}

#[tokio::test]
async fn openai_a_reasoning_setting_is_sent_as_reasoning_effort() {
    let server = FakeServer::start(vec![
        Reply::sse(vec![fixture("openai_final_text.sse")]),
        Reply::sse(vec![fixture("openai_final_text.sse")]),
        Reply::sse(vec![fixture("openai_final_text.sse")]),
    ])
    .await;
    let model = openai(&server);
    for setting in [
        Some(ReasoningSetting::Effort(ReasoningEffort::Low)),
        Some(ReasoningSetting::BudgetTokens(20_000)),
        None,
    ] {
        let mut request = first_request("o4-mini");
        request.reasoning = setting;
        response(model.stream(request)).await;
    }
    let sent: Vec<Value> = server
        .requests()
        .iter()
        .map(|request| request.body["reasoning_effort"].clone())
        .collect();
    assert_eq!(sent, [json!("low"), json!("high"), Value::Null]);
}

#[tokio::test]
async fn openai_unknown_events_chunks_and_content_parts_are_skipped() {
    let ordinary = fixture("openai_final_text.sse");
    let first_chunk = ordinary.find("\n\n").expect("a chunk") + 2;
    let odd = [
        // An SSE event of a kind the chunk stream does not define, with data that is not JSON.
        "event: keepalive\ndata: still working\n\n",
        // A chunk with no choices and no usage (Azure sends its filter results this way).
        r#"data: {"id":"","object":"","created":0,"model":"","choices":[],"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}"#,
        "\n\n",
        // A content part of a kind Qilin does not read, and content of an unknown type.
        r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":[{"type":"image_url","image_url":{"url":"data:,"}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":{"kind":"future"},"audio":{"id":"a"}},"finish_reason":null}]}"#,
        "\n\n",
    ]
    .concat();
    let whole = format!(
        "{}{odd}{}",
        &ordinary[..first_chunk],
        &ordinary[first_chunk..]
    );
    let server = FakeServer::start(vec![Reply::sse(pieces(&whole, 29))]).await;
    let answer = response(openai(&server).stream(first_request("gpt-4.1"))).await;
    assert_eq!(answer.text, "Both files are fine.");
    assert_eq!(answer.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(answer.usage.input_tokens, 655);
}

// ---- DeepSeek ----

#[tokio::test]
async fn deepseek_reasoning_streams_and_goes_back_in_every_turn_that_called_tools() {
    let server = replaying(
        &[
            "deepseek_thinking_tool_call.sse",
            "deepseek_final_answer.sse",
            "deepseek_final_answer.sse",
        ],
        47,
    )
    .await;
    let model = openai(&server);
    let first = first_request("deepseek-chat");
    let got = events(model.stream(first.clone())).await;
    let id = "call_00_kQ3vX8mN2pR7tY1wZ5cB9dF4";
    let reasoning = "The user wants the TODO count. I should grep for it first.";
    assert_eq!(
        got,
        [
            thought("The user wants the TODO count."),
            thought(" I should grep for it first."),
            ModelEvent::ReasoningBlock(unsigned(reasoning)),
            start(id, "grep"),
            delta(id, "{\"pattern\":"),
            delta(id, " \"TODO\"}"),
            end(id),
            usage(733, 41, 640),
            finished(StopReason::ToolUse),
        ]
    );

    let mut answer = qilin_model::ModelResponse::default();
    got.iter().for_each(|event| answer.apply(event));
    let second = next_request(&first, &answer);
    let last = response(model.stream(second.clone())).await;
    assert_eq!(
        last.text,
        "There are three TODO comments, all in src/main.rs."
    );
    assert_eq!(last.reasoning_text, "Three hits, all in one file.");
    assert_eq!(last.usage.cache_read_tokens, 768, "prompt_cache_hit_tokens");

    // Later turns: the answer closing the turn that called tools goes back with its
    // reasoning too; a turn without calls goes back without it.
    let mut third = second.clone();
    third.messages.push(last.to_message());
    third.messages.push(Message::user("Thanks. Is that a lot?"));
    third.messages.push(Message::assistant_with_reasoning(
        "Not for a file that size.",
        Vec::new(),
        vec![unsigned("Three is few.")],
    ));
    third.messages.push(Message::user("Any FIXMEs?"));
    response(model.stream(third)).await;

    let requests = server.requests();
    let two = assistant_messages(&requests[1].body);
    assert_eq!(
        *two[0],
        json!({
            "role": "assistant",
            "content": Value::Null,
            "reasoning_content": reasoning,
            "tool_calls": [{"id": id, "type": "function",
                            "function": {"name": "grep", "arguments": "{\"pattern\": \"TODO\"}"}}],
        })
    );
    let three = assistant_messages(&requests[2].body);
    assert_eq!(three[0]["reasoning_content"], reasoning);
    assert_eq!(
        *three[1],
        json!({"role": "assistant", "content": "There are three TODO comments, all in src/main.rs.",
               "reasoning_content": "Three hits, all in one file."})
    );
    assert_eq!(
        *three[2],
        json!({"role": "assistant", "content": "Not for a file that size."})
    );
}

// ---- Mistral ----

#[tokio::test]
async fn mistral_list_valued_content_streams_its_text_and_thinking_parts() {
    let server = replaying(&["mistral_magistral_thinking.sse"], 33).await;
    let got = events(openai(&server).stream(first_request("magistral-medium-2509"))).await;
    assert_eq!(
        got,
        [
            thought("The file has a main function"),
            thought(" and nothing else, so"),
            thought(" there is nothing to fix."),
            text("src/main.rs only"),
            text(" defines `main`;"),
            text(" nothing needs fixing."),
            usage(96, 75, 0),
            finished(StopReason::EndTurn),
        ]
    );
}

// ---- vLLM ----

#[tokio::test]
async fn vllm_the_reasoning_field_is_shown_but_never_sent_back() {
    let server = replaying(
        &["vllm_reasoning_tool_call.sse", "deepseek_final_answer.sse"],
        61,
    )
    .await;
    let model = openai(&server);
    let first = first_request("Qwen/Qwen3-8B");
    let answer = response(model.stream(first.clone())).await;
    assert_eq!(answer.reasoning_text, "I need the file before answering.");
    assert!(answer.reasoning.is_empty(), "{:?}", answer.reasoning);
    assert_eq!(
        answer.tool_calls,
        [AssistantToolCall {
            id: "chatcmpl-tool-5e1b9c7d02a34f8e".into(),
            name: "read".into(),
            arguments: "{\"path\": \"src/main.rs\"}".into(),
        }]
    );
    assert_eq!(
        answer.usage.output_tokens, 21,
        "the last of the usage stats"
    );
    assert_eq!(answer.stop_reason, Some(StopReason::ToolUse));
    response(model.stream(next_request(&first, &answer))).await;
    let sent = &server.requests()[1].body;
    assert!(
        assistant_messages(sent)[0]
            .get("reasoning_content")
            .is_none(),
        "{sent}"
    );
}

#[tokio::test]
async fn vllm_a_stream_cut_short_still_reports_the_usage_it_announced() {
    let whole = stream("vllm_reasoning_tool_call.sse");
    let cut = whole
        .find("\"finish_reason\":\"tool_calls\"")
        .expect("the finish");
    let cut = whole[..cut].rfind("data: ").expect("its chunk");
    let server = FakeServer::start(vec![Reply::sse(pieces(&whole[..cut], 50))]).await;
    let items = drain(openai(&server).stream(first_request("Qwen/Qwen3-8B"))).await;
    let (last, before) = items.split_last().expect("items");
    assert_eq!(
        last,
        &Err(ModelError::TruncatedStream {
            provider: "OpenAI-compatible",
            expected: "its end marker `data: [DONE]`",
        })
    );
    assert_eq!(before.last(), Some(&Ok(usage(212, 20, 0))));
}

// ---- Ollama ----

#[tokio::test]
async fn ollama_reasoning_and_a_whole_call_that_finishes_with_stop_are_a_tool_use() {
    let server = replaying(&["ollama_reasoning_whole_call.sse"], 44).await;
    let got = events(openai(&server).stream(first_request("qwen3:8b"))).await;
    assert_eq!(
        got,
        [
            thought("Okay, the user asks about TODOs."),
            thought(" A grep will find them."),
            start("call_w3pk9r1s", "grep"),
            delta("call_w3pk9r1s", "{\"pattern\":\"TODO\"}"),
            end("call_w3pk9r1s"),
            usage(180, 47, 0),
            finished(StopReason::ToolUse),
        ]
    );
}

// ---- llama.cpp ----

#[tokio::test]
async fn llamacpp_reasoning_content_goes_back_and_its_timings_are_skipped() {
    let server = replaying(
        &[
            "llamacpp_reasoning_tool_call.sse",
            "deepseek_final_answer.sse",
        ],
        38,
    )
    .await;
    let model = openai(&server);
    let first = first_request("qwen3");
    let answer = response(model.stream(first.clone())).await;
    assert_eq!(
        answer.reasoning,
        [unsigned("Let me read the file to see its TODOs.")]
    );
    assert_eq!(answer.tool_calls[0].arguments, "{\"path\":\"src/main.rs\"}");
    assert_eq!(
        (answer.usage.input_tokens, answer.usage.output_tokens),
        (305, 38)
    );
    response(model.stream(next_request(&first, &answer))).await;
    assert_eq!(
        assistant_messages(&server.requests()[1].body)[0]["reasoning_content"],
        "Let me read the file to see its TODOs."
    );
}

// ---- Groq ----

#[tokio::test]
async fn groq_usage_inside_x_groq_is_read_and_its_reasoning_is_never_sent_back() {
    let server = replaying(
        &["groq_reasoning_whole_call.sse", "deepseek_final_answer.sse"],
        52,
    )
    .await;
    let model = openai(&server);
    let first = first_request("openai/gpt-oss-20b");
    let answer = response(model.stream(first.clone())).await;
    assert_eq!(
        answer.reasoning_text,
        "Need to search the sources for TODO."
    );
    assert_eq!(answer.tool_calls[0].name, "grep");
    assert_eq!(
        (answer.usage.input_tokens, answer.usage.output_tokens),
        (311, 52)
    );
    response(model.stream(next_request(&first, &answer))).await;
    let sent = assistant_messages(&server.requests()[1].body)[0].clone();
    assert!(sent.get("reasoning_content").is_none(), "{sent}");
    assert!(sent.get("reasoning").is_none(), "{sent}");
}

// ---- xAI ----

#[tokio::test]
async fn xai_a_call_and_its_finish_in_one_chunk_then_usage_after() {
    let server = replaying(&["xai_reasoning_tool_call.sse"], 64).await;
    let got = events(openai(&server).stream(first_request("grok-3-mini"))).await;
    let id = "call_61840392";
    assert_eq!(
        got,
        [
            thought("First"),
            thought(", list the Rust files."),
            ModelEvent::ReasoningBlock(unsigned("First, list the Rust files.")),
            start(id, "glob"),
            delta(id, "{\"pattern\":\"src/**/*.rs\"}"),
            end(id),
            usage(268, 29, 192),
            finished(StopReason::ToolUse),
        ]
    );
}

// ---- Anthropic ----

const THINKING_SIGNATURE: &str =
    "ErUBCkYIBxgCIkB3t9Qx2vLm8Rk4Yp1Wz6Nc0Hf5Ds7Ja3Gb9Ue2Tq4Xo8Ki1Mn6Vr0Sl5Pw3Cy7Fh2EgxZ";
const REDACTED: &str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

#[tokio::test]
async fn anthropic_a_refusal_keeps_its_text_and_the_stop_reason_says_refusal() {
    let server = replaying(&["anthropic_refusal.sse"], 31).await;
    let got = events(anthropic(&server).stream(first_request("claude-sonnet-4-5"))).await;
    assert_eq!(
        got,
        [
            text("I won't write"),
            text(" that."),
            usage(412, 6, 0),
            finished(StopReason::Refusal),
        ]
    );
}

#[tokio::test]
async fn anthropic_a_call_cut_by_max_tokens_ends_and_the_stop_reason_says_so() {
    let server = replaying(&["anthropic_max_tokens_cut_call.sse"], 43).await;
    let answer = response(anthropic(&server).stream(first_request("claude-sonnet-4-5"))).await;
    assert_eq!(answer.stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(
        answer.tool_calls,
        [AssistantToolCall {
            id: "toolu_01Kx7Fq2Rb9Tn4Wm8Yp3Ls6D".into(),
            name: "write".into(),
            arguments: "{\"path\": \"docs/CHANGES.md\", \"content\": \"# Changes\\n\\n## 2.4"
                .into(),
        }]
    );
}

#[tokio::test]
async fn anthropic_thinking_streams_and_ends_with_its_signature_unknown_blocks_are_skipped() {
    let server = replaying(&["anthropic_thinking_tool_use.sse"], 57).await;
    let got = events(anthropic(&server).stream(first_request("claude-sonnet-4-5"))).await;
    let id = "toolu_01Fz8Wq3Nb6Tk1Rp5Vm2Hc9L";
    assert_eq!(
        got,
        [
            thought("The user wants the TODOs;"),
            thought(" grep finds them in one call."),
            ModelEvent::ReasoningBlock(Reasoning::Text {
                text: "The user wants the TODOs; grep finds them in one call.".into(),
                signature: Some(THINKING_SIGNATURE.into()),
            }),
            ModelEvent::ReasoningBlock(Reasoning::Redacted {
                data: REDACTED.into()
            }),
            text("Searching for TODO comments."),
            start(id, "grep"),
            delta(id, "{\"pattern\": \"TODO\"}"),
            end(id),
            ModelEvent::Usage(Usage {
                input_tokens: 530 + 1800,
                output_tokens: 97,
                cache_read_tokens: 0,
                cache_write_tokens: 1800,
            }),
            finished(StopReason::ToolUse),
        ]
    );
}

/// The request after the thinking answer, with reasoning on or off.
fn after_thinking(answer: &qilin_model::ModelResponse, reasoning: bool) -> ModelRequest {
    let mut first = first_request("claude-sonnet-4-5");
    if reasoning {
        first.reasoning = Some(ReasoningSetting::Effort(ReasoningEffort::Medium));
    }
    next_request(&first, answer)
}

#[tokio::test]
async fn anthropic_with_thinking_on_signed_and_redacted_thinking_go_back_first() {
    let server = replaying(
        &[
            "anthropic_thinking_tool_use.sse",
            "anthropic_refusal.sse",
            "anthropic_refusal.sse",
        ],
        200,
    )
    .await;
    let model = anthropic(&server);
    let answer = response(model.stream(first_request("claude-sonnet-4-5"))).await;
    response(model.stream(after_thinking(&answer, true))).await;
    response(model.stream(after_thinking(&answer, false))).await;
    let requests = server.requests();

    let on = &requests[1].body;
    assert_eq!(
        on["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192})
    );
    assert_eq!(
        on["max_tokens"],
        json!(8192 + 8192),
        "raised above the budget"
    );
    assert_eq!(
        on["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "The user wants the TODOs; grep finds them in one call.",
             "signature": THINKING_SIGNATURE},
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "text", "text": "Searching for TODO comments."},
            {"type": "tool_use", "id": "toolu_01Fz8Wq3Nb6Tk1Rp5Vm2Hc9L", "name": "grep",
             "input": {"pattern": "TODO"}},
        ])
    );

    let off = &requests[2].body;
    assert!(off.get("thinking").is_none(), "{off}");
    assert_eq!(off["max_tokens"], json!(1024));
    let kinds: Vec<&str> = off["messages"][1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "tool_use"]);
}

#[tokio::test]
async fn anthropic_never_receives_reasoning_without_a_signature() {
    let server = replaying(&["anthropic_refusal.sse"], 200).await;
    let mut request = first_request("claude-sonnet-4-5");
    request.reasoning = Some(ReasoningSetting::BudgetTokens(500));
    request.messages.push(Message::assistant_with_reasoning(
        "Done.",
        Vec::new(),
        vec![unsigned("another provider's reasoning")],
    ));
    response(anthropic(&server).stream(request)).await;
    let body = &server.requests()[0].body;
    assert_eq!(
        body["thinking"]["budget_tokens"],
        json!(1024),
        "the API's floor"
    );
    assert_eq!(
        body["messages"][1]["content"],
        json!([{"type": "text", "text": "Done."}])
    );
}

#[tokio::test]
async fn anthropic_a_stream_cut_after_message_start_still_reports_its_input_tokens() {
    let whole = stream("anthropic_refusal.sse");
    let cut = whole.find("event: content_block_delta").expect("a delta");
    let server = FakeServer::start(vec![Reply::sse(pieces(&whole[..cut], 70))]).await;
    let items = drain(anthropic(&server).stream(first_request("claude-sonnet-4-5"))).await;
    assert_eq!(
        items,
        [
            Ok(usage(412, 2, 0)),
            Err(ModelError::TruncatedStream {
                provider: "Anthropic",
                expected: "its end marker `message_stop`",
            }),
        ]
    );
}
