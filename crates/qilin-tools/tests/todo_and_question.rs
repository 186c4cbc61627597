//! `todo_write` and `question`.

mod common;

use common::{harness, harness_attended, harness_with};
use qilin_protocol::{CallStatus, ErrorCode, EventBody, RequestAsk, RequestResolution};
use qilin_tool::{RequestReply, ResolveError, Services};
use qilin_tools::{Answer, Question, TodoStatus, TodoStore};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn todo_write_replaces_the_list_and_keeps_it_for_the_session() {
    let store = Arc::new(TodoStore::new());
    let mut services = Services::default();
    services.insert(Arc::clone(&store));
    let h = harness_with(services);
    let (output, text) = h
        .ok(
            "todo_write",
            json!({"todos": [
                {"id": "1", "content": "Write the parser", "status": "completed"},
                {"id": "2", "content": "Test it", "status": "in_progress"},
                {"id": "3", "content": "Document it", "status": "pending"}
            ]}),
        )
        .await;
    assert_eq!(
        (
            output["pending"].as_u64(),
            output["in_progress"].as_u64(),
            output["completed"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    assert!(
        text.contains(
            "- [x] Write the parser (id 1)\n- [~] Test it (id 2)\n- [ ] Document it (id 3)"
        ),
        "{text}"
    );
    assert_eq!(store.items().len(), 3);
    h.ok(
        "todo_write",
        json!({"todos": [{"id": "2", "content": "Test it", "status": "completed"}]}),
    )
    .await;
    let items = store.items();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].status, TodoStatus::Completed);
}

#[tokio::test]
async fn todo_write_refuses_duplicate_ids_bad_statuses_and_a_missing_store() {
    let h = harness();
    let message = h
        .err(
            "todo_write",
            json!({"todos": [
                {"id": "a", "content": "x", "status": "pending"},
                {"id": "a", "content": "y", "status": "pending"}
            ]}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`todos.1.id` `a` is used twice"),
        "{message}"
    );
    let message = h
        .err(
            "todo_write",
            json!({"todos": [{"id": "a", "content": "x", "status": "done"}]}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("todos.0.status"), "{message}");
    let bare = harness_with(Services::default());
    let message = bare
        .err(
            "todo_write",
            json!({"todos": [{"id": "a", "content": "x", "status": "pending"}]}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(message.contains("no todo store"), "{message}");
}

/// A person answering the session's questions from another task: each reply in turn goes to
/// the next question request (none left: the request waits), recording what was asked and
/// what each answer came to.
struct Person {
    asked: Mutex<Vec<Question>>,
    answered: Mutex<Vec<Result<(), ResolveError>>>,
}

fn answering(replies: Vec<RequestReply>) -> (common::Harness, Arc<Person>) {
    let h = harness_attended();
    let person = Arc::new(Person {
        asked: Mutex::new(Vec::new()),
        answered: Mutex::new(Vec::new()),
    });
    let executor = h.executor.clone();
    let mut events = executor.session().events().subscribe();
    let recording = Arc::clone(&person);
    tokio::spawn(async move {
        let mut replies = replies.into_iter();
        while let Some(event) = events.recv().await {
            let EventBody::RequestOpened(opened) = event.body else {
                continue;
            };
            if let RequestAsk::Question { questions } = &opened.ask {
                recording.asked.lock().unwrap().extend_from_slice(questions);
            }
            for reply in replies.by_ref() {
                let session = executor.session();
                let result =
                    session
                        .requests()
                        .resolve(session.events(), &opened.request_id, reply, "test");
                let refused = result.is_err();
                recording.answered.lock().unwrap().push(result.map(|_| ()));
                if !refused {
                    break;
                }
            }
        }
    });
    (h, person)
}

fn questions() -> serde_json::Value {
    json!({"questions": [
        {"id": "db", "question": "Which database?", "options": ["sqlite", "postgres"]},
        {"id": "name", "question": "What is the service called?"}
    ]})
}

fn answer(id: &str, text: &str) -> Answer {
    Answer {
        id: id.into(),
        answer: vec![text.into()],
    }
}

#[tokio::test]
async fn answers_are_paired_with_their_questions() {
    let (mut h, person) = answering(vec![RequestReply::Answer(vec![
        answer("name", "ledger"),
        answer("db", "postgres"),
    ])]);
    let (output, text) = h.ok("question", questions()).await;
    assert_eq!(
        output["answers"],
        json!([
            {"id": "db", "question": "Which database?", "answer": ["postgres"]},
            {"id": "name", "question": "What is the service called?", "answer": ["ledger"]}
        ])
    );
    assert_eq!(
        text,
        "Which database? (db): postgres\nWhat is the service called? (name): ledger"
    );
    assert_eq!(person.asked.lock().unwrap().len(), 2);
    let resolved: Vec<RequestResolution> = h
        .drain()
        .into_iter()
        .filter_map(|event| match event.body {
            EventBody::RequestResolved(resolved) => Some(resolved.resolution),
            _ => None,
        })
        .collect();
    assert!(
        matches!(resolved.as_slice(), [RequestResolution::Answered { .. }]),
        "{resolved:?}"
    );
}

#[tokio::test]
async fn a_dismissal_or_an_interruption_is_interrupted_keeping_the_questions() {
    let (h, _) = answering(vec![RequestReply::Dismiss]);
    let outcome = h.call("question", questions()).await;
    assert_eq!(outcome.status, CallStatus::Interrupted);
    let message = outcome.error.unwrap().message;
    assert!(
        message.contains(
            "no answer was given to:\n- db: Which database?\n- name: What is the service called?"
        ),
        "{message}"
    );

    let (h, _) = answering(Vec::new());
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let outcome = h.call_cancellable("question", questions(), cancel).await;
    assert_eq!(outcome.status, CallStatus::Interrupted);
    assert_eq!(outcome.output, None);
    assert!(outcome.error.unwrap().message.contains("Which database?"));
}

#[tokio::test]
async fn answers_that_do_not_fit_are_refused_and_none_is_invented() {
    let (h, person) = answering(vec![
        RequestReply::Answer(vec![answer("db", "mysql"), answer("name", "x")]),
        RequestReply::Answer(vec![answer("db", "sqlite")]),
        RequestReply::Approve,
        RequestReply::Dismiss,
    ]);
    let outcome = h.call("question", questions()).await;
    assert_eq!(outcome.status, CallStatus::Interrupted, "{outcome:?}");
    let answered = person.answered.lock().unwrap();
    let problems: Vec<String> = answered
        .iter()
        .map(|result| match result {
            Ok(()) => "ok".to_string(),
            Err(err) => err.to_string(),
        })
        .collect();
    assert!(
        problems[0].contains("`mysql` is not an option"),
        "{problems:?}"
    );
    assert!(
        problems[1].contains("`name` needs exactly one answer"),
        "{problems:?}"
    );
    assert!(problems[2].contains("is a question"), "{problems:?}");
    assert_eq!(problems[3], "ok");
}

#[tokio::test]
async fn an_answer_after_the_request_ended_is_refused() {
    let (h, person) = answering(vec![RequestReply::Dismiss]);
    h.call("question", questions()).await;
    let session = h.executor.session();
    let late = session.requests().resolve(
        session.events(),
        "req-1",
        RequestReply::Answer(vec![answer("db", "sqlite"), answer("name", "x")]),
        "late client",
    );
    assert!(
        matches!(&late, Err(ResolveError::Ended { ended: "dismissed", resolved_by, .. }) if resolved_by == "test"),
        "{late:?}"
    );
    assert_eq!(person.answered.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn without_anyone_to_answer_or_with_bad_questions_the_call_fails_saying_so() {
    let h = harness();
    let message = h.err("question", questions(), ErrorCode::ToolFailed).await;
    assert!(message.contains("nobody can answer"), "{message}");
    let message = h
        .err(
            "question",
            json!({"questions": []}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("ask at least one question"));
    let message = h
        .err(
            "question",
            json!({"questions": [{"id": "a", "question": "Pick?", "multi_select": true}]}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("needs `options`"), "{message}");
}
