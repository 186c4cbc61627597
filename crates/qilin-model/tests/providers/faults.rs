use crate::support::{
    Entry, FakeServer, Reply, drain, first_request, fixture, pieces, quick_settings, response,
};
use qilin_model::{
    AnthropicConfig, AnthropicProvider, HttpSettings, ModelError, ModelEvent, ModelProvider,
    OpenAiConfig, OpenAiProvider, StopReason,
};
use std::time::Duration;

fn openai(server: &FakeServer, http: HttpSettings) -> OpenAiProvider {
    let mut config = OpenAiConfig::new(server.url("/v1"), Some("sk-test".into()));
    config.http = http;
    OpenAiProvider::new(config).expect("provider")
}

fn anthropic(server: &FakeServer, http: HttpSettings) -> AnthropicProvider {
    let mut config = AnthropicConfig::new(server.url(""), "sk-ant-test");
    config.http = http;
    AnthropicProvider::new(config).expect("provider")
}

const RATE_LIMITED: &str = r#"{"error":{"message":"Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Used 30000, Requested 412.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#;

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after() {
    let server = FakeServer::start(vec![
        Reply::status(429, &[("retry-after", "1")], RATE_LIMITED)
            .mark_after(Duration::from_millis(400), "0.4 s after the 429"),
        Reply::sse(pieces(&fixture("openai_final_text.sse"), 80)),
    ])
    .await;
    // The computed backoff is at most 20 ms: only `Retry-After` makes the retry wait past
    // the mark.
    let answer = response(openai(&server, quick_settings()).stream(first_request("gpt-4.1"))).await;
    assert_eq!(answer.text, "Both files are fine.");
    let log = server.log();
    let order: Vec<&str> = log
        .iter()
        .map(|entry| match entry {
            Entry::Request(_) => "request",
            Entry::Mark(label) => label.as_str(),
        })
        .collect();
    assert_eq!(order, ["request", "0.4 s after the 429", "request"]);
    let requests = server.requests();
    assert_eq!(
        requests[0].body, requests[1].body,
        "the same request is sent again"
    );
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_fails_at_once_saying_what_was_asked() {
    for asked in ["1e20", "61", "Fri, 31 Dec 9999 23:59:59 GMT"] {
        let server = FakeServer::start(vec![
            Reply::status(429, &[("retry-after", asked)], RATE_LIMITED),
            Reply::sse(pieces(&fixture("openai_final_text.sse"), 80)),
        ])
        .await;
        let items = drain(openai(&server, quick_settings()).stream(first_request("gpt-4.1"))).await;
        let [Err(err)] = &items[..] else {
            panic!("{asked}: expected one error, got {items:?}")
        };
        assert!(
            matches!(err, ModelError::RetryAfterTooLong { status: 429, .. }),
            "{asked}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "OpenAI-compatible answered HTTP 429 and asked to be retried after a wait \
                 (`retry-after: {asked}`) longer than the 60 s Qilin waits; try again later. The \
                 provider said: tokens: Rate limit reached for gpt-4.1 on tokens per min (TPM): \
                 Limit 30000, Used 30000, Requested 412."
            )
        );
        assert_eq!(server.requests().len(), 1, "{asked}: not sent again");
    }
}

#[tokio::test]
async fn a_retry_after_date_is_honoured() {
    // A date two to three seconds ahead (HTTP dates have whole seconds): the retry waits
    // past the mark, which the computed backoff (at most 20 ms) never would.
    let when = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3));
    let server = FakeServer::start(vec![
        Reply::status(429, &[("retry-after", &when)], RATE_LIMITED)
            .mark_after(Duration::from_millis(400), "0.4 s after the 429"),
        Reply::sse(pieces(&fixture("openai_final_text.sse"), 80)),
    ])
    .await;
    let answer = response(openai(&server, quick_settings()).stream(first_request("gpt-4.1"))).await;
    assert_eq!(answer.text, "Both files are fine.");
    let order: Vec<String> = server
        .log()
        .iter()
        .map(|entry| match entry {
            Entry::Request(_) => "request".to_string(),
            Entry::Mark(label) => label.clone(),
        })
        .collect();
    assert_eq!(order, ["request", "0.4 s after the 429", "request"]);
}

