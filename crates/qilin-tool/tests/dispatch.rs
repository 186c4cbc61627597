//! Every branch of the execution layer, with small test tools.

use qilin_protocol::{
    CallPresentation, CallStatus, CallerKind, ContentBlock, Detail, ErrorCode, Event, EventBody,
    parse_spill_notice,
};
use qilin_test_tools::Echo;
use qilin_tool::{
    Caller, ExecConfig, Executor, OutputCap, PolicyConfig, RequestReply, Requests, RulePolicy,
    Session, Tool, ToolCall, ToolContext, ToolError, ToolRegistry, ToolResult,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Deserialize, JsonSchema)]
struct LookupArgs {
    /// The customer's id.
    customer_id: String,
}

/// Looks a customer up in the CRM.
#[derive(qilin_tool::Tool)]
#[tool(name = "crm_lookup", code_mode_only)]
struct CrmLookup;

impl Tool for CrmLookup {
    type Args = LookupArgs;
    type Output = Value;
    fn prompt_hint(&self) -> &str {
        ""
    }
    fn present(&self, args: &LookupArgs) -> CallPresentation {
        CallPresentation::new("Look up customer", &args.customer_id)
    }
    fn before_detail(&self, _args: &LookupArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _args: &LookupArgs, _result: &ToolResult<Value>) -> Option<Detail> {
        None
    }
    async fn call(&self, args: LookupArgs, _cx: &ToolContext) -> ToolResult<Value> {
        Ok(json!({"id": args.customer_id, "tier": "gold"}))
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct BehaveArgs {
    /// What to do: `sleep`, `panic`, `fail`, `flood`, `print`.
    mode: String,
    /// Milliseconds to sleep, or bytes to print.
    amount: u64,
}

/// Misbehaves on request.
#[derive(qilin_tool::Tool)]
#[tool(name = "behave")]
struct Behave;

impl Tool for Behave {
    type Args = BehaveArgs;
    type Output = String;
    fn prompt_hint(&self) -> &str {
        "For tests."
    }
    fn present(&self, args: &BehaveArgs) -> CallPresentation {
        CallPresentation::new("Behave", &args.mode)
    }
    fn before_detail(&self, _args: &BehaveArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _args: &BehaveArgs, result: &ToolResult<String>) -> Option<Detail> {
        result.as_ref().err().map(|e| Detail::Text {
            text: e.code.to_string(),
        })
    }
    async fn call(&self, args: BehaveArgs, cx: &ToolContext) -> ToolResult<String> {
        match args.mode.as_str() {
            "sleep" => {
                tokio::time::sleep(Duration::from_millis(args.amount)).await;
                Ok("slept".into())
            }
            "track" => {
                let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
                MOST_RUNNING.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(args.amount)).await;
                RUNNING.fetch_sub(1, Ordering::SeqCst);
                Ok("tracked".into())
            }
            "panic" => panic!("the tool broke on purpose"),
            "fail" => Err(ToolError::failed("the disk is full")),
            "print" => {
                // A command printing `amount` bytes as it runs, every byte reported live.
                let chunk = "y\n".repeat(8 * 1024);
                let mut left = args.amount as usize;
                while left > 0 {
                    let part = &chunk[..left.min(chunk.len())];
                    cx.progress(part);
                    left -= part.len();
                    tokio::task::yield_now().await;
                }
                Ok("printed".into())
            }
            "flood" => {
                cx.progress("flooding");
                Ok((0..args.amount)
                    .map(|i| char::from(b'a' + (i % 26) as u8))
                    .collect())
            }
            other => Err(ToolError::invalid_arguments(format!(
                "unknown mode `{other}`"
            ))),
        }
    }
}

/// Calls of mode `track` running now, and the most that ever ran at once.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST_RUNNING: AtomicUsize = AtomicUsize::new(0);

struct Harness {
    executor: Executor,
    events: UnboundedReceiver<Event>,
    data: tempfile::TempDir,
}

fn harness(config: ExecConfig, policy: Option<PolicyConfig>) -> Harness {
    harness_with(config, policy, Requests::unattended())
}

fn harness_with(config: ExecConfig, policy: Option<PolicyConfig>, requests: Requests) -> Harness {
    let mut registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    registry.register(CrmLookup).unwrap();
    registry.register(Behave).unwrap();
    let data = tempfile::tempdir().unwrap();
    let session = Arc::new(
        Session::new("s1", data.path(), data.path().join("session")).with_requests(requests),
    );
    let events = session.events().subscribe();
    let reviewer: Arc<dyn qilin_tool::Reviewer> = match policy {
        Some(policy) => Arc::new(RulePolicy::new(policy).unwrap()),
        None => Arc::new(qilin_tool::AllowAll),
    };
    let executor = Executor::with_policy(Arc::new(registry), session, reviewer, config);
    Harness {
        executor,
        events,
        data,
    }
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        call_id: id.into(),
        name: name.into(),
        arguments,
    }
}

