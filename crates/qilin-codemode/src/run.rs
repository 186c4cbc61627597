//! One run of code: start it in a sandbox, answer every suspension (tool calls through the
//! execution layer, everything else refused), and turn how it ended into a value or a
//! [`CodeError`] naming the cause.

use crate::calls::ToolCalls;
use crate::convert::{json_to_monty, monty_to_json};
use crate::error::CodeError;
use crate::in_process::InProcessSession;
use crate::journal::Journals;
use crate::output::PrintedOutput;
use crate::pool::WorkerPool;
use crate::sandbox::{Answer, SandboxError, SandboxSession, Suspension};
use crate::sdk::{self, Request};
#[cfg(feature = "type-check")]
use crate::stubs::{StubExtras, python_stubs_with};
#[cfg(feature = "type-check")]
use crate::typecheck::type_check_as;
use monty_pool::ReplConfig;
use monty_types::{ExcType, MontyException, MontyObject, ResourceLimits};
use qilin_protocol::CallStatus;
use qilin_tool::CodeLimits;
use qilin_tool::ToolContext;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Type checking asked of a build without the type checker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "type checking of code needs the type checker, which this build leaves out: build \
     qilin-codemode with its `type-check` feature"
)]
pub struct TypeCheckUnavailable;

/// The file name the model's code has in tracebacks.
pub const SCRIPT_NAME: &str = "main.py";

/// Where code runs.
#[derive(Clone)]
pub enum Sandbox {
    /// In this process: fastest; a crash of the interpreter takes the process down.
    InProcess,
    /// In worker processes: a crash kills one worker and is reported as an error.
    Workers(WorkerPool),
}

/// Code mode's settings: where code runs, its limits, whether it is type-checked first.
#[derive(Clone)]
pub struct CodeMode {
    sandbox: Sandbox,
    limits: CodeLimits,
    #[cfg(feature = "type-check")]
    type_check: bool,
}

/// What a successful run gives back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunCodeOutput {
    /// What the code printed; when it printed more than the output limit, its head and
    /// tail and a notice naming the file that holds all of it.
    pub printed: String,
    /// The value of the code's last expression as JSON; null when the last statement is not
    /// an expression.
    pub value: Value,
    /// How many tool calls the code made.
    pub tool_calls: usize,
}

/// What a host hears of a run's steps as they happen (a workflow's): each tool call the code
/// makes when it is dispatched and when it ends, and each `sdk.report(title, text)`. Called in
/// the order the code makes the steps.
pub trait RunObserver: Send + Sync {
    /// The code made a call (`call_id` is the nested call's id); it is being dispatched.
    fn call_started(&self, call_id: &str, tool: &str, arguments: &Value);
    /// That call ended with `status`.
    fn call_ended(&self, call_id: &str, status: CallStatus);
    /// Replaying a journal after a restart, the code made call `call_id` again and was given
    /// its journaled result (ended `status`); its tool did not run again.
    fn call_replayed(&self, call_id: &str, tool: &str, arguments: &Value, status: CallStatus) {
        let _ = (call_id, tool, arguments, status);
    }
    /// The code added a report section.
    fn report(&self, title: String, text: String);
}

/// How one run differs from a plain `run_code` call's: what [`CodeMode::run_with`] takes.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// A shorter time limit in ms for the code itself (tool calls not counted).
    pub timeout_ms: Option<u64>,
    /// A lower bound on the tool calls the code may make (the mode's own applies when higher).
    pub max_tool_calls: Option<usize>,
    /// More globals the code starts with, beside `sdk` (a workflow's `args`).
    pub globals: Vec<(String, Value)>,
    /// Told of every call and report section; with one, `sdk.report(title, text)` is served.
    pub observer: Option<Arc<dyn RunObserver>>,
    /// Ends the run as interrupted when cancelled, like the call's own cancellation does.
    pub cancel: Option<CancellationToken>,
    /// The file name the code has in tracebacks (a workflow's path); [`SCRIPT_NAME`] when
    /// absent.
    pub script_name: Option<String>,
}

