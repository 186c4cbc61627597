//! Subagents: the children of a session, built through [`crate::SessionBuilder`] like any
//! session and hosted here — the runtime's side of `qilin_subagents::Subagents`.
//!
//! A child is a session of the same store and workspace, linked to its parent
//! (`parentSessionId`, `parentCallId`), whose one turn is the parent's prompt. The bounds are
//! the runtime's: how deep children may nest, how many may run at once, the steps of a child's
//! turn, its tools (a subset of the parent's), its sandbox (never wider than the parent's) and
//! its review (the parent's rules apply too).

use crate::session::ModelChoice;
use crate::{Runtime, SessionBuilder, SessionHandle};
use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use qilin_agent::TurnSummary;
use qilin_protocol::agents::{
    AgentDeliveredEvent, AgentFinishedEvent, AgentListOutput, AgentMessageEvent, AgentSendOutput,
    AgentStartedEvent, AgentWaitOutput, ChildRecord, ChildStatus, ChildUsage, Delivery,
};
use qilin_protocol::tasks::{
    TaskCreateOutput, TaskCreatedEvent, TaskListOutput, TaskNote, TaskRecord, TaskStatus,
    TaskUpdateOutput, TaskUpdatedEvent,
};
use qilin_protocol::{Event, EventBody, FinishReason, Usage};
use qilin_sandbox::{SandboxMode, SandboxSettings};
use qilin_skill::{AgentFile, CodeTools};
use qilin_subagents::{ChildRequest, NewTask, Subagents, TaskChange};
use qilin_tool::{
    RequestRelay, ReviewDecision, ReviewRequest, Reviewer, Session, ToolContext, ToolError,
    ToolResult,
};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The bounds the runtime puts on a session's children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildLimits {
    /// How deep children may nest: a top-level session is at depth 0, its children at 1.
    pub max_depth: u32,
    /// How many children one session may have running at once (ended ones do not count).
    pub max_running: usize,
    /// The most model steps of a child's turn (its agent file's own limit when lower).
    pub max_steps: u32,
}

impl Default for ChildLimits {
    fn default() -> Self {
        ChildLimits {
            max_depth: qilin_subagents::DEFAULT_MAX_DEPTH,
            max_running: qilin_subagents::DEFAULT_MAX_RUNNING,
            max_steps: qilin_subagents::DEFAULT_CHILD_STEPS,
        }
    }
}

/// How a child session is linked to its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParentLink {
    /// The parent's session id.
    pub(crate) session_id: String,
    /// The parent's `agent` call.
    pub(crate) call_id: String,
    /// The child's depth (the parent's + 1).
    pub(crate) depth: u32,
}

/// A teammate's place in its team: its lead's children (the team's home: its teammates and
/// task list) and its name.
#[derive(Clone)]
pub(crate) struct TeamLink {
    pub(crate) lead: Weak<Children>,
    pub(crate) name: String,
}

/// What the team calls its lead (`agent_send`'s `to`, a task's assignee or author).
const LEAD: &str = "lead";

/// What a child may have at most: what its parent has.
#[derive(Debug, Clone)]
pub(crate) struct ChildBounds {
    /// The tools of the parent's registry.
    pub(crate) tools: BTreeSet<String>,
    /// Whether the parent has code mode.
    pub(crate) code_mode: bool,
    /// The parent's sandbox.
    pub(crate) sandbox: SandboxSettings,
    /// The most steps of the child's turn.
    pub(crate) max_steps: u32,
}

impl ChildBounds {
    /// Narrows a child's agent to its bounds: its tools to the parent's, code mode only when
    /// the parent has it, its sandbox never wider than the parent's, its steps within budget.
    pub(crate) fn clamp(&self, agent: &mut AgentFile) {
        agent.tools.retain(|tool| self.tools.contains(tool));
        agent.code_mode &= self.code_mode;
        let reachable: Vec<String> = self
            .tools
            .iter()
            .filter(|tool| agent.code_tools.allows(tool))
            .cloned()
            .collect();
        agent.code_tools = CodeTools::Named(reachable);
        let sandbox = &mut agent.sandbox;
        if mode_rank(sandbox.mode) > mode_rank(self.sandbox.mode) {
            sandbox.mode = self.sandbox.mode;
        }
        sandbox.network &= self.sandbox.network;
        sandbox.env.retain(|name| self.sandbox.env.contains(name));
        sandbox
            .unix_sockets
            .retain(|socket| self.sandbox.unix_sockets.contains(socket));
        sandbox.limits = self.sandbox.limits;
        let steps = agent
            .limits
            .max_steps
            .unwrap_or(crate::DEFAULT_MAX_STEPS)
            .min(self.max_steps);
        agent.limits.max_steps = Some(steps);
    }
}

/// How much a sandbox mode allows, least first.
fn mode_rank(mode: SandboxMode) -> u8 {
    match mode {
        SandboxMode::ReadOnly => 0,
        SandboxMode::WorkspaceWrite => 1,
        SandboxMode::Off => 2,
    }
}

/// The child's own review, then its parent's: a call runs only when both allow it, and asks
/// when either asks.
pub(crate) struct BothReviewers {
    pub(crate) own: Arc<dyn Reviewer>,
    pub(crate) parent: Arc<dyn Reviewer>,
}

impl Reviewer for BothReviewers {
    fn review<'a>(&'a self, request: ReviewRequest<'a>) -> BoxFuture<'a, ReviewDecision> {
        Box::pin(async move {
            let own = self.own.review(request).await;
            if matches!(own, ReviewDecision::Deny { .. }) {
                return own;
            }
            match self.parent.review(request).await {
                ReviewDecision::Allow => own,
                parent => parent,
            }
        })
    }
}

/// What a parent session gives its children, known once it is built.
pub(crate) struct ParentSetup {
    /// The parent's session (weak: the session holds this service).
    pub(crate) session: Weak<Session>,
    pub(crate) session_id: String,
    pub(crate) workspace: PathBuf,
    /// The parent's model: a child whose agent file names none uses it.
    pub(crate) model: ModelChoice,
    pub(crate) bounds: ChildBounds,
    pub(crate) reviewer: Arc<dyn Reviewer>,
    pub(crate) no_sandbox: bool,
    pub(crate) skill_dirs: Vec<PathBuf>,
    pub(crate) call_timeout: Option<Duration>,
    /// The parent's own agent, as loaded: a loop's iterations run it.
    pub(crate) agent: AgentFile,
}

