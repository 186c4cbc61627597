//! The `qilin` command.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod asking;
mod commands;
mod config;
mod ending;
mod input;
mod keys;
mod render;
mod trust;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Qilin: an agent runtime where every capability is a tool, reached directly or from code.
///
/// With no command, `qilin` opens a conversation in the current folder with the built-in coder
/// agent; `qilin "PROMPT"` runs one turn. The model is `--model`, else `QILIN_MODEL`, else the
/// `model` of the config file (`qilin config` shows it).
#[derive(Parser)]
#[command(name = "qilin", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: commands::run::RunArgs,
}

/// Counts every allocation so a code-mode worker (`qilin subprocess`) can cap its memory.
#[global_allocator]
static ALLOCATOR: monty_alloc::LimitedAllocator = monty_alloc::LimitedAllocator;

#[derive(Subcommand)]
enum Command {
    /// Run an agent: one turn of a prompt, or a conversation; `--resume ID` or `--continue`
    /// carries on a stored session. Esc or Ctrl-C interrupts the turn.
    Run(commands::run::RunArgs),
    /// Run a prompt again and again, each iteration a fresh session, until checks pass:
    /// one line per iteration (files changed, checks, tokens, duration, outcome).
    Loop(commands::loops::LoopArgs),
    /// List the stored sessions of a workspace, show one, or export its event log.
    #[command(subcommand)]
    Sessions(commands::sessions::SessionsCommand),
    /// List the scheduled tasks of a workspace's sessions, add one, or remove one.
    #[command(subcommand)]
    Schedules(commands::schedules::SchedulesCommand),
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
    /// MCP: what the declared servers offer and the skills generated for them, or Qilin's
    /// tools served over MCP.
    #[command(subcommand)]
    Mcp(commands::mcp::McpCommand),
    /// Language servers: which are installed for a workspace and whether they start.
    #[command(subcommand)]
    Lsp(commands::lsp::LspCommand),
    /// Show where the configuration is read from and the default model it gives.
    Config,
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

/// Standard output that cannot be written — a closed pipe (`| head -1`), a full disk — ends
/// the program quietly (a closed pipe) or with one line saying so, never with a panic.
fn quiet_on_closed_output() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        keys::restore_terminal();
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") {
            if message.contains("Broken pipe") {
                ending::exit(141);
            }
            eprintln!("error: cannot write to standard output: {message}");
            ending::exit(1);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    trace_to_stderr();
    quiet_on_closed_output();
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        return report(commands::run::run(cli.run));
    };
    let result = match command {
        Command::Run(args) => commands::run::run(args),
        Command::Loop(args) => commands::loops::run(args),
        Command::Sessions(command) => commands::sessions::run(command),
        Command::Schedules(command) => commands::schedules::run(command),
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
        Command::Mcp(command) => commands::mcp::run(command),
        Command::Lsp(command) => commands::lsp::run(command),
        Command::Config => config::show(),
    };
    // Sessions a command did not drop (a server's, held by its tasks) leave no temp folder.
    qilin_sandbox::remove_temp_folders();
    report(result)
}

/// The exit status of a command, its error printed once on standard error.
fn report(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err)
            if err
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::from(141)
        }
        Err(err) => {
            eprintln!("{}", error_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// An error as one line: its causes after it unless the message already says them, and
/// `error: ` before it unless it is a located diagnostic (`file:line: error: …`) already.
fn error_line(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    if let Some(hint) = hint(err) {
        text.push_str(hint);
    }
    let located = text
        .split_once(": error: ")
        .is_some_and(|(place, _)| place.contains(':') && !place.contains(' '));
    if located {
        text
    } else {
        format!("error: {text}")
    }
}

/// What the libraries' messages, written for every host, leave to the command line: the flag
/// a user passes about `err`, to follow its message.
fn hint(err: &anyhow::Error) -> Option<&'static str> {
    err.chain().find_map(
        |cause| match cause.downcast_ref::<qilin_sandbox::SandboxError>() {
            Some(qilin_sandbox::SandboxError::Unsupported { .. }) => Some(", or pass --no-sandbox"),
            _ => None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::error_line;

    #[test]
    fn an_unsandboxable_session_is_told_the_flag_that_opts_out() {
        let unsupported = qilin_sandbox::SandboxError::Unsupported {
            mode: qilin_sandbox::SandboxMode::WorkspaceWrite,
            missing: vec!["Landlock is not enabled".to_string()],
        };
        let text = unsupported.to_string();
        assert!(!text.contains("--"), "the library names no flag: {text}");
        let err = anyhow::Error::from(qilin_runtime::RuntimeError::Sandbox(unsupported));
        assert_eq!(
            error_line(&err),
            format!("error: {text}, or pass --no-sandbox")
        );
        let other = anyhow::anyhow!("something else");
        assert_eq!(error_line(&other), "error: something else");
    }

    #[test]
    fn an_error_is_said_once() {
        let inner = anyhow::anyhow!("bad.agent:2: error: instructions: expected a string");
        let outer = inner.context("bad.agent:2: error: instructions: expected a string");
        assert_eq!(
            error_line(&outer),
            "bad.agent:2: error: instructions: expected a string"
        );
        let chained = anyhow::anyhow!("No such file").context("cannot read x.toml");
        assert_eq!(
            error_line(&chained),
            "error: cannot read x.toml: No such file"
        );
    }
}
