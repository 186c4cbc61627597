//! A session's loops, as the runtime runs them — the runtime's side of `qilin_loops::Loops`.
//!
//! Each loop is a task of the starting session's process: an iteration builds a fresh child
//! session of the session's own agent (linked to the session and the `loop_start` call,
//! unattended), runs the loop's prompt as its one turn, then runs the loop's checks with the
//! starting session's check service, compares the workspace with how the iteration found it,
//! and records the report (`loop.iteration`). [`qilin_loops::outcome_of`] decides whether the
//! next iteration starts. The loop's state is only its events in the starting session's log:
//! a resumed session folds them back ([`LoopRunner::restore`]), records the iteration its last
//! process left running as `interrupted`, and goes on with the next one.
//!
//! A loop with `fresh_context: false` builds one child session, the same way, for all its
//! iterations: each iteration is that session's next turn, and before each one after the first
//! the session is compacted ([`SessionHandle::compact`]), so the turn starts from a summary of
//! the iterations before it. The session stays open between iterations and is closed when the
//! loop ends or its process stops; a resumed loop takes it back from the store (the session
//! its last iteration names) and goes on in it.

use crate::children::Children;
use crate::session::WeakSession;
use crate::{CompactError, SessionHandle};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use parking_lot::{Mutex, MutexGuard};
use qilin_checks::CheckService;
use qilin_loops::{Ending, Loops, Next, WorkspaceState, changes_between, outcome_of};
use qilin_protocol::loops::{
    IterationCheck, IterationStatus, LoopFinishedEvent, LoopIteration, LoopIterationEvent,
    LoopRecord, LoopStartedEvent, LoopStatus, LoopStopReason, StartLoop,
};
use qilin_protocol::{Event, EventBody, FinishReason, Usage};
use qilin_tool::{Executor, Session, ToolError, ToolResult, now};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// What the outcome of an iteration the last process left running says.
const RESTART_OUTCOME: &str =
    "interrupted: the process running the loop stopped during this iteration; the next one starts";

/// What a loop needs of its session, known once the session is built.
pub(crate) struct LoopSetup {
    /// The starting session (weak: the session holds this service).
    pub(crate) session: Weak<Session>,
    /// The starting session's handle (weak: the session holds this service); the checks run
    /// with its executor, its sandbox and services.
    pub(crate) handle: Option<WeakSession>,
    /// The session's children, which build each iteration's session.
    pub(crate) children: Arc<Children>,
    pub(crate) workspace: PathBuf,
}

/// One loop whose task runs in this process.
struct Running {
    /// Cancelled to stop the loop; the text says by whom.
    stop: CancellationToken,
    stopped_by: Option<String>,
    /// Becomes true once the loop recorded its end (or its task ended otherwise).
    done: watch::Receiver<bool>,
}

#[derive(Default)]
struct State {
    loops: Vec<LoopRecord>,
    running: HashMap<String, Running>,
    /// The `loop_start` call of each loop a call started, by loop id.
    calls: HashMap<String, String>,
    /// The session is closing: no iteration starts.
    closing: bool,
}

/// The loops of one session.
pub(crate) struct LoopRunner {
    me: Weak<LoopRunner>,
    /// The session is a child (an iteration, a subagent): it starts no loop.
    child: bool,
    setup: OnceLock<LoopSetup>,
    state: Mutex<State>,
}

impl LoopSetup {
    /// The starting session's executor, while the session lives.
    fn executor(&self) -> Option<Executor> {
        self.handle
            .as_ref()
            .and_then(WeakSession::upgrade)
            .map(|handle| handle.executor())
    }

    /// The ids of the checks the starting session declares.
    fn declared_checks(&self) -> Vec<String> {
        self.session
            .upgrade()
            .and_then(|session| session.services().get::<CheckService>())
            .map(|service| service.ids())
            .unwrap_or_default()
    }
}

impl LoopRunner {
    /// The loops `events` (a stored log) record; `child` for a child session, which starts
    /// none.
    pub(crate) fn from_events(events: &[Event], child: bool) -> Arc<Self> {
        Arc::new_cyclic(|me| LoopRunner {
            me: me.clone(),
            child,
            setup: OnceLock::new(),
            state: Mutex::new(State {
                loops: qilin_loops::fold_loops(events),
                calls: start_calls(events),
                ..State::default()
            }),
        })
    }

