//! [`ScheduleTable`]: schedules and runs in memory, for [`MemoryStore`](crate::MemoryStore);
//! one mutex makes each claim atomic.

use super::{ClaimedFire, claimed_run, decide, interrupted};
use crate::StoreError;
use chrono::{DateTime, Duration, Utc};
use parking_lot::Mutex;
use qilin_protocol::schedules::{
    RunOutcome, ScheduleRecord, ScheduleRun, ScheduleStatus, ScheduleTarget,
};

/// One schedule in memory.
struct Row {
    /// The record as created (status, runs and fires kept beside it).
    record: ScheduleRecord,
    status: ScheduleStatus,
    next_fire: Option<DateTime<Utc>>,
    /// Each run with the owner that claimed it.
    runs: Vec<(String, ScheduleRun)>,
}

impl Row {
    fn view(&self) -> Result<ScheduleRecord, StoreError> {
        super::assemble(
            &super::stored_json(&self.record)?,
            self.status,
            self.next_fire,
            u32::try_from(self.runs.len()).unwrap_or(u32::MAX),
            self.runs.last().map(|(_, run)| run.clone()),
        )
    }
}

/// Every schedule, in creation order.
#[derive(Default)]
pub(crate) struct ScheduleTable {
    rows: Mutex<Vec<Row>>,
}

impl ScheduleTable {
    fn rows(&self) -> parking_lot::MutexGuard<'_, Vec<Row>> {
        self.rows.lock()
    }

    pub(crate) fn create(
        &self,
        schedule: &ScheduleRecord,
        first_fire: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut rows = self.rows();
        if rows.iter().any(|row| row.record.id == schedule.id) {
            return Err(StoreError::Backend(format!(
                "a schedule `{}` exists already",
                schedule.id
            )));
        }
        rows.push(Row {
            record: schedule.clone(),
            status: ScheduleStatus::Active,
            next_fire: Some(first_fire),
            runs: Vec::new(),
        });
        Ok(())
    }

    pub(crate) fn get(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError> {
        self.rows()
            .iter()
            .find(|row| row.record.id == id)
            .map(Row::view)
            .transpose()
    }

    pub(crate) fn list(&self, session: Option<&str>) -> Result<Vec<ScheduleRecord>, StoreError> {
        self.rows()
            .iter()
            .rev()
            .filter(|row| row.status != ScheduleStatus::Deleted)
            .filter(|row| session.is_none_or(|session| row.record.session_id == session))
            .map(Row::view)
            .collect()
    }

    pub(crate) fn delete(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError> {
        let mut rows = self.rows();
        let Some(row) = rows.iter_mut().find(|row| row.record.id == id) else {
            return Ok(None);
        };
        row.status = ScheduleStatus::Deleted;
        row.next_fire = None;
        row.view().map(Some)
    }

    /// Forgets a deleted session's schedules.
    pub(crate) fn forget_session(&self, session: &str) {
        self.rows().retain(|row| row.record.session_id != session);
    }

    pub(crate) fn claim(
        &self,
        now: DateTime<Utc>,
        owner: &str,
        grace: Duration,
        take_lease: impl Fn(&str) -> bool,
    ) -> Result<Vec<ClaimedFire>, StoreError> {
        let mut claimed = Vec::new();
        for row in self.rows().iter_mut() {
            let due = match (row.status, row.next_fire) {
                (ScheduleStatus::Active, Some(due)) if due <= now => due,
                _ => continue,
            };
            if row.record.target == ScheduleTarget::ThisSession
                && !take_lease(&row.record.session_id)
            {
                continue;
            }
            let decision = decide(&row.record, due, now, grace);
            row.status = decision.status;
            row.next_fire = decision.next_fire;
            if let Some((fire_time, caught_up)) = decision.fire {
                let run = claimed_run(&row.record, fire_time, caught_up, now);
                row.runs.push((owner.to_string(), run.clone()));
                claimed.push(ClaimedFire {
                    schedule: row.view()?,
                    run_number: u32::try_from(row.runs.len()).unwrap_or(u32::MAX),
                    run,
                });
            }
        }
        Ok(claimed)
    }

    pub(crate) fn update_run(
        &self,
        id: &str,
        run_number: u32,
        run: &ScheduleRun,
    ) -> Result<(), StoreError> {
        let mut rows = self.rows();
        let slot = rows
            .iter_mut()
            .find(|row| row.record.id == id)
            .and_then(|row| {
                let index = usize::try_from(run_number).ok()?.checked_sub(1)?;
                row.runs.get_mut(index)
            })
            .ok_or_else(|| {
                StoreError::Backend(format!("schedule `{id}` has no run {run_number}"))
            })?;
        slot.1 = run.clone();
        Ok(())
    }

    pub(crate) fn interrupt_abandoned(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        claimed_before: DateTime<Utc>,
        holds: impl Fn(&str, &str) -> bool,
    ) -> Vec<(String, ScheduleRun)> {
        let mut ended = Vec::new();
        for row in self.rows().iter_mut() {
            for (holder, run) in row.runs.iter_mut() {
                let claimed_early = super::time::parse_time("startedAt", &run.started_at)
                    .is_ok_and(|started| started < claimed_before);
                if holder != owner
                    && run.outcome == RunOutcome::Running
                    && claimed_early
                    && !holds(&run.session_id, holder)
                {
                    *run = interrupted(run.clone(), now);
                    ended.push((row.record.id.clone(), run.clone()));
                }
            }
        }
        ended
    }
}
