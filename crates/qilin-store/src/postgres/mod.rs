//! [`PostgresStore`]: sessions in PostgreSQL, shared by several Qilin processes.
//!
//! Appends are committed by one task per store, a batch of them per transaction ([`committer`]):
//! it locks the sessions' rows, checks each append against its head (the primary key
//! `(session_id, seq)` stands behind the check), inserts the events, updates the derived rows and
//! announces each new head with `NOTIFY`, delivered on commit. Every store listens on one
//! connection of its own and wakes its followers, which read the new events from the table —
//! so a follower in any process sees every session live. The processes pass each other the
//! commands for the sessions they run through a [`PostgresRelay`], listening the same way. Leases are columns of the session's
//! row, timed by the database's clock, so processes need not agree on the time.

mod committer;
mod index;
mod relay;
mod schedules;

pub use relay::PostgresRelay;

use crate::live::{self, EventSource, LiveMap};
use crate::plan::{AppendPlan, decode, status_from_name};
use crate::relay::{CommandRelay, RelayHandler};
use crate::schedules::ClaimedFire;
use crate::search::PreparedSearch;
use crate::{
    CommitObserver, Cursor, EventJson, EventStore, Lease, NewSession, SESSION_COLUMNS, SearchPage,
    SearchQuery, SessionInfo, SessionPage, SessionQuery, StoreError, page_limit,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use committer::{Append, Committer};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use qilin_backoff::Backoff;
use qilin_protocol::schedules::{ScheduleRecord, ScheduleRun};
use qilin_protocol::{Event, RequestOpenedEvent};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls, Row};

/// The schema, one entry per version: entry `i` takes the tables from version `i` to `i + 1`.
/// Never edit an entry once released; add one.
const MIGRATIONS: &[&str] = &[
    // 1: sessions with their derived rows and leases, events, open requests.
    r#"CREATE TABLE sessions (
        id TEXT COLLATE "C" PRIMARY KEY,
        workspace TEXT NOT NULL,
        agent TEXT NOT NULL,
        agent_file TEXT,
        model TEXT NOT NULL,
        title TEXT,
        title_lower TEXT,
        created_at TEXT NOT NULL,
        last_activity TEXT COLLATE "C" NOT NULL,
        status TEXT NOT NULL DEFAULT 'idle',
        turns BIGINT NOT NULL DEFAULT 0,
        head_seq BIGINT NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_expires TIMESTAMPTZ
    );
    CREATE INDEX sessions_by_activity ON sessions (last_activity DESC, id DESC);
    CREATE INDEX sessions_running ON sessions (status) WHERE status = 'running';
    CREATE TABLE events (
        session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        time TEXT NOT NULL,
        kind TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE requests (
        session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        request_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, request_id)
    );"#,
    // 2: the search index — one row per searchable text of an event (as written, and as its
    // tokens with their `tsvector` under a GIN index), and each call's tool and status; filled
    // from the stored events as it is created.
    r#"CREATE TABLE search_docs (
        id BIGSERIAL PRIMARY KEY,
        session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        turn BIGINT,
        call_id TEXT,
        field TEXT NOT NULL,
        time TEXT COLLATE "C" NOT NULL,
        body TEXT NOT NULL,
        terms TEXT NOT NULL,
        terms_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, terms)) STORED
    );
    CREATE INDEX search_docs_by_session ON search_docs (session_id);
    CREATE INDEX search_docs_text ON search_docs USING GIN (terms_tsv);
    CREATE TABLE search_calls (
        session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        status TEXT,
        PRIMARY KEY (session_id, call_id)
    );"#,
    // 3: child sessions (subagents) linked to the session and call that started them.
    r#"ALTER TABLE sessions ADD COLUMN parent_session_id TEXT COLLATE "C";
    ALTER TABLE sessions ADD COLUMN parent_call_id TEXT;
    CREATE INDEX sessions_by_parent ON sessions (parent_session_id, created_at)
        WHERE parent_session_id IS NOT NULL;"#,
    // 4: scheduled tasks and their runs; a session's go with it.
    r#"CREATE TABLE schedules (
        id TEXT COLLATE "C" PRIMARY KEY,
        session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        status TEXT NOT NULL,
        next_fire BIGINT,
        created_seq BIGSERIAL,
        data TEXT NOT NULL
    );
    CREATE INDEX schedules_due ON schedules (next_fire) WHERE status = 'active';
    CREATE INDEX schedules_by_session ON schedules (session_id);
    CREATE TABLE schedule_runs (
        schedule_id TEXT COLLATE "C" NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
        number BIGINT NOT NULL,
        owner TEXT NOT NULL,
        session_id TEXT COLLATE "C" NOT NULL,
        claimed_at BIGINT NOT NULL,
        outcome TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (schedule_id, number)
    );
    CREATE INDEX schedule_runs_running ON schedule_runs (owner) WHERE outcome = 'running';"#,
    // 5: the events that start and finish loops and workflow runs, by session: how a host
    // finds unattended work still running after a restart.
    r#"CREATE INDEX events_loop_and_workflow_runs ON events (session_id, kind)
        WHERE kind IN ('loop.started', 'loop.finished', 'workflow.started', 'workflow.finished');"#,
];

