//! The indexer: one thread that follows the log and writes the search index, in its own file
//! and on its own connections, so that an append never waits on the index.
//!
//! The writer, after each commit, notes what it changed: each append with what it adds to the
//! index (planned before the append reached the writer), each session deleted. The indexer
//! gathers the notes for up to [`GATHER`] (less when a search waits) and writes them in
//! transactions of at most [`BATCH_EVENTS`] events, each `BEGIN IMMEDIATE` on the index file and
//! reading how far each session is indexed again inside it: what another process sharing the
//! database indexed meanwhile is skipped, never indexed twice. An append that does not start
//! where the index of its session ends (after a failed batch, or when another process indexed
//! part of it) and a deleted session are brought up to the log by reading it.
//!
//! A search first sends a flush, answered once every note sent before it is indexed — so it
//! finds every append committed before it began. When it starts, and on each flush of a store
//! opened shared (whose other processes' appends send it no note), the indexer compares every
//! session's head with its index and catches up.

use super::index::{
    NotedAppend, NotedOutcome, OpenSteps, catch_up, index_noted, index_path, lagging,
};
use super::writer::ApplyError;
use super::{schema, sqlite_error};
use crate::StoreError;
use rusqlite::{Connection, OpenFlags};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The most events one index transaction takes: large enough for few, large FTS5 segments,
/// small enough that a search waiting on a flush, or another process, is not held long.
const BATCH_EVENTS: usize = 16_384;

/// How long the indexer gathers notes before writing them, unless a search waits or a batch's
/// worth is noted.
const GATHER: Duration = Duration::from_millis(250);

/// What the indexer is told.
pub(super) enum Note {
    /// Events appended to the session with this key, and what they add to the index.
    Appended(i64, Box<NotedAppend>),
    /// The session with this key changed otherwise (deleted): its index is brought up to the
    /// log by reading it.
    Changed(i64),
    /// Answer once every note sent before this one is indexed.
    Flush(oneshot::Sender<Result<(), StoreError>>),
}

/// The indexer thread, and where to send it notes.
pub(super) struct Indexer {
    notes: Option<Sender<Note>>,
    thread: Option<JoinHandle<()>>,
}

impl Indexer {
    /// Starts the indexer of the database at `path`, writing the index on `index` (from
    /// [`open_index`](super::index::open_index)); `shared` when other processes share the
    /// database.
    pub(super) fn start(
        path: &Path,
        index: Connection,
        busy_timeout: Duration,
        shared: bool,
    ) -> Result<Self, StoreError> {
        let log = open_log(path, busy_timeout)?;
        let (notes, received) = mpsc::channel();
        let worker = Worker {
            path: path.to_path_buf(),
            index,
            log,
            shared,
            noted: BTreeMap::new(),
            behind: BTreeSet::new(),
            in_batch: Vec::new(),
            steps: OpenSteps::default(),
        };
        let thread = std::thread::Builder::new()
            .name("qilin-store-indexer".into())
            .spawn(move || worker.run(received))
            .map_err(|err| StoreError::Backend(format!("cannot start the indexer: {err}")))?;
        Ok(Indexer {
            notes: Some(notes),
            thread: Some(thread),
        })
    }

    /// Where the writer sends its notes.
    pub(super) fn notes(&self) -> Option<Sender<Note>> {
        self.notes.clone()
    }

    /// Waits until every note sent before this call is indexed.
    pub(super) async fn flush(&self, path: &Path) -> Result<(), StoreError> {
        let stopped = || {
            StoreError::Backend(format!(
                "{}: the search indexer stopped",
                index_path(path).display()
            ))
        };
        let (reply, done) = oneshot::channel();
        self.notes
            .as_ref()
            .ok_or_else(stopped)?
            .send(Note::Flush(reply))
            .map_err(|_| stopped())?;
        done.await.map_err(|_| stopped())?
    }
}

impl Drop for Indexer {
    /// Lets the indexer index what is noted (the writer, stopped first, sends nothing more),
    /// then ends it.
    fn drop(&mut self) {
        drop(self.notes.take());
        if let Some(thread) = self.thread.take() {
            // An indexer that panicked left the index behind the log: the next open catches up.
            let _ = thread.join();
        }
    }
}

