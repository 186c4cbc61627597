//! The writer: one thread owns the only writing connection and commits whatever the store's
//! callers queued meanwhile in one transaction, each operation in its own savepoint so that one
//! refused append (a `seq` conflict, an unknown session) takes nothing else with it. After a
//! commit it notes the sessions it changed to the indexer, which writes the search index
//! from the log on its own thread.

use super::checkpoint::Checkpointer;
use super::index::NotedAppend;
use super::indexer::Note;
use super::schedules::{ScheduleDone, ScheduleOp};
use super::schema::ProcessLock;
use super::sqlite_error;
use crate::lease::LeaseTable;
use crate::live::LiveMap;
use crate::plan::{AppendPlan, RequestChange, status_name};
use crate::{NewSession, SessionInfo, StoreError};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use tokio::sync::oneshot;

/// The most operations one transaction commits.
const MAX_BATCH: usize = 1024;

/// An operation for the writer, with where to send its outcome.
pub(super) enum Command {
    /// Record a new session.
    Create {
        session: NewSession,
        reply: oneshot::Sender<Result<SessionInfo, StoreError>>,
    },
    /// Set a session's title.
    Rename {
        id: String,
        title: String,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    /// Remove a session and everything of it.
    Delete {
        id: String,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    /// Append events.
    Append {
        plan: AppendPlan,
        reply: oneshot::Sender<Result<u64, StoreError>>,
    },
    /// Write schedules or their runs.
    Schedule {
        op: ScheduleOp,
        reply: oneshot::Sender<Result<ScheduleDone, StoreError>>,
    },
}

/// What an applied operation returns once committed.
enum Applied {
    /// Boxed: a session is much larger than the other outcomes.
    Created(Box<SessionInfo>),
    Done,
    /// Events appended to the session with key `key`, up to `head`.
    Appended {
        head: u64,
        key: i64,
    },
    /// The session with key `key` removed.
    Deleted {
        key: i64,
    },
    Scheduled(ScheduleDone),
}

/// The writer thread's state.
pub(super) struct Writer {
    pub conn: Connection,
    pub path: PathBuf,
    pub live: Arc<LiveMap>,
    pub leases: Arc<LeaseTable>,
    /// Checkpoints the log the writer's commits grow; stopped after the connection closed.
    pub checkpointer: Checkpointer,
    /// Held until the thread ends, after the connections closed.
    pub lock: ProcessLock,
    /// Where the sessions each commit changed are noted for the search index; `None` when
    /// appends are not indexed.
    pub notes: Option<Sender<Note>>,
}

impl Writer {
    /// Serves commands until every sender is gone, then closes the connection and the lock.
    pub(super) fn run(self, commands: Receiver<Command>) {
        let Writer {
            conn,
            path,
            live,
            leases,
            checkpointer,
            lock,
            notes,
        } = self;
        while let Ok(first) = commands.recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match commands.try_recv() {
                    Ok(command) => batch.push(command),
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
                }
            }
            let outcomes = commit(&conn, &path, &batch);
            // Noted before any caller hears of its commit: a search it then starts waits for
            // the indexer to have indexed it.
            if let Some(notes) = &notes {
                note(notes, &mut batch, &outcomes);
            }
            for (command, outcome) in batch.into_iter().zip(outcomes) {
                finish(command, outcome, &live, &leases);
            }
        }
        drop(conn);
        drop(checkpointer);
        drop(lock);
    }
}

/// Tells the indexer what the committed operations of `batch` changed: each append with what
/// it adds to the index (taken from its plan), each deleted session.
fn note(notes: &Sender<Note>, batch: &mut [Command], outcomes: &[Result<Applied, StoreError>]) {
    for (command, outcome) in batch.iter_mut().zip(outcomes) {
        let note = match (command, outcome) {
            (Command::Append { plan, .. }, Ok(Applied::Appended { key, .. })) => Note::Appended(
                *key,
                Box::new(NotedAppend {
                    session: plan.session.clone(),
                    first_seq: plan.rows.first().map_or(0, |row| row.seq),
                    last_seq: plan.rows.last().map_or(0, |row| row.seq),
                    turns_started: plan.turns_started,
                    index: std::mem::take(&mut plan.index),
                }),
            ),
            (_, Ok(Applied::Deleted { key })) => Note::Changed(*key),
            _ => continue,
        };
        // An indexer that stopped is reported by the next search's flush.
        let _ = notes.send(note);
    }
}

