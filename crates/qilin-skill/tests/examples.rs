//! The example workspace (`examples/workspace`): its skills and agents load cleanly, its
//! prompts assemble, and its skills document the real built-in tools' parameters and
//! outputs.

mod common;

use common::RunCode;
use qilin_skill::{AgentFile, SkillDiscovery, SkillTool, assemble_prompt, discover, skill_roots};
use qilin_tool::ToolRegistry;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn example_workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workspace")
}

fn example_skills() -> SkillDiscovery {
    discover(&skill_roots(&example_workspace(), None, &[]))
}

/// The built-in tools (the code-mode-only `table_query` among them), the real `skill` tool,
/// and a stand-in for `run_code`, which the code-mode crate provides.
fn registry(skills: &SkillDiscovery) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry).unwrap();
    registry.register(RunCode).unwrap();
    registry
        .register(SkillTool::new(Arc::new(skills.skills.clone())))
        .unwrap();
    registry
}

#[test]
fn the_example_skills_load_without_any_diagnostic() {
    let found = example_skills();
    assert!(found.diagnostics.is_empty(), "{:#?}", found.diagnostics);
    assert_eq!(
        found.skills.names().collect::<Vec<_>>(),
        ["code-search", "file-editing", "sales-data", "shell"]
    );
}

#[test]
fn the_coder_mounts_the_built_in_tools_directly() {
    let skills = example_skills();
    let registry = registry(&skills);
    let loaded = AgentFile::load(
        &example_workspace().join("coder.agent"),
        &skills.skills,
        &registry,
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:#?}", loaded.warnings);
    let prompt = assemble_prompt(&loaded.value, &skills.skills, &registry).unwrap();
    let tools: Vec<&str> = prompt.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["read", "write", "edit", "grep", "glob", "bash"]);
    assert!(
        prompt
            .system
            .starts_with("You are a careful software engineer")
    );
}

#[test]
fn the_analyst_works_in_code_mode_with_its_skill_preloaded() {
    let skills = example_skills();
    let registry = registry(&skills);
    let loaded = AgentFile::load(
        &example_workspace().join("analyst.agent"),
        &skills.skills,
        &registry,
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:#?}", loaded.warnings);
    let agent = loaded.value;
    assert!(agent.code_mode);
    assert_eq!(agent.limits.code.max_tool_calls, 50);
    let prompt = assemble_prompt(&agent, &skills.skills, &registry).unwrap();
    // Code-only: its skills are read from code, so `run_code` is its one tool.
    let tools: Vec<&str> = prompt.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["run_code"]);
    assert!(
        prompt
            .system
            .contains("read it in run_code: `print(sdk.skill(\"NAME\"))`")
    );
    assert!(prompt.system.starts_with("You are a sales analyst."));
    assert!(prompt.system.contains(
        "<skill-file skill=\"sales-data\" path=\"SKILL.md\">\n# Sales figures with `table_query`"
    ));
    assert!(
        prompt
            .system
            .contains("<skill-file skill=\"sales-data\" path=\"reference/dimensions.md\">")
    );
    assert!(prompt.system.contains("- code-search: "));
    assert!(
        !prompt.system.contains("- shell: "),
        "shell is not among its available skills"
    );
    assert!(
        agent
            .policy
            .reviewer()
            .decide("write", &serde_json::json!({"path": "src/main.rs"}))
            .0
            != qilin_tool::Verdict::Allow
    );
}

/// Property names of an object schema, or of each alternative of a tagged union.
fn property_names(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default();
    for key in ["oneOf", "anyOf"] {
        for variant in schema[key].as_array().into_iter().flatten() {
            names.extend(property_names(variant));
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Everything a skill gives the model: its body and its text files.
fn skill_text(skills: &SkillDiscovery, name: &str) -> String {
    let skill = skills.skills.get(name).unwrap();
    let mut text = skill.body.clone();
    for file in &skill.files {
        text.push_str(&skill.read_file(file).unwrap());
    }
    text
}

#[test]
fn each_skill_documents_every_parameter_and_output_field_of_the_real_tools() {
    let skills = example_skills();
    let registry = registry(&skills);
    let taught = [
        ("code-search", &["grep", "glob", "read"][..]),
        ("file-editing", &["edit", "write", "str_replace_editor"][..]),
        ("shell", &["bash", "job_output", "job_kill"][..]),
        ("sales-data", &["table_query"][..]),
    ];
    for (skill, tools) in taught {
        let text = skill_text(&skills, skill);
        for tool in tools {
            let registered = registry.get(tool).unwrap();
            let mut fields = property_names(registered.parameters());
            let outputs = property_names(registered.output_schema());
            assert!(outputs.len() >= 3, "`{tool}` output fields: {outputs:?}");
            fields.extend(outputs);
            for field in fields {
                assert!(
                    text.contains(&format!("`{field}`")),
                    "skill `{skill}` does not document `{field}` of `{tool}`"
                );
            }
            assert!(
                text.contains(&format!("sdk.tool.call(\"{tool}\"")),
                "skill `{skill}` has no sdk.tool.call example for `{tool}`"
            );
        }
        assert!(
            text.contains("```python\n"),
            "{skill} has no python example"
        );
        assert!(
            text.contains("## Common errors"),
            "{skill} has no common errors"
        );
    }
}
