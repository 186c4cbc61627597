//! Tools known only at run time pass the same execution layer as typed ones.

use futures_util::future::BoxFuture;
use qilin_protocol::{CallPresentation, CallStatus, ContentBlock, Detail, ErrorCode, EventBody};
use qilin_tool::{
    Caller, DynamicHandler, DynamicOutput, DynamicResult, DynamicTool, ExecConfig, Executor,
    Mounts, PolicyConfig, RegistryError, RulePolicy, Session, ToolCall, ToolContext, ToolEffect,
    ToolError, ToolRegistry,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Adds two numbers, or fails, or waits for its cancellation, as asked.
struct Adder;

impl DynamicHandler for Adder {
    fn present(&self, arguments: &Value) -> CallPresentation {
        CallPresentation::new("Add", arguments["a"].to_string())
    }
    fn before_detail(&self, _arguments: &Value) -> Option<Detail> {
        None
    }
    fn detail(&self, _arguments: &Value, result: &DynamicResult) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }
    fn call(&self, arguments: Value, cx: ToolContext) -> BoxFuture<'static, DynamicResult> {
        Box::pin(async move {
            let a = arguments["a"].as_i64().unwrap_or_default();
            let b = arguments["b"].as_i64().unwrap_or_default();
            match a {
                -1 => Err(ToolError::failed("negative one is refused")),
                -2 => {
                    cx.cancellation().cancelled().await;
                    Err(ToolError::new(ErrorCode::Interrupted, "stopped as asked"))
                }
                _ => Ok(DynamicOutput {
                    output: json!({"sum": a + b}),
                    content: vec![ContentBlock::text(format!("{}", a + b))],
                }),
            }
        })
    }
}

fn adder(name: &str, code_mode_only: bool, effect: Option<ToolEffect>) -> DynamicTool {
    DynamicTool {
        name: name.to_string(),
        description: "Adds two integers.".to_string(),
        prompt_hint: String::new(),
        code_mode_only,
        parameters: json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "The first."},
                "b": {"type": "integer", "description": "The second."}
            },
            "required": ["a", "b"],
            "$defs": {"unused": {"title": "Unused", "type": "string"}}
        }),
        output_schema: Some(json!({"type": "object", "properties": {"sum": {"type": "integer"}}})),
        effect,
        handler: Arc::new(Adder),
    }
}

fn executor(registry: ToolRegistry, policy: Option<PolicyConfig>) -> (Executor, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let session = Arc::new(Session::new("s", data.path(), data.path().join("s")));
    let reviewer: Arc<dyn qilin_tool::Reviewer> = match policy {
        Some(policy) => Arc::new(RulePolicy::new(policy).unwrap()),
        None => Arc::new(qilin_tool::AllowAll),
    };
    let executor = Executor::with_mounts(
        Arc::new(registry),
        session,
        reviewer,
        ExecConfig {
            timeout: Some(Duration::from_secs(5)),
            ..ExecConfig::default()
        },
        Mounts::all(),
    );
    (executor, data)
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        call_id: "c1".into(),
        name: name.into(),
        arguments,
    }
}

fn from_code() -> Caller {
    Caller::Code {
        parent_call_id: "run".into(),
    }
}

#[tokio::test]
async fn a_dynamic_tool_is_validated_run_and_recorded_like_any_tool() {
    let mut registry = ToolRegistry::new();
    registry
        .register_dynamic(adder("calc__add", true, Some(ToolEffect::ReadOnly)))
        .unwrap();
    let tool = registry.get("calc__add").unwrap();
    assert!(tool.is_dynamic() && tool.code_mode_only());
    assert_eq!(tool.effect(), Some(ToolEffect::ReadOnly));
    assert!(
        tool.parameters().get("$defs").is_none(),
        "providers get the normalised schema"
    );
    let (executor, _data) = executor(registry, None);
    let mut events = executor.session().events().subscribe();

    let ok = executor
        .dispatch(call("calc__add", json!({"a": 2, "b": 3})), from_code())
        .await;
    assert_eq!(ok.status, CallStatus::Ok);
    assert_eq!(ok.output, Some(json!({"sum": 5})));
    assert_eq!(ok.content, vec![ContentBlock::text("5")]);
    let EventBody::ToolStart(start) = events.recv().await.unwrap().body else {
        panic!("expected tool.start")
    };
    assert_eq!(start.parent_call_id.as_deref(), Some("run"));
    assert_eq!(start.presentation, CallPresentation::new("Add", "2"));

    let bad = executor
        .dispatch(call("calc__add", json!({"a": "two", "b": 3})), from_code())
        .await;
    assert_eq!(bad.error.unwrap().code, ErrorCode::InvalidArguments);

    let direct = executor
        .dispatch(call("calc__add", json!({"a": 1, "b": 1})), Caller::Direct)
        .await;
    assert_eq!(direct.error.unwrap().code, ErrorCode::CodeModeOnly);

    let failed = executor
        .dispatch(call("calc__add", json!({"a": -1, "b": 0})), from_code())
        .await;
    let error = failed.error.unwrap();
    assert_eq!(
        (error.code, error.message.as_str()),
        (ErrorCode::ToolFailed, "negative one is refused")
    );
}

