//! The scheduler: the host claims the due fires of the store's schedules and runs each as a
//! turn no person watches.
//!
//! Every [`SchedulerSettings::tick`] the host claims what is due ([`EventStore::claim_due`],
//! atomic across processes sharing the store) and starts each run: in the schedule's session
//! (`this_session`: after its running turn, if one runs) or in a new session of the schedule's
//! agent (`new_session`). The creating session's log gets `schedule.fired` (with the session
//! and turn the run started) and then `schedule.finished` (its outcome). A fired turn is
//! unattended ([`SessionHandle::submit_unattended`]): its approvals and questions are refused
//! at once with a reason the model reads. It has a time budget
//! ([`SchedulerSettings::run_budget`]) besides the agent's step limit. Runs a stopped process
//! left running are ended as interrupted when a host starts watching, and every lease period
//! after.
//!
//! [`EventStore::claim_due`]: qilin_store::EventStore::claim_due

use super::{HostError, Placement, SessionHost, workspace_model};
use crate::{SessionHandle, SubmitError, TurnHandle};
use chrono::{DateTime, Utc};
use qilin_protocol::schedules::{
    RunOutcome, ScheduleFinishedEvent, ScheduleFiredEvent, ScheduleRecord, ScheduleRun,
    ScheduleTarget,
};
use qilin_protocol::{EventBody, FinishReason};
use qilin_store::schedules::ClaimedFire;
use qilin_store::schedules::time::format_time;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// What tells the scheduler the time: the system clock, or a test's.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The default time budget of a run: 30 minutes.
pub const DEFAULT_RUN_BUDGET: Duration = Duration::from_secs(30 * 60);

/// How the scheduler runs.
#[derive(Clone)]
pub struct SchedulerSettings {
    /// How often it looks for due fires (1 s by default).
    pub tick: Duration,
    /// How late a fire may be claimed before it counts as missed (one minute by default):
    /// missed fires follow the schedule's `catch_up`.
    pub grace: chrono::Duration,
    /// How long a run may take before it is interrupted, ending `out_of_budget`
    /// ([`DEFAULT_RUN_BUDGET`] by default).
    pub run_budget: Duration,
    /// The clock.
    pub clock: Arc<dyn Clock>,
}

impl Default for SchedulerSettings {
    fn default() -> Self {
        SchedulerSettings {
            tick: Duration::from_secs(1),
            grace: chrono::Duration::minutes(1),
            run_budget: DEFAULT_RUN_BUDGET,
            clock: Arc::new(SystemClock),
        }
    }
}

impl SessionHost {
    /// Claims the fires due now and starts a run for each; returns the runs' tasks, each ending
    /// with the run as it ended.
    pub async fn fire_due(
        &self,
        settings: &SchedulerSettings,
    ) -> Result<Vec<JoinHandle<ScheduleRun>>, HostError> {
        let now = settings.clock.now();
        let claimed = self
            .store()
            .claim_due(now, self.owner(), settings.grace)
            .await?;
        Ok(claimed
            .into_iter()
            .map(|fire| {
                let host = self.clone();
                let settings = settings.clone();
                tokio::spawn(async move { host.run_fire(fire, &settings).await })
            })
            .collect())
    }

    /// Ends as interrupted the runs a stopped process left running, recording
    /// `schedule.finished` for each; returns how many.
    pub async fn interrupt_abandoned_runs(
        &self,
        settings: &SchedulerSettings,
    ) -> Result<usize, HostError> {
        let now = settings.clock.now();
        let bound =
            now - chrono::Duration::from_std(self.timing().ttl).unwrap_or(chrono::Duration::zero());
        let ended = self
            .store()
            .interrupt_abandoned_runs(self.owner(), now, bound)
            .await?;
        let count = ended.len();
        for (schedule_id, run) in ended {
            if let Ok(Some(schedule)) = self.store().schedule(&schedule_id).await {
                let body = EventBody::ScheduleFinished(ScheduleFinishedEvent { schedule_id, run });
                self.record_schedule_event(&schedule.session_id, body).await;
            }
        }
        Ok(count)
    }

