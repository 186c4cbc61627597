//! One module per subcommand.

pub mod agent;
pub mod check;
pub mod code;
pub mod demo;
pub mod run;
pub mod serve;
pub mod sessions;
pub mod skills;
pub mod tools;

use anyhow::{Context, Result};
use qilin_runtime::CodeSandbox;
use qilin_store::{EventStore, SqliteOptions, SqliteStore};
use std::path::Path;
use std::sync::Arc;

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
    let options = SqliteOptions {
        shared: true,
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(&path, options)
        .with_context(|| format!("cannot open the session store {}", path.display()))?;
    Ok(Arc::new(store))
}
