//! `todo_write` and `question`.

mod common;

use common::{harness, harness_with};
use futures_util::future::BoxFuture;
use qilin_protocol::{CallStatus, ErrorCode};
use qilin_tool::Services;
use qilin_tools::{
    Answer, AnswerError, Answerer, Question, QuestionAnswerer, TodoStatus, TodoStore,
};
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

/// Answers from a script, recording what it was asked; `None` answers never come.
struct Scripted {
    reply: Option<Result<Vec<Answer>, AnswerError>>,
    asked: Mutex<Vec<Question>>,
}

impl Answerer for Scripted {
    fn answer<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> BoxFuture<'a, Result<Vec<Answer>, AnswerError>> {
        self.asked.lock().unwrap().extend_from_slice(questions);
        Box::pin(async move {
            match &self.reply {
                Some(reply) => reply.clone(),
                None => std::future::pending().await,
            }
        })
    }
}

fn answering(reply: Option<Result<Vec<Answer>, AnswerError>>) -> (common::Harness, Arc<Scripted>) {
    let answerer = Arc::new(Scripted {
        reply,
        asked: Mutex::new(Vec::new()),
    });
    let mut services = Services::default();
    services.insert(Arc::new(QuestionAnswerer(answerer.clone())));
    (harness_with(services), answerer)
}

fn questions() -> serde_json::Value {
    json!({"questions": [
        {"id": "db", "question": "Which database?", "options": ["sqlite", "postgres"]},
        {"id": "name", "question": "What is the service called?"}
    ]})
}

#[tokio::test]
async fn answers_are_paired_with_their_questions() {
    let (h, answerer) = answering(Some(Ok(vec![
        Answer {
            id: "name".into(),
            answer: vec!["ledger".into()],
        },
        Answer {
            id: "db".into(),
            answer: vec!["postgres".into()],
        },
    ])));
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
    assert_eq!(answerer.asked.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_dismissal_or_an_interruption_is_interrupted_keeping_the_questions() {
    let (h, _) = answering(Some(Err(AnswerError::Cancelled)));
    let outcome = h.call("question", questions()).await;
    assert_eq!(outcome.status, CallStatus::Interrupted);
    let message = outcome.error.unwrap().message;
    assert!(
        message.contains(
            "no answer was given to:\n- db: Which database?\n- name: What is the service called?"
        ),
        "{message}"
    );

    let (h, _) = answering(None);
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
    let (h, _) = answering(Some(Ok(vec![Answer {
        id: "db".into(),
        answer: vec!["mysql".into()],
    }])));
    let message = h.err("question", questions(), ErrorCode::ToolFailed).await;
    assert!(message.contains("does not fit its options"), "{message}");
    let (h, _) = answering(Some(Ok(vec![Answer {
        id: "db".into(),
        answer: vec!["sqlite".into()],
    }])));
    let message = h.err("question", questions(), ErrorCode::ToolFailed).await;
    assert!(
        message.contains("no answer to question `name`"),
        "{message}"
    );
}

#[tokio::test]
async fn without_an_answerer_or_with_bad_questions_the_call_fails_saying_so() {
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