/// One child, as its parent sees it.
struct Child {
    record: ChildRecord,
    /// The parent's `agent` call that started it, and that call's `run_code` call.
    call: (String, Option<String>),
    /// Its session, while it runs in this process (a child taken back from a resumed
    /// parent's log after it ended has none).
    handle: Option<SessionHandle>,
    started: Instant,
    /// Its result was handed to the model (a foreground call's result, `agent_wait`,
    /// `agent_stop`).
    delivered: bool,
    /// Whether a step of its turn is open.
    in_step: bool,
    /// What stopped it, when something did.
    stopped_by: Option<&'static str>,
    /// A teammate's steps and tokens before its current turn (its record sums its turns).
    before_turn: (u32, ChildUsage),
}

/// The children of one session.
pub(crate) struct Children {
    /// This service itself, for the tasks following its children.
    me: Weak<Children>,
    runtime: Runtime,
    limits: ChildLimits,
    depth: u32,
    setup: OnceLock<ParentSetup>,
    table: Mutex<Vec<Child>>,
    /// Children being built: counted as running, so starts in parallel keep the bound.
    starting: Mutex<usize>,
    /// Woken whenever a child ends (or a teammate's turn does).
    ended: Notify,
    /// For a teammate: its team.
    team: OnceLock<TeamLink>,
    /// The team's task list, in creation order (kept by the lead's children).
    tasks: Mutex<Vec<TaskRecord>>,
}

impl Children {
    /// The children of a session at `depth`, within `limits`.
    pub(crate) fn new(runtime: Runtime, limits: ChildLimits, depth: u32) -> Arc<Self> {
        Arc::new_cyclic(|me| Children {
            me: me.clone(),
            runtime,
            limits,
            depth,
            setup: OnceLock::new(),
            table: Mutex::new(Vec::new()),
            starting: Mutex::new(0),
            ended: Notify::new(),
            team: OnceLock::new(),
            tasks: Mutex::new(Vec::new()),
        })
    }

    /// Makes this session's children those of a teammate of `team`.
    pub(crate) fn join_team(&self, team: TeamLink) {
        let _ = self.team.set(team);
    }

    /// Completes the service once its session is built.
    pub(crate) fn set_up(&self, setup: ParentSetup) {
        let _ = self.setup.set(setup);
    }