#[tokio::test]
async fn a_500_then_success_streams_the_answer_once() {
    let server = FakeServer::start(vec![
        Reply::status(
            500,
            &[],
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        ),
        Reply::sse(pieces(&fixture("anthropic_final_text.sse"), 80)),
    ])
    .await;
    let items = drain(anthropic(&server, quick_settings()).stream(first_request("claude"))).await;
    let texts: Vec<_> = items
        .iter()
        .filter(|item| matches!(item, Ok(ModelEvent::TextDelta(_))))
        .collect();
    assert_eq!(texts.len(), 1, "the answer is streamed once: {items:?}");
    assert_eq!(
        items.last(),
        Some(&Ok(ModelEvent::Finished {
            stop_reason: StopReason::EndTurn
        }))
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn retries_are_bounded_and_the_last_error_is_reported() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = FakeServer::start(vec![
        Reply::status(529, &[], overloaded),
        Reply::status(529, &[], overloaded),
        Reply::status(529, &[], overloaded),
        Reply::sse(vec![fixture("anthropic_final_text.sse")]),
    ])
    .await;
    let mut http = quick_settings();
    http.retry.max_attempts = 3;
    let items = drain(anthropic(&server, http).stream(first_request("claude"))).await;
    let err = ModelError::Http {
        provider: "Anthropic",
        status: 529,
        message: "overloaded_error: Overloaded".into(),
        attempts: 3,
    };
    assert_eq!(
        err.to_string(),
        "Anthropic answered HTTP 529 after 3 attempts: overloaded_error: Overloaded"
    );
    assert_eq!(items, [Err(err)]);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_400_is_not_retried_and_names_the_providers_message() {
    let body = r#"{"error":{"message":"Invalid 'messages[2].tool_call_id': no tool call with that id.","type":"invalid_request_error","param":"messages[2]","code":null}}"#;
    let server = FakeServer::start(vec![
        Reply::status(400, &[], body),
        Reply::sse(vec![fixture("openai_final_text.sse")]),
    ])
    .await;
    let items = drain(openai(&server, quick_settings()).stream(first_request("gpt-4.1"))).await;
    assert_eq!(items.len(), 1);
    let err = items[0].clone().unwrap_err();
    assert_eq!(
        err.to_string(),
        "OpenAI-compatible answered HTTP 400: invalid_request_error: Invalid \
         'messages[2].tool_call_id': no tool call with that id."
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_closed_before_done_is_truncated_and_not_retried() {
    let whole = fixture("openai_text_and_two_calls.sse");
    let cut = whole.find("data: [DONE]").expect("the end marker");
    let server = FakeServer::start(vec![
        Reply::sse(pieces(&whole[..cut], 50)),
        Reply::sse(vec![whole.clone()]),
    ])
    .await;
    let items = drain(openai(&server, quick_settings()).stream(first_request("gpt-4.1"))).await;
    let (last, before) = items.split_last().expect("items");
    assert_eq!(
        last,
        &Err(ModelError::TruncatedStream {
            provider: "OpenAI-compatible",
            expected: "its end marker `data: [DONE]`",
        })
    );
    assert!(before.iter().all(Result::is_ok));
    assert!(
        !before
            .iter()
            .any(|item| matches!(item, Ok(ModelEvent::Finished { .. }))),
        "no silently short answer"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_closed_before_message_stop_is_truncated() {
    let whole = fixture("anthropic_text_and_two_calls.sse");
    let cut = whole.find("event: message_delta").expect("message_delta");
    let server = FakeServer::start(vec![Reply::sse(pieces(&whole[..cut + 30], 40))]).await;
    let items = drain(anthropic(&server, quick_settings()).stream(first_request("claude"))).await;
    let err = items.last().expect("items").clone().unwrap_err();
    assert_eq!(
        err.to_string(),
        "Anthropic stream ended before its end marker `message_stop`: the answer is incomplete"
    );
    assert!(items.contains(&Ok(ModelEvent::ToolCallEnd {
        id: "toolu_01Bv9qR5ZHfW8k3nDxYc2LmA".into()
    })));
}

#[tokio::test]
async fn a_silent_stream_times_out_naming_the_timeout() {
    let whole = fixture("openai_final_text.sse");
    let first_event = whole.find("\n\n").expect("an event") + 2;
    let server = FakeServer::start(vec![Reply::stall(vec![whole[..first_event].to_owned()])]).await;
    let mut http = quick_settings();
    http.idle_timeout = Duration::from_millis(300);
    let items = drain(openai(&server, http).stream(first_request("gpt-4.1"))).await;
    let err = ModelError::IdleTimeout {
        provider: "OpenAI-compatible",
        timeout: Duration::from_millis(300),
    };
    assert_eq!(
        err.to_string(),
        "OpenAI-compatible sent nothing for 0.3 s (the idle timeout); the answer was abandoned"
    );
    assert_eq!(items, [Err(err)]);
}

#[tokio::test]
async fn an_invalid_json_chunk_is_a_clear_error() {
    let stream = fixture("openai_final_text.sse").replacen(
        "data: {\"id\"",
        "data: {\"choices\": [{\"delta\": {\"content\": \"cut\"\n\ndata: {\"id\"",
        1,
    );
    let server = FakeServer::start(vec![Reply::sse(vec![stream])]).await;
    let items = drain(openai(&server, quick_settings()).stream(first_request("gpt-4.1"))).await;
    assert_eq!(items.len(), 1, "{items:?}");
    let message = items[0].clone().unwrap_err().to_string();
    assert!(
        message.starts_with(
            "OpenAI-compatible sent a stream chunk Qilin cannot read (expected a \
             chat.completion.chunk JSON object: EOF while parsing"
        ),
        "{message}"
    );
    assert!(
        message.ends_with(r#"the chunk: {"choices": [{"delta": {"content": "cut""#),
        "{message}"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error_after_the_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    drop(listener);
    let mut config = AnthropicConfig::new(url.clone(), "sk-ant-test");
    config.http = quick_settings();
    config.http.retry.max_attempts = 2;
    let items = drain(
        AnthropicProvider::new(config)
            .expect("provider")
            .stream(first_request("claude")),
    )
    .await;
    match &items[..] {
        [
            Err(ModelError::Connect {
                url: failed,
                attempts: 2,
                ..
            }),
        ] => assert_eq!(failed, &format!("{url}/v1/messages")),
        other => panic!("expected a connect error after 2 attempts, got {other:?}"),
    }
}

#[tokio::test]
async fn the_key_never_follows_a_redirect_to_another_host() {
    for provider in ["openai", "anthropic"] {
        let elsewhere = FakeServer::start(vec![Reply::sse(pieces(
            &fixture("openai_final_text.sse"),
            80,
        ))])
        .await;
        let target = elsewhere.url("/v1/chat/completions");
        let server =
            FakeServer::start(vec![Reply::status(307, &[("location", &target)], "")]).await;
        let stream = match provider {
            "openai" => openai(&server, quick_settings()).stream(first_request("gpt-4.1")),
            _ => anthropic(&server, quick_settings()).stream(first_request("claude")),
        };
        let events = drain(stream).await;
        let error = events
            .iter()
            .find_map(|event| match event {
                Err(err) => Some(err.to_string()),
                Ok(_) => None,
            })
            .expect("the redirect is an error");
        assert!(error.contains("on another host"), "{provider}: {error}");
        assert!(
            elsewhere.requests().is_empty(),
            "{provider}: the other host received the request"
        );
    }
}
