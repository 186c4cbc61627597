//! [`Sessions`]: the sessions this process runs, and how a stored session comes to run here.
//!
//! A session runs in one process at a time: the one holding its lease in the store. Creating a
//! session over HTTP takes its lease; a stored session that runs nowhere (after a restart, or
//! after its process died and its lease ran out) is resumed here on demand, when a command
//! (a turn, an interrupt, an answer) names it. A hosted session's lease is renewed while it is
//! hosted and given up when it is closed — on shutdown, on delete, or after it has been idle a
//! while. Sessions that a dead process left running (their lease run out) are closed as
//! interrupted by [`Sessions::recover_abandoned`], at start and then periodically.

use crate::api::CreateSession;
use crate::error::ApiError;
use crate::roots::{Named, Roots};
use axum::http::StatusCode;
use qilin_runtime::{ModelChoice, Runtime, SessionBuilder, SessionHandle};
use qilin_store::{EventStore, Lease};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// What a session gets when the request creating it does not say.
#[derive(Debug, Clone, Default)]
pub struct SessionDefaults {
    /// The workspace.
    pub workspace: PathBuf,
    /// The agent file.
    pub agent_file: Option<PathBuf>,
    /// The model spec.
    pub model: Option<String>,
    /// Run bash commands without the sandbox (the server's `--no-sandbox`).
    pub no_sandbox: bool,
    /// Folders besides `workspace` under which a request may put a session's workspace, agent
    /// file and scripted model (`qilin serve --allow-root DIR`); a path a request names
    /// anywhere else is refused with 403.
    pub allowed_roots: Vec<PathBuf>,
}

/// How long leases last and hosted sessions stay.
#[derive(Debug, Clone, Copy)]
pub struct LeaseTiming {
    /// How long a lease lasts unless renewed; renewed every third of it.
    pub ttl: Duration,
    /// A hosted session with no turn running and nothing waiting is closed (its lease given
    /// up) after being idle this long; it is resumed again when next needed.
    pub idle_close: Duration,
}

impl Default for LeaseTiming {
    fn default() -> Self {
        LeaseTiming {
            ttl: Duration::from_secs(30),
            idle_close: Duration::from_secs(15 * 60),
        }
    }
}

/// Where a session runs.
pub enum Owner {
    /// Here.
    Here(SessionHandle),
    /// In the server process named, which holds its lease.
    Elsewhere(String),
}

/// The sessions of this server process. Cheap to clone.
#[derive(Clone)]
pub struct Sessions {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    owner: String,
    defaults: SessionDefaults,
    roots: Roots,
    timing: LeaseTiming,
    hosted: Mutex<HashMap<String, Hosted>>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

struct Hosted {
    handle: SessionHandle,
    keeper: JoinHandle<()>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

impl Sessions {
    /// The sessions of a process named `owner` (unique among the processes sharing the
    /// store), running on `runtime`.
    pub fn new(
        runtime: Runtime,
        owner: impl Into<String>,
        defaults: SessionDefaults,
        timing: LeaseTiming,
    ) -> Self {
        let roots = Roots::new(
            std::iter::once(defaults.workspace.clone()).chain(defaults.allowed_roots.clone()),
        );
        Sessions {
            inner: Arc::new(Inner {
                runtime,
                owner: owner.into(),
                roots,
                defaults,
                timing,
                hosted: Mutex::new(HashMap::new()),
                locks: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        self.inner.runtime.store()
    }

    /// This process's name as a lease owner.
    pub fn owner(&self) -> &str {
        &self.inner.owner
    }

    /// The defaults of new sessions.
    pub fn defaults(&self) -> &SessionDefaults {
        &self.inner.defaults
    }

    /// The session `id` if it runs here.
    pub fn hosted(&self, id: &str) -> Option<SessionHandle> {
        lock(&self.inner.hosted)
            .get(id)
            .map(|hosted| hosted.handle.clone())
    }

    /// How many sessions run here.
    pub fn hosted_count(&self) -> usize {
        lock(&self.inner.hosted).len()
    }

    /// Creates a session from `request` (its missing parts from the defaults) and runs it
    /// here; `model` replaces the model the request or the defaults name.
    pub async fn create(
        &self,
        request: &CreateSession,
        model: Option<ModelChoice>,
    ) -> Result<SessionHandle, ApiError> {
        let defaults = &self.inner.defaults;
        let roots = &self.inner.roots;
        // What the request names must lie under the roots; the defaults are the server's own.
        let workspace = match &request.workspace {
            Some(dir) => roots.confine(&defaults.workspace.join(dir), Named::Workspace)?,
            None => defaults.workspace.clone(),
        };
        if !workspace.is_dir() {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_workspace",
                format!("the workspace {} is not a folder", workspace.display()),
            ));
        }
        let agent = match (&request.agent_file, &defaults.agent_file) {
            (Some(file), _) => roots.confine(&workspace.join(file), Named::AgentFile)?,
            (None, Some(file)) => file.clone(),
            (None, None) => {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "no_agent",
                    "name the session's agent: give `agentFile`, or start the server with \
                     `--agent FILE`",
                ));
            }
        };
        let mut builder = self
            .inner
            .runtime
            .session(&workspace)
            .agent_file(agent)
            .attended(true)
            .no_sandbox(defaults.no_sandbox);
        match (model, &request.model, &defaults.model) {
            (Some(model), _, _) => builder = builder.model(model),
            (None, Some(spec), _) => {
                builder = builder.model(requested_model(roots, &workspace, spec)?)
            }
            (None, None, Some(spec)) => builder = builder.model(model_in(&workspace, spec)),
            (None, None, None) => {}
        }
        let handle = builder.build().await?;
        let id = handle.id().to_string();
        if let Some(title) = &request.title {
            self.store().rename_session(&id, title).await?;
        }
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
            Ok(Lease::HeldBy { owner }) => Err(ApiError::internal(format!(
                "the new session `{id}` is leased by `{owner}` already"
            ))),
            Err(err) => {
                let _ = handle.close().await;
                Err(err.into())
            }
        }
    }

