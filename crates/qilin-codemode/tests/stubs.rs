//! The Python API description generated from a registry, and type checking against it.

mod support;

#[cfg(feature = "type-check")]
use qilin_codemode::type_check;
use qilin_codemode::{CodeLimits, CodeMode, StubExtras, python_stubs, python_stubs_with};
use std::sync::Arc;
#[cfg(feature = "type-check")]
use support::Harness;
use support::{Gauge, registry};

fn stubs() -> String {
    let registry = registry(
        CodeMode::in_process(CodeLimits::default()),
        Arc::new(Gauge::default()),
    );
    python_stubs(registry.list())
}

#[test]
fn every_tool_gets_typed_dicts_and_a_documented_signature() {
    let stubs = stubs();
    for expected in [
        "class EchoArgs(TypedDict):\n    text: str\n    \"\"\"The text to say back.\"\"\"\n",
        "class EchoOutput(TypedDict):\n    length: int\n",
        "    def call(self, name: Literal[\"echo\"], args: EchoArgs | None = None, **kwargs: Any) -> EchoOutput:\n        \"\"\"Says the text back.\"\"\"\n",
        "    async def call_async(self, name: Literal[\"slow\"], args: SlowArgs | None = None, **kwargs: Any) -> str:",
        "def call(self, name: Literal[\"secret\"], args: dict[str, Any] | None = None, **kwargs: Any) -> str:",
        "ToolError = RuntimeError",
        "sdk: Sdk",
    ] {
        assert!(
            stubs.contains(expected),
            "missing {expected:?} in:\n{stubs}"
        );
    }
}

/// A workflow's stubs: `args` (a dict) and `sdk.report`.
fn workflow_stubs() -> String {
    let registry = registry(
        CodeMode::in_process(CodeLimits::default()),
        Arc::new(Gauge::default()),
    );
    let globals = [("args".to_string(), serde_json::json!({"topic": "x"}))];
    python_stubs_with(
        registry.list(),
        StubExtras {
            globals: &globals,
            report: true,
        },
    )
}

#[test]
fn a_workflows_stubs_declare_its_args_and_sdk_report() {
    let workflow = workflow_stubs();
    assert!(
        workflow.contains("    def report(self, title: str, text: str) -> None:"),
        "{workflow}"
    );
    assert!(
        workflow.ends_with("sdk: Sdk\nargs: dict[str, Any]\n"),
        "{workflow}"
    );
    assert!(
        !stubs().contains("def report"),
        "run_code's stubs have no sdk.report"
    );
}

#[cfg(feature = "type-check")]
#[test]
fn a_workflow_type_checks_with_its_args_and_report_and_a_wrong_report_is_reported() {
    let workflow = workflow_stubs();
    let good = "topic = args['topic']\nsdk.report('Topic', str(topic))\n";
    assert_eq!(type_check(good, &workflow), Ok(()));
    let bad = "sdk.report('Topic')\n";
    assert!(type_check(bad, &workflow).is_err());
    assert!(
        type_check(good, &stubs()).is_err(),
        "run_code's stubs know neither"
    );
}

#[cfg(feature = "type-check")]
#[test]
fn correct_code_type_checks_and_wrong_arguments_or_keys_are_reported_by_line() {
    let stubs = stubs();
    let good = "out = sdk.tool.call('echo', {'text': 'hi'})\nprint(out['length'] + 1)\ntry:\n    sdk.tool.call('fail', {'message': 'x'})\nexcept ToolError as e:\n    info = sdk.tool.error(e)\n";
    assert_eq!(type_check(good, &stubs), Ok(()));
    let bad = "x = 1\nout = sdk.tool.call('echo', {'text': 3})\nok = sdk.tool.call('echo', {'text': 'fine'})\nok['nope']\n";
    let diagnostics = type_check(bad, &stubs).unwrap_err();
    assert!(diagnostics.contains("main.py:2:"), "{diagnostics}");
    assert!(diagnostics.contains("main.py:4:"), "{diagnostics}");
    assert!(diagnostics.contains("nope"), "{diagnostics}");
}

#[cfg(feature = "type-check")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_type_checking_on_a_badly_typed_script_is_refused_before_it_runs() {
    let h = Harness::new(
        CodeMode::in_process(CodeLimits::default())
            .with_type_check(true)
            .unwrap(),
    );
    let run = h
        .run("print('side effect')\nsdk.tool.call('echo', {'text': 3})")
        .await;
    let error = run.error();
    assert!(error.starts_with("INVALID_ARGUMENTS"), "{error}");
    assert!(error.contains("main.py:2:"), "{error}");
    assert!(!error.contains("side effect"), "{error}");
    assert!(run.nested().is_empty());
    h.assert_healthy().await;
}

#[cfg(not(feature = "type-check"))]
#[test]
fn without_the_type_checker_turning_it_on_is_refused_with_the_feature_to_build() {
    let refused = CodeMode::in_process(CodeLimits::default())
        .with_type_check(true)
        .err()
        .expect("refused");
    let message = refused.to_string();
    assert!(message.contains("`type-check` feature"), "{message}");
    assert!(
        CodeMode::in_process(CodeLimits::default())
            .with_type_check(false)
            .is_ok()
    );
}
