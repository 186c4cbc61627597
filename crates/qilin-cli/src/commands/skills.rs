//! `qilin skills list` and `qilin skills show`.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use qilin_mcp::{ServerSnapshot, generated_skills, workspace_snapshots};
use qilin_runtime::discover_skills_with;
use qilin_skill::{Agent, Diagnostic, SkillDiscovery};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where to look for skills: the workspace, the user's home (from `HOME`), extra roots and
/// the built-in skills.
#[derive(Args, Clone)]
pub struct SkillSources {
    /// The workspace whose `.qilin/skills/` is searched first (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Another folder of skills, searched after the workspace's and `~/.qilin/skills/` and
    /// before the built-in skills.
    #[arg(long = "skills", value_name = "DIR")]
    pub skills: Vec<PathBuf>,
}

impl SkillSources {
    /// Discovers the skills, with `fallback` as the workspace when `--workspace` is absent;
    /// the skills generated for the workspace's MCP servers (from their last listing,
    /// `.qilin/mcp/*.json`) among them.
    pub fn discover(&self, fallback: &Path) -> Result<SkillDiscovery> {
        Ok(self.discover_with_servers(fallback, |_| true)?.0)
    }

    /// As [`SkillSources::discover`], with only the generated skills of the servers `keep`
    /// accepts (by name), and their last listings.
    pub fn discover_with_servers(
        &self,
        fallback: &Path,
        keep: impl Fn(&str) -> bool,
    ) -> Result<(SkillDiscovery, Vec<ServerSnapshot>)> {
        let workspace = self.workspace.as_deref().unwrap_or(fallback);
        anyhow::ensure!(
            workspace.is_dir(),
            "the workspace {} is not a folder; pass --workspace with an existing folder",
            workspace.display()
        );
        for dir in &self.skills {
            anyhow::ensure!(
                dir.is_dir(),
                "the skills folder {} is not a folder",
                dir.display()
            );
        }
        let (mut snapshots, errors) = workspace_snapshots(workspace);
        for error in errors {
            eprintln!("warning: {error}");
        }
        snapshots.retain(|snapshot| keep(&snapshot.server));
        let found = discover_skills_with(workspace, &self.skills, generated_skills(&snapshots))?;
        Ok((found, snapshots))
    }
}

/// The `skills` subcommands.
#[derive(Subcommand)]
pub enum SkillsCommand {
    /// Every skill found: name and description, then any problems found.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sources: SkillSources,
    },
    /// One skill as the `skill` tool gives it to a model: its body and its files.
    Show {
        /// The skill's name.
        name: String,
        /// One file of the skill instead, by path inside its folder (`reference/x.md`).
        #[arg(long)]
        file: Option<String>,
        #[command(flatten)]
        sources: SkillSources,
    },
}

#[derive(Serialize)]
struct Listing<'a> {
    skills: Vec<&'a qilin_skill::Skill>,
    diagnostics: &'a [Diagnostic],
}

/// Prints the diagnostics to stderr; the exit code is a failure when one is an error.
pub fn report(diagnostics: &[Diagnostic]) -> ExitCode {
    for diagnostic in diagnostics {
        eprintln!("{diagnostic}");
    }
    if diagnostics.iter().any(Diagnostic::is_error) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints to stderr the skill diagnostics that concern `agent` (those of the skills it names,
/// and errors of skills it could read) and a count of the others with a pointer to
/// `qilin check`.
pub fn report_for_agent(found: &SkillDiscovery, agent: &Agent) {
    let picked = found.diagnostics_for(agent);
    for diagnostic in &picked.relevant {
        eprintln!("{diagnostic}");
    }
    if picked.others > 0 {
        let (noun, verb) = match picked.others {
            1 => ("finding", "is"),
            _ => ("findings", "are"),
        };
        eprintln!(
            "note: {} more skill {noun} {verb} not shown here, as this agent does not need \
             {}; `qilin check` lists every finding",
            picked.others,
            if picked.others == 1 { "it" } else { "them" },
        );
    }
}

/// Runs a `skills` subcommand.
pub fn run(command: SkillsCommand) -> Result<ExitCode> {
    let here = std::env::current_dir()?;
    match command {
        SkillsCommand::List { json, sources } => {
            let found = sources.discover(&here)?;
            let mut out = String::new();
            if json {
                let listing = Listing {
                    skills: found.skills.iter().collect(),
                    diagnostics: &found.diagnostics,
                };
                out.push_str(&serde_json::to_string_pretty(&listing)?);
                out.push('\n');
            } else if found.skills.is_empty() {
                out.push_str("no skills were found\n");
            } else {
                let width = found.skills.names().map(str::len).max().unwrap_or(0);
                for skill in found.skills.iter() {
                    let summary = skill.description.split_whitespace().collect::<Vec<_>>();
                    out.push_str(&format!("{:width$}  {}\n", skill.name, summary.join(" ")));
                }
            }
            print!("{out}");
            if json {
                return Ok(if found.has_errors() {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                });
            }
            Ok(report(&found.diagnostics))
        }
        SkillsCommand::Show {
            name,
            file,
            sources,
        } => {
            let found = sources.discover(&here)?;
            let Some(skill) = found.skills.get(&name) else {
                report(&found.diagnostics);
                let suggestions = found.skills.suggest(&name);
                if suggestions.is_empty() {
                    bail!("no skill is named `{name}`; `qilin skills list` shows the skills found");
                }
                bail!(
                    "no skill is named `{name}`; did you mean `{}`?",
                    suggestions.join("` or `")
                );
            };
            let mut out = String::new();
            match file {
                Some(file) => out.push_str(&skill.read_file(&file)?),
                None => {
                    out.push_str(&format!("{}: {}\n\n", skill.name, skill.description));
                    out.push_str(skill.body.trim_end());
                    out.push('\n');
                    if !skill.files.is_empty() {
                        out.push_str("\nfiles:\n");
                        for path in &skill.files {
                            out.push_str(&format!("  {path}\n"));
                        }
                    }
                }
            }
            print!("{out}");
            Ok(ExitCode::SUCCESS)
        }
    }
}
