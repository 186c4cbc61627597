//! Schedules and their runs in PostgreSQL. A claim locks the due rows with
//! `FOR UPDATE SKIP LOCKED`: a second process claiming at the same moment passes over the rows
//! the first holds, and finds them no longer due once it commits. A `this_session` schedule
//! whose session another process holds is not even locked, so its owner's claim never finds
//! it taken.

use super::{PostgresStore, connection, pg_error};
use crate::StoreError;
use crate::schedules::{
    ClaimedFire, assemble, claimed_run, decide, from_millis, interrupted, parse_run, parse_status,
    run_json, stored_json, to_millis,
};
use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::GenericClient;
use qilin_protocol::schedules::{ScheduleRecord, ScheduleRun, ScheduleStatus, ScheduleTarget};
use tokio_postgres::Row;

/// The columns [`record`] reads, from `schedules s`.
const COLUMNS: &str = "s.data, s.status, s.next_fire,
    (SELECT count(*) FROM schedule_runs r WHERE r.schedule_id = s.id),
    (SELECT r.data FROM schedule_runs r WHERE r.schedule_id = s.id
     ORDER BY r.number DESC LIMIT 1)";

/// A schedule from a row of [`COLUMNS`].
fn record(row: &Row, context: &str) -> Result<ScheduleRecord, StoreError> {
    let error = |err: tokio_postgres::Error| pg_error(&err, context);
    let data: String = row.try_get(0).map_err(error)?;
    let status: String = row.try_get(1).map_err(error)?;
    let next_fire: Option<i64> = row.try_get(2).map_err(error)?;
    let runs: i64 = row.try_get(3).map_err(error)?;
    let last_run: Option<String> = row.try_get(4).map_err(error)?;
    assemble(
        &data,
        parse_status(&status)?,
        next_fire.map(from_millis).transpose()?,
        u32::try_from(runs).unwrap_or(u32::MAX),
        last_run.as_deref().map(parse_run).transpose()?,
    )
}

/// One schedule, through any client (a transaction too).
async fn fetch(
    client: &impl GenericClient,
    id: &str,
    context: &str,
) -> Result<Option<ScheduleRecord>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM schedules s WHERE s.id = $1");
    client
        .query_opt(&sql, &[&id])
        .await
        .map_err(|err| pg_error(&err, context))?
        .map(|row| record(&row, context))
        .transpose()
}

/// Takes the lease of `session` for `owner` inside a claim's transaction: false when another
/// process holds it. A claim takes the session rows it needs in the order of their ids, so two
/// claims never wait on each other in a circle.
async fn take_lease(
    tx: &impl GenericClient,
    session: &str,
    owner: &str,
    lease_ms: i64,
) -> Result<bool, tokio_postgres::Error> {
    let taken = tx
        .execute(
            "UPDATE sessions
             SET lease_owner = $2,
                 lease_expires = clock_timestamp() + $3::bigint * interval '1 millisecond'
             WHERE id = $1
               AND (lease_owner IS NULL OR lease_owner = $2
                    OR lease_expires <= clock_timestamp())",
            &[&session, &owner, &lease_ms],
        )
        .await?;
    Ok(taken > 0)
}