    fn table(&self) -> parking_lot::MutexGuard<'_, Vec<Child>> {
        self.table.lock()
    }

    /// Interrupts every running child (its parent was interrupted).
    pub(crate) fn interrupt_all(&self) {
        for child in self.table().iter_mut() {
            if child.record.status == ChildStatus::Running
                && let Some(handle) = &child.handle
            {
                child.stopped_by.get_or_insert("its parent was interrupted");
                handle.interrupt();
            }
        }
    }

    /// How many children are running now.
    pub(crate) fn running(&self) -> usize {
        self.table()
            .iter()
            .filter(|child| child.record.status == ChildStatus::Running)
            .count()
    }

    /// Takes back the children a resumed session's log records: each `agent.started` is a
    /// child again, ended as its `agent.finished` says, or — when the process stopped before
    /// recording that — as the child's own log says (a turn without its end was interrupted);
    /// one still running in this process is followed again. A foreground child counts as
    /// delivered (its call's result carried it, or recovery closed the call). Returns the
    /// `agent.finished` events to record for background children whose end the log lacks, so
    /// the model hears of each once and `agent_wait` hands each over once.
    pub(crate) async fn restore(&self, events: &[Event], runtime: &Runtime) -> Vec<EventBody> {
        let mut seen: Vec<(AgentStartedEvent, Option<ChildRecord>, bool)> = Vec::new();
        for event in events {
            match &event.body {
                EventBody::AgentStarted(started) => seen.push((started.clone(), None, false)),
                EventBody::TaskCreated(created) => self.task_list().push(created.task.clone()),
                EventBody::TaskUpdated(updated) => {
                    let mut tasks = self.task_list();
                    if let Some(task) = tasks.iter_mut().find(|task| task.id == updated.task.id) {
                        *task = updated.task.clone();
                    }
                }
                EventBody::AgentFinished(finished) => {
                    if let Some(entry) = seen
                        .iter_mut()
                        .find(|(started, ..)| started.child_session_id == finished.child_session_id)
                    {
                        entry.1 = Some(finished.record.clone());
                    }
                }
                EventBody::AgentDelivered(delivered) => {
                    if let Some(entry) = seen.iter_mut().find(|(started, ..)| {
                        started.child_session_id == delivered.child_session_id
                    }) {
                        entry.2 = true;
                    }
                }
                _ => {}
            }
        }
        let mut to_record = Vec::new();
        for (started, finished, delivered) in seen {
            let delivered = delivered || !started.background;
            let id = started.child_session_id.clone();
            let running_here = runtime
                .live_session(&id)
                .and_then(|handle| handle.running_turn_handle().map(|turn| (handle, turn)));
            let (record, running) = match (finished, running_here) {
                (Some(record), _) => (record, None),
                (None, Some(running)) => (started_record(&started), Some(running)),
                (None, None) => {
                    let mut record = ended_from_log(runtime, started_record(&started)).await;
                    // A teammate the lead's log does not record as ended waits between turns,
                    // never mid-turn: one whose last turn answered, as it did; one whose turn
                    // its process cut off, for its next message (its log keeps what it did).
                    if is_teammate(&record)
                        && matches!(
                            record.status,
                            ChildStatus::Completed | ChildStatus::Interrupted
                        )
                    {
                        record.status = ChildStatus::Idle;
                        record.error = None;
                    }
                    if started.background && !delivered && record.status.ended() {
                        to_record.push(EventBody::AgentFinished(AgentFinishedEvent {
                            child_session_id: id.clone(),
                            record: record.clone(),
                        }));
                    }
                    (record, None)
                }
            };
            let call = (started.call_id.clone(), started.parent_call_id.clone());
            if let Some((handle, _)) = &running {
                self.relay_requests(handle, &call, &record);
            }
            self.table().push(Child {
                record,
                call,
                handle: running.as_ref().map(|(handle, _)| handle.clone()),
                started: Instant::now(),
                delivered,
                in_step: false,
                stopped_by: None,
                before_turn: (0, ChildUsage::default()),
            });
            if let Some((handle, turn)) = running {
                // Nobody waits on a foreground child taken back: its call ended with the
                // process that made it.
                let events = handle.live_events();
                drop(self.follow(&handle, events, turn));
            }
        }
        to_record
    }

    /// Follows child `handle`'s `turn` (its steps and usage, from `events`: its live events,
    /// subscribed to before the turn started) until it ends, then records its end — for a
    /// background child, `agent.finished` in the parent's log — and wakes the waiters. The
    /// receiver gets its ended record.
    ///
    /// The end is the turn's own report, not its `turn.finished` event: a turn that ended
    /// before the events were subscribed to (a child taken back while it runs) is still seen
    /// to end. The events recorded before the report are folded in first.
    fn follow(
        &self,
        handle: &SessionHandle,
        mut events: tokio::sync::mpsc::UnboundedReceiver<Event>,
        turn: crate::TurnHandle,
    ) -> tokio::sync::oneshot::Receiver<ChildRecord> {
        let child_id = handle.id().to_string();
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<ChildRecord>();
        let parent = self
            .setup
            .get()
            .map_or_else(Weak::new, |setup| setup.session.clone());
        let children = self.me.clone();
        tokio::spawn(async move {
            let observe = |event: &Event| {
                if let Some(children) = children.upgrade() {
                    children.observe(&child_id, &event.body);
                }
            };
            let finished = turn.finished();
            tokio::pin!(finished);
            let mut live = true;
            let summary = loop {
                tokio::select! {
                    biased;
                    event = events.recv(), if live => match event {
                        Some(event) => observe(&event),
                        None => live = false,
                    },
                    summary = &mut finished => {
                        while let Ok(event) = events.try_recv() {
                            observe(&event);
                        }
                        break summary;
                    }
                }
            };
            let Some(children) = children.upgrade() else {
                return;
            };
            let record = children.finish(&child_id, &summary, parent.upgrade().as_deref());
            children.ended.notify_waiters();
            let _ = done_tx.send(record);
        });
        done_rx
    }

    /// The tokens the children used so far, summed.
    pub(crate) fn usage(&self) -> ChildUsage {
        self.table()
            .iter()
            .fold(ChildUsage::default(), |mut total, child| {
                add_usage(&mut total, &child.record.usage);
                total
            })
    }

    /// The index of the child `key` names (its session id or name), or an error listing them.
    fn find(table: &[Child], key: &str) -> ToolResult<usize> {
        table
            .iter()
            .position(|child| {
                child.record.session_id == key || child.record.name.as_deref() == Some(key)
            })
            .ok_or_else(|| {
                let known: Vec<String> = table
                    .iter()
                    .map(|child| match &child.record.name {
                        Some(name) => format!("{} ({name})", child.record.session_id),
                        None => child.record.session_id.clone(),
                    })
                    .collect();
                ToolError::invalid_arguments(match known.is_empty() {
                    true => format!("no child `{key}`: this session has started no agent"),
                    false => format!(
                        "no child `{key}`; this session's children are: {}",
                        known.join(", ")
                    ),
                })
            })
    }

    /// A child's record as it stands now.
    fn record_now(child: &Child) -> ChildRecord {
        let mut record = child.record.clone();
        if record.status == ChildStatus::Running {
            record.duration_ms = millis(child.started.elapsed());
        }
        record
    }

    async fn start_child(
        &self,
        cx: &ToolContext,
        request: ChildRequest,
    ) -> ToolResult<ChildRecord> {
        let setup = self.setup.get().ok_or_else(|| {
            ToolError::failed("this session cannot start agents yet: it is still being built")
        })?;
        let depth = self.depth + 1;
        if depth > self.limits.max_depth {
            return Err(ToolError::failed(format!(
                "this session is at depth {} (a child of a child), and agents may nest {} deep at \
                 most (the runtime's depth bound): do the task yourself",
                self.depth, self.limits.max_depth
            )));
        }
        let reserved = match request.background {
            false => self.slot_for_foreground(cx).await?,
            true => self.reserve().ok_or_else(|| {
                ToolError::failed(format!(
                    "this session already runs {} agents, the most it may run at once (the \
                     runtime's bound on running children): collect one with agent_wait or \
                     stop one with agent_stop, then start this one",
                    self.limits.max_running
                ))
            })?,
        };
        {
            let table = self.table();
            if let Some(name) = &request.name
                && table
                    .iter()
                    .any(|child| child.record.name.as_deref() == Some(name))
            {
                return Err(ToolError::invalid_arguments(format!(
                    "a child named `{name}` exists already in this session; give another name"
                )));
            }
        }
        let source = crate::find_agent(&setup.workspace, &request.agent)
            .map_err(ToolError::invalid_arguments)?;
        let mut builder = self
            .runtime
            .session(&setup.workspace)
            .agent_source(source)
            .default_model(setup.model.clone())
            .no_sandbox(setup.no_sandbox)
            .call_timeout(setup.call_timeout)
            .child_limits(self.limits)
            .child_of(
                ParentLink {
                    session_id: setup.session_id.clone(),
                    call_id: cx.call_id().to_string(),
                    depth,
                },
                setup.bounds.clone(),
                Arc::clone(&setup.reviewer),
            );
        for dir in &setup.skill_dirs {
            builder = builder.skill_dir(dir);
        }
        if let (Some(name), true) = (&request.name, request.background) {
            builder = builder.teammate(TeamLink {
                lead: self.me.clone(),
                name: name.clone(),
            });
        }
        let handle = builder.build().await.map_err(|err| {
            ToolError::failed(format!(
                "the agent `{}` could not start: {err}",
                request.agent
            ))
        })?;
        let child_id = handle.id().to_string();
        cx.session()
            .events()
            .emit(EventBody::AgentStarted(AgentStartedEvent {
                call_id: cx.call_id().to_string(),
                parent_call_id: cx.parent_call_id().map(str::to_string),
                child_session_id: child_id.clone(),
                agent: request.agent.clone(),
                description: request.description.clone(),
                name: request.name.clone(),
                background: request.background,
            }));
        let record = ChildRecord {
            session_id: child_id.clone(),
            agent: request.agent.clone(),
            description: request.description.clone(),
            name: request.name.clone(),
            background: request.background,
            status: ChildStatus::Running,
            answer: None,
            error: None,
            steps: 0,
            usage: ChildUsage::default(),
            duration_ms: 0,
        };
        let call = (
            cx.call_id().to_string(),
            cx.parent_call_id().map(str::to_string),
        );
        self.relay_requests(&handle, &call, &record);
        // Subscribed before the turn starts, so none of its events is missed.
        let events = handle.live_events();
        let turn = handle.submit(&request.prompt, None).map_err(|err| {
            ToolError::failed(format!(
                "the agent `{}` could not start its turn: {err}",
                request.agent
            ))
        })?;
        {
            let mut table = self.table();
            table.push(Child {
                record: record.clone(),
                call,
                handle: Some(handle.clone()),
                started: Instant::now(),
                delivered: false,
                in_step: false,
                stopped_by: None,
                before_turn: (0, ChildUsage::default()),
            });
            drop(reserved);
        }
        // Follow the child's steps (usage so far, whether a step is open) until its turn ends.
        let done_rx = self.follow(&handle, events, turn);
        if request.background {
            return Ok(record);
        }
        // Foreground: the call waits for the child; cancelling the call stops the child.
        let cancel = cx.cancellation().clone();
        tokio::pin!(done_rx);
        let ended = tokio::select! {
            ended = &mut done_rx => ended,
            () = cancel.cancelled() => {
                self.stop_child(handle.id(), "the call that started it was interrupted");
                done_rx.await
            }
        };
        let record = ended.map_err(|_| ToolError::failed("the agent's task ended abnormally"))?;
        if let Some(child) = self
            .table()
            .iter_mut()
            .find(|child| child.record.session_id == record.session_id)
        {
            child.delivered = true;
        }
        if cancel.is_cancelled() {
            return Err(ToolError::new(
                qilin_protocol::ErrorCode::Interrupted,
                format!(
                    "the call was interrupted, and so was its agent (session {}) after {} steps",
                    record.session_id, record.steps
                ),
            ));
        }
        Ok(record)
    }

    /// A fresh child session for one iteration of a loop, started by call `call_id` (a host's
    /// start gives the loop's id): the parent's own agent and model, linked to the parent and
    /// that call, unattended (its approvals and questions are refused at once), within the
    /// bounds every child has but with the agent's own step limit.
    pub(crate) async fn build_iteration(&self, call_id: &str) -> Result<SessionHandle, String> {
        let setup = self
            .setup
            .get()
            .ok_or_else(|| "the session is still being built".to_string())?;
        let builder = self
            .runtime
            .session(&setup.workspace)
            .default_model(setup.model.clone());
        self.as_iteration(setup, builder, call_id)
            .build()
            .await
            .map_err(|err| err.to_string())
    }

    /// The stored session `session_id` of a loop's iterations (a loop with `fresh_context:
    /// false`) taken back after its process stopped, set up as [`Children::build_iteration`]
    /// builds one: the parent's agent and the model a fresh iteration would get, linked to
    /// the parent and call `call_id`, unattended, within the same bounds.
    pub(crate) async fn resume_iteration(
        &self,
        session_id: &str,
        call_id: &str,
    ) -> Result<SessionHandle, String> {
        let setup = self
            .setup
            .get()
            .ok_or_else(|| "the session is still being built".to_string())?;
        // The model a fresh iteration gets: the agent's own, else the parent's (the stored
        // label may name a model that cannot be opened again, such as a test's script).
        let model = match &setup.agent.model {
            Some(spec) => ModelChoice::Spec(spec.clone()),
            None => setup.model.clone(),
        };
        let builder = self
            .runtime
            .resume(session_id)
            .await
            .map_err(|err| err.to_string())?
            .model(model);
        self.as_iteration(setup, builder, call_id)
            .build()
            .await
            .map_err(|err| err.to_string())
    }

    /// `builder` set up as a session of a loop's iterations started by call `call_id`.
    fn as_iteration(
        &self,
        setup: &ParentSetup,
        builder: SessionBuilder,
        call_id: &str,
    ) -> SessionBuilder {
        let bounds = ChildBounds {
            max_steps: setup
                .agent
                .limits
                .max_steps
                .unwrap_or(crate::DEFAULT_MAX_STEPS),
            ..setup.bounds.clone()
        };
        let mut builder = builder
            .agent_source(crate::AgentSource::Loaded(Box::new(setup.agent.clone())))
            .no_sandbox(setup.no_sandbox)
            .call_timeout(setup.call_timeout)
            .child_limits(self.limits)
            .attended(false)
            .child_of(
                ParentLink {
                    session_id: setup.session_id.clone(),
                    call_id: call_id.to_string(),
                    depth: self.depth + 1,
                },
                bounds,
                Arc::clone(&setup.reviewer),
            );
        for dir in &setup.skill_dirs {
            builder = builder.skill_dir(dir);
        }
        builder
    }

    /// Waits until fewer children run than the bound allows: a foreground start (whose call
    /// waits anyway, as code gathering many does) queues for a free place rather than being
    /// refused. Ends early, interrupted, when the call is cancelled.
    async fn slot_for_foreground(&self, cx: &ToolContext) -> ToolResult<Reserved<'_>> {
        loop {
            let ended = self.ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if let Some(reserved) = self.reserve() {
                return Ok(reserved);
            }
            tokio::select! {
                () = &mut ended => {}
                () = cx.cancellation().cancelled() => {
                    return Err(ToolError::new(
                        qilin_protocol::ErrorCode::Interrupted,
                        "the call was interrupted while it waited for a running agent to end",
                    ));
                }
            }
        }
    }

    /// A place for one more running child, if the bound leaves one.
    fn reserve(&self) -> Option<Reserved<'_>> {
        let running = self
            .table()
            .iter()
            .filter(|child| child.record.status == ChildStatus::Running)
            .count();
        let mut starting = self.starting.lock();
        if running + *starting >= self.limits.max_running {
            return None;
        }
        *starting += 1;
        Some(Reserved(self))
    }

    /// Makes child `handle`'s approvals and questions surface in this session's clients, as
    /// requests naming it on `call` (the `agent` call that started it) — or, for a child of a
    /// child, in the clients its parent's requests reach. The child follows that session's
    /// attendance: when no person watches it, the child's requests end at once as unattended.
    fn relay_requests(
        &self,
        handle: &SessionHandle,
        call: &(String, Option<String>),
        record: &ChildRecord,
    ) {
        let Some(setup) = self.setup.get() else {
            return;
        };
        let Some(parent) = setup.session.upgrade() else {
            return;
        };
        let child = handle.tool_session();
        let (to, call_id, parent_call_id) = match parent.requests().relay() {
            Some(up) => (
                up.parent.clone(),
                up.call_id.clone(),
                up.parent_call_id.clone(),
            ),
            None => (setup.session.clone(), call.0.clone(), call.1.clone()),
        };
        child.requests().relay_to(RequestRelay {
            parent: to,
            child: Arc::downgrade(child),
            child_session_id: record.session_id.clone(),
            child_name: record.name.clone().unwrap_or_else(|| record.agent.clone()),
            call_id,
            parent_call_id,
        });
    }

    /// Brings back the session of the idle teammate `key` names when none runs in this process
    /// (a teammate taken back from a resumed lead's log): resumed from the store as a teammate
    /// of this team again, its requests relayed, so a message can wake it. Its unread messages
    /// are in its log, read in its next turn. Anything else is left as it is.
    async fn revive(&self, key: &str) -> ToolResult<()> {
        let (record, call) = {
            let table = self.table();
            let Ok(index) = Self::find(&table, key) else {
                return Ok(());
            };
            let child = &table[index];
            if child.handle.is_some()
                || child.record.status != ChildStatus::Idle
                || !is_teammate(&child.record)
            {
                return Ok(());
            }
            (child.record.clone(), child.call.clone())
        };
        let id = record.session_id.clone();
        let handle = match self.runtime.live_session(&id) {
            Some(handle) => handle,
            None => self.resume_teammate(&record, &call).await.map_err(|err| {
                ToolError::failed(format!(
                    "teammate {id} could not be taken back from the store to receive the \
                     message: {err}"
                ))
            })?,
        };
        self.relay_requests(&handle, &call, &record);
        let mut table = self.table();
        if let Some(child) = table.iter_mut().find(|child| child.record.session_id == id)
            && child.handle.is_none()
        {
            child.handle = Some(handle);
            child.started = Instant::now();
        }
        Ok(())
    }

    /// Resumes teammate `record` from the store, bounded and linked as when it was started by
    /// `call`.
    async fn resume_teammate(
        &self,
        record: &ChildRecord,
        call: &(String, Option<String>),
    ) -> Result<SessionHandle, crate::RuntimeError> {
        let Some(setup) = self.setup.get() else {
            return Err(crate::RuntimeError::NotResumable {
                id: record.session_id.clone(),
                reason: "its lead's session is still being built".to_string(),
            });
        };
        let mut builder = self
            .runtime
            .resume(&record.session_id)
            .await?
            .no_sandbox(setup.no_sandbox)
            .call_timeout(setup.call_timeout)
            .child_limits(self.limits)
            .child_of(
                ParentLink {
                    session_id: setup.session_id.clone(),
                    call_id: call.0.clone(),
                    depth: self.depth + 1,
                },
                setup.bounds.clone(),
                Arc::clone(&setup.reviewer),
            );
        for dir in &setup.skill_dirs {
            builder = builder.skill_dir(dir);
        }
        if let Some(name) = &record.name {
            builder = builder.teammate(TeamLink {
                lead: self.me.clone(),
                name: name.clone(),
            });
        }
        builder.build().await
    }

    /// Folds one event of child `id` into its record.
    fn observe(&self, id: &str, body: &EventBody) {
        let mut table = self.table();
        let Some(child) = table.iter_mut().find(|c| c.record.session_id == id) else {
            return;
        };
        match body {
            EventBody::StepStarted { step, .. } => {
                child.in_step = true;
                child.record.steps = *step;
            }
            EventBody::StepFinished { usage, .. } => {
                child.in_step = false;
                child.record.usage.input_tokens += usage.input_tokens;
                child.record.usage.output_tokens += usage.output_tokens;
                child.record.usage.cache_read_tokens += usage.cache_read_tokens;
                child.record.usage.cache_write_tokens += usage.cache_write_tokens;
            }
            _ => {}
        }
    }

    /// Records how child `id`'s turn ended; returns its final record.
    fn finish(&self, id: &str, summary: &TurnSummary, parent: Option<&Session>) -> ChildRecord {
        let mut table = self.table();
        let record = match table.iter_mut().find(|c| c.record.session_id == id) {
            None => ended_record(id, summary),
            Some(child) => {
                end_record(
                    &mut child.record,
                    summary,
                    child.stopped_by.unwrap_or("its turn was interrupted"),
                );
                if is_teammate(&child.record) {
                    let (steps, usage) = child.before_turn;
                    child.record.steps += steps;
                    add_usage(&mut child.record.usage, &usage);
                    if child.record.status == ChildStatus::Completed && child.stopped_by.is_none() {
                        child.record.status = ChildStatus::Idle;
                    }
                }
                child.record.duration_ms = millis(child.started.elapsed());
                child.in_step = false;
                child.record.clone()
            }
        };
        // Recorded before the table lets go: a wait that finds the child ended records its
        // `agent.delivered` after this.
        if let Some(parent) = parent
            && let Some(body) = end_event(id, &record)
        {
            parent.events().emit(body);
        }
        record
    }

    /// Interrupts child `id` for `why`, if it runs.
    fn stop_child(&self, id: &str, why: &'static str) {
        let mut table = self.table();
        if let Some(child) = table.iter_mut().find(|c| c.record.session_id == id)
            && child.record.status == ChildStatus::Running
            && let Some(handle) = &child.handle
        {
            child.stopped_by.get_or_insert(why);
            handle.interrupt();
        }
    }

    /// Marks delivered the children of `ids` that were not, recording `agent.delivered` in the
    /// parent's log for each; returns their records.
    fn deliver(&self, cx: &ToolContext, ids: &[String]) -> Vec<ChildRecord> {
        let mut table = self.table();
        let mut records = Vec::new();
        for child in table.iter_mut() {
            if ids.contains(&child.record.session_id)
                && child.record.status.ended()
                && !child.delivered
            {
                child.delivered = true;
                records.push(child.record.clone());
                cx.session()
                    .events()
                    .emit(EventBody::AgentDelivered(AgentDeliveredEvent {
                        child_session_id: child.record.session_id.clone(),
                    }));
            }
        }
        records
    }
}

