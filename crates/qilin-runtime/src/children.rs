//! Subagents: the children of a session, built through [`crate::SessionBuilder`] like any
//! session and hosted here — the runtime's side of `qilin_subagents::Subagents`.
//!
//! A child is a session of the same store and workspace, linked to its parent
//! (`parentSessionId`, `parentCallId`), whose one turn is the parent's prompt. The bounds are
//! the runtime's: how deep children may nest, how many may run at once, the steps of a child's
//! turn, its tools (a subset of the parent's), its sandbox (never wider than the parent's) and
//! its review (the parent's rules apply too).

use crate::session::ModelChoice;
use crate::{Runtime, SessionHandle};
use futures_util::future::BoxFuture;
use qilin_agent::TurnSummary;
use qilin_protocol::agents::{
    AgentDeliveredEvent, AgentFinishedEvent, AgentListOutput, AgentMessageEvent, AgentSendOutput,
    AgentStartedEvent, AgentWaitOutput, ChildRecord, ChildStatus, ChildUsage, Delivery,
};
use qilin_protocol::{Event, EventBody, FinishReason, Usage};
use qilin_sandbox::{SandboxMode, SandboxSettings};
use qilin_skill::{AgentFile, CodeTools};
use qilin_subagents::{ChildRequest, Subagents};
use qilin_tool::{
    ReviewDecision, ReviewRequest, Reviewer, Session, ToolContext, ToolError, ToolResult,
};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};
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
}

/// One child, as its parent sees it.
struct Child {
    record: ChildRecord,
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
    /// Woken whenever a child ends.
    ended: Notify,
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
        })
    }

    /// Completes the service once its session is built.
    pub(crate) fn set_up(&self, setup: ParentSetup) {
        let _ = self.setup.set(setup);
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Vec<Child>> {
        self.table
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
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
                    let record = ended_from_log(runtime, started_record(&started)).await;
                    if started.background && !delivered {
                        to_record.push(EventBody::AgentFinished(AgentFinishedEvent {
                            child_session_id: id.clone(),
                            record: record.clone(),
                        }));
                    }
                    (record, None)
                }
            };
            self.table().push(Child {
                record,
                handle: running.as_ref().map(|(handle, _)| handle.clone()),
                started: Instant::now(),
                delivered,
                in_step: false,
                stopped_by: None,
            });
            if let Some((handle, turn)) = running {
                // Nobody waits on a foreground child taken back: its call ended with the
                // process that made it.
                drop(self.follow(&handle, turn));
            }
        }
        to_record
    }

    /// Follows child `handle`'s `turn` (its steps and usage) until it ends, then records its
    /// end — for a background child, `agent.finished` in the parent's log — and wakes the
    /// waiters. The receiver gets its ended record.
    fn follow(
        &self,
        handle: &SessionHandle,
        turn: crate::TurnHandle,
    ) -> tokio::sync::oneshot::Receiver<ChildRecord> {
        let child_id = handle.id().to_string();
        let mut events = handle.live_events();
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<ChildRecord>();
        let parent = self
            .setup
            .get()
            .map_or_else(Weak::new, |setup| setup.session.clone());
        let children = self.me.clone();
        tokio::spawn(async move {
            let follow = async {
                while let Some(event) = events.recv().await {
                    let Some(children) = children.upgrade() else {
                        return;
                    };
                    children.observe(&child_id, &event.body);
                    if matches!(event.body, EventBody::TurnFinished { .. }) {
                        return;
                    }
                }
            };
            let (summary, ()) = tokio::join!(turn.finished(), follow);
            let Some(children) = children.upgrade() else {
                return;
            };
            let record = children.finish(&child_id, &summary);
            if record.background
                && let Some(parent) = parent.upgrade()
            {
                parent
                    .events()
                    .emit(EventBody::AgentFinished(AgentFinishedEvent {
                        child_session_id: child_id.clone(),
                        record: record.clone(),
                    }));
            }
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

    /// Where to find agent `name`: `WORKSPACE/NAME.agent`, `WORKSPACE/.qilin/agents/NAME.agent`,
    /// then the built-in agents.
    fn agent_source(setup: &ParentSetup, name: &str) -> ToolResult<crate::AgentSource> {
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
        if !plain {
            return Err(ToolError::invalid_arguments(format!(
                "`{name}` is not an agent name: give a name of letters, digits, `-` and `_` \
                 (`explore`, `general`, or a workspace's NAME.agent)"
            )));
        }
        for path in [
            setup.workspace.join(format!("{name}.agent")),
            setup
                .workspace
                .join(".qilin")
                .join("agents")
                .join(format!("{name}.agent")),
        ] {
            if path.is_file() {
                return Ok(crate::AgentSource::File(path));
            }
        }
        if crate::builtin_agent(name).is_some() && name != crate::TOOLS_AGENT {
            return Ok(crate::AgentSource::Builtin(name.to_string()));
        }
        Err(ToolError::invalid_arguments(format!(
            "no agent `{name}`: not {name}.agent in the workspace (or .qilin/agents/), nor a \
             built-in agent ({})",
            crate::builtin_agents()
                .filter(|agent| *agent != crate::TOOLS_AGENT)
                .collect::<Vec<_>>()
                .join(", ")
        )))
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
        let source = Self::agent_source(setup, &request.agent)?;
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
                handle: Some(handle.clone()),
                started: Instant::now(),
                delivered: false,
                in_step: false,
                stopped_by: None,
            });
            drop(reserved);
        }
        // Follow the child's steps (usage so far, whether a step is open) until its turn ends.
        let done_rx = self.follow(&handle, turn);
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
        let mut starting = self
            .starting
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if running + *starting >= self.limits.max_running {
            return None;
        }
        *starting += 1;
        Some(Reserved(self))
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
    fn finish(&self, id: &str, summary: &TurnSummary) -> ChildRecord {
        let mut table = self.table();
        let Some(child) = table.iter_mut().find(|c| c.record.session_id == id) else {
            return ended_record(id, summary);
        };
        end_record(
            &mut child.record,
            summary,
            child.stopped_by.unwrap_or("its turn was interrupted"),
        );
        child.record.duration_ms = millis(child.started.elapsed());
        child.in_step = false;
        child.record.clone()
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
            let table = self.table();
            let child = &table[Self::find(&table, &to)?];
            if child.record.status.ended() {
                return Err(ToolError::failed(format!(
                    "agent {} has ended ({}): it receives no more messages; start a new agent                      with what it should know",
                    child.record.session_id,
                    child.record.status.as_str()
                )));
            }
            let delivered = match child.in_step {
                true => Delivery::Queued,
                false => Delivery::Now,
            };
            let Some(handle) = &child.handle else {
                return Err(ToolError::failed(format!(
                    "agent {} runs in another process: it cannot be sent messages from here",
                    child.record.session_id
                )));
            };
            handle.deliver(EventBody::AgentMessage(AgentMessageEvent {
                from_session_id: cx.session().id().to_string(),
                from_name: None,
                text: message,
            }));
            Ok(AgentSendOutput {
                to,
                session_id: child.record.session_id.clone(),
                delivered,
            })
        })
    }

    fn stop<'a>(
        &'a self,
        cx: &'a ToolContext,
        id: String,
    ) -> BoxFuture<'a, ToolResult<ChildRecord>> {
        Box::pin(async move {
            let child_id = {
                let table = self.table();
                table[Self::find(&table, &id)?].record.session_id.clone()
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
}

impl Children {
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
            let mut starting = self
                .0
                .starting
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
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