fn drain(events: &mut UnboundedReceiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(event) = events.try_recv() {
        out.push(event);
    }
    out
}

fn text(content: &[ContentBlock]) -> &str {
    match content {
        [ContentBlock::Text { text }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

#[tokio::test]
async fn a_good_call_runs_and_is_recorded_start_then_result() {
    let mut h = harness(ExecConfig::default(), None);
    let outcome = h
        .executor
        .dispatch(
            call("c1", "echo", json!({"text": "hi", "times": 2})),
            Caller::Direct,
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Ok);
    assert_eq!(outcome.output, Some(json!({"text": "hihi", "length": 4})));
    assert!(text(&outcome.content).contains("\"text\": \"hihi\""));

    let events = drain(&mut h.events);
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![1, 2]);
    let EventBody::ToolStart(start) = &events[0].body else {
        panic!("{events:?}")
    };
    assert_eq!(start.call_id, "c1");
    assert_eq!(start.caller, CallerKind::Direct);
    assert_eq!(start.parent_call_id, None);
    assert_eq!(start.presentation, CallPresentation::new("Echo", "hi"));
    let EventBody::ToolResult(result) = &events[1].body else {
        panic!("{events:?}")
    };
    assert_eq!(result.status, CallStatus::Ok);
    assert_eq!(
        result.detail,
        Some(Detail::Text {
            text: "hihi".into()
        })
    );
}

#[tokio::test]
async fn an_unknown_name_is_refused_with_the_closest_names() {
    let mut h = harness(ExecConfig::default(), None);
    let outcome = h
        .executor
        .dispatch(call("c1", "ecoh", json!({})), Caller::Direct)
        .await;
    assert_eq!(outcome.status, CallStatus::Error);
    assert_eq!(outcome.error.as_ref().unwrap().code, ErrorCode::UnknownTool);
    assert!(
        text(&outcome.content).contains("Did you mean `echo`?"),
        "{:?}",
        outcome.content
    );
    let events = drain(&mut h.events);
    assert!(
        matches!(&events[..], [a, b] if matches!(a.body, EventBody::ToolStart(_)) && matches!(b.body, EventBody::ToolResult(_)))
    );
}

#[tokio::test]
async fn a_code_mode_only_tool_is_refused_directly_but_runs_from_code() {
    let mut h = harness(ExecConfig::default(), None);
    let direct = h
        .executor
        .dispatch(
            call("c1", "crm_lookup", json!({"customer_id": "42"})),
            Caller::Direct,
        )
        .await;
    assert_eq!(direct.error.unwrap().code, ErrorCode::CodeModeOnly);
    assert!(text(&direct.content).contains("sdk.tool.call(\"crm_lookup\""));

    let from_code = h
        .executor
        .dispatch(
            call("c2", "crm_lookup", json!({"customer_id": "42"})),
            Caller::Code {
                parent_call_id: "run1".into(),
            },
        )
        .await;
    assert_eq!(from_code.status, CallStatus::Ok);
    assert_eq!(from_code.output.unwrap()["tier"], "gold");

    let events = drain(&mut h.events);
    let code_events: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolStart(s) if s.call_id == "c2" => {
                Some((s.caller, s.parent_call_id.clone()))
            }
            EventBody::ToolResult(r) if r.call_id == "c2" => {
                Some((r.caller, r.parent_call_id.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        code_events,
        vec![
            (CallerKind::Code, Some("run1".into())),
            (CallerKind::Code, Some("run1".into()))
        ]
    );
}

#[tokio::test]
async fn each_kind_of_invalid_argument_names_the_path_expected_and_received() {
    let h = harness(ExecConfig::default(), None);
    let cases = [
        (json!({}), "missing required argument `text`"),
        (json!({"text": 5}), "`text`: expected string, got integer 5"),
        (json!({"text": "a", "times": -1}), "`times`"),
        (
            json!({"text": "a", "times": "two"}),
            "`times`: expected integer, got string \"two\"",
        ),
        (
            json!("just a string"),
            "the arguments: expected object, got string",
        ),
    ];
    for (arguments, expected) in cases {
        let outcome = h
            .executor
            .dispatch(call("c", "echo", arguments.clone()), Caller::Direct)
            .await;
        assert_eq!(
            outcome.error.as_ref().map(|e| e.code),
            Some(ErrorCode::InvalidArguments),
            "{arguments}"
        );
        let message = text(&outcome.content);
        assert!(message.contains(expected), "{arguments}: {message}");
        assert!(message.contains("The parameter schema is:"), "{message}");
    }
}

#[tokio::test]
async fn null_for_an_optional_argument_is_the_same_as_leaving_it_out() {
    let h = harness(ExecConfig::default(), None);
    let outcome = h
        .executor
        .dispatch(
            call("c", "echo", json!({"text": "a", "times": null})),
            Caller::Direct,
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.content);
}

#[tokio::test]
async fn a_denial_carries_the_rules_reason() {
    let policy: PolicyConfig = serde_json::from_value(json!({
        "rules": [{"tool": "echo", "when": {"text": "secret"}, "decision": "deny", "reason": "secrets stay put"}]
    }))
    .unwrap();
    let mut h = harness(ExecConfig::default(), Some(policy));
    let denied = h
        .executor
        .dispatch(
            call("c1", "echo", json!({"text": "the secret"})),
            Caller::Direct,
        )
        .await;
    assert_eq!(denied.status, CallStatus::Denied);
    assert_eq!(
        denied.error.as_ref().unwrap().code,
        ErrorCode::AutoReviewDenied
    );
    assert!(text(&denied.content).contains("secrets stay put"));
    let allowed = h
        .executor
        .dispatch(
            call("c2", "echo", json!({"text": "public"})),
            Caller::Direct,
        )
        .await;
    assert_eq!(allowed.status, CallStatus::Ok);
    let events = drain(&mut h.events);
    assert_eq!(events.len(), 4, "every start has its result: {events:?}");
    // The person is shown the rule's own reason; the model's message stays in the content.
    let user_reasons: Vec<(String, Option<String>, String)> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) => Some((
                result.call_id.clone(),
                result.user_reason.clone(),
                text(&result.content).to_string(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(user_reasons[0].0, "c1");
    assert_eq!(user_reasons[0].1.as_deref(), Some("secrets stay put"));
    assert!(
        user_reasons[0].2.contains("Do not retry"),
        "{user_reasons:?}"
    );
    assert_eq!(
        user_reasons[1].1, None,
        "an allowed call has no denial reason"
    );
}

#[tokio::test]
async fn a_call_past_its_deadline_times_out() {
    let config = ExecConfig {
        timeout: Some(Duration::from_millis(50)),
        ..ExecConfig::default()
    };
    let h = harness(config, None);
    let outcome = h
        .executor
        .dispatch(
            call("c1", "behave", json!({"mode": "sleep", "amount": 10_000})),
            Caller::Direct,
        )
        .await;
    assert_eq!(outcome.error.as_ref().unwrap().code, ErrorCode::Timeout);
    assert_eq!(outcome.status, CallStatus::Error);
    assert!(outcome.duration < Duration::from_secs(5));
}

#[tokio::test]
async fn cancellation_interrupts_a_running_call() {
    let mut h = harness(ExecConfig::default(), None);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        trigger.cancel();
    });
    let outcome = h
        .executor
        .dispatch_cancellable(
            call("c1", "behave", json!({"mode": "sleep", "amount": 10_000})),
            Caller::Direct,
            cancel,
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Interrupted);
    assert_eq!(outcome.error.unwrap().code, ErrorCode::Interrupted);
    let events = drain(&mut h.events);
    let EventBody::ToolResult(result) = &events.last().unwrap().body else {
        panic!()
    };
    assert_eq!(result.status, CallStatus::Interrupted);
    assert_eq!(
        result.detail,
        Some(Detail::Text {
            text: "INTERRUPTED".into()
        })
    );
}

#[tokio::test]
async fn a_panicking_tool_is_a_failed_call_and_the_runtime_goes_on() {
    let h = harness(ExecConfig::default(), None);
    let outcome = h
        .executor
        .dispatch(
            call("c1", "behave", json!({"mode": "panic", "amount": 0})),
            Caller::Direct,
        )
        .await;
    assert_eq!(outcome.error.as_ref().unwrap().code, ErrorCode::ToolFailed);
    assert!(text(&outcome.content).contains("the tool broke on purpose"));
    let next = h
        .executor
        .dispatch(
            call("c2", "echo", json!({"text": "still here"})),
            Caller::Direct,
        )
        .await;
    assert_eq!(next.status, CallStatus::Ok);
}

#[tokio::test]
async fn a_tool_error_reaches_the_model_with_its_message() {
    let h = harness(ExecConfig::default(), None);
    let outcome = h
        .executor
        .dispatch(
            call("c1", "behave", json!({"mode": "fail", "amount": 0})),
            Caller::Direct,
        )
        .await;
    assert_eq!(outcome.error.as_ref().unwrap().code, ErrorCode::ToolFailed);
    assert_eq!(text(&outcome.content), "the disk is full");
}

#[tokio::test]
async fn a_large_output_is_spilled_whole_and_the_notice_is_recognised() {
    let config = ExecConfig {
        output_cap: OutputCap {
            max_bytes: 2_000,
            ..OutputCap::default()
        },
        ..ExecConfig::default()
    };
    let mut h = harness(config, None);
    let outcome = h
        .executor
        .dispatch(
            call("c/1", "behave", json!({"mode": "flood", "amount": 100_000})),
            Caller::Direct,
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Ok);
    let shown = text(&outcome.content);
    assert!(shown.len() < 2_500);
    let notice = parse_spill_notice(shown).expect("spill notice at the end");
    assert_eq!(notice.total_bytes, 100_000);
    assert!(notice.path.ends_with("spill/c_1.txt"), "{}", notice.path);
    let whole = std::fs::read_to_string(&notice.path).unwrap();
    assert_eq!(Some(Value::String(whole)), outcome.output);
    let events = drain(&mut h.events);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.body, EventBody::ToolProgress(p) if p.text == "flooding"))
    );
}

#[tokio::test]
async fn the_event_log_keeps_a_large_output_cut_with_a_reference_never_whole() {
    let mut h = harness(ExecConfig::default(), None);
    let outcome = h
        .executor
        .dispatch(
            call(
                "c2",
                "behave",
                json!({"mode": "flood", "amount": 5_000_000}),
            ),
            Caller::Direct,
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Ok);
    assert_eq!(
        outcome.output.as_ref().unwrap().as_str().unwrap().len(),
        5_000_000
    );
    let events = drain(&mut h.events);
    let logged: usize = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap().len())
        .sum();
    assert!(
        logged < 200_000,
        "the log holds {logged} bytes for one call"
    );
    let result = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult(result) => Some(result),
            _ => None,
        })
        .unwrap();
    let kept = result.output.as_ref().unwrap().as_str().unwrap();
    let saved = h.data.path().join("session/spill/c2-output.json");
    assert!(
        kept.contains(&saved.display().to_string()),
        "{}",
        &kept[..200]
    );
    let whole: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(Some(whole), outcome.output);
}

