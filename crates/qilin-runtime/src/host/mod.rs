//! [`SessionHost`]: the sessions one process runs, and how a stored session comes to run there
//! (leases, idle close, recovery, per-session locks, the live trees, the command relay).

mod schedules;
mod tree;

pub use schedules::{
    Clock, DEFAULT_RUN_BUDGET, DEFAULT_RUN_TOKENS, SchedulerSettings, SystemClock, schedule_agent,
    schedule_service,
};
pub use tree::LiveTree;

use crate::{ModelChoice, Runtime, RuntimeError, SessionBuilder, SessionHandle};
use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use qilin_protocol::RequestResolvedEvent;
use qilin_store::{
    CommandRelay, EventStore, Lease, RelayError, RelayHandler, SessionInfo, StoreError,
};
use qilin_tool::{RequestReply, ResolveError, ended_as};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tree::LiveTrees;

/// How long leases last and hosted sessions stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTiming {
    /// How long a lease lasts unless renewed; renewed every third of it.
    pub ttl: Duration,
    /// A hosted session with no turn running and nothing waiting is closed (its lease given
    /// up) after being idle this long; it is resumed again when next needed.
    pub idle_close: Duration,
}

impl Default for LeaseTiming {
    /// Leases of 30 s; sessions idle for 15 min closed.
    fn default() -> Self {
        LeaseTiming {
            ttl: Duration::from_secs(30),
            idle_close: Duration::from_secs(15 * 60),
        }
    }
}

/// Where a session runs.
pub enum Placement {
    /// Here.
    Here(SessionHandle),
    /// In the process named, which holds its lease.
    Elsewhere(String),
}