/// Applies `batch` in as few transactions as it takes and returns each operation's outcome.
fn commit(conn: &Connection, path: &Path, batch: &[Command]) -> Vec<Result<Applied, StoreError>> {
    let error = |err: rusqlite::Error| sqlite_error(&err, &path.display().to_string());
    let mut outcomes: Vec<Option<Result<Applied, StoreError>>> =
        batch.iter().map(|_| None).collect();
    'transaction: loop {
        if let Err(err) = run(conn, "BEGIN IMMEDIATE") {
            let err = error(err);
            fill(&mut outcomes, &err);
            break;
        }
        let mut applied = Vec::new();
        for (index, command) in batch.iter().enumerate() {
            if outcomes[index].is_some() {
                continue;
            }
            let step = run(conn, "SAVEPOINT op")
                .map_err(error)
                .and_then(|()| apply(conn, command).map_err(|err| err.into_store(&error)));
            match step {
                Ok(done) => match run(conn, "RELEASE op") {
                    Ok(()) => applied.push((index, done)),
                    Err(err) => {
                        abandon(conn, &mut outcomes, &error(err));
                        break 'transaction;
                    }
                },
                Err(err) if conn.is_autocommit() => {
                    // SQLite rolled the whole transaction back (a full disk can): this operation
                    // failed; the others go again in a new one.
                    outcomes[index] = Some(Err(err));
                    continue 'transaction;
                }
                Err(err) => {
                    outcomes[index] = Some(Err(err));
                    let undone = run(conn, "ROLLBACK TO op").and_then(|()| run(conn, "RELEASE op"));
                    if let Err(err) = undone {
                        abandon(conn, &mut outcomes, &error(err));
                        break 'transaction;
                    }
                }
            }
        }
        match run(conn, "COMMIT") {
            Ok(()) => {
                for (index, done) in applied {
                    outcomes[index] = Some(Ok(done));
                }
            }
            Err(err) => abandon(conn, &mut outcomes, &error(err)),
        }
        break;
    }
    outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap_or_else(|| Err(StoreError::Backend("not applied".into()))))
        .collect()
}

/// Runs one statement without arguments, prepared once per connection.
fn run(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// Rolls the open transaction back and fails every operation not yet decided with `err`.
fn abandon(
    conn: &Connection,
    outcomes: &mut [Option<Result<Applied, StoreError>>],
    err: &StoreError,
) {
    if !conn.is_autocommit() {
        // The rollback's own failure changes nothing: the transaction ends with the connection.
        let _ = conn.execute_batch("ROLLBACK");
    }
    fill(outcomes, err);
}

/// Fails every operation not yet decided with `err`.
fn fill(outcomes: &mut [Option<Result<Applied, StoreError>>], err: &StoreError) {
    for outcome in outcomes.iter_mut().filter(|outcome| outcome.is_none()) {
        *outcome = Some(Err(copy_error(err)));
    }
}

/// The same error again, for each operation of a failed transaction.
fn copy_error(err: &StoreError) -> StoreError {
    match err {
        StoreError::Busy(message) => StoreError::Busy(message.clone()),
        StoreError::Full(message) => StoreError::Full(message.clone()),
        other => StoreError::Backend(other.to_string()),
    }
}

/// Hands a committed (or failed) operation's outcome back, after telling the followers.
fn finish(
    command: Command,
    outcome: Result<Applied, StoreError>,
    live: &LiveMap,
    leases: &LeaseTable,
) {
    // A caller that stopped waiting has dropped its receiver; the outcome stands regardless.
    match (command, outcome) {
        (Command::Create { reply, .. }, Ok(Applied::Created(info))) => {
            let _ = reply.send(Ok(*info));
        }
        (Command::Rename { reply, .. }, Ok(_)) => {
            let _ = reply.send(Ok(()));
        }
        (Command::Delete { id, reply }, Ok(_)) => {
            live.deleted(&id);
            leases.forget(&id);
            let _ = reply.send(Ok(()));
        }
        (Command::Append { plan, reply }, Ok(Applied::Appended { head, .. })) => {
            let session = plan.session.clone();
            live.publish(&session, head, || plan.into_json());
            let _ = reply.send(Ok(head));
        }
        (Command::Schedule { reply, .. }, Ok(Applied::Scheduled(done))) => {
            let _ = reply.send(Ok(done));
        }
        (Command::Schedule { reply, .. }, outcome) => {
            let _ = reply.send(outcome.and_then(|_| Err(mismatch())));
        }
        (Command::Create { reply, .. }, outcome) => {
            let _ = reply.send(outcome.and_then(|_| Err(mismatch())));
        }
        (Command::Append { reply, .. }, outcome) => {
            let _ = reply.send(outcome.and_then(|_| Err(mismatch())));
        }
        (Command::Rename { reply, .. } | Command::Delete { reply, .. }, Err(err)) => {
            let _ = reply.send(Err(err));
        }
    }
}

/// An outcome of the wrong kind for its command: a bug in this file, reported, not a panic.
pub(super) fn mismatch() -> StoreError {
    StoreError::Backend("the writer returned an outcome of the wrong kind".into())
}

/// Why an operation failed: a store error decided by the operation, or a database error.
pub(super) enum ApplyError {
    Store(StoreError),
    Sqlite(rusqlite::Error),
}

impl ApplyError {
    /// The failure as a store error, a database error mapped by `sqlite`.
    pub(super) fn into_store(self, sqlite: &impl Fn(rusqlite::Error) -> StoreError) -> StoreError {
        match self {
            ApplyError::Store(err) => err,
            ApplyError::Sqlite(err) => sqlite(err),
        }
    }
}

impl From<rusqlite::Error> for ApplyError {
    fn from(err: rusqlite::Error) -> Self {
        ApplyError::Sqlite(err)
    }
}

impl From<StoreError> for ApplyError {
    fn from(err: StoreError) -> Self {
        ApplyError::Store(err)
    }
}

/// Runs one operation inside the open transaction.
fn apply(conn: &Connection, command: &Command) -> Result<Applied, ApplyError> {
    match command {
        Command::Create { session, .. } => {
            create(conn, session).map(|info| Applied::Created(Box::new(info)))
        }
        Command::Rename { id, title, .. } => {
            let changed = conn
                .prepare_cached("UPDATE sessions SET title = ?2, title_lower = ?3 WHERE id = ?1")?
                .execute(params![id, title, title.to_lowercase()])?;
            if changed == 0 {
                return Err(StoreError::UnknownSession(id.clone()).into());
            }
            Ok(Applied::Done)
        }
        Command::Delete { id, .. } => {
            let key = session_key(conn, id)?;
            conn.prepare_cached("DELETE FROM events WHERE session = ?1")?
                .execute([key])?;
            conn.prepare_cached("DELETE FROM requests WHERE session = ?1")?
                .execute([key])?;
            conn.prepare_cached("DELETE FROM sessions WHERE key = ?1")?
                .execute([key])?;
            super::schedules::delete_session(conn, id)?;
            Ok(Applied::Deleted { key })
        }
        Command::Append { plan, .. } => append(conn, plan),
        Command::Schedule { op, .. } => super::schedules::apply(conn, op).map(Applied::Scheduled),
    }
}

/// The integer key of session `id`.
fn session_key(conn: &Connection, id: &str) -> Result<i64, ApplyError> {
    conn.prepare_cached("SELECT key FROM sessions WHERE id = ?1")?
        .query_row([id], |row| row.get(0))
        .optional()?
        .ok_or_else(|| StoreError::UnknownSession(id.to_string()).into())
}

fn create(conn: &Connection, session: &NewSession) -> Result<SessionInfo, ApplyError> {
    let exists = conn
        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .exists([&session.id])?;
    if exists {
        return Err(StoreError::DuplicateSession(session.id.clone()).into());
    }
    conn.prepare_cached(
        "INSERT INTO sessions (id, workspace, agent, agent_file, model, created_at, last_activity,
                               parent_session_id, parent_call_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8)",
    )?
    .execute(params![
        session.id,
        session.workspace,
        session.agent,
        session.agent_file,
        session.model,
        session.created_at,
        session.parent_session_id,
        session.parent_call_id,
    ])?;
    Ok(crate::created_session(session.clone()))
}

