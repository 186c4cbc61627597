//! One module per subcommand.

pub mod agent;
pub mod check;
pub mod code;
pub mod demo;
pub mod loops;
pub mod lsp;
pub mod mcp;
pub mod run;
pub mod schedules;
pub mod serve;
pub mod sessions;
pub mod skills;
pub mod tools;

use anyhow::{Context, Result};
use qilin_runtime::{CodeSandbox, RuntimeError};
use qilin_store::{EventStore, SqliteOptions, SqliteStore};
use std::path::Path;
use std::sync::Arc;

/// A runtime error as the terminal says it: the library's message, and for what a command-line
/// user fixes with a flag or another command, how.
pub fn runtime_error(err: RuntimeError) -> anyhow::Error {
    let hint = match &err {
        RuntimeError::NoModel { .. } => {
            Some("pass --model openai:NAME, anthropic:NAME or scripted:FILE")
        }
        RuntimeError::UnknownSession(_) => {
            Some("`qilin sessions list` shows the sessions of this workspace")
        }
        _ => None,
    };
    match hint {
        Some(hint) => anyhow::anyhow!("{err}; {hint}"),
        None => err.into(),
    }
}

/// Code mode in worker processes of this very binary (`qilin subprocess`).
pub fn worker_sandbox() -> Result<CodeSandbox> {
    let binary =
        std::env::current_exe().context("cannot locate the qilin binary for code-mode workers")?;
    Ok(CodeSandbox::workers(binary))
}

/// The bash sandbox's helper: this very binary (`qilin sandbox-exec`).
pub fn sandbox_helper() -> Result<qilin_sandbox::SandboxHelper> {
    qilin_sandbox::SandboxHelper::current_exe(qilin_runtime::SANDBOX_HELPER_ARGS)
        .context("cannot locate the qilin binary for the bash sandbox")
}

/// The store of the sessions of `workspace`: its SQLite database, shared with the other
/// terminal sessions of the workspace (a server holds it alone).
pub fn open_store(workspace: &Path) -> Result<Arc<dyn EventStore>> {
    let path = workspace.join(qilin_store::DEFAULT_DATABASE);
    ignore_session_files(workspace);
    let options = SqliteOptions {
        shared: true,
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(&path, options)
        .with_context(|| format!("cannot open the session store {}", path.display()))?;
    Ok(Arc::new(store))
}

/// What Qilin writes in `.qilin/` for itself (the session store, spilled outputs) kept out of
/// git: a `.qilin/.gitignore` naming them, written once; the project's own files there
/// (skills) stay visible.
fn ignore_session_files(workspace: &Path) {
    let folder = workspace.join(".qilin");
    let ignore = folder.join(".gitignore");
    if ignore.exists() || std::fs::create_dir_all(&folder).is_err() {
        return;
    }
    let _ = std::fs::write(
        &ignore,
        "# Written by Qilin: its session store and spilled outputs, not project files.\n\
         qilin.db*\nsessions/\n",
    );
}
