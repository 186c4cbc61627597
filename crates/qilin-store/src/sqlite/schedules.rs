//! Schedules and their runs in the SQLite file. Writes go through the one writer, each in its
//! own savepoint of the writer's transaction, so a claim is atomic; reads use the reading
//! connections.

use super::writer::ApplyError;
use crate::StoreError;
use crate::schedules::{
    ClaimedFire, assemble, claimed_run, decide, from_millis, interrupted, parse_run, parse_status,
    run_json, stored_json, to_millis,
};
use chrono::{DateTime, Duration, Utc};
use qilin_protocol::schedules::{ScheduleRecord, ScheduleRun, ScheduleStatus, ScheduleTarget};
use rusqlite::{Connection, OptionalExtension, Row, params};

/// A schedule write for the writer.
pub(super) enum ScheduleOp {
    /// Record a new schedule.
    Create {
        record: Box<ScheduleRecord>,
        first_fire: DateTime<Utc>,
    },
    /// Mark a schedule deleted.
    Delete { id: String },
    /// Claim the due fires.
    Claim {
        now: DateTime<Utc>,
        owner: String,
        grace: Duration,
        /// Takes the lease of a `this_session` schedule's session for the claimer; false when
        /// another process holds it (the fire is left for that one).
        take_lease: Box<dyn Fn(&str) -> bool + Send>,
    },
    /// Replace a run.
    UpdateRun {
        id: String,
        number: u32,
        run: Box<ScheduleRun>,
    },
    /// End these runs as interrupted, those still running.
    Interrupt {
        runs: Vec<(String, i64)>,
        now: DateTime<Utc>,
    },
}

/// What a schedule write returns.
pub(super) enum ScheduleDone {
    /// Nothing to return.
    Done,
    /// The schedule after the write, if there is one.
    Record(Option<Box<ScheduleRecord>>),
    /// The fires claimed.
    Claimed(Vec<ClaimedFire>),
    /// The runs interrupted, with their schedules' ids.
    Interrupted(Vec<(String, ScheduleRun)>),
}

/// The columns [`record`] reads, from `schedules s`.
const COLUMNS: &str = "s.data, s.status, s.next_fire,
    (SELECT count(*) FROM schedule_runs r WHERE r.schedule_id = s.id),
    (SELECT r.data FROM schedule_runs r WHERE r.schedule_id = s.id
     ORDER BY r.number DESC LIMIT 1)";

/// The raw columns of a schedule row.
type RawRow = (String, String, Option<i64>, i64, Option<String>);

fn raw(row: &Row<'_>) -> rusqlite::Result<RawRow> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
    ))
}

fn record((data, status, next_fire, runs, last_run): RawRow) -> Result<ScheduleRecord, StoreError> {
    assemble(
        &data,
        parse_status(&status)?,
        next_fire.map(from_millis).transpose()?,
        u32::try_from(runs).unwrap_or(u32::MAX),
        last_run.as_deref().map(parse_run).transpose()?,
    )
}

/// One schedule.
pub(super) fn read_one(conn: &Connection, id: &str) -> Result<Option<ScheduleRecord>, ApplyError> {
    let sql = format!("SELECT {COLUMNS} FROM schedules s WHERE s.id = ?1");
    let found = conn.prepare_cached(&sql)?.query_row([id], raw).optional()?;
    Ok(found.map(record).transpose()?)
}

/// The schedules of a session, or every one's, deleted ones left out, newest first.
pub(super) fn read_list(
    conn: &Connection,
    session: Option<&str>,
) -> Result<Vec<ScheduleRecord>, ApplyError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM schedules s
         WHERE s.status <> 'deleted' AND (?1 IS NULL OR s.session_id = ?1)
         ORDER BY s.key DESC"
    );
    let rows = conn
        .prepare_cached(&sql)?
        .query_map([session], raw)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows
        .into_iter()
        .map(record)
        .collect::<Result<Vec<_>, _>>()?)
}

/// Removes a deleted session's schedules and their runs.
pub(super) fn delete_session(conn: &Connection, session: &str) -> Result<(), ApplyError> {
    conn.prepare_cached(
        "DELETE FROM schedule_runs WHERE schedule_id IN
            (SELECT id FROM schedules WHERE session_id = ?1)",
    )?
    .execute([session])?;
    conn.prepare_cached("DELETE FROM schedules WHERE session_id = ?1")?
        .execute([session])?;
    Ok(())
}

