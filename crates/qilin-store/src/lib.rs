//! Qilin's session store: every session's events, append-only, numbered by a gapless `seq`.
//!
//! One trait, [`EventStore`], with an in-memory implementation ([`MemoryStore`], for tests and
//! for hosts that keep nothing) and durable ones. The contract every implementation keeps:
//!
//! - **Commit before anyone sees it.** [`EventStore::append`] returns once the events are
//!   durable; only then does any follower receive them.
//! - **Gapless.** A session's events are numbered 1, 2, 3, … The first event of an append must
//!   be the session's head + 1 and the rest consecutive; anything else is
//!   [`StoreError::SeqConflict`] and nothing of that append is stored — which is also how a
//!   second writer on the same session is caught.
//! - **Follow from any point.** [`EventStore::follow`] yields every event after a given `seq`:
//!   the stored ones, then the live ones as they commit, each exactly once and in order, with no
//!   gap or duplicate at the seam.
//! - **Derived rows.** A session's title (its first prompt until renamed), status (running
//!   between a `turn.started` and its `turn.finished`), turn count, last activity and its open
//!   requests (`request.opened` without a `request.resolved`) are kept up to date by `append`
//!   itself, in the same transaction as the events.
//! - **Searchable.** The text events carry (prompts, the model's text, calls' tools, arguments,
//!   results and errors, answers) is indexed — by `append` in the same transaction
//!   (PostgreSQL), or just after its commit by the store's indexer thread (SQLite) — and
//!   [`EventStore::search`] finds it, ranked, with snippets ([`search`] says how words match),
//!   every append that returned before the search began included; deleting a session deletes
//!   its index entries.
//! - **One owner per session.** A host runs a session's turns only while it holds the session's
//!   lease ([`EventStore::acquire_lease`]); a lease expires unless renewed, so the session of a
//!   crashed process can be taken over. In a store only one process writes (memory, SQLite) the
//!   leases are kept in that process; in PostgreSQL they are rows every process sees.
//!
//! The stores:
//!
//! - [`MemoryStore`]: nothing survives the process.
//! - [`SqliteStore`]: the embedded default, one file (`WORKSPACE/.qilin/qilin.db`) written by
//!   one thread that batches the appends of every session into few transactions; one process at
//!   a time (a lock file beside the database refuses a second).
//! - `PostgresStore` (the cargo feature `postgres`, on by default): for several server
//!   processes sharing sessions; new events are announced with `LISTEN/NOTIFY`, so a follower
//!   in any process sees every session live, and a command for a session another process runs
//!   is carried to it ([`CommandRelay`], [`EventStore::connect_relay`]).
//!
//! [`open_database`] picks one from a `--database` value.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod lease;
mod live;
mod memory;
mod open;
mod plan;
#[cfg(feature = "postgres")]
mod postgres;
mod relay;
pub mod schedules;
pub mod search;
mod sqlite;

pub use memory::MemoryStore;
pub use open::{DEFAULT_DATABASE, DEFAULT_POSTGRES_SCHEMA, open_database, postgres_schema};
#[cfg(feature = "postgres")]
pub use postgres::{PostgresOptions, PostgresRelay, PostgresStore};
pub use qilin_protocol::api::{SearchPage, SessionInfo, SessionPage, SessionStatus};
pub use qilin_protocol::sessions::{HitField, SearchHit};
pub use relay::{CommandRelay, RelayError, RelayHandler};
pub use search::SearchQuery;
pub use sqlite::{SqliteOptions, SqliteStore};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures_util::stream::BoxStream;
use qilin_protocol::schedules::{ScheduleRecord, ScheduleRun};
use qilin_protocol::{Event, RequestOpenedEvent};
use schedules::ClaimedFire;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// A committed event as the JSON the store keeps: what a server sends its clients as is, with
/// no decoding and encoding again for each of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventJson {
    /// The event's `seq`.
    pub seq: u64,
    /// The whole event, one JSON object (as [`Event`] serialises).
    pub json: Arc<str>,
}

