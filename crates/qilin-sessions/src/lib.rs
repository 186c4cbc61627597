//! Qilin's session query tools: what an agent can look up in the sessions the store keeps.
//!
//! - `session_search` — ranked full-text hits over prompts, the model's text, calls' tools,
//!   arguments, results and errors, and answers, each placed in its session, turn and call.
//! - `session_events` — a bounded page of one session's events in a compact form.
//! - `session_trajectory` — the call tree of a session, a turn or a call as indented nodes,
//!   code-mode calls one level under their `run_code`, bounded, the whole spilled to a file
//!   past the cap.
//!
//! All three are dual-active and read-only. They read through the [`SessionQueries`] host
//! service, which the runtime gives each session: the store, the session itself, its workspace
//! and how far the agent may look ([`SessionQueryScope`], the agent file's `session_queries:`
//! — its workspace's sessions by default, its own session and its child sessions, or none). Without the
//! service every call fails saying so.
//!
//! What the model reads of a result fences each recalled text as recorded data (see
//! [`fence`]): text from another session is a record of what was said then, never an
//! instruction to follow now.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod events;
mod render;
mod search;
mod trajectory;

pub use events::{MAX_EVENT_PAGE, SessionEvents, SessionEventsArgs};
pub use qilin_skill::SessionQueryScope;
pub use render::fence;
pub use search::{MAX_SEARCH_HITS, SessionSearch, SessionSearchArgs};
pub use trajectory::{MAX_TRAJECTORY_NODES, SessionTrajectory, SessionTrajectoryArgs};

use qilin_protocol::Event;
use qilin_store::{EventStore, ParentFilter, SessionInfo, StoreError};
use qilin_tool::{RegistryError, ToolError, ToolRegistry, ToolResult};
use std::sync::Arc;

/// The most sessions a `session_queries: session` agent's reach holds: its own and its
/// descendants.
pub const MAX_FAMILY: usize = 200;

/// Registers `session_search`, `session_events` and `session_trajectory`.
pub fn register_tools(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry.register(SessionSearch)?;
    registry.register(SessionEvents)?;
    registry.register(SessionTrajectory)?;
    Ok(())
}

/// What the session query tools read through: the store, the session that asks, its
/// workspace, and which sessions it may read. A host service (`qilin_tool::Services`).
pub struct SessionQueries {
    store: Arc<dyn EventStore>,
    session: String,
    workspace: String,
    scope: SessionQueryScope,
}

impl SessionQueries {
    /// The service of session `session` of `workspace`, reading `store` within `scope`.
    pub fn new(
        store: Arc<dyn EventStore>,
        session: impl Into<String>,
        workspace: impl Into<String>,
        scope: SessionQueryScope,
    ) -> Self {
        SessionQueries {
            store,
            session: session.into(),
            workspace: workspace.into(),
            scope,
        }
    }

    /// The session that asks.
    pub(crate) fn session(&self) -> &str {
        &self.session
    }

    /// The store.
    pub(crate) fn store(&self) -> &dyn EventStore {
        self.store.as_ref()
    }

    /// The service of the call's session, or why there is none.
    pub(crate) fn of(cx: &qilin_tool::ToolContext) -> ToolResult<Arc<SessionQueries>> {
        let queries = cx.service::<SessionQueries>().ok_or_else(|| {
            ToolError::failed(
                "session queries are not available in this runtime (it gave the session no store to read)",
            )
        })?;
        if queries.scope == SessionQueryScope::Off {
            return Err(ToolError::failed(
                "session queries are turned off for this agent (its agent file says `session_queries: off`)",
            ));
        }
        Ok(queries)
    }

