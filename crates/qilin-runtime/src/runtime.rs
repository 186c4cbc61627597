//! [`Runtime`]: what the sessions of one process share — the store and the code-mode workers.

use crate::RuntimeError;
use crate::recovery::{Dangling, OpenRun};
use crate::session::{ModelChoice, Resumed, SessionBuilder, SessionHandle, WeakSession};
use parking_lot::Mutex;
use qilin_codemode::{CodeLimits, CodeMode, PoolOptions, WorkerPool};
use qilin_mcp::TrustFile;
use qilin_protocol::{Event, EventBody};
use qilin_sandbox::SandboxHelper;
use qilin_store::{EventStore, StoreError};
use qilin_tool::{DynamicTool, RegistryError, Tool, ToolRegistry, now};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Where the code of `run_code` runs.
#[derive(Clone)]
pub enum CodeSandbox {
    /// In worker processes of the pool, shared by every session of the runtime.
    Workers(WorkerPool),
    /// In this process (tests, benchmarks, embedders without a worker binary).
    InProcess,
}

impl CodeSandbox {
    /// Workers running `binary` (the `qilin` binary, whose hidden `subprocess` command is the
    /// worker).
    pub fn workers(binary: impl Into<PathBuf>) -> Self {
        CodeSandbox::Workers(WorkerPool::new(PoolOptions::new(binary)))
    }

    /// Code mode with `limits` in this sandbox.
    pub fn code_mode(&self, limits: CodeLimits) -> CodeMode {
        match self {
            CodeSandbox::Workers(pool) => CodeMode::workers(pool.clone(), limits),
            CodeSandbox::InProcess => CodeMode::in_process(limits),
        }
    }
}

/// The arguments that make the `qilin` binary the bash sandbox's helper (`qilin sandbox-exec`).
pub const SANDBOX_HELPER_ARGS: &[&str] = &["sandbox-exec"];

impl RuntimeInner {
    fn new(store: Arc<dyn EventStore>, code: CodeSandbox) -> Self {
        RuntimeInner {
            store,
            code,
            sandbox_helper: SandboxHelper::new("qilin", SANDBOX_HELPER_ARGS.iter().copied()),
            trust: None,
            tools: ToolRegistry::new(),
            live: Arc::new(LiveSessions::default()),
        }
    }
}

/// The sessions of one runtime alive in this process, and the hosts told of each new one.
///
/// A session built here (a child an `agent` call started included) must never be run a second
/// time from its log while it lives: resuming or recovering it would append to a log its
/// running turn is still writing.
#[derive(Default)]
struct LiveSessions {
    sessions: Mutex<HashMap<String, WeakSession>>,
    watchers: Mutex<Vec<mpsc::UnboundedSender<SessionHandle>>>,
}

/// The sessions of one process: their store, their code-mode workers, the helper that
/// confines their `bash` commands and the application's own tools. Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<RuntimeInner>,
}

#[derive(Clone)]
struct RuntimeInner {
    store: Arc<dyn EventStore>,
    code: CodeSandbox,
    sandbox_helper: SandboxHelper,
    trust: Option<TrustFile>,
    tools: ToolRegistry,
    live: Arc<LiveSessions>,
}

/// Puts a [`Runtime`] together: its store and code sandbox, and the application's tools every
/// session of it offers beside the built-ins ([`Runtime::builder`]).
#[must_use = "a runtime builder does nothing until `build` is called"]
pub struct RuntimeBuilder {
    inner: RuntimeInner,
    /// The first tool that could not be registered; `build` reports it.
    refused: Option<RegistryError>,
}