impl EventJson {
    /// The event `json` of `session` read back from storage, checked to be well-formed JSON
    /// (not decoded: that is the reader's choice).
    pub(crate) fn stored(session: &str, seq: u64, json: String) -> Result<Self, StoreError> {
        serde_json::from_str::<serde::de::IgnoredAny>(&json).map_err(|err| {
            StoreError::Corrupt {
                session: session.to_string(),
                message: format!("event {seq}: {err}"),
            }
        })?;
        Ok(EventJson {
            seq,
            json: json.into(),
        })
    }

    /// `event` of `session`, encoded.
    pub(crate) fn encode(session: &str, event: &Event) -> Result<Self, StoreError> {
        Ok(EventJson {
            seq: event.seq,
            json: plan::encode(session, event)?.into(),
        })
    }
}

/// Hears of each commit: called with the session and its new head `seq` right after the append
/// committed, before its followers are woken, on the store's writing thread or task — so it
/// must be quick (note the time, count, send on a channel). For metrics and benchmarks.
pub type CommitObserver = Arc<dyn Fn(&str, u64) + Send + Sync>;

/// What a new session records about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSession {
    /// The session's id; unique in the store.
    pub id: String,
    /// The workspace folder, absolute.
    pub workspace: String,
    /// The agent's name.
    pub agent: String,
    /// The agent file, when there is one.
    pub agent_file: Option<String>,
    /// The model, as `provider:name`.
    pub model: String,
    /// When it was created, RFC 3339 UTC.
    pub created_at: String,
    /// For a child session (a subagent): the session that started it.
    #[serde(default)]
    pub parent_session_id: Option<String>,
    /// For a child session: the parent's call that started it.
    #[serde(default)]
    pub parent_call_id: Option<String>,
}

/// Which sessions a listing holds, by their parent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ParentFilter {
    /// Every session, top-level or child.
    #[default]
    Any,
    /// Only top-level sessions (no parent).
    TopLevel,
    /// Only the children of this session.
    ChildrenOf(String),
}

impl ParentFilter {
    /// Whether a session with parent `parent` is listed.
    pub fn admits(&self, parent: Option<&str>) -> bool {
        match self {
            ParentFilter::Any => true,
            ParentFilter::TopLevel => parent.is_none(),
            ParentFilter::ChildrenOf(id) => parent == Some(id.as_str()),
        }
    }

    /// The filter as two SQL parameters: whether only top-level sessions are listed, and the
    /// parent whose children are.
    pub(crate) fn sql_params(&self) -> (bool, Option<String>) {
        match self {
            ParentFilter::Any => (false, None),
            ParentFilter::TopLevel => (true, None),
            ParentFilter::ChildrenOf(id) => (false, Some(id.clone())),
        }
    }
}

/// Which sessions to list: newest activity first, a page at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionQuery {
    /// Only sessions of this workspace.
    pub workspace: Option<String>,
    /// Only sessions whose title contains this text (case-insensitive).
    pub title_contains: Option<String>,
    /// The cursor of the previous page (its `next`, an opaque string); the first page when
    /// `None`.
    pub after: Option<String>,
    /// The most sessions on the page.
    pub limit: usize,
    /// Which sessions by their parent: every one, top-level ones, or one session's children.
    pub parent: ParentFilter,
}

