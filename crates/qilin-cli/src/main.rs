//! The `qilin` command.

mod asking;
mod commands;
mod render;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Qilin: an agent runtime where every capability is a tool, reached directly or from code.
#[derive(Parser)]
#[command(name = "qilin", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Counts every allocation so a code-mode worker (`qilin subprocess`) can cap its memory.
#[global_allocator]
static ALLOCATOR: monty_alloc::LimitedAllocator = monty_alloc::LimitedAllocator;

#[derive(Subcommand)]
enum Command {
    /// Run an agent: one turn of a prompt, or a conversation; `--resume ID` or `--continue`
    /// carries on a stored session. Ctrl-C interrupts the turn.
    Run(commands::run::RunArgs),
    /// List the stored sessions of a workspace, show one, or export its event log.
    #[command(subcommand)]
    Sessions(commands::sessions::SessionsCommand),
    /// Serve sessions over HTTP for the web client and for scripts; `--demo` serves the
    /// offline demo as a live session.
    Serve(commands::serve::ServeArgs),
    /// A scripted agent tours the bundled example workspace, offline and with no key.
    Demo(commands::demo::DemoArgs),
    /// Run Python code against the built-in tools, as `run_code` does.
    #[command(subcommand)]
    Code(commands::code::CodeCommand),
    /// Serve the code-mode sandbox on stdin and stdout (Qilin starts it itself).
    #[command(hide = true)]
    Subprocess,
    /// Run a command in the bash sandbox (Qilin starts it itself; it ends the command when its
    /// stdin closes).
    #[command(hide = true)]
    SandboxExec {
        /// The helper's own arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// List the registered tools or show one as a model receives it.
    #[command(subcommand)]
    Tools(commands::tools::ToolsCommand),
    /// List the skills found or show one as the `skill` tool gives it.
    #[command(subcommand)]
    Skills(commands::skills::SkillsCommand),
    /// Inspect an agent file: the prompt a provider would receive.
    #[command(subcommand)]
    Agent(commands::agent::AgentCommand),
    /// Lint tools, skills and agent files: both entries of every tool complete and in step.
    Check(commands::check::CheckArgs),
}

/// Sends the libraries' traces to standard error when `QILIN_LOG` asks for them (a filter such
/// as `debug` or `qilin_tool=debug,qilin_runtime=info`).
fn trace_to_stderr() {
    let Ok(filter) = std::env::var("QILIN_LOG") else {
        return;
    };
    match tracing_subscriber::EnvFilter::try_new(&filter) {
        Ok(filter) => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init(),
        Err(err) => {
            eprintln!("warning: QILIN_LOG={filter} is not a trace filter ({err}); no traces")
        }
    }
}

fn main() -> ExitCode {
    trace_to_stderr();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => commands::run::run(args),
        Command::Sessions(command) => commands::sessions::run(command),
        Command::Serve(args) => commands::serve::run(args),
        Command::Demo(args) => commands::demo::run(args),
        Command::Code(command) => commands::code::run(command),
        Command::Subprocess => return commands::code::serve_worker(),
        Command::SandboxExec { .. } => {
            return qilin_sandbox::helper_main(qilin_runtime::SANDBOX_HELPER_ARGS);
        }
        Command::Tools(command) => commands::tools::run(command),
        Command::Skills(command) => commands::skills::run(command),
        Command::Agent(command) => commands::agent::run(command),
        Command::Check(args) => commands::check::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
