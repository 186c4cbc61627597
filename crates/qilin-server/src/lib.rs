//! `qilin serve`: Qilin's sessions over HTTP.
//!
//! [`app`] builds the axum router (tests serve it on `127.0.0.1:0`): JSON routes for sessions,
//! turns, interrupts, pending requests, snapshots and workspace files; event streams as
//! Server-Sent Events that a client resumes from the last `seq` it saw without losing or
//! repeating an event; the web client's files at `/`; and the OpenAPI document generated from
//! the routes' own types at `/api/openapi.json`.
//!
//! Sessions are [`qilin_runtime`]'s, kept in a [`qilin_store`] store and run by [`Sessions`]:
//! created over HTTP or resumed on demand, a turn runs to its end whether or not anyone
//! watches. A session runs in the one process holding its lease; with PostgreSQL several
//! server processes share the sessions, and a command that reaches a process not running the
//! session is relayed to the one that does ([`Relay`]).
//!
//! [`serve`] runs the router on the connections a listener accepts, closing those that keep
//! the server waiting (headers or a body that do not arrive, a connection left idle).
//!
//! Every request passes [`Access`]: its `Host` must name the server, its `Origin` (when
//! present) must be the server's own, and every API request must carry the token.

mod api;
mod assets;
mod auth;
mod commands;
mod error;
mod extract;
mod manager;
mod relay;
mod roots;
mod routes;
mod serve;
mod trees;

pub use api::{
    AuthRequest, CreateSession, EndReason, EventPage, Interrupted, OpenRequests, RequestAnswer,
    RequestResolved, ServerInfo, SessionEvent, SessionView, Snapshot, StartTurn, StreamEnd,
    TextFile, TurnAccepted, UpdateSession,
};
pub use assets::WEB_CLIENT_BUILT;
pub use auth::{Access, TOKEN_BYTES};
pub use commands::Command;
pub use error::{ApiError, ErrorBody};
pub use manager::{LeaseTiming, Owner, SessionDefaults, Sessions};
pub use relay::{Relay, RelayError};
pub use roots::{Named, Roots};
pub use routes::events::{Cursor, MAX_STREAM_SESSIONS, StreamOptions};
pub use serve::{ConnectionLimits, serve};

use qilin_store::EventStore;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use trees::Trees;

/// The largest request body accepted, in bytes.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// What a server is made of: its sessions, who may talk to it, and how it streams.
pub struct ServerConfig {
    /// The sessions.
    pub sessions: Sessions,
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
    sessions: Sessions,
    access: Arc<Access>,
    stream: StreamOptions,
    max_body: usize,
    connections: ConnectionLimits,
    trees: Trees,
    relay: OnceLock<Relay>,
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
                sessions: config.sessions,
                access: Arc::new(config.access),
                stream: config.stream,
                max_body: config.max_body,
                connections: config.connections,
                trees: Trees::default(),
                relay: OnceLock::new(),
                on_watch: Mutex::new(HashMap::new()),
                demo: Mutex::new(None),
                stopping: tokio_util::sync::CancellationToken::new(),
            }),
        }
    }

    /// The sessions.
    pub fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        self.inner.sessions.store()
    }

    /// Who may talk to the server.
    pub fn access(&self) -> &Access {
        &self.inner.access
    }

    /// How event streams are paced.
    pub fn stream_options(&self) -> StreamOptions {
        self.inner.stream
    }

    pub(crate) fn trees(&self) -> &Trees {
        &self.inner.trees
    }

    /// Ends every event stream (each client gets `end`), so the server can stop.
    pub fn end_streams(&self) {
        self.inner.stopping.cancel();
    }

    pub(crate) fn stopping(&self) -> tokio_util::sync::CancellationToken {
        self.inner.stopping.clone()
    }

    /// The relay of commands to other server processes, once set.
    pub fn relay(&self) -> Option<&Relay> {
        self.inner.relay.get()
    }

    /// Relays commands for sessions other processes run through `relay` (PostgreSQL).
    pub fn set_relay(&self, relay: Relay) {
        if self.inner.relay.set(relay).is_err() {
            tracing::warn!("a relay was set twice; the first stays");
        }
    }

    /// Connects the relay of commands to the other server processes sharing the PostgreSQL
    /// database at `url` (the store's, its tables in `schema`), and runs the commands they
    /// relay to this one.
    pub async fn connect_relay(&self, url: &str, schema: &str) -> Result<(), RelayError> {
        let weak = Arc::downgrade(&self.inner);
        let handler: relay::Handler = Arc::new(move |session, command| {
            let weak = weak.clone();
            Box::pin(async move {
                let Some(inner) = weak.upgrade() else {
                    return Err(ApiError::new(
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        "stopping",
                        "the process running the session is stopping",
                    ));
                };
                commands::run_here(&ServerState { inner }, &session, command).await
            })
        });
        let relay = Relay::connect(url, schema, self.sessions().owner(), handler).await?;
        self.set_relay(relay);
        Ok(())
    }

    /// Marks `session` as the demo's, and starts a turn of `prompt` in it when a client first
    /// follows its events (so the page opened on it shows the turn live).
    pub fn set_demo(&self, session: &str, prompt: &str) {
        *self.inner.demo.lock().unwrap_or_else(|p| p.into_inner()) = Some(session.to_string());
        self.inner
            .on_watch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.to_string(), prompt.to_string());
    }

    /// The demo session, under `--demo`.
    pub fn demo_session(&self) -> Option<String> {
        self.inner
            .demo
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A client started following `session`: starts the turn waiting for that, if any.
    pub(crate) fn watching(&self, session: &str) {
        let prompt = self
            .inner
            .on_watch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session);
        let Some(prompt) = prompt else { return };
        let Some(handle) = self.sessions().hosted(session) else {
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
        let hosted = self.sessions().hosted(id);
        let active_turn = match &hosted {
            Some(handle) => handle.running_turn(),
            None if info.status == qilin_store::SessionStatus::Running => {
                self.trees()
                    .current(store.as_ref(), id, |folded| {
                        trees::active_turn(&folded.tree)
                    })
                    .await?
            }
            None => None,
        };
        Ok(SessionView {
            info,
            active_turn,
            open_requests,
            hosted: hosted.is_some(),
        })
    }
}

pub use routes::app;
