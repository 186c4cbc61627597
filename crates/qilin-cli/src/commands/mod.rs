//! One module per subcommand.

pub mod agent;
pub mod check;
pub mod code;
pub mod demo;
pub mod run;
pub mod sessions;
pub mod skills;
pub mod tools;

use anyhow::{Context, Result};
use qilin_runtime::CodeSandbox;
use qilin_store::{EventStore, MemoryStore};
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

/// The store of the sessions of `workspace`.
pub fn open_store(_workspace: &Path) -> Result<Arc<dyn EventStore>> {
    Ok(Arc::new(MemoryStore::new()))
}