impl PostgresStore {
    pub(super) async fn create_schedule_row(
        &self,
        schedule: &ScheduleRecord,
        first_fire: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        let data = stored_json(schedule)?;
        let inserted = client
            .execute(
                "INSERT INTO schedules (id, session_id, status, next_fire, data)
                 SELECT $1, $2, 'active', $3, $4 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $2)",
                &[&schedule.id, &schedule.session_id, &to_millis(first_fire), &data],
            )
            .await
            .map_err(|err| pg_error(&err, &context))?;
        if inserted == 0 {
            return Err(StoreError::UnknownSession(schedule.session_id.clone()));
        }
        Ok(())
    }

    pub(super) async fn schedule_row(
        &self,
        id: &str,
    ) -> Result<Option<ScheduleRecord>, StoreError> {
        let client = connection(&self.pool, &self.schema).await?;
        fetch(&client, id, &self.context()).await
    }

    pub(super) async fn schedule_rows(
        &self,
        session: Option<&str>,
    ) -> Result<Vec<ScheduleRecord>, StoreError> {
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        let sql = format!(
            "SELECT {COLUMNS} FROM schedules s
             WHERE s.status <> 'deleted' AND ($1::text IS NULL OR s.session_id = $1)
             ORDER BY s.created_seq DESC"
        );
        let rows = client
            .query(&sql, &[&session])
            .await
            .map_err(|err| pg_error(&err, &context))?;
        rows.iter().map(|row| record(row, &context)).collect()
    }

    pub(super) async fn delete_schedule_row(
        &self,
        id: &str,
    ) -> Result<Option<ScheduleRecord>, StoreError> {
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        client
            .execute(
                "UPDATE schedules SET status = 'deleted', next_fire = NULL WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(|err| pg_error(&err, &context))?;
        fetch(&client, id, &context).await
    }

    pub(super) async fn claim_due_rows(
        &self,
        now: DateTime<Utc>,
        owner: &str,
        grace: Duration,
        lease: std::time::Duration,
    ) -> Result<Vec<ClaimedFire>, StoreError> {
        let context = self.context();
        let error = |err: tokio_postgres::Error| pg_error(&err, &context);
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
        let mut client = connection(&self.pool, &self.schema).await?;
        let tx = client.transaction().await.map_err(error)?;
        let due = tx
            .query(
                "SELECT s.id, s.data, s.next_fire FROM schedules s
                 WHERE s.status = 'active' AND s.next_fire <= $1
                   AND (s.data::jsonb ->> 'target' = 'new_session'
                        OR NOT EXISTS (
                            SELECT 1 FROM sessions x
                            WHERE x.id = s.session_id AND x.lease_owner <> $2
                              AND x.lease_expires > clock_timestamp()))
                 ORDER BY s.session_id, s.next_fire
                 FOR UPDATE OF s SKIP LOCKED",
                &[&to_millis(now), &owner],
            )
            .await
            .map_err(error)?;
        let mut claimed = Vec::new();
        for row in &due {
            let id: String = row.try_get(0).map_err(error)?;
            let data: String = row.try_get(1).map_err(error)?;
            let next_fire: i64 = row.try_get(2).map_err(error)?;
            let stored = assemble(&data, ScheduleStatus::Active, None, 0, None)?;
            if stored.target == ScheduleTarget::ThisSession
                && !take_lease(&tx, &stored.session_id, owner, lease_ms)
                    .await
                    .map_err(error)?
            {
                continue;
            }
            let decision = decide(&stored, from_millis(next_fire)?, now, grace);
            tx.execute(
                "UPDATE schedules SET status = $2, next_fire = $3 WHERE id = $1",
                &[
                    &id,
                    &decision.status.as_str(),
                    &decision.next_fire.map(to_millis),
                ],
            )
            .await
            .map_err(error)?;
            let Some((fire_time, caught_up)) = decision.fire else {
                continue;
            };
            let run = claimed_run(&stored, fire_time, caught_up, now);
            let number: i64 = tx
                .query_one(
                    "INSERT INTO schedule_runs
                         (schedule_id, number, owner, session_id, claimed_at, outcome, data)
                     SELECT $1, coalesce(max(number), 0) + 1, $2, $3, $4, 'running', $5
                     FROM schedule_runs WHERE schedule_id = $1
                     RETURNING number",
                    &[
                        &id,
                        &owner,
                        &run.session_id,
                        &to_millis(now),
                        &run_json(&run)?,
                    ],
                )
                .await
                .map_err(error)?
                .try_get(0)
                .map_err(error)?;
            let schedule = fetch(&tx, &id, &context)
                .await?
                .ok_or_else(|| StoreError::Backend(format!("schedule `{id}` vanished")))?;
            claimed.push(ClaimedFire {
                schedule,
                run_number: u32::try_from(number).unwrap_or(u32::MAX),
                run,
            });
        }
        tx.commit().await.map_err(error)?;
        Ok(claimed)
    }

    pub(super) async fn update_run_row(
        &self,
        id: &str,
        run_number: u32,
        run: &ScheduleRun,
    ) -> Result<(), StoreError> {
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        let changed = client
            .execute(
                "UPDATE schedule_runs SET outcome = $3, data = $4, session_id = $5
                 WHERE schedule_id = $1 AND number = $2",
                &[
                    &id,
                    &i64::from(run_number),
                    &run.outcome.as_str(),
                    &run_json(run)?,
                    &run.session_id,
                ],
            )
            .await
            .map_err(|err| pg_error(&err, &context))?;
        if changed == 0 {
            return Err(StoreError::Backend(format!(
                "schedule `{id}` has no run {run_number}"
            )));
        }
        Ok(())
    }

    pub(super) async fn interrupt_abandoned_rows(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        claimed_before: DateTime<Utc>,
    ) -> Result<Vec<(String, ScheduleRun)>, StoreError> {
        let context = self.context();
        let error = |err: tokio_postgres::Error| pg_error(&err, &context);
        let mut client = connection(&self.pool, &self.schema).await?;
        let tx = client.transaction().await.map_err(error)?;
        let rows = tx
            .query(
                "SELECT r.schedule_id, r.number, r.data FROM schedule_runs r
                 WHERE r.outcome = 'running' AND r.owner <> $1 AND r.claimed_at < $2
                   AND NOT EXISTS (
                       SELECT 1 FROM sessions s
                       WHERE s.id = r.session_id AND s.lease_owner = r.owner
                         AND s.lease_expires > clock_timestamp())
                 ORDER BY r.schedule_id, r.number
                 FOR UPDATE OF r SKIP LOCKED",
                &[&owner, &to_millis(claimed_before)],
            )
            .await
            .map_err(error)?;
        let mut ended = Vec::new();
        for row in &rows {
            let id: String = row.try_get(0).map_err(error)?;
            let number: i64 = row.try_get(1).map_err(error)?;
            let data: String = row.try_get(2).map_err(error)?;
            let run = interrupted(parse_run(&data)?, now);
            tx.execute(
                "UPDATE schedule_runs SET outcome = $3, data = $4
                 WHERE schedule_id = $1 AND number = $2",
                &[&id, &number, &run.outcome.as_str(), &run_json(&run)?],
            )
            .await
            .map_err(error)?;
            ended.push((id, run));
        }
        tx.commit().await.map_err(error)?;
        Ok(ended)
    }
}
