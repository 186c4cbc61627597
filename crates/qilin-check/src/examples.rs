//! Rules on a skill's Python examples: each compiles (Q301) — with Monty when it is meant for
//! `run_code` (it calls `sdk.tool.call`, or its fence is marked ```` ```python run_code ````),
//! else as CPython, since a skill may also show ordinary Python (a server, a script) — each
//! `sdk.tool.call` names a known tool (Q302) and sends literal arguments its schema accepts
//! (Q303).

use crate::python::{self, ToolCallSite};
use crate::skill_docs::SkillDocs;
use crate::{Finding, Location, Rule};
use jsonschema::Validator;
use qilin_skill::Skill;
use qilin_tool::ToolRegistry;
use std::collections::HashMap;

/// A call of a known tool in one of a skill's examples.
#[derive(Debug, Clone)]
pub struct CoveredCall {
    /// The tool's wire name.
    pub tool: String,
    /// Where the call is.
    pub location: Location,
}

/// Argument validators compiled once per tool, on first use.
#[derive(Default)]
pub struct Validators {
    compiled: HashMap<String, Option<Validator>>,
}

impl Validators {
    fn get(&mut self, registry: &ToolRegistry, name: &str) -> Option<&Validator> {
        self.compiled
            .entry(name.to_string())
            .or_insert_with(|| {
                registry
                    .get(name)
                    .and_then(|tool| jsonschema::validator_for(tool.parameters()).ok())
            })
            .as_ref()
    }
}

/// Checks every example of `skill`; returns the calls of known tools, which say what the
/// skill covers.
pub fn check(
    skill: &Skill,
    docs: &SkillDocs,
    registry: &ToolRegistry,
    validators: &mut Validators,
    findings: &mut Vec<Finding>,
) -> Vec<CoveredCall> {
    let mut covered = Vec::new();
    for example in &docs.examples {
        let for_run_code = example.marked_for_run_code || python::calls_sdk(&example.code);
        let verdict = if for_run_code {
            python::compile(&example.code)
        } else {
            python::parse(&example.code)
        };
        if let Err(error) = verdict {
            let (line, column) = error.position.map_or((example.first_line, 1), |p| {
                (example.file_line(p.line), p.column)
            });
            let (what, help) = if for_run_code {
                (
                    "does not compile for `run_code`",
                    "fix the example so `run_code` can run it as written (it calls \
                     `sdk.tool.call` or is marked ```python run_code, so it is held to Monty)",
                )
            } else {
                (
                    "is not valid Python",
                    "fix the example; a block that neither calls `sdk.tool.call` nor is marked \
                     ```python run_code is read as CPython",
                )
            };
            findings.push(Finding::new(
                Rule::ExampleSyntaxError,
                Location::file(&example.path, Some(line), Some(column)),
                format!(
                    "a Python example of skill `{}` {what}: {}",
                    skill.name, error.message
                ),
                help,
            ));
            continue;
        }
        for site in python::tool_calls(&example.code) {
            let location = Location::file(
                &example.path,
                Some(example.file_line(site.position.line)),
                Some(site.position.column),
            );
            let Some(name) = site.name.clone() else {
                continue;
            };
            if registry.get(&name).is_none() {
                findings.push(unknown_tool(skill, &name, &site, location, registry));
                continue;
            }
            if let Some(problems) = invalid_arguments(&name, &site, registry, validators) {
                findings.push(Finding::new(
                    Rule::ExampleArgumentsInvalid,
                    location.clone(),
                    format!(
                        "the arguments of `sdk.tool.{}(\"{name}\", ...)` do not fit its schema: {problems}",
                        site.method
                    ),
                    format!(
                        "pass the arguments `{name}` accepts, as its parameter schema describes them"
                    ),
                ));
            }
            covered.push(CoveredCall {
                tool: name,
                location,
            });
        }
    }
    covered
}

fn unknown_tool(
    skill: &Skill,
    name: &str,
    site: &ToolCallSite,
    location: Location,
    registry: &ToolRegistry,
) -> Finding {
    let suggestions = registry.suggest(name);
    let help = if suggestions.is_empty() {
        "call a tool that exists: a built-in, or one the host adds".to_string()
    } else {
        format!("did you mean `{}`?", suggestions.join("` or `"))
    };
    Finding::new(
        Rule::ExampleUnknownTool,
        location,
        format!(
            "an example of skill `{}` calls `sdk.tool.{}(\"{name}\", ...)`, but no tool is named `{name}`",
            skill.name, site.method
        ),
        help,
    )
}

/// What is wrong with the literal arguments of the call at `site` of tool `name`, by its
/// schema; `None` when nothing is (or they cannot be known).
pub(crate) fn invalid_arguments(
    name: &str,
    site: &ToolCallSite,
    registry: &ToolRegistry,
    validators: &mut Validators,
) -> Option<String> {
    let arguments = site.arguments.as_ref()?;
    let validator = validators.get(registry, name)?;
    let problems: Vec<String> = validator
        .iter_errors(&arguments.value)
        .filter(|error| !arguments.is_skipped(&error.instance_path().to_string()))
        .take(4)
        .map(|error| {
            let pointer = error.instance_path().to_string();
            if pointer.is_empty() {
                error.to_string()
            } else {
                let dotted = pointer.trim_start_matches('/').replace('/', ".");
                format!("`{dotted}`: {error}")
            }
        })
        .collect();
    match problems.is_empty() {
        true => None,
        false => Some(problems.join("; ")),
    }
}
