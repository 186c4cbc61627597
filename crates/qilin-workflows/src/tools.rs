//! The three tools: `workflow_run` runs a workflow file on code mode, `workflow_status` and
//! `workflow_stop` follow and stop runs.

use crate::file::{DEFAULT_TIMEOUT_SECS, WorkflowFile, default_workflow_dirs, find_workflow};
use crate::runs::{FoundRun, RunHandle, WorkflowRuns};
use qilin_codemode::{CodeError, CodeMode, Journals, RunObserver, RunOptions};
use qilin_protocol::workflows::{
    WorkflowRun, WorkflowRunOutput, WorkflowStatus, WorkflowStatusOutput, WorkflowStepKind,
};
use qilin_protocol::{
    CallPresentation, CallStatus, CallerKind, ContentBlock, Detail, ErrorCode, EventBody,
    ToolResultEvent,
};
use qilin_tool::{Caller, Executor, Tool, ToolCall, ToolContext, ToolError, ToolResult, now};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// This tool's name.
const WORKFLOW_RUN: &str = "workflow_run";

/// The tool `checks_run`, which a workflow's `checks` are run with.
const CHECKS_TOOL: &str = "checks_run";

/// Run a workflow: a Python file of the workspace (`.qilin/workflows/NAME.py`) that calls tools
/// in sequence and in parallel and writes a report. Its calls nest under this call like
/// `run_code`'s. Foreground (default) the call returns when the run has ended; with
/// `background: true` it returns at once (status `running`), you are told between your steps
/// when it ends, and `workflow_status` gives its steps, report and result. Returns `{run}`: id,
/// status (`completed`, `failed`, `stopped`, `interrupted`), steps (calls and report
/// sections), result or error, duration.
#[derive(qilin_tool::Tool)]
#[tool(name = "workflow_run")]
pub struct WorkflowRunTool {
    mode: Arc<CodeMode>,
}

impl WorkflowRunTool {
    /// The tool running workflows as `mode` runs code (`run_code`'s sandbox and limits).
    pub fn new(mode: CodeMode) -> Self {
        WorkflowRunTool {
            mode: Arc::new(mode),
        }
    }
}

/// Arguments of `workflow_run`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowRunArgs {
    /// The workflow's name: its file's name without `.py` (`.qilin/workflows/NAME.py`).
    pub workflow: String,
    /// The workflow's arguments, as its front matter declares them; the script reads them as
    /// `args["name"]`.
    #[serde(default)]
    pub args: Option<Value>,
    /// Run in the background: return at once and follow the run with `workflow_status`.
    #[serde(default)]
    pub background: Option<bool>,
}

impl Tool for WorkflowRunTool {
    type Args = WorkflowRunArgs;
    type Output = WorkflowRunOutput;

    fn prompt_hint(&self) -> &str {
        "Use workflow_run when the workspace has a workflow for the job (`.qilin/workflows/`): \
         a tested script of tool calls and agents, run the same way each time, with a report. \
         Give the arguments its front matter declares. Run it in the background when it is long \
         and you have other work, then read it with workflow_status."
    }

    fn present(&self, args: &WorkflowRunArgs) -> CallPresentation {
        let action = match args.background {
            Some(true) => "Start workflow in the background",
            _ => "Run workflow",
        };
        CallPresentation::new(action, args.workflow.trim())
    }

    fn before_detail(&self, args: &WorkflowRunArgs) -> Option<Detail> {
        args.args.as_ref().map(|value| Detail::Json {
            value: value.clone(),
        })
    }

