//! The `qilin` command.

mod commands;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Qilin: an agent runtime where every capability is a tool, reached directly or from code.
#[derive(Parser)]
#[command(name = "qilin", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the registered tools or show one as a model receives it.
    #[command(subcommand)]
    Tools(commands::tools::ToolsCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tools(command) => commands::tools::run(command),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
