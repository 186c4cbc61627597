//! The execution layer: one `dispatch` for calls from both entries.
//!
//! In order: look the tool up → refuse a direct call of a code-mode-only tool → validate the
//! arguments → put path arguments in canonical form (see `path_arguments`) → review → run
//! under the deadline and cancellation (a panic is a failed call) → cap the output → record
//! `tool.start` and `tool.result`. Every refusal is a `tool.result` with its error code and a
//! message the model can act on.

use crate::path_arguments::canonical_paths;
use crate::registry::{PreparedCall, Ran, RegisteredTool};
use crate::{AllowAll, OutputCap};
use crate::{
    ReviewDecision, ReviewRequest, Reviewer, Session, ToolContext, ToolError, ToolRegistry,
};
use futures_util::FutureExt;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use qilin_protocol::{
    CallPresentation, CallStatus, CallerKind, ContentBlock, Detail, ErrorCode, EventBody,
    ToolResultEvent, ToolStartEvent,
};
use serde_json::Value;
use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Which entry a call came through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The model called the tool from its tools list.
    Direct,
    /// Python called it through `sdk.tool.call` inside the `run_code` call `parent_call_id`.
    Code {
        /// The `run_code` call that made this call.
        parent_call_id: String,
    },
}

impl Caller {
    fn kind(&self) -> CallerKind {
        match self {
            Caller::Direct => CallerKind::Direct,
            Caller::Code { .. } => CallerKind::Code,
        }
    }

    fn parent_call_id(&self) -> Option<String> {
        match self {
            Caller::Direct => None,
            Caller::Code { parent_call_id } => Some(parent_call_id.clone()),
        }
    }
}

/// A call to dispatch: its id, the tool's wire name and the arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id, kept through every phase.
    pub call_id: String,
    /// The tool's wire name.
    pub name: String,
    /// The arguments as the model (or the code) sent them.
    pub arguments: Value,
}

/// Limits the execution layer applies to every call.
#[derive(Debug, Clone, Default)]
pub struct ExecConfig {
    /// The longest a call may run before it ends with `TIMEOUT`; `None` for no limit.
    pub timeout: Option<Duration>,
    /// How much of an output the model sees.
    pub output_cap: OutputCap,
}

/// How a dispatched call ended, for the caller (the agent loop or code mode).
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The call's id.
    pub call_id: String,
    /// How it ended.
    pub status: CallStatus,
    /// The error, unless the call succeeded.
    pub error: Option<ToolError>,
    /// What the model sees: the capped output, or the error message.
    pub content: Vec<ContentBlock>,
    /// The tool's structured output, when it succeeded.
    pub output: Option<Value>,
    /// Wall time from dispatch to result.
    pub duration: Duration,
}

/// Dispatches calls through the execution layer for one session. Cheap to clone.
#[derive(Clone)]
pub struct Executor {
    inner: Arc<ExecutorInner>,
}

struct ExecutorInner {
    registry: Arc<ToolRegistry>,
    reviewer: Arc<dyn Reviewer>,
    session: Arc<Session>,
    config: ExecConfig,
}

impl Executor {
    /// An executor over `registry` for `session` that allows every call and uses default limits.
    pub fn new(registry: Arc<ToolRegistry>, session: Arc<Session>) -> Self {
        Self::with_policy(registry, session, Arc::new(AllowAll), ExecConfig::default())
    }

    /// An executor with a reviewer and limits of its own.
    pub fn with_policy(
        registry: Arc<ToolRegistry>,
        session: Arc<Session>,
        reviewer: Arc<dyn Reviewer>,
        config: ExecConfig,
    ) -> Self {
        Executor {
            inner: Arc::new(ExecutorInner {
                registry,
                reviewer,
                session,
                config,
            }),
        }
    }

    /// The tools this executor can run.
    pub fn registry(&self) -> &ToolRegistry {
        &self.inner.registry
    }

