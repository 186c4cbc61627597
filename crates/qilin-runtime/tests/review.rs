//! Auto review: a reviewer model allows or denies the calls the agent's policy sends it, its
//! failures degrade safely (a person is asked, or the unattended policy refuses), too many
//! denials pause the turn, and a person's grant lets exactly the refused call run once.

#[path = "../../qilin-agent/tests/support/server.rs"]
mod server;
mod support;

use futures_util::StreamExt;
use qilin_model::{OpenAiConfig, OpenAiProvider, Script, ScriptedProvider};
use qilin_protocol::review::{ReviewFallback, ReviewRisk, ReviewVerdict, ToolReviewedEvent};
use qilin_protocol::{CallStatus, ErrorCode, Event, EventBody, FinishReason, ToolResultEvent};
use qilin_runtime::{AllowCallError, AllowError, ModelChoice, SessionHandle};
use qilin_tool::{AutoReview, RequestReply};
use server::{FakeProvider, serve, sse};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use support::{Fixture, assert_consistent, fixture, scripted, stored};

/// An agent whose `bash` calls go to the reviewer, except recursive deletes, which a rule
/// denies; `read` runs unreviewed.
fn agent(decision: &str, timeout: &str) -> String {
    format!(
        "\
name: reviewed
instructions: Run what you are asked to.
tools: [bash, read]
skills:
  available: []
review:
  rules:
    - {{ tool: bash, when: {{ command: \"rm -rf\" }}, decision: deny, reason: \"never delete trees\" }}
    - {{ tool: bash, decision: {decision} }}
  auto:
    model: scripted:reviewer.yaml
    rules:
      - \"Allowed: echo, builds and tests.\"
      - \"Never: pushing, deleting outside the workspace.\"
    timeout: {timeout}
"
    )
}

const ALLOW: &str = r#"{"decision":"allow","risk":"low","user_reason":"An echo changes nothing.","model_message":""}"#;
const DENY: &str = r#"{"decision":"deny","risk":"high","user_reason":"Writing that file was not asked for.","model_message":"Writing out.txt is outside what the user asked; ask them first."}"#;

/// A scripted reviewer answering `answer` to every review, after `delay_ms` per event.
fn scripted_reviewer(answer: &str, delay_ms: u64) -> (Arc<ScriptedProvider>, ModelChoice) {
    let yaml = format!("chunk_delay_ms: {delay_ms}\nturns:\n  - say: '{answer}'\n");
    let provider = Arc::new(ScriptedProvider::new(
        Script::parse(&yaml, Path::new("reviewer.yaml")).unwrap(),
    ));
    let choice = ModelChoice::Provider {
        provider: Arc::clone(&provider) as Arc<dyn qilin_model::ModelProvider>,
        model: "reviewer".into(),
        label: "scripted:reviewer.yaml".into(),
    };
    (provider, choice)
}

/// A reviewer behind a local server speaking the OpenAI streaming format, answering `answers`
/// in order.
async fn http_reviewer(answers: Vec<String>) -> (FakeProvider, ModelChoice) {
    let server = serve(answers).await;
    let provider = OpenAiProvider::new(OpenAiConfig::new(
        format!("{}/v1", server.base_url),
        Some("key".into()),
    ))
    .unwrap();
    let choice = ModelChoice::Provider {
        provider: Arc::new(provider),
        model: "judge".into(),
        label: "openai:judge".into(),
    };
    (server, choice)
}

/// A streamed Chat Completions answer saying `text`.
fn says_sse(text: &str) -> String {
    let text = serde_json::to_string(text).unwrap();
    let delta = format!(
        r#"{{"id":"r","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"role":"assistant","content":{text}}},"finish_reason":null}}]}}"#
    );
    sse(&[
        (None, delta.as_str()),
        (
            None,
            r#"{"id":"r","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ),
        (None, "[DONE]"),
    ])
}

/// A whole HTTP response refusing the request with `status`.
fn refused(status: &str) -> String {
    let body = r#"{"error":{"message":"invalid api key","type":"auth"}}"#;
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The agent's script: one `bash` call per command, each in its own answer, then `done`.
fn commands(list: &[&str]) -> String {
    let mut script = String::from("turns:\n");
    for command in list {
        script.push_str(&format!(
            "  - calls: [{{tool: bash, args: {{command: \"{command}\"}}}}]\n"
        ));
    }
    script.push_str("  - say: done\n");
    script
}

async fn session(
    f: &Fixture,
    script: &str,
    reviewer: ModelChoice,
    attended: bool,
) -> SessionHandle {
    f.builder()
        .model(scripted(script))
        .reviewer_model(reviewer)
        .attended(attended)
        .build()
        .await
        .unwrap()
}

fn reviews(events: &[Event]) -> Vec<&ToolReviewedEvent> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolReviewed(reviewed) => Some(reviewed),
            _ => None,
        })
        .collect()
}

fn result<'e>(events: &'e [Event], call_id: &str) -> &'e ToolResultEvent {
    events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.call_id == call_id => Some(result),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {call_id}"))
}

fn text(result: &ToolResultEvent) -> String {
    serde_json::to_string(&result.content).unwrap()
}

fn position(events: &[Event], wanted: impl Fn(&EventBody) -> bool) -> usize {
    events.iter().position(|event| wanted(&event.body)).unwrap()
}

#[tokio::test]
async fn an_allowed_call_runs_and_the_reviewer_saw_the_call_and_the_prompt_but_no_tool_result() {
    let f = fixture(&agent("auto", "5s"));
    let (server, reviewer) = http_reviewer(vec![says_sse(ALLOW)]).await;
    let script = "turns:\n  - calls: [{tool: read, args: {path: notes.txt}}]\n  - calls: [{tool: bash, args: {command: \"echo hi\"}}]\n  - say: done\n";
    let session = session(&f, script, reviewer, false).await;
    let summary = session
        .submit("Say hi in the shell please", None)
        .unwrap()
        .finished()
        .await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let events = stored(&session).await;
    assert_consistent(&events);

    let reviewed = reviews(&events);
    assert_eq!(reviewed.len(), 1, "only the bash call is reviewed");
    let review = &reviewed[0].review;
    assert_eq!(reviewed[0].call_id, "call_2");
    assert_eq!(
        (review.verdict, review.risk, review.reviewer.as_str()),
        (ReviewVerdict::Allow, Some(ReviewRisk::Low), "openai:judge")
    );
    assert_eq!(review.user_reason, "An echo changes nothing.");
    assert_eq!(review.fallback, None);
    let ran = result(&events, "call_2");
    assert_eq!(ran.status, CallStatus::Ok);
    let start = position(
        &events,
        |body| matches!(body, EventBody::ToolStart(s) if s.call_id == "call_2"),
    );
    let at = position(&events, |body| matches!(body, EventBody::ToolReviewed(_)));
    let end = position(
        &events,
        |body| matches!(body, EventBody::ToolResult(r) if r.call_id == "call_2"),
    );
    assert!(
        start < at && at < end,
        "tool.start, tool.reviewed, tool.result"
    );

    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].to_string();
    assert!(sent.contains("Say hi in the shell please"), "{sent}");
    assert!(
        sent.contains("echo hi") && sent.contains("Never: pushing"),
        "{sent}"
    );
    assert!(
        !sent.contains("first line"),
        "the reviewer never sees a tool's result: {sent}"
    );
}