impl RuntimeBuilder {
    /// Adds the application's tool `tool`: every session of the runtime has it, as it has the
    /// built-ins, so an agent file mounts it by name under `tools:` (a dual-active tool) and
    /// `run_code` reaches it; its calls pass the same execution layer and record the same
    /// events. A name already taken (a built-in's included, found when a session is built)
    /// or an invalid schema is reported by [`RuntimeBuilder::build`].
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        if self.refused.is_none()
            && let Err(err) = self.inner.tools.register(tool)
        {
            self.refused = Some(err);
        }
        self
    }

    /// Adds every tool of `registry` (see [`RuntimeBuilder::tool`]).
    pub fn tools(mut self, registry: &ToolRegistry) -> Self {
        if self.refused.is_none()
            && let Err(err) = self.inner.tools.extend(registry)
        {
            self.refused = Some(err);
        }
        self
    }

    /// Adds a tool defined at run time — a name, a description, a JSON Schema and an async
    /// handler, as [`DynamicTool::from_fn`] makes it — checked and run like any other: its
    /// schema is compiled here and every call's arguments are validated against it.
    pub fn dynamic_tool(mut self, tool: DynamicTool) -> Self {
        if self.refused.is_none()
            && let Err(err) = self.inner.tools.register_dynamic(tool)
        {
            self.refused = Some(err);
        }
        self
    }

    /// Confines bash commands through `helper` (the host's own binary) instead of
    /// `qilin sandbox-exec` of the `qilin` found on `PATH`.
    pub fn sandbox_helper(mut self, helper: SandboxHelper) -> Self {
        self.inner.sandbox_helper = helper;
        self
    }

    /// Starts the MCP servers of the workspaces `trust` says the user trusted (see
    /// [`Runtime::with_trust_file`]).
    pub fn trust_file(mut self, trust: TrustFile) -> Self {
        self.inner.trust = Some(trust);
        self
    }

    /// The runtime; an error when one of the tools given could not be registered (two with
    /// one name, a name providers refuse, a schema that does not compile).
    pub fn build(self) -> Result<Runtime, RuntimeError> {
        match self.refused {
            Some(err) => Err(RuntimeError::Tools(err)),
            None => Ok(Runtime {
                inner: Arc::new(self.inner),
            }),
        }
    }
}

impl Runtime {
    /// A runtime keeping sessions in `store` and running code in `code`; bash commands are
    /// confined through `qilin sandbox-exec` of the `qilin` found on `PATH` unless
    /// [`Runtime::with_sandbox_helper`] names another. Its sessions have the built-in tools;
    /// [`Runtime::builder`] adds the application's own.
    pub fn new(store: Arc<dyn EventStore>, code: CodeSandbox) -> Self {
        Runtime {
            inner: Arc::new(RuntimeInner::new(store, code)),
        }
    }

    /// A builder of a runtime keeping sessions in `store` and running code in `code`, to which
    /// the application adds its tools: `Runtime::builder(store, code).tool(MyTool).build()?`.
    pub fn builder(store: Arc<dyn EventStore>, code: CodeSandbox) -> RuntimeBuilder {
        RuntimeBuilder {
            inner: RuntimeInner::new(store, code),
            refused: None,
        }
    }

    /// The same runtime confining bash commands through `helper` (the host's own binary).
    pub fn with_sandbox_helper(self, helper: SandboxHelper) -> Self {
        let mut inner = RuntimeInner::clone(&self.inner);
        inner.sandbox_helper = helper;
        Runtime {
            inner: Arc::new(inner),
        }
    }

    /// The same runtime starting the MCP servers of the workspaces `trust` says the user
    /// trusted. Without one, a session whose agent uses servers of a workspace's
    /// `.qilin/mcp.yaml` is refused ([`qilin_mcp::McpError::Untrusted`]).
    pub fn with_trust_file(self, trust: TrustFile) -> Self {
        let mut inner = RuntimeInner::clone(&self.inner);
        inner.trust = Some(trust);
        Runtime {
            inner: Arc::new(inner),
        }
    }

    /// The application's tools, which every session has beside the built-ins (empty unless
    /// given to [`Runtime::builder`]).
    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    /// Lints `path` — a workspace (its skills, agent files and every tool), a skill folder or
    /// an agent file — as `qilin check` does, with the application's tools beside the
    /// built-ins: [`crate::check`] over [`Runtime::tools`].
    pub fn check(&self, path: &Path) -> Result<qilin_check::Report, RuntimeError> {
        crate::check(self.tools(), &[path])
    }

    /// The user's answers about trusting workspaces' MCP servers, when the host keeps them.
    pub fn trust_file(&self) -> Option<&TrustFile> {
        self.inner.trust.as_ref()
    }

    /// The helper that confines bash commands.
    pub fn sandbox_helper(&self) -> &SandboxHelper {
        &self.inner.sandbox_helper
    }

