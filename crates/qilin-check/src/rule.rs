//! The catalogue of rules: each has a stable code, a stable kebab-case name and a severity.

use qilin_skill::Severity;
use serde::Serialize;

/// One rule of `qilin check`. Codes and names never change meaning; new rules get new codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum Rule {
    /// A dual-active tool has no description (its doc comment is empty).
    ToolDescriptionMissing,
    /// A parameter of a dual-active tool, nested ones included, has no description.
    ParameterDescriptionMissing,
    /// A dual-active tool has no prompt hint.
    PromptHintMissing,
    /// A dual-active tool's prompt hint defers to a skill the mounted model cannot see.
    PromptHintDefers,
    /// A dual-active tool's description defers to a skill instead of saying what it does.
    DescriptionDefers,
    /// A code-mode-only tool is covered by no skill, so no model can learn it.
    CodeModeOnlyUncovered,
    /// An agent mounts a code-mode-only tool under `tools:`.
    CodeModeOnlyMounted,
    /// A skill covers a tool but never names one of its parameters.
    ParameterUndocumented,
    /// A skill covers a tool but never names one of its output's top-level fields.
    OutputFieldUndocumented,
    /// A skill mentions a tool but shows no Python example calling it.
    ExampleMissing,
    /// A skill covers a code-mode-only tool but does not state its purpose, return shape,
    /// boundary conditions or common errors.
    SkillStatementMissing,
    /// A Python example does not compile: with Monty when it is meant for `run_code` (it
    /// calls `sdk.tool.call`, or is marked ```` ```python run_code ````), else as CPython.
    ExampleSyntaxError,
    /// A Python example calls a tool that does not exist.
    ExampleUnknownTool,
    /// A Python example passes literal arguments its tool's schema refuses.
    ExampleArgumentsInvalid,
    /// An agent names a tool that does not exist.
    AgentUnknownTool,
    /// An agent names a skill that does not exist.
    AgentUnknownSkill,
    /// An agent preloads a file its skill does not have.
    AgentPreloadMissing,
    /// An agent has code mode on but can read no skill.
    AgentNoReadableSkill,
    /// An agent file is broken in another way (YAML, instructions, review policy).
    AgentInvalid,
    /// An agent file loads but something in it deserves attention (an unknown key).
    AgentWarning,
    /// A skill folder does not load (front matter, name).
    SkillInvalid,
    /// A skill loads but something in it deserves attention.
    SkillWarning,
    /// A check declaration (an agent file's `checks:`, the workspace's `.qilin/checks.yaml`)
    /// is wrong: no or a duplicate id, a missing or blank command, an unknown parser, a bad
    /// timeout, a `depends_on` naming no check.
    CheckInvalid,
    /// A checks file loads but something in it deserves attention (an unknown key).
    CheckWarning,
    /// A workflow file's name or front matter is wrong (`.qilin/workflows/NAME.py`).
    WorkflowInvalid,
    /// A workflow's script does not compile for code mode.
    WorkflowSyntaxError,
    /// A workflow calls a tool that does not exist or cannot be called from code.
    WorkflowUnknownTool,
    /// A workflow passes literal arguments its tool's schema refuses.
    WorkflowArgumentsInvalid,
}

impl Rule {
    /// Every rule, in code order.
    pub const ALL: [Rule; 28] = [
        Rule::ToolDescriptionMissing,
        Rule::ParameterDescriptionMissing,
        Rule::PromptHintMissing,
        Rule::PromptHintDefers,
        Rule::DescriptionDefers,
        Rule::CodeModeOnlyUncovered,
        Rule::CodeModeOnlyMounted,
        Rule::ParameterUndocumented,
        Rule::OutputFieldUndocumented,
        Rule::ExampleMissing,
        Rule::SkillStatementMissing,
        Rule::ExampleSyntaxError,
        Rule::ExampleUnknownTool,
        Rule::ExampleArgumentsInvalid,
        Rule::AgentUnknownTool,
        Rule::AgentUnknownSkill,
        Rule::AgentPreloadMissing,
        Rule::AgentNoReadableSkill,
        Rule::AgentInvalid,
        Rule::AgentWarning,
        Rule::SkillInvalid,
        Rule::SkillWarning,
        Rule::CheckInvalid,
        Rule::CheckWarning,
        Rule::WorkflowInvalid,
        Rule::WorkflowSyntaxError,
        Rule::WorkflowUnknownTool,
        Rule::WorkflowArgumentsInvalid,
    ];

