//! The linter over an application's tools: `qilin check` for a host that adds tools of its
//! own, so an application lints its tools, skills and agent files as Qilin lints its own.

use crate::assembly::full_registry;
use crate::{RuntimeError, builtin_skills_root, workspace_of};
use qilin_check::{Report, Target};
use qilin_codemode::{CodeLimits, CodeMode};
use qilin_mcp::{ServerSnapshot, generated_skills, register_server_tools, workspace_snapshots};
use qilin_skill::{SkillRoot, SkillSet};
use qilin_tool::ToolRegistry;
use std::path::Path;
use std::sync::Arc;

/// Lints `paths` — workspace folders (their skills under `.qilin/skills/`, their agent files
/// and every tool), skill folders (holding `SKILL.md`) or `.agent` files — with the rules of
/// `qilin check`, over the built-in tools, `skill`, `run_code`, `tools` (the application's)
/// and the tools of each workspace's MCP servers as last listed (`.qilin/mcp/*.json`), with
/// the skills generated for those servers and the built-in skills beside the workspace's: the
/// tools and skills its sessions will see. The report's findings say what is wrong and how to
/// fix it; [`Report::fails`] says whether the check fails; its notes, what could not be read.
pub fn check(tools: &ToolRegistry, paths: &[impl AsRef<Path>]) -> Result<Report, RuntimeError> {
    let mut notes = Vec::new();
    let mut snapshots: Vec<ServerSnapshot> = Vec::new();
    for path in paths {
        let path = path.as_ref();
        let workspace = match path.is_dir() {
            true => path.to_path_buf(),
            false => workspace_of(path),
        };
        let (found, errors) = workspace_snapshots(&workspace);
        notes.extend(errors.iter().map(ToString::to_string));
        for snapshot in found {
            if !snapshots.iter().any(|s| s.server == snapshot.server) {
                snapshots.push(snapshot);
            }
        }
    }
    let mut roots = Vec::new();
    if !snapshots.is_empty() {
        roots.push(SkillRoot::generated(generated_skills(&snapshots)));
    }
    roots.push(builtin_skills_root());
    let targets = paths
        .iter()
        .map(|path| Target::from_path(path.as_ref(), &roots))
        .collect::<Result<Vec<_>, _>>()?;
    let mut registry = tool_catalog();
    registry.extend(tools)?;
    for snapshot in &snapshots {
        if let Err(error) = register_server_tools(&mut registry, snapshot, None, &[]) {
            notes.push(error.to_string());
        }
    }
    let mut report = qilin_check::check(&registry, &targets);
    report.notes = notes;
    Ok(report)
}

/// Every tool of this build, as a check lints them before a host adds its own (an
/// application's, MCP servers') and as `qilin tools` lists them: the built-ins, `skill` and
/// `run_code`. `skill` here serves no skill (the skills are a check's targets).
pub fn tool_catalog() -> ToolRegistry {
    full_registry(
        Arc::new(SkillSet::new()),
        CodeMode::in_process(CodeLimits::default()),
    )
}
