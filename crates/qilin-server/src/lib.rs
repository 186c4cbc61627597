//! `qilin serve`: Qilin's sessions over HTTP.
//!
//! [`app`] builds the axum router (tests serve it on `127.0.0.1:0`): JSON routes for sessions,
//! turns, interrupts, pending requests, snapshots and workspace files; event streams as
//! Server-Sent Events that a client resumes from the last `seq` it saw without losing or
//! repeating an event; the web client's files at `/`; and the OpenAPI document generated from
//! the routes' own types at `/api/openapi.json`.
//!
//! Sessions are [`qilin_runtime`]'s, kept in a [`qilin_store`] store and hosted by the
//! runtime's [`SessionHost`]: created over HTTP or resumed on demand, a turn runs to its end
//! whether or not anyone watches. The host keeps the leases (a session runs in the one process
//! holding its lease), closes idle sessions, recovers abandoned ones and keeps the live trees
//! the snapshots are read from; with PostgreSQL several server processes share the sessions,
//! and a command that reaches a process not running the session is relayed, through the store,
//! to the one that does ([`ServerState::connect_relay`]). The server itself keeps the routes,
//! auth, assets, OpenAPI and errors.
//!
//! [`serve`] runs the router on the connections a listener accepts, closing those that keep
//! the server waiting (headers or a body that do not arrive, a connection left idle).
//!
//! Every request passes [`Access`]: its `Host` must name the server, its `Origin` (when
//! present) must be the server's own, and every API request must carry the token.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod api;
mod assets;
mod auth;
mod commands;
mod error;
mod extract;
mod new_session;
mod roots;
mod routes;
mod serve;

pub use api::{
    AuthRequest, CreateSession, EndReason, EventPage, Interrupted, OpenRequests, RequestAnswer,
    RequestResolved, ServerInfo, SessionEvent, SessionView, Snapshot, StartTurn, StreamEnd,
    TextFile, TurnAccepted, UpdateSession,
};
pub use assets::WEB_CLIENT_BUILT;
pub use auth::{Access, TOKEN_BYTES};
pub use commands::Command;
pub use error::{ApiError, ErrorBody};
pub use new_session::SessionDefaults;
pub use roots::{Named, Roots};
pub use routes::events::{Cursor, MAX_STREAM_SESSIONS, StreamOptions};
pub use serve::{ConnectionLimits, serve, serve_hosted};

use parking_lot::Mutex;
use qilin_protocol::goals::GoalRecord;
use qilin_protocol::loops::LoopRecord;
use qilin_runtime::{LiveTree, ModelChoice, SessionHandle, SessionHost};
use qilin_store::{EventStore, RelayHandler};
use std::collections::HashMap;
use std::sync::Arc;

/// The largest request body accepted, in bytes.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// What a server is made of: its sessions, who may talk to it, and how it streams.
pub struct ServerConfig {
    /// The host of the sessions this process runs.
    pub host: SessionHost,
    /// What a new session gets when its request does not say.
    pub defaults: SessionDefaults,
    /// The token and the names the server answers to.
    pub access: Access,
    /// How event streams are paced.
    pub stream: StreamOptions,
    /// The largest request body accepted.
    pub max_body: usize,
    /// How long a connection may keep the server waiting ([`serve`]).
    pub connections: ConnectionLimits,
}

/// The state every route shares. Cheap to clone.
#[derive(Clone)]
pub struct ServerState {
    inner: Arc<StateInner>,
}

struct StateInner {
    host: SessionHost,
    defaults: SessionDefaults,
    roots: Roots,
    access: Arc<Access>,
    stream: StreamOptions,
    max_body: usize,
    connections: ConnectionLimits,
    /// Prompts to start when a client first watches their session (the demo's).
    on_watch: Mutex<HashMap<String, String>>,
    demo: Mutex<Option<String>>,
    /// Cancelled when the server stops: every event stream ends.
    stopping: tokio_util::sync::CancellationToken,
}

impl ServerState {
    /// The state of a server made of `config`.
    pub fn new(config: ServerConfig) -> Self {
        ServerState {
            inner: Arc::new(StateInner {
                roots: config.defaults.roots(),
                host: config.host,
                defaults: config.defaults,
                access: Arc::new(config.access),
                stream: config.stream,
                max_body: config.max_body,
                connections: config.connections,
                on_watch: Mutex::new(HashMap::new()),
                demo: Mutex::new(None),
                stopping: tokio_util::sync::CancellationToken::new(),
            }),
        }
    }

    /// The host of the sessions this process runs.
    pub fn host(&self) -> &SessionHost {
        &self.inner.host
    }

    /// What a new session gets when its request does not say.
    pub fn defaults(&self) -> &SessionDefaults {
        &self.inner.defaults
    }

    /// The folders a request may put a session under.
    pub(crate) fn roots(&self) -> &Roots {
        &self.inner.roots
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        self.inner.host.store()
    }