impl Subagents for Children {
    fn start<'a>(
        &'a self,
        cx: &'a ToolContext,
        request: ChildRequest,
    ) -> BoxFuture<'a, ToolResult<ChildRecord>> {
        Box::pin(self.start_child(cx, request))
    }

    fn wait<'a>(
        &'a self,
        cx: &'a ToolContext,
        ids: Option<Vec<String>>,
        timeout: Duration,
    ) -> BoxFuture<'a, ToolResult<AgentWaitOutput>> {
        Box::pin(async move {
            let targets: Vec<String> = {
                let table = self.table();
                match &ids {
                    Some(keys) => keys
                        .iter()
                        .map(|key| {
                            Self::find(&table, key.trim())
                                .map(|index| table[index].record.session_id.clone())
                        })
                        .collect::<ToolResult<_>>()?,
                    None => table
                        .iter()
                        .filter(|child| child.record.background && !child.delivered)
                        .map(|child| child.record.session_id.clone())
                        .collect(),
                }
            };
            let deadline = Instant::now() + timeout;
            let cancel = cx.cancellation().clone();
            let mut timed_out = false;
            loop {
                let ended = self.ended.notified();
                tokio::pin!(ended);
                ended.as_mut().enable();
                let running = self.running_among(&targets);
                if running.is_empty() {
                    break;
                }
                tokio::select! {
                    () = &mut ended => {}
                    () = tokio::time::sleep_until(deadline) => {
                        timed_out = true;
                        break;
                    }
                    () = cancel.cancelled() => {
                        return Err(ToolError::new(
                            qilin_protocol::ErrorCode::Interrupted,
                            "the wait was interrupted; the agents keep running",
                        ));
                    }
                }
            }
            let finished = self.deliver(cx, &targets);
            let running = self.running_among(&targets);
            Ok(AgentWaitOutput {
                finished,
                timed_out: timed_out && !running.is_empty(),
                running,
            })
        })
    }

    fn send<'a>(
        &'a self,
        cx: &'a ToolContext,
        to: String,
        message: String,
    ) -> BoxFuture<'a, ToolResult<AgentSendOutput>> {
        Box::pin(async move {
            let from = cx.session().id().to_string();
            let Some(team) = self.team.get() else {
                self.revive(&to).await?;
                return self.message_child(to, from, None, message);
            };
            let lead = team.lead.upgrade().ok_or_else(|| {
                ToolError::failed("this team's lead has ended: there is no one to send to")
            })?;
            if to == LEAD {
                return lead.message_lead(to, from, team.name.clone(), message);
            }
            if to == team.name {
                return Err(ToolError::invalid_arguments(format!(
                    "`{to}` is you: send to `lead` or to another teammate by name"
                )));
            }
            lead.revive(&to).await?;
            lead.message_child(to, from, Some(team.name.clone()), message)
        })
    }

    fn stop<'a>(
        &'a self,
        cx: &'a ToolContext,
        id: String,
    ) -> BoxFuture<'a, ToolResult<ChildRecord>> {
        Box::pin(async move {
            let child_id = {
                let mut table = self.table();
                let index = Self::find(&table, &id)?;
                let child = &mut table[index];
                if child.record.status == ChildStatus::Idle {
                    // A teammate between turns: nothing runs, it ends now.
                    child.record.status = ChildStatus::Interrupted;
                    child.record.error = Some("stopped by agent_stop".to_string());
                    child.handle = None;
                    cx.session()
                        .events()
                        .emit(EventBody::AgentFinished(AgentFinishedEvent {
                            child_session_id: child.record.session_id.clone(),
                            record: child.record.clone(),
                        }));
                }
                child.record.session_id.clone()
            };
            loop {
                let ended = self.ended.notified();
                tokio::pin!(ended);
                ended.as_mut().enable();
                if self
                    .running_among(std::slice::from_ref(&child_id))
                    .is_empty()
                {
                    break;
                }
                self.stop_child(&child_id, "stopped by agent_stop");
                tokio::select! {
                    () = &mut ended => {}
                    () = tokio::time::sleep(Duration::from_millis(200)) => {}
                }
            }
            self.deliver(cx, std::slice::from_ref(&child_id));
            let table = self.table();
            Ok(table[Self::find(&table, &child_id)?].record.clone())
        })
    }

    fn list(&self, _cx: &ToolContext) -> ToolResult<AgentListOutput> {
        Ok(AgentListOutput {
            children: self.table().iter().map(Self::record_now).collect(),
        })
    }

    fn task_create(&self, _cx: &ToolContext, task: NewTask) -> ToolResult<TaskCreateOutput> {
        let (home, by) = self.team_home()?;
        home.create_task(&by, task)
            .map(|task| TaskCreateOutput { task })
    }

    fn task_update(&self, _cx: &ToolContext, change: TaskChange) -> ToolResult<TaskUpdateOutput> {
        let (home, by) = self.team_home()?;
        home.update_task(&by, change)
    }

    fn task_list(&self, _cx: &ToolContext) -> ToolResult<TaskListOutput> {
        let (home, _) = self.team_home()?;
        let tasks = home.task_list().clone();
        Ok(TaskListOutput { tasks })
    }
}