    /// The store the sessions are kept in.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.inner.store
    }

    /// Where `run_code` runs.
    pub fn code_sandbox(&self) -> &CodeSandbox {
        &self.inner.code
    }

    /// A new session working in `workspace`; set its agent and model, then `build` it.
    pub fn session(&self, workspace: impl Into<PathBuf>) -> SessionBuilder {
        SessionBuilder::new(self.clone(), workspace.into())
    }

    /// A stored session, to continue where its log ends: its workspace, agent file and model
    /// come from its `session.started` (the model can be replaced before `build`). Anything
    /// its last process left open is closed first (see [`Runtime::recover`]) — but a turn left
    /// open while `run_code` or a foreground `workflow_run` ran, which the built session
    /// continues: each run is replayed from its call journal, then the turn goes on; and the
    /// background workflow runs left running, which the built session resumes the same way
    /// (see docs/journal.md).
    /// A session alive in this process is not resumed: its handle is [`Runtime::live_session`].
    pub async fn resume(&self, id: &str) -> Result<SessionBuilder, RuntimeError> {
        if self.live_session(id).is_some() {
            return Err(RuntimeError::NotResumable {
                id: id.to_string(),
                reason: "it runs in this process now (a running subagent, or a session a host \
                         runs); use the running session"
                    .to_string(),
            });
        }
        let open_run = self.recover_keeping_run(id).await?;
        let events = read_all(self.store().as_ref(), id).await?;
        let Some(EventBody::SessionStarted(started)) = events.first().map(|e| &e.body) else {
            return Err(RuntimeError::NotResumable {
                id: id.to_string(),
                reason: "its log does not begin with `session.started`".to_string(),
            });
        };
        let builder = self.session(&started.workspace);
        let builder = match (&started.agent.file, started.agent.builtin) {
            (_, true) => builder.builtin_agent(&started.agent.name),
            (Some(agent_file), false) => builder.agent_file(agent_file),
            (None, false) => {
                return Err(RuntimeError::NotResumable {
                    id: id.to_string(),
                    reason: format!(
                        "its agent `{}` did not come from a file, so it cannot be loaded again",
                        started.agent.name
                    ),
                });
            }
        };
        let builder = builder.model(ModelChoice::Spec(started.model.clone()));
        Ok(builder.resuming(Resumed {
            id: id.to_string(),
            agent_hash: started.agent.file_hash.clone(),
            context: started.context.clone(),
            events,
            open_run,
        }))
    }

    /// Closes what the last process of session `id` left open, as [`Runtime::recover`] does,
    /// but for the runs a resumed session replays: a turn left open while `run_code` or a
    /// foreground `workflow_run` ran (that turn, its step and its runs stay open, and are
    /// returned), and the nested calls of background workflow runs left running.
    async fn recover_keeping_run(&self, id: &str) -> Result<Option<OpenRun>, RuntimeError> {
        if self.live_session(id).is_some() {
            return Ok(None);
        }
        let events = read_all(self.store().as_ref(), id).await?;
        let dangling = Dangling::of(&events);
        let open_run = dangling.open_run();
        let background =
            qilin_workflows::WorkflowRuns::from_events(&events).waiting_background_calls();
        if open_run.is_none() && background.is_empty() {
            self.recover(id).await?;
            return Ok(None);
        }
        let mut closing = dangling.closing_events_resuming(open_run.as_ref(), &background);
        if open_run.is_none() && !closing.is_empty() {
            // A goal its process left active waits for a person to resume it.
            closing.extend(crate::goals::restart_pause(&events));
        }
        if !closing.is_empty() {
            let head = events.last().map_or(0, |event| event.seq);
            let time = now();
            let appended: Vec<Event> = (head + 1..)
                .zip(closing)
                .map(|(seq, body)| Event {
                    seq,
                    time: time.clone(),
                    body,
                })
                .collect();
            self.store().append(id, &appended).await?;
        }
        if let Some(open_run) = &open_run {
            tracing::info!(
                session = id,
                turn = %open_run.turn_id,
                "a turn left open while code ran is continued by replaying its journal"
            );
        }
        if !background.is_empty() {
            tracing::info!(
                session = id,
                runs = background.len(),
                "background workflow runs left running are resumed by replaying their journals"
            );
        }
        Ok(open_run)
    }

    /// Whether session `id`'s last process left runs to replay: a turn open while `run_code`
    /// or a foreground `workflow_run` ran, or a background workflow run without its end. A
    /// session resumed continues them (see [`Runtime::resume`]) rather than closing them.
    pub async fn has_open_run(&self, id: &str) -> Result<bool, RuntimeError> {
        let events = read_all(self.store().as_ref(), id).await?;
        Ok(Dangling::of(&events).open_run().is_some()
            || !qilin_workflows::WorkflowRuns::from_events(&events)
                .waiting_background_calls()
                .is_empty())
    }

    /// Closes what the process that last ran session `id` left open — calls without a result,
    /// requests without an answer, a step or turn without its end — by appending their ends,
    /// as interrupted. Returns how many events it appended (0 for a session closed cleanly).
    /// A host calls it for every session of [`EventStore::running_sessions`] when it starts.
    /// A session alive in this process is left alone (0): what is open in its log is running.
    pub async fn recover(&self, id: &str) -> Result<usize, RuntimeError> {
        if self.live_session(id).is_some() {
            return Ok(0);
        }
        let store = self.store();
        let events = read_all(store.as_ref(), id).await?;
        let mut closing = Dangling::of(&events).closing_events();
        if !closing.is_empty() {
            // A goal its process left active waits for a person to resume it.
            closing.extend(crate::goals::restart_pause(&events));
        }
        if closing.is_empty() {
            return Ok(0);
        }
        let head = events.last().map_or(0, |event| event.seq);
        let time = now();
        let appended: Vec<Event> = (head + 1..)
            .zip(closing)
            .map(|(seq, body)| Event {
                seq,
                time: time.clone(),
                body,
            })
            .collect();
        store.append(id, &appended).await?;
        tracing::info!(
            session = id,
            closed = appended.len(),
            "closed what the last process left open"
        );
        Ok(appended.len())
    }

    /// Recovers every session whose last turn did not finish (see [`Runtime::recover`]).
    pub async fn recover_all(&self) -> Result<usize, RuntimeError> {
        let mut closed = 0;
        for session in self.store().running_sessions().await? {
            closed += self.recover(&session.id).await?;
        }
        Ok(closed)
    }
}