/// Why a run failed, with what the code printed and the calls it made before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeFailure {
    /// The cause.
    pub error: CodeError,
    /// What the code printed before it failed (cut like a successful run's).
    pub printed: String,
    /// How many tool calls the code made.
    pub tool_calls: usize,
}

impl CodeMode {
    /// Code mode running code in this process.
    pub fn in_process(limits: CodeLimits) -> Self {
        CodeMode {
            sandbox: Sandbox::InProcess,
            limits,
            #[cfg(feature = "type-check")]
            type_check: false,
        }
    }

    /// Code mode running code in the worker processes of `pool`.
    pub fn workers(pool: WorkerPool, limits: CodeLimits) -> Self {
        CodeMode {
            sandbox: Sandbox::Workers(pool),
            limits,
            #[cfg(feature = "type-check")]
            type_check: false,
        }
    }

    /// The same, type-checking code against the tools' stubs before it runs (off by
    /// default: see docs/benchmarks.md for its cost).
    #[cfg(feature = "type-check")]
    pub fn with_type_check(mut self, on: bool) -> Result<Self, TypeCheckUnavailable> {
        self.type_check = on;
        Ok(self)
    }

    /// The same, type-checking code before it runs: refused, this build has no type checker
    /// (the `type-check` feature is off); turning it off is accepted.
    #[cfg(not(feature = "type-check"))]
    pub fn with_type_check(self, on: bool) -> Result<Self, TypeCheckUnavailable> {
        if on {
            Err(TypeCheckUnavailable)
        } else {
            Ok(self)
        }
    }

    /// Checks `code` against the stubs of the tools `cx` can call, with the globals and
    /// `sdk.report` `options` give it, when type checking is on.
    #[cfg(feature = "type-check")]
    fn check_types(
        &self,
        code: &str,
        cx: &ToolContext,
        options: &RunOptions,
        script_name: &str,
    ) -> Result<(), CodeError> {
        if !self.type_check {
            return Ok(());
        }
        let extras = StubExtras {
            globals: &options.globals,
            report: options.observer.is_some(),
        };
        let stubs = python_stubs_with(cx.executor().registry().list(), extras);
        type_check_as(code, &stubs, script_name)
            .map_err(|diagnostics| CodeError::TypeCheck { diagnostics })
    }

    /// Without the type checker there is nothing to check (it cannot be turned on).
    #[cfg(not(feature = "type-check"))]
    fn check_types(
        &self,
        _code: &str,
        _cx: &ToolContext,
        _options: &RunOptions,
        _script_name: &str,
    ) -> Result<(), CodeError> {
        Ok(())
    }

    /// The limits of every run.
    pub fn limits(&self) -> &CodeLimits {
        &self.limits
    }

    /// Where code runs.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Runs `code` as the call `cx`; its tool calls go through `cx.executor()` as children
    /// of `cx.call_id()`. `timeout_ms` can only shorten the code's wall time limit.
    ///
    /// When the session's [`Journals`] hold a journal for `cx.call_id()` (a host resuming a
    /// run the last process left unfinished), the run replays it: the code runs from its start
    /// and each call it makes is answered from the journal, in order, its tool not running
    /// again; see [`crate::journal`].
    pub async fn run(
        &self,
        code: &str,
        timeout_ms: Option<u64>,
        cx: &ToolContext,
    ) -> Result<RunCodeOutput, CodeFailure> {
        let options = RunOptions {
            timeout_ms,
            ..RunOptions::default()
        };
        self.run_with(code, options, cx).await
    }

