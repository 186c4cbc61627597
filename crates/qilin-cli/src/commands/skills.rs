//! `qilin skills list` and `qilin skills show`.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use qilin_mcp::{generated_skills, workspace_snapshots};
use qilin_runtime::discover_skills_with;
use qilin_skill::{Diagnostic, SkillDiscovery};
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
        let workspace = self.folders(fallback)?;
        let (snapshots, errors) = workspace_snapshots(workspace);
        for error in errors {
            eprintln!("warning: {error}");
        }
        Ok(discover_skills_with(
            workspace,
            &self.skills,
            generated_skills(&snapshots),
        )?)
    }

    /// The workspace (`fallback` when `--workspace` is absent), once it and every `--skills`
    /// folder are found to be folders.
    pub fn folders<'a>(&'a self, fallback: &'a Path) -> Result<&'a Path> {
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
        Ok(workspace)
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