    fn detail(
        &self,
        _args: &WorkflowRunArgs,
        result: &ToolResult<WorkflowRunOutput>,
    ) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(output) => run_text(&output.run),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: WorkflowRunArgs, cx: &ToolContext) -> ToolResult<WorkflowRunOutput> {
        let runs = runs_of(cx)?;
        // This call continued after a restart (its turn was left open while it ran): its run
        // goes on, replaying its journal, rather than starting again.
        if let Some(handle) = runs.of_call(cx.call_id()) {
            return Ok(WorkflowRunOutput {
                run: follow(&handle).await,
            });
        }
        let stop = cx.cancellation().child_token();
        if let Some(handle) = runs.resume(
            Arc::clone(cx.executor().session_arc()),
            cx.call_id(),
            stop.clone(),
        ) {
            let execution = resumed(Arc::clone(&self.mode), Arc::clone(&handle), cx.clone());
            if handle.snapshot().background {
                tokio::spawn(execution);
                return Ok(WorkflowRunOutput {
                    run: handle.snapshot(),
                });
            }
            return Ok(WorkflowRunOutput {
                run: execution.await,
            });
        }
        let dirs = default_workflow_dirs(cx.workspace());
        let file = find_workflow(&dirs, &args.workflow).map_err(ToolError::invalid_arguments)?;
        let arguments = file
            .arguments(args.args.as_ref())
            .map_err(ToolError::invalid_arguments)?;
        let background = args.background.unwrap_or(false);
        let handle = runs.start(
            Arc::clone(cx.executor().session_arc()),
            WorkflowRun {
                run_id: String::new(),
                call_id: Some(cx.call_id().to_string()),
                workflow: file.name.clone(),
                description: Some(file.description.clone()),
                args: arguments.clone(),
                status: WorkflowStatus::Running,
                background,
                steps: Vec::new(),
                result: None,
                error: None,
                started_at: now(),
                ended_at: None,
                duration_ms: None,
            },
            stop,
        );
        let execution = execute(
            Arc::clone(&self.mode),
            file,
            arguments,
            Arc::clone(&handle),
            cx.clone(),
        );
        if background {
            tokio::spawn(execution);
            return Ok(WorkflowRunOutput {
                run: handle.snapshot(),
            });
        }
        Ok(WorkflowRunOutput {
            run: execution.await,
        })
    }

    fn content(&self, output: &WorkflowRunOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(run_text(&output.run))]
    }
}

/// A run already going in this process as the call asks for it again: a background one as it
/// stands, a foreground one once it has ended.
async fn follow(handle: &RunHandle) -> WorkflowRun {
    match handle.snapshot() {
        run if run.background => run,
        _ => handle.ended().await,
    }
}

/// Picks up the background runs an earlier process of the session left running (the session
/// was resumed): each runs its script again from its start as `mode` runs code, its calls
/// answered from their journal (which the host put in the session's `Journals`), and goes on
/// in the background as before. Returns how many it picked up.
pub fn resume_background_runs(mode: &CodeMode, executor: &Executor) -> usize {
    let Some(runs) = executor.session().services().get::<WorkflowRuns>() else {
        return 0;
    };
    let mode = Arc::new(mode.clone());
    let mut resumed_runs = 0;
    for call_id in runs.waiting_background_calls() {
        let stop = CancellationToken::new();
        let Some(handle) = runs.resume(Arc::clone(executor.session_arc()), &call_id, stop.clone())
        else {
            continue;
        };
        let cx = executor.detached_context(call_id, WORKFLOW_RUN, stop);
        tokio::spawn(resumed(Arc::clone(&mode), handle, cx));
        resumed_runs += 1;
    }
    resumed_runs
}

/// Runs a resumed run's workflow again with the arguments it was given: the journal of its
/// calls answers them up to where the last process stopped. A workflow file gone since ends
/// the run `failed`, its calls left without a result closed as interrupted.
async fn resumed(mode: Arc<CodeMode>, handle: Arc<RunHandle>, cx: ToolContext) -> WorkflowRun {
    let run = handle.snapshot();
    let dirs = default_workflow_dirs(cx.workspace());
    match find_workflow(&dirs, &run.workflow) {
        Ok(file) => execute(mode, file, run.args, handle, cx).await,
        Err(error) => {
            close_journaled_calls(&cx);
            handle.finish(
                WorkflowStatus::Failed,
                None,
                Some(format!(
                    "the run could not be resumed after the restart: {error}"
                )),
            )
        }
    }
}

