//! The linter over an application's tools: `qilin check` for a host that adds tools of its
//! own, so an application lints its tools, skills and agent files as Qilin lints its own.

use crate::{RuntimeError, builtin_skills_root, full_registry};
use qilin_check::{Report, Target};
use qilin_codemode::{CodeLimits, CodeMode};
use qilin_skill::SkillSet;
use qilin_tool::ToolRegistry;
use std::path::Path;
use std::sync::Arc;

/// Lints `path` — a workspace folder (its skills under `.qilin/skills/`, its agent files and
/// every tool), a skill folder (holding `SKILL.md`) or an `.agent` file — with the rules of
/// `qilin check`, over the built-in tools, `skill`, `run_code` and `tools` (the application's),
/// with the built-in skills beside the workspace's. The report's findings say what is wrong
/// and how to fix it; [`Report::fails`] says whether the check fails.
pub fn check(tools: &ToolRegistry, path: &Path) -> Result<Report, RuntimeError> {
    let target = Target::from_path(path, &[builtin_skills_root()])?;
    let mut registry = check_registry();
    registry.extend(tools)?;
    Ok(qilin_check::check(&registry, &[target]))
}

/// The tools a check lints against before a host adds its own (an application's, or MCP
/// servers'): the built-ins, `skill` and `run_code`. The skills are the check's targets, so
/// `skill` here serves none.
pub fn check_registry() -> ToolRegistry {
    full_registry(
        Arc::new(SkillSet::new()),
        CodeMode::in_process(CodeLimits::default()),
    )
}
