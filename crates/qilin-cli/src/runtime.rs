//! What the commands that run or inspect an agent share: the workspace an agent file belongs
//! to, the skills found for it, and the registry of every tool this build offers — the
//! built-in tools, `skill` over the skills found, and `run_code` with the agent's limits.

use anyhow::{Context, Result};
use qilin_codemode::{CodeLimits, CodeMode, PoolOptions, RunCode, WorkerPool};
use qilin_skill::{CodeLimitsConfig, SkillSet, SkillTool};
use qilin_tool::ToolRegistry;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The workspace of an agent file: the nearest folder above it holding `.qilin/`, else the
/// file's own folder.
pub fn workspace_of(agent_file: &Path) -> PathBuf {
    let absolute = std::path::absolute(agent_file).unwrap_or_else(|_| agent_file.to_path_buf());
    let folder = absolute.parent().unwrap_or(Path::new(".")).to_path_buf();
    folder
        .ancestors()
        .find(|dir| dir.join(".qilin").is_dir())
        .map_or(folder.clone(), Path::to_path_buf)
}

/// Every tool: the built-ins, `skill` over `skills`, and `run_code` running as `code_mode`.
pub fn full_registry(skills: Arc<SkillSet>, code_mode: CodeMode) -> Result<ToolRegistry> {
    let mut registry = crate::commands::registry();
    registry
        .register(SkillTool::new(skills))
        .context("the `skill` tool could not be registered")?;
    registry
        .register(RunCode::new(code_mode))
        .context("the `run_code` tool could not be registered")?;
    Ok(registry)
}

/// Code mode in worker processes of this very binary (`qilin subprocess`), with `limits`.
pub fn pooled_code_mode(limits: CodeLimits) -> Result<CodeMode> {
    let binary =
        std::env::current_exe().context("cannot locate the qilin binary for code-mode workers")?;
    Ok(CodeMode::workers(
        WorkerPool::new(PoolOptions::new(binary)),
        limits,
    ))
}

/// The code-mode limits an agent file asks for, on top of the defaults.
pub fn code_limits(config: &CodeLimitsConfig) -> CodeLimits {
    let defaults = CodeLimits::default();
    CodeLimits {
        wall_time_ms: config.wall_time_ms.unwrap_or(defaults.wall_time_ms),
        memory_mb: config.memory_mb.unwrap_or(defaults.memory_mb),
        max_recursion_depth: config
            .max_recursion_depth
            .map_or(defaults.max_recursion_depth, |d| d as usize),
        max_tool_calls: config
            .max_tool_calls
            .map_or(defaults.max_tool_calls, |n| n as usize),
        max_output_bytes: config
            .max_output_bytes
            .map_or(defaults.max_output_bytes, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
        max_concurrency: config
            .max_concurrency
            .map_or(defaults.max_concurrency, |n| n as usize),
    }
}