/// The log, read-only, with the index file attached as `idx` (for comparing the two).
fn open_log(path: &Path, busy_timeout: Duration) -> Result<Connection, StoreError> {
    let context = path.display().to_string();
    let error = |err: rusqlite::Error| sqlite_error(&err, &context);
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let log = Connection::open_with_flags(path, flags).map_err(error)?;
    schema::configure(&log, busy_timeout).map_err(error)?;
    attach_index(&log, path)?;
    log.pragma_update(None, "query_only", true).map_err(error)?;
    Ok(log)
}

/// Attaches the index file of the database at `path` to `conn` as `idx`.
pub(super) fn attach_index(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let index = index_path(path);
    let name = index.to_str().ok_or_else(|| {
        StoreError::Config(format!(
            "{}: the search index's path is not UTF-8; use a database path that is",
            index.display()
        ))
    })?;
    conn.execute("ATTACH DATABASE ?1 AS idx", [name])
        .map(|_| ())
        .map_err(|err| sqlite_error(&err, &index.display().to_string()))
}

/// The indexer thread's state.
struct Worker {
    path: PathBuf,
    /// Writes the index file.
    index: Connection,
    /// Reads the log.
    log: Connection,
    shared: bool,
    /// The appends noted and not yet indexed, by session key, in order.
    noted: BTreeMap<i64, Vec<NotedAppend>>,
    /// The sessions to bring up to their log by reading it (kept when a batch fails, for the
    /// next one).
    behind: BTreeSet<i64>,
    /// The sessions whose noted appends the open batch wrote: behind their log again if it
    /// fails.
    in_batch: Vec<i64>,
    /// The text of the steps in progress, from the noted appends.
    steps: OpenSteps,
}

impl Worker {
    /// Catches up with the log, then serves notes until the store is closed.
    fn run(mut self, notes: Receiver<Note>) {
        // Whether every session is to be compared with the log before the next batch: at the
        // start (tried again with the next note when it fails), and on a shared store's flush.
        let mut rescan = true;
        // A failure here is met again, and told, at the next flush.
        let _ = self.catch_up(&mut rescan);
        while let Ok(first) = notes.recv() {
            let mut flushes = Vec::new();
            // The notes are gathered for a while (unless a search waits), so that a batch
            // holds many appends: FTS5 then writes fewer, larger segments, and merges less.
            let until = Instant::now() + GATHER;
            let mut events = 0usize;
            let mut next = Some(first);
            while let Some(note) = next.take() {
                match note {
                    Note::Appended(key, noted) => {
                        events +=
                            usize::try_from(noted.last_seq - noted.first_seq + 1).unwrap_or(1);
                        self.noted.entry(key).or_default().push(*noted);
                    }
                    Note::Changed(key) => {
                        self.behind.insert(key);
                    }
                    Note::Flush(reply) => flushes.push(reply),
                }
                if !flushes.is_empty() || events >= BATCH_EVENTS {
                    break;
                }
                let left = until.saturating_duration_since(Instant::now());
                // Nothing more for now, or the store closing (which ends the loop at the next
                // `recv`): the batch is written.
                next = notes.recv_timeout(left).ok();
            }
            rescan |= self.shared && !flushes.is_empty();
            let outcome = self.catch_up(&mut rescan);
            for reply in flushes {
                // A search that stopped waiting has dropped its receiver.
                let _ = reply.send(outcome.as_ref().map(|_| ()).map_err(copy_error));
            }
        }
        // The store is closing: what was noted is indexed; a failure is left to the next open.
        let _ = self.catch_up(&mut rescan);
    }

    /// Compares every session with the log first when `rescan` says so (then clears it), and
    /// indexes the pending sessions.
    fn catch_up(&mut self, rescan: &mut bool) -> Result<(), StoreError> {
        if *rescan {
            self.note_lagging()?;
            *rescan = false;
        }
        self.index_pending()
    }

    /// Adds every session whose index is not at its log's head to the pending ones.
    fn note_lagging(&mut self) -> Result<(), StoreError> {
        let keys = lagging(&self.log).map_err(|err| self.error(err))?;
        self.behind.extend(keys);
        Ok(())
    }

