use crate::live::LiveOutput;
use crate::{EventLog, Executor, RequestOutcome, Requests, WaitingCall};
use parking_lot::Mutex;
use qilin_protocol::RequestAsk;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Host services a tool may need beyond its arguments (a todo store, a question answerer,
/// a job table), looked up by type.
#[derive(Default, Clone)]
pub struct Services {
    by_type: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl Services {
    /// Adds (or replaces) the service of type `T`.
    pub fn insert<T: Any + Send + Sync>(&mut self, service: Arc<T>) {
        self.by_type.insert(TypeId::of::<T>(), service);
    }

    /// The service of type `T`, when the host provided one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.by_type
            .get(&TypeId::of::<T>())
            .and_then(|service| Arc::clone(service).downcast::<T>().ok())
    }
}

/// One conversation's shared state: its workspace, its data folder, its event log, its open
/// requests, the host's services, and the turn running now.
pub struct Session {
    id: String,
    workspace: PathBuf,
    data_dir: PathBuf,
    events: EventLog,
    requests: Requests,
    services: Services,
    turns: Mutex<TurnState>,
}

/// The session's prompts so far and the turn running now.
#[derive(Default)]
struct TurnState {
    /// Every prompt of the session, oldest first.
    prompts: Vec<String>,
    /// The running turn's id and what interrupts it.
    running: Option<(String, CancellationToken)>,
    /// Why the running turn was stopped, when something other than a person stopped it.
    stop_message: Option<String>,
}

impl Session {
    /// A session working in `workspace` and keeping its files (spilled outputs) in `data_dir`.
    pub fn new(
        id: impl Into<String>,
        workspace: impl Into<PathBuf>,
        data_dir: impl Into<PathBuf>,
    ) -> Self {
        Session {
            id: id.into(),
            workspace: workspace.into(),
            data_dir: data_dir.into(),
            events: EventLog::new(),
            requests: Requests::unattended(),
            services: Services::default(),
            turns: Mutex::default(),
        }
    }

    /// The same session with its event log continuing after `seq` (a resumed session).
    pub fn continuing_after(mut self, seq: u64) -> Self {
        self.events = EventLog::continuing_after(seq);
        self
    }

    /// The same session with `requests` deciding who answers approvals and questions
    /// ([`Requests::unattended`] by default: no one).
    pub fn with_requests(mut self, requests: Requests) -> Self {
        self.requests = requests;
        self
    }

    /// The same session with host services attached.
    pub fn with_services(mut self, services: Services) -> Self {
        self.services = services;
        self
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The folder tools work in.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The folder the session keeps its own files in.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Where the whole of one too-long output of call `call_id` is kept; `label` tells apart
    /// several outputs of one call (empty for the call's own result).
    pub fn spill_path(&self, call_id: &str, label: &str) -> PathBuf {
        let mut name: String = call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if !label.is_empty() {
            name.push('-');
            name.push_str(label);
        }
        self.data_dir.join("spill").join(format!("{name}.txt"))
    }

    /// Where the whole structured output of call `call_id` is saved when the event log keeps
    /// it cut (see [`crate::OutputCap::for_the_log`]).
    pub fn logged_output_path(&self, call_id: &str) -> PathBuf {
        self.spill_path(call_id, "output").with_extension("json")
    }

    /// The session's event log.
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The host services.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// The session's requests: the approvals and questions waiting for a person.
    pub fn requests(&self) -> &Requests {
        &self.requests
    }

    fn turns(&self) -> parking_lot::MutexGuard<'_, TurnState> {
        self.turns.lock()
    }

    /// A turn of `prompt` starts: `cancel` interrupts it (see [`Session::stop_turn`]).
    pub fn begin_turn(&self, turn_id: &str, prompt: &str, cancel: CancellationToken) {
        let mut turns = self.turns();
        turns.prompts.push(prompt.to_string());
        turns.running = Some((turn_id.to_string(), cancel));
        turns.stop_message = None;
    }

    /// The running turn ended.
    pub fn end_turn(&self) {
        self.turns().running = None;
    }

    /// The id of the turn running now, if one is.
    pub fn current_turn(&self) -> Option<String> {
        self.turns().running.as_ref().map(|(id, _)| id.clone())
    }

    /// Interrupts the running turn, keeping `message` as the reason its end reports. Returns
    /// false when no turn runs.
    pub fn stop_turn(&self, message: String) -> bool {
        let mut turns = self.turns();
        let Some((_, cancel)) = &turns.running else {
            return false;
        };
        cancel.cancel();
        turns.stop_message = Some(message);
        true
    }

    /// Why the running turn was stopped by [`Session::stop_turn`], taken once.
    pub fn take_stop_message(&self) -> Option<String> {
        self.turns().stop_message.take()
    }

    /// Every prompt of the session so far, oldest first.
    pub fn prompts(&self) -> Vec<String> {
        self.turns().prompts.clone()
    }

    /// Gives back the prompts a resumed session's log records, before its first new turn.
    pub fn restore_prompts(&self, prompts: impl IntoIterator<Item = String>) {
        let mut turns = self.turns();
        let mut restored: Vec<String> = prompts.into_iter().collect();
        restored.append(&mut turns.prompts);
        turns.prompts = restored;
    }
}

/// The time a call may still run: its limit counts from when it was approved, and stops
/// while the call waits for a person (a question).
pub(crate) struct CallClock {
    limit: Option<Duration>,
    state: Mutex<ClockState>,
    changed: Notify,
}

struct ClockState {
    started: Instant,
    waited: Duration,
    waiting_since: Option<Instant>,
}

impl CallClock {
    /// A clock started now, ending the call after `limit` of running time.
    pub(crate) fn start(limit: Option<Duration>) -> Self {
        CallClock {
            limit,
            state: Mutex::new(ClockState {
                started: Instant::now(),
                waited: Duration::ZERO,
                waiting_since: None,
            }),
            changed: Notify::new(),
        }
    }

    fn state(&self) -> parking_lot::MutexGuard<'_, ClockState> {
        self.state.lock()
    }

    /// When the call's time runs out; `None` without a limit or while the call waits.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let state = self.state();
        match (self.limit, state.waiting_since) {
            (Some(limit), None) => Some(state.started + state.waited + limit),
            _ => None,
        }
    }

    /// The call's limit.
    pub(crate) fn limit(&self) -> Option<Duration> {
        self.limit
    }

    fn pause(&self) {
        self.state().waiting_since.get_or_insert_with(Instant::now);
        self.changed.notify_waiters();
    }

    fn resume(&self) {
        {
            let mut state = self.state();
            if let Some(since) = state.waiting_since.take() {
                state.waited += since.elapsed();
            }
        }
        self.changed.notify_waiters();
    }

    /// Resolves when the call's running time is used up.
    pub(crate) async fn expired(&self) {
        loop {
            let changed = self.changed.notified();
            match self.deadline() {
                Some(deadline) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(deadline) => {
                            if self.deadline().is_some_and(|d| d <= Instant::now()) {
                                return;
                            }
                        }
                        () = changed => {}
                    }
                }
                None if self.limit.is_none() => std::future::pending::<()>().await,
                None => changed.await,
            }
        }
    }
}