    /// Where session `id` runs: here (resumed here when it ran nowhere), or elsewhere.
    pub async fn open(&self, id: &str) -> Result<Owner, ApiError> {
        if let Some(handle) = self.hosted(id) {
            return Ok(Owner::Here(handle));
        }
        let _guard = self.lock_id(id).await;
        if let Some(handle) = self.hosted(id) {
            return Ok(Owner::Here(handle));
        }
        let store = self.store();
        let Some(info) = store.session(id).await? else {
            return Err(ApiError::unknown_session(id));
        };
        match store
            .acquire_lease(id, &self.inner.owner, self.inner.timing.ttl)
            .await?
        {
            Lease::HeldBy { owner } => return Ok(Owner::Elsewhere(owner)),
            Lease::Acquired => {}
        }
        let resumed = self
            .resume(id, &info.model, Path::new(&info.workspace))
            .await;
        match resumed {
            Ok(handle) => {
                self.host(handle.clone());
                Ok(Owner::Here(handle))
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
    ) -> Result<SessionHandle, ApiError> {
        let builder: SessionBuilder = self.inner.runtime.resume(id).await?;
        let handle = builder
            .model(model_in(workspace, model))
            .attended(true)
            .no_sandbox(self.inner.defaults.no_sandbox)
            .build()
            .await?;
        tracing::info!(session = id, "resumed the session in this process");
        Ok(handle)
    }

    /// Starts hosting `handle`: keeps its lease until it is closed.
    fn host(&self, handle: SessionHandle) {
        let id = handle.id().to_string();
        let keeper = tokio::spawn(keep(Arc::downgrade(&self.inner), handle.clone()));
        let previous = lock(&self.inner.hosted).insert(id, Hosted { handle, keeper });
        if let Some(previous) = previous {
            previous.keeper.abort();
        }
    }

    /// Closes session `id` if it runs here: interrupts its turn, flushes its log, and gives
    /// its lease up. Returns whether it ran here.
    pub async fn close(&self, id: &str) -> bool {
        let _guard = self.lock_id(id).await;
        let hosted = lock(&self.inner.hosted).remove(id);
        let Some(hosted) = hosted else {
            return false;
        };
        hosted.keeper.abort();
        self.inner.stop(id, &hosted.handle, true).await;
        true
    }

    /// Deletes session `id`: closes it if it runs here; refuses while another process runs it.
    pub async fn delete(&self, id: &str) -> Result<(), ApiError> {
        self.close(id).await;
        let _guard = self.lock_id(id).await;
        let store = self.store();
        if store.session(id).await?.is_none() {
            return Err(ApiError::unknown_session(id));
        }
        match store
            .acquire_lease(id, &self.inner.owner, self.inner.timing.ttl)
            .await?
        {
            Lease::HeldBy { owner } => Err(owned_elsewhere(id, &owner)),
            Lease::Acquired => Ok(store.delete_session(id).await?),
        }
    }

    /// Closes every session running here (their turns interrupted, their logs flushed, their
    /// leases given up).
    pub async fn shutdown(&self) {
        let hosted: Vec<(String, Hosted)> = lock(&self.inner.hosted).drain().collect();
        for (id, hosted) in hosted {
            hosted.keeper.abort();
            self.inner.stop(&id, &hosted.handle, true).await;
        }
    }

    /// Closes, as interrupted, what the sessions nobody runs left open: every session whose
    /// last turn did not finish and whose lease is free (its process ended). Returns how many
    /// events it appended.
    pub async fn recover_abandoned(&self) -> Result<usize, ApiError> {
        let store = self.store();
        let mut closed = 0;
        for info in store.running_sessions().await? {
            if self.hosted(&info.id).is_some() {
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
            let recovered = self.inner.runtime.recover(&info.id).await;
            let _ = store.release_lease(&info.id, &self.inner.owner).await;
            closed += recovered?;
        }
        Ok(closed)
    }

    /// Runs [`Sessions::recover_abandoned`] every lease period, until the sessions are dropped.
    pub fn watch_abandoned(&self) -> JoinHandle<()> {
        let weak = Arc::downgrade(&self.inner);
        let period = self.inner.timing.ttl;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(inner) = weak.upgrade() else { return };
                let sessions = Sessions { inner };
                if let Err(err) = sessions.recover_abandoned().await {
                    tracing::warn!(error = %err.body.message, "closing abandoned sessions failed");
                }
            }
        })
    }