    /// Connects the runner to its session.
    pub(crate) fn set_up(&self, setup: LoopSetup) {
        let _ = self.setup.set(setup);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Records `body` in the session's log (nothing once the session is gone).
    fn emit(&self, body: EventBody) {
        if let Some(session) = self.setup.get().and_then(|setup| setup.session.upgrade()) {
            session.events().emit(body);
        }
    }

    /// Goes on with the loops a stopped process left running: the iteration it left running
    /// is recorded `interrupted`, and each loop continues with its next iteration.
    pub(crate) fn restore(&self) {
        let unfinished: Vec<String> = {
            let mut state = self.state();
            let mut ids = Vec::new();
            let mut ended = Vec::new();
            for record in &mut state.loops {
                if record.status != LoopStatus::Running {
                    continue;
                }
                if let Some(last) = record
                    .iterations
                    .last_mut()
                    .filter(|last| last.status == IterationStatus::Running)
                {
                    let time = now();
                    last.status = IterationStatus::Interrupted;
                    last.duration_ms = Some(elapsed_between(&last.started_at, &time));
                    last.ended_at = Some(time);
                    last.outcome = Some(RESTART_OUTCOME.to_string());
                    ended.push(LoopIterationEvent {
                        loop_id: record.loop_id.clone(),
                        iteration: last.clone(),
                    });
                }
                ids.push(record.loop_id.clone());
            }
            drop(state);
            for event in ended {
                self.emit(EventBody::LoopIteration(event));
            }
            ids
        };
        for id in unfinished {
            self.spawn(id);
        }
    }

    /// The session is closing: running iterations are interrupted and no other starts; the
    /// loops stay running in the log, so the session's next process goes on with them.
    pub(crate) fn closing(&self) {
        let mut state = self.state();
        state.closing = true;
        for running in state.running.values() {
            running.stop.cancel();
        }
    }

    /// Resolves once the task of every loop running in this process has ended — after
    /// [`LoopRunner::closing`], once each has interrupted its iteration and closed the child
    /// sessions it held, so a next process may take them back.
    pub(crate) async fn closed(&self) {
        let tasks: Vec<watch::Receiver<bool>> = self
            .state()
            .running
            .values()
            .map(|running| running.done.clone())
            .collect();
        for mut done in tasks {
            let _ = done.wait_for(|done| *done).await;
        }
    }

    /// Starts the task running loop `id`.
    fn spawn(&self, id: String) {
        let (done_tx, done) = watch::channel(false);
        let stop = CancellationToken::new();
        self.state().running.insert(
            id.clone(),
            Running {
                stop: stop.clone(),
                stopped_by: None,
                done,
            },
        );
        let runner = self.me.clone();
        tokio::spawn(async move {
            if let Some(runner) = runner.upgrade() {
                runner.run(&id, stop).await;
                runner.state().running.remove(&id);
            }
            let _ = done_tx.send(true);
        });
    }

    /// The loop `id` as it stands.
    fn record(&self, id: &str) -> Option<LoopRecord> {
        self.state()
            .loops
            .iter()
            .find(|record| record.loop_id == id)
            .cloned()
    }

    /// Changes loop `id` with `change`, returning it as changed.
    fn change(&self, id: &str, change: impl FnOnce(&mut LoopRecord)) -> Option<LoopRecord> {
        let mut state = self.state();
        let record = state.loops.iter_mut().find(|record| record.loop_id == id)?;
        change(record);
        record.input_tokens = record.iterations.iter().map(|i| i.input_tokens).sum();
        record.output_tokens = record.iterations.iter().map(|i| i.output_tokens).sum();
        Some(record.clone())
    }

    /// Records the end of loop `id` for `reason`.
    fn finish(&self, id: &str, reason: LoopStopReason) {
        let finished = self.change(id, |record| {
            record.status = LoopStatus::Finished;
            record.stop_reason = Some(reason);
            record.ended_at = Some(now());
        });
        if let Some(record) = finished {
            self.emit(EventBody::LoopFinished(LoopFinishedEvent { record }));
        }
    }

    /// Runs loop `id` from its next iteration to its end (or until the session closes). The
    /// session its iterations share, if they do, is closed (its log stored) before the loop's
    /// end is recorded.
    async fn run(&self, id: &str, stop: CancellationToken) {
        let Some(setup) = self.setup.get() else {
            return;
        };
        let mut shared = None;
        let ended = self.run_iterations(setup, id, &stop, &mut shared).await;
        if let Some(child) = shared
            && let Err(err) = child.close().await
        {
            tracing::warn!(loop_id = id, error = %err, "closing a loop's session failed");
        }
        if let Some(reason) = ended {
            self.finish(id, reason);
        }
    }

    /// Runs the iterations of loop `id` until it ends — returning why — or the session closes
    /// (`None`: the loop goes on in its next process); `shared` holds the session the
    /// iterations share once it is open (`fresh_context: false`).
    async fn run_iterations(
        &self,
        setup: &LoopSetup,
        id: &str,
        stop: &CancellationToken,
        shared: &mut Option<SessionHandle>,
    ) -> Option<LoopStopReason> {
        loop {
            if self.state().closing {
                return None;
            }
            let record = self.record(id)?;
            if record.status != LoopStatus::Running {
                return None;
            }
            // A restart may leave a loop with no iteration to run within its bounds.
            let elapsed = Duration::from_millis(elapsed_between(&record.started_at, &now()));
            if record.iterations.len() >= record.max_iterations as usize {
                return Some(LoopStopReason::MaxIterations);
            }
            let tokens = record.input_tokens + record.output_tokens;
            if qilin_loops::budget_spent(record.budget.as_ref(), tokens, elapsed).is_some() {
                return Some(LoopStopReason::Budget);
            }
            if stop.is_cancelled() {
                return match self.state().closing {
                    true => None,
                    false => Some(LoopStopReason::Stopped),
                };
            }
            match self.iterate(setup, &record, stop, shared).await? {
                Next::GoOn => {}
                Next::Stop(reason) => return Some(reason),
            }
        }
    }

    /// Runs the next iteration of `record` and records its report; says what comes next
    /// (`None` when the session closed during it: the loop goes on in its next process).
    /// `shared` is the session the iterations share (`fresh_context: false`), once open.
    async fn iterate(
        &self,
        setup: &LoopSetup,
        record: &LoopRecord,
        stop: &CancellationToken,
        shared: &mut Option<SessionHandle>,
    ) -> Option<Next> {
        let id = record.loop_id.as_str();
        let number = record.iterations.len() as u32 + 1;
        let workspace = setup.workspace.clone();
        let before = tokio::task::spawn_blocking(move || WorkspaceState::capture(&workspace))
            .await
            .ok();
        let started_at = now();
        let clock = std::time::Instant::now();
        let mut iteration = LoopIteration {
            number,
            session_id: None,
            status: IterationStatus::Running,
            started_at: started_at.clone(),
            ended_at: None,
            duration_ms: None,
            files: Vec::new(),
            checks: Vec::new(),
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            promise_seen: false,
            outcome: None,
        };
        let call_id = self.call_of(id);
        let child = match record.fresh_context {
            true => setup.children.build_iteration(&call_id).await,
            false => self.shared_session(setup, record, &call_id, shared).await,
        };
        let ending = match child {
            Err(error) => Ending::Failed(format!("its session could not start: {error}")),
            Ok(child) => {
                iteration.session_id = Some(child.id().to_string());
                self.record_iteration(id, &iteration);
                let compaction = match record.fresh_context {
                    true => Ok(Usage::default()),
                    false => self.compact(&child, record, stop).await,
                };
                let ending = match compaction {
                    Err(ending) => ending,
                    Ok(usage) => {
                        let (ending, summary) = self.run_turn(&child, record, &usage, stop).await;
                        iteration.input_tokens = usage.input_tokens;
                        iteration.output_tokens = usage.output_tokens;
                        if let Some(summary) = &summary {
                            iteration.input_tokens += summary.usage.input_tokens;
                            iteration.output_tokens += summary.usage.output_tokens;
                            if let Some(promise) = &record.until.promise {
                                iteration.promise_seen =
                                    qilin_loops::promise_seen(&summary.final_text, promise);
                            }
                        }
                        ending
                    }
                };
                if record.fresh_context
                    && let Err(err) = child.close().await
                {
                    tracing::warn!(loop_id = id, error = %err, "closing an iteration's session failed");
                }
                ending
            }
        };
        if self.state().closing {
            // The session closes: the iteration stays running in the log, and the session's
            // next process records it interrupted and goes on.
            return None;
        }
        let mut ending = ending;
        if ending == Ending::Ran && !record.until.checks.is_empty() {
            match self.run_checks(setup, record, number, stop).await {
                Ok(checks) => iteration.checks = checks,
                Err(error) => ending = Ending::Failed(format!("its checks could not run: {error}")),
            }
            // Stopped while its checks ran: the stop decides, not what the checks made of it.
            if stop.is_cancelled() {
                if self.state().closing {
                    return None;
                }
                iteration.checks.clear();
                ending = Ending::Stopped(self.stopped_by(id));
            }
        }
        if let Some(before) = before {
            let workspace = setup.workspace.clone();
            let files = tokio::task::spawn_blocking(move || {
                let after = WorkspaceState::capture(&workspace);
                changes_between(&workspace, &before, &after)
            })
            .await;
            iteration.files = files.unwrap_or_default();
        }
        let ended_at = now();
        iteration.status = match &ending {
            Ending::Ran => IterationStatus::Finished,
            Ending::Failed(_) => IterationStatus::Failed,
            Ending::Stopped(_) | Ending::OverBudget(_) => IterationStatus::Interrupted,
        };
        iteration.duration_ms = Some(clock.elapsed().as_millis() as u64);
        iteration.ended_at = Some(ended_at.clone());
        let updated = self.change(id, |record| upsert(record, iteration.clone()))?;
        let elapsed = Duration::from_millis(elapsed_between(&updated.started_at, &ended_at));
        let (next, outcome) = outcome_of(&updated, &ending, elapsed);
        iteration.outcome = Some(outcome);
        self.record_iteration(id, &iteration);
        Some(next)
    }

    /// The call a loop's iterations are linked to: the `loop_start` call, else (a host's
    /// start) the loop's id.
    fn call_of(&self, id: &str) -> String {
        self.state()
            .calls
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// Who stopped loop `id`, in the words its outcome gives.
    fn stopped_by(&self, id: &str) -> String {
        self.state()
            .running
            .get(id)
            .and_then(|running| running.stopped_by.clone())
            .unwrap_or_else(|| "stopped".to_string())
    }

    /// Records `iteration` of loop `id` as it stands (its start, or its report).
    fn record_iteration(&self, id: &str, iteration: &LoopIteration) {
        self.change(id, |record| upsert(record, iteration.clone()));
        self.emit(EventBody::LoopIteration(LoopIterationEvent {
            loop_id: id.to_string(),
            iteration: iteration.clone(),
        }));
    }

    /// The session every iteration of `record` runs in (`fresh_context: false`): the one
    /// `shared` holds; else the one its earlier iterations ran in, taken back from the store
    /// (the loop's process stopped); else a new one, as a fresh iteration's. A session that
    /// cannot be taken back is replaced by a new one, the reason logged: the loop goes on
    /// without the summary of its earlier iterations rather than stop.
    async fn shared_session(
        &self,
        setup: &LoopSetup,
        record: &LoopRecord,
        call_id: &str,
        shared: &mut Option<SessionHandle>,
    ) -> Result<SessionHandle, String> {
        if let Some(child) = shared {
            return Ok(child.clone());
        }
        let earlier = record
            .iterations
            .iter()
            .rev()
            .find_map(|iteration| iteration.session_id.clone());
        let child = match earlier {
            Some(session_id) => match setup.children.resume_iteration(&session_id, call_id).await {
                Ok(child) => child,
                Err(error) => {
                    tracing::warn!(
                        loop_id = %record.loop_id,
                        session = %session_id,
                        %error,
                        "the loop's session could not be taken back; its next iteration starts \
                         a new one"
                    );
                    setup.children.build_iteration(call_id).await?
                }
            },
            None => setup.children.build_iteration(call_id).await?,
        };
        *shared = Some(child.clone());
        Ok(child)
    }

    /// Compacts `child`, the session the iterations of `record` share, before the next
    /// iteration's turn: its usage (none when the session holds no turn since its last
    /// compaction, as before the first iteration), or how the iteration ends instead —
    /// stopped, or failed when the session could not be compacted.
    async fn compact(
        &self,
        child: &SessionHandle,
        record: &LoopRecord,
        stop: &CancellationToken,
    ) -> Result<Usage, Ending> {
        // A session taken back may first finish a turn its last process left open (code
        // replayed from its journal).
        tokio::select! {
            _ = child.wait_idle() => {}
            () = stop.cancelled() => {
                child.interrupt();
                child.wait_idle().await;
                return Err(Ending::Stopped(self.stopped_by(&record.loop_id)));
            }
        }
        let compaction = child.compact();
        tokio::pin!(compaction);
        let compacted = tokio::select! {
            compacted = &mut compaction => compacted,
            () = stop.cancelled() => {
                child.interrupt();
                let _ = compaction.await;
                return Err(Ending::Stopped(self.stopped_by(&record.loop_id)));
            }
        };
        match compacted {
            Ok(compacted) => Ok(compacted.usage),
            Err(CompactError::Failed(qilin_agent::CompactionError::NothingToCompact)) => {
                Ok(Usage::default())
            }
            Err(error) => Err(Ending::Failed(format!(
                "its session could not be compacted: {error}"
            ))),
        }
    }

    /// Runs the iteration's turn in `child` to its end, interrupting it when the loop is
    /// stopped or a budget runs out (counting `before`, what the iteration spent before its
    /// turn); says how it ended, with its summary.
    async fn run_turn(
        &self,
        child: &SessionHandle,
        record: &LoopRecord,
        before: &Usage,
        stop: &CancellationToken,
    ) -> (Ending, Option<qilin_agent::TurnSummary>) {
        let turn = match child.submit_unattended(&record.prompt) {
            Ok(turn) => turn,
            Err(err) => {
                return (
                    Ending::Failed(format!("its turn could not start: {err}")),
                    None,
                );
            }
        };
        let spent_before =
            record.input_tokens + record.output_tokens + before.input_tokens + before.output_tokens;
        let elapsed = Duration::from_millis(elapsed_between(&record.started_at, &now()));
        let budget = record.budget.unwrap_or_default();
        let time_left = budget
            .duration_secs
            .map(|secs| Duration::from_secs(secs).saturating_sub(elapsed));
        let tokens_left = budget
            .tokens
            .map(|tokens| tokens.saturating_sub(spent_before));
        let mut events = child.live_events();
        let over_tokens = async {
            let Some(left) = tokens_left else {
                return std::future::pending::<u64>().await;
            };
            let mut spent = 0u64;
            while let Some(event) = events.recv().await {
                if let EventBody::StepFinished { usage, .. } = &event.body {
                    spent += usage.input_tokens + usage.output_tokens;
                    if spent >= left {
                        return spent_before + spent;
                    }
                }
            }
            std::future::pending().await
        };
        let out_of_time = async {
            match time_left {
                Some(left) => tokio::time::sleep(left).await,
                None => std::future::pending().await,
            }
        };
        let mut finished = Box::pin(turn.finished());
        let cut = tokio::select! {
            summary = &mut finished => return (ending_of(&summary), Some(summary)),
            () = stop.cancelled() => Ending::Stopped(self.stopped_by(&record.loop_id)),
            spent = over_tokens => Ending::OverBudget(format!(
                "the token budget is spent ({spent} of {} tokens); the iteration was interrupted",
                budget.tokens.unwrap_or_default()
            )),
            () = out_of_time => Ending::OverBudget(format!(
                "the time budget is spent ({} s); the iteration was interrupted",
                budget.duration_secs.unwrap_or_default()
            )),
        };
        child.interrupt();
        let summary = finished.await;
        (cut, Some(summary))
    }

    /// Runs the loop's checks after iteration `number` with the starting session's check
    /// service; each check's conclusion and summary.
    async fn run_checks(
        &self,
        setup: &LoopSetup,
        record: &LoopRecord,
        number: u32,
        stop: &CancellationToken,
    ) -> Result<Vec<IterationCheck>, String> {
        let executor = setup
            .executor()
            .ok_or_else(|| "the session that started the loop is gone".to_string())?;
        let service = executor
            .session()
            .services()
            .get::<CheckService>()
            .ok_or_else(|| "the session declares no checks".to_string())?;
        let cx = executor.detached_context(
            format!("{}-{number}-checks", record.loop_id),
            "checks_run",
            stop.child_token(),
        );
        let run = service
            .run(&cx, Some(&record.until.checks))
            .await
            .map_err(|error| error.message)?;
        Ok(run
            .runs
            .into_iter()
            .map(|check| IterationCheck {
                id: check.id,
                conclusion: check.conclusion,
                summary: Some(check.summary).filter(|summary| !summary.is_empty()),
            })
            .collect())
    }

    /// Stops loop `id` for `by`: its running iteration is interrupted; resolves once the loop
    /// recorded its end.
    pub(crate) async fn stop_for(&self, id: &str, by: &str) -> ToolResult<LoopRecord> {
        let done = {
            let mut state = self.state();
            if !state.loops.iter().any(|record| record.loop_id == id) {
                let known: Vec<String> = state.loops.iter().map(|r| r.loop_id.clone()).collect();
                return Err(ToolError::invalid_arguments(match known.is_empty() {
                    true => format!("no loop `{id}`: this session has started no loop"),
                    false => format!(
                        "no loop `{id}`; this session's loops are: {}",
                        known.join(", ")
                    ),
                }));
            }
            match state.running.get_mut(id) {
                Some(running) => {
                    running.stopped_by.get_or_insert_with(|| by.to_string());
                    running.stop.cancel();
                    Some(running.done.clone())
                }
                None => None,
            }
        };
        if let Some(mut done) = done {
            let _ = done.wait_for(|done| *done).await;
        }
        self.record(id)
            .ok_or_else(|| ToolError::failed(format!("the loop `{id}` is gone")))
    }

    /// Starts a loop from call `call_id`.
    fn start_loop(&self, call_id: Option<&str>, start: StartLoop) -> ToolResult<LoopRecord> {
        if self.child {
            return Err(ToolError::failed(
                "a child session (a loop's iteration, a subagent) starts no loop: the session \
                 that started it may",
            ));
        }
        let setup = self.setup.get().ok_or_else(|| {
            ToolError::failed("this session cannot start loops yet: it is still being built")
        })?;
        let declared = setup.declared_checks();
        let start = qilin_loops::validate(start, &declared)?;
        let record = {
            let mut state = self.state();
            if state.closing {
                return Err(ToolError::failed("the session is closing"));
            }
            let record = LoopRecord {
                loop_id: format!("loop-{}", state.loops.len() + 1),
                prompt: start.prompt,
                until: start.until,
                max_iterations: start.max_iterations,
                fresh_context: start.fresh_context.unwrap_or(true),
                budget: start.budget,
                status: LoopStatus::Running,
                stop_reason: None,
                iterations: Vec::new(),
                started_at: now(),
                ended_at: None,
                input_tokens: 0,
                output_tokens: 0,
                cost_usd: None,
            };
            state.loops.push(record.clone());
            if let Some(call_id) = call_id {
                state
                    .calls
                    .insert(record.loop_id.clone(), call_id.to_string());
            }
            record
        };
        self.emit(EventBody::LoopStarted(LoopStartedEvent {
            record: record.clone(),
        }));
        self.spawn(record.loop_id.clone());
        Ok(record)
    }
}

impl Loops for LoopRunner {
    fn start(&self, call_id: Option<&str>, start: StartLoop) -> ToolResult<LoopRecord> {
        self.start_loop(call_id, start)
    }

    fn list(&self) -> Vec<LoopRecord> {
        self.state().loops.clone()
    }

    fn stop<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ToolResult<LoopRecord>> {
        Box::pin(self.stop_for(id, "stopped by loop_stop"))
    }
}

/// Adds `iteration` to `record`, or replaces the one of its number.
fn upsert(record: &mut LoopRecord, iteration: LoopIteration) {
    match record
        .iterations
        .iter_mut()
        .find(|known| known.number == iteration.number)
    {
        Some(known) => *known = iteration,
        None => record.iterations.push(iteration),
    }
}

/// How a turn that ended by itself ended, for the loop.
fn ending_of(summary: &qilin_agent::TurnSummary) -> Ending {
    match summary.reason {
        FinishReason::Completed | FinishReason::MaxSteps | FinishReason::MaxTokens => Ending::Ran,
        FinishReason::Interrupted => {
            Ending::Stopped("the iteration's turn was interrupted; stopping".to_string())
        }
        FinishReason::Refused | FinishReason::Error => Ending::Failed(
            summary
                .error
                .clone()
                .unwrap_or_else(|| "the model refused".to_string()),
        ),
    }
}

/// Milliseconds from `from` to `to` (RFC 3339), 0 when either cannot be read.
fn elapsed_between(from: &str, to: &str) -> u64 {
    let parse = |time: &str| DateTime::parse_from_rfc3339(time).map(|t| t.with_timezone(&Utc));
    match (parse(from), parse(to)) {
        (Ok(from), Ok(to)) => u64::try_from((to - from).num_milliseconds()).unwrap_or(0),
        _ => 0,
    }
}

/// The `loop_start` calls of `events` that started a loop, by loop id (from their results).
fn start_calls(events: &[Event]) -> HashMap<String, String> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == "loop_start" => {
                let id = result
                    .output
                    .as_ref()?
                    .get("loop")?
                    .get("loopId")?
                    .as_str()?;
                Some((id.to_string(), result.call_id.clone()))
            }
            _ => None,
        })
        .collect()
}
