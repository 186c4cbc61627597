//! Rules on a dual-active tool's own prompt, what a model sees when the tool is mounted:
//! a description (Q101) that does not defer to a skill (Q105), a description on every
//! parameter, nested ones too (Q102), and a prompt hint (Q103) that stands on its own rather
//! than deferring to a skill (Q104).

use crate::{Finding, Location, Rule};
use qilin_tool::{RegisteredTool, ToolRegistry};
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

/// Phrases that send the model to a skill, or that say the tool needs no explanation of its
/// own: a model with the tool mounted may never see the skill. English and Chinese, with or
/// without spaces (`详见SKILL.md`), with or without the file's name (`详见技能说明`). Chinese
/// has no word boundaries, so its phrases are matched as they are written.
static DEFERRAL: LazyLock<Regex> = LazyLock::new(|| {
    crate::own_regex(
        r"(?ix)
        skill\.md
        | \b(?:see|read|consult|check|follow|open|load)\s+(?:the|its|this|that)\s+(?:`?[\w-]+`?\s+)?skills?\b
        | \bsee\s+(?:`?[\w-]+`?\s+)?skills?\b
        | \b(?:refer|according)\s+to\s+(?:the\s+|its\s+|a\s+)?(?:`?[\w-]+`?\s+)?skills?\b
        | \b(?:described|documented|explained|covered|detailed|taught)\s+in\s+(?:the\s+|its\s+|a\s+)?(?:`?[\w-]+`?\s+)?skills?\b
        | \bthe\s+(?:`?[\w-]+`?\s+)?skill\s+(?:explains|describes|documents|covers|teaches)\b
        | \b(?:called|used|invoked)\s+(?:only\s+)?(?:by|from|through|via)\s+(?:the\s+|a\s+)?(?:`?[\w-]+`?\s+)?skills?\b
        | \b(?:needs|requires)\s+no\s+(?:explanation|description|documentation)\b
        | \bno\s+(?:explanation|description|documentation)\s+(?:is\s+)?(?:needed|required|necessary)\b
        | (?:详见|参见|参阅|请见|另见|请参考|参考|请查看|请阅读|请看|根据)\s*[「『《“`]?\s*(?:[\w-]+\s*)?[`”》』」]?\s*(?:skill|技能)
        | (?:写在|记录在|说明在|见于|参见于)\s*\S{0,12}?(?:skill|技能)
        | (?:skill|技能)\s*(?:中|里|内)\s*(?:已|有)?\s*(?:说明|写明|介绍|描述|讲解|解释)
        | 由\s*(?:[\w-]+\s*)?(?:skill|技能)\s*调用
        | (?:不需要|无需|不用|不必|无须)\s*(?:额外)?\s*(?:说明|解释|描述|介绍)",
    )
});

/// The phrase of `text` (a prompt hint or a description) that defers to a skill, if any.
pub fn deferral(text: &str) -> Option<&str> {
    DEFERRAL.find(text).map(|found| found.as_str())
}

/// Checks the prompt of every dual-active tool.
pub fn check(registry: &ToolRegistry, findings: &mut Vec<Finding>) {
    for tool in registry.list().filter(|tool| !tool.code_mode_only()) {
        check_tool(tool, findings);
    }
}

