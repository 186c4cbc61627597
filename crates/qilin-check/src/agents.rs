//! Agent rules. Loading an agent file with [`AgentFile::load`] already checks its tools, skills
//! and preload files; each of its diagnostics becomes a finding with the rule it breaks. On top
//! of that, an agent with code mode on must be able to read a skill (Q404).

use crate::{Finding, Location, Rule};
use qilin_sandbox::{CONFIG_FILE_LIMIT, read_own_text};
use qilin_skill::{AgentFile, AvailableSkills, Diagnostic, DiagnosticKind, SkillSet};
use qilin_tool::ToolRegistry;
use std::path::Path;

/// Which rule an [`AgentFile::load`] error breaks, from its kind.
fn rule_of_error(kind: DiagnosticKind) -> Rule {
    match kind {
        DiagnosticKind::UnknownTool => Rule::AgentUnknownTool,
        DiagnosticKind::UnknownSkill => Rule::AgentUnknownSkill,
        DiagnosticKind::UnreadablePreloadFile => Rule::AgentPreloadMissing,
        DiagnosticKind::InvalidCheck => Rule::CheckInvalid,
        _ => Rule::AgentInvalid,
    }
}

/// Which rule an [`AgentFile::load`] warning breaks, from its kind: a code-mode-only tool under
/// `tools:` loads (it is left out of the tools list) but fails the check.
fn rule_of_warning(kind: DiagnosticKind) -> Rule {
    match kind {
        DiagnosticKind::CodeModeOnlyTool => Rule::CodeModeOnlyMounted,
        _ => Rule::AgentWarning,
    }
}

fn default_help(rule: Rule) -> &'static str {
    match rule {
        Rule::AgentPreloadMissing => {
            "preload a file the skill has, by its path inside the skill's folder (`reference/x.md`)"
        }
        Rule::AgentWarning | Rule::CheckWarning => {
            "remove or correct the key; it has no effect as written"
        }
        Rule::CheckInvalid => {
            "each check needs a unique `id`, a `command`, a known `parser` (cargo, junit, tap, eslint, tsc, plain) and a `timeout` from 1 s to 20 min"
        }
        _ => "correct the agent file where the message points",
    }
}

/// A diagnostic as a finding. For the rules whose messages end with a suggestion (`; did
/// you mean ...`, `; remove it from ...`), that last clause is the help.
fn finding(rule: Rule, diagnostic: &Diagnostic) -> Finding {
    let suggests = matches!(
        rule,
        Rule::CodeModeOnlyMounted | Rule::AgentUnknownTool | Rule::AgentUnknownSkill
    );
    Finding::from_diagnostic(rule, diagnostic, suggests, default_help(rule))
}

/// Checks the workspace's `.qilin/checks.yaml`, when it has one.
pub fn check_workspace_checks(workspace: &Path, findings: &mut Vec<Finding>) {
    let (_, diagnostics) = qilin_skill::workspace_checks(workspace);
    findings.extend(diagnostics.iter().map(|diagnostic| {
        let rule = match diagnostic.is_error() {
            true => Rule::CheckInvalid,
            false => Rule::CheckWarning,
        };
        Finding::from_diagnostic(
            rule,
            diagnostic,
            rule == Rule::CheckWarning,
            default_help(rule),
        )
    }));
}

/// Checks the agent file at `path` against the tools and skills it can use.
pub fn check(path: &Path, skills: &SkillSet, registry: &ToolRegistry, findings: &mut Vec<Finding>) {
    match AgentFile::load(path, skills, registry) {
        Err(error) => {
            findings.extend(error.diagnostics.iter().map(
                |diagnostic| match diagnostic.is_error() {
                    true => finding(rule_of_error(diagnostic.kind), diagnostic),
                    false => finding(rule_of_warning(diagnostic.kind), diagnostic),
                },
            ))
        }
        Ok(loaded) => {
            findings.extend(
                loaded
                    .warnings
                    .iter()
                    .map(|diagnostic| finding(rule_of_warning(diagnostic.kind), diagnostic)),
            );
            if let Some(finding) = no_readable_skill(&loaded.value, skills) {
                findings.push(finding);
            }
        }
    }
}

fn no_readable_skill(agent: &AgentFile, skills: &SkillSet) -> Option<Finding> {
    if !agent.code_mode || !agent.preload.is_empty() {
        return None;
    }
    let readable = match &agent.available_skills {
        AvailableSkills::All => !skills.is_empty(),
        AvailableSkills::Named(names) => names.iter().any(|name| skills.get(name).is_some()),
    };
    if readable {
        return None;
    }
    let line = read_own_text(&agent.path, CONFIG_FILE_LIMIT)
        .ok()
        .and_then(|text| {
            text.lines()
                .position(|line| line.starts_with("code_mode"))
                .map(|index| index + 1)
        });
    Some(Finding::new(
        Rule::AgentNoReadableSkill,
        Location::file(&agent.path, line, line.map(|_| 1)),
        format!(
            "agent `{}` has code mode on but can read no skill, so it cannot learn the tools it calls from code",
            agent.name
        ),
        "list the skills it needs under `skills.available` (or `available: all`) and add a skill to the workspace",
    ))
}