impl Runtime {
    /// Session `id`, when it is alive in this process: built by this runtime (by a host, or as
    /// a child of another session), neither closed nor dropped.
    pub fn live_session(&self, id: &str) -> Option<SessionHandle> {
        let mut sessions = self.inner.live.sessions.lock();
        let handle = sessions.get(id).and_then(WeakSession::upgrade);
        if handle.is_none() {
            sessions.remove(id);
        }
        handle
    }

    /// Every session this runtime builds from now on, children included, as it is built: how
    /// a host learns of the sessions it did not build itself, to hold their leases.
    pub fn watch_new_sessions(&self) -> mpsc::UnboundedReceiver<SessionHandle> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.inner.live.watchers.lock().push(sender);
        receiver
    }

    /// Stops counting `handle`'s session alive (it was closed).
    pub(crate) fn forget_live(&self, handle: &SessionHandle) {
        let mut sessions = self.inner.live.sessions.lock();
        if sessions
            .get(handle.id())
            .is_some_and(|session| session.is(handle))
        {
            sessions.remove(handle.id());
        }
    }

    /// Records a session just built as alive, and tells the watchers.
    pub(crate) fn register_live(&self, handle: &SessionHandle) {
        {
            let mut sessions = self.inner.live.sessions.lock();
            sessions.retain(|_, session| session.is_alive());
            sessions.insert(handle.id().to_string(), handle.downgrade());
        }
        self.inner
            .live
            .watchers
            .lock()
            .retain(|watcher| watcher.send(handle.clone()).is_ok());
    }
}

/// Every stored event of session `id`.
pub(crate) async fn read_all(store: &dyn EventStore, id: &str) -> Result<Vec<Event>, RuntimeError> {
    read_after(store, id, 0).await
}

/// Every stored event of session `id` after `seq`.
pub(crate) async fn read_after(
    store: &dyn EventStore,
    id: &str,
    seq: u64,
) -> Result<Vec<Event>, RuntimeError> {
    const PAGE: usize = 10_000;
    if store.session(id).await?.is_none() {
        return Err(RuntimeError::UnknownSession(id.to_string()));
    }
    let mut events = Vec::new();
    loop {
        let after = events.last().map_or(seq, |event: &Event| event.seq);
        let page = match store.read(id, after, PAGE).await {
            Ok(page) => page,
            Err(StoreError::UnknownSession(_)) => {
                return Err(RuntimeError::UnknownSession(id.to_string()));
            }
            Err(err) => return Err(err.into()),
        };
        let full = page.len() == PAGE;
        events.extend(page);
        if !full {
            return Ok(events);
        }
    }
}