    /// Runs the scheduler until the host is dropped: first ends the runs a stopped process
    /// left, then claims and starts the due fires every tick (and looks for abandoned runs
    /// again every lease period).
    pub fn watch_schedules(&self, settings: SchedulerSettings) -> JoinHandle<()> {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut since_recovery = None::<std::time::Instant>;
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let host = SessionHost { inner };
                let due_recovery =
                    since_recovery.is_none_or(|since| since.elapsed() >= host.timing().ttl);
                if due_recovery {
                    since_recovery = Some(std::time::Instant::now());
                    if let Err(err) = host.interrupt_abandoned_runs(&settings).await {
                        tracing::warn!(error = %err, "ending the runs stopped servers left failed");
                    }
                }
                if let Err(err) = host.fire_due(&settings).await {
                    tracing::warn!(error = %err, "claiming the due schedules failed");
                }
                drop(host);
                tokio::time::sleep(settings.tick).await;
            }
        })
    }

    /// Runs one claimed fire to its end and records how it went.
    async fn run_fire(&self, fire: ClaimedFire, settings: &SchedulerSettings) -> ScheduleRun {
        let ClaimedFire {
            schedule,
            run_number,
            mut run,
        } = fire;
        let started = match self.start_run(&schedule).await {
            Ok(started) => started,
            Err((outcome, message)) => {
                run.outcome = outcome;
                run.message = Some(message);
                run.ended_at = Some(format_time(settings.clock.now()));
                self.save_run(&schedule, run_number, &run).await;
                let body = EventBody::ScheduleFinished(ScheduleFinishedEvent {
                    schedule_id: schedule.id.clone(),
                    run: run.clone(),
                });
                self.record_schedule_event(&schedule.session_id, body).await;
                return run;
            }
        };
        let (handle, turn) = started;
        run.session_id = handle.id().to_string();
        run.turn_id = Some(turn.turn_id().to_string());
        self.save_run(&schedule, run_number, &run).await;
        let fired = EventBody::ScheduleFired(ScheduleFiredEvent {
            schedule_id: schedule.id.clone(),
            run: run.clone(),
        });
        self.record_schedule_event(&schedule.session_id, fired)
            .await;
        let (outcome, message) = self.finish_run(&handle, turn, settings.run_budget).await;
        run.outcome = outcome;
        run.message = message;
        run.ended_at = Some(format_time(settings.clock.now()));
        self.save_run(&schedule, run_number, &run).await;
        let finished = EventBody::ScheduleFinished(ScheduleFinishedEvent {
            schedule_id: schedule.id.clone(),
            run: run.clone(),
        });
        self.record_schedule_event(&schedule.session_id, finished)
            .await;
        run
    }

    /// Starts the run's turn where the schedule says; on failure, how the run ends and why.
    async fn start_run(
        &self,
        schedule: &ScheduleRecord,
    ) -> Result<(SessionHandle, TurnHandle), (RunOutcome, String)> {
        let handle = match schedule.target {
            ScheduleTarget::ThisSession => match self.open(&schedule.session_id).await {
                Ok(Placement::Here(handle)) => handle,
                Ok(Placement::Elsewhere(owner)) => {
                    return Err((
                        RunOutcome::Skipped,
                        format!(
                            "the session runs in another server process (`{owner}`), which did not claim this fire"
                        ),
                    ));
                }
                Err(err) => return Err((RunOutcome::Failed, err.to_string())),
            },
            ScheduleTarget::NewSession => self
                .new_run_session(schedule)
                .await
                .map_err(|err| (RunOutcome::Failed, err.to_string()))?,
        };
        loop {
            match handle.submit_unattended(&schedule.prompt) {
                Ok(turn) => return Ok((handle, turn)),
                // A turn runs (a person's, or the goal's): the run starts after it.
                Err(SubmitError::Busy { .. } | SubmitError::Compacting) => {
                    handle.wait_idle().await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(err) => return Err((RunOutcome::Failed, err.to_string())),
            }
        }
    }

    /// A new session for a `new_session` run: the schedule's agent (else the creating
    /// session's), in the creating session's workspace, with its model; hosted here.
    async fn new_run_session(&self, schedule: &ScheduleRecord) -> Result<SessionHandle, HostError> {
        let Some(origin) = self.store().session(&schedule.session_id).await? else {
            return Err(HostError::UnknownSession(schedule.session_id.clone()));
        };
        let workspace = Path::new(&origin.workspace);
        let builder = self.runtime().session(workspace);
        let builder = match (&schedule.agent, &origin.agent_file) {
            (Some(agent), _) if agent.ends_with(".agent") || agent.contains('/') => {
                builder.agent_file(workspace.join(agent))
            }
            (Some(agent), _) => builder.builtin_agent(agent.clone()),
            (None, Some(file)) => builder.agent_file(file.clone()),
            (None, None) => builder.builtin_agent(origin.agent.clone()),
        };
        let builder = builder.model(workspace_model(workspace, &origin.model));
        let builder = (self.inner.prepare_resume)(builder).attended(false);
        let handle = self.create(builder).await?;
        let title = format!(
            "Scheduled: {}",
            qilin_store::title_from_prompt(&schedule.prompt)
        );
        self.store().rename_session(handle.id(), &title).await?;
        Ok(handle)
    }

    /// Waits for the run's turn within `budget` (interrupting it past that); says how the run
    /// ended and why.
    async fn finish_run(
        &self,
        handle: &SessionHandle,
        turn: TurnHandle,
        budget: Duration,
    ) -> (RunOutcome, Option<String>) {
        let mut finished = Box::pin(turn.finished());
        let summary = match tokio::time::timeout(budget, &mut finished).await {
            Ok(summary) => summary,
            Err(_) => {
                handle.interrupt();
                finished.await;
                return (
                    RunOutcome::OutOfBudget,
                    Some(format!(
                        "the run took longer than its budget of {} s and was interrupted",
                        budget.as_secs()
                    )),
                );
            }
        };
        match summary.reason {
            FinishReason::Completed => (RunOutcome::Completed, None),
            FinishReason::MaxSteps => (
                RunOutcome::OutOfBudget,
                Some("the turn reached the agent's step limit".to_string()),
            ),
            FinishReason::Interrupted => (
                RunOutcome::Interrupted,
                Some("the turn was interrupted".to_string()),
            ),
            FinishReason::MaxTokens | FinishReason::Refused | FinishReason::Error => (
                RunOutcome::Failed,
                Some(
                    summary
                        .error
                        .unwrap_or_else(|| format!("the turn ended: {:?}", summary.reason)),
                ),
            ),
        }
    }

    /// Stores a run; a failure is logged (the run's events still tell it).
    async fn save_run(&self, schedule: &ScheduleRecord, run_number: u32, run: &ScheduleRun) {
        if let Err(err) = self.store().update_run(&schedule.id, run_number, run).await {
            tracing::warn!(schedule = %schedule.id, error = %err, "recording a schedule run failed");
        }
    }

    /// Records a schedule event `body` in session `id`'s log, resuming the session here if it
    /// runs nowhere; a session another process runs does not get it (the store's rows still
    /// tell it).
    pub async fn record_schedule_event(&self, id: &str, body: EventBody) {
        match self.open(id).await {
            Ok(Placement::Here(handle)) => handle.deliver(body),
            Ok(Placement::Elsewhere(owner)) => {
                tracing::info!(session = id, owner = %owner, "a schedule event was not recorded: the session runs in another process");
            }
            Err(err) => {
                tracing::warn!(session = id, error = %err, "a schedule event was not recorded");
            }
        }
    }
}