impl Children {
    fn task_list(&self) -> parking_lot::MutexGuard<'_, Vec<TaskRecord>> {
        self.tasks.lock()
    }

    /// The children keeping the team's task list (the lead's), and what the team calls this
    /// session: `lead`, or its name for a teammate.
    fn team_home(&self) -> ToolResult<(Arc<Children>, String)> {
        let home = match self.team.get() {
            Some(team) => team.lead.upgrade().map(|lead| (lead, team.name.clone())),
            None => self.me.upgrade().map(|me| (me, LEAD.to_string())),
        };
        home.ok_or_else(|| ToolError::failed("this team's lead has ended: its task list is gone"))
    }

    /// The lead's session, where the team's task events are recorded.
    fn lead_session(&self) -> ToolResult<Arc<Session>> {
        self.setup
            .get()
            .and_then(|setup| setup.session.upgrade())
            .ok_or_else(|| ToolError::failed("the lead's session is not running"))
    }

    /// `name` is `lead` or one of this team's teammates, or an error naming them.
    fn check_member(&self, name: &str) -> ToolResult<()> {
        let table = self.table();
        let teammates: Vec<&str> = table
            .iter()
            .filter(|child| is_teammate(&child.record))
            .filter_map(|child| child.record.name.as_deref())
            .collect();
        if name == LEAD || teammates.contains(&name) {
            return Ok(());
        }
        Err(ToolError::invalid_arguments(match teammates.is_empty() {
            true => format!("no teammate `{name}`: the team has none yet; assign to `{LEAD}`"),
            false => format!(
                "no teammate `{name}`: assign to `{LEAD}` or one of {}",
                teammates.join(", ")
            ),
        }))
    }

    /// Adds a task made by `by` to the list, recording `task.created`.
    fn create_task(&self, by: &str, new: NewTask) -> ToolResult<TaskRecord> {
        if let Some(assignee) = &new.assignee {
            self.check_member(assignee)?;
        }
        let lead = self.lead_session()?;
        let mut tasks = self.task_list();
        let mut blocked_by: Vec<String> = Vec::new();
        for blocker in new.blocked_by {
            if !tasks.iter().any(|task| task.id == blocker) {
                return Err(ToolError::invalid_arguments(format!(
                    "`blockedBy` names task `{blocker}`, which does not exist; {}",
                    known_tasks(&tasks)
                )));
            }
            if !blocked_by.contains(&blocker) {
                blocked_by.push(blocker);
            }
        }
        let now = now();
        let task = TaskRecord {
            id: (tasks.len() + 1).to_string(),
            title: new.title,
            description: new.description,
            status: TaskStatus::Pending,
            assignee: new.assignee,
            blocked_by,
            notes: Vec::new(),
            created_by: by.to_string(),
            created_at: now.clone(),
            updated_at: now,
        };
        // Recorded under the list's lock, so the log's order is the list's.
        lead.events().emit(EventBody::TaskCreated(TaskCreatedEvent {
            task: task.clone(),
            by: by.to_string(),
        }));
        tasks.push(task.clone());
        Ok(task)
    }

    /// Changes a task for `by`, recording `task.updated`.
    fn update_task(&self, by: &str, change: TaskChange) -> ToolResult<TaskUpdateOutput> {
        if let Some(assignee) = &change.assignee {
            self.check_member(assignee)?;
        }
        let lead = self.lead_session()?;
        let mut tasks = self.task_list();
        let Some(index) = tasks.iter().position(|task| task.id == change.id) else {
            return Err(ToolError::invalid_arguments(format!(
                "no task `{}`; {}",
                change.id,
                known_tasks(&tasks)
            )));
        };
        if change.status == Some(TaskStatus::InProgress) {
            let open: Vec<String> = tasks[index]
                .blocked_by
                .iter()
                .filter_map(|id| tasks.iter().find(|task| &task.id == id))
                .filter(|blocker| blocker.status.open())
                .map(|blocker| format!("task {} ({})", blocker.id, blocker.status.as_str()))
                .collect();
            if !open.is_empty() {
                return Err(ToolError::failed(format!(
                    "task {} cannot start: it waits for {}; complete or cancel that first",
                    change.id,
                    open.join(", ")
                )));
            }
        }
        let previous = tasks[index].clone();
        let now = now();
        let task = &mut tasks[index];
        if let Some(status) = change.status {
            task.status = status;
        }
        if let Some(assignee) = change.assignee {
            task.assignee = Some(assignee);
        }
        if let Some(text) = change.note {
            task.notes.push(TaskNote {
                by: by.to_string(),
                text,
                at: now.clone(),
            });
        }
        task.updated_at = now;
        let task = task.clone();
        lead.events().emit(EventBody::TaskUpdated(TaskUpdatedEvent {
            task: task.clone(),
            by: by.to_string(),
        }));
        Ok(TaskUpdateOutput { task, previous })
    }
}