/// Closes, as interrupted, the calls of `cx`'s run that its journal holds without a result:
/// the run will not replay them.
fn close_journaled_calls(cx: &ToolContext) {
    let Some(journal) = cx
        .service::<Journals>()
        .and_then(|journals| journals.take(cx.call_id()))
    else {
        return;
    };
    for call in journal.calls().filter(|call| call.result.is_none()) {
        cx.session()
            .events()
            .emit(EventBody::ToolResult(ToolResultEvent {
                call_id: call.call_id.clone(),
                tool_name: call.tool.clone(),
                caller: CallerKind::Code,
                parent_call_id: Some(cx.call_id().to_string()),
                status: CallStatus::Interrupted,
                error_code: Some(ErrorCode::Interrupted),
                content: vec![ContentBlock::text(
                    "The process running the workflow ended while this call ran, and the run \
                     could not be resumed; whether the call took effect is unknown.",
                )],
                user_reason: None,
                output: None,
                detail: None,
                duration_ms: 0,
            }));
    }
}

/// Runs a workflow's script to its end (or its limit, or a stop), then its checks, and records
/// how it ended.
async fn execute(
    mode: Arc<CodeMode>,
    file: WorkflowFile,
    arguments: Value,
    handle: Arc<RunHandle>,
    cx: ToolContext,
) -> WorkflowRun {
    let stop = handle.stop_token();
    let options = RunOptions {
        timeout_ms: None,
        max_tool_calls: file.limits.max_calls,
        globals: vec![("args".to_string(), arguments)],
        observer: Some(Arc::clone(&handle) as Arc<dyn RunObserver>),
        cancel: Some(stop.clone()),
        script_name: Some(script_name(&file, &cx)),
    };
    let timeout = file.limits.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
    let run = mode.run_with(&file.code, options, &cx);
    tokio::pin!(run);
    let mut timed_out = false;
    let outcome = tokio::select! {
        outcome = &mut run => outcome,
        () = tokio::time::sleep(Duration::from_secs(timeout)) => {
            timed_out = true;
            stop.cancel();
            run.await
        }
    };
    match outcome {
        Ok(output) => {
            let result = match (&output.value, output.printed.trim()) {
                (Value::Null, "") => None,
                (Value::Null, printed) => Some(Value::String(printed.to_string())),
                (value, _) => Some(value.clone()),
            };
            if file.checks.is_empty() {
                return handle.finish(WorkflowStatus::Completed, result, None);
            }
            match run_checks(&file, &handle, &cx).await {
                Ok(()) => handle.finish(WorkflowStatus::Completed, result, None),
                Err(error) => handle.finish(WorkflowStatus::Failed, result, Some(error)),
            }
        }
        Err(failure) => {
            let (status, error) = if timed_out {
                (
                    WorkflowStatus::Failed,
                    format!(
                        "the workflow ran past its limit of {timeout} s and was stopped \
                         (raise `limits.timeout_secs` in its front matter)"
                    ),
                )
            } else if handle.was_stopped() {
                (
                    WorkflowStatus::Stopped,
                    "stopped by workflow_stop".to_string(),
                )
            } else if failure.error == CodeError::Interrupted {
                (
                    WorkflowStatus::Interrupted,
                    "the session was interrupted before the workflow ended".to_string(),
                )
            } else {
                (
                    WorkflowStatus::Failed,
                    failure.error.to_tool_error(&failure.printed).message,
                )
            };
            handle.finish(status, None, Some(error))
        }
    }
}

/// The workflow file's name in tracebacks: its path in the workspace
/// (`.qilin/workflows/NAME.py`), or its whole path when it is elsewhere (the user's own).
fn script_name(file: &WorkflowFile, cx: &ToolContext) -> String {
    file.path
        .strip_prefix(cx.workspace())
        .unwrap_or(&file.path)
        .display()
        .to_string()
}

