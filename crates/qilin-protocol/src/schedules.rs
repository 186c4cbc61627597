//! Scheduled tasks: a prompt a session asks to be run later, once or again and again.
//!
//! A schedule is a row in the store (the server's scheduler claims its due fires there), and its
//! life is also told in the creating session's log: `schedule.created`, `schedule.fired` (a run
//! started), `schedule.finished` (a run ended) and `schedule.deleted`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a fired schedule runs its prompt.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleTarget {
    /// In the session that created it, after its running turn if one runs.
    #[default]
    ThisSession,
    /// In a new session of the schedule's agent, one per run.
    NewSession,
}

/// What happens to fires missed while no server ran.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "snake_case")]
pub enum CatchUp {
    /// One late run stands for all the missed fires.
    #[default]
    Once,
    /// Missed fires are dropped; the next fire is the next one after now.
    Skip,
}

/// Where a schedule stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleStatus {
    /// It will fire again.
    Active,
    /// A one-shot `at` schedule that fired.
    Done,
    /// Its `expires` time passed (or its cron has no further fire).
    Expired,
    /// Someone deleted it.
    Deleted,
}

impl ScheduleStatus {
    /// The status's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleStatus::Active => "active",
            ScheduleStatus::Done => "done",
            ScheduleStatus::Expired => "expired",
            ScheduleStatus::Deleted => "deleted",
        }
    }
}

/// How one run of a schedule went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Its turn is under way.
    Running,
    /// Its turn ended normally.
    Completed,
    /// Its turn failed, or could not start.
    Failed,
    /// The server running it stopped before it ended.
    Interrupted,
    /// It ran out of its time budget or the agent's step limit.
    OutOfBudget,
    /// It was not run (see its message).
    Skipped,
}

impl RunOutcome {
    /// The outcome's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Running => "running",
            RunOutcome::Completed => "completed",
            RunOutcome::Failed => "failed",
            RunOutcome::Interrupted => "interrupted",
            RunOutcome::OutOfBudget => "out_of_budget",
            RunOutcome::Skipped => "skipped",
        }
    }
}

/// One run of a schedule: a fire and the turn it started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRun {
    /// The scheduled time this run is for, RFC 3339 UTC.
    pub fire_time: String,
    /// When the run started, RFC 3339 UTC.
    pub started_at: String,
    /// When the run ended, RFC 3339 UTC; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ended_at: Option<String>,
    /// The session the turn ran in.
    pub session_id: String,
    /// The turn it started, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<String>,
    /// How it went.
    pub outcome: RunOutcome,
    /// Whether it stands for fires missed while no server ran, run late.
    pub caught_up: bool,
    /// Why it failed, was skipped or was interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
}

/// A schedule and where it stands: what the schedule tools and routes return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRecord {
    /// The schedule's id.
    pub id: String,
    /// The session that created it (and runs it when the target is `this_session`).
    pub session_id: String,
    /// What each run asks.
    pub prompt: String,
    /// A five-field cron expression; exactly one of `cron`, `everySeconds` and `at` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cron: Option<String>,
    /// A fixed interval, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub every_seconds: Option<u64>,
    /// A single fire time, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub at: Option<String>,
    /// The IANA time zone the cron is read in; `UTC` by default.
    pub timezone: String,
    /// The schedule in words: "every weekday at 09:00 (Europe/Paris)".
    pub description: String,
    /// The agent a `new_session` run uses; the creating session's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<String>,
    /// Where runs happen.
    pub target: ScheduleTarget,
    /// What happens to fires missed while no server ran.
    pub catch_up: CatchUp,
    /// After this time it fires no more, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub expires: Option<String>,
    /// Where it stands.
    pub status: ScheduleStatus,
    /// When it was created, RFC 3339 UTC.
    pub created_at: String,
    /// The next (up to) three fire times, RFC 3339 UTC.
    pub next_fires: Vec<String>,
    /// Its latest run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_run: Option<ScheduleRun>,
    /// How many runs so far.
    pub runs: u32,
}

/// The `schedule.created` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleCreatedEvent {
    /// The schedule as created.
    pub schedule: ScheduleRecord,
}

/// The `schedule.deleted` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleDeletedEvent {
    /// The deleted schedule's id.
    pub schedule_id: String,
}

/// The `schedule.fired` event: a run started (outcome `running`, its session and turn known).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleFiredEvent {
    /// The schedule that fired.
    pub schedule_id: String,
    /// The run it started.
    pub run: ScheduleRun,
}

/// The `schedule.finished` event: a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleFinishedEvent {
    /// The schedule whose run ended.
    pub schedule_id: String,
    /// The ended run.
    pub run: ScheduleRun,
}

/// What `schedule_create` and `schedule_delete` return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleOutput {
    /// The schedule after the call.
    pub schedule: ScheduleRecord,
}

/// What `schedule_list`, `GET /api/sessions/{id}/schedules` and `GET /api/schedules` return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleListOutput {
    /// The schedules, newest first.
    pub schedules: Vec<ScheduleRecord>,
}

/// `POST /api/sessions/{id}/schedules` (and `schedule_create`'s arguments, camelCase).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSchedule {
    /// What each run asks (not only spaces).
    #[schemars(length(min = 1), regex(pattern = crate::api::NOT_BLANK))]
    pub prompt: String,
    /// A five-field cron expression (minute hour day-of-month month day-of-week).
    #[serde(default)]
    #[ts(optional)]
    pub cron: Option<String>,
    /// An interval: "90s", "15m", "2h", "1d" or a number of seconds; at least a minute.
    #[serde(default)]
    #[ts(optional)]
    pub every: Option<String>,
    /// A single fire time, RFC 3339, in the future.
    #[serde(default)]
    #[ts(optional)]
    pub at: Option<String>,
    /// The IANA time zone the cron is read in; `UTC` when omitted.
    #[serde(default)]
    #[ts(optional)]
    pub timezone: Option<String>,
    /// The agent a `new_session` run uses.
    #[serde(default)]
    #[ts(optional)]
    pub agent: Option<String>,
    /// Where runs happen; `this_session` when omitted.
    #[serde(default)]
    #[ts(optional)]
    pub target: Option<ScheduleTarget>,
    /// What happens to missed fires; `once` when omitted.
    #[serde(default)]
    #[ts(optional)]
    pub catch_up: Option<CatchUp>,
    /// After this time it fires no more, RFC 3339.
    #[serde(default)]
    #[ts(optional)]
    pub expires: Option<String>,
}
