//! `qilin tools list`, `qilin tools show` and `qilin tools stubs`.

use anyhow::{Result, bail};
use clap::Subcommand;
use qilin_tool::ToolRegistry;
use serde::Serialize;
use std::process::ExitCode;

/// The `tools` subcommands.
#[derive(Subcommand)]
pub enum ToolsCommand {
    /// Every tool: wire name, strategy and the first line of its description.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// One tool's direct definition, exactly as a model receives it.
    Show {
        /// The tool's wire name.
        name: String,
        /// Print the definition as JSON only.
        #[arg(long)]
        json: bool,
    },
    /// Python stubs of the tools for code mode: a TypedDict for each tool's arguments and
    /// output, and one documented `sdk.tool.call` signature per tool.
    Stubs {
        /// The tools to describe; every tool when omitted.
        names: Vec<String>,
    },
}

#[derive(Serialize)]
struct ListedTool<'a> {
    name: &'a str,
    strategy: &'a str,
    description: String,
}

/// The first sentence of a description's first paragraph, on one line.
fn first_sentence(description: &str) -> String {
    let paragraph = description.split("\n\n").next().unwrap_or_default();
    let joined = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.split_once(". ") {
        Some((sentence, _)) => format!("{sentence}."),
        None => joined,
    }
}

/// Runs a `tools` subcommand against the built-in registry.
pub fn run(command: ToolsCommand) -> Result<ExitCode> {
    let registry = qilin_runtime::tool_catalog();
    let mut out = String::new();
    match command {
        ToolsCommand::List { json } => list(&registry, json, &mut out)?,
        ToolsCommand::Show { name, json } => show(&registry, &name, json, &mut out)?,
        ToolsCommand::Stubs { names } => stubs(&registry, &names, &mut out)?,
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn list(registry: &ToolRegistry, json: bool, out: &mut String) -> Result<()> {
    let tools: Vec<ListedTool> = registry
        .list()
        .map(|tool| ListedTool {
            name: tool.name(),
            strategy: tool.strategy(),
            description: first_sentence(tool.description()),
        })
        .collect();
    if json {
        out.push_str(&serde_json::to_string_pretty(&tools)?);
        out.push('\n');
        return Ok(());
    }
    if tools.is_empty() {
        out.push_str("no tools are registered\n");
        return Ok(());
    }
    let name_width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for tool in tools {
        out.push_str(&format!(
            "{:name_width$}  {:14}  {}\n",
            tool.name, tool.strategy, tool.description
        ));
    }
    Ok(())
}

fn show(registry: &ToolRegistry, name: &str, json: bool, out: &mut String) -> Result<()> {
    let Some(tool) = registry.get(name) else {
        let suggestions = registry.suggest(name);
        if suggestions.is_empty() {
            bail!("no tool is named `{name}`; `qilin tools list` shows them all");
        }
        bail!(
            "no tool is named `{name}`; did you mean {}?",
            suggestions
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        );
    };
    match tool.direct_definition() {
        Some(definition) if json => {
            out.push_str(&serde_json::to_string_pretty(&definition)?);
            out.push('\n');
        }
        Some(definition) => {
            out.push_str(&format!(
                "{} ({})\n\n{}\n\nparameters:\n{}\n",
                definition.name,
                tool.strategy(),
                definition.description,
                serde_json::to_string_pretty(&definition.parameters)?
            ));
        }
        None => {
            let note = format!(
                "`{name}` is code-mode-only: it has no direct definition and is never in a tools \
                 list. It is reached through `run_code`, with sdk.tool.call(\"{name}\", {{...}}), \
                 as its skill describes."
            );
            if json {
                out.push_str(&serde_json::to_string_pretty(&serde_json::json!({
                    "name": name,
                    "strategy": tool.strategy(),
                    "directDefinition": null,
                    "note": note,
                }))?);
                out.push('\n');
            } else {
                out.push_str(&note);
                out.push('\n');
            }
        }
    }
    Ok(())
}

fn stubs(registry: &ToolRegistry, names: &[String], out: &mut String) -> Result<()> {
    let mut tools = Vec::new();
    for name in names {
        let Some(tool) = registry.get(name) else {
            let suggestions = registry.suggest(name);
            if suggestions.is_empty() {
                bail!("no tool is named `{name}`; `qilin tools list` shows them all");
            }
            bail!(
                "no tool is named `{name}`; did you mean `{}`?",
                suggestions.join("` or `")
            );
        };
        tools.push(tool);
    }
    if names.is_empty() {
        tools = registry.list().collect();
    }
    out.push_str(&qilin_codemode::python_stubs(tools));
    Ok(())
}