    /// Serialises opening, closing and recovering one session.
    async fn lock_id(&self, id: &str) -> IdGuard {
        let mutex = Arc::clone(lock(&self.inner.locks).entry(id.to_string()).or_default());
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
        let mut locks = lock(&self.inner.locks);
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
                let removed = lock(&inner.hosted).remove(&id);
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
            || !handle.open_requests().is_empty()
            || handle.recorded_head() > head;
        if busy || head != last_head {
            last_head = head;
            idle_since = Instant::now();
        } else if idle_since.elapsed() >= idle_close {
            let sessions = Sessions { inner };
            tokio::spawn(async move {
                sessions.close(&id).await;
            });
            return;
        }
    }
}

/// The model a spec names for a session in `workspace`: a script path relative to the
/// workspace when the file is there (as the demo records `scripted:demo.script.yaml`).
fn model_in(workspace: &Path, spec: &str) -> ModelChoice {
    match spec.strip_prefix("scripted:") {
        Some(path) => {
            ModelChoice::Spec(format!("scripted:{}", script_in(workspace, path).display()))
        }
        None => ModelChoice::Spec(spec.to_string()),
    }
}

/// The file of a `scripted:PATH` model of a session in `workspace`: `PATH` relative to the
/// workspace when it is relative, missing as given, and there; else `PATH` as given.
fn script_in(workspace: &Path, path: &str) -> PathBuf {
    let given = Path::new(path);
    if given.is_relative() && !given.exists() && workspace.join(given).is_file() {
        return workspace.join(given);
    }
    given.to_path_buf()
}

/// The model a request names for a session in `workspace`: a `scripted:FILE` one's file (found
/// as [`script_in`] finds it) must lie under `roots`, and the session reads it by its resolved
/// path.
fn requested_model(roots: &Roots, workspace: &Path, spec: &str) -> Result<ModelChoice, ApiError> {
    let Some(path) = spec.strip_prefix("scripted:") else {
        return Ok(ModelChoice::Spec(spec.to_string()));
    };
    let script = roots.confine(&script_in(workspace, path), Named::Script)?;
    Ok(ModelChoice::Spec(format!("scripted:{}", script.display())))
}

/// 409: another server process runs the session.
pub fn owned_elsewhere(id: &str, owner: &str) -> ApiError {
    let mut error = ApiError::new(
        StatusCode::CONFLICT,
        "owned_elsewhere",
        format!("session `{id}` runs in another server process (`{owner}`); ask that process"),
    );
    error.body.owner = Some(owner.to_string());
    error
}
