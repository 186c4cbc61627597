//! Small tools and a harness for code-mode tests: run code as a `run_code` call through the
//! execution layer and collect the session's events.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use qilin_codemode::{CodeMode, RunCode};
use qilin_protocol::{CallPresentation, Detail, Event, EventBody, ToolResultEvent, ToolStartEvent};
use qilin_test_tools::{Echo, Noop, Secret};
use qilin_tool::{
    CallOutcome, Caller, Executor, Session, Tool, ToolCall, ToolContext, ToolError, ToolRegistry,
    ToolResult,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How many `slow` calls run now, and the most that ever ran at once.
#[derive(Default)]
pub struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl Gauge {
    pub fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct SlowArgs {
    /// Milliseconds to wait.
    pub ms: u64,
    /// A label returned as the output.
    pub label: String,
}

/// Waits, then returns the label.
#[derive(qilin_tool::Tool)]
#[tool(name = "slow")]
pub struct Slow(pub Arc<Gauge>);

impl Tool for Slow {
    type Args = SlowArgs;
    type Output = String;
    fn prompt_hint(&self) -> &str {
        "For tests."
    }
    fn present(&self, args: &SlowArgs) -> CallPresentation {
        CallPresentation::new("Wait", &args.label)
    }
    fn before_detail(&self, _: &SlowArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &SlowArgs, _: &ToolResult<String>) -> Option<Detail> {
        None
    }
    async fn call(&self, args: SlowArgs, _cx: &ToolContext) -> ToolResult<String> {
        let now = self.0.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.max.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        self.0.now.fetch_sub(1, Ordering::SeqCst);
        Ok(args.label)
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct FailArgs {
    /// The failure message.
    pub message: String,
}

/// Always fails with the message.
#[derive(qilin_tool::Tool)]
#[tool(name = "fail")]
pub struct Fail;

impl Tool for Fail {
    type Args = FailArgs;
    type Output = String;
    fn prompt_hint(&self) -> &str {
        "For tests."
    }
    fn present(&self, args: &FailArgs) -> CallPresentation {
        CallPresentation::new("Fail", &args.message)
    }
    fn before_detail(&self, _: &FailArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &FailArgs, _: &ToolResult<String>) -> Option<Detail> {
        None
    }
    async fn call(&self, args: FailArgs, _cx: &ToolContext) -> ToolResult<String> {
        Err(ToolError::failed(args.message))
    }
}

/// The test tools plus `run_code` with `mode`.
pub fn registry(mode: CodeMode, gauge: Arc<Gauge>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    registry.register(Noop).unwrap();
    registry.register(Slow(gauge)).unwrap();
    registry.register(Fail).unwrap();
    registry.register(Secret).unwrap();
    registry.register(RunCode::new(mode)).unwrap();
    registry
}

/// A session over the test tools, keeping its files in a temporary folder.
pub struct Harness {
    pub executor: Executor,
    pub gauge: Arc<Gauge>,
    pub dir: tempfile::TempDir,
    runs: AtomicUsize,
}

/// One `run_code` call: its outcome and the events of its nested calls.
pub struct Run {
    pub outcome: CallOutcome,
    pub starts: Vec<ToolStartEvent>,
    pub results: Vec<ToolResultEvent>,
}

impl Run {
    /// The `run_code` output, or a panic showing the error.
    pub fn output(&self) -> serde_json::Value {
        match &self.outcome.output {
            Some(output) => output.clone(),
            None => panic!("run_code failed: {:?}", self.outcome.error),
        }
    }

    /// The error message, or a panic showing the output.
    pub fn error(&self) -> String {
        match &self.outcome.error {
            Some(error) => format!("{}: {}", error.code, error.message),
            None => panic!("run_code succeeded: {:?}", self.outcome.output),
        }
    }

    pub fn nested(&self) -> Vec<&ToolResultEvent> {
        self.results
            .iter()
            .filter(|r| r.tool_name != "run_code")
            .collect()
    }
}

impl Harness {
    pub fn new(mode: CodeMode) -> Self {
        let gauge = Arc::new(Gauge::default());
        let dir = tempfile::tempdir().unwrap();
        let session = Session::new("s1", dir.path(), dir.path().join("data"));
        let executor = Executor::new(
            Arc::new(registry(mode, Arc::clone(&gauge))),
            Arc::new(session),
        );
        Harness {
            executor,
            gauge,
            dir,
            runs: AtomicUsize::new(0),
        }
    }

    pub async fn run(&self, code: &str) -> Run {
        self.run_with(json!({ "code": code })).await
    }

    pub async fn run_with(&self, arguments: serde_json::Value) -> Run {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let mut events = self.executor.session().events().subscribe();
        let outcome = self
            .executor
            .dispatch(
                ToolCall {
                    call_id: format!("rc{n}"),
                    name: "run_code".into(),
                    arguments,
                },
                Caller::Direct,
            )
            .await;
        let mut starts = Vec::new();
        let mut results = Vec::new();
        while let Ok(Event { body, .. }) = events.try_recv() {
            match body {
                EventBody::ToolStart(start) => starts.push(start),
                EventBody::ToolResult(result) => results.push(result),
                _ => {}
            }
        }
        Run {
            outcome,
            starts,
            results,
        }
    }

    /// Asserts the runtime still runs code and tools after whatever came before.
    pub async fn assert_healthy(&self) {
        let run = self
            .run("r = sdk.tool.call('echo', {'text': 'ok'})\nprint('still', r['text'])\n1 + 1")
            .await;
        let output = run.output();
        assert_eq!(output["printed"], "still ok\n");
        assert_eq!(output["value"], 2);
    }
}