#[tokio::test]
async fn a_call_printing_50_mb_live_leaves_its_start_and_end_in_the_log_within_the_bound() {
    let mut h = harness(ExecConfig::default(), None);
    let printed = 50_000_000u64;
    let outcome = h
        .executor
        .dispatch(
            call("c3", "behave", json!({"mode": "print", "amount": printed})),
            Caller::Direct,
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Ok);
    let events = drain(&mut h.events);
    let progress: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolProgress(p) => Some(p),
            _ => None,
        })
        .collect();
    let shown: usize = progress.iter().map(|p| p.text.len()).sum();
    assert!(
        shown <= qilin_protocol::LIVE_MAX_BYTES,
        "{shown} bytes of live output in the log"
    );
    let logged: usize = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap().len())
        .sum();
    assert!(
        logged < 2 * qilin_protocol::LIVE_MAX_BYTES,
        "the log holds {logged} bytes for one call"
    );
    // Every byte is shown or counted, the start comes whole and the end is the last output.
    let counted: u64 = progress
        .iter()
        .map(|p| p.text.len() as u64 + p.omitted_bytes.unwrap_or(0))
        .sum();
    assert_eq!(counted, printed);
    assert!(progress[0].text.starts_with("y\ny\n"));
    let last = progress.last().unwrap();
    assert!(last.omitted_bytes.unwrap_or(0) > 0 && last.text.ends_with("y\n"));
    // The live output ends before the result.
    let last_progress = events
        .iter()
        .rposition(|e| matches!(e.body, EventBody::ToolProgress(_)))
        .unwrap();
    let result = events
        .iter()
        .position(|e| matches!(e.body, EventBody::ToolResult(_)))
        .unwrap();
    assert!(last_progress < result);
}

