//! `qilin lsp status`: the language servers of a workspace — as a running `qilin serve` of it
//! runs them, else which are installed, and with `--start`, whether each starts and answers.

use crate::commands::sandbox_helper;
use crate::commands::sessions::workspace_or_here;
use anyhow::{Context, Result};
use clap::Subcommand;
use qilin_lsp::{LspOptions, LspWorkspace, ServerSandbox};
use qilin_protocol::lsp::{LspServerStatus, LspStatusResponse};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The `lsp` subcommands.
#[derive(Subcommand)]
pub enum LspCommand {
    /// Each language's server: its command, its state, whether it runs sandboxed, and how to
    /// install it when it is not. While a `qilin serve` of the workspace runs, shows the
    /// servers it runs (asked at its `GET /api/lsp`); otherwise this process's own view.
    Status {
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Start every installed server in this process (as a first request would) and show
        /// how it stands; implies `--local`.
        #[arg(long)]
        start: bool,
        /// Show this process's own view even when a `qilin serve` of the workspace runs.
        #[arg(long)]
        local: bool,
        /// With `--start`, start the servers without the sandbox (with your full file
        /// system, network and environment rights), as `qilin run --no-sandbox` runs them.
        #[arg(long, requires = "start")]
        no_sandbox: bool,
        /// Print JSON instead of a table (which view it is goes to stderr).
        #[arg(long)]
        json: bool,
    },
}

/// Which view a status is.
enum View {
    /// A running `qilin serve`'s servers.
    Served {
        /// Its base URL.
        url: String,
        /// Its process id.
        pid: u32,
    },
    /// This process's: nothing runs unless `--start` started it.
    Local {
        /// Why no serve's view is shown.
        why: &'static str,
    },
}

impl View {
    fn describe(&self) -> String {
        match self {
            View::Served { url, pid } => {
                format!("as the running `qilin serve` at {url} (pid {pid}) runs them")
            }
            View::Local { why } => format!("this process's view: {why}"),
        }
    }
}

/// Runs an `lsp` subcommand.
pub fn run(command: LspCommand) -> Result<ExitCode> {
    let LspCommand::Status {
        workspace,
        start,
        local,
        no_sandbox,
        json,
    } = command;
    let workspace = workspace_or_here(workspace)?;
    let sandbox = if no_sandbox {
        ServerSandbox::Off
    } else {
        ServerSandbox::Confined(sandbox_helper()?)
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let (status, view) = runtime.block_on(async {
        if !(start || local)
            && let Some((status, view)) = served_status(&workspace).await
        {
            return Ok::<_, anyhow::Error>((status, view));
        }
        let servers = LspWorkspace::new(
            &workspace,
            LspOptions {
                sandbox,
                ..LspOptions::default()
            },
        );
        if start {
            servers.start_all().await;
        }
        let why = if start {
            "the servers were started here with `--start`"
        } else if local {
            "`--local` asked for it; nothing runs here"
        } else {
            "no running `qilin serve` of this workspace was found; nothing runs here"
        };
        Ok((servers.status()?, View::Local { why }))
    })?;
    let out = if json {
        eprintln!("{}", view.describe());
        format!("{}\n", serde_json::to_string_pretty(&status)?)
    } else {
        table(&status, &view)
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// What a running `qilin serve` wrote in its token file.
#[derive(serde::Deserialize)]
struct TokenFile {
    url: String,
    token: String,
    pid: u32,
}

/// The status of `workspace`'s servers from a running `qilin serve` of it, found through the
/// token files in Qilin's private runtime folder; `None` when none answers for it.
async fn served_status(workspace: &Path) -> Option<(LspStatusResponse, View)> {
    let folder = qilin_sandbox::private_runtime_dir()?;
    let wanted = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("serve-") && name.ends_with(".json"))
        })
        .collect();
    files.sort();
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(3))
        .build()
        .ok()?;
    for file in files {
        let Ok(text) = qilin_sandbox::read_own_text(&file, qilin_sandbox::SMALL_FILE_LIMIT) else {
            continue;
        };
        let Ok(served) = serde_json::from_str::<TokenFile>(&text) else {
            continue;
        };
        // A file left by a server that was killed.
        if !Path::new(&format!("/proc/{}", served.pid)).exists() {
            continue;
        }
        let url = served.url.trim_end_matches('/').to_string();
        let Ok(response) = client
            .get(format!("{url}/api/lsp"))
            .bearer_auth(&served.token)
            .send()
            .await
        else {
            continue;
        };
        let Ok(status) = response.error_for_status() else {
            continue;
        };
        let Ok(status) = status.json::<LspStatusResponse>().await else {
            continue;
        };
        if Path::new(&status.workspace) == wanted {
            return Some((
                status,
                View::Served {
                    url,
                    pid: served.pid,
                },
            ));
        }
    }
    None
}

/// One row per server: language, server, state, sandbox, pid, restarts, then what to know.
fn table(status: &LspStatusResponse, view: &View) -> String {
    let header = ["LANGUAGE", "SERVER", "STATE", "SANDBOX", "PID", "RESTARTS"];
    let rows: Vec<[String; 6]> = status
        .servers
        .iter()
        .map(|server| {
            [
                server.language.clone(),
                server.server.clone(),
                server.state.as_str().to_string(),
                sandbox_cell(server).to_string(),
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
    let mut out = format!(
        "Language servers of {} ({})\n",
        status.workspace,
        view.describe()
    );
    out.push_str(&line(&header.map(String::from)));
    out.push('\n');
    for (row, server) in rows.iter().zip(&status.servers) {
        out.push_str(&line(row));
        out.push_str(&remark(server));
        out.push('\n');
    }
    out
}

/// How a server is confined: `read-only` (with `+network` when it may reach the network) or
/// `OFF` when the user turned the sandbox off.
fn sandbox_cell(server: &LspServerStatus) -> &'static str {
    match (server.sandboxed, server.network) {
        (true, false) => "read-only",
        (true, true) => "read-only+network",
        (false, _) => "OFF",
    }
}

fn remark(server: &LspServerStatus) -> String {
    let said = server
        .hint
        .as_ref()
        .or(server.progress.as_ref())
        .or(server.last_error.as_ref());
    said.map(|text| format!("  ({text})")).unwrap_or_default()
}
