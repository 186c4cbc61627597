//! Workflow rules, over a workspace's `.qilin/workflows/*.py`: the front matter is valid
//! (Q701), the script compiles for code mode (Q702), each `sdk.tool.call` names a tool that
//! exists and can be called from code (Q703), with literal arguments its schema accepts (Q704).

use crate::examples::{Validators, invalid_arguments};
use crate::python;
use crate::{Finding, Location, Rule};
use qilin_tool::ToolRegistry;
use qilin_workflows::WorkflowFile;
use std::path::Path;

/// The tool code cannot call: code mode's own entry.
const RUN_CODE: &str = "run_code";

/// Checks every workflow file of `workspace`'s `.qilin/workflows/`.
pub fn check_workspace(
    workspace: &Path,
    registry: &ToolRegistry,
    validators: &mut Validators,
    findings: &mut Vec<Finding>,
) -> usize {
    let dir = workspace
        .join(".qilin")
        .join(qilin_workflows::file::WORKFLOWS_DIR);
    let paths = qilin_workflows::file::workflow_paths(&[dir]);
    for path in &paths {
        check(path, registry, validators, findings);
    }
    paths.len()
}

/// Checks the workflow file at `path`.
pub fn check(
    path: &Path,
    registry: &ToolRegistry,
    validators: &mut Validators,
    findings: &mut Vec<Finding>,
) {
    let file = match WorkflowFile::load(path) {
        Ok(file) => file,
        Err(error) => {
            findings.push(Finding::new(
                Rule::WorkflowInvalid,
                Location::file(path, error.line, error.line.map(|_| 1)),
                format!("workflow file: {}", error.message),
                "begin the file with a docstring holding YAML: `description` (required), \
                 `args` (NAME: {type, description?, default?, required?}; types string, \
                 integer, number, boolean, array, object), `checks` (check ids), `limits` \
                 ({max_calls?, timeout_secs?}); see docs/workflows.md",
            ));
            return;
        }
    };
    if let Err(error) = python::compile(&file.code) {
        let (line, column) = error
            .position
            .map_or((None, None), |p| (Some(p.line), Some(p.column)));
        findings.push(Finding::new(
            Rule::WorkflowSyntaxError,
            Location::file(path, line, column),
            format!(
                "workflow `{}` does not compile for code mode: {}",
                file.name, error.message
            ),
            "fix the script so code mode can run it as written (the Python subset `run_code` \
             runs; `args` and `sdk` are its globals)",
        ));
        return;
    }
    for site in python::tool_calls(&file.code) {
        let location = Location::file(path, Some(site.position.line), Some(site.position.column));
        let Some(name) = site.name.clone() else {
            continue;
        };
        if name == RUN_CODE {
            findings.push(Finding::new(
                Rule::WorkflowUnknownTool,
                location,
                format!(
                    "workflow `{}` calls `sdk.tool.{}(\"{RUN_CODE}\", ...)`, but `{RUN_CODE}` cannot be called from code",
                    file.name, site.method
                ),
                "write the code into the workflow itself",
            ));
            continue;
        }
        if registry.get(&name).is_none() {
            let suggestions = registry.suggest(&name);
            let help = if suggestions.is_empty() {
                "call a tool that exists: a built-in, or one the host adds".to_string()
            } else {
                format!("did you mean `{}`?", suggestions.join("` or `"))
            };
            findings.push(Finding::new(
                Rule::WorkflowUnknownTool,
                location,
                format!(
                    "workflow `{}` calls `sdk.tool.{}(\"{name}\", ...)`, but no tool is named `{name}`",
                    file.name, site.method
                ),
                help,
            ));
            continue;
        }
        if let Some(problems) = invalid_arguments(&name, &site, registry, validators) {
            findings.push(Finding::new(
                Rule::WorkflowArgumentsInvalid,
                location,
                format!(
                    "workflow `{}`: the arguments of `sdk.tool.{}(\"{name}\", ...)` do not fit its schema: {problems}",
                    file.name, site.method
                ),
                format!("pass the arguments `{name}` accepts, as its parameter schema describes them"),
            ));
        }
    }
}