/// The ids of the team's tasks, for an error.
fn known_tasks(tasks: &[TaskRecord]) -> String {
    match tasks.len() {
        0 => "the team has no tasks yet".to_string(),
        count => format!("the team's tasks are 1 to {count}"),
    }
}

/// Now, RFC 3339 UTC.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Children {
    /// Delivers `message` from session `from` (named `from_name`, a teammate) to the child
    /// `to` names: between its steps while it runs; an idle teammate starts a turn for it.
    fn message_child(
        &self,
        to: String,
        from: String,
        from_name: Option<String>,
        message: String,
    ) -> ToolResult<AgentSendOutput> {
        let mut table = self.table();
        let index = Self::find(&table, &to)?;
        let child = &mut table[index];
        if child.record.status.ended() {
            return Err(ToolError::failed(format!(
                "agent {} has ended ({}): it receives no more messages; start a new agent \
                 with what it should know",
                child.record.session_id,
                child.record.status.as_str()
            )));
        }
        let Some(handle) = child.handle.clone() else {
            return Err(ToolError::failed(format!(
                "agent {} runs in another process: it cannot be sent messages from here",
                child.record.session_id
            )));
        };
        let session_id = child.record.session_id.clone();
        handle.deliver(EventBody::AgentMessage(AgentMessageEvent {
            from_session_id: from,
            from_name,
            text: message,
        }));
        if child.record.status == ChildStatus::Running {
            let delivered = match child.in_step {
                true => Delivery::Queued,
                false => Delivery::Now,
            };
            return Ok(AgentSendOutput {
                to,
                session_id,
                delivered,
            });
        }
        // An idle teammate: its next turn answers the message.
        let events = handle.live_events();
        let turn = handle.wake().map_err(|err| {
            ToolError::failed(format!(
                "teammate {session_id} has the message but could not start its turn: {err}"
            ))
        })?;
        child.before_turn = (child.record.steps, child.record.usage);
        child.record.status = ChildStatus::Running;
        child.record.answer = None;
        child.in_step = false;
        drop(table);
        drop(self.follow(&handle, events, turn));
        Ok(AgentSendOutput {
            to,
            session_id,
            delivered: Delivery::Now,
        })
    }

    /// Delivers `message` from teammate `from_name` to the lead: its model reads it between its
    /// steps, or in its next turn.
    fn message_lead(
        &self,
        to: String,
        from: String,
        from_name: String,
        message: String,
    ) -> ToolResult<AgentSendOutput> {
        let setup = self
            .setup
            .get()
            .ok_or_else(|| ToolError::failed("the lead's session is still being built"))?;
        let lead = setup
            .session
            .upgrade()
            .ok_or_else(|| ToolError::failed("the lead's session has ended"))?;
        lead.events()
            .emit(EventBody::AgentMessage(AgentMessageEvent {
                from_session_id: from,
                from_name: Some(from_name),
                text: message,
            }));
        Ok(AgentSendOutput {
            to,
            session_id: setup.session_id.clone(),
            delivered: Delivery::Now,
        })
    }

    /// The ids among `ids` of children still running.
    fn running_among(&self, ids: &[String]) -> Vec<String> {
        self.table()
            .iter()
            .filter(|child| {
                ids.contains(&child.record.session_id)
                    && child.record.status == ChildStatus::Running
            })
            .map(|child| child.record.session_id.clone())
            .collect()
    }
}