#[test]
fn the_tools_list_never_holds_a_code_mode_only_tool() {
    let h = harness(ExecConfig::default(), None);
    let list = h
        .executor
        .registry()
        .tools_list(["echo", "crm_lookup", "behave"])
        .unwrap();
    let names: Vec<_> = list.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["echo", "behave"]);
    let err = h.executor.registry().tools_list(["ech"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no tool is named `ech`; did you mean `echo`?"
    );
}

#[test]
fn what_a_model_receives_for_each_tool() {
    let h = harness(ExecConfig::default(), None);
    let definitions: Vec<_> = h
        .executor
        .registry()
        .list()
        .map(|tool| (tool.name().to_string(), tool.direct_definition()))
        .collect();
    insta::assert_json_snapshot!(definitions);
}

#[tokio::test]
async fn a_rejected_call_is_recorded_like_any_refusal() {
    let mut h = harness(ExecConfig::default(), None);
    let outcome = h.executor.reject(
        call("c1", "echo", Value::String("{\"text\": ".into())),
        Caller::Direct,
        ToolError::invalid_arguments("not valid JSON"),
    );
    assert_eq!(outcome.status, CallStatus::Error);
    assert_eq!(text(&outcome.content), "not valid JSON");
    let events = drain(&mut h.events);
    let [start, result] = &events[..] else {
        panic!("{events:?}")
    };
    let EventBody::ToolStart(start) = &start.body else {
        panic!()
    };
    assert_eq!(start.arguments, Value::String("{\"text\": ".into()));
    let EventBody::ToolResult(result) = &result.body else {
        panic!()
    };
    assert_eq!(result.error_code, Some(ErrorCode::InvalidArguments));
}