/// The answer to [`EventStore::acquire_lease`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum Lease {
    /// The caller holds the lease now, until the time it asked for has passed.
    Acquired,
    /// Another owner holds the lease and it has not expired.
    HeldBy {
        /// The owner that holds it.
        owner: String,
    },
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No session has this id.
    #[error("no session `{0}`")]
    UnknownSession(String),
    /// A session with this id exists already.
    #[error("a session `{0}` exists already")]
    DuplicateSession(String),
    /// An append did not continue the log: its first event was not the head + 1, or its events
    /// were not consecutive. Nothing of it was stored.
    #[error(
        "session `{session}`: expected event {expected} next, got {got} (another writer, or a gap)"
    )]
    SeqConflict {
        /// The session.
        session: String,
        /// The `seq` the log continues with.
        expected: u64,
        /// The `seq` the append brought.
        got: u64,
    },
    /// A stored value could not be read back.
    #[error("a stored event of session `{session}` is unreadable: {message}")]
    Corrupt {
        /// The session.
        session: String,
        /// What is wrong with it.
        message: String,
    },
    /// The store is busy (locked by another process) past its wait. Nothing of the operation
    /// was stored; it may be retried.
    #[error("the store is busy: {0}")]
    Busy(String),
    /// The database is full (the disk, or its configured size). Nothing of the operation was
    /// stored; the store keeps serving reads, and writes once there is room.
    #[error("the store is full: {0}")]
    Full(String),
    /// The database is held by another Qilin process; only one may write it.
    #[error(
        "{path} is in use by another Qilin process (pid {pid}); stop it, or use another database"
    )]
    InUse {
        /// The database file.
        path: String,
        /// The other process's id, as it recorded it (`unknown` when it had not yet).
        pid: String,
    },
    /// The database was written by a newer Qilin than this one.
    #[error(
        "{database} has schema version {found}, newer than this Qilin knows ({supported}); upgrade Qilin to open it"
    )]
    SchemaTooNew {
        /// The database (a file path, or a PostgreSQL schema).
        database: String,
        /// The version the database is at.
        found: i64,
        /// The newest version this binary knows.
        supported: i64,
    },
    /// A search query that cannot be searched: no word in it, too long, a malformed time.
    #[error("invalid search: {0}")]
    InvalidQuery(String),
    /// A paging cursor that no list returned.
    #[error("invalid page cursor `{0}`: pass the `next` of the previous page")]
    InvalidCursor(String),
    /// The store's configuration is unusable: a malformed URL, a bad schema name.
    #[error("invalid store configuration: {0}")]
    Config(String),
    /// The store failed (I/O, database error); the message says what and where.
    #[error("the store failed: {0}")]
    Backend(String),
}