#[tokio::test]
async fn a_denial_gives_the_model_the_model_message_and_the_person_the_user_reason() {
    let f = fixture(&agent("auto", "5s"));
    let (_, reviewer) = scripted_reviewer(DENY, 0);
    let session = session(&f, &commands(&["echo x > out.txt"]), reviewer, true).await;
    let summary = session.submit("go", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let events = stored(&session).await;
    assert_consistent(&events);
    let denied = result(&events, "call_1");
    assert_eq!(denied.status, CallStatus::Denied);
    assert_eq!(denied.error_code, Some(ErrorCode::AutoReviewDenied));
    assert_eq!(
        denied.user_reason.as_deref(),
        Some("Writing that file was not asked for.")
    );
    let model_sees = text(denied);
    assert!(
        model_sees.contains("Writing out.txt is outside what the user asked; ask them first."),
        "{model_sees}"
    );
    assert!(
        !f.workspace().join("out.txt").exists(),
        "the call never ran"
    );
    let review = &reviews(&events)[0].review;
    assert_eq!(
        (review.verdict, review.risk),
        (ReviewVerdict::Deny, Some(ReviewRisk::High))
    );
    // The list of refusals shows it, not yet allowed.
    let listed = session.reviews().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].call_id, "call_1");
    assert!(!listed[0].granted);
}