    /// The session the calls belong to.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// Dispatches one call that nobody will cancel.
    pub async fn dispatch(&self, call: ToolCall, caller: Caller) -> CallOutcome {
        self.dispatch_cancellable(call, caller, CancellationToken::new())
            .await
    }

    /// Dispatches one call; cancelling `cancel` ends it with `INTERRUPTED`.
    pub async fn dispatch_cancellable(
        &self,
        call: ToolCall,
        caller: Caller,
        cancel: CancellationToken,
    ) -> CallOutcome {
        let started = Instant::now();
        let mut record = CallRecord {
            executor: self,
            call_id: call.call_id,
            tool_name: call.name,
            caller,
            started,
        };
        let Some(tool) = self.inner.registry.get(&record.tool_name) else {
            let message = unknown_tool_message(&record.tool_name, &self.inner.registry);
            return record.refuse(call.arguments, ErrorCode::UnknownTool, message);
        };
        if tool.code_mode_only() && record.caller == Caller::Direct {
            let message = code_mode_only_message(tool.name());
            return record.refuse(call.arguments, ErrorCode::CodeModeOnly, message);
        }
        let arguments = normalize_arguments(call.arguments);
        if let Some(message) = validation_message(tool, &arguments) {
            return record.refuse(arguments, ErrorCode::InvalidArguments, message);
        }
        let arguments =
            canonical_paths(arguments, tool.path_arguments(), self.session().workspace());
        let prepared = match tool.prepare(arguments.clone()) {
            Ok(prepared) => prepared,
            Err(err) => {
                let message = format!(
                    "Invalid arguments for `{}`: {err}.\nThe parameter schema is: {}",
                    tool.name(),
                    tool.parameters()
                );
                return record.refuse(arguments, ErrorCode::InvalidArguments, message);
            }
        };
        let shown = catch_panic(|| (prepared.presentation(), prepared.before_detail()));
        let (presentation, before_detail) = match shown {
            Ok(shown) => shown,
            Err(panic) => {
                let message = format!(
                    "The tool `{}` failed while presenting the call: {panic}",
                    record.tool_name
                );
                return record.refuse(arguments, ErrorCode::ToolFailed, message);
            }
        };
        record.start(arguments.clone(), presentation, before_detail);

        let decision = self
            .inner
            .reviewer
            .review(ReviewRequest {
                tool: &record.tool_name,
                arguments: &arguments,
                caller: &record.caller,
            })
            .await;
        if let ReviewDecision::Deny { reason } = decision {
            let error = ToolError::new(
                ErrorCode::AutoReviewDenied,
                format!(
                    "The call was denied by the agent's review policy: {reason}. \
                     Do not retry the same call; choose another approach or ask the user."
                ),
            );
            let detail = prepared.error_detail(&error);
            return record.finish(Err(error), detail);
        }

        let (result, detail) = self.run(&*prepared, &record, cancel).await;
        record.finish(result, detail)
    }

    /// Records a call that cannot be dispatched — its argument text is not JSON, or the turn
    /// ended before its arguments were complete — as a `tool.start` and a `tool.result`
    /// carrying `error`, so that the log and the model see it like any refused call.
    pub fn reject(&self, call: ToolCall, caller: Caller, error: ToolError) -> CallOutcome {
        let mut record = CallRecord {
            executor: self,
            call_id: call.call_id,
            tool_name: call.name,
            caller,
            started: Instant::now(),
        };
        record.refuse(call.arguments, error.code, error.message)
    }