    /// Narrows a search to the sessions this one may read; an error naming a session asked
    /// for that it may not.
    pub(crate) async fn restrict(&self, query: &mut qilin_store::SearchQuery) -> ToolResult<()> {
        match self.scope {
            SessionQueryScope::Workspace | SessionQueryScope::Off => {
                query.workspace = Some(self.workspace.clone());
            }
            SessionQueryScope::Session => {
                let family = self.family().await?;
                if let Some(other) = query.sessions.iter().find(|id| !family.contains(*id)) {
                    return Err(self.outside(other));
                }
                if query.sessions.is_empty() {
                    query.sessions = family;
                }
            }
        }
        Ok(())
    }

    /// This session and its descendants (the children its `agent` calls started, theirs, …),
    /// at most [`MAX_FAMILY`] of them.
    async fn family(&self) -> ToolResult<Vec<String>> {
        let mut family = vec![self.session.clone()];
        let mut next = 0;
        while next < family.len() && family.len() < MAX_FAMILY {
            let parent = family[next].clone();
            next += 1;
            let mut after = None;
            loop {
                let page = self
                    .store
                    .list_sessions(&qilin_store::SessionQuery {
                        after,
                        limit: MAX_FAMILY,
                        parent: ParentFilter::ChildrenOf(parent.clone()),
                        ..qilin_store::SessionQuery::default()
                    })
                    .await
                    .map_err(store_error)?;
                family.extend(page.sessions.into_iter().map(|child| child.id));
                match page.next {
                    Some(cursor) if family.len() < MAX_FAMILY => after = Some(cursor),
                    _ => break,
                }
            }
        }
        family.truncate(MAX_FAMILY);
        Ok(family)
    }

    /// Session `id`, when it exists and this session may read it.
    pub(crate) async fn readable(&self, id: &str) -> ToolResult<SessionInfo> {
        let info = self
            .store
            .session(id)
            .await
            .map_err(store_error)?
            .ok_or_else(|| {
                ToolError::invalid_arguments(format!(
                    "no session `{id}`: session_search gives the ids of sessions that exist"
                ))
            })?;
        let within = match self.scope {
            SessionQueryScope::Workspace | SessionQueryScope::Off => {
                info.workspace == self.workspace
            }
            SessionQueryScope::Session => self.descends(&info).await?,
        };
        if !within {
            return Err(self.outside(id));
        }
        Ok(info)
    }

    /// Whether `info` is this session or one of its descendants, by its parents' links.
    async fn descends(&self, info: &SessionInfo) -> ToolResult<bool> {
        let mut parent = Some(info.id.clone());
        for _ in 0..MAX_FAMILY {
            match parent {
                Some(id) if id == self.session => return Ok(true),
                Some(id) => {
                    parent = self
                        .store
                        .session(&id)
                        .await
                        .map_err(store_error)?
                        .and_then(|ancestor| ancestor.parent_session_id);
                }
                None => return Ok(false),
            }
        }
        Ok(false)
    }

    /// Every event of `info`'s session.
    pub(crate) async fn events(&self, info: &SessionInfo) -> ToolResult<Vec<Event>> {
        let limit = usize::try_from(info.head_seq).unwrap_or(usize::MAX);
        self.store
            .read(&info.id, 0, limit)
            .await
            .map_err(store_error)
    }

    /// Why session `id` may not be read.
    fn outside(&self, id: &str) -> ToolError {
        let reach = match self.scope {
            SessionQueryScope::Session => format!(
                "this agent may read its own session (`{}`) and its child sessions alone (its agent file says `session_queries: session`)",
                self.session
            ),
            _ => format!(
                "this agent may read the sessions of its workspace ({}) alone",
                self.workspace
            ),
        };
        ToolError::invalid_arguments(format!("session `{id}` is out of reach: {reach}"))
    }
}

/// A store error as the model reads it: bad input as invalid arguments, the rest as a failure.
pub(crate) fn store_error(err: StoreError) -> ToolError {
    match err {
        StoreError::InvalidQuery(_)
        | StoreError::InvalidCursor(_)
        | StoreError::UnknownSession(_) => ToolError::invalid_arguments(err.to_string()),
        other => ToolError::failed(other.to_string()),
    }
}