fn check_tool(tool: &RegisteredTool, findings: &mut Vec<Finding>) {
    let name = tool.name();
    let description = tool.description().trim();
    if description.is_empty() {
        findings.push(Finding::new(
            Rule::ToolDescriptionMissing,
            Location::tool(name, "description"),
            format!("dual-active tool `{name}` has no description"),
            "write a doc comment on the tool type saying what it does; it is the first thing a model reads",
        ));
    } else if let Some(phrase) = deferral(description) {
        findings.push(Finding::new(
            Rule::DescriptionDefers,
            Location::tool(name, "description"),
            format!(
                "the description of dual-active tool `{name}` defers to a skill (\"{phrase}\"), which a model that has the tool mounted may never see"
            ),
            "say in the description what the tool does and when to use it, as if no skill existed",
        ));
    }
    let mut missing = Vec::new();
    undescribed(tool.parameters(), "", &mut missing);
    for path in missing {
        findings.push(Finding::new(
            Rule::ParameterDescriptionMissing,
            Location::tool(name, format!("parameter `{path}`")),
            format!("parameter `{path}` of dual-active tool `{name}` has no description"),
            "write a doc comment on the field: its meaning, unit and default",
        ));
    }
    let hint = tool.prompt_hint().trim();
    if hint.is_empty() {
        findings.push(Finding::new(
            Rule::PromptHintMissing,
            Location::tool(name, "prompt hint"),
            format!("dual-active tool `{name}` has no prompt hint"),
            "return from `prompt_hint` when to use the tool, what to prefer and what to avoid",
        ));
    } else if let Some(phrase) = deferral(hint) {
        findings.push(Finding::new(
            Rule::PromptHintDefers,
            Location::tool(name, "prompt hint"),
            format!(
                "the prompt hint of dual-active tool `{name}` defers to a skill (\"{phrase}\"), which a model that has the tool mounted may never see"
            ),
            "make the prompt hint complete on its own; keep the skill for code mode",
        ));
    }
}

fn has_description(schema: &Value) -> bool {
    schema
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|text| !text.trim().is_empty())
}

/// Collects the dotted paths of properties without a description, descending into nested
/// objects, array items (`edits[].old_text`), map values (`env.*`) and schema variants.
fn undescribed(schema: &Value, prefix: &str, missing: &mut Vec<String>) {
    let join = |name: &str| {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        }
    };
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let path = join(name);
            if !has_description(property) {
                missing.push(path.clone());
            }
            undescribed(property, &path, missing);
        }
    }
    if let Some(items) = schema.get("items") {
        undescribed(items, &format!("{prefix}[]"), missing);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        undescribed(values, &join("*"), missing);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(variants)) = schema.get(key) {
            for variant in variants {
                undescribed(variant, prefix, missing);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{deferral, undescribed};
    use serde_json::json;

    #[test]
    fn deferrals_are_found_in_any_case() {
        for hint in [
            "See SKILL.md for details.",
            "For the options, see the code-search skill.",
            "Refer to the skill.",
            "Everything else is described in the skill.",
            "READ THE SKILL before use",
            "The skill explains the modes.",
            "consult the sales-data skill",
            "see `code-search` skill",
            "详见 SKILL.md",
            "详见SKILL.md",
            "用法详见skill.md。",
            "详见技能说明",
            "请阅读 code-search 技能",
            "参考《code-search》技能",
            "参数说明写在技能文档里",
            "技能中已说明",
            "由 Skill 调用，不需要说明",
            "由技能调用",
            "无需说明",
            "Called by the skill, no explanation needed.",
            "Used only from the code-search skill.",
            "This tool needs no description.",
        ] {
            assert!(deferral(hint).is_some(), "{hint}");
        }
        for hint in [
            "Prefer grep over bash for searching; narrow with glob.",
            "Use it to read a skill's files when code mode is on.",
            "A skill is the complete guide to the tools it teaches.",
            "Skill names are listed in the catalog.",
            "读取技能的文件（代码模式开启时使用）。",
            "技能名称列在目录中。",
            "常见技能都在目录里。",
            "Explain the change in one sentence before you make it.",
        ] {
            assert!(deferral(hint).is_none(), "{hint}");
        }
    }

    #[test]
    fn nested_parameters_without_descriptions_are_found() {
        let schema = json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regex."},
                "options": {"type": "object", "description": "Options.", "properties": {
                    "mode": {"type": "string"},
                    "limits": {"type": "object", "properties": {"max": {"type": "integer", "description": " "}}}
                }},
                "edits": {"type": "array", "description": "Edits.", "items": {"type": "object", "properties": {
                    "old_text": {"type": "string"}
                }}},
                "env": {"type": "object", "description": "Env.", "additionalProperties": {"type": "object", "properties": {"v": {}}}}
            }
        });
        let mut missing = Vec::new();
        undescribed(&schema, "", &mut missing);
        missing.sort();
        assert_eq!(
            missing,
            vec![
                "edits[].old_text",
                "env.*.v",
                "options.limits",
                "options.limits.max",
                "options.mode"
            ]
        );
    }
}