/// The durable home of sessions and their events. Cheap to share behind an `Arc`.
#[async_trait]
pub trait EventStore: Send + Sync + 'static {
    /// Records a new session with no events.
    async fn create_session(&self, session: NewSession) -> Result<SessionInfo, StoreError>;

    /// The session `id`, if it exists.
    async fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError>;

    /// A page of sessions, newest activity first.
    async fn list_sessions(&self, query: &SessionQuery) -> Result<SessionPage, StoreError>;

    /// A page of the places `query`'s words occur in the sessions' recorded text, best first
    /// (see [`search`] for how words match).
    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError>;

    /// Sets a session's title.
    async fn rename_session(&self, id: &str, title: &str) -> Result<(), StoreError>;

    /// Removes a session with its events and requests.
    async fn delete_session(&self, id: &str) -> Result<(), StoreError>;

    /// Appends `events` (consecutive, the first one the head + 1) atomically and durably, then
    /// hands them to the session's followers. Returns the new head `seq`.
    async fn append(&self, session: &str, events: &[Event]) -> Result<u64, StoreError>;

    /// Up to `limit` events after `after`, in order: [`read_json`](EventStore::read_json)'s,
    /// decoded.
    async fn read(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Event>, StoreError> {
        self.read_json(session, after, limit)
            .await?
            .iter()
            .map(|event| plan::decode(session, &event.json))
            .collect()
    }

    /// The events [`read`](EventStore::read) returns, as the JSON the store keeps, for a host
    /// that passes them on (a server's pages of history) rather than reading them.
    async fn read_json(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventJson>, StoreError>;

    /// Every event after `after`: the stored ones, then each new one as it commits — each
    /// exactly once, in order, forever (until the stream is dropped or the session deleted).
    /// A follower that falls too far behind is caught up from storage, never skipped. The
    /// stream ends when the session is deleted or the store closes, and after yielding an error
    /// (follow again from the last `seq` received).
    fn follow(&self, session: &str, after: u64) -> BoxStream<'static, Result<Event, StoreError>>;

    /// The events [`follow`](EventStore::follow) yields, as the JSON the store keeps, for a
    /// host that passes them on (a server's event streams) rather than reading them.
    fn follow_json(
        &self,
        session: &str,
        after: u64,
    ) -> BoxStream<'static, Result<EventJson, StoreError>>;

    /// Calls `observer` after each commit of an append (see [`CommitObserver`]).
    fn observe_commits(&self, observer: CommitObserver);

    /// The requests of a session still waiting for an answer, in the order opened.
    async fn open_requests(&self, session: &str) -> Result<Vec<RequestOpenedEvent>, StoreError>;

    /// Sessions whose last turn has not finished, for a host to close after a restart.
    async fn running_sessions(&self) -> Result<Vec<SessionInfo>, StoreError>;

    /// Sessions whose log holds a loop or a workflow run started and not finished
    /// (`loop.started` or `workflow.started` without its `*.finished`), newest activity first:
    /// unattended work a host takes up after a restart, though the turn that started it may
    /// have ended long before (a background run, a loop between iterations).
    async fn sessions_with_running_loops_or_workflows(
        &self,
    ) -> Result<Vec<SessionInfo>, StoreError>;

    /// Takes the lease of `session` for `owner` for `ttl`: granted when nobody holds it, when
    /// its holder's time ran out (a crashed process), or when `owner` holds it already — which
    /// is how a holder renews it, well before `ttl` passes. A host runs a session's turns only
    /// while it holds the lease.
    async fn acquire_lease(
        &self,
        session: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError>;

    /// Gives the lease of `session` up, if `owner` holds it; otherwise does nothing.
    async fn release_lease(&self, session: &str, owner: &str) -> Result<(), StoreError>;

    /// Connects the [`CommandRelay`] of the process named `owner` (its lease owner name), for a
    /// store several processes share: `handler` runs the commands other processes send to
    /// this one. `None` for a store only one process uses (memory, SQLite), where every
    /// session's owner is this process.
    async fn connect_relay(
        &self,
        owner: &str,
        handler: RelayHandler,
    ) -> Result<Option<Arc<dyn CommandRelay>>, StoreError> {
        let _ = (owner, handler);
        Ok(None)
    }

    /// Records a new schedule (its `id` and `sessionId` set) whose first fire is `first_fire`.
    async fn create_schedule(
        &self,
        schedule: &ScheduleRecord,
        first_fire: DateTime<Utc>,
    ) -> Result<(), StoreError>;

    /// One schedule, with its latest run and count of runs.
    async fn schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError>;

    /// The schedules of `session`, or every session's when `None`, deleted ones left out,
    /// newest first.
    async fn list_schedules(
        &self,
        session: Option<&str>,
    ) -> Result<Vec<ScheduleRecord>, StoreError>;

    /// Marks a schedule deleted (it fires no more) and returns it; `None` when no schedule has
    /// this id.
    async fn delete_schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError>;

    /// Claims every fire due at `now` for `owner`, in one transaction per store: each due
    /// active schedule's next fire moves on (see [`schedules::decide`], with `grace` as how
    /// late a fire may be before it counts as missed) and each run to start is recorded,
    /// `running` and owned by `owner`. Two processes claiming at once never take the same fire.
    ///
    /// A `this_session` fire runs where its session runs: a schedule whose session's lease
    /// another process holds is left due for that process to claim; otherwise the claim takes
    /// the session's lease for `owner` for `lease` in the same transaction, so the claimer is
    /// the process that runs the turn (and a process that dies mid-run leaves its run to be
    /// ended as interrupted, never a fire claimed by one process for another).
    async fn claim_due(
        &self,
        now: DateTime<Utc>,
        owner: &str,
        grace: chrono::Duration,
        lease: Duration,
    ) -> Result<Vec<ClaimedFire>, StoreError>;

    /// Replaces run `run_number` of schedule `id` (its session, turn, outcome).
    async fn update_run(
        &self,
        id: &str,
        run_number: u32,
        run: &ScheduleRun,
    ) -> Result<(), StoreError>;

    /// Ends as interrupted, at `now`, every run its process left: still `running`, claimed
    /// before `claimed_before` by another owner than `owner`, whose claimer does not hold the
    /// lease of the run's session (that process stopped). Returns them with their schedules' ids.
    async fn interrupt_abandoned_runs(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        claimed_before: DateTime<Utc>,
    ) -> Result<Vec<(String, ScheduleRun)>, StoreError>;
}

/// A page cursor: the position of the last session of a page in the listing order.
pub(crate) struct Cursor {
    /// Its last activity.
    pub last_activity: String,
    /// Its id.
    pub id: String,
}

impl Cursor {
    /// The cursor after `session`.
    pub(crate) fn after(session: &SessionInfo) -> String {
        format!("{}|{}", session.last_activity, session.id)
    }

    /// Reads a cursor a list returned.
    pub(crate) fn parse(cursor: &str) -> Result<Self, StoreError> {
        cursor
            .split_once('|')
            .map(|(last_activity, id)| Cursor {
                last_activity: last_activity.to_string(),
                id: id.to_string(),
            })
            .ok_or_else(|| StoreError::InvalidCursor(cursor.to_string()))
    }
}

/// A session as created: no events yet, idle, untitled.
pub(crate) fn created_session(session: NewSession) -> SessionInfo {
    SessionInfo {
        id: session.id,
        workspace: session.workspace,
        agent: session.agent,
        agent_file: session.agent_file,
        model: session.model,
        title: None,
        last_activity: session.created_at.clone(),
        created_at: session.created_at,
        status: SessionStatus::Idle,
        turns: 0,
        head_seq: 0,
        parent_session_id: session.parent_session_id,
        parent_call_id: session.parent_call_id,
        child_count: 0,
    }
}

/// The page of `fetched`, which holds up to one session more than `limit` when more follow.
pub(crate) fn session_page(mut fetched: Vec<SessionInfo>, limit: usize) -> SessionPage {
    let next = (fetched.len() > limit)
        .then(|| {
            fetched.truncate(limit);
            fetched.last().map(Cursor::after)
        })
        .flatten();
    SessionPage {
        sessions: fetched,
        next,
    }
}

/// The columns a database store reads a session from, in this order (the last one counts its
/// children, through the index on `parent_session_id`).
pub(crate) const SESSION_COLUMNS: &str = "id, workspace, agent, agent_file, model, title, \
                                          created_at, last_activity, status, turns, head_seq, \
                                          parent_session_id, parent_call_id, \
                                          (SELECT count(*) FROM sessions AS child \
                                           WHERE child.parent_session_id = sessions.id)";

/// The most sessions one page holds, whatever the query asks.
pub const MAX_PAGE: usize = 500;

/// The number of sessions a query's page holds: at least one, at most [`MAX_PAGE`].
pub(crate) fn page_limit(query: &SessionQuery) -> usize {
    query.limit.clamp(1, MAX_PAGE)
}

/// The longest a title taken from a prompt is, in characters.
pub const TITLE_CHARS: usize = 80;

/// The title a prompt gives a session: its first non-empty line, shortened to
/// [`TITLE_CHARS`] characters with an ellipsis.
pub fn title_from_prompt(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    if line.chars().count() <= TITLE_CHARS {
        return line.to_string();
    }
    let mut title: String = line.chars().take(TITLE_CHARS - 1).collect();
    title.push('…');
    title
}