    /// Runs `code` as [`CodeMode::run`] does, with the differences `options` names (more
    /// globals, a lower call limit, an observer of its steps, another cancellation).
    pub async fn run_with(
        &self,
        code: &str,
        options: RunOptions,
        cx: &ToolContext,
    ) -> Result<RunCodeOutput, CodeFailure> {
        let mut limits = self.limits.with_timeout(options.timeout_ms);
        if let Some(max) = options.max_tool_calls {
            limits.max_tool_calls = limits.max_tool_calls.min(max);
        }
        let cancel = options
            .cancel
            .clone()
            .unwrap_or_else(|| cx.cancellation().clone());
        let mut globals = sdk::inputs();
        globals.extend(
            options
                .globals
                .iter()
                .map(|(name, value)| (name.clone(), json_to_monty(value))),
        );
        let observer = options.observer.clone();
        let script_name = options.script_name.as_deref().unwrap_or(SCRIPT_NAME);
        let spill_path = cx.spill_path("printed");
        let mut out = PrintedOutput::new(
            limits.max_output_bytes,
            limits.max_spilled_bytes(),
            spill_path,
        );
        let journal = cx
            .service::<Journals>()
            .and_then(|journals| journals.take(cx.call_id()));
        let mut calls = ToolCalls::new(
            cx,
            cancel,
            observer.clone(),
            limits.max_tool_calls,
            limits.concurrency(),
            journal,
        );
        let checked = self.check_types(code, cx, &options, script_name);
        let result = match (checked, &self.sandbox) {
            (Err(err), _) => Err(err),
            (Ok(()), Sandbox::InProcess) => {
                let session = InProcessSession::new(script_name, interpreter_limits(&limits));
                let run = Drive {
                    globals,
                    limits: &limits,
                    observer: observer.as_deref(),
                    script_name,
                };
                drive(session, code, run, &mut calls, &mut out).await
            }
            (Ok(()), Sandbox::Workers(pool)) => {
                let repl = ReplConfig {
                    script_name: script_name.to_string(),
                    limits: Some(interpreter_limits(&limits)),
                    ..ReplConfig::default()
                };
                match pool.session(repl).await {
                    Ok(session) => {
                        let run = Drive {
                            globals,
                            limits: &limits,
                            observer: observer.as_deref(),
                            script_name,
                        };
                        drive(session, code, run, &mut calls, &mut out).await
                    }
                    Err(err) => Err(err),
                }
            }
        };
        // Replaying, a run that ended (a value or its own exception) before making every
        // journaled call did not run as it did before the restart.
        let result = match &result {
            Ok(_) | Err(CodeError::Python { .. }) => match calls.unmade_journaled_call() {
                Some(diverged) => Err(diverged),
                None => result,
            },
            Err(_) => result,
        };
        calls.finish().await;
        let printed = out.visible();
        match result {
            Ok(value) => Ok(RunCodeOutput {
                printed,
                value: monty_to_json(&value),
                tool_calls: calls.made(),
            }),
            Err(error) => Err(CodeFailure {
                error,
                printed,
                tool_calls: calls.made(),
            }),
        }
    }
}

/// The interpreter's limits for one run. Suspensions are bounded by the tool call limit
/// (plus lookups and refusals); the host counts tool calls itself to name the limit.
fn interpreter_limits(limits: &CodeLimits) -> ResourceLimits {
    ResourceLimits::default()
        .max_duration(limits.wall_time())
        .max_memory(limits.memory_bytes())
        .max_recursion_depth(limits.recursion_depth())
        .max_suspensions(
            limits
                .max_tool_calls
                .saturating_mul(4)
                .saturating_add(1_000),
        )
}

/// What one run is driven with beside its code.
struct Drive<'a> {
    globals: Vec<(String, MontyObject)>,
    limits: &'a CodeLimits,
    observer: Option<&'a dyn RunObserver>,
    /// The code's file name in tracebacks.
    script_name: &'a str,
}