#[tokio::test]
async fn a_reviewer_error_in_an_attended_session_asks_the_person_saying_so() {
    let f = fixture(&agent("auto", "5s"));
    let (_server, reviewer) = http_reviewer(vec![refused("401 Unauthorized")]).await;
    let session = session(&f, &commands(&["echo asked > asked.txt"]), reviewer, true).await;
    let mut events = session.subscribe_from(0);
    let turn = session.submit("go", None).unwrap();
    let request_id = loop {
        let event = events.next().await.unwrap().unwrap();
        if let EventBody::RequestOpened(opened) = event.body {
            let qilin_protocol::RequestAsk::Approval { reason, .. } = &opened.ask else {
                panic!("an approval");
            };
            assert!(reason.contains("could not judge"), "{reason}");
            break opened.request_id;
        }
    };
    session
        .resolve(&request_id, RequestReply::Approve, "test")
        .unwrap();
    assert_eq!(turn.finished().await.reason, FinishReason::Completed);
    let events = stored(&session).await;
    assert_consistent(&events);
    let review = &reviews(&events)[0].review;
    assert_eq!(review.verdict, ReviewVerdict::Failed);
    assert_eq!(review.fallback, Some(ReviewFallback::AskedPerson));
    assert_eq!(review.risk, None);
    assert!(review.user_reason.contains("401"), "{}", review.user_reason);
    assert_eq!(result(&events, "call_1").status, CallStatus::Ok);
    assert!(f.workspace().join("asked.txt").exists());
}

#[tokio::test]
async fn a_reviewer_that_never_answers_times_out_and_the_unattended_policy_refuses() {
    let f = fixture(&agent("auto", "300ms"));
    let (_, reviewer) = scripted_reviewer(ALLOW, 60_000);
    let session = session(&f, &commands(&["echo late > late.txt"]), reviewer, false).await;
    let started = std::time::Instant::now();
    let summary = session.submit("go", None).unwrap().finished().await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(summary.reason, FinishReason::Completed);
    let events = stored(&session).await;
    assert_consistent(&events);
    let refused = result(&events, "call_1");
    assert_eq!(refused.error_code, Some(ErrorCode::AutoReviewTimeout));
    assert_eq!(refused.status, CallStatus::Denied);
    assert!(
        text(refused).contains("did not answer within 0.3 s"),
        "{}",
        text(refused)
    );
    let review = &reviews(&events)[0].review;
    assert_eq!(review.verdict, ReviewVerdict::TimedOut);
    assert_eq!(review.fallback, Some(ReviewFallback::UnattendedPolicy));
    assert!(review.latency_ms >= 300);
    assert!(!f.workspace().join("late.txt").exists());
}