/// What a running call can see of the runtime: its identity, its deadline and cancellation,
/// the session, and the executor for calls it makes itself (code mode).
#[derive(Clone)]
pub struct ToolContext {
    pub(crate) call_id: String,
    pub(crate) parent_call_id: Option<String>,
    pub(crate) tool_name: String,
    pub(crate) cancel: CancellationToken,
    pub(crate) clock: Arc<CallClock>,
    pub(crate) executor: Executor,
    pub(crate) live: Arc<LiveOutput>,
}

impl ToolContext {
    /// The id of this call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The `run_code` call this call was made from, for a code-mode call.
    pub fn parent_call_id(&self) -> Option<&str> {
        self.parent_call_id.as_deref()
    }

    /// Cancelled when the user interrupts; long-running tools stop promptly on it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// When the execution layer will end the call with `TIMEOUT`, if it has a deadline (none
    /// while the call waits for a person).
    pub fn deadline(&self) -> Option<Instant> {
        self.clock.deadline()
    }

    /// Asks a person (the `question` tool): records `request.opened` for this call and waits
    /// for the answer, or for the call's cancellation. The call's time limit stops meanwhile.
    pub async fn ask(&self, ask: RequestAsk) -> RequestOutcome {
        self.clock.pause();
        let session = self.session();
        let outcome = session
            .requests()
            .ask(
                session.events(),
                WaitingCall {
                    call_id: &self.call_id,
                    parent_call_id: self.parent_call_id.as_deref(),
                    tool_name: &self.tool_name,
                },
                ask,
                &self.cancel,
            )
            .await;
        self.clock.resume();
        outcome
    }

    /// The session this call belongs to.
    pub fn session(&self) -> &Session {
        self.executor.session()
    }

    /// The folder tools work in.
    pub fn workspace(&self) -> &Path {
        self.session().workspace()
    }

    /// Where the whole of one of this call's too-long outputs is kept (see
    /// [`Session::spill_path`]).
    pub fn spill_path(&self, label: &str) -> PathBuf {
        self.session().spill_path(&self.call_id, label)
    }

    /// The host service of type `T`, when provided.
    pub fn service<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.session().services().get::<T>()
    }

    /// The executor, for a tool that dispatches calls of its own (code mode).
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Reports live output of this call. It reaches the log as `tool.progress` events,
    /// gathered into few events and bounded per call (see [`qilin_protocol::live`]): a call
    /// may report every byte it prints, however much; the log keeps its start, glimpses of
    /// its latest output and its end, and counts what it leaves out. Output reported after
    /// the call ended is dropped.
    pub fn progress(&self, text: impl AsRef<str>) {
        self.live.push(self.session().events(), text.as_ref());
    }
}
