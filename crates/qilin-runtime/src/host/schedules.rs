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
use crate::{AgentSource, RuntimeError, SessionHandle, SubmitError, TurnHandle, find_agent};
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use qilin_protocol::schedules::{
    RunOutcome, ScheduleFinishedEvent, ScheduleFiredEvent, ScheduleRecord, ScheduleRun,
    ScheduleTarget,
};
use qilin_protocol::{EventBody, FinishReason};
use qilin_schedules::{AgentCheck, ScheduleService};
use qilin_store::EventStore;
use qilin_store::schedules::ClaimedFire;
use qilin_store::schedules::time::format_time;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// The prefix of a relayed command asking the process that runs a session to record an event
/// (its JSON follows) in the session's log.
pub(super) const RECORD_EVENT: &str = "qilin-host:record-event:";

/// The outcome of a relayed [`RECORD_EVENT`] that was recorded.
const RECORDED: &str = "recorded";

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

/// The default token budget of a run: 500,000 tokens (input and output of every step).
pub const DEFAULT_RUN_TOKENS: u64 = 500_000;

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
    /// How many tokens a run may spend, input and output of its steps together, before it is
    /// interrupted, ending `out_of_budget` ([`DEFAULT_RUN_TOKENS`] by default).
    pub run_tokens: u64,
    /// The clock.
    pub clock: Arc<dyn Clock>,
}

impl Default for SchedulerSettings {
    fn default() -> Self {
        SchedulerSettings {
            tick: Duration::from_secs(1),
            grace: chrono::Duration::minutes(1),
            run_budget: DEFAULT_RUN_BUDGET,
            run_tokens: DEFAULT_RUN_TOKENS,
            clock: Arc::new(SystemClock),
        }
    }
}

/// Where the agent a schedule names is, for its `new_session` runs: a path (with a `/`, or
/// ending `.agent`) is an agent file relative to `workspace`; a name is found as the `agent`
/// tool finds it ([`find_agent`]). An error says what is wrong and which agents exist.
pub fn schedule_agent(workspace: &Path, name: &str) -> Result<AgentSource, String> {
    if name.ends_with(".agent") || name.contains('/') {
        let path = workspace.join(name);
        return match path.is_file() {
            true => Ok(AgentSource::File(path)),
            false => Err(format!(
                "no agent file `{name}` in the workspace ({} does not exist): name an agent \
                 file relative to the workspace, or an agent by name",
                path.display()
            )),
        };
    }
    find_agent(workspace, name)
}