#[tokio::test]
async fn a_malformed_verdict_is_a_failure_never_an_allow() {
    let f = fixture(&agent("auto", "5s"));
    let (_, reviewer) = scripted_reviewer("Sure, go ahead, looks fine!", 0);
    let session = session(&f, &commands(&["echo sure > sure.txt"]), reviewer, false).await;
    let summary = session.submit("go", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let events = stored(&session).await;
    assert_consistent(&events);
    let refused = result(&events, "call_1");
    assert_eq!(refused.error_code, Some(ErrorCode::AutoReviewFailed));
    assert!(
        refused
            .user_reason
            .as_deref()
            .unwrap()
            .contains("not a verdict"),
        "{:?}",
        refused.user_reason
    );
    assert_eq!(reviews(&events)[0].review.verdict, ReviewVerdict::Failed);
    assert!(!f.workspace().join("sure.txt").exists(), "never run");
}

#[tokio::test]
async fn three_denials_in_a_row_pause_the_turn_and_say_why() {
    let f = fixture(&agent("auto", "5s"));
    let (reviewer_model, reviewer) = scripted_reviewer(DENY, 0);
    let script = commands(&["echo 1 > a", "echo 2 > b", "echo 3 > c", "echo 4 > d"]);
    let session = session(&f, &script, reviewer, true).await;
    let summary = session.submit("go", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Interrupted);
    let message = summary.error.unwrap();
    assert!(message.contains("denied 3 calls in a row"), "{message}");
    assert_eq!(
        reviewer_model.requests_answered(),
        3,
        "the fourth call never came"
    );
    let events = stored(&session).await;
    assert_consistent(&events);
    let open = events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ReviewCircuitOpen(open) => Some(open),
            _ => None,
        })
        .unwrap();
    assert_eq!((open.denials_in_a_row, open.denials_in_window), (3, 3));
    assert_eq!(open.message, message);
    let finished = events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::TurnFinished { message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(finished.as_deref(), Some(message.as_str()));
}