    /// Creates a session from `request` (its missing parts from the defaults) and runs it
    /// here; `model` replaces the model the request or the defaults name.
    pub async fn create_session(
        &self,
        request: &CreateSession,
        model: Option<ModelChoice>,
    ) -> Result<SessionHandle, ApiError> {
        new_session::create(self, request, model).await
    }

    /// Who may talk to the server.
    pub fn access(&self) -> &Access {
        &self.inner.access
    }

    /// How event streams are paced.
    pub fn stream_options(&self) -> StreamOptions {
        self.inner.stream
    }

    /// Ends every event stream (each client gets `end`), so the server can stop.
    pub fn end_streams(&self) {
        self.inner.stopping.cancel();
    }

    pub(crate) fn stopping(&self) -> tokio_util::sync::CancellationToken {
        self.inner.stopping.clone()
    }

    /// Connects the relay of commands to the other server processes sharing the store (with
    /// PostgreSQL; a store only this process uses needs none), and runs the commands they relay
    /// to this one. Returns whether the store relays.
    pub async fn connect_relay(&self) -> Result<bool, ApiError> {
        let weak = Arc::downgrade(&self.inner);
        let handler: RelayHandler = Arc::new(move |session, command| {
            let weak = weak.clone();
            Box::pin(async move {
                let outcome = match weak.upgrade() {
                    Some(inner) => {
                        commands::run_relayed(&ServerState { inner }, &session, &command).await
                    }
                    None => Err(ApiError::new(
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        "stopping",
                        "the process running the session is stopping",
                    )),
                };
                commands::Relayed::of(outcome).to_text()
            })
        });
        Ok(self.host().connect_relay(handler).await?)
    }

    /// Marks `session` as the demo's, and starts a turn of `prompt` in it when a client first
    /// follows its events (so the page opened on it shows the turn live).
    pub fn set_demo(&self, session: &str, prompt: &str) {
        *self.inner.demo.lock() = Some(session.to_string());
        self.inner
            .on_watch
            .lock()
            .insert(session.to_string(), prompt.to_string());
    }

    /// The demo session, under `--demo`.
    pub fn demo_session(&self) -> Option<String> {
        self.inner.demo.lock().clone()
    }

    /// A client started following `session`: starts the turn waiting for that, if any.
    pub(crate) fn watching(&self, session: &str) {
        let prompt = self.inner.on_watch.lock().remove(session);
        let Some(prompt) = prompt else { return };
        let Some(handle) = self.host().hosted(session) else {
            return;
        };
        if let Err(err) = handle.submit(&prompt, None) {
            tracing::warn!(session, error = %err, "the waiting turn could not start");
        }
    }

    /// A session as the API shows it.
    pub async fn view(&self, id: &str) -> Result<SessionView, ApiError> {
        let store = self.store();
        let info = store
            .session(id)
            .await?
            .ok_or_else(|| ApiError::unknown_session(id))?;
        let open_requests = store.open_requests(id).await?;
        let mut children = store
            .list_sessions(&qilin_store::SessionQuery {
                limit: qilin_store::MAX_PAGE,
                parent: qilin_store::ParentFilter::ChildrenOf(id.to_string()),
                ..Default::default()
            })
            .await?
            .sessions;
        children.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
        let hosted = self.host().hosted(id);
        let active_turn = match &hosted {
            Some(handle) => handle.running_turn(),
            None if info.status == qilin_store::SessionStatus::Running => {
                self.host().tree(id, LiveTree::active_turn).await?
            }
            None => None,
        };
        let goal = match &hosted {
            Some(handle) => handle.goal(),
            None => self.host().tree(id, |live| live.tree.goal.clone()).await?,
        };
        Ok(SessionView {
            info,
            active_turn,
            open_requests,
            children,
            hosted: hosted.is_some(),
            goal,
            home: user_home(),
        })
    }

    /// A session's loops: the running session's own, else folded from its log.
    pub async fn loops(&self, id: &str) -> Result<Vec<LoopRecord>, ApiError> {
        if let Some(handle) = self.host().hosted(id) {
            return Ok(handle.loops());
        }
        if self.store().session(id).await?.is_none() {
            return Err(ApiError::unknown_session(id));
        }
        let events = self.store().read(id, 0, usize::MAX).await?;
        Ok(qilin_loops::fold_loops(&events))
    }

    /// A session's latest goal: the running session's own, else its log's.
    pub async fn goal(&self, id: &str) -> Result<Option<GoalRecord>, ApiError> {
        if let Some(handle) = self.host().hosted(id) {
            return Ok(handle.goal());
        }
        if self.store().session(id).await?.is_none() {
            return Err(ApiError::unknown_session(id));
        }
        Ok(self.host().tree(id, |live| live.tree.goal.clone()).await?)
    }
}

/// The home folder of the user this server runs as: `HOME`, when it names an absolute folder
/// other than the root.
fn user_home() -> Option<String> {
    std::env::var("HOME")
        .ok()
        .filter(|home| home.starts_with('/') && !home.trim_end_matches('/').is_empty())
}

pub use routes::app;
