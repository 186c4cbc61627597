//! `qilin check`: lint the tools, skills and agent files of a workspace, or the paths given.

use anyhow::Result;
use clap::{Args, ValueEnum};
use qilin_check::{Target, check, render_json, render_text};
use qilin_mcp::{ServerSnapshot, generated_skills, register_server_tools, workspace_snapshots};
use qilin_runtime::{builtin_skills_root, check_registry, workspace_of};
use qilin_skill::SkillRoot;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `--deny` can turn into errors.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Deny {
    /// Every warning.
    Warnings,
}

/// The arguments of `qilin check`.
#[derive(Args)]
pub struct CheckArgs {
    /// Workspaces, skill folders (holding SKILL.md) or `.agent` files; the current folder
    /// (checked as a workspace) when none is given.
    pub paths: Vec<PathBuf>,
    /// Print the findings as a JSON array instead of text.
    #[arg(long)]
    pub json: bool,
    /// Treat warnings as errors: `--deny warnings`.
    #[arg(long, value_enum, value_name = "LINTS")]
    pub deny: Vec<Deny>,
    /// Treat warnings as errors (the same as `--deny warnings`).
    #[arg(long)]
    pub strict: bool,
}

/// Runs the check; exit code 1 when an error (or, with `--deny warnings`, a warning) is found.
pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let paths = if args.paths.is_empty() {
        vec![std::env::current_dir()?]
    } else {
        args.paths
    };
    // The MCP servers' tools as last listed in each workspace (`.qilin/mcp/*.json`), with the
    // skills generated for them: checked as the sessions will see them.
    let mut snapshots: Vec<ServerSnapshot> = Vec::new();
    for path in &paths {
        let workspace = if path.is_dir() {
            path.clone()
        } else {
            workspace_of(path)
        };
        let (found, errors) = workspace_snapshots(&workspace);
        for error in errors {
            eprintln!("warning: {error}");
        }
        for snapshot in found {
            if !snapshots.iter().any(|s| s.server == snapshot.server) {
                snapshots.push(snapshot);
            }
        }
    }
    let mut builtin = Vec::new();
    if !snapshots.is_empty() {
        builtin.push(SkillRoot::generated(generated_skills(&snapshots)));
    }
    builtin.push(builtin_skills_root());
    let targets = paths
        .iter()
        .map(|path| Target::from_path(path, &builtin))
        .collect::<Result<Vec<_>, _>>()?;
    let mut registry = check_registry();
    for snapshot in &snapshots {
        if let Err(error) = register_server_tools(&mut registry, snapshot, None, &[]) {
            eprintln!("warning: {error}");
        }
    }
    let mut report = check(&registry, &targets);
    let deny_warnings = args.strict || args.deny.contains(&Deny::Warnings);
    if deny_warnings {
        report.deny_warnings();
    }
    if args.json {
        println!("{}", render_json(&report));
    } else {
        print!("{}", render_text(&report));
    }
    Ok(if report.fails(deny_warnings) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
