//! Compaction at the provider's HTTP boundary: the summarising request carries the history and
//! no tools, the next turn starts from the summary, and a resumed session sends the same bytes.

#[path = "../../qilin-agent/tests/support/server.rs"]
mod server;
mod support;

use qilin_agent::{COMPACT_SYSTEM, CompactionError, SUMMARY_PREFIX};
use qilin_protocol::{EventBody, FinishReason};
use qilin_runtime::{CodeSandbox, CompactError, ModelChoice, Runtime, SessionHandle, SubmitError};
use qilin_store::{EventStore, MemoryStore};
use serde_json::Value;
use server::{FakeProvider, serve, sse};
use std::sync::Arc;
use support::{assert_consistent, fixture, stored};

const READER: &str = "\
name: reader
instructions: Read what you are asked to.
tools: [read]
skills:
  available: []
";

const SUMMARY: &str = "**Goal**: know what notes.txt holds. **Done**: read it, two lines.";

fn chunk(data: String) -> (Option<&'static str>, String) {
    (None, data)
}

fn as_sse(events: &[(Option<&'static str>, String)]) -> String {
    let borrowed: Vec<(Option<&str>, &str)> =
        events.iter().map(|(n, d)| (*n, d.as_str())).collect();
    sse(&borrowed)
}

/// An answer calling `read` on `notes.txt` as call `id`.
fn reads(id: &str) -> String {
    as_sse(&[
        chunk(format!(
            r#"{{"id":"a","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"role":"assistant","tool_calls":[{{"index":0,"id":"{id}","type":"function","function":{{"name":"read","arguments":"{{\"path\": \"notes.txt\"}}"}}}}]}},"finish_reason":null}}]}}"#
        )),
        chunk(
            r#"{"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.to_string(),
        ),
        chunk("[DONE]".to_string()),
    ])
}

/// An answer saying `text`, reporting usage.
fn says(text: &str) -> String {
    let text = serde_json::to_string(text).unwrap();
    as_sse(&[
        chunk(format!(
            r#"{{"id":"b","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"role":"assistant","content":{text}}},"finish_reason":null}}]}}"#
        )),
        chunk(
            r#"{"id":"b","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#.to_string(),
        ),
        chunk(
            r#"{"id":"b","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}"#.to_string(),
        ),
        chunk("[DONE]".to_string()),
    ])
}

fn openai(server: &FakeProvider) -> ModelChoice {
    let provider = qilin_model::OpenAiProvider::new(qilin_model::OpenAiConfig::new(
        format!("{}/v1", server.base_url),
        Some("key".into()),
    ))
    .unwrap();
    ModelChoice::Provider {
        provider: Arc::new(provider),
        model: "gpt-test".into(),
        label: "openai:gpt-test".into(),
    }
}

async fn session(runtime: &Runtime, f: &support::Fixture, model: ModelChoice) -> SessionHandle {
    runtime
        .session(f.workspace())
        .agent_file(f.agent())
        .no_sandbox(true)
        .project_context(false)
        .model(model)
        .build()
        .await
        .unwrap()
}

fn messages(request: &Value) -> &Vec<Value> {
    request["messages"].as_array().unwrap()
}

#[tokio::test]
async fn the_summary_stands_for_the_history_and_a_resumed_session_sends_the_same_request() {
    let f = fixture(READER);
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let first_process = Runtime::new(Arc::clone(&store), CodeSandbox::InProcess);
    let server = serve(vec![
        reads("call_1"),
        says("It has two lines."),
        says(SUMMARY),
        says("Still two."),
    ])
    .await;
    let live = session(&first_process, &f, openai(&server)).await;

    // Nothing to compact before any turn.
    assert_eq!(
        live.compact().await,
        Err(CompactError::Failed(CompactionError::NothingToCompact))
    );
    let turn = live.submit("What is in notes.txt?", None).unwrap();
    // Not while the turn runs.
    assert!(matches!(
        live.compact().await,
        Err(CompactError::Busy { turn_id }) if turn_id == "turn-1"
    ));
    assert_eq!(turn.finished().await.reason, FinishReason::Completed);

    let compacted = live.compact().await.unwrap();
    assert_eq!(compacted.summary, SUMMARY);
    assert_eq!(compacted.usage.input_tokens, 120);
    assert_eq!(compacted.usage.output_tokens, 30);
    assert!(
        compacted.estimated_tokens_after < compacted.estimated_tokens_before,
        "{compacted:?}"
    );
    // Once compacted, nothing new to compact.
    assert_eq!(
        live.compact().await,
        Err(CompactError::Failed(CompactionError::NothingToCompact))
    );

    // The summarising request: no tools, its own system prompt, the history as a transcript.
    let requests = server.requests.lock().unwrap().clone();
    let summarising = &requests[2];
    assert!(
        summarising
            .get("tools")
            .is_none_or(|tools| tools.as_array().unwrap().is_empty()),
        "{summarising}"
    );
    let sent = messages(summarising);
    assert_eq!(sent[0]["role"], "system");
    assert_eq!(sent[0]["content"], COMPACT_SYSTEM);
    assert_eq!(sent.len(), 2, "{summarising}");
    let transcript = sent[1]["content"].as_str().unwrap();
    for part in [
        "What is in notes.txt?",
        "Called `read` with {\"path\": \"notes.txt\"}",
        "first line",
        "It has two lines.",
        "Summarise the conversation above",
    ] {
        assert!(
            transcript.contains(part),
            "{part:?} missing from {transcript}"
        );
    }

    // The log: the event replaces everything before it, and the session is consistent.
    let events = stored(&live).await;
    assert_consistent(&events);
    let (at, event) = events
        .iter()
        .enumerate()
        .find(|(_, e)| matches!(e.body, EventBody::ContextCompacted(_)))
        .unwrap();
    assert_eq!(at, events.len() - 1);
    assert_eq!(compacted.replaces_through_seq, event.seq - 1);

    // The next turn starts from the summary, in the same session...
    let summary = live.submit("And now?", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let next = server.requests.lock().unwrap()[3].clone();
    let sent = messages(&next);
    assert_eq!(sent.len(), 3, "system, summary, prompt: {next}");
    assert_eq!(sent[0]["role"], "system");
    assert_eq!(sent[1]["role"], "user");
    assert_eq!(sent[1]["content"], format!("{SUMMARY_PREFIX}\n\n{SUMMARY}"));
    assert_eq!(sent[2]["content"], "And now?");
    assert_eq!(next["tools"], requests[0]["tools"], "the tools are back");
    assert_eq!(sent[0], messages(&requests[0])[0], "the same system prompt");

    // ...and in a new process resuming the log as it stood after the compaction.
    let cut: Vec<_> = events.clone();
    let copy: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let info = store.session(live.id()).await.unwrap().unwrap();
    copy.create_session(qilin_store::NewSession {
        id: info.id.clone(),
        workspace: info.workspace.clone(),
        agent: info.agent.clone(),
        agent_file: info.agent_file.clone(),
        model: info.model.clone(),
        created_at: info.created_at.clone(),
        parent_session_id: None,
        parent_call_id: None,
    })
    .await
    .unwrap();
    copy.append(&info.id, &cut).await.unwrap();
    let second_process = Runtime::new(Arc::clone(&copy), CodeSandbox::InProcess);
    let after = serve(vec![says("Still two.")]).await;
    let resumed = second_process
        .resume(&info.id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(openai(&after))
        .build()
        .await
        .unwrap();
    assert_eq!(
        resumed.compact().await,
        Err(CompactError::Failed(CompactionError::NothingToCompact)),
        "the resumed session knows it was compacted"
    );
    let summary = resumed.submit("And now?", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let resumed_raw = after.raw.lock().unwrap()[0].clone();
    let live_raw = server.raw.lock().unwrap()[3].clone();
    assert!(
        resumed_raw == live_raw,
        "resumed:\n{}\nlive:\n{}",
        String::from_utf8_lossy(&resumed_raw),
        String::from_utf8_lossy(&live_raw)
    );
}

#[tokio::test]
async fn a_failed_or_interrupted_compaction_changes_nothing() {
    let f = fixture(READER);
    // The summarising request gets a stream cut before its end marker.
    let cut_short = as_sse(&[chunk(
        r#"{"id":"b","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Partial"},"finish_reason":null}]}"#.to_string(),
    )]);
    let server = serve(vec![says("Hello."), cut_short, says("Hi again.")]).await;
    let live = session(&f.runtime, &f, openai(&server)).await;
    live.submit("Hi.", None).unwrap().finished().await;
    let before = stored(&live).await.len();
    let failed = live.compact().await.unwrap_err();
    assert!(
        matches!(failed, CompactError::Failed(CompactionError::Model(_))),
        "{failed:?}"
    );
    assert!(failed.to_string().contains("unchanged"), "{failed}");
    assert_eq!(stored(&live).await.len(), before, "nothing recorded");
    assert!(!live.compacting());

    // The next turn carries the whole history still.
    live.submit("Again.", None).unwrap().finished().await;
    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(messages(&requests[2]).len(), 4, "{}", requests[2]);
}

#[tokio::test]
async fn an_interrupt_stops_a_compaction_and_a_turn_may_not_start_during_one() {
    let f = fixture(READER);
    let live = f
        .session(
            "turns:\n  - say: Hello.\n  - say: A summary that takes its time to arrive.\nchunk_delay_ms: 200\n",
            false,
        )
        .await;
    live.submit("Hi.", None).unwrap().finished().await;
    let compacting = {
        let live = live.clone();
        tokio::spawn(async move { live.compact().await })
    };
    while !live.compacting() {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        live.submit("Another.", None).err(),
        Some(SubmitError::Compacting)
    );
    assert!(live.interrupt());
    assert_eq!(
        compacting.await.unwrap(),
        Err(CompactError::Failed(CompactionError::Interrupted))
    );
    assert!(!live.compacting());
    assert!(
        stored(&live)
            .await
            .iter()
            .all(|e| !matches!(e.body, EventBody::ContextCompacted(_)))
    );
}
