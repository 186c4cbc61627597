//! `invoices`: an application built on Qilin, with tools of its own.
//!
//! `invoices` (no arguments) runs one session offline: a scripted model creates an invoice
//! with a direct call of the dual-active `create_invoice`, then totals the invoices from Python
//! in `run_code` with the code-mode-only `invoice_totals`. It prints the session's events as
//! JSON lines, as `qilin run --json` does. `invoices check [PATH]` lints the application's tools
//! with its workspace (or the workspace, skill folder or agent file at `PATH`), as
//! `qilin check` lints Qilin's, and fails on an error. `invoices serve` serves the
//! application's sessions over HTTP with Qilin's server and web client, on 127.0.0.1, each new
//! session running the offline script with the application's tools.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod serve;
mod tools;

use futures_util::StreamExt;
use qilin::{
    CodeSandbox, EventBody, MemoryStore, ModelChoice, Runtime, RuntimeError, Script, render_text,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use tools::{CreateInvoice, InvoiceBook, InvoiceTotalsTool};

/// What the scripted model does, turn by turn.
const SCRIPT: &str = include_str!("../workspace/offline.script.yaml");

/// The script's file name within the workspace.
const SCRIPT_FILE: &str = "offline.script.yaml";

/// The files of the application's workspace, written to a fresh folder for each run: its
/// agent file, the skill that teaches both tools, and the scripted model's script.
const WORKSPACE_FILES: &[(&str, &str)] = &[
    (SCRIPT_FILE, SCRIPT),
    (
        "invoices.agent",
        include_str!("../workspace/invoices.agent"),
    ),
    (
        ".qilin/skills/invoices/SKILL.md",
        include_str!("../workspace/.qilin/skills/invoices/SKILL.md"),
    ),
];

/// The agent file the session runs, within the workspace.
const AGENT_FILE: &str = "invoices.agent";

/// The prompt of the offline run.
const PROMPT: &str = "Invoice Acme GmbH for two half-day design workshops at 450.00 EUR each and \
                      120.00 EUR of travel, payable in 14 days; then tell me what we have \
                      invoiced in EUR so far.";

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => run().await,
        ["check"] => check(None),
        ["serve"] => serve().await,
        ["check", path] => check(Some(Path::new(path))),
        _ => {
            eprintln!(
                "usage: invoices            run the offline session, printing its events as JSON lines\n       invoices check [PATH]  lint the tools with the workspace (or PATH)\n       invoices serve         serve the application's sessions over HTTP on 127.0.0.1"
            );
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime with the application's tools, over a fresh invoice book.
fn runtime() -> Result<Runtime, RuntimeError> {
    let book = Arc::new(InvoiceBook::default());
    Runtime::builder(Arc::new(MemoryStore::new()), CodeSandbox::InProcess)
        .tool(CreateInvoice {
            book: Arc::clone(&book),
        })
        .tool(InvoiceTotalsTool { book })
        .build()
}

/// Writes the application's workspace into `dir`.
fn write_workspace(dir: &Path) -> std::io::Result<()> {
    for (name, text) in WORKSPACE_FILES {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// Runs the offline session and prints its events, one JSON object a line.
async fn run() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let workspace = tempfile::tempdir()?;
    write_workspace(workspace.path())?;
    let script = Script::parse(SCRIPT, Path::new(SCRIPT_FILE))?;
    let session = runtime()?
        .session(workspace.path())
        .agent_file(workspace.path().join(AGENT_FILE))
        .model(ModelChoice::scripted(script))
        // The agent runs no commands: the bash sandbox, whose helper is the `qilin` binary,
        // is not needed.
        .no_sandbox(true)
        .project_context(false)
        .build()
        .await?;
    for diagnostic in session.diagnostics() {
        eprintln!("{diagnostic}");
    }
    let mut events = session.subscribe_from(0);
    let turn = session.submit(PROMPT, None)?;
    while let Some(event) = events.next().await {
        let event = event?;
        let line = serde_json::to_string(&event)?;
        // A reader that went away (`invoices | head`) ends the run quietly.
        if writeln!(std::io::stdout(), "{line}").is_err() {
            session.close().await?;
            return Ok(ExitCode::SUCCESS);
        }
        if matches!(event.body, EventBody::TurnFinished { .. }) {
            break;
        }
    }
    let summary = turn.finished().await;
    session.close().await?;
    Ok(match summary.error {
        None => ExitCode::SUCCESS,
        Some(error) => {
            eprintln!("the turn failed: {error}");
            ExitCode::FAILURE
        }
    })
}

/// Lints the application's tools with its workspace, or with what `path` names.
fn check(path: Option<&Path>) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let written;
    let target: PathBuf = match path {
        Some(path) => path.to_path_buf(),
        None => {
            written = tempfile::tempdir()?;
            write_workspace(written.path())?;
            written.path().to_path_buf()
        }
    };
    let report = runtime()?.check(&target)?;
    // A reader that went away misses the report; the exit code still says how it went.
    let _ = write!(std::io::stdout(), "{}", render_text(&report));
    Ok(match report.fails(false) {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    })
}

/// Serves the application's sessions over HTTP until stopped, in a fresh workspace.
async fn serve() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let workspace = tempfile::tempdir()?;
    write_workspace(workspace.path())?;
    let workspace_path = workspace.path().canonicalize()?;
    let served = serve::Served {
        agent_file: workspace_path.join(AGENT_FILE),
        model: format!("scripted:{SCRIPT_FILE}"),
        workspace: workspace_path,
    };
    let code = serve::serve(runtime()?, served).await?;
    drop(workspace);
    Ok(code)
}
