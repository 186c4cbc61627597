//! Running the rules over targets, and what came of it.

use crate::examples::{self, Validators};
use crate::skill_docs::SkillDocs;
use crate::target::{Scope, Target, agent_workspace, workspace_skills};
use crate::{Finding, Rule, agents, coverage, tool_prompt, workflows};
use qilin_skill::{Diagnostic, Severity, SkillDiscovery};
use qilin_tool::ToolRegistry;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// What a check found, and how much it looked at.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every finding, sorted by place, without repeats.
    pub findings: Vec<Finding>,
    /// How many tools were checked (0 when no workspace was).
    pub tools: usize,
    /// How many skills were checked.
    pub skills: usize,
    /// How many agent files were checked.
    pub agents: usize,
    /// How many workflow files were checked.
    pub workflows: usize,
    /// What the check could not look at, and why (an MCP server's last listing unreadable):
    /// not findings, so they never fail a check. The host shows them as warnings.
    pub notes: Vec<String>,
}

impl Report {
    /// How many findings are errors.
    pub fn errors(&self) -> usize {
        self.findings.iter().filter(|f| f.is_error()).count()
    }

    /// How many findings are warnings.
    pub fn warnings(&self) -> usize {
        self.findings.len() - self.errors()
    }

    /// True when the check fails: an error, or a warning when warnings are denied.
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.errors() > 0 || (deny_warnings && self.warnings() > 0)
    }

    /// Turns every warning into an error (`--deny warnings`).
    pub fn deny_warnings(&mut self) {
        for finding in &mut self.findings {
            finding.severity = Severity::Error;
        }
    }
}

fn skill_diagnostic(diagnostic: &Diagnostic) -> Finding {
    let rule = if diagnostic.is_error() {
        Rule::SkillInvalid
    } else {
        Rule::SkillWarning
    };
    Finding::from_diagnostic(
        rule,
        diagnostic,
        true,
        "a skill is a folder holding a SKILL.md with `name` and `description` front matter",
    )
}

/// Runs every rule over `targets` with the tools of `registry`. Tool rules (a tool's own
/// prompt, code-mode-only coverage) run when a workspace is among the targets; a skill or
/// agent reached by two targets is checked once. An agent file inside a nested workspace
/// (a folder below holding its own `.qilin/`) is checked against that workspace's skills.
pub fn check(registry: &ToolRegistry, targets: &[Target]) -> Report {
    let mut findings = Vec::new();
    let mut validators = Validators::default();
    let mut checked_skills: BTreeSet<PathBuf> = BTreeSet::new();
    let mut checked_agents: BTreeSet<PathBuf> = BTreeSet::new();
    let mut workspace_coverage: BTreeSet<String> = BTreeSet::new();
    let mut nested: BTreeMap<PathBuf, SkillDiscovery> = BTreeMap::new();
    let whole_workspace = targets.iter().any(|t| t.scope == Scope::Workspace);
    let mut workflows = 0;
    for target in targets {
        if target.scope == Scope::Workspace {
            agents::check_workspace_checks(&target.path, &mut findings);
            workflows +=
                workflows::check_workspace(&target.path, registry, &mut validators, &mut findings);
        }
        if target.scope != Scope::Agent {
            findings.extend(target.discovery.diagnostics.iter().map(skill_diagnostic));
            for skill in target.discovery.skills.iter() {
                if !checked_skills.insert(skill.dir.clone()) {
                    continue;
                }
                let docs = SkillDocs::read(skill);
                let covered =
                    examples::check(skill, &docs, registry, &mut validators, &mut findings);
                coverage::check_skill(skill, &docs, &covered, registry, &mut findings);
                if target.scope == Scope::Workspace {
                    workspace_coverage.extend(covered.into_iter().map(|call| call.tool));
                }
            }
        }
        for agent in &target.agents {
            if !checked_agents.insert(agent.clone()) {
                continue;
            }
            let workspace = agent_workspace(agent, &target.path);
            let skills = if target.scope != Scope::Workspace || workspace == target.path {
                &target.discovery.skills
            } else {
                &nested
                    .entry(workspace)
                    .or_insert_with_key(|dir| workspace_skills(dir, &target.builtin))
                    .skills
            };
            agents::check(agent, skills, registry, &mut findings);
        }
    }
    if whole_workspace {
        tool_prompt::check(registry, &mut findings);
        coverage::check_code_mode_only(registry, &workspace_coverage, &mut findings);
    }
    findings.sort_by(|a, b| (&a.location, a.rule).cmp(&(&b.location, b.rule)));
    findings.dedup();
    Report {
        findings,
        tools: if whole_workspace {
            registry.list().count()
        } else {
            0
        },
        skills: checked_skills.len(),
        agents: checked_agents.len(),
        workflows,
        notes: Vec::new(),
    }
}