#[tokio::test]
async fn a_dispatch_dropped_half_way_still_records_its_result() {
    let mut h = harness(ExecConfig::default(), None);
    let executor = h.executor.clone();
    let running = tokio::spawn(async move {
        executor
            .dispatch(
                call("c1", "behave", json!({"mode": "sleep", "amount": 10_000})),
                Caller::Direct,
            )
            .await
    });
    // Dropped once the call is under way.
    let start = h.events.recv().await.expect("the call starts");
    assert_eq!(start.body.kind(), "tool.start");
    running.abort();
    let _ = running.await;
    let mut events = vec![start];
    events.extend(drain(&mut h.events));
    let kinds: Vec<&str> = events.iter().map(|e| e.body.kind()).collect();
    assert_eq!(kinds, ["tool.start", "tool.result"]);
    let EventBody::ToolResult(result) = &events[1].body else {
        panic!()
    };
    assert_eq!(result.status, CallStatus::Interrupted);
    assert!(text(&result.content).contains("stopped before it finished"));
}

#[tokio::test(start_paused = true)]
async fn the_deadline_counts_from_the_approval_not_from_the_request() {
    let config = ExecConfig {
        timeout: Some(Duration::from_millis(300)),
        ..ExecConfig::default()
    };
    let policy: PolicyConfig = serde_json::from_value(
        json!({"rules": [{"tool": "behave", "decision": "ask", "reason": "check first"}]}),
    )
    .unwrap();
    let mut h = harness_with(config, Some(policy), Requests::attended());
    let executor = h.executor.clone();
    let mut watching = executor.session().events().subscribe();
    let approver = tokio::spawn(async move {
        while let Some(event) = watching.recv().await {
            if let EventBody::RequestOpened(opened) = event.body {
                // The person takes longer than the call's whole limit to decide.
                tokio::time::sleep(Duration::from_millis(600)).await;
                let session = executor.session();
                session
                    .requests()
                    .resolve(
                        session.events(),
                        &opened.request_id,
                        RequestReply::Approve,
                        "me",
                    )
                    .unwrap();
                return;
            }
        }
    });
    let outcome = h
        .executor
        .dispatch(
            call("c1", "behave", json!({"mode": "sleep", "amount": 100})),
            Caller::Direct,
        )
        .await;
    approver.await.unwrap();
    assert_eq!(outcome.status, CallStatus::Ok, "{outcome:?}");
    let kinds: Vec<&str> = drain(&mut h.events).iter().map(|e| e.body.kind()).collect();
    assert_eq!(
        kinds,
        [
            "tool.start",
            "request.opened",
            "request.resolved",
            "tool.result"
        ]
    );
}