/// Applies a schedule write inside the writer's transaction.
pub(super) fn apply(conn: &Connection, op: &ScheduleOp) -> Result<ScheduleDone, ApplyError> {
    match op {
        ScheduleOp::Create { record, first_fire } => {
            let exists = conn
                .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
                .exists([&record.session_id])?;
            if !exists {
                return Err(StoreError::UnknownSession(record.session_id.clone()).into());
            }
            conn.prepare_cached(
                "INSERT INTO schedules (id, session_id, status, next_fire, data)
                 VALUES (?1, ?2, 'active', ?3, ?4)",
            )?
            .execute(params![
                record.id,
                record.session_id,
                to_millis(*first_fire),
                stored_json(record)?
            ])?;
            Ok(ScheduleDone::Done)
        }
        ScheduleOp::Delete { id } => {
            conn.prepare_cached(
                "UPDATE schedules SET status = 'deleted', next_fire = NULL WHERE id = ?1",
            )?
            .execute([id])?;
            Ok(ScheduleDone::Record(read_one(conn, id)?.map(Box::new)))
        }
        ScheduleOp::Claim {
            now,
            owner,
            grace,
            take_lease,
        } => claim(conn, *now, owner, *grace, take_lease.as_ref()),
        ScheduleOp::UpdateRun { id, number, run } => {
            let changed = conn
                .prepare_cached(
                    "UPDATE schedule_runs SET outcome = ?3, data = ?4, session_id = ?5
                     WHERE schedule_id = ?1 AND number = ?2",
                )?
                .execute(params![
                    id,
                    number,
                    run.outcome.as_str(),
                    run_json(run)?,
                    run.session_id
                ])?;
            if changed == 0 {
                return Err(
                    StoreError::Backend(format!("schedule `{id}` has no run {number}")).into(),
                );
            }
            Ok(ScheduleDone::Done)
        }
        ScheduleOp::Interrupt { runs, now } => {
            let mut ended = Vec::new();
            for (id, number) in runs {
                let data: Option<String> = conn
                    .prepare_cached(
                        "SELECT data FROM schedule_runs
                         WHERE schedule_id = ?1 AND number = ?2 AND outcome = 'running'",
                    )?
                    .query_row(params![id, number], |row| row.get(0))
                    .optional()?;
                let Some(data) = data else { continue };
                let run = interrupted(parse_run(&data)?, *now);
                conn.prepare_cached(
                    "UPDATE schedule_runs SET outcome = ?3, data = ?4
                     WHERE schedule_id = ?1 AND number = ?2",
                )?
                .execute(params![
                    id,
                    number,
                    run.outcome.as_str(),
                    run_json(&run)?
                ])?;
                ended.push((id.clone(), run));
            }
            Ok(ScheduleDone::Interrupted(ended))
        }
    }
}

fn claim(
    conn: &Connection,
    now: DateTime<Utc>,
    owner: &str,
    grace: Duration,
    take_lease: &dyn Fn(&str) -> bool,
) -> Result<ScheduleDone, ApplyError> {
    let due = conn
        .prepare_cached(
            "SELECT id, data, next_fire FROM schedules
             WHERE status = 'active' AND next_fire <= ?1 ORDER BY next_fire",
        )?
        .query_map([to_millis(now)], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut claimed = Vec::new();
    for (id, data, next_fire) in due {
        let stored = assemble(&data, ScheduleStatus::Active, None, 0, None)?;
        if stored.target == ScheduleTarget::ThisSession && !take_lease(&stored.session_id) {
            continue;
        }
        let decision = decide(&stored, from_millis(next_fire)?, now, grace);
        conn.prepare_cached("UPDATE schedules SET status = ?2, next_fire = ?3 WHERE id = ?1")?
            .execute(params![
                id,
                decision.status.as_str(),
                decision.next_fire.map(to_millis)
            ])?;
        let Some((fire_time, caught_up)) = decision.fire else {
            continue;
        };
        let run = claimed_run(&stored, fire_time, caught_up, now);
        let number: i64 = conn
            .prepare_cached(
                "INSERT INTO schedule_runs
                     (schedule_id, number, owner, session_id, claimed_at, outcome, data)
                 SELECT ?1, coalesce(max(number), 0) + 1, ?2, ?3, ?4, 'running', ?5
                 FROM schedule_runs WHERE schedule_id = ?1
                 RETURNING number",
            )?
            .query_row(
                params![id, owner, run.session_id, to_millis(now), run_json(&run)?],
                |row| row.get(0),
            )?;
        let schedule = read_one(conn, &id)?
            .ok_or_else(|| StoreError::Backend(format!("schedule `{id}` vanished")))?;
        claimed.push(ClaimedFire {
            schedule,
            run_number: u32::try_from(number).unwrap_or(u32::MAX),
            run,
        });
    }
    Ok(ScheduleDone::Claimed(claimed))
}

/// A running run another owner claimed before a time: (schedule, number, owner, session).
pub(super) type RunningRun = (String, i64, String, String);

/// The runs still running that another owner than `owner` claimed before `claimed_before`.
pub(super) fn running_runs(
    conn: &Connection,
    owner: &str,
    claimed_before: DateTime<Utc>,
) -> Result<Vec<RunningRun>, ApplyError> {
    Ok(conn
        .prepare_cached(
            "SELECT schedule_id, number, owner, session_id FROM schedule_runs
             WHERE outcome = 'running' AND owner <> ?1 AND claimed_at < ?2
             ORDER BY schedule_id, number",
        )?
        .query_map(params![owner, to_millis(claimed_before)], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?)
}