/// A place reserved for a child being built; given back when dropped (the child is in the
/// table by then, or failed to start).
struct Reserved<'a>(&'a Children);

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        {
            let mut starting = self.0.starting.lock();
            *starting = starting.saturating_sub(1);
        }
        // A start that failed frees its place for a start waiting for one.
        self.0.ended.notify_waiters();
    }
}

/// Sets `record`'s end from `summary`; an interrupted child's error says `why`.
fn end_record(record: &mut ChildRecord, summary: &TurnSummary, why: &str) {
    record.status = match summary.reason {
        FinishReason::Completed => ChildStatus::Completed,
        FinishReason::MaxSteps => ChildStatus::OutOfBudget,
        FinishReason::Interrupted => ChildStatus::Interrupted,
        FinishReason::MaxTokens | FinishReason::Refused | FinishReason::Error => {
            ChildStatus::Failed
        }
    };
    record.steps = summary.steps;
    record.usage.input_tokens = summary.usage.input_tokens;
    record.usage.output_tokens = summary.usage.output_tokens;
    record.usage.cache_read_tokens = summary.usage.cache_read_tokens;
    record.usage.cache_write_tokens = summary.usage.cache_write_tokens;
    let text = summary.final_text.trim();
    record.answer = (!text.is_empty()).then(|| text.to_string());
    record.error = match record.status {
        ChildStatus::Interrupted => Some(why.to_string()),
        _ => summary.error.clone(),
    };
}

