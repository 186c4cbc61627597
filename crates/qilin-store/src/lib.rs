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

mod memory;

pub use memory::MemoryStore;

use async_trait::async_trait;
use futures_util::stream::BoxStream;
use qilin_protocol::{Event, RequestOpenedEvent};
use serde::{Deserialize, Serialize};

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
}

/// Whether a turn is running in a session, as its events say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// No turn is running.
    Idle,
    /// A turn started and has not finished.
    Running,
}

/// A session as listed: what it runs and where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session's id.
    pub id: String,
    /// The workspace folder, absolute.
    pub workspace: String,
    /// The agent's name.
    pub agent: String,
    /// The agent file, when there is one.
    pub agent_file: Option<String>,
    /// The model, as `provider:name`.
    pub model: String,
    /// The title: the first prompt (its first line, shortened) until someone renames it.
    pub title: Option<String>,
    /// When it was created, RFC 3339 UTC.
    pub created_at: String,
    /// The time of its latest event (its creation before any), RFC 3339 UTC.
    pub last_activity: String,
    /// Whether a turn is running.
    pub status: SessionStatus,
    /// Turns started so far.
    pub turns: u32,
    /// The `seq` of its latest event; 0 before any.
    pub head_seq: u64,
}

/// Which sessions to list: newest activity first, a page at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionQuery {
    /// Only sessions of this workspace.
    pub workspace: Option<String>,
    /// Only sessions whose title contains this text (case-insensitive).
    pub title_contains: Option<String>,
    /// The cursor of the previous page (its `next`); the first page when `None`.
    pub after: Option<String>,
    /// The most sessions on the page.
    pub limit: usize,
}

/// One page of sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPage {
    /// The sessions, newest activity first.
    pub sessions: Vec<SessionInfo>,
    /// The cursor of the next page, when there is one.
    pub next: Option<String>,
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
    /// The store is busy (locked by another process) past its wait.
    #[error("the store is busy: {0}")]
    Busy(String),
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

    /// Sets a session's title.
    async fn rename_session(&self, id: &str, title: &str) -> Result<(), StoreError>;

    /// Removes a session with its events and requests.
    async fn delete_session(&self, id: &str) -> Result<(), StoreError>;

    /// Appends `events` (consecutive, the first one the head + 1) atomically and durably, then
    /// hands them to the session's followers. Returns the new head `seq`.
    async fn append(&self, session: &str, events: &[Event]) -> Result<u64, StoreError>;

    /// Up to `limit` events after `after`, in order.
    async fn read(&self, session: &str, after: u64, limit: usize)
    -> Result<Vec<Event>, StoreError>;

    /// Every event after `after`: the stored ones, then each new one as it commits — each
    /// exactly once, in order, forever (until the stream is dropped or the session deleted).
    /// A follower that falls too far behind is caught up from storage, never skipped.
    fn follow(&self, session: &str, after: u64) -> BoxStream<'static, Result<Event, StoreError>>;

    /// The requests of a session still waiting for an answer, in the order opened.
    async fn open_requests(&self, session: &str) -> Result<Vec<RequestOpenedEvent>, StoreError>;

    /// Sessions whose last turn has not finished, for a host to close after a restart.
    async fn running_sessions(&self) -> Result<Vec<SessionInfo>, StoreError>;
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