/// The schedules of session `session_id` of `workspace` in `store`, as the tools, the server
/// and the terminal reach them: an agent a schedule names is checked with [`schedule_agent`].
pub fn schedule_service(
    store: Arc<dyn EventStore>,
    session_id: &str,
    workspace: &Path,
) -> ScheduleService {
    let workspace = workspace.to_path_buf();
    let check: AgentCheck = Arc::new(move |name| schedule_agent(&workspace, name).map(|_| ()));
    ScheduleService::new(store, session_id, check)
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
            .claim_due(now, self.owner(), settings.grace, self.timing().ttl)
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
        let (handle, turn, after) = started;
        run.session_id = handle.id().to_string();
        run.turn_id = Some(turn.turn_id().to_string());
        self.save_run(&schedule, run_number, &run).await;
        let fired = EventBody::ScheduleFired(ScheduleFiredEvent {
            schedule_id: schedule.id.clone(),
            run: run.clone(),
        });
        self.record_schedule_event(&schedule.session_id, fired)
            .await;
        let (outcome, message) = finish_run(&handle, turn, after, settings).await;
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

    /// Starts the run's turn where the schedule says, giving the session, the turn and the
    /// session's head before it; on failure, how the run ends and why.
    async fn start_run(
        &self,
        schedule: &ScheduleRecord,
    ) -> Result<(SessionHandle, TurnHandle, u64), (RunOutcome, String)> {
        let handle = match schedule.target {
            ScheduleTarget::ThisSession => match self.open(&schedule.session_id).await {
                Ok(Placement::Here(handle)) => handle,
                // The claim took the session's lease; another process took it since (this
                // one stalled past the lease's time).
                Ok(Placement::Elsewhere(owner)) => {
                    return Err((
                        RunOutcome::Skipped,
                        format!(
                            "the session's lease passed to another server process (`{owner}`) between the claim of this fire and its start"
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
            let head = handle.committed_head();
            match handle.submit_unattended(&schedule.prompt) {
                Ok(turn) => return Ok((handle, turn, head)),
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
            (Some(agent), _) => builder.agent_source(
                schedule_agent(workspace, agent)
                    .map_err(|err| HostError::Runtime(RuntimeError::Model(err)))?,
            ),
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

    /// Stores a run; a failure is logged (the run's events still tell it).
    async fn save_run(&self, schedule: &ScheduleRecord, run_number: u32, run: &ScheduleRun) {
        if let Err(err) = self.store().update_run(&schedule.id, run_number, run).await {
            tracing::warn!(schedule = %schedule.id, error = %err, "recording a schedule run failed");
        }
    }

    /// Records a schedule event `body` in session `id`'s log: here when the session runs here
    /// (resumed here if it runs nowhere), else through the relay in the process that runs it.
    /// When that process stops before taking it, the session's lease runs out and the next
    /// try resumes the session here. What cannot be recorded is logged (the store's rows
    /// still tell it).
    pub async fn record_schedule_event(&self, id: &str, body: EventBody) {
        let text = match serde_json::to_string(&body) {
            Ok(text) => text,
            Err(err) => {
                tracing::warn!(session = id, error = %err, "a schedule event cannot be written");
                return;
            }
        };
        let attempts = 3;
        for attempt in 1..=attempts {
            let failure = match self.open(id).await {
                Ok(Placement::Here(handle)) => {
                    handle.deliver(body);
                    return;
                }
                Ok(Placement::Elsewhere(owner)) => {
                    let command = format!("{RECORD_EVENT}{text}");
                    match self.forward(&owner, id, &command).await {
                        Ok(outcome) if outcome == RECORDED => return,
                        Ok(outcome) => outcome,
                        Err(err) => err.to_string(),
                    }
                }
                Err(err) => err.to_string(),
            };
            if attempt == attempts {
                tracing::warn!(session = id, error = %failure, "a schedule event was not recorded");
                return;
            }
            tokio::time::sleep(self.timing().ttl / 2).await;
        }
    }

    /// Records in session `id`'s log the event `body` (JSON) another process relayed here;
    /// says how it went ([`RECORDED`], or why not).
    pub(super) async fn record_relayed_event(&self, id: &str, body: &str) -> String {
        let body = match serde_json::from_str::<EventBody>(body) {
            Ok(body) => body,
            Err(err) => return format!("not recorded: the relayed event is unreadable: {err}"),
        };
        match self.open(id).await {
            Ok(Placement::Here(handle)) => {
                handle.deliver(body);
                RECORDED.to_string()
            }
            Ok(Placement::Elsewhere(owner)) => {
                format!("not recorded: the session runs in another process (`{owner}`)")
            }
            Err(err) => format!("not recorded: {err}"),
        }
    }
}

/// Waits for the run's turn within its budgets — time, and tokens spent by its steps (counted
/// from the session's events after `after`) — interrupting it past either; says how the run
/// ended and why.
async fn finish_run(
    handle: &SessionHandle,
    turn: TurnHandle,
    after: u64,
    settings: &SchedulerSettings,
) -> (RunOutcome, Option<String>) {
    let budget = settings.run_budget;
    let tokens = settings.run_tokens;
    let over_tokens = tokens_over(handle, after, turn.turn_id().to_string(), tokens);
    let mut finished = Box::pin(turn.finished());
    let cut = tokio::select! {
        summary = &mut finished => {
            let spent = summary.usage.input_tokens + summary.usage.output_tokens;
            if spent > tokens {
                return (RunOutcome::OutOfBudget, Some(tokens_message(spent, tokens)));
            }
            return classify(summary);
        }
        () = tokio::time::sleep(budget) => format!(
            "the run took longer than its budget of {} s and was interrupted",
            budget.as_secs()
        ),
        spent = over_tokens => tokens_message(spent, tokens),
    };
    handle.interrupt();
    finished.await;
    (RunOutcome::OutOfBudget, Some(cut))
}

/// Resolves, with the tokens spent, once the steps of turn `turn_id` (in the session's events
/// after `after`) have spent more than `budget`; never otherwise.
async fn tokens_over(handle: &SessionHandle, after: u64, turn_id: String, budget: u64) -> u64 {
    let mut events = handle.subscribe_from(after);
    let mut spent = 0u64;
    while let Some(event) = events.next().await {
        let Ok(event) = event else { break };
        if let EventBody::StepFinished {
            turn_id: step_turn,
            usage,
            ..
        } = &event.body
            && *step_turn == turn_id
        {
            spent += usage.input_tokens + usage.output_tokens;
            if spent > budget {
                return spent;
            }
        }
    }
    std::future::pending().await
}

/// Why a run over its token budget ended.
fn tokens_message(spent: u64, budget: u64) -> String {
    format!(
        "the run spent {spent} tokens, more than its budget of {budget} tokens, and was stopped"
    )
}

/// How a run whose turn ended within its budgets ended, and why.
fn classify(summary: qilin_agent::TurnSummary) -> (RunOutcome, Option<String>) {
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
