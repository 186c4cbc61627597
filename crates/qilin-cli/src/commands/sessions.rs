//! `qilin sessions`: the sessions stored for a workspace — list them, search what they
//! recorded, show one as it was rendered, export its event log.

use crate::commands::open_store;
use crate::render::{Style, TerminalRenderer};
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use qilin_protocol::CallStatus;
use qilin_protocol::Event;
use qilin_store::{EventStore, SearchHit, SearchQuery, SessionInfo, SessionQuery, SessionStatus};
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
    /// Search what the workspace's sessions recorded — prompts, the model's text, calls'
    /// arguments, results and errors — best hits first.
    Search {
        /// The words to find, taken literally; hits with them together as a phrase rank first.
        query: String,
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Only hits in calls of this tool.
        #[arg(long)]
        tool: Option<String>,
        /// Only hits in calls that ended so: ok, error, denied or interrupted.
        #[arg(long, value_parser = parse_status)]
        status: Option<CallStatus>,
        /// Only sessions of this agent.
        #[arg(long)]
        agent: Option<String>,
        /// Only this session (repeat for several).
        #[arg(long = "session")]
        sessions: Vec<String>,
        /// Only events at or after this time (RFC 3339, or a date).
        #[arg(long)]
        after: Option<String>,
        /// Only events before this time (RFC 3339, or a date).
        #[arg(long)]
        before: Option<String>,
        /// The most hits (1 to 100).
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print the hits as a JSON array instead of a table.
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
            SessionsCommand::Search {
                query,
                workspace,
                tool,
                status,
                agent,
                sessions,
                after,
                before,
                limit,
                json,
            } => {
                let workspace = workspace_or_here(workspace)?;
                let query = SearchQuery {
                    text: query,
                    sessions,
                    workspace: Some(workspace.display().to_string()),
                    agent,
                    tool,
                    status,
                    after,
                    before,
                    limit,
                    cursor: None,
                };
                search(&workspace, &query, json).await
            }
            SessionsCommand::Show { id, workspace } => {
                show(&workspace_or_here(workspace)?, &id).await
            }
            SessionsCommand::Export { id, workspace } => {
                export(&workspace_or_here(workspace)?, &id).await
            }
        }
    })
}

pub(crate) fn workspace_or_here(workspace: Option<PathBuf>) -> Result<PathBuf> {
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

/// A call status from its name.
fn parse_status(name: &str) -> Result<CallStatus, String> {
    match name {
        "ok" => Ok(CallStatus::Ok),
        "error" => Ok(CallStatus::Error),
        "denied" => Ok(CallStatus::Denied),
        "interrupted" => Ok(CallStatus::Interrupted),
        other => Err(format!(
            "`{other}` is no call status; give ok, error, denied or interrupted"
        )),
    }
}

async fn search(workspace: &Path, query: &SearchQuery, json: bool) -> Result<ExitCode> {
    if !(1..=qilin_store::search::MAX_SEARCH_PAGE).contains(&query.limit) {
        bail!(
            "--limit {} is out of range; give 1 to {}",
            query.limit,
            qilin_store::search::MAX_SEARCH_PAGE
        );
    }
    let store = open_store(workspace)?;
    let page = store.search(query).await?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&page.hits)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if page.hits.is_empty() {
        writeln!(
            out,
            "No hit for `{}` in the sessions of {}.",
            query.text,
            workspace.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<18} {:>4} {:<16} {:<10} {:<20} snippet",
        "session", "turn", "call", "field", "time"
    )?;
    for hit in &page.hits {
        writeln!(out, "{}", hit_row(hit))?;
    }
    if page.next.is_some() {
        writeln!(
            out,
            "(more hits: raise --limit, or narrow with --tool, --status, --after)"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn hit_row(hit: &SearchHit) -> String {
    let call = match (&hit.call_id, &hit.tool) {
        (Some(call), Some(tool)) => format!("{tool} {call}"),
        (Some(call), None) => call.clone(),
        _ => String::new(),
    };
    let snippet: String = hit
        .snippet
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!(
        "{:<18} {:>4} {:<16} {:<10} {:<20} {}",
        hit.session,
        hit.turn.map_or(String::new(), |turn| turn.to_string()),
        clip(&call, 16),
        hit.field.as_str(),
        hit.time.get(..19).unwrap_or(&hit.time),
        clip(&snippet, 100)
    )
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
