//! `qilin sessions`: the sessions stored for a workspace — list them, show one as it was
//! rendered, export its event log.

use crate::commands::open_store;
use crate::render::{Style, TerminalRenderer};
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use qilin_protocol::Event;
use qilin_store::{EventStore, SessionInfo, SessionQuery, SessionStatus};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The `sessions` subcommands.
#[derive(Subcommand)]
pub enum SessionsCommand {
    /// The sessions of the workspace, newest activity first.
    List {
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// The most sessions to list.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// A session's conversation, rendered as `qilin run` showed it.
    Show {
        /// The session's id.
        id: String,
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// A session's event log as JSON lines.
    Export {
        /// The session's id.
        id: String,
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
}

/// Runs a `sessions` subcommand.
pub fn run(command: SessionsCommand) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        match command {
            SessionsCommand::List {
                workspace,
                limit,
                json,
            } => list(&workspace_or_here(workspace)?, limit, json).await,
            SessionsCommand::Show { id, workspace } => {
                show(&workspace_or_here(workspace)?, &id).await
            }
            SessionsCommand::Export { id, workspace } => {
                export(&workspace_or_here(workspace)?, &id).await
            }
        }
    })
}

fn workspace_or_here(workspace: Option<PathBuf>) -> Result<PathBuf> {
    let workspace = match workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    workspace
        .canonicalize()
        .with_context(|| format!("the workspace {} does not exist", workspace.display()))
}

async fn list(workspace: &Path, limit: usize, json: bool) -> Result<ExitCode> {
    let store = open_store(workspace)?;
    let page = store
        .list_sessions(&SessionQuery {
            workspace: Some(workspace.display().to_string()),
            limit,
            ..Default::default()
        })
        .await?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&page.sessions)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if page.sessions.is_empty() {
        writeln!(
            out,
            "No sessions in {} yet; start one with `qilin run --agent FILE`.",
            workspace.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<18} {:<12} {:<22} {:<20} {:>5}  {:<8} first prompt",
        "id", "agent", "model", "last activity", "turns", "status"
    )?;
    for session in &page.sessions {
        writeln!(out, "{}", row(session))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn row(session: &SessionInfo) -> String {
    let status = match session.status {
        SessionStatus::Idle => "idle",
        SessionStatus::Running => "running",
    };
    format!(
        "{:<18} {:<12} {:<22} {:<20} {:>5}  {:<8} {}",
        session.id,
        clip(&session.agent, 12),
        clip(&session.model, 22),
        session
            .last_activity
            .get(..19)
            .unwrap_or(&session.last_activity),
        session.turns,
        status,
        session.title.as_deref().unwrap_or("")
    )
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut clipped: String = text.chars().take(width - 1).collect();
    clipped.push('…');
    clipped
}

async fn events(store: &dyn EventStore, id: &str) -> Result<Vec<Event>> {
    if store.session(id).await?.is_none() {
        bail!("no session `{id}` here; `qilin sessions list` shows the sessions of this workspace");
    }
    let mut all = Vec::new();
    loop {
        let after = all.last().map_or(0, |event: &Event| event.seq);
        let page = store.read(id, after, 5_000).await?;
        if page.is_empty() {
            return Ok(all);
        }
        all.extend(page);
    }
}

async fn show(workspace: &Path, id: &str) -> Result<ExitCode> {
    let store = open_store(workspace)?;
    let events = events(store.as_ref(), id).await?;
    let mut renderer = TerminalRenderer::new(Style::detect(), Box::new(std::io::stdout()));
    for event in &events {
        if let qilin_protocol::EventBody::TurnStarted { prompt, .. } = &event.body {
            renderer.finish();
            println!("\n› {prompt}");
        }
        renderer.handle(event);
    }
    renderer.finish();
    Ok(ExitCode::SUCCESS)
}

async fn export(workspace: &Path, id: &str) -> Result<ExitCode> {
    let store = open_store(workspace)?;
    let mut out = std::io::stdout().lock();
    for event in events(store.as_ref(), id).await? {
        writeln!(out, "{}", serde_json::to_string(&event)?)?;
    }
    Ok(ExitCode::SUCCESS)
}