    async fn run(
        &self,
        prepared: &dyn PreparedCall,
        record: &CallRecord<'_>,
        cancel: CancellationToken,
    ) -> (Result<Ran, ToolError>, Option<Detail>) {
        let call_cancel = cancel.child_token();
        let deadline = self
            .inner
            .config
            .timeout
            .map(|limit| record.started + limit);
        let cx = ToolContext {
            call_id: record.call_id.clone(),
            parent_call_id: record.caller.parent_call_id(),
            cancel: call_cancel.clone(),
            deadline,
            executor: self.clone(),
        };
        let running = match catch_panic(|| prepared.run(cx)) {
            Ok(running) => running,
            Err(panic) => return (Err(panic_error(&record.tool_name, &panic)), None),
        };
        let expired = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            biased;
            finished = AssertUnwindSafe(running).catch_unwind() => finished,
            () = call_cancel.cancelled() => {
                let error = ToolError::new(
                    ErrorCode::Interrupted,
                    "The call was interrupted before it finished; its work may be incomplete.",
                );
                let detail = prepared.error_detail(&error);
                return (Err(error), detail);
            }
            () = expired => {
                call_cancel.cancel();
                let limit = self.inner.config.timeout.unwrap_or_default();
                let error = ToolError::new(
                    ErrorCode::Timeout,
                    format!(
                        "The call did not finish within its {} s limit and was stopped. \
                         Narrow the request or split the work into smaller calls.",
                        limit.as_secs_f64()
                    ),
                );
                let detail = prepared.error_detail(&error);
                return (Err(error), detail);
            }
        };
        match outcome {
            Ok(Ok(ran)) => {
                let detail = ran.detail.clone();
                (Ok(ran), detail)
            }
            Ok(Err((error, detail))) => (Err(error), detail),
            Err(panic) => (
                Err(panic_error(&record.tool_name, &panic_text(panic.as_ref()))),
                None,
            ),
        }
    }
}

/// The events of one call, so that every `tool.start` gets exactly one `tool.result`.
struct CallRecord<'e> {
    executor: &'e Executor,
    call_id: String,
    tool_name: String,
    caller: Caller,
    started: Instant,
}

impl CallRecord<'_> {
    fn start(
        &self,
        arguments: Value,
        presentation: CallPresentation,
        before_detail: Option<Detail>,
    ) {
        self.executor
            .session()
            .events()
            .emit(EventBody::ToolStart(ToolStartEvent {
                call_id: self.call_id.clone(),
                tool_name: self.tool_name.clone(),
                caller: self.caller.kind(),
                parent_call_id: self.caller.parent_call_id(),
                arguments,
                presentation,
                before_detail: self.logged(None, before_detail).1,
            }));
    }

    /// The output and detail as the event log keeps them: long strings cut, the whole output
    /// saved beside the call's spill file.
    fn logged(
        &self,
        output: Option<&Value>,
        detail: Option<Detail>,
    ) -> (Option<Value>, Option<Detail>) {
        let path = self.executor.session().spill_path(&self.call_id, "output");
        let cap = self.executor.inner.config.output_cap;
        cap.for_the_log(output, detail, &path.with_extension("json"))
    }

    /// A call refused before it could be presented by its tool: a generic start, then the error.
    fn refuse(&mut self, arguments: Value, code: ErrorCode, message: String) -> CallOutcome {
        let presentation = CallPresentation::new(self.tool_name.clone(), String::new());
        self.start(arguments, presentation, None);
        self.finish(Err(ToolError::new(code, message)), None)
    }

    fn finish(&mut self, result: Result<Ran, ToolError>, detail: Option<Detail>) -> CallOutcome {
        let duration = self.started.elapsed();
        let (status, error, content, output) = match result {
            Ok(ran) => {
                let spill_path = self.executor.session().spill_path(&self.call_id, "");
                let content = self
                    .executor
                    .inner
                    .config
                    .output_cap
                    .apply(ran.content, &spill_path);
                (CallStatus::Ok, None, content, Some(ran.output))
            }
            Err(error) => {
                let status = match error.code {
                    ErrorCode::AutoReviewDenied => CallStatus::Denied,
                    ErrorCode::Interrupted => CallStatus::Interrupted,
                    _ => CallStatus::Error,
                };
                let content = vec![ContentBlock::text(error.message.clone())];
                (status, Some(error), content, None)
            }
        };
        let (logged_output, logged_detail) = self.logged(output.as_ref(), detail);
        self.executor
            .session()
            .events()
            .emit(EventBody::ToolResult(ToolResultEvent {
                call_id: self.call_id.clone(),
                tool_name: self.tool_name.clone(),
                caller: self.caller.kind(),
                parent_call_id: self.caller.parent_call_id(),
                status,
                error_code: error.as_ref().map(|e| e.code),
                content: content.clone(),
                output: logged_output,
                detail: logged_detail,
                duration_ms: duration.as_millis() as u64,
            }));
        CallOutcome {
            call_id: std::mem::take(&mut self.call_id),
            status,
            error,
            content,
            output,
            duration,
        }
    }
}