#[tokio::test]
async fn a_grant_lets_the_exact_retry_run_once_and_not_a_changed_call() {
    let f = fixture(&agent("auto", "5s"));
    let (reviewer_model, reviewer) = scripted_reviewer(DENY, 0);
    let script = "\
turns:
  - calls: [{tool: bash, args: {command: \"echo pushed > out.txt\"}}]
  - say: the reviewer refused
  - calls: [{tool: bash, args: {command: \"echo pushed > out.txt\"}}]
  - calls: [{tool: bash, args: {command: \"echo pushed! > out.txt\"}}]
  - calls: [{tool: bash, args: {command: \"echo pushed > out.txt\"}}]
  - say: done
";
    let session = session(&f, script, reviewer, true).await;
    let summary = session.submit("push it", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    assert_eq!(reviewer_model.requests_answered(), 1);

    let not_refused = session.allow_call("call_9", false).await.unwrap_err();
    assert!(matches!(
        not_refused,
        AllowCallError::Refused(AllowError::UnknownCall(_))
    ));
    let grant = session.allow_call("call_1", true).await.unwrap();
    assert_eq!(grant.tool_name, "bash");
    assert_eq!(grant.arguments["command"], "echo pushed > out.txt");
    // The retry turn starts by itself; wait for it to end.
    let mut events = session.subscribe_from(0);
    let mut finished = 0;
    while finished < 2 {
        let event = events.next().await.unwrap().unwrap();
        if matches!(event.body, EventBody::TurnFinished { .. }) {
            finished += 1;
        }
    }
    let events = stored(&session).await;
    assert_consistent(&events);
    let retry_prompt = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::TurnStarted { prompt, .. } => Some(prompt.clone()),
            _ => None,
        })
        .nth(1)
        .unwrap();
    assert!(retry_prompt.contains("call_1"), "{retry_prompt}");
    // The exact retry ran without asking the reviewer, and used the grant.
    assert_eq!(result(&events, "call_2").status, CallStatus::Ok);
    assert!(reviews(&events).iter().all(|r| r.call_id != "call_2"));
    let used: Vec<_> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ReviewGranted(granted) => Some(granted.grant.used_by.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(used, vec![None, Some("call_2".to_string())]);
    // A changed argument is reviewed (and denied); the same call again is too: used once.
    assert_eq!(
        result(&events, "call_3").error_code,
        Some(ErrorCode::AutoReviewDenied)
    );
    assert_eq!(
        result(&events, "call_4").error_code,
        Some(ErrorCode::AutoReviewDenied)
    );
    assert_eq!(reviewer_model.requests_answered(), 3);
    let listed = session.reviews().await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|entry| (entry.call_id.as_str(), entry.granted))
            .collect::<Vec<_>>(),
        vec![("call_4", false), ("call_3", false), ("call_1", true)]
    );
}

#[tokio::test]
async fn a_deny_rule_wins_over_a_grant_and_the_reviewer() {
    let f = fixture(&agent("auto", "5s"));
    let (reviewer_model, reviewer) = scripted_reviewer(ALLOW, 0);
    let session = session(&f, &commands(&["rm -rf build"]), reviewer, true).await;
    // A grant for exactly that call (as a person's "allow" of an earlier refusal makes).
    let auto = session
        .executor()
        .session()
        .services()
        .get::<AutoReview>()
        .unwrap();
    let arguments = serde_json::json!({"command": "rm -rf build"});
    auto.grant(
        session.executor().session().events(),
        "call_0",
        "bash",
        &arguments,
    );
    let summary = session.submit("clean", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let events = stored(&session).await;
    assert_consistent(&events);
    let denied = result(&events, "call_1");
    assert_eq!(denied.error_code, Some(ErrorCode::AutoReviewDenied));
    assert_eq!(denied.user_reason.as_deref(), Some("never delete trees"));
    assert!(reviews(&events).is_empty(), "the reviewer was not asked");
    assert_eq!(reviewer_model.requests_answered(), 0);
    assert!(auto.grants()[0].used_by.is_none(), "the grant was not used");
    // A call a rule denied is not the reviewer's to have overridden.
    assert!(matches!(
        session.allow_call("call_1", false).await.unwrap_err(),
        AllowCallError::Refused(AllowError::NotRefusedByReviewer(_))
    ));
}

#[tokio::test]
async fn an_unattended_turn_whose_reviewer_is_down_is_refused_with_a_reason_the_model_reads() {
    // `ask` in a turn nobody attends goes to the reviewer, which is down.
    let f = fixture(&agent("ask", "5s"));
    let (_server, reviewer) = http_reviewer(vec![refused("401 Unauthorized")]).await;
    let session = session(&f, &commands(&["echo night > night.txt"]), reviewer, true).await;
    let summary = session
        .submit_unattended("nightly run")
        .unwrap()
        .finished()
        .await;
    assert_eq!(summary.reason, FinishReason::Completed, "the turn goes on");
    let events = stored(&session).await;
    assert_consistent(&events);
    assert!(
        !events
            .iter()
            .any(|event| matches!(event.body, EventBody::RequestOpened(_))),
        "nobody was asked"
    );
    let refused = result(&events, "call_1");
    assert_eq!(refused.error_code, Some(ErrorCode::AutoReviewFailed));
    let model_sees = text(refused);
    assert!(
        model_sees.contains("no one can approve it here"),
        "{model_sees}"
    );
    let review = &reviews(&events)[0].review;
    assert_eq!(review.fallback, Some(ReviewFallback::UnattendedPolicy));
    assert!(!f.workspace().join("night.txt").exists());
    // The refusal can be allowed afterwards.
    let grant = session.allow_call("call_1", false).await.unwrap();
    assert_eq!(grant.call_id, "call_1");
}

#[tokio::test]
async fn grants_come_back_when_the_session_is_resumed() {
    let f = fixture(&agent("auto", "5s"));
    let (_, reviewer) = scripted_reviewer(DENY, 0);
    let script = commands(&["echo later > later.txt"]);
    let session = session(&f, &script, reviewer, true).await;
    session.submit("go", None).unwrap().finished().await;
    session.allow_call("call_1", false).await.unwrap();
    let id = session.id().to_string();
    session.close().await.unwrap();
    drop(session);

    let (_, reviewer) = scripted_reviewer(DENY, 0);
    let resumed = f
        .runtime
        .resume(&id)
        .await
        .unwrap()
        .model(scripted(&script))
        .reviewer_model(reviewer)
        .no_sandbox(true)
        .build()
        .await
        .unwrap();
    let auto = resumed
        .executor()
        .session()
        .services()
        .get::<AutoReview>()
        .unwrap();
    let grants = auto.grants();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].call_id, "call_1");
    assert!(grants[0].used_by.is_none());
    assert_eq!(
        resumed.executor().session().prompts(),
        vec!["go".to_string()],
        "the reviewer still sees the earlier prompts"
    );
}