/// Runs the workflow's `checks` with `checks_run`, as a call nested under the run's; `Err`
/// says which failed.
async fn run_checks(
    file: &WorkflowFile,
    handle: &RunHandle,
    cx: &ToolContext,
) -> Result<(), String> {
    let call_id = format!("{}.checks", cx.call_id());
    handle.call_step(
        &call_id,
        CHECKS_TOOL,
        format!("checks {}", file.checks.join(", ")),
    );
    let outcome = cx
        .executor()
        .dispatch_cancellable(
            ToolCall {
                call_id: call_id.clone(),
                name: CHECKS_TOOL.to_string(),
                arguments: json!({ "ids": file.checks }),
            },
            Caller::Code {
                parent_call_id: cx.call_id().to_string(),
            },
            handle.stop_token(),
        )
        .await;
    handle.call_ended(&call_id, outcome.status);
    if outcome.status != CallStatus::Ok {
        let why = outcome
            .error
            .map(|error| error.message)
            .unwrap_or_else(|| format!("it ended {:?}", outcome.status));
        return Err(format!("the workflow's checks could not run: {why}"));
    }
    let failed: Vec<String> = outcome
        .output
        .as_ref()
        .and_then(|output| output.get("runs"))
        .and_then(Value::as_array)
        .map(|runs| {
            runs.iter()
                .filter(|run| run.get("conclusion").and_then(Value::as_str) == Some("failure"))
                .filter_map(|run| run.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    match failed.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "the script ended but check{} {} failed",
            if failed.len() == 1 { "" } else { "s" },
            failed.join(", ")
        )),
    }
}

/// Follow workflow runs: with `id`, that run; without, every run of this session. Returns
/// `{runs}`: each run's status, steps (calls with their status, report sections with their
/// text), result or error, and duration.
#[derive(qilin_tool::Tool)]
#[tool(name = "workflow_status")]
pub struct WorkflowStatusTool;

/// Arguments of `workflow_status`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowStatusArgs {
    /// The run's id (`wf1`, from `workflow_run`); every run of the session when omitted.
    #[serde(default)]
    pub id: Option<String>,
}

impl Tool for WorkflowStatusTool {
    type Args = WorkflowStatusArgs;
    type Output = WorkflowStatusOutput;

    fn prompt_hint(&self) -> &str {
        "Use workflow_status to read a background workflow run's report and result once you are \
         told it ended, or to see how far a running one got."
    }

    fn present(&self, args: &WorkflowStatusArgs) -> CallPresentation {
        CallPresentation::new("Workflow status", args.id.as_deref().unwrap_or("all runs"))
    }

    fn before_detail(&self, _args: &WorkflowStatusArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &WorkflowStatusArgs,
        result: &ToolResult<WorkflowStatusOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(
        &self,
        args: WorkflowStatusArgs,
        cx: &ToolContext,
    ) -> ToolResult<WorkflowStatusOutput> {
        let runs = runs_of(cx)?;
        let runs = match args.id {
            Some(id) => vec![match runs.get(&id).map_err(ToolError::invalid_arguments)? {
                FoundRun::Live(handle) => handle.snapshot(),
                FoundRun::Recorded(run) => *run,
            }],
            None => runs.all(),
        };
        Ok(WorkflowStatusOutput { runs })
    }

    fn content(&self, output: &WorkflowStatusOutput) -> Vec<ContentBlock> {
        let text = match output.runs.is_empty() {
            true => "This session has run no workflow.".to_string(),
            false => output
                .runs
                .iter()
                .map(run_text)
                .collect::<Vec<_>>()
                .join("\n\n"),
        };
        vec![ContentBlock::text(text)]
    }
}

/// Stop a running workflow run: its script is interrupted and its running calls (agents
/// included) end `interrupted`. Returns `{run}` once it has ended, status `stopped`.
#[derive(qilin_tool::Tool)]
#[tool(name = "workflow_stop")]
pub struct WorkflowStopTool;

/// Arguments of `workflow_stop`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowStopArgs {
    /// The run's id (`wf1`, from `workflow_run`).
    pub id: String,
}

