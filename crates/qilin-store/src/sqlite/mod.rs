//! [`SqliteStore`]: the embedded store, one SQLite file in write-ahead-log mode.
//!
//! One thread owns the only writing connection and batches the operations of every session
//! into few transactions ([`writer`]); reads run on their own connections from a small pool,
//! off the async threads. The search index is in a file of its own beside the database
//! (`DB.search`), written after the appends committed by a thread of its own ([`indexer`]);
//! a search first waits for it to have indexed every append committed before. An exclusive lock on `DB.lock`, beside the database, keeps a second
//! process from writing it at all, and names the process that holds it. The files are the
//! user's alone (0600, in a folder created 0700): see [`private`].

mod checkpoint;
mod index;
mod indexer;
mod private;
mod schedules;
mod schema;
mod writer;

use crate::lease::LeaseTable;
use crate::live::{self, EventSource, LiveMap};
use crate::plan::{AppendPlan, decode, status_from_name};
use crate::schedules::ClaimedFire;
use crate::search::PreparedSearch;
use crate::{
    CommitObserver, Cursor, EventJson, EventStore, Lease, NewSession, SESSION_COLUMNS, SearchPage,
    SearchQuery, SessionInfo, SessionPage, SessionQuery, StoreError, page_limit,
};
use async_trait::async_trait;
use checkpoint::Checkpointer;
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use indexer::Indexer;
use parking_lot::Mutex;
use qilin_protocol::schedules::{ScheduleRecord, ScheduleRun};
use qilin_protocol::{Event, RequestOpenedEvent};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Row, params};
use schedules::{ScheduleDone, ScheduleOp};
use schema::ProcessLock;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::oneshot;
use writer::{Command, Writer};

/// How a [`SqliteStore`] opens its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long an operation waits for a lock another connection holds before it fails with
    /// [`StoreError::Busy`]. Five seconds by default.
    pub busy_timeout: Duration,
    /// The largest the database file may grow, in bytes; past it appends fail with
    /// [`StoreError::Full`]. Unlimited (the disk's size) by default.
    pub max_size_bytes: Option<u64>,
    /// Share the database with other processes that share it (terminal sessions of one
    /// workspace, each writing its own sessions; SQLite serialises their commits) instead of
    /// holding it alone (a server, whose followers must see every commit). A process holding
    /// it alone refuses sharers, and the other way round. Off by default.
    pub shared: bool,
    /// Index the text of appended events for [`EventStore::search`] (on by default). Off, no
    /// indexer runs and what is appended is not found until a store opened with it on catches
    /// up: for measuring what the index costs an append.
    pub search_index: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_secs(5),
            max_size_bytes: None,
            shared: false,
            search_index: true,
        }
    }
}

/// Sessions and events in one SQLite file; see the [module](self) notes.
pub struct SqliteStore {
    path: PathBuf,
    commands: Option<mpsc::Sender<Command>>,
    writer: Option<JoinHandle<()>>,
    /// Writes the search index; `None` when appends are not indexed.
    indexer: Option<Indexer>,
    readers: Arc<Readers>,
    live: Arc<LiveMap>,
    leases: Arc<LeaseTable>,
    /// Opened [shared](SqliteOptions::shared) with other processes.
    shared: bool,
}

/// The idle reading connections kept open at most.
const IDLE_READERS: usize = 8;

/// The reading connections.
struct Readers {
    path: PathBuf,
    busy_timeout: Duration,
    idle: Mutex<Vec<Connection>>,
}

/// A database error as a store error, with where it happened.
pub(crate) fn sqlite_error(err: &rusqlite::Error, context: &str) -> StoreError {
    match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy(format!(
            "{context}: the database is locked by another connection ({err})"
        )),
        Some(ErrorCode::DiskFull) => StoreError::Full(format!(
            "{context}: {err}; free disk space (or raise the store's size limit)"
        )),
        _ => StoreError::Backend(format!("{context}: {err}")),
    }
}

impl SqliteStore {
    /// Opens (creating it and its folder when missing) the database at `path`. Opening reads
    /// and may migrate the file: from async code, call it off the async threads
    /// (`spawn_blocking`), as [`open_database`](crate::open_database) does.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// Opens the workspace's database, `WORKSPACE/.qilin/qilin.db`.
    pub fn open_in_workspace(workspace: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open(workspace.as_ref().join(crate::DEFAULT_DATABASE))
    }

