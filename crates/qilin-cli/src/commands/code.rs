//! `qilin code run`: run a Python script against the built-in tools of a workspace, the way
//! `run_code` runs a model's code; and the hidden worker entry the sandbox pool starts.

use crate::commands::{runtime_error, sandbox_helper, worker_sandbox};
use anyhow::{Context, Result};
use clap::Subcommand;
use qilin_protocol::{CallStatus, EventBody, ToolResultEvent};
use qilin_runtime::{ModelChoice, Runtime, TOOLS_AGENT};
use qilin_store::MemoryStore;
use qilin_tool::{CallOutcome, Caller, ToolCall};
use serde::Serialize;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The `code` subcommands.
#[derive(Subcommand)]
pub enum CodeCommand {
    /// Run a Python script (a file, or `-` for stdin) in the sandbox against the built-in
    /// tools: print what it printed, one line per tool call, and its final value.
    Run {
        /// The script, or `-` to read it from stdin.
        file: String,
        /// The folder the tools work in; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The id of the `run_code` call a script runs as; its tool calls are `code.1`, `code.2`, ...
const CALL_ID: &str = "code";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NestedCall {
    call_id: String,
    tool: String,
    status: CallStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_code: Option<String>,
    duration_ms: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    printed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    calls: Vec<NestedCall>,
}

/// Runs a `code` subcommand.
pub fn run(command: CodeCommand) -> Result<ExitCode> {
    let CodeCommand::Run {
        file,
        workspace,
        json,
    } = command;
    let code = read_script(&file)?;
    let workspace = match workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
    // A private folder (mode 0700, a random name) kept after the run, so spilled output can
    // be read and no other user can create, predict or read it.
    let data_dir = tempfile::Builder::new()
        .prefix("qilin-code-run-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .context("cannot create a folder for the run's spilled output")?
        .keep();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let (outcome, calls) = runtime.block_on(run_script(code, workspace, data_dir))?;
    let report = Report {
        ok: outcome.status == CallStatus::Ok,
        printed: outcome
            .output
            .as_ref()
            .and_then(|o| o["printed"].as_str().map(str::to_string)),
        value: outcome.output.as_ref().map(|o| o["value"].clone()),
        error: outcome
            .error
            .as_ref()
            .map(|e| format!("{}: {}", e.code, e.message)),
        calls,
    };
    let mut out = String::new();
    if json {
        out.push_str(&serde_json::to_string_pretty(&report)?);
        out.push('\n');
        print!("{out}");
    } else {
        out.push_str(report.printed.as_deref().unwrap_or_default());
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        for call in &report.calls {
            out.push_str(&format!(
                "[call {}] {} {}{} {} ms\n",
                call.call_id,
                call.tool,
                status_word(call.status),
                call.error_code
                    .as_deref()
                    .map(|c| format!(" {c}"))
                    .unwrap_or_default(),
                call.duration_ms
            ));
        }
        if let Some(value) = &report.value {
            out.push_str(&format!("[value] {value}\n"));
        }
        print!("{out}");
        if let Some(error) = &report.error {
            eprintln!("{error}");
        }
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn status_word(status: CallStatus) -> &'static str {
    match status {
        CallStatus::Ok => "ok",
        CallStatus::Error => "error",
        CallStatus::Denied => "denied",
        CallStatus::Interrupted => "interrupted",
    }
}

fn read_script(file: &str) -> Result<String> {
    if file == "-" {
        let mut code = String::new();
        std::io::stdin()
            .read_to_string(&mut code)
            .context("cannot read the script from stdin")?;
        return Ok(code);
    }
    std::fs::read_to_string(file).with_context(|| format!("cannot read the script {file}"))
}

/// Runs `code` as the `run_code` call of a session of the built-in `tools` agent — no model,
/// nothing stored, its files in `data_dir` — and gathers the results of the calls it made.
async fn run_script(
    code: String,
    workspace: PathBuf,
    data_dir: PathBuf,
) -> Result<(CallOutcome, Vec<NestedCall>)> {
    let runtime = Runtime::new(Arc::new(MemoryStore::new()), worker_sandbox()?)
        .with_sandbox_helper(sandbox_helper()?);
    let handle = runtime
        .session(&workspace)
        .builtin_agent(TOOLS_AGENT)
        .model(ModelChoice::none())
        .project_context(false)
        .data_dir(data_dir)
        .build()
        .await
        .map_err(runtime_error)?;
    for note in handle.notes() {
        eprintln!("note: {note}");
    }
    let executor = handle.executor();
    let mut events = executor.session().events().subscribe();
    let call = ToolCall {
        call_id: CALL_ID.into(),
        name: "run_code".into(),
        arguments: serde_json::json!({ "code": code }),
    };
    let outcome = executor.dispatch(call, Caller::Direct).await;
    let mut calls = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let EventBody::ToolResult(result) = event.body
            && result.parent_call_id.as_deref() == Some(CALL_ID)
        {
            calls.push(nested(result));
        }
    }
    handle.close().await.map_err(runtime_error)?;
    Ok((outcome, calls))
}

fn nested(result: ToolResultEvent) -> NestedCall {
    NestedCall {
        call_id: result.call_id,
        tool: result.tool_name,
        status: result.status,
        error_code: result.error_code.map(|c| c.to_string()),
        duration_ms: result.duration_ms,
    }
}

/// `qilin subprocess`: serve the sandbox as a worker of the code-mode pool, with the memory
/// cap enforced by the global allocator.
pub fn serve_worker() -> ExitCode {
    qilin_codemode::worker::serve_stdio(|max_memory, type_check| {
        // Fails only when the allocator is not installed, which main.rs guarantees.
        let _ = monty_alloc::set_limit(max_memory, type_check);
    })
}