/// Drives a session to its end. Returning early drops the session, which abandons the run
/// (a worker is killed, never reused).
async fn drive<S: SandboxSession>(
    mut session: S,
    code: &str,
    run: Drive<'_>,
    calls: &mut ToolCalls,
    out: &mut PrintedOutput,
) -> Result<MontyObject, CodeError> {
    let limits = run.limits;
    let mut step = session
        .start(&sdk::with_prelude(code), run.globals, out)
        .await;
    loop {
        if out.overflowed() {
            return Err(output_error(limits));
        }
        if calls.interrupted() {
            return Err(CodeError::Interrupted);
        }
        let suspension = match step {
            Ok(suspension) => suspension,
            Err(error) => {
                if matches!(error, SandboxError::Python(_)) {
                    // The interpreter is intact after a Python error: reuse its worker.
                    session.finish().await;
                }
                return Err(failure(error, limits, out, run.script_name));
            }
        };
        let answer = match suspension {
            Suspension::Complete(value) => {
                session.finish().await;
                return Ok(value);
            }
            Suspension::Call {
                call_id,
                function_name,
                args,
                kwargs,
                object_id,
            } => match sdk::route(&function_name, args, kwargs, object_id) {
                Request::Answer(answer) => answer,
                Request::Report { title, text } => sdk::report(run.observer, title, text),
                Request::Tool {
                    name,
                    arguments,
                    asynchronous: true,
                    ..
                } => {
                    calls.start(call_id, name, arguments)?;
                    Answer::Pending
                }
                Request::Tool {
                    name,
                    arguments,
                    text,
                    ..
                } => match calls.call(name, arguments, text).await? {
                    Ok(value) => Answer::Return(value),
                    Err(exc) => Answer::Raise(exc),
                },
            },
            Suspension::OsCall { function_name } => sdk::refuse_os_call(&function_name),
            Suspension::NameLookup => Answer::Lookup(None),
            Suspension::ResolveFutures { pending } => {
                Answer::Resolve(calls.resolve(&pending).await?)
            }
        };
        step = session.answer(answer, out).await;
    }
}

fn output_error(limits: &CodeLimits) -> CodeError {
    CodeError::Output {
        limit: limits.max_spilled_bytes(),
        visible: limits.max_output_bytes,
    }
}

/// An uncaught exception: the interpreter's limit errors become the limit they name.
fn python_error(
    exc: MontyException,
    limits: &CodeLimits,
    out: &PrintedOutput,
    script_name: &str,
) -> CodeError {
    let exc = sdk::in_user_lines(exc, script_name);
    let message = exc.message().unwrap_or_default();
    match exc.exc_type() {
        _ if out.overflowed() => output_error(limits),
        ExcType::TimeoutError if message.starts_with("time limit exceeded") => {
            CodeError::WallTime {
                limit_ms: limits.wall_time_ms,
            }
        }
        ExcType::MemoryError if message.starts_with("memory limit exceeded") => CodeError::Memory {
            limit_mb: limits.memory_mb,
        },
        ExcType::RuntimeError if message.starts_with("suspension limit") => CodeError::ToolCalls {
            limit: limits.max_tool_calls,
        },
        ExcType::SyntaxError | ExcType::NotImplementedError if exc.traceback().len() <= 1 => {
            CodeError::Syntax {
                traceback: exc.to_string(),
            }
        }
        ExcType::RecursionError => CodeError::Python {
            traceback: format!(
                "{exc}\n(the max_recursion_depth limit is {})",
                limits.recursion_depth()
            ),
        },
        _ => CodeError::Python {
            traceback: exc.to_string(),
        },
    }
}

/// How a run that stopped without a value failed.
fn failure(
    error: SandboxError,
    limits: &CodeLimits,
    out: &PrintedOutput,
    script_name: &str,
) -> CodeError {
    match error {
        SandboxError::Python(exc) => python_error(exc, limits, out, script_name),
        SandboxError::OutOfMemory => CodeError::Memory {
            limit_mb: limits.memory_mb,
        },
        SandboxError::Crashed(reason) => CodeError::Crashed { reason },
        SandboxError::Unresponsive(after) => CodeError::Crashed {
            reason: format!("the worker stopped answering and was killed after {after:?}"),
        },
        SandboxError::Broken(reason) => CodeError::Sandbox(reason),
    }
}