    /// Opens the database at `path` with `options`. Fails with [`StoreError::InUse`] when
    /// another process has it open, and with [`StoreError::SchemaTooNew`] when a newer Qilin
    /// wrote it.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        private::prepare(&path)?;
        let lock = ProcessLock::acquire(&path, options.shared)?;
        let context = path.display().to_string();
        let error = |err: rusqlite::Error| sqlite_error(&err, &context);
        let mut conn = Connection::open(&path).map_err(error)?;
        schema::configure(&conn, options.busy_timeout).map_err(error)?;
        schema::migrate(&mut conn, &path)?;
        let identity = schema::identity(&conn, &path)?;
        let index = index::open_index(&path, &identity, options.busy_timeout)?;
        let indexer = match options.search_index {
            true => Some(Indexer::start(
                &path,
                index,
                options.busy_timeout,
                options.shared,
            )?),
            false => None,
        };
        if let Some(bytes) = options.max_size_bytes {
            let page_size: i64 = conn
                .pragma_query_value(None, "page_size", |row| row.get(0))
                .map_err(error)?;
            let pages = i64::try_from(bytes).unwrap_or(i64::MAX) / page_size.max(1);
            conn.pragma_update(None, "max_page_count", pages.max(1))
                .map_err(error)?;
        }
        let checkpointer = Checkpointer::start(&path, options.busy_timeout)?;
        checkpointer.watch(&mut conn).map_err(error)?;
        let live = Arc::new(LiveMap::default());
        let leases = Arc::new(LeaseTable::default());
        let (commands, receiver) = mpsc::channel();
        let writer = Writer {
            conn,
            path: path.clone(),
            live: Arc::clone(&live),
            leases: Arc::clone(&leases),
            checkpointer,
            lock,
            notes: indexer.as_ref().and_then(Indexer::notes),
        };
        let writer = std::thread::Builder::new()
            .name("qilin-store-writer".into())
            .spawn(move || writer.run(receiver))
            .map_err(|err| StoreError::Backend(format!("cannot start the writer: {err}")))?;
        Ok(SqliteStore {
            readers: Arc::new(Readers {
                path: path.clone(),
                busy_timeout: options.busy_timeout,
                idle: Mutex::new(Vec::new()),
            }),
            path,
            commands: Some(commands),
            writer: Some(writer),
            indexer,
            live,
            leases,
            shared: options.shared,
        })
    }

    /// Refuses the scheduler's work on a store opened shared: its leases live in each process,
    /// so one process would take another's live run for abandoned, and both would claim a
    /// session's fires.
    fn refuse_shared_scheduling(&self) -> Result<(), StoreError> {
        match self.shared {
            true => Err(StoreError::Config(format!(
                "{} is opened shared with other processes, whose session leases this process \
                 cannot see, so it cannot claim or judge scheduled runs: open it alone (as \
                 `qilin serve` does), or use PostgreSQL for several server processes",
                self.path.display()
            ))),
            false => Ok(()),
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues a schedule write for the writer and waits for its outcome.
    async fn write_schedule(&self, op: ScheduleOp) -> Result<ScheduleDone, StoreError> {
        self.write(|reply| Command::Schedule { op, reply }).await
    }

    /// Queues `command` for the writer and waits for its outcome.
    async fn write<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<T, StoreError>>) -> Command,
    ) -> Result<T, StoreError> {
        let (reply, outcome) = oneshot::channel();
        let stopped =
            || StoreError::Backend(format!("{}: the writer stopped", self.path.display()));
        self.commands
            .as_ref()
            .ok_or_else(stopped)?
            .send(command(reply))
            .map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}

impl Drop for SqliteStore {
    /// Lets the writer finish what is queued, close the database and free the lock, then ends
    /// the followers.
    fn drop(&mut self) {
        drop(self.commands.take());
        if let Some(writer) = self.writer.take() {
            // A writer that panicked has nothing left to flush; the lock went with its thread.
            let _ = writer.join();
        }
        // After the writer: it notes nothing more, and the indexer indexes what it noted.
        drop(self.indexer.take());
        self.live.close_all();
    }
}