    /// Indexes the noted appends and the sessions behind their log, in transactions of at
    /// most [`BATCH_EVENTS`] events.
    fn index_pending(&mut self) -> Result<(), StoreError> {
        while !self.noted.is_empty() || !self.behind.is_empty() {
            if let Err(err) = self.index_batch() {
                // What the batch held, and what was noted, is read from the log next time.
                self.behind
                    .extend(std::mem::take(&mut self.noted).into_keys());
                self.behind.extend(self.in_batch.drain(..));
                self.steps.clear();
                return Err(err);
            }
        }
        Ok(())
    }

    /// One transaction's worth of the pending sessions.
    fn index_batch(&mut self) -> Result<(), StoreError> {
        let index_context = index_path(&self.path).display().to_string();
        let on_index = |err: rusqlite::Error| sqlite_error(&err, &index_context);
        self.index
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(on_index)?;
        // The log is read in one snapshot for the whole batch.
        if let Err(err) = self.log.execute_batch("BEGIN") {
            let _ = self.index.execute_batch("ROLLBACK");
            return Err(self.error(err));
        }
        self.in_batch.clear();
        let mut budget = BATCH_EVENTS;
        let mut done = Vec::new();
        let mut outcome = self.index_noted(&mut budget);
        for &key in &self.behind {
            if budget == 0 || outcome.is_err() {
                break;
            }
            match catch_up(&self.index, &self.log, key, &mut budget) {
                Ok(true) => done.push(key),
                Ok(false) => {}
                Err(err) => outcome = Err(err),
            }
        }
        // Reading ended: the snapshot's end cannot lose anything.
        let _ = self.log.execute_batch("COMMIT");
        match outcome {
            Ok(()) => {
                self.index.execute_batch("COMMIT").map_err(|err| {
                    if !self.index.is_autocommit() {
                        let _ = self.index.execute_batch("ROLLBACK");
                    }
                    on_index(err)
                })?;
                for key in done {
                    self.behind.remove(&key);
                }
                Ok(())
            }
            Err(err) => {
                if !self.index.is_autocommit() {
                    let _ = self.index.execute_batch("ROLLBACK");
                }
                Err(match err {
                    ApplyError::Store(err) => err,
                    ApplyError::Sqlite(err) => on_index(err),
                })
            }
        }
    }

    /// Writes noted appends, oldest first in each session, while `budget` lasts; a session
    /// whose append does not follow its index joins the ones behind, its notes dropped.
    fn index_noted(&mut self, budget: &mut usize) -> Result<(), ApplyError> {
        let keys: Vec<i64> = self.noted.keys().copied().collect();
        for key in keys {
            let Some(appends) = self.noted.remove(&key) else {
                continue;
            };
            self.in_batch.push(key);
            let mut appends = appends.into_iter();
            while *budget > 0 {
                let Some(noted) = appends.next() else {
                    break;
                };
                let events = usize::try_from(noted.last_seq - noted.first_seq + 1).unwrap_or(1);
                *budget = budget.saturating_sub(events);
                match index_noted(&self.index, &self.log, key, &noted, &mut self.steps) {
                    Ok(NotedOutcome::Indexed | NotedOutcome::AlreadyIndexed) => {}
                    Ok(NotedOutcome::NeedsLog) => {
                        self.behind.insert(key);
                        appends.by_ref().for_each(drop);
                    }
                    Err(err) => return Err(err),
                }
            }
            let left: Vec<NotedAppend> = appends.collect();
            if !left.is_empty() {
                self.noted.insert(key, left);
            }
            if *budget == 0 {
                break;
            }
        }
        Ok(())
    }

    fn error(&self, err: rusqlite::Error) -> StoreError {
        sqlite_error(&err, &self.path.display().to_string())
    }
}

/// The same error again, for each flush waiting on a failed batch.
fn copy_error(err: &StoreError) -> StoreError {
    match err {
        StoreError::Busy(message) => StoreError::Busy(message.clone()),
        StoreError::Full(message) => StoreError::Full(message.clone()),
        other => StoreError::Backend(other.to_string()),
    }
}