/// `null` arguments mean none; a `null` property means the same as leaving it out.
fn normalize_arguments(arguments: Value) -> Value {
    match arguments {
        Value::Null => Value::Object(Default::default()),
        Value::Object(mut map) => {
            map.retain(|_, value| !value.is_null());
            Value::Object(map)
        }
        other => other,
    }
}

fn unknown_tool_message(name: &str, registry: &ToolRegistry) -> String {
    let suggestions = registry.suggest(name);
    let mut message = format!("Unknown tool `{name}`.");
    if !suggestions.is_empty() {
        let listed: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
        message.push_str(&format!(" Did you mean {}?", listed.join(" or ")));
    }
    message.push_str(" Call only tools that exist.");
    message
}

fn code_mode_only_message(name: &str) -> String {
    format!(
        "`{name}` is a code-mode-only tool and cannot be called directly. Call it from Python \
         inside `run_code` with `sdk.tool.call(\"{name}\", {{...}})`; the skill that covers it \
         describes its arguments and output."
    )
}

/// The validation errors of `arguments`, as one message naming each failing path, or `None`.
fn validation_message(tool: &RegisteredTool, arguments: &Value) -> Option<String> {
    let problems: Vec<String> = tool
        .validator
        .iter_errors(arguments)
        .take(8)
        .map(|error| {
            let pointer = error.instance_path().to_string();
            let at = if pointer.is_empty() {
                "the arguments".to_string()
            } else {
                format!("`{}`", pointer.trim_start_matches('/').replace('/', "."))
            };
            let received = describe_value(error.instance());
            match error.kind() {
                ValidationErrorKind::Type {
                    kind: TypeKind::Single(expected),
                } => format!("{at}: expected {expected}, got {received}"),
                ValidationErrorKind::Required { property } => {
                    let property = property
                        .as_str()
                        .map_or_else(|| property.to_string(), str::to_string);
                    if pointer.is_empty() {
                        format!("missing required argument `{property}`")
                    } else {
                        format!("{at}: missing required field `{property}`")
                    }
                }
                ValidationErrorKind::Enum { options } => {
                    format!("{at}: expected one of {options}, got {received}")
                }
                _ => format!("{at}: {error}"),
            }
        })
        .collect();
    if problems.is_empty() {
        return None;
    }
    let mut message = format!("Invalid arguments for `{}`:\n", tool.name());
    for problem in problems {
        message.push_str("- ");
        message.push_str(&problem);
        message.push('\n');
    }
    message.push_str(&format!("The parameter schema is: {}", tool.parameters()));
    Some(message)
}

fn describe_value(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".into(),
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut shown = value.to_string();
    if shown.len() > 60 {
        let mut end = 57;
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        shown.truncate(end);
        shown.push_str("...");
    }
    format!("{kind} {shown}")
}

fn catch_panic<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|panic| panic_text(panic.as_ref()))
}

fn panic_text(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

fn panic_error(tool: &str, panic: &str) -> ToolError {
    ToolError::failed(format!(
        "The tool `{tool}` crashed (panic: {panic}). This is a bug in the tool, not in your \
         arguments; try another approach."
    ))
}