/// Why the host could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No stored session has this id.
    #[error("no session `{0}`")]
    UnknownSession(String),
    /// Another process runs the session (it holds the lease).
    #[error("session `{session}` runs in another process (`{owner}`)")]
    OwnedElsewhere {
        /// The session.
        session: String,
        /// The process holding its lease.
        owner: String,
    },
    /// A command for a session another process runs found no relay: the store is not shared
    /// ([`SessionHost::connect_relay`] connects one).
    #[error(
        "session `{session}` runs in another process (`{owner}`) and no relay reaches it; ask that process"
    )]
    NoRelay {
        /// The session.
        session: String,
        /// The process holding its lease.
        owner: String,
    },
    /// A relayed command gave no outcome.
    #[error(transparent)]
    Relay(#[from] RelayError),
    /// An answer to a request was refused.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// Building, resuming, recovering or closing a session failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Prepares the builder of a session the host resumes (who answers its requests, its sandbox,
/// services), given the builder [`Runtime::resume`] made with the session's recorded model.
type PrepareResume = Arc<dyn Fn(SessionBuilder) -> SessionBuilder + Send + Sync>;

/// The sessions one process runs, and how a stored session comes to run there.
///
/// Every host that runs many sessions — the server, and the subagents, schedules and workflows
/// standing on the runtime — hosts them through a `SessionHost`:
///
/// - **Leases.** A session runs in one process at a time: the one holding its lease in the
///   store. [`SessionHost::create`] builds a session and takes its lease;
///   [`SessionHost::open`] finds where a session runs ([`Placement`]), resuming a stored session
///   that runs nowhere (after a restart, or after its process died and its lease ran out) here.
///   A hosted session's lease is renewed every third of [`LeaseTiming::ttl`]; when another
///   process took it meanwhile, the session stops running here.
/// - **Idle close.** A hosted session with no turn, child, loop or workflow run going, nothing
///   waiting and nothing new for [`LeaseTiming::idle_close`] is closed and its lease given up;
///   the next `open` resumes it.
/// - **Recovery.** [`SessionHost::recover_abandoned`] closes, as interrupted, what sessions
///   nobody runs left open (their process died), and resumes here the sessions whose loops or
///   background workflow runs were cut; [`SessionHost::watch_abandoned`] does so every lease
///   period.
/// - **Per-session locks.** Opening, closing, deleting and recovering one session never
///   overlap, so a session is resumed once however many callers ask for it at the same time.
/// - **The live tree.** [`SessionHost::tree`] reads a session's conversation tree
///   ([`LiveTree`]) kept folded for the sessions looked at lately, so a snapshot of a long
///   session reads only the events stored since the last look — for any session of the store,
///   hosted here or not.
/// - **Commands for other processes.** With a store several processes share,
///   [`SessionHost::connect_relay`] connects the store's [`CommandRelay`]: a command for a
///   session another process runs is [forwarded](SessionHost::forward) to it, and the commands
///   other processes send here are run by the host's handler. What a command is, the host
///   decides (the store carries text).
///
/// [`SessionHost::resolve`] answers a request of a hosted session and, when the request is not
/// open here, says from the log how it ended.
///
/// Cheap to clone; every clone is the same host.
#[derive(Clone)]
pub struct SessionHost {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    owner: String,
    timing: LeaseTiming,
    prepare_resume: PrepareResume,
    hosted: Mutex<HashMap<String, Hosted>>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    trees: LiveTrees,
    relay: OnceLock<Arc<dyn CommandRelay>>,
    /// The sessions recovery resumed to take up a loop or workflow run, with their log's head
    /// then: one whose head has not moved since is not resumed again (its resumption failed,
    /// or left the run as it was), so a broken session is not rebuilt at every sweep.
    taken_up: Mutex<HashMap<String, u64>>,
}

struct Hosted {
    handle: SessionHandle,
    keeper: JoinHandle<()>,
}

impl SessionHost {
    /// The sessions of a process named `owner` (unique among the processes sharing the store:
    /// its lease owner name), running on `runtime`, with leases timed by `timing`.
    /// `prepare_resume` finishes the builder of each session resumed here (a server's sessions
    /// are attended, say).
    pub fn new(
        runtime: Runtime,
        owner: impl Into<String>,
        timing: LeaseTiming,
        prepare_resume: impl Fn(SessionBuilder) -> SessionBuilder + Send + Sync + 'static,
    ) -> Self {
        SessionHost {
            inner: Arc::new(Inner {
                runtime,
                owner: owner.into(),
                timing,
                prepare_resume: Arc::new(prepare_resume),
                hosted: Mutex::new(HashMap::new()),
                locks: Mutex::new(HashMap::new()),
                trees: LiveTrees::default(),
                relay: OnceLock::new(),
                taken_up: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The runtime the sessions run on.
    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        self.inner.runtime.store()
    }

    /// This process's name as a lease owner.
    pub fn owner(&self) -> &str {
        &self.inner.owner
    }

    /// How long leases last and hosted sessions stay.
    pub fn timing(&self) -> LeaseTiming {
        self.inner.timing
    }

    /// The session `id` if it runs here.
    pub fn hosted(&self, id: &str) -> Option<SessionHandle> {
        self.inner
            .hosted
            .lock()
            .get(id)
            .map(|hosted| hosted.handle.clone())
    }

    /// How many sessions run here.
    pub fn hosted_count(&self) -> usize {
        self.inner.hosted.lock().len()
    }

    /// Builds a new session from `builder` and runs it here, holding its lease.
    pub async fn create(&self, builder: SessionBuilder) -> Result<SessionHandle, HostError> {
        let handle = builder.build().await?;
        let id = handle.id().to_string();
        let guard = self.lock_id(&id).await;
        let lease = self
            .store()
            .acquire_lease(&id, &self.inner.owner, self.inner.timing.ttl)
            .await;
        match lease {
            Ok(Lease::Acquired) => {
                self.host(handle.clone());
                drop(guard);
                Ok(handle)
            }
            Ok(Lease::HeldBy { owner }) => {
                let _ = handle.close().await;
                Err(HostError::OwnedElsewhere { session: id, owner })
            }
            Err(err) => {
                let _ = handle.close().await;
                Err(err.into())
            }
        }
    }

    /// Where session `id` runs: here (resumed here when it ran nowhere), or elsewhere.
    pub async fn open(&self, id: &str) -> Result<Placement, HostError> {
        if let Some(handle) = self.hosted(id) {
            return Ok(Placement::Here(handle));
        }
        let _guard = self.lock_id(id).await;
        if let Some(handle) = self.hosted(id) {
            return Ok(Placement::Here(handle));
        }
        // A session alive in this process that no host holds (a subagent) is held, not
        // resumed a second time.
        if let Some(handle) = self.inner.runtime.live_session(id) {
            return match self.hold(handle.clone()).await {
                Ok(()) => Ok(Placement::Here(handle)),
                Err(HostError::OwnedElsewhere { owner, .. }) => Ok(Placement::Elsewhere(owner)),
                Err(err) => Err(err),
            };
        }
        let store = self.store();
        let Some(info) = store.session(id).await? else {
            return Err(HostError::UnknownSession(id.to_string()));
        };
        match store
            .acquire_lease(id, &self.inner.owner, self.inner.timing.ttl)
            .await?
        {
            Lease::HeldBy { owner } => return Ok(Placement::Elsewhere(owner)),
            Lease::Acquired => {}
        }
        let resumed = self
            .resume(id, &info.model, Path::new(&info.workspace))
            .await;
        match resumed {
            Ok(handle) => {
                self.host(handle.clone());
                Ok(Placement::Here(handle))
            }
            Err(err) => {
                let _ = store.release_lease(id, &self.inner.owner).await;
                Err(err)
            }
        }
    }

    async fn resume(
        &self,
        id: &str,
        model: &str,
        workspace: &Path,
    ) -> Result<SessionHandle, HostError> {
        let builder = self.inner.runtime.resume(id).await?;
        let builder = builder.model(workspace_model(workspace, model));
        let handle = (self.inner.prepare_resume)(builder).build().await?;
        tracing::info!(session = id, "resumed the session in this process");
        Ok(handle)
    }

    /// Hosts `handle`, a session alive here that no host holds yet (a subagent its parent
    /// built), taking its lease; an error when another process holds that lease.
    async fn hold(&self, handle: SessionHandle) -> Result<(), HostError> {
        let id = handle.id().to_string();
        if self.hosted(&id).is_some() {
            return Ok(());
        }
        match self
            .store()
            .acquire_lease(&id, &self.inner.owner, self.inner.timing.ttl)
            .await?
        {
            Lease::Acquired => {
                self.host(handle);
                Ok(())
            }
            Lease::HeldBy { owner } => Err(HostError::OwnedElsewhere { session: id, owner }),
        }
    }

    /// Starts hosting `handle`: keeps its lease until it is closed.
    fn host(&self, handle: SessionHandle) {
        let id = handle.id().to_string();
        let keeper = tokio::spawn(keep(Arc::downgrade(&self.inner), handle.clone()));
        let previous = self
            .inner
            .hosted
            .lock()
            .insert(id, Hosted { handle, keeper });
        if let Some(previous) = previous {
            previous.keeper.abort();
        }
    }

    /// Closes session `id` if it runs here: interrupts its turn, flushes its log, and gives
    /// its lease up. Returns whether it ran here.
    pub async fn close(&self, id: &str) -> bool {
        let _guard = self.lock_id(id).await;
        let hosted = self.inner.hosted.lock().remove(id);
        let Some(hosted) = hosted else {
            return false;
        };
        hosted.keeper.abort();
        self.inner.stop(id, &hosted.handle, true).await;
        true
    }

    /// Deletes session `id` and forgets its tree: closes it if it runs here; refuses while
    /// another process runs it.
    pub async fn delete(&self, id: &str) -> Result<(), HostError> {
        self.close(id).await;
        let _guard = self.lock_id(id).await;
        let store = self.store();
        if store.session(id).await?.is_none() {
            return Err(HostError::UnknownSession(id.to_string()));
        }
        match store
            .acquire_lease(id, &self.inner.owner, self.inner.timing.ttl)
            .await?
        {
            Lease::HeldBy { owner } => Err(HostError::OwnedElsewhere {
                session: id.to_string(),
                owner,
            }),
            Lease::Acquired => {
                store.delete_session(id).await?;
                self.inner.trees.forget(id);
                Ok(())
            }
        }
    }

    /// Closes every session running here (their turns interrupted, their logs flushed, their
    /// leases given up).
    pub async fn shutdown(&self) {
        let hosted: Vec<(String, Hosted)> = self.inner.hosted.lock().drain().collect();
        for (id, hosted) in hosted {
            hosted.keeper.abort();
            self.inner.stop(&id, &hosted.handle, true).await;
        }
    }

    /// Closes, as interrupted, what the sessions nobody runs left open: every session whose
    /// last turn did not finish and whose lease is free (its process ended). Returns how many
    /// events it appended. A session whose turn was left open while `run_code` ran is resumed
    /// here instead, and its turn continued (see [`Runtime::resume`]). Then every session
    /// nobody runs whose log holds a loop or a workflow run not finished is resumed here,
    /// where the loop goes on (a cut iteration recorded interrupted) and the run is replayed
    /// from its journal: unattended work goes on with nobody opening its session.
    pub async fn recover_abandoned(&self) -> Result<usize, HostError> {
        let store = self.store();
        let mut closed = 0;
        for info in store.running_sessions().await? {
            if self.hosted(&info.id).is_some()
                || self.inner.runtime.live_session(&info.id).is_some()
            {
                continue;
            }
            let _guard = self.lock_id(&info.id).await;
            if self.hosted(&info.id).is_some() {
                continue;
            }
            let lease = store
                .acquire_lease(&info.id, &self.inner.owner, self.inner.timing.ttl)
                .await?;
            if lease != Lease::Acquired {
                continue;
            }
            // A turn left open while code ran is continued here, its runs replayed from
            // their journals, rather than closed.
            if self.inner.runtime.has_open_run(&info.id).await? {
                drop(_guard);
                if let Err(err) = self.open(&info.id).await {
                    tracing::error!(session = %info.id, error = %err, "a turn left open while code ran could not be continued");
                }
                continue;
            }
            let recovered = self.inner.runtime.recover(&info.id).await;
            let _ = store.release_lease(&info.id, &self.inner.owner).await;
            closed += recovered?;
        }
        // After the sessions cut mid-turn are closed — a loop's running iteration among them —
        // the sessions whose loops and runs they served can go on.
        for info in store.sessions_with_running_loops_or_workflows().await? {
            self.take_up(&info).await;
        }
        Ok(closed)
    }

    /// Resumes here session `info`, whose log holds a loop or workflow run not finished,
    /// unless it runs (here or in another process) or was taken up before at the same head.
    async fn take_up(&self, info: &SessionInfo) {
        if self.hosted(&info.id).is_some() || self.inner.runtime.live_session(&info.id).is_some() {
            return;
        }
        if self
            .inner
            .taken_up
            .lock()
            .insert(info.id.clone(), info.head_seq)
            == Some(info.head_seq)
        {
            return;
        }
        match self.open(&info.id).await {
            Ok(Placement::Here(_)) => {
                tracing::info!(session = %info.id, "resumed to take up its loop or workflow run");
            }
            // Its process runs it; should that process die, the session is taken up then.
            Ok(Placement::Elsewhere(_)) => {
                self.inner.taken_up.lock().remove(&info.id);
            }
            Err(err) => {
                tracing::error!(session = %info.id, error = %err, "a session with a loop or workflow run not finished could not be resumed");
            }
        }
    }

    /// Runs [`SessionHost::recover_abandoned`] every lease period, and hosts every session
    /// the runtime builds that no host holds (a subagent, as its parent starts it: its lease
    /// taken at once, so no process takes it for abandoned), until the host is dropped.
    pub fn watch_abandoned(&self) -> JoinHandle<()> {
        let weak = Arc::downgrade(&self.inner);
        let period = self.inner.timing.ttl;
        let mut built = self.inner.runtime.watch_new_sessions();
        tokio::spawn(async move {
            let mut next_recovery = tokio::time::Instant::now() + period;
            loop {
                let new_session = tokio::select! {
                    () = tokio::time::sleep_until(next_recovery) => None,
                    new_session = built.recv() => match new_session {
                        Some(handle) => Some(handle),
                        None => return,
                    },
                };
                let Some(inner) = weak.upgrade() else { return };
                let host = SessionHost { inner };
                match new_session {
                    Some(handle) => {
                        let id = handle.id().to_string();
                        // One the host builds itself is hosted by `create` or `open`.
                        let _guard = host.lock_id(&id).await;
                        if let Err(err) = host.hold(handle).await {
                            tracing::error!(session = %id, error = %err, "a new session could not be hosted");
                        }
                    }
                    None => {
                        next_recovery = tokio::time::Instant::now() + period;
                        if let Err(err) = host.recover_abandoned().await {
                            tracing::warn!(error = %err, "closing abandoned sessions failed");
                        }
                    }
                }
            }
        })
    }

    /// Reads session `id`'s conversation tree, with every event stored now folded in, through
    /// `read` (the tree stays kept: a reader copies only what it needs of it).
    pub async fn tree<T>(
        &self,
        id: &str,
        read: impl FnOnce(&LiveTree) -> T,
    ) -> Result<T, HostError> {
        Ok(self
            .inner
            .trees
            .current(self.store().as_ref(), id, read)
            .await?)
    }

    /// Answers request `request_id` of `handle` (a session hosted here) for `resolved_by`,
    /// giving the `request.resolved` recorded. When the request is not open in this process
    /// (it was opened by a process that ran the session before), the log says how it ended:
    /// [`ResolveError::Ended`] when it did, [`ResolveError::Unknown`] when the session has no
    /// such request.
    pub async fn resolve(
        &self,
        handle: &SessionHandle,
        request_id: &str,
        reply: RequestReply,
        resolved_by: &str,
    ) -> Result<RequestResolvedEvent, HostError> {
        match handle.resolve(request_id, reply, resolved_by) {
            Err(ResolveError::Unknown(_)) => {}
            answered => return Ok(answered?),
        }
        handle.flush().await?;
        let ended = self
            .tree(handle.id(), |live| {
                live.request(request_id).map(|request| {
                    let ended = request.resolution.as_ref().map_or("cancelled", ended_as);
                    let by = request.resolved_by.clone();
                    (ended, by.unwrap_or_else(|| "runtime".to_string()))
                })
            })
            .await?;
        Err(HostError::Resolve(match ended {
            Some((ended, resolved_by)) => ResolveError::Ended {
                request_id: request_id.to_string(),
                ended,
                resolved_by,
            },
            None => ResolveError::Unknown(request_id.to_string()),
        }))
    }

    /// Connects the store's [`CommandRelay`] for this process (a store several processes
    /// share; see [`EventStore::connect_relay`]): `handler` runs the commands other processes
    /// send here. Returns whether the store relays; connecting twice keeps the first relay.
    ///
    /// Besides the handler's commands, the host runs one of its own: recording an event a
    /// process that does not run a session has for its log (a schedule's run, say; see
    /// [`SessionHost::record_schedule_event`]).
    pub async fn connect_relay(&self, handler: RelayHandler) -> Result<bool, HostError> {
        let weak = Arc::downgrade(&self.inner);
        let handler: RelayHandler =
            Arc::new(
                move |session, command| match command.strip_prefix(schedules::RECORD_EVENT) {
                    Some(body) => {
                        let body = body.to_string();
                        let weak = weak.clone();
                        let recorded: BoxFuture<'static, String> = Box::pin(async move {
                            match weak.upgrade() {
                                Some(inner) => {
                                    SessionHost { inner }
                                        .record_relayed_event(&session, &body)
                                        .await
                                }
                                None => "not recorded: this process is stopping".to_string(),
                            }
                        });
                        recorded
                    }
                    None => handler(session, command),
                },
            );
        let Some(relay) = self
            .store()
            .connect_relay(&self.inner.owner, handler)
            .await?
        else {
            return Ok(false);
        };
        if self.inner.relay.set(relay).is_err() {
            tracing::warn!("a relay was connected twice; the first stays");
        }
        Ok(true)
    }

    /// Runs `command` on session `id` in the process `owner` that runs it, through the relay,
    /// and gives the outcome that process's handler returned.
    pub async fn forward(&self, owner: &str, id: &str, command: &str) -> Result<String, HostError> {
        let Some(relay) = self.inner.relay.get() else {
            return Err(HostError::NoRelay {
                session: id.to_string(),
                owner: owner.to_string(),
            });
        };
        Ok(relay.forward(owner, id, command).await?)
    }

    /// Serialises opening, closing and recovering one session.
    async fn lock_id(&self, id: &str) -> IdGuard {
        let mutex = Arc::clone(self.inner.locks.lock().entry(id.to_string()).or_default());
        let guard = Arc::clone(&mutex).lock_owned().await;
        IdGuard {
            inner: Arc::clone(&self.inner),
            id: id.to_string(),
            guard: Some(guard),
            mutex,
        }
    }
}

/// Holds one session's lock; forgets the lock when nobody else waits for it.
struct IdGuard {
    inner: Arc<Inner>,
    id: String,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    mutex: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for IdGuard {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut locks = self.inner.locks.lock();
        // The map's copy and this one: nobody else holds or waits for it.
        if Arc::strong_count(&self.mutex) == 2 {
            locks.remove(&self.id);
        }
    }
}

impl Inner {
    /// Closes a session removed from the hosted ones, giving its lease up when `release`.
    async fn stop(&self, id: &str, handle: &SessionHandle, release: bool) {
        if let Err(err) = handle.close().await {
            tracing::error!(session = id, error = %err, "closing the session failed");
        }
        if release && let Err(err) = self.runtime.store().release_lease(id, &self.owner).await {
            tracing::warn!(session = id, error = %err, "giving the lease up failed");
        }
    }
}

/// Renews the lease of a hosted session every third of its time; closes the session when the
/// lease is lost or the session has been idle long enough.
async fn keep(inner: Weak<Inner>, handle: SessionHandle) {
    let (ttl, idle_close) = match inner.upgrade() {
        Some(inner) => (inner.timing.ttl, inner.timing.idle_close),
        None => return,
    };
    let id = handle.id().to_string();
    let mut last_head = handle.committed_head();
    let mut idle_since = Instant::now();
    loop {
        tokio::time::sleep(ttl / 3).await;
        let Some(inner) = inner.upgrade() else { return };
        let store = inner.runtime.store();
        match store.acquire_lease(&id, &inner.owner, ttl).await {
            Ok(Lease::Acquired) => {}
            Ok(Lease::HeldBy { owner }) => {
                tracing::error!(
                    session = %id,
                    owner = %owner,
                    "the session's lease was taken by another process; it stops running here"
                );
                let removed = inner.hosted.lock().remove(&id);
                if removed.is_some() {
                    inner.stop(&id, &handle, false).await;
                }
                return;
            }
            Err(err) => {
                tracing::warn!(session = %id, error = %err, "renewing the lease failed; retrying");
                continue;
            }
        }
        let head = handle.committed_head();
        // Events waiting for the store keep the session here until they are stored.
        let busy = handle.running_turn().is_some()
            || handle.running_children() > 0
            || handle.runs_loops_or_workflows()
            || !handle.open_requests().is_empty()
            || handle.recorded_head() > head;
        if busy || head != last_head {
            last_head = head;
            idle_since = Instant::now();
        } else if idle_since.elapsed() >= idle_close {
            let host = SessionHost { inner };
            tokio::spawn(async move {
                host.close(&id).await;
            });
            return;
        }
    }
}

/// The model a session in `workspace` records as `spec`, to resume it with: a `scripted:PATH`
/// one reads its script where [`workspace_script`] finds it (as the demo records
/// `scripted:demo.script.yaml`); any other spec as it is.
pub fn workspace_model(workspace: &Path, spec: &str) -> ModelChoice {
    match spec.strip_prefix("scripted:") {
        Some(path) => ModelChoice::Spec(format!(
            "scripted:{}",
            workspace_script(workspace, path).display()
        )),
        None => ModelChoice::Spec(spec.to_string()),
    }
}

/// The file of a `scripted:PATH` model of a session in `workspace`: `PATH` relative to the
/// workspace when it is relative, missing as given, and there; else `PATH` as given.
pub fn workspace_script(workspace: &Path, path: &str) -> PathBuf {
    let given = Path::new(path);
    if given.is_relative() && !given.exists() && workspace.join(given).is_file() {
        return workspace.join(given);
    }
    given.to_path_buf()
}