fn append(conn: &Connection, plan: &AppendPlan) -> Result<Applied, ApplyError> {
    let (key, head): (i64, i64) = conn
        .prepare_cached("SELECT key, head_seq FROM sessions WHERE id = ?1")?
        .query_row([&plan.session], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?
        .ok_or_else(|| StoreError::UnknownSession(plan.session.clone()))?;
    let head = u64::try_from(head).unwrap_or(0);
    if plan.first_seq() != head + 1 {
        return Err(StoreError::SeqConflict {
            session: plan.session.clone(),
            expected: head + 1,
            got: plan.first_seq(),
        }
        .into());
    }
    let mut insert = conn.prepare_cached(
        "INSERT INTO events (session, seq, time, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for row in &plan.rows {
        insert.execute(params![key, row.seq, row.time, row.kind, row.json])?;
    }
    let title_lower = plan.title.as_deref().map(str::to_lowercase);
    conn.prepare_cached(
        "UPDATE sessions SET head_seq = ?2, last_activity = ?3, turns = turns + ?4,
             status = COALESCE(?5, status), title = COALESCE(title, ?6),
             title_lower = COALESCE(title_lower, ?7)
         WHERE key = ?1",
    )?
    .execute(params![
        key,
        plan.rows.last().map_or(0, |row| row.seq),
        plan.last_time,
        plan.turns_started,
        plan.status.map(status_name),
        plan.title,
        title_lower,
    ])?;
    for change in &plan.requests {
        match change {
            RequestChange::Open {
                request_id,
                seq,
                json,
            } => {
                conn.prepare_cached(
                    "INSERT OR REPLACE INTO requests (session, request_id, seq, data)
                     VALUES (?1, ?2, ?3, ?4)",
                )?
                .execute(params![key, request_id, seq, json])?;
            }
            RequestChange::Resolve { request_id } => {
                conn.prepare_cached("DELETE FROM requests WHERE session = ?1 AND request_id = ?2")?
                    .execute(params![key, request_id])?;
            }
        }
    }
    Ok(Applied::Appended {
        head: plan.last_seq,
        key,
    })
}
