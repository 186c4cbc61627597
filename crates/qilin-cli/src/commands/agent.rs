//! `qilin agent prompt`: exactly what a provider would receive for an agent file.

use crate::commands::skills::{SkillSources, report, report_for_agent};
use crate::commands::worker_sandbox;
use anyhow::Result;
use clap::Subcommand;
use qilin_codemode::CodeLimits;
use qilin_mcp::{add_direct_tools, add_server_skills, register_server_tools};
use qilin_runtime::{full_registry, workspace_of};
use qilin_skill::{Agent, assemble_prompt, declared_mcp_servers};
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
    // The agent's MCP servers as last listed in the workspace: their tools and generated
    // skills, as a session would mount them.
    let servers = declared_mcp_servers(&file).unwrap_or_default();
    let (found, snapshots) = sources.discover_with_servers(&workspace_of(&file), |name| {
        servers.iter().any(|server| server.name == name)
    })?;
    let mut registry = full_registry(
        Arc::new(found.skills.clone()),
        worker_sandbox()?.code_mode(CodeLimits::default()),
    );
    let mut direct = Vec::new();
    for snapshot in &snapshots {
        let declared = servers.iter().find(|s| s.name == snapshot.server);
        let mounted = register_server_tools(
            &mut registry,
            snapshot,
            None,
            declared.map_or(&[][..], |s| &s.direct[..]),
        )?;
        direct.extend(mounted.direct);
    }
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
    let mut agent = loaded.value;
    add_server_skills(&mut agent, &found.skills, &snapshots);
    report_for_agent(&found, &agent);
    let mut prompt = assemble_prompt(&agent, &found.skills, &registry)?;
    add_direct_tools(&mut prompt.tools, &registry, &direct);
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
