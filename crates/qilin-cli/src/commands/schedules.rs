//! `qilin schedules`: the scheduled tasks stored for a workspace — list them, add one to a
//! session, remove one. `qilin serve` fires them.

use crate::commands::open_store;
use crate::commands::sessions::workspace_or_here;
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use qilin_protocol::EventBody;
use qilin_protocol::schedules::{CatchUp, CreateSchedule, ScheduleRecord, ScheduleTarget};
use qilin_runtime::schedule_service;
use qilin_schedules::{append_to_stored_log, created_event, deleted_event};
use qilin_store::EventStore;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The `schedules` subcommands.
#[derive(Subcommand)]
pub enum SchedulesCommand {
    /// Every schedule of the workspace's sessions, newest first.
    List {
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Schedule a prompt for a session: exactly one of `--cron`, `--every` and `--at`.
    Add {
        /// The session the schedule belongs to (and runs in, with `--target this_session`).
        #[arg(long)]
        session: String,
        /// What each run asks.
        prompt: String,
        /// Five cron fields: minute hour day-of-month month day-of-week.
        #[arg(long)]
        cron: Option<String>,
        /// An interval: "90s", "15m", "2h", "1d"; at least a minute.
        #[arg(long)]
        every: Option<String>,
        /// One time, RFC 3339, in the future.
        #[arg(long)]
        at: Option<String>,
        /// The IANA time zone the cron is read in; UTC when omitted.
        #[arg(long)]
        timezone: Option<String>,
        /// The agent of each new session (with `--new-session`): a workspace's NAME.agent, a
        /// built-in agent's name, or an agent file relative to the workspace; the session's
        /// agent when omitted.
        #[arg(long)]
        agent: Option<String>,
        /// Run in a new session each time instead of in the session.
        #[arg(long)]
        new_session: bool,
        /// Skip fires missed while no server ran instead of one late run for them.
        #[arg(long)]
        skip_missed: bool,
        /// After this time (RFC 3339) it fires no more.
        #[arg(long)]
        expires: Option<String>,
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Delete a schedule: it fires no more.
    Rm {
        /// The schedule's id.
        id: String,
        /// The workspace; the current folder when omitted.
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
}

/// Runs a `schedules` subcommand.
pub fn run(command: SchedulesCommand) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        match command {
            SchedulesCommand::List { workspace, json } => {
                let store = open_store(&workspace_or_here(workspace)?)?;
                let schedules = store.list_schedules(None).await?;
                let mut out = String::new();
                if json {
                    out = serde_json::to_string_pretty(&schedules)?;
                    out.push('\n');
                } else if schedules.is_empty() {
                    out.push_str("No schedule.\n");
                } else {
                    for schedule in &schedules {
                        out.push_str(&line(schedule));
                        out.push('\n');
                    }
                }
                print!("{out}");
                Ok(ExitCode::SUCCESS)
            }
            SchedulesCommand::Add {
                session,
                prompt,
                cron,
                every,
                at,
                timezone,
                agent,
                new_session,
                skip_missed,
                expires,
                workspace,
            } => {
                let store = open_store(&workspace_or_here(workspace)?)?;
                let Some(info) = store.session(&session).await? else {
                    bail!(
                        "no session `{session}` in this workspace: `qilin sessions list` lists them"
                    );
                };
                let request = CreateSchedule {
                    prompt,
                    cron,
                    every,
                    at,
                    timezone,
                    agent,
                    target: Some(match new_session {
                        true => ScheduleTarget::NewSession,
                        false => ScheduleTarget::ThisSession,
                    }),
                    catch_up: Some(match skip_missed {
                        true => CatchUp::Skip,
                        false => CatchUp::Once,
                    }),
                    expires,
                };
                let schedule =
                    schedule_service(Arc::clone(&store), &session, Path::new(&info.workspace))
                        .create(&request)
                        .await
                        .map_err(|err| anyhow::anyhow!(err.message))?;
                tell_log(store.as_ref(), &session, created_event(&schedule)).await;
                println!("{}", line(&schedule));
                Ok(ExitCode::SUCCESS)
            }
            SchedulesCommand::Rm { id, workspace } => {
                let store = open_store(&workspace_or_here(workspace)?)?;
                let Some(schedule) = store.schedule(&id).await? else {
                    bail!("no schedule `{id}`: `qilin schedules list` lists them");
                };
                let session = schedule.session_id;
                let workspace = store
                    .session(&session)
                    .await?
                    .map(|info| PathBuf::from(info.workspace))
                    .unwrap_or_default();
                let deleted = schedule_service(Arc::clone(&store), &session, &workspace)
                    .delete(&id)
                    .await
                    .map_err(|err| anyhow::anyhow!(err.message))?;
                tell_log(store.as_ref(), &session, deleted_event(&deleted)).await;
                println!("{}", line(&deleted));
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}

/// Records a schedule change in the session's log, as the tools do; a log that cannot take
/// it (a process writing the session now) is said on standard error, the change stays.
async fn tell_log(store: &dyn EventStore, session: &str, body: EventBody) {
    if let Err(err) = append_to_stored_log(store, session, body).await {
        eprintln!("note: the session's log does not tell this change: {err}");
    }
}

/// One schedule on a line: id, status, timing, next fire, last run, prompt.
fn line(schedule: &ScheduleRecord) -> String {
    let next = schedule.next_fires.first().map_or("-", String::as_str);
    let last = schedule
        .last_run
        .as_ref()
        .map_or_else(|| "-".to_string(), |run| run.outcome.as_str().to_string());
    format!(
        "{}  {}  session {}  {}  next {}  last {}  runs {}  {}",
        schedule.id,
        schedule.status.as_str(),
        schedule.session_id,
        schedule.description,
        next,
        last,
        schedule.runs,
        schedule.prompt
    )
}