/// The schema version that brought the search index: migrating to it indexes what is stored.
const SEARCH_INDEX_VERSION: i64 = 2;

/// The schema version this binary writes.
const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How a [`PostgresStore`] connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// The schema the tables live in, created when missing: lower-case letters, digits and
    /// `_`, not starting with a digit, at most 48. `qilin` by default; processes that share
    /// sessions use the same one.
    pub schema: String,
    /// The most connections the store opens for its operations (its listening connection
    /// aside). 16 by default.
    pub pool_size: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            schema: crate::DEFAULT_POSTGRES_SCHEMA.into(),
            pool_size: 16,
        }
    }
}

/// Sessions and events in PostgreSQL; see the [module](self) notes.
pub struct PostgresStore {
    pool: Pool,
    config: Config,
    appends: mpsc::Sender<Append>,
    live: Arc<LiveMap>,
    channel: String,
    schema: String,
    listener: JoinHandle<()>,
}

/// A database error as a store error, with what was being done.
fn pg_error(err: &tokio_postgres::Error, context: &str) -> StoreError {
    let Some(db) = err.as_db_error() else {
        return StoreError::Backend(format!("{context}: {err}"));
    };
    let message = format!("{context}: {} ({})", db.message(), db.code().code());
    match db.code() {
        code if *code == SqlState::DISK_FULL || *code == SqlState::PROGRAM_LIMIT_EXCEEDED => {
            StoreError::Full(message)
        }
        code if *code == SqlState::LOCK_NOT_AVAILABLE
            || *code == SqlState::T_R_DEADLOCK_DETECTED
            || *code == SqlState::T_R_SERIALIZATION_FAILURE
            || *code == SqlState::QUERY_CANCELED =>
        {
            StoreError::Busy(message)
        }
        _ => StoreError::Backend(message),
    }
}