impl Readers {
    /// Runs `read` on a reading connection, off the async threads.
    async fn run<T: Send + 'static>(
        self: &Arc<Self>,
        read: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let readers = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let conn = readers.take()?;
            let outcome = read(&conn);
            readers.give_back(conn);
            outcome
        })
        .await
        .map_err(|err| StoreError::Backend(format!("a read of {} failed: {err}", self.context())))?
    }

    fn context(&self) -> String {
        self.path.display().to_string()
    }

    fn error(&self, err: &rusqlite::Error) -> StoreError {
        sqlite_error(err, &self.context())
    }

    fn take(&self) -> Result<Connection, StoreError> {
        if let Some(conn) = self.idle.lock().pop() {
            return Ok(conn);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(|e| self.error(&e))?;
        schema::configure(&conn, self.busy_timeout).map_err(|e| self.error(&e))?;
        indexer::attach_index(&conn, &self.path)?;
        conn.pragma_update(None, "query_only", true)
            .map_err(|e| self.error(&e))?;
        Ok(conn)
    }

    fn give_back(&self, conn: Connection) {
        let mut idle = self.idle.lock();
        if idle.len() < IDLE_READERS {
            idle.push(conn);
        }
    }
}

/// A session from a row of [`SESSION_COLUMNS`].
fn session_row(row: &Row<'_>) -> rusqlite::Result<(SessionInfo, String)> {
    let status: String = row.get(8)?;
    let turns: i64 = row.get(9)?;
    let head: i64 = row.get(10)?;
    let children: i64 = row.get(13)?;
    Ok((
        SessionInfo {
            id: row.get(0)?,
            workspace: row.get(1)?,
            agent: row.get(2)?,
            agent_file: row.get(3)?,
            model: row.get(4)?,
            title: row.get(5)?,
            created_at: row.get(6)?,
            last_activity: row.get(7)?,
            status: crate::SessionStatus::Idle,
            turns: u32::try_from(turns).unwrap_or(u32::MAX),
            head_seq: u64::try_from(head).unwrap_or(0),
            parent_session_id: row.get(11)?,
            parent_call_id: row.get(12)?,
            child_count: u32::try_from(children).unwrap_or(u32::MAX),
        },
        status,
    ))
}

