//! A turn that crashes or that its provider fails never wedges its session: the turn ends with
//! a clear error, every call it started gets its result, and the next prompt runs.

#[path = "../../qilin-agent/tests/support/server.rs"]
mod server;
mod support;

use futures_util::StreamExt;
use futures_util::stream;
use qilin_model::{ModelEvent, ModelProvider, ModelRequest, ModelStream, StopReason};
use qilin_protocol::{CallStatus, EventBody, FinishReason};
use qilin_runtime::ModelChoice;
use server::{serve, sse};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use support::{assert_consistent, fixture, stored};
use tokio::sync::Notify;

const RUNNER: &str = "\
name: runner
instructions: Run what you are asked to.
tools: [bash]
skills:
  available: []
";

/// A provider that answers each request with the next of its streams.
struct Streams(Mutex<VecDeque<ModelStream>>);

impl ModelProvider for Streams {
    fn stream(&self, _request: ModelRequest) -> ModelStream {
        self.0
            .lock()
            .unwrap()
            .pop_front()
            .expect("a stream for each request")
    }
}

fn says(text: &str) -> ModelStream {
    stream::iter([
        Ok(ModelEvent::TextDelta(text.to_string())),
        Ok(ModelEvent::Finished {
            stop_reason: StopReason::EndTurn,
        }),
    ])
    .boxed()
}

#[tokio::test]
async fn a_provider_that_panics_mid_turn_ends_the_turn_and_the_next_prompt_runs() {
    let f = fixture(RUNNER);
    // The provider calls `bash`, then panics once the call runs.
    let running = Arc::new(Notify::new());
    let panics = {
        let running = Arc::clone(&running);
        stream::iter([
            Ok(ModelEvent::ToolCallStart {
                id: "c1".into(),
                name: "bash".into(),
            }),
            Ok(ModelEvent::ToolCallDelta {
                id: "c1".into(),
                arguments_delta: r#"{"command": "sleep 30"}"#.into(),
            }),
            Ok(ModelEvent::ToolCallEnd { id: "c1".into() }),
        ])
        .chain(stream::once(async move {
            running.notified().await;
            panic!("the provider broke on purpose")
        }))
        .boxed()
    };
    let provider = Streams(Mutex::new(VecDeque::from([panics, says("Done.")])));
    let session = f
        .builder()
        .model(ModelChoice::Provider {
            provider: Arc::new(provider),
            model: "crashing".into(),
            label: "crashing".into(),
        })
        .build()
        .await
        .unwrap();
    let turn = session.submit("sleep a while", None).unwrap();
    let mut events = session.subscribe_from(0);
    while let Some(event) = events.next().await {
        if matches!(event.unwrap().body, EventBody::ToolStart(start) if start.call_id == "c1") {
            break;
        }
    }
    running.notify_one();
    let summary = turn.finished().await;
    assert_eq!(summary.reason, FinishReason::Error);
    let error = summary.error.unwrap();
    assert!(
        error.contains("the provider broke on purpose") && error.contains("next prompt"),
        "{error}"
    );
    assert_eq!(session.running_turn(), None);

    let next = session
        .submit("and now?", None)
        .expect("the session takes a prompt");
    let summary = next.finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    assert_eq!(summary.final_text, "Done.");

    let log = stored(&session).await;
    assert_consistent(&log);
    let result = log
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.call_id == "c1" => Some(result),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.status, CallStatus::Interrupted);
    let finished: Vec<_> = log
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::TurnFinished {
                reason, message, ..
            } => Some((*reason, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 2);
    assert_eq!(finished[0].0, FinishReason::Error);
    assert_eq!(finished[0].1.as_deref(), Some(error.as_str()));
    assert_eq!(finished[1].0, FinishReason::Completed);
}

/// A whole HTTP 429 response asking to wait `retry_after`.
fn rate_limited(retry_after: &str) -> String {
    let body = r#"{"error":{"message":"Rate limit reached","type":"tokens","code":"rate_limit_exceeded"}}"#;
    format!(
        "HTTP/1.1 429 Too Many Requests\r\nretry-after: {retry_after}\r\ncontent-type: \
         application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn says_sse(text: &str) -> String {
    let text = serde_json::to_string(text).unwrap();
    let delta = format!(
        r#"{{"id":"b","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"role":"assistant","content":{text}}},"finish_reason":null}}]}}"#
    );
    sse(&[
        (None, delta.as_str()),
        (
            None,
            r#"{"id":"b","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ),
        (None, "[DONE]"),
    ])
}

#[tokio::test]
async fn a_429_asking_to_wait_1e20_seconds_ends_the_turn_saying_so_and_the_next_prompt_runs() {
    let f = fixture(RUNNER);
    let server = serve(vec![rate_limited("1e20"), says_sse("Fine now.")]).await;
    let provider = qilin_model::OpenAiProvider::new(qilin_model::OpenAiConfig::new(
        format!("{}/v1", server.base_url),
        Some("key".into()),
    ))
    .unwrap();
    let session = f
        .builder()
        .model(ModelChoice::Provider {
            provider: Arc::new(provider),
            model: "gpt-test".into(),
            label: "openai:gpt-test".into(),
        })
        .build()
        .await
        .unwrap();
    let summary = session.submit("hello", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Error);
    let error = summary.error.unwrap();
    assert!(
        error.contains("`retry-after: 1e20`") && error.contains("60 s"),
        "{error}"
    );
    let summary = session
        .submit("hello again", None)
        .expect("the session takes a prompt")
        .finished()
        .await;
    assert_eq!(summary.reason, FinishReason::Completed);
    assert_eq!(summary.final_text, "Fine now.");
    assert_eq!(
        server.requests.lock().unwrap().len(),
        2,
        "no retry after the 429"
    );
    assert_consistent(&stored(&session).await);
}