/// A child's record as its `agent.started` describes it, running.
fn started_record(started: &AgentStartedEvent) -> ChildRecord {
    ChildRecord {
        session_id: started.child_session_id.clone(),
        agent: started.agent.clone(),
        description: started.description.clone(),
        name: started.name.clone(),
        background: started.background,
        status: ChildStatus::Running,
        answer: None,
        error: None,
        steps: 0,
        usage: ChildUsage::default(),
        duration_ms: 0,
    }
}

/// A child's ended record, read from its own log: how its (one) turn ended, its steps, tokens,
/// time and last text. A turn without its end was cut off with the process running it.
async fn ended_from_log(runtime: &Runtime, mut record: ChildRecord) -> ChildRecord {
    let events = match crate::runtime::read_all(runtime.store().as_ref(), &record.session_id).await
    {
        Ok(events) => events,
        Err(err) => {
            record.status = ChildStatus::Failed;
            record.error = Some(format!("its session cannot be read: {err}"));
            return record;
        }
    };
    let mut summary = TurnSummary {
        reason: FinishReason::Interrupted,
        steps: 0,
        usage: Usage::default(),
        final_text: String::new(),
        error: None,
    };
    let (mut began, mut ended) = (None, None);
    for event in &events {
        match &event.body {
            EventBody::TurnStarted { .. } => began = Some(event.time.clone()),
            EventBody::StepStarted { step, .. } => {
                summary.steps = *step;
                summary.final_text.clear();
            }
            EventBody::StepTextDelta { text, .. } => summary.final_text.push_str(text),
            EventBody::StepFinished { usage, .. } => {
                summary.usage.input_tokens += usage.input_tokens;
                summary.usage.output_tokens += usage.output_tokens;
                summary.usage.cache_read_tokens += usage.cache_read_tokens;
                summary.usage.cache_write_tokens += usage.cache_write_tokens;
            }
            EventBody::TurnFinished {
                reason, message, ..
            } => {
                summary.reason = *reason;
                summary.error = message.clone();
                ended = Some(event.time.clone());
            }
            _ => {}
        }
    }
    let why = match (&ended, &summary.error) {
        (None, _) => {
            "the process running it stopped before it ended; what it did so far is in its session"
        }
        // Recovery closed the turn the process left open, saying why.
        (Some(_), Some(message)) => message.as_str(),
        (Some(_), None) => "its turn was interrupted",
    }
    .to_string();
    end_record(&mut record, &summary, &why);
    if let (Some(began), Some(ended)) = (
        began,
        ended.or_else(|| events.last().map(|e| e.time.clone())),
    ) {
        record.duration_ms = elapsed_ms(&began, &ended);
    }
    record
}

/// The milliseconds between two RFC 3339 times (0 when either cannot be read).
fn elapsed_ms(from: &str, to: &str) -> u64 {
    match (
        chrono::DateTime::parse_from_rfc3339(from),
        chrono::DateTime::parse_from_rfc3339(to),
    ) {
        (Ok(from), Ok(to)) => u64::try_from((to - from).num_milliseconds()).unwrap_or(0),
        _ => 0,
    }
}

/// What the parent's log records when child `id`'s turn ends as `record` says: a teammate's
/// answer as a message to its lead (it waits for its next), a background child's end as
/// `agent.finished`; nothing for a foreground child (its call's result says it).
fn end_event(id: &str, record: &ChildRecord) -> Option<EventBody> {
    match (&record.status, &record.answer) {
        (ChildStatus::Idle, Some(answer)) => Some(EventBody::AgentMessage(AgentMessageEvent {
            from_session_id: id.to_string(),
            from_name: record.name.clone(),
            text: answer.clone(),
        })),
        (ChildStatus::Idle, None) => None,
        _ if record.background => Some(EventBody::AgentFinished(AgentFinishedEvent {
            child_session_id: id.to_string(),
            record: record.clone(),
        })),
        _ => None,
    }
}

/// The record of a child no longer in its table (never expected: children stay listed).
fn ended_record(id: &str, summary: &TurnSummary) -> ChildRecord {
    ChildRecord {
        session_id: id.to_string(),
        agent: String::new(),
        description: String::new(),
        name: None,
        background: false,
        status: ChildStatus::Failed,
        answer: None,
        error: summary.error.clone(),
        steps: summary.steps,
        usage: ChildUsage {
            input_tokens: summary.usage.input_tokens,
            output_tokens: summary.usage.output_tokens,
            cache_read_tokens: summary.usage.cache_read_tokens,
            cache_write_tokens: summary.usage.cache_write_tokens,
            cost_usd: None,
        },
        duration_ms: 0,
    }
}

/// Whether the child is a teammate: named and started in the background.
fn is_teammate(record: &ChildRecord) -> bool {
    record.name.is_some() && record.background
}

/// Adds one child's tokens to `total`.
fn add_usage(total: &mut ChildUsage, usage: &ChildUsage) {
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.cache_read_tokens += usage.cache_read_tokens;
    total.cache_write_tokens += usage.cache_write_tokens;
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
