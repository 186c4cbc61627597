//! Scheduled tasks in the store: schedules and their runs as rows, and the claim of a due fire.
//!
//! Every store keeps a schedule as its record (the JSON of a [`ScheduleRecord`] without the parts
//! that change) beside the columns the scheduler reads: its status and its next fire. A claim
//! ([`EventStore::claim_due`](crate::EventStore::claim_due)) takes each due fire, records its run
//! (outcome `running`, owned by the claimer) and moves the next fire on, in one transaction, so
//! that two processes sharing a database never run one fire twice. What the claim decides for
//! one schedule is [`decide`], the same for every store.

pub(crate) mod memory;
pub mod time;
pub mod words;

use crate::StoreError;
use chrono::{DateTime, Duration, TimeZone, Utc};
use qilin_protocol::schedules::{CatchUp, RunOutcome, ScheduleRecord, ScheduleRun, ScheduleStatus};
use time::{Cadence, Timing, format_time};

/// A fire a claim took: the schedule, which run it is and what it is for.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedFire {
    /// The schedule as it stands after the claim (its `lastRun` is this run).
    pub schedule: ScheduleRecord,
    /// The run's number in the schedule, from 1.
    pub run_number: u32,
    /// The run the claim recorded: outcome `running`, in the schedule's session until the
    /// runner says otherwise.
    pub run: ScheduleRun,
}

/// What a claim does with one due schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The run to start: the fire time it is for and whether it is late (caught up); none when
    /// the missed fires are skipped.
    pub fire: Option<(DateTime<Utc>, bool)>,
    /// The schedule's next fire after the claim, if it fires again.
    pub next_fire: Option<DateTime<Utc>>,
    /// The schedule's status after the claim.
    pub status: ScheduleStatus,
}

/// Decides the claim at `now` of a schedule due at `due`: a fire older than `grace`, or one
/// followed by another fire already past, was missed (no server ran) and follows the
/// schedule's `catch_up` — `once`: one late run stands for all the missed ones; `skip`: none.
/// Either way the next fire moves past `now`.
pub fn decide(
    record: &ScheduleRecord,
    due: DateTime<Utc>,
    now: DateTime<Utc>,
    grace: Duration,
) -> Decision {
    let Ok(timing) = Timing::of_record(record) else {
        return Decision {
            fire: None,
            next_fire: None,
            status: ScheduleStatus::Expired,
        };
    };
    let missed_more = timing.next_after(due).is_some_and(|next| next <= now);
    let late = missed_more || now - due > grace;
    let fire = match (record.catch_up, late) {
        (_, false) => Some((due, false)),
        (CatchUp::Once, true) => Some((due, true)),
        (CatchUp::Skip, true) => None,
    };
    let next_fire = timing.next_after(now.max(due));
    let status = match (next_fire, &timing.cadence) {
        (Some(_), _) => ScheduleStatus::Active,
        (None, Cadence::At(_)) => ScheduleStatus::Done,
        (None, _) => ScheduleStatus::Expired,
    };
    Decision {
        fire,
        next_fire,
        status,
    }
}

/// The run a claim records: started at `now`, in the schedule's own session for now.
pub fn claimed_run(
    record: &ScheduleRecord,
    fire_time: DateTime<Utc>,
    caught_up: bool,
    now: DateTime<Utc>,
) -> ScheduleRun {
    ScheduleRun {
        fire_time: format_time(fire_time),
        started_at: format_time(now),
        ended_at: None,
        session_id: record.session_id.clone(),
        turn_id: None,
        outcome: RunOutcome::Running,
        caught_up,
        message: None,
    }
}

/// The part of a record a store keeps as JSON: what never changes after creation.
pub(crate) fn stored_json(record: &ScheduleRecord) -> Result<String, StoreError> {
    let mut stored = record.clone();
    stored.status = ScheduleStatus::Active;
    stored.next_fires = Vec::new();
    stored.last_run = None;
    stored.runs = 0;
    serde_json::to_string(&stored)
        .map_err(|err| StoreError::Backend(format!("cannot encode schedule: {err}")))
}

/// A schedule read back from its stored JSON and columns.
pub(crate) fn assemble(
    data: &str,
    status: ScheduleStatus,
    next_fire: Option<DateTime<Utc>>,
    runs: u32,
    last_run: Option<ScheduleRun>,
) -> Result<ScheduleRecord, StoreError> {
    let mut record: ScheduleRecord = serde_json::from_str(data)
        .map_err(|err| StoreError::Backend(format!("a stored schedule is unreadable: {err}")))?;
    record.status = status;
    record.runs = runs;
    record.last_run = last_run;
    record.next_fires = match (status, next_fire) {
        (ScheduleStatus::Active, Some(next)) => {
            let mut fires = vec![next];
            if let Ok(timing) = Timing::of_record(&record) {
                fires.extend(timing.next_fires(next, 2));
            }
            fires.into_iter().map(format_time).collect()
        }
        _ => Vec::new(),
    };
    Ok(record)
}

/// A run read back from its stored JSON.
pub(crate) fn parse_run(data: &str) -> Result<ScheduleRun, StoreError> {
    serde_json::from_str(data)
        .map_err(|err| StoreError::Backend(format!("a stored schedule run is unreadable: {err}")))
}

/// A run as stored JSON.
pub(crate) fn run_json(run: &ScheduleRun) -> Result<String, StoreError> {
    serde_json::to_string(run)
        .map_err(|err| StoreError::Backend(format!("cannot encode schedule run: {err}")))
}

/// A status read back from its wire name.
pub(crate) fn parse_status(name: &str) -> Result<ScheduleStatus, StoreError> {
    match name {
        "active" => Ok(ScheduleStatus::Active),
        "done" => Ok(ScheduleStatus::Done),
        "expired" => Ok(ScheduleStatus::Expired),
        "deleted" => Ok(ScheduleStatus::Deleted),
        other => Err(StoreError::Backend(format!(
            "a stored schedule has an unknown status `{other}`"
        ))),
    }
}

/// A time as the stores keep it: milliseconds since 1970.
pub(crate) fn to_millis(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

/// A time back from milliseconds since 1970.
pub(crate) fn from_millis(millis: i64) -> Result<DateTime<Utc>, StoreError> {
    Utc.timestamp_millis_opt(millis)
        .single()
        .ok_or_else(|| StoreError::Backend(format!("a stored fire time {millis} is out of range")))
}

/// The message of a run a stopped server left running.
pub const INTERRUPTED_MESSAGE: &str =
    "the server running this run stopped before it ended; the next fire still happens";

/// A run that was running when its server stopped, now ended as interrupted at `now`.
pub fn interrupted(mut run: ScheduleRun, now: DateTime<Utc>) -> ScheduleRun {
    run.outcome = RunOutcome::Interrupted;
    run.ended_at = Some(format_time(now));
    run.message = Some(INTERRUPTED_MESSAGE.to_string());
    run
}