#[tokio::test]
async fn cancelling_a_dynamic_call_reaches_its_handler() {
    let mut registry = ToolRegistry::new();
    registry
        .register_dynamic(adder("calc__add", false, None))
        .unwrap();
    let (executor, _data) = executor(registry, None);
    let cancel = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn({
        let executor = executor.clone();
        let cancel = cancel.clone();
        async move {
            executor
                .dispatch_cancellable(
                    call("calc__add", json!({"a": -2, "b": 0})),
                    Caller::Direct,
                    cancel,
                )
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    cancel.cancel();
    let outcome = running.await.unwrap();
    assert_eq!(outcome.status, CallStatus::Interrupted);
    assert!(
        outcome
            .content
            .iter()
            .any(|block| block == &ContentBlock::text("stopped as asked")),
        "{:?}",
        outcome.content
    );
}

#[tokio::test]
async fn review_rules_match_the_effect_a_dynamic_tool_declares() {
    let mut registry = ToolRegistry::new();
    registry
        .register_dynamic(adder("calc__add", false, Some(ToolEffect::Destructive)))
        .unwrap();
    registry
        .register_dynamic(adder("calc__peek", false, Some(ToolEffect::ReadOnly)))
        .unwrap();
    let policy: PolicyConfig = serde_json::from_value(json!({
        "rules": [{"tool": "calc__*", "effect": "destructive", "decision": "deny", "reason": "it changes data"}]
    }))
    .unwrap();
    let (executor, _data) = executor(registry, Some(policy));
    let denied = executor
        .dispatch(call("calc__add", json!({"a": 1, "b": 1})), Caller::Direct)
        .await;
    assert_eq!(denied.status, CallStatus::Denied);
    assert!(denied.error.unwrap().message.contains("it changes data"));
    let allowed = executor
        .dispatch(call("calc__peek", json!({"a": 1, "b": 1})), Caller::Direct)
        .await;
    assert_eq!(allowed.status, CallStatus::Ok);
}

#[test]
fn names_and_schemas_are_checked_at_registration() {
    let mut registry = ToolRegistry::new();
    registry
        .register_dynamic(adder("calc__add", true, None))
        .unwrap();
    assert_eq!(
        registry.register_dynamic(adder("calc__add", true, None)),
        Err(RegistryError::Duplicate("calc__add".into()))
    );
    assert_eq!(
        registry.register_dynamic(adder("calc.add", true, None)),
        Err(RegistryError::InvalidName("calc.add".into()))
    );
    let mut broken = adder("calc__broken", true, None);
    broken.parameters = json!({"type": "object", "properties": {"a": {"type": 12}}});
    assert!(matches!(
        registry.register_dynamic(broken),
        Err(RegistryError::InvalidSchema { name, .. }) if name == "calc__broken"
    ));
}

#[tokio::test]
async fn a_tool_made_from_a_function_is_validated_and_run_with_its_output_as_text() {
    let mut tool = DynamicTool::from_fn(
        "double",
        "Doubles a number.",
        json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "description": "The number."}},
            "required": ["n"]
        }),
        |arguments: Value, _cx: ToolContext| async move {
            match arguments["n"].as_i64() {
                Some(n) if n < 0 => Err(ToolError::failed("give a number of 0 or more")),
                Some(n) => Ok(json!({"doubled": n * 2})),
                None => Err(ToolError::invalid_arguments("`n` is not an integer")),
            }
        },
    );
    tool.prompt_hint = "Double with this tool rather than in your head.".to_string();
    let mut registry = ToolRegistry::new();
    registry.register_dynamic(tool).unwrap();
    let listed = registry.get("double").unwrap();
    assert!(!listed.code_mode_only());
    assert!(
        listed
            .direct_definition()
            .unwrap()
            .description
            .ends_with("rather than in your head.")
    );
    let (executor, _data) = executor(registry, None);
    let mut events = executor.session().events().subscribe();

    let ok = executor
        .dispatch(call("double", json!({"n": 21})), Caller::Direct)
        .await;
    assert_eq!(ok.status, CallStatus::Ok, "{ok:?}");
    assert_eq!(ok.output, Some(json!({"doubled": 42})));
    assert_eq!(
        ok.content,
        vec![ContentBlock::text("{\n  \"doubled\": 42\n}")]
    );
    let EventBody::ToolStart(start) = events.recv().await.unwrap().body else {
        panic!("expected tool.start")
    };
    assert_eq!(
        start.presentation,
        CallPresentation::new("double", "{\"n\":21}")
    );

    let refused = executor
        .dispatch(call("double", json!({"n": -1})), Caller::Direct)
        .await;
    assert_eq!(refused.status, CallStatus::Error);
    assert_eq!(refused.error.unwrap().message, "give a number of 0 or more");
    let invalid = executor
        .dispatch(call("double", json!({"n": "x"})), Caller::Direct)
        .await;
    assert_eq!(invalid.error.unwrap().code, ErrorCode::InvalidArguments);
}

#[test]
fn a_registry_extended_with_another_shares_its_tools_and_refuses_a_taken_name() {
    let mut app = ToolRegistry::new();
    app.register_dynamic(adder("calc__add", false, None))
        .unwrap();
    let mut session = ToolRegistry::new();
    session
        .register_dynamic(adder("calc__sub", false, None))
        .unwrap();
    session.extend(&app).unwrap();
    assert_eq!(
        session.names().collect::<Vec<_>>(),
        ["calc__add", "calc__sub"]
    );
    let mut clash = ToolRegistry::new();
    clash
        .register_dynamic(adder("calc__add", false, None))
        .unwrap();
    clash
        .register_dynamic(adder("calc__mul", false, None))
        .unwrap();
    assert_eq!(
        session.extend(&clash),
        Err(RegistryError::Duplicate("calc__add".into()))
    );
    assert!(session.get("calc__mul").is_none(), "nothing is added");
}
