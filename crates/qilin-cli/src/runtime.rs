//! What the commands that run or inspect an agent share: the workspace an agent file belongs
//! to, the skills found for it (the built-in skills last), and the registry of every tool this
//! build offers — the built-in tools, `skill` over the skills found, and `run_code` with the
//! agent's limits.

use anyhow::{Context, Result};
use include_dir::{Dir, include_dir};
use qilin_codemode::{CodeLimits, CodeMode, PoolOptions, RunCode, WorkerPool};
use qilin_skill::{
    CodeLimitsConfig, EmbeddedSkills, SkillDiscovery, SkillRoot, SkillSet, SkillTool, discover,
    skill_roots,
};
use qilin_tool::ToolRegistry;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The workspace of an agent file: the nearest folder above it holding `.qilin/`, else the
/// file's own folder.
pub fn workspace_of(agent_file: &Path) -> PathBuf {
    qilin_skill::agent_workspace(agent_file)
}

/// The skills shipped with the built-in tools (those of the code-mode-only ones), built into
/// the binary and served from memory.
static BUILTIN_SKILLS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../qilin-tools/skills");

/// The root of the built-in skills, searched after every other skill root.
pub fn builtin_skills_root() -> SkillRoot {
    SkillRoot::built_in(EmbeddedSkills::new(&BUILTIN_SKILLS))
}

/// Discovers the skills for `workspace`: its `.qilin/skills/`, `~/.qilin/skills/` (from
/// `HOME`), each `explicit` folder, then the built-in skills; the first root with a name wins.
pub fn discover_skills(workspace: &Path, explicit: &[PathBuf]) -> Result<SkillDiscovery> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut roots = skill_roots(workspace, home.as_deref(), explicit);
    roots.push(builtin_skills_root());
    Ok(discover(&roots))
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