/// The connection settings of `url`, with the search path set to `schema`.
fn config(url: &str, schema: &str) -> Result<Config, StoreError> {
    // The channel, `qilin_events.SCHEMA`, must fit PostgreSQL's 63-byte names too.
    let valid = schema.len() <= 48
        && schema.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && schema
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(StoreError::Config(format!(
            "PostgreSQL schema `{schema}`: use lower-case letters, digits and `_`, not starting with a digit, at most 48"
        )));
    }
    let mut config: Config = url.parse().map_err(|err| {
        StoreError::Config(format!(
            "invalid PostgreSQL URL ({err}); expected postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        ))
    })?;
    let options = match config.get_options() {
        Some(existing) => format!("{existing} -c search_path={schema}"),
        None => format!("-c search_path={schema}"),
    };
    config.options(options);
    config.application_name("qilin");
    config.connect_timeout(Duration::from_secs(10));
    Ok(config)
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`), with
    /// its tables in the schema `qilin`.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// Connects with `options`: creates or migrates the tables, refusing ones a newer Qilin
    /// wrote, and starts listening for other processes' commits.
    pub async fn connect_with(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        let config = config(url, &options.schema)?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(Duration::from_secs(10)))
            .wait_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|err| StoreError::Config(format!("PostgreSQL pool: {err}")))?;
        let schema = options.schema;
        migrate(&pool, &schema).await?;
        let channel = format!("qilin_events.{schema}");
        let live = Arc::new(LiveMap::default());
        let heard: Heard = {
            let live = Arc::clone(&live);
            Arc::new(move |payload: &str| announced(&live, payload))
        };
        let context = "listening for new events";
        let (client, driver) = listen(&config, &channel, &heard, context).await?;
        let reconnected = {
            let live = Arc::clone(&live);
            // Announcements may have been missed while the connection was down.
            Arc::new(move || live.wake_all())
        };
        let listener = tokio::spawn(keep_listening(
            config.clone(),
            channel.clone(),
            heard,
            context,
            client,
            driver,
            reconnected,
        ));
        let (appends, queue) = mpsc::channel(4096);
        let committer = Committer {
            pool: pool.clone(),
            schema: schema.clone(),
            channel: channel.clone(),
            live: Arc::clone(&live),
        };
        tokio::spawn(committer.run(queue));
        Ok(PostgresStore {
            pool,
            config,
            appends,
            live,
            channel,
            schema,
            listener,
        })
    }

    /// The schema the tables live in.
    pub fn schema(&self) -> &str {
        &self.schema
    }
}

impl Drop for PostgresStore {
    /// Stops listening (which closes the listening connection) and ends the followers.
    fn drop(&mut self) {
        self.listener.abort();
        self.live.close_all();
    }
}

/// A connection from the pool.
async fn connection(pool: &Pool, schema: &str) -> Result<deadpool_postgres::Object, StoreError> {
    pool.get().await.map_err(|err| {
        StoreError::Backend(format!(
            "PostgreSQL schema `{schema}`: no connection: {err}"
        ))
    })
}

/// Brings the tables to [`SCHEMA_VERSION`], one process at a time.
async fn migrate(pool: &Pool, schema: &str) -> Result<(), StoreError> {
    let context = format!("migrating PostgreSQL schema `{schema}`");
    let error = |err: tokio_postgres::Error| pg_error(&err, &context);
    let mut client = connection(pool, schema).await?;
    let tx = client.transaction().await.map_err(error)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&format!("qilin migrate {schema}")],
    )
    .await
    .map_err(error)?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {schema};
         CREATE TABLE IF NOT EXISTS {schema}.schema_version (version BIGINT NOT NULL);"
    ))
    .await
    .map_err(error)?;
    let found: i64 = tx
        .query_opt("SELECT version FROM schema_version", &[])
        .await
        .map_err(error)?
        .map_or(Ok(0), |row| row.try_get(0))
        .map_err(error)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            database: format!("PostgreSQL schema `{schema}`"),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for (version, sql) in (found..).zip(&MIGRATIONS[usize::try_from(found).unwrap_or(0)..]) {
        tx.batch_execute(sql).await.map_err(error)?;
        if version + 1 == SEARCH_INDEX_VERSION {
            index::backfill(&tx, &context).await?;
        }
        tx.execute("DELETE FROM schema_version", &[])
            .await
            .map_err(error)?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES ($1)",
            &[&(version + 1)],
        )
        .await
        .map_err(error)?;
    }
    tx.commit().await.map_err(error)
}

/// What a listening connection does with each notification's payload.
type Heard = Arc<dyn Fn(&str) + Send + Sync>;

/// Opens a listening connection: `LISTEN`s on `channel` and hands each notification's payload
/// to `heard`; `context` names what it listens for in an error. Returns the client (dropping
/// it closes the connection) and the task that drives the connection, which ends when the
/// connection does.
async fn listen(
    config: &Config,
    channel: &str,
    heard: &Heard,
    context: &str,
) -> Result<(Client, JoinHandle<()>), StoreError> {
    let (client, mut connection) = config
        .connect(NoTls)
        .await
        .map_err(|err| pg_error(&err, context))?;
    let heard = Arc::clone(heard);
    let driver = tokio::spawn(async move {
        let mut messages = stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(notification) = message {
                heard(notification.payload());
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN \"{channel}\""))
        .await
        .map_err(|err| pg_error(&err, context))?;
    Ok((client, driver))
}

/// The waits before reconnecting a listening connection: 100 ms, doubling up to 5 s.
const RECONNECT_BACKOFF: Backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));

/// Keeps a listening connection up: when it drops, reconnects (backing off to 5 s) and calls
/// `reconnected`, since notifications may have been missed meanwhile.
async fn keep_listening(
    config: Config,
    channel: String,
    heard: Heard,
    context: &'static str,
    mut client: Client,
    mut driver: JoinHandle<()>,
    reconnected: Arc<dyn Fn() + Send + Sync>,
) {
    loop {
        // The connection ended, however it ended; the task's outcome says nothing more.
        let _ = (&mut driver).await;
        drop(client);
        let mut retries = RECONNECT_BACKOFF.retries();
        loop {
            retries.wait().await;
            if let Ok((new_client, new_driver)) = listen(&config, &channel, &heard, context).await {
                (client, driver) = (new_client, new_driver);
                break;
            }
        }
        reconnected();
    }
}

/// The longest session id an announcement names; PostgreSQL refuses payloads of 8,000 bytes
/// or more, so a longer id is announced as `wake`, which sends every follower to the table.
const PAYLOAD_ID_BYTES: usize = 7_000;

/// The payload announcing that `session`'s head reached `head`.
fn append_payload(session: &str, head: u64) -> String {
    if session.len() > PAYLOAD_ID_BYTES {
        return "wake".into();
    }
    format!("append {head} {session}")
}

/// The payload announcing that `session` was deleted.
fn delete_payload(session: &str) -> String {
    if session.len() > PAYLOAD_ID_BYTES {
        return "wake".into();
    }
    format!("delete {session}")
}

/// Acts on an announcement from any process (this one's too).
fn announced(live: &LiveMap, payload: &str) {
    match payload.split_once(' ') {
        Some(("append", rest)) => {
            if let Some((head, session)) = rest.split_once(' ')
                && let Ok(head) = head.parse()
            {
                live.announce(session, head);
            }
        }
        Some(("delete", session)) => live.deleted(session),
        _ if payload == "wake" => live.wake_all(),
        _ => {}
    }
}

/// A session from a row of [`SESSION_COLUMNS`].
fn session_row(row: &Row, context: &str) -> Result<SessionInfo, StoreError> {
    let error = |err: tokio_postgres::Error| pg_error(&err, context);
    let id: String = row.try_get(0).map_err(error)?;
    let status: String = row.try_get(8).map_err(error)?;
    let turns: i64 = row.try_get(9).map_err(error)?;
    let head: i64 = row.try_get(10).map_err(error)?;
    let children: i64 = row.try_get(13).map_err(error)?;
    Ok(SessionInfo {
        status: status_from_name(&id, &status)?,
        workspace: row.try_get(1).map_err(error)?,
        agent: row.try_get(2).map_err(error)?,
        agent_file: row.try_get(3).map_err(error)?,
        model: row.try_get(4).map_err(error)?,
        title: row.try_get(5).map_err(error)?,
        created_at: row.try_get(6).map_err(error)?,
        last_activity: row.try_get(7).map_err(error)?,
        turns: u32::try_from(turns).unwrap_or(u32::MAX),
        head_seq: u64::try_from(head).unwrap_or(0),
        parent_session_id: row.try_get(11).map_err(error)?,
        parent_call_id: row.try_get(12).map_err(error)?,
        child_count: u32::try_from(children).unwrap_or(u32::MAX),
        id,
    })
}

/// What a follower reads from: the pool.
struct Source {
    pool: Pool,
    schema: String,
}

impl Source {
    fn context(&self) -> String {
        format!("PostgreSQL schema `{}`", self.schema)
    }
}

#[async_trait]
impl EventSource for Source {
    async fn events_after(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Option<Vec<EventJson>>, StoreError> {
        let context = self.context();
        let error = |err: tokio_postgres::Error| pg_error(&err, &context);
        let client = connection(&self.pool, &self.schema).await?;
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = client
            .query(
                "SELECT seq, data FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                &[&session, &after, &limit],
            )
            .await
            .map_err(error)?;
        if rows.is_empty() {
            let exists = client
                .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&session])
                .await
                .map_err(error)?
                .is_some();
            if !exists {
                return Ok(None);
            }
        }
        rows.iter()
            .map(|row| {
                let seq: i64 = row.try_get(0).map_err(error)?;
                let json: String = row.try_get(1).map_err(error)?;
                EventJson::stored(session, u64::try_from(seq).unwrap_or(0), json)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

impl PostgresStore {
    fn context(&self) -> String {
        format!("PostgreSQL schema `{}`", self.schema)
    }

    fn source(&self) -> Source {
        Source {
            pool: self.pool.clone(),
            schema: self.schema.clone(),
        }
    }

    /// The sessions a query over [`SESSION_COLUMNS`] returns.
    async fn sessions(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<SessionInfo>, StoreError> {
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        let rows = client
            .query(sql, params)
            .await
            .map_err(|err| pg_error(&err, &context))?;
        rows.iter().map(|row| session_row(row, &context)).collect()
    }
}

#[async_trait]
impl EventStore for PostgresStore {
    async fn create_session(&self, session: NewSession) -> Result<SessionInfo, StoreError> {
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        let inserted = client
            .execute(
                "INSERT INTO sessions (id, workspace, agent, agent_file, model, created_at,
                                       last_activity, parent_session_id, parent_call_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8) ON CONFLICT (id) DO NOTHING",
                &[
                    &session.id,
                    &session.workspace,
                    &session.agent,
                    &session.agent_file,
                    &session.model,
                    &session.created_at,
                    &session.parent_session_id,
                    &session.parent_call_id,
                ],
            )
            .await
            .map_err(|err| pg_error(&err, &context))?;
        if inserted == 0 {
            return Err(StoreError::DuplicateSession(session.id));
        }
        Ok(crate::created_session(session))
    }

    async fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = $1");
        Ok(self.sessions(&sql, &[&id]).await?.pop())
    }

    async fn list_sessions(&self, query: &SessionQuery) -> Result<SessionPage, StoreError> {
        let limit = page_limit(query);
        let cursor = query.after.as_deref().map(Cursor::parse).transpose()?;
        let (activity, id) = cursor.map(|c| (c.last_activity, c.id)).unzip();
        let title = query.title_contains.as_deref().map(str::to_lowercase);
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let (top_level, parent) = query.parent.sql_params();
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM sessions
             WHERE ($1::text IS NULL OR workspace = $1)
               AND ($2::text IS NULL OR strpos(title_lower, $2) > 0)
               AND ($3::text IS NULL OR (last_activity, id) < ($3, $4::text))
               AND (NOT $6 OR parent_session_id IS NULL)
               AND ($7::text IS NULL OR parent_session_id = $7)
             ORDER BY last_activity DESC, id DESC LIMIT $5"
        );
        let page = self
            .sessions(
                &sql,
                &[
                    &query.workspace,
                    &title,
                    &activity,
                    &id,
                    &fetch,
                    &top_level,
                    &parent,
                ],
            )
            .await?;
        Ok(crate::session_page(page, limit))
    }

    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError> {
        let search = PreparedSearch::new(query)?;
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        index::search(&client, &search, &context).await
    }

    async fn rename_session(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        let changed = client
            .execute(
                "UPDATE sessions SET title = $2, title_lower = $3 WHERE id = $1",
                &[&id, &title, &title.to_lowercase()],
            )
            .await
            .map_err(|err| pg_error(&err, &context))?;
        if changed == 0 {
            return Err(StoreError::UnknownSession(id.to_string()));
        }
        Ok(())
    }

    async fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        let context = self.context();
        let error = |err: tokio_postgres::Error| pg_error(&err, &context);
        let mut client = connection(&self.pool, &self.schema).await?;
        let tx = client.transaction().await.map_err(error)?;
        let deleted = tx
            .execute("DELETE FROM sessions WHERE id = $1", &[&id])
            .await
            .map_err(error)?;
        if deleted == 0 {
            return Err(StoreError::UnknownSession(id.to_string()));
        }
        tx.execute(
            "SELECT pg_notify($1, $2)",
            &[&self.channel, &delete_payload(id)],
        )
        .await
        .map_err(error)?;
        tx.commit().await.map_err(error)?;
        self.live.deleted(id);
        Ok(())
    }

    async fn append(&self, session: &str, events: &[Event]) -> Result<u64, StoreError> {
        let Some(plan) = AppendPlan::new(session, events)? else {
            return self
                .session(session)
                .await?
                .map(|info| info.head_seq)
                .ok_or_else(|| StoreError::UnknownSession(session.to_string()));
        };
        let (reply, outcome) = oneshot::channel();
        let stopped = || StoreError::Backend(format!("{}: the committer stopped", self.context()));
        self.appends
            .send(Append { plan, reply })
            .await
            .map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }

    async fn read_json(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventJson>, StoreError> {
        self.source()
            .events_after(session, after, limit)
            .await?
            .ok_or_else(|| StoreError::UnknownSession(session.to_string()))
    }

    fn follow(&self, session: &str, after: u64) -> BoxStream<'static, Result<Event, StoreError>> {
        live::follow(Arc::new(self.source()), &self.live, session, after)
    }

    fn follow_json(
        &self,
        session: &str,
        after: u64,
    ) -> BoxStream<'static, Result<EventJson, StoreError>> {
        live::follow_json(Arc::new(self.source()), &self.live, session, after)
    }

    fn observe_commits(&self, observer: CommitObserver) {
        self.live.observe(observer);
    }

    async fn open_requests(&self, session: &str) -> Result<Vec<RequestOpenedEvent>, StoreError> {
        let context = self.context();
        let error = |err: tokio_postgres::Error| pg_error(&err, &context);
        let client = connection(&self.pool, &self.schema).await?;
        let exists = client
            .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&session])
            .await
            .map_err(error)?
            .is_some();
        if !exists {
            return Err(StoreError::UnknownSession(session.to_string()));
        }
        let rows = client
            .query(
                "SELECT data FROM requests WHERE session_id = $1 ORDER BY seq",
                &[&session],
            )
            .await
            .map_err(error)?;
        rows.iter()
            .map(|row| decode(session, row.try_get::<_, &str>(0).map_err(error)?))
            .collect()
    }

    async fn running_sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE status = 'running'
             ORDER BY last_activity DESC, id DESC"
        );
        self.sessions(&sql, &[]).await
    }

    async fn sessions_with_running_loops_or_workflows(
        &self,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        // The `WHERE` is the partial index's, so only its rows are read.
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE id IN (
                 SELECT session_id FROM events
                 WHERE kind IN ('loop.started', 'loop.finished',
                                'workflow.started', 'workflow.finished')
                 GROUP BY session_id
                 HAVING count(*) FILTER (WHERE kind LIKE '%.started')
                      > count(*) FILTER (WHERE kind LIKE '%.finished'))
             ORDER BY last_activity DESC, id DESC"
        );
        self.sessions(&sql, &[]).await
    }

    async fn acquire_lease(
        &self,
        session: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError> {
        let context = self.context();
        let error = |err: tokio_postgres::Error| pg_error(&err, &context);
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let client = connection(&self.pool, &self.schema).await?;
        // Between a refused take and the look at the holder, the holder may let go: try again.
        for _ in 0..3 {
            let taken = client
                .execute(
                    "UPDATE sessions
                     SET lease_owner = $2,
                         lease_expires = clock_timestamp() + $3::bigint * interval '1 millisecond'
                     WHERE id = $1
                       AND (lease_owner IS NULL OR lease_owner = $2
                            OR lease_expires <= clock_timestamp())",
                    &[&session, &owner, &ttl_ms],
                )
                .await
                .map_err(error)?;
            if taken > 0 {
                return Ok(Lease::Acquired);
            }
            let holder: Option<String> = client
                .query_opt(
                    "SELECT lease_owner FROM sessions
                     WHERE id = $1 AND lease_expires > clock_timestamp()",
                    &[&session],
                )
                .await
                .map_err(error)?
                .map(|row| row.try_get(0))
                .transpose()
                .map_err(error)?
                .flatten();
            if let Some(owner) = holder {
                return Ok(Lease::HeldBy { owner });
            }
            if self.session(session).await?.is_none() {
                return Err(StoreError::UnknownSession(session.to_string()));
            }
        }
        Err(StoreError::Busy(format!(
            "{context}: the lease of `{session}` changed hands three times while being taken"
        )))
    }

    async fn release_lease(&self, session: &str, owner: &str) -> Result<(), StoreError> {
        let context = self.context();
        let client = connection(&self.pool, &self.schema).await?;
        client
            .execute(
                "UPDATE sessions SET lease_owner = NULL, lease_expires = NULL
                 WHERE id = $1 AND lease_owner = $2",
                &[&session, &owner],
            )
            .await
            .map_err(|err| pg_error(&err, &context))?;
        Ok(())
    }

    async fn create_schedule(
        &self,
        schedule: &ScheduleRecord,
        first_fire: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.create_schedule_row(schedule, first_fire).await
    }

    async fn schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError> {
        self.schedule_row(id).await
    }

    async fn list_schedules(
        &self,
        session: Option<&str>,
    ) -> Result<Vec<ScheduleRecord>, StoreError> {
        self.schedule_rows(session).await
    }

    async fn delete_schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError> {
        self.delete_schedule_row(id).await
    }

    async fn claim_due(
        &self,
        now: DateTime<Utc>,
        owner: &str,
        grace: chrono::Duration,
        lease: Duration,
    ) -> Result<Vec<ClaimedFire>, StoreError> {
        self.claim_due_rows(now, owner, grace, lease).await
    }

    async fn update_run(
        &self,
        id: &str,
        run_number: u32,
        run: &ScheduleRun,
    ) -> Result<(), StoreError> {
        self.update_run_row(id, run_number, run).await
    }

    async fn interrupt_abandoned_runs(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        claimed_before: DateTime<Utc>,
    ) -> Result<Vec<(String, ScheduleRun)>, StoreError> {
        self.interrupt_abandoned_rows(owner, now, claimed_before)
            .await
    }

    async fn connect_relay(
        &self,
        owner: &str,
        handler: RelayHandler,
    ) -> Result<Option<Arc<dyn CommandRelay>>, StoreError> {
        let relay = PostgresRelay::connect(
            self.pool.clone(),
            self.config.clone(),
            &self.schema,
            owner,
            handler,
        )
        .await?;
        Ok(Some(Arc::new(relay)))
    }
}
