//! `qilin check`: lint the tools, skills and agent files of a workspace, or the paths given.

use anyhow::Result;
use clap::{Args, ValueEnum};
use qilin_check::{Target, check, render_json, render_text};
use qilin_codemode::{CodeLimits, CodeMode};
use qilin_runtime::{builtin_skills_root, full_registry};
use qilin_skill::SkillSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
}

/// Runs the check; exit code 1 when an error (or, with `--deny warnings`, a warning) is found.
pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let paths = if args.paths.is_empty() {
        vec![std::env::current_dir()?]
    } else {
        args.paths
    };
    let builtin = [builtin_skills_root()];
    let targets = paths
        .iter()
        .map(|path| Target::from_path(path, &builtin))
        .collect::<Result<Vec<_>, _>>()?;
    let registry = full_registry(
        Arc::new(SkillSet::new()),
        CodeMode::in_process(CodeLimits::default()),
    );
    let mut report = check(&registry, &targets);
    let deny_warnings = args.deny.contains(&Deny::Warnings);
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