    /// The stable code: `Q1xx` tool prompts and strategies, `Q2xx` coverage, `Q3xx`
    /// examples, `Q4xx` agents, `Q5xx` skills, `Q6xx` check declarations, `Q7xx` workflows.
    pub fn code(self) -> &'static str {
        match self {
            Rule::ToolDescriptionMissing => "Q101",
            Rule::ParameterDescriptionMissing => "Q102",
            Rule::PromptHintMissing => "Q103",
            Rule::PromptHintDefers => "Q104",
            Rule::DescriptionDefers => "Q105",
            Rule::CodeModeOnlyUncovered => "Q111",
            Rule::CodeModeOnlyMounted => "Q112",
            Rule::ParameterUndocumented => "Q201",
            Rule::OutputFieldUndocumented => "Q202",
            Rule::ExampleMissing => "Q203",
            Rule::SkillStatementMissing => "Q204",
            Rule::ExampleSyntaxError => "Q301",
            Rule::ExampleUnknownTool => "Q302",
            Rule::ExampleArgumentsInvalid => "Q303",
            Rule::AgentUnknownTool => "Q401",
            Rule::AgentUnknownSkill => "Q402",
            Rule::AgentPreloadMissing => "Q403",
            Rule::AgentNoReadableSkill => "Q404",
            Rule::AgentInvalid => "Q405",
            Rule::AgentWarning => "Q406",
            Rule::SkillInvalid => "Q501",
            Rule::SkillWarning => "Q502",
            Rule::CheckInvalid => "Q601",
            Rule::CheckWarning => "Q602",
            Rule::WorkflowInvalid => "Q701",
            Rule::WorkflowSyntaxError => "Q702",
            Rule::WorkflowUnknownTool => "Q703",
            Rule::WorkflowArgumentsInvalid => "Q704",
        }
    }

    /// The stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Rule::ToolDescriptionMissing => "tool-description-missing",
            Rule::ParameterDescriptionMissing => "parameter-description-missing",
            Rule::PromptHintMissing => "prompt-hint-missing",
            Rule::PromptHintDefers => "prompt-hint-defers",
            Rule::DescriptionDefers => "description-defers",
            Rule::CodeModeOnlyUncovered => "code-mode-only-uncovered",
            Rule::CodeModeOnlyMounted => "code-mode-only-mounted",
            Rule::ParameterUndocumented => "parameter-undocumented",
            Rule::OutputFieldUndocumented => "output-field-undocumented",
            Rule::ExampleMissing => "example-missing",
            Rule::SkillStatementMissing => "skill-statement-missing",
            Rule::ExampleSyntaxError => "example-syntax-error",
            Rule::ExampleUnknownTool => "example-unknown-tool",
            Rule::ExampleArgumentsInvalid => "example-arguments-invalid",
            Rule::AgentUnknownTool => "agent-unknown-tool",
            Rule::AgentUnknownSkill => "agent-unknown-skill",
            Rule::AgentPreloadMissing => "agent-preload-missing",
            Rule::AgentNoReadableSkill => "agent-no-readable-skill",
            Rule::AgentInvalid => "agent-invalid",
            Rule::AgentWarning => "agent-warning",
            Rule::SkillInvalid => "skill-invalid",
            Rule::SkillWarning => "skill-warning",
            Rule::CheckInvalid => "check-invalid",
            Rule::CheckWarning => "check-warning",
            Rule::WorkflowInvalid => "workflow-invalid",
            Rule::WorkflowSyntaxError => "workflow-syntax-error",
            Rule::WorkflowUnknownTool => "workflow-unknown-tool",
            Rule::WorkflowArgumentsInvalid => "workflow-arguments-invalid",
        }
    }

    /// How serious a finding of this rule is.
    pub fn severity(self) -> Severity {
        match self {
            Rule::AgentWarning
            | Rule::SkillWarning
            | Rule::CheckWarning
            | Rule::SkillStatementMissing => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

impl From<Rule> for &'static str {
    fn from(rule: Rule) -> Self {
        rule.name()
    }
}

#[cfg(test)]
mod tests {
    use super::Rule;
    use std::collections::HashSet;

    #[test]
    fn codes_and_names_are_unique_and_well_formed() {
        let codes: HashSet<_> = Rule::ALL.iter().map(|r| r.code()).collect();
        let names: HashSet<_> = Rule::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(codes.len(), Rule::ALL.len());
        assert_eq!(names.len(), Rule::ALL.len());
        for rule in Rule::ALL {
            let code = rule.code();
            assert!(code.starts_with('Q') && code.len() == 4, "{code}");
            assert!(code[1..].chars().all(|c| c.is_ascii_digit()), "{code}");
            assert!(
                rule.name()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                rule.name()
            );
        }
    }
}
