//! `qilin check`: lint the tools, skills and agent files of a workspace, or the paths given.

use anyhow::Result;
use clap::{Args, ValueEnum};
use qilin_check::{render_json, render_text};
use qilin_tool::ToolRegistry;
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
    let mut report = qilin_runtime::check(&ToolRegistry::new(), &paths)?;
    for note in &report.notes {
        eprintln!("warning: {note}");
    }
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
