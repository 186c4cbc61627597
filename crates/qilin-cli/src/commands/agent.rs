//! `qilin agent prompt`: exactly what a provider would receive for an agent file.

use crate::commands::skills::{SkillSources, report, report_for_agent};
use crate::commands::worker_sandbox;
use anyhow::Result;
use clap::Subcommand;
use qilin_codemode::CodeLimits;
use qilin_runtime::{full_registry, workspace_of};
use qilin_skill::{Agent, assemble_prompt};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The `agent` subcommands.
#[derive(Subcommand)]
pub enum AgentCommand {
    /// Print the system prompt, then the tools list as JSON, for an agent file.
    Prompt {
        /// The `.agent` file.
        file: PathBuf,
        /// Print one JSON object `{system, tools}` instead.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sources: SkillSources,
    },
}

/// Runs an `agent` subcommand. The exit status is the agent's: 0 when it loads, whatever is
/// wrong with skills it does not use (their findings are counted, and `qilin check` lists
/// them).
pub fn run(command: AgentCommand) -> Result<ExitCode> {
    let AgentCommand::Prompt {
        file,
        json,
        sources,
    } = command;
    let found = sources.discover(&workspace_of(&file))?;
    let registry = full_registry(
        Arc::new(found.skills.clone()),
        worker_sandbox()?.code_mode(CodeLimits::default()),
    );
    let loaded = match Agent::load(&file, &found.skills, &registry) {
        Ok(loaded) => loaded,
        Err(err) => {
            let skill_errors: Vec<_> = found
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .cloned()
                .collect();
            report(&skill_errors);
            return Err(err.into());
        }
    };
    report(&loaded.warnings);
    report_for_agent(&found, &loaded.value);
    let prompt = assemble_prompt(&loaded.value, &found.skills, &registry)?;
    if let Some(note) = prompt.catalog.note() {
        eprintln!("note: {note}");
    }
    let mut out = String::new();
    if json {
        out.push_str(&serde_json::to_string_pretty(&prompt)?);
    } else {
        out.push_str(&prompt.system);
        out.push_str("\n--- tools ---\n");
        out.push_str(&serde_json::to_string_pretty(&prompt.tools)?);
    }
    out.push('\n');
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
