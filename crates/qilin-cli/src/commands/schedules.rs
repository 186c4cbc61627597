//! `qilin schedules`: the scheduled tasks stored for a workspace — list them, add one to a
//! session, remove one. `qilin serve` fires them.

use crate::commands::open_store;
use crate::commands::sessions::workspace_or_here;
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use qilin_protocol::schedules::{CatchUp, CreateSchedule, ScheduleRecord, ScheduleTarget};
use qilin_schedules::ScheduleService;
use std::path::PathBuf;
use std::process::ExitCode;

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
                new_session,
                skip_missed,
                expires,
                workspace,
            } => {
                let store = open_store(&workspace_or_here(workspace)?)?;
                if store.session(&session).await?.is_none() {
                    bail!(
                        "no session `{session}` in this workspace: `qilin sessions list` lists them"
                    );
                }
                let request = CreateSchedule {
                    prompt,
                    cron,
                    every,
                    at,
                    timezone,
                    agent: None,
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
                let schedule = ScheduleService::new(store, &session)
                    .create(&request)
                    .await
                    .map_err(|err| anyhow::anyhow!(err.message))?;
                println!("{}", line(&schedule));
                Ok(ExitCode::SUCCESS)
            }
            SchedulesCommand::Rm { id, workspace } => {
                let store = open_store(&workspace_or_here(workspace)?)?;
                let Some(schedule) = store.schedule(&id).await? else {
                    bail!("no schedule `{id}`: `qilin schedules list` lists them");
                };
                let deleted = ScheduleService::new(store, &schedule.session_id)
                    .delete(&id)
                    .await
                    .map_err(|err| anyhow::anyhow!(err.message))?;
                println!("{}", line(&deleted));
                Ok(ExitCode::SUCCESS)
            }
        }
    })
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
