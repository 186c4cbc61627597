//! `qilin agent prompt`: exactly what a provider receives for an agent file — the system
//! prompt and the tools list a session of it sends, mounted as the session mounts them.

use crate::commands::skills::{SkillSources, report};
use crate::commands::{runtime_error, worker_sandbox};
use anyhow::{Context, Result};
use clap::Subcommand;
use qilin_runtime::{Runtime, workspace_of};
use qilin_store::MemoryStore;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The `agent` subcommands.
#[derive(Subcommand)]
pub enum AgentCommand {
    /// Print the system prompt, then the tools list as JSON, for an agent file: byte for byte
    /// what a session of it sends the model (project context included).
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

/// The prompt as `--json` prints it.
#[derive(Serialize)]
struct PromptJson<'a> {
    system: &'a str,
    tools: &'a [qilin_tool::DirectDefinition],
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
    let fallback = workspace_of(&file);
    let workspace = sources.folders(&fallback)?;
    // Nothing is stored: the session is mounted, not started.
    let runtime = crate::trust::trusting(Runtime::new(
        Arc::new(MemoryStore::new()),
        worker_sandbox()?,
    ));
    let mut builder = runtime.session(workspace).agent_file(&file);
    for dir in &sources.skills {
        builder = builder.skill_dir(dir);
    }
    let tokio = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let mounted = tokio.block_on(builder.prompt()).map_err(runtime_error)?;
    report(&mounted.diagnostics);
    for note in &mounted.notes {
        eprintln!("note: {note}");
    }
    let prompt = &mounted.prompt;
    let mut out = String::new();
    if json {
        out.push_str(&serde_json::to_string_pretty(&PromptJson {
            system: &prompt.system,
            tools: &prompt.tools,
        })?);
    } else {
        out.push_str(&prompt.system);
        out.push_str("\n--- tools ---\n");
        out.push_str(&serde_json::to_string_pretty(&prompt.tools)?);
    }
    out.push('\n');
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
