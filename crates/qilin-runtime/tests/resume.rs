//! A session continued in a new process: the model receives exactly what an uninterrupted
//! session would have sent, and what a killed process left open is closed first.

#[path = "../../qilin-agent/tests/support/server.rs"]
mod server;
mod support;

use qilin_protocol::{CallStatus, EventBody, FinishReason};
use qilin_runtime::{CodeSandbox, ModelChoice, Runtime, SessionHandle};
use qilin_store::{EventStore, MemoryStore};
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

fn chunk(data: &str) -> (Option<&'static str>, String) {
    (None, data.to_string())
}

/// An answer calling `read` on `path` as call `id`.
fn reads(path: &str, id: &str) -> String {
    let events = [
        chunk(
            r#"{"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"The notes are short; "},"finish_reason":null}]}"#,
        ),
        chunk(
            r#"{"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":"read them whole."},"finish_reason":null}]}"#,
        ),
        chunk(
            r#"{"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Reading."},"finish_reason":null}]}"#,
        ),
        chunk(&format!(
            r#"{{"id":"a","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"{id}","type":"function","function":{{"name":"read","arguments":"{{\"path\": \"{path}\"}}"}}}}]}},"finish_reason":null}}]}}"#
        )),
        chunk(
            r#"{"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ),
        chunk("[DONE]"),
    ];
    as_sse(&events)
}

/// An answer saying `text`.
fn says(text: &str) -> String {
    let events = [
        chunk(&format!(
            r#"{{"id":"b","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"role":"assistant","content":"{text}"}},"finish_reason":null}}]}}"#
        )),
        chunk(
            r#"{"id":"b","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ),
        chunk("[DONE]"),
    ];
    as_sse(&events)
}

fn as_sse(events: &[(Option<&'static str>, String)]) -> String {
    let borrowed: Vec<(Option<&str>, &str)> =
        events.iter().map(|(n, d)| (*n, d.as_str())).collect();
    sse(&borrowed)
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
        .model(model)
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_resumed_session_sends_the_bytes_an_uninterrupted_one_would() {
    let f = fixture(READER);
    // Uninterrupted: two turns in one session.
    let whole = serve(vec![
        reads("notes.txt", "call_1"),
        says("It has two lines."),
        reads("notes.txt", "call_2"),
        says("Still two."),
    ])
    .await;
    let uninterrupted = session(&f.runtime, &f, openai(&whole)).await;
    for prompt in ["What is in notes.txt?", "And now?"] {
        let summary = uninterrupted.submit(prompt, None).unwrap().finished().await;
        assert_eq!(summary.reason, FinishReason::Completed, "{summary:?}");
    }

    // The same first turn in a session whose process then ends; the second turn comes from a
    // new runtime over the same store, as a new process would.
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let first_process = Runtime::new(Arc::clone(&store), CodeSandbox::InProcess);
    let before = serve(vec![
        reads("notes.txt", "call_1"),
        says("It has two lines."),
    ])
    .await;
    let first = session(&first_process, &f, openai(&before)).await;
    first
        .submit("What is in notes.txt?", None)
        .unwrap()
        .finished()
        .await;
    first.close().await.unwrap();
    let id = first.id().to_string();
    drop(first);

    let second_process = Runtime::new(Arc::clone(&store), CodeSandbox::InProcess);
    let after = serve(vec![reads("notes.txt", "call_2"), says("Still two.")]).await;
    let resumed = second_process
        .resume(&id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(openai(&after))
        .build()
        .await
        .unwrap();
    let summary = resumed.submit("And now?", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);

    let whole_raw = whole.raw.lock().unwrap().clone();
    let after_raw = after.raw.lock().unwrap().clone();
    assert_eq!(after_raw.len(), 2);
    for (step, (resumed_request, uninterrupted_request)) in
        after_raw.iter().zip(&whole_raw[2..]).enumerate()
    {
        assert!(
            resumed_request == uninterrupted_request,
            "request {} of the second turn differs:\nresumed:       {}\nuninterrupted: {}",
            step + 1,
            String::from_utf8_lossy(resumed_request),
            String::from_utf8_lossy(uninterrupted_request)
        );
    }
    let events = stored(&resumed).await;
    assert_consistent(&events);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e.body, EventBody::SessionStarted(_)))
            .count(),
        1
    );
    // The reasoning went back within its turn (as DeepSeek's thinking mode asks), folded
    // from the events like the rest of the history.
    let sent = String::from_utf8_lossy(&whole_raw[1]);
    assert!(
        sent.contains("The notes are short; read them whole."),
        "{sent}"
    );
}

#[tokio::test]
async fn what_a_killed_process_left_open_is_closed_and_the_conversation_goes_on() {
    let f = fixture(READER);
    let server = serve(vec![reads("notes.txt", "call_1"), says("Read it.")]).await;
    let live = session(&f.runtime, &f, openai(&server)).await;
    live.submit("Read the notes.", None)
        .unwrap()
        .finished()
        .await;
    let events = stored(&live).await;
    // The store as a process killed right after the call started left it.
    let cut = events
        .iter()
        .position(|e| matches!(e.body, EventBody::ToolStart(_)))
        .unwrap();
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let info = f.store.session(live.id()).await.unwrap().unwrap();
    store
        .create_session(qilin_store::NewSession {
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
    store.append(&info.id, &events[..=cut]).await.unwrap();
    assert_eq!(store.running_sessions().await.unwrap().len(), 1);

    let restarted = Runtime::new(Arc::clone(&store), CodeSandbox::InProcess);
    assert_eq!(
        restarted.recover_all().await.unwrap(),
        3,
        "result, step end, turn end"
    );
    assert!(store.running_sessions().await.unwrap().is_empty());
    let next = serve(vec![says("Carrying on.")]).await;
    let resumed = restarted
        .resume(&info.id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(openai(&next))
        .build()
        .await
        .unwrap();
    let summary = resumed.submit("Go on.", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let events = stored(&resumed).await;
    assert_consistent(&events);
    let read = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(read.status, CallStatus::Interrupted);
    let request = &next.requests.lock().unwrap()[0];
    let messages = request["messages"].as_array().unwrap();
    let tool = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the interrupted call is answered in the history");
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("the process running the session ended"),
        "{tool}"
    );
}

#[tokio::test]
async fn a_resumed_session_keeps_the_project_context_its_start_recorded() {
    let f = fixture(READER);
    std::fs::create_dir_all(f.workspace().join(".git")).unwrap();
    std::fs::write(f.workspace().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        f.workspace().join("AGENTS.md"),
        "Run `make check` before you finish.\n",
    )
    .unwrap();
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let first_process = Runtime::new(Arc::clone(&store), CodeSandbox::InProcess);
    let before = serve(vec![says("Hello.")]).await;
    let first = session(&first_process, &f, openai(&before)).await;
    first.submit("Hi.", None).unwrap().finished().await;
    first.close().await.unwrap();
    let id = first.id().to_string();
    drop(first);
    let first_request = before.requests.lock().unwrap()[0].clone();
    let system = first_request["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains(
            "<memory-file path=\"AGENTS.md\">\nRun `make check` before you finish.\n</memory-file>"
        ),
        "{system}"
    );
    assert!(system.contains("Git branch: main\n"), "{system}");
    assert!(system.ends_with("</environment>\n"), "{system}");

    // Between the two processes the project changes: its memory, its branch.
    std::fs::write(
        f.workspace().join("AGENTS.md"),
        "Something else entirely.\n",
    )
    .unwrap();
    std::fs::write(f.workspace().join(".git/HEAD"), "ref: refs/heads/other\n").unwrap();
    let second_process = Runtime::new(Arc::clone(&store), CodeSandbox::InProcess);
    let after = serve(vec![says("Hello again.")]).await;
    let resumed = second_process
        .resume(&id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(openai(&after))
        .build()
        .await
        .unwrap();
    resumed.submit("Again.", None).unwrap().finished().await;
    let second_request = after.requests.lock().unwrap()[0].clone();
    assert_eq!(
        second_request["messages"][0], first_request["messages"][0],
        "the system prompt is the one the session began with"
    );
}

#[tokio::test]
async fn a_session_whose_agent_file_changed_is_not_resumed() {
    let f = fixture(READER);
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let first_process = Runtime::new(Arc::clone(&store), CodeSandbox::InProcess);
    let before = serve(vec![says("Hello.")]).await;
    let first = session(&first_process, &f, openai(&before)).await;
    first.submit("Hi.", None).unwrap().finished().await;
    first.close().await.unwrap();
    let id = first.id().to_string();
    drop(first);

    // A command of the session (or anyone) changed the agent file in between: a resumed
    // session would run with other tools and sandbox settings than it began with.
    std::fs::write(
        f.agent(),
        format!("{READER}sandbox:\n  mode: off\ntools: [read, bash]\n")
            .replace("tools: [read]\n", ""),
    )
    .unwrap();
    let second_process = Runtime::new(Arc::clone(&store), CodeSandbox::InProcess);
    let after = serve(vec![says("Hello again.")]).await;
    let refused = second_process
        .resume(&id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(openai(&after))
        .build()
        .await;
    let message = match refused {
        Ok(_) => panic!("a session resumed with a changed agent file"),
        Err(err) => err.to_string(),
    };
    assert!(
        message.contains(&format!("session `{id}` cannot be resumed"))
            && message.contains("changed since the session began")
            && message.contains("agent.agent"),
        "{message}"
    );
    assert!(after.requests.lock().unwrap().is_empty());

    // Restored, it resumes.
    std::fs::write(f.agent(), READER).unwrap();
    let resumed = second_process
        .resume(&id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(openai(&after))
        .build()
        .await
        .unwrap();
    resumed.submit("Again.", None).unwrap().finished().await;
    assert_eq!(after.requests.lock().unwrap().len(), 1);

    // Gone, it is refused too, saying why.
    resumed.close().await.unwrap();
    drop(resumed);
    std::fs::remove_file(f.agent()).unwrap();
    let gone = second_process.resume(&id).await.unwrap().build().await;
    let message = gone.err().map(|err| err.to_string()).unwrap_or_default();
    assert!(message.contains("cannot be read now"), "{message}");
}
