//! Coverage rules: a skill covers a tool when one of its Python examples calls it. A covered
//! tool has every parameter (Q201) and every top-level output field (Q202) named in the
//! skill's text; a tool the skill mentions has an example (Q203); a code-mode-only tool is
//! covered by some skill (Q111); a skill covering a code-mode-only tool states its purpose,
//! return shape, boundary conditions and common errors (Q204).

use crate::examples::CoveredCall;
use crate::skill_docs::SkillDocs;
use crate::statements::SkillStatements;
use crate::{Finding, Location, Rule};
use qilin_skill::{SKILL_FILE, Skill};
use qilin_tool::{RegisteredTool, ToolRegistry};
use regex::Regex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::LazyLock;

static CALL_MENTION: LazyLock<Regex> = LazyLock::new(|| {
    crate::own_regex(r#"sdk\.tool\.call(?:_async)?\(\s*(?:name\s*=\s*)?["']([A-Za-z0-9_.-]+)["']"#)
});

/// The top-level parameter names of a tool, in schema order.
fn parameter_names(tool: &RegisteredTool) -> Vec<&str> {
    tool.parameters()
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// The top-level field names of a tool's output: its properties, or those of each variant
/// when the output is one of several objects.
fn output_fields(tool: &RegisteredTool) -> BTreeSet<&str> {
    let schema = tool.output_schema();
    let variants = ["oneOf", "anyOf", "allOf"]
        .into_iter()
        .filter_map(|key| schema.get(key).and_then(Value::as_array))
        .flatten();
    std::iter::once(schema)
        .chain(variants)
        .filter_map(|schema| schema.get("properties").and_then(Value::as_object))
        .flat_map(|props| props.keys().map(String::as_str))
        .collect()
}

/// Checks what `skill` says about the tools its examples call (`covered`) and the tools it
/// mentions without an example.
pub fn check_skill(
    skill: &Skill,
    docs: &SkillDocs,
    covered: &[CoveredCall],
    registry: &ToolRegistry,
    findings: &mut Vec<Finding>,
) {
    let mut seen = BTreeSet::new();
    for call in covered {
        if !seen.insert(call.tool.as_str()) {
            continue;
        }
        let Some(tool) = registry.get(&call.tool) else {
            continue;
        };
        for parameter in parameter_names(tool) {
            if !docs.names(parameter) {
                findings.push(Finding::new(
                    Rule::ParameterUndocumented,
                    call.location.clone(),
                    format!(
                        "skill `{}` covers tool `{}` but never names its parameter `{parameter}`",
                        skill.name, call.tool
                    ),
                    format!(
                        "describe `{parameter}` in the skill (type, whether required, what it does); in code mode the skill is the model's only documentation"
                    ),
                ));
            }
        }
        for field in output_fields(tool) {
            if !docs.names(field) {
                findings.push(Finding::new(
                    Rule::OutputFieldUndocumented,
                    call.location.clone(),
                    format!(
                        "skill `{}` covers tool `{}` but never names the output field `{field}`",
                        skill.name, call.tool
                    ),
                    format!(
                        "say what `{field}` holds in the skill's description of what `{}` returns",
                        call.tool
                    ),
                ));
            }
        }
    }
    statements_missing(skill, docs, covered, registry, findings);
    example_missing(skill, docs, &seen, registry, findings);
}

/// Q204: for each code-mode-only tool the skill covers, the skill states its purpose, return
/// shape, boundary conditions and common errors.
fn statements_missing(
    skill: &Skill,
    docs: &SkillDocs,
    covered: &[CoveredCall],
    registry: &ToolRegistry,
    findings: &mut Vec<Finding>,
) {
    let mut code_only: Vec<&CoveredCall> = Vec::new();
    for call in covered {
        let code_mode_only = registry
            .get(&call.tool)
            .is_some_and(RegisteredTool::code_mode_only);
        if code_mode_only && !code_only.iter().any(|seen| seen.tool == call.tool) {
            code_only.push(call);
        }
    }
    if code_only.is_empty() {
        return;
    }
    let statements = SkillStatements::read(&docs.texts);
    let alone = code_only.len() == 1;
    for call in code_only {
        let missing = statements.missing(&call.tool, alone);
        if missing.is_empty() {
            continue;
        }
        let listed: Vec<&str> = missing.iter().map(|aspect| aspect.describe()).collect();
        findings.push(Finding::new(
            Rule::SkillStatementMissing,
            call.location.clone(),
            format!(
                "skill `{}` covers code-mode-only tool `{}` but states no {} for it",
                skill.name,
                call.tool,
                listed.join(", ")
            ),
            format!(
                "the skill is the only entry a code-mode-only tool has: add a section or a labelled paragraph for each ({}){}",
                missing
                    .iter()
                    .map(|aspect| aspect.heading_example())
                    .collect::<Vec<_>>()
                    .join(", "),
                if alone {
                    String::new()
                } else {
                    format!(
                        ", under a heading naming `{}` or naming it in the text, since the skill covers several code-mode-only tools",
                        call.tool
                    )
                }
            ),
        ));
    }
}

fn example_missing(
    skill: &Skill,
    docs: &SkillDocs,
    covered: &BTreeSet<&str>,
    registry: &ToolRegistry,
    findings: &mut Vec<Finding>,
) {
    let mut reported = BTreeSet::new();
    let mut report = |name: &str, location: Location, how: &str| {
        if covered.contains(name)
            || registry.get(name).is_none()
            || !reported.insert(name.to_string())
        {
            return;
        }
        findings.push(Finding::new(
            Rule::ExampleMissing,
            location,
            format!(
                "skill `{}` {how} tool `{name}` but shows no Python example calling it",
                skill.name
            ),
            format!(
                "add a fenced ```python block that calls `sdk.tool.call(\"{name}\", {{...}})` and uses its result"
            ),
        ));
    };
    for (path, text) in &docs.texts {
        for found in CALL_MENTION.captures_iter(text) {
            let (Some(whole), Some(name)) = (found.get(0), found.get(1)) else {
                continue;
            };
            let line = text[..whole.start()].matches('\n').count() + 1;
            report(
                name.as_str(),
                Location::file(path, Some(line), None),
                "mentions a call of",
            );
        }
    }
    let skill_md = skill.dir.join(SKILL_FILE);
    let line = docs
        .texts
        .first()
        .and_then(|(_, text)| text.lines().position(|l| l.starts_with("allowed-tools")))
        .map(|index| index + 1);
    for name in &skill.allowed_tools {
        report(
            name,
            Location::file(&skill_md, line, None),
            "lists under `allowed-tools` the",
        );
    }
}

/// Q111: every code-mode-only tool is covered by at least one skill.
pub fn check_code_mode_only(
    registry: &ToolRegistry,
    covered: &BTreeSet<String>,
    findings: &mut Vec<Finding>,
) {
    for tool in registry.list().filter(|tool| tool.code_mode_only()) {
        if covered.contains(tool.name()) {
            continue;
        }
        findings.push(Finding::new(
            Rule::CodeModeOnlyUncovered,
            Location::tool(tool.name(), "coverage"),
            format!(
                "code-mode-only tool `{}` is covered by no skill, so no model can learn to call it",
                tool.name()
            ),
            format!(
                "write a skill whose Python example calls `sdk.tool.call(\"{}\", {{...}})` and that describes its parameters and output",
                tool.name()
            ),
        ));
    }
}