impl Tool for WorkflowStopTool {
    type Args = WorkflowStopArgs;
    type Output = WorkflowRunOutput;

    fn prompt_hint(&self) -> &str {
        "Use workflow_stop when a background workflow run is no longer wanted or has gone wrong; \
         what it did so far stays done."
    }

    fn present(&self, args: &WorkflowStopArgs) -> CallPresentation {
        CallPresentation::new("Stop workflow", args.id.trim())
    }

    fn before_detail(&self, _args: &WorkflowStopArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &WorkflowStopArgs,
        result: &ToolResult<WorkflowRunOutput>,
    ) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(output) => run_text(&output.run),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(
        &self,
        args: WorkflowStopArgs,
        cx: &ToolContext,
    ) -> ToolResult<WorkflowRunOutput> {
        let runs = runs_of(cx)?;
        let handle = match runs.get(&args.id).map_err(ToolError::invalid_arguments)? {
            FoundRun::Live(handle) => handle,
            FoundRun::Recorded(run) if run.status.finished() => {
                return Ok(WorkflowRunOutput { run: *run });
            }
            FoundRun::Recorded(run) => {
                return Err(ToolError::failed(format!(
                    "run {} was left running by the last process and has not been resumed yet; \
                     ask again once it has",
                    run.run_id
                )));
            }
        };
        if !handle.snapshot().status.finished() {
            handle.stop();
        }
        let cancel = cx.cancellation().clone();
        tokio::select! {
            run = handle.ended() => Ok(WorkflowRunOutput { run }),
            () = cancel.cancelled() => Err(ToolError::new(
                ErrorCode::Interrupted,
                "the wait for the run to stop was interrupted; it was asked to stop",
            )),
        }
    }

    fn content(&self, output: &WorkflowRunOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(run_text(&output.run))]
    }
}

/// The session's runs, or why there are none.
fn runs_of(cx: &ToolContext) -> ToolResult<Arc<WorkflowRuns>> {
    cx.service::<WorkflowRuns>().ok_or_else(|| {
        ToolError::failed(
            "workflows are not available in this runtime (its host keeps no workflow runs for \
             the session)",
        )
    })
}

/// What the model reads of a run: its status line, each step, the report, the result.
pub fn run_text(run: &WorkflowRun) -> String {
    let mut text = format!(
        "Workflow `{}` run {}: {}",
        run.workflow,
        run.run_id,
        run.status.as_str()
    );
    if let Some(ms) = run.duration_ms {
        text.push_str(&format!(" in {:.1} s", ms as f64 / 1000.0));
    }
    if run.status == WorkflowStatus::Running && run.background {
        text.push_str(" (in the background; you are told when it ends)");
    }
    let calls: Vec<String> = run
        .steps
        .iter()
        .filter(|step| step.kind == WorkflowStepKind::Call)
        .map(|step| {
            format!(
                "- {} `{}`: {}",
                step.title,
                step.tool.as_deref().unwrap_or(""),
                step.status.as_deref().unwrap_or("running")
            )
        })
        .collect();
    if !calls.is_empty() {
        text.push_str("\n\nSteps:\n");
        text.push_str(&calls.join("\n"));
    }
    for step in &run.steps {
        if step.kind == WorkflowStepKind::Report {
            text.push_str(&format!(
                "\n\n## {}\n\n{}",
                step.title,
                step.text.as_deref().unwrap_or("")
            ));
        }
    }
    if let Some(error) = &run.error {
        text.push_str(&format!("\n\nError: {error}"));
    }
    if let Some(result) = &run.result {
        let shown = match result {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        text.push_str(&format!("\n\nResult: {shown}"));
    }
    text
}