#[tokio::test]
async fn a_declined_approval_is_a_denial_with_what_the_user_said() {
    let policy: PolicyConfig = serde_json::from_value(
        json!({"rules": [{"tool": "echo", "decision": "ask", "reason": "check first"}]}),
    )
    .unwrap();
    let h = harness_with(ExecConfig::default(), Some(policy), Requests::attended());
    let executor = h.executor.clone();
    let mut watching = executor.session().events().subscribe();
    tokio::spawn(async move {
        while let Some(event) = watching.recv().await {
            if let EventBody::RequestOpened(opened) = event.body {
                let session = executor.session();
                let reply = RequestReply::Deny {
                    reason: Some("use the staging copy".into()),
                };
                session
                    .requests()
                    .resolve(session.events(), &opened.request_id, reply, "me")
                    .unwrap();
            }
        }
    });
    let mut recorded = h.executor.session().events().subscribe();
    let outcome = h
        .executor
        .dispatch(call("c1", "echo", json!({"text": "x"})), Caller::Direct)
        .await;
    assert_eq!(outcome.status, CallStatus::Denied);
    let message = outcome.error.unwrap().message;
    assert!(
        message.contains("declined this call, saying: use the staging copy"),
        "{message}"
    );
    let user_reason = loop {
        let event = recorded.recv().await.unwrap();
        if let EventBody::ToolResult(result) = event.body {
            break result.user_reason;
        }
    };
    assert_eq!(user_reason.as_deref(), Some("use the staging copy"));
}

#[tokio::test]
async fn a_session_runs_at_most_its_limit_of_direct_calls_at_once() {
    let config = ExecConfig {
        max_running_calls: 2,
        ..ExecConfig::default()
    };
    let h = harness(config, None);
    let calls = (0..8).map(|n| {
        let executor = h.executor.clone();
        tokio::spawn(async move {
            executor
                .dispatch(
                    call(
                        &format!("c{n}"),
                        "behave",
                        json!({"mode": "track", "amount": 40}),
                    ),
                    Caller::Direct,
                )
                .await
        })
    });
    for outcome in futures_util::future::join_all(calls).await {
        assert_eq!(outcome.unwrap().status, CallStatus::Ok);
    }
    assert_eq!(MOST_RUNNING.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_grant_for_the_session_answers_later_approvals_it_covers() {
    let policy: PolicyConfig = serde_json::from_value(
        json!({"rules": [{"tool": "echo", "decision": "ask", "reason": "check first"}]}),
    )
    .unwrap();
    let mut h = harness_with(ExecConfig::default(), Some(policy), Requests::attended());
    let executor = h.executor.clone();
    let mut watching = executor.session().events().subscribe();
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&asked);
    tokio::spawn(async move {
        while let Some(event) = watching.recv().await {
            if let EventBody::RequestOpened(opened) = event.body {
                counted.fetch_add(1, Ordering::SeqCst);
                let session = executor.session();
                // A grant for another tool does not fit this request.
                let wrong = RequestReply::ApproveForSession(qilin_protocol::SessionGrant {
                    tool: "behave".into(),
                    command_prefix: None,
                });
                assert!(matches!(
                    session
                        .requests()
                        .resolve(session.events(), &opened.request_id, wrong, "me"),
                    Err(qilin_tool::ResolveError::GrantMismatch { .. })
                ));
                let grant = RequestReply::ApproveForSession(qilin_protocol::SessionGrant {
                    tool: "echo".into(),
                    command_prefix: None,
                });
                session
                    .requests()
                    .resolve(session.events(), &opened.request_id, grant, "me")
                    .unwrap();
            }
        }
    });
    for n in 0..3 {
        let outcome = h
            .executor
            .dispatch(
                call(&format!("c{n}"), "echo", json!({"text": "x"})),
                Caller::Direct,
            )
            .await;
        assert_eq!(outcome.status, CallStatus::Ok, "{outcome:?}");
    }
    assert_eq!(asked.load(Ordering::SeqCst), 1, "asked once");
    let events = drain(&mut h.events);
    let granted = events.iter().find_map(|e| match &e.body {
        EventBody::RequestResolved(resolved) => Some(resolved.resolution.clone()),
        _ => None,
    });
    assert!(
        matches!(
            granted,
            Some(qilin_protocol::RequestResolution::ApprovedForSession { .. })
        ),
        "{granted:?}"
    );
    assert_eq!(h.executor.session().requests().grants().len(), 1);
}