/// Sessions from a query over [`SESSION_COLUMNS`].
fn sessions(
    conn: &Connection,
    readers: &Readers,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<SessionInfo>, StoreError> {
    let error = |err: rusqlite::Error| readers.error(&err);
    let mut statement = conn.prepare_cached(sql).map_err(error)?;
    let rows = statement.query_map(params, session_row).map_err(error)?;
    rows.map(|row| {
        let (mut info, status) = row.map_err(error)?;
        info.status = status_from_name(&info.id, &status)?;
        Ok(info)
    })
    .collect()
}

/// The events of the session with key `key` after `after`, at most `limit`, as stored.
fn events_after(
    conn: &Connection,
    readers: &Readers,
    session: &str,
    key: i64,
    after: u64,
    limit: usize,
) -> Result<Vec<EventJson>, StoreError> {
    let error = |err: rusqlite::Error| readers.error(&err);
    let mut statement = conn
        .prepare_cached(
            "SELECT seq, data FROM events WHERE session = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )
        .map_err(error)?;
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = statement
        .query_map(params![key, after, limit], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(error)?;
    rows.map(|row| {
        let (seq, json) = row.map_err(error)?;
        EventJson::stored(session, u64::try_from(seq).unwrap_or(0), json)
    })
    .collect()
}

/// The key of session `id`, if it exists.
fn session_key(conn: &Connection, readers: &Readers, id: &str) -> Result<Option<i64>, StoreError> {
    conn.prepare_cached("SELECT key FROM sessions WHERE id = ?1")
        .and_then(|mut statement| statement.query_row([id], |row| row.get(0)).optional())
        .map_err(|err| readers.error(&err))
}

/// What a follower reads from: the reading connections.
struct Source(Arc<Readers>);

#[async_trait]
impl EventSource for Source {
    async fn events_after(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Option<Vec<EventJson>>, StoreError> {
        let session = session.to_string();
        let readers = Arc::clone(&self.0);
        self.0
            .run(move |conn| {
                let Some(key) = session_key(conn, &readers, &session)? else {
                    return Ok(None);
                };
                events_after(conn, &readers, &session, key, after, limit).map(Some)
            })
            .await
    }
}

#[async_trait]
impl EventStore for SqliteStore {
    async fn create_session(&self, session: NewSession) -> Result<SessionInfo, StoreError> {
        self.write(|reply| Command::Create { session, reply }).await
    }

    async fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError> {
        let id = id.to_string();
        let readers = Arc::clone(&self.readers);
        self.readers
            .run(move |conn| {
                let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1");
                Ok(sessions(conn, &readers, &sql, [id])?.pop())
            })
            .await
    }

    async fn list_sessions(&self, query: &SessionQuery) -> Result<SessionPage, StoreError> {
        let limit = page_limit(query);
        let cursor = query.after.as_deref().map(Cursor::parse).transpose()?;
        let workspace = query.workspace.clone();
        let title = query.title_contains.as_deref().map(str::to_lowercase);
        let (top_level, parent) = query.parent.sql_params();
        let readers = Arc::clone(&self.readers);
        let page = self
            .readers
            .run(move |conn| {
                let sql = format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions
                     WHERE (?1 IS NULL OR workspace = ?1)
                       AND (?2 IS NULL OR instr(title_lower, ?2) > 0)
                       AND (?3 IS NULL OR (last_activity, id) < (?3, ?4))
                       AND (NOT ?6 OR parent_session_id IS NULL)
                       AND (?7 IS NULL OR parent_session_id = ?7)
                     ORDER BY last_activity DESC, id DESC LIMIT ?5"
                );
                let (activity, id) = cursor.map(|c| (c.last_activity, c.id)).unzip();
                let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
                sessions(
                    conn,
                    &readers,
                    &sql,
                    params![workspace, title, activity, id, fetch, top_level, parent],
                )
            })
            .await?;
        Ok(crate::session_page(page, limit))
    }

    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError> {
        let search = PreparedSearch::new(query)?;
        // Every append committed before the search is indexed before it reads the index.
        if let Some(indexer) = &self.indexer {
            indexer.flush(&self.path).await?;
        }
        let readers = Arc::clone(&self.readers);
        self.readers
            .run(move |conn| index::search(conn, &search, &readers.context()))
            .await
    }

    async fn rename_session(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let (id, title) = (id.to_string(), title.to_string());
        self.write(|reply| Command::Rename { id, title, reply })
            .await
    }

    async fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write(|reply| Command::Delete { id, reply }).await
    }

    async fn append(&self, session: &str, events: &[Event]) -> Result<u64, StoreError> {
        let Some(plan) = AppendPlan::new(session, events)? else {
            return self
                .session(session)
                .await?
                .map(|info| info.head_seq)
                .ok_or_else(|| StoreError::UnknownSession(session.to_string()));
        };
        self.write(|reply| Command::Append { plan, reply }).await
    }

    async fn read_json(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventJson>, StoreError> {
        Source(Arc::clone(&self.readers))
            .events_after(session, after, limit)
            .await?
            .ok_or_else(|| StoreError::UnknownSession(session.to_string()))
    }

    fn follow(&self, session: &str, after: u64) -> BoxStream<'static, Result<Event, StoreError>> {
        if self.commands.is_none() {
            let closed = StoreError::Backend(format!("{} is closed", self.path.display()));
            return stream::once(std::future::ready(Err(closed))).boxed();
        }
        live::follow(
            Arc::new(Source(Arc::clone(&self.readers))),
            &self.live,
            session,
            after,
        )
    }

    fn follow_json(
        &self,
        session: &str,
        after: u64,
    ) -> BoxStream<'static, Result<EventJson, StoreError>> {
        if self.commands.is_none() {
            let closed = StoreError::Backend(format!("{} is closed", self.path.display()));
            return stream::once(std::future::ready(Err(closed))).boxed();
        }
        live::follow_json(
            Arc::new(Source(Arc::clone(&self.readers))),
            &self.live,
            session,
            after,
        )
    }

    fn observe_commits(&self, observer: CommitObserver) {
        self.live.observe(observer);
    }

    async fn open_requests(&self, session: &str) -> Result<Vec<RequestOpenedEvent>, StoreError> {
        let session = session.to_string();
        let readers = Arc::clone(&self.readers);
        self.readers
            .run(move |conn| {
                let error = |err: rusqlite::Error| readers.error(&err);
                let key = session_key(conn, &readers, &session)?
                    .ok_or_else(|| StoreError::UnknownSession(session.clone()))?;
                let mut statement = conn
                    .prepare_cached("SELECT data FROM requests WHERE session = ?1 ORDER BY seq")
                    .map_err(error)?;
                let rows = statement
                    .query_map([key], |row| row.get::<_, String>(0))
                    .map_err(error)?;
                rows.map(|json| decode(&session, &json.map_err(error)?))
                    .collect()
            })
            .await
    }

    async fn running_sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let readers = Arc::clone(&self.readers);
        self.readers
            .run(move |conn| {
                let sql = format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions WHERE status = 'running'
                     ORDER BY last_activity DESC, id DESC"
                );
                sessions(conn, &readers, &sql, ())
            })
            .await
    }

    async fn sessions_with_running_loops_or_workflows(
        &self,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        let readers = Arc::clone(&self.readers);
        self.readers
            .run(move |conn| {
                // The `WHERE` is the partial index's, so only its rows are read.
                let sql = format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions WHERE key IN (
                         SELECT session FROM events
                         WHERE kind IN ('loop.started', 'loop.finished',
                                        'workflow.started', 'workflow.finished')
                         GROUP BY session
                         HAVING sum(kind LIKE '%.started') > sum(kind LIKE '%.finished'))
                     ORDER BY last_activity DESC, id DESC"
                );
                sessions(conn, &readers, &sql, ())
            })
            .await
    }

    async fn acquire_lease(
        &self,
        session: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError> {
        if self.session(session).await?.is_none() {
            return Err(StoreError::UnknownSession(session.to_string()));
        }
        Ok(self.leases.acquire(session, owner, ttl))
    }

    async fn release_lease(&self, session: &str, owner: &str) -> Result<(), StoreError> {
        self.leases.release(session, owner);
        Ok(())
    }

    async fn create_schedule(
        &self,
        schedule: &ScheduleRecord,
        first_fire: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let op = ScheduleOp::Create {
            record: Box::new(schedule.clone()),
            first_fire,
        };
        self.write_schedule(op).await.map(|_| ())
    }

    async fn schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError> {
        let id = id.to_string();
        let readers = Arc::clone(&self.readers);
        self.readers
            .run(move |conn| {
                schedules::read_one(conn, &id).map_err(|err| err.into_store(&|e| readers.error(&e)))
            })
            .await
    }

    async fn list_schedules(
        &self,
        session: Option<&str>,
    ) -> Result<Vec<ScheduleRecord>, StoreError> {
        let session = session.map(str::to_string);
        let readers = Arc::clone(&self.readers);
        self.readers
            .run(move |conn| {
                schedules::read_list(conn, session.as_deref())
                    .map_err(|err| err.into_store(&|e| readers.error(&e)))
            })
            .await
    }

    async fn delete_schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError> {
        let op = ScheduleOp::Delete { id: id.to_string() };
        match self.write_schedule(op).await? {
            ScheduleDone::Record(record) => Ok(record.map(|record| *record)),
            _ => Err(writer::mismatch()),
        }
    }

    async fn claim_due(
        &self,
        now: DateTime<Utc>,
        owner: &str,
        grace: chrono::Duration,
        lease: Duration,
    ) -> Result<Vec<ClaimedFire>, StoreError> {
        self.refuse_shared_scheduling()?;
        let leases = Arc::clone(&self.leases);
        let claimer = owner.to_string();
        let op = ScheduleOp::Claim {
            now,
            owner: owner.to_string(),
            grace,
            take_lease: Box::new(move |session| {
                leases.acquire(session, &claimer, lease) == Lease::Acquired
            }),
        };
        match self.write_schedule(op).await? {
            ScheduleDone::Claimed(claimed) => Ok(claimed),
            _ => Err(writer::mismatch()),
        }
    }

    async fn update_run(
        &self,
        id: &str,
        run_number: u32,
        run: &ScheduleRun,
    ) -> Result<(), StoreError> {
        let op = ScheduleOp::UpdateRun {
            id: id.to_string(),
            number: run_number,
            run: Box::new(run.clone()),
        };
        self.write_schedule(op).await.map(|_| ())
    }

    async fn interrupt_abandoned_runs(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        claimed_before: DateTime<Utc>,
    ) -> Result<Vec<(String, ScheduleRun)>, StoreError> {
        self.refuse_shared_scheduling()?;
        let me = owner.to_string();
        let readers = Arc::clone(&self.readers);
        let running = self
            .readers
            .run(move |conn| {
                schedules::running_runs(conn, &me, claimed_before)
                    .map_err(|err| err.into_store(&|e| readers.error(&e)))
            })
            .await?;
        // The leases of this store live in this process: a claimer holding none stopped.
        let runs: Vec<(String, i64)> = running
            .into_iter()
            .filter(|(_, _, holder, session)| !self.leases.holds(session, holder))
            .map(|(id, number, _, _)| (id, number))
            .collect();
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        let op = ScheduleOp::Interrupt { runs, now };
        match self.write_schedule(op).await? {
            ScheduleDone::Interrupted(ended) => Ok(ended),
            _ => Err(writer::mismatch()),
        }
    }
}
