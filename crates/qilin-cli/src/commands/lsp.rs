//! `qilin lsp status`: the language servers of a workspace — which are installed, and with
//! `--start`, whether each starts and answers.

use crate::commands::sessions::workspace_or_here;
use anyhow::{Context, Result};
use clap::Subcommand;
use qilin_lsp::{LspOptions, LspWorkspace};
use qilin_protocol::lsp::{LspServerStatus, LspStatusResponse};
use std::path::PathBuf;
use std::process::ExitCode;

/// The `lsp` subcommands.
#[derive(Subcommand)]
pub enum LspCommand {
    /// Each language's server: its command, whether it is installed (with how to install it
    /// when not), and with `--start` whether it starts. A running `qilin serve` shows its own
    /// servers at `GET /api/lsp`.
    Status {
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Start every installed server (as a first request would) and show how it stands.
        #[arg(long)]
        start: bool,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// Runs an `lsp` subcommand.
pub fn run(command: LspCommand) -> Result<ExitCode> {
    let LspCommand::Status {
        workspace,
        start,
        json,
    } = command;
    let workspace = workspace_or_here(workspace)?;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let status = runtime.block_on(async {
        let servers = LspWorkspace::new(&workspace, LspOptions::default());
        if start {
            servers.start_all().await;
        }
        servers.status()
    })?;
    let out = if json {
        format!("{}\n", serde_json::to_string_pretty(&status)?)
    } else {
        table(&status)
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// One row per server: language, server, state, pid, restarts, then what to know.
fn table(status: &LspStatusResponse) -> String {
    let header = ["LANGUAGE", "SERVER", "STATE", "PID", "RESTARTS"];
    let rows: Vec<[String; 5]> = status
        .servers
        .iter()
        .map(|server| {
            [
                server.language.clone(),
                server.server.clone(),
                server.state.as_str().to_string(),
                server
                    .pid
                    .map_or_else(|| "-".to_string(), |pid| pid.to_string()),
                server.restarts.to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut text = String::new();
        for (cell, width) in cells.iter().zip(widths) {
            text.push_str(&format!("{cell:<width$}  "));
        }
        text.trim_end().to_string()
    };
    let mut out = format!("Language servers of {}\n", status.workspace);
    out.push_str(&line(&header.map(String::from)));
    out.push('\n');
    for (row, server) in rows.iter().zip(&status.servers) {
        out.push_str(&line(row));
        out.push_str(&remark(server));
        out.push('\n');
    }
    out
}

fn remark(server: &LspServerStatus) -> String {
    let said = server
        .hint
        .as_ref()
        .or(server.progress.as_ref())
        .or(server.last_error.as_ref());
    said.map(|text| format!("  ({text})")).unwrap_or_default()
}
