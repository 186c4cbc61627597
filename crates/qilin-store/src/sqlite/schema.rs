//! The SQLite file: the lock that keeps a second process out, the connection settings and
//! the schema migrations.

use super::sqlite_error;
use crate::StoreError;
use rusqlite::Connection;
use rusqlite::config::DbConfig;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema, one entry per version: entry `i` takes the database from version `i` to `i + 1`.
/// Never edit an entry once released; add one.
const MIGRATIONS: &[&str] = &[
    // 1: sessions with their derived rows, events, open requests.
    "CREATE TABLE sessions (
        key INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        workspace TEXT NOT NULL,
        agent TEXT NOT NULL,
        agent_file TEXT,
        model TEXT NOT NULL,
        title TEXT,
        title_lower TEXT,
        created_at TEXT NOT NULL,
        last_activity TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'idle',
        turns INTEGER NOT NULL DEFAULT 0,
        head_seq INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_by_activity ON sessions (last_activity DESC, id DESC);
    CREATE INDEX sessions_running ON sessions (status) WHERE status = 'running';
    CREATE TABLE events (
        session INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        time TEXT NOT NULL,
        kind TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session, seq)
    ) WITHOUT ROWID;
    CREATE TABLE requests (
        session INTEGER NOT NULL,
        request_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session, request_id)
    ) WITHOUT ROWID;",
    // 2: the search index — one document per searchable text of an event, its text in an FTS5
    // table, and each call's tool and status; filled from the stored events as it is created.
    "CREATE TABLE search_docs (
        id INTEGER PRIMARY KEY,
        session INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        turn INTEGER,
        call_id TEXT,
        field TEXT NOT NULL,
        time TEXT NOT NULL
    );
    CREATE INDEX search_docs_by_session ON search_docs (session);
    CREATE VIRTUAL TABLE search_text USING fts5 (body, tokenize = 'unicode61');
    CREATE TABLE search_calls (
        session INTEGER NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        status TEXT,
        PRIMARY KEY (session, call_id)
    ) WITHOUT ROWID;",
    // 3: child sessions (subagents) linked to the session and call that started them.
    "ALTER TABLE sessions ADD COLUMN parent_session_id TEXT;
    ALTER TABLE sessions ADD COLUMN parent_call_id TEXT;
    CREATE INDEX sessions_by_parent ON sessions (parent_session_id, created_at)
        WHERE parent_session_id IS NOT NULL;",
    // 4: scheduled tasks and their runs (a session's are removed with it).
    "CREATE TABLE schedules (
        key INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        status TEXT NOT NULL,
        next_fire INTEGER,
        data TEXT NOT NULL
    );
    CREATE INDEX schedules_due ON schedules (next_fire) WHERE status = 'active';
    CREATE INDEX schedules_by_session ON schedules (session_id);
    CREATE TABLE schedule_runs (
        schedule_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        owner TEXT NOT NULL,
        session_id TEXT NOT NULL,
        claimed_at INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (schedule_id, number)
    ) WITHOUT ROWID;
    CREATE INDEX schedule_runs_running ON schedule_runs (owner) WHERE outcome = 'running';",
    // 5: the search index keeps no copy of the text (it is in the events): a contentless
    // FTS5 table whose rows can be deleted, filled from the table it replaces.
    "ALTER TABLE search_text RENAME TO search_text_stored;
    CREATE VIRTUAL TABLE search_text USING fts5 (
        body, tokenize = 'unicode61', content = '', contentless_delete = 1
    );
    INSERT INTO search_text (rowid, body) SELECT rowid, body FROM search_text_stored;
    DROP TABLE search_text_stored;",
    // 6: the events that start and finish loops and workflow runs, by session: how a host
    // finds unattended work still running after a restart.
    "CREATE INDEX events_loop_and_workflow_runs ON events (session, kind)
        WHERE kind IN ('loop.started', 'loop.finished', 'workflow.started', 'workflow.finished');",
    // 7: the search index moves to its own file, written by the indexer from the log (see
    // `index.rs`): its tables here go, and the database gets the identity the index file is
    // matched with.
    "DROP TABLE IF EXISTS search_docs;
    DROP TABLE IF EXISTS search_text;
    DROP TABLE IF EXISTS search_calls;
    CREATE TABLE store_identity (id TEXT NOT NULL);
    INSERT INTO store_identity (id) VALUES (lower(hex(randomblob(16))));",
];

/// The schema version this binary writes.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The exclusive lock on `DB.lock`, held while the store is open; the operating system frees it
/// when the process ends, however it ends.
pub(crate) struct ProcessLock {
    _file: File,
}

/// The lock file of the database at `path`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

impl ProcessLock {
    /// Takes the lock of the database at `path` — shared with other sharing processes, or
    /// exclusive — or says which process holds it.
    pub(crate) fn acquire(path: &Path, shared: bool) -> Result<Self, StoreError> {
        let lock_path = lock_path(path);
        let io_error = |err: std::io::Error| {
            StoreError::Backend(format!("cannot lock {}: {err}", lock_path.display()))
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(super::private::FILE_MODE)
            .open(&lock_path)
            .map_err(io_error)?;
        super::private::restrict(&lock_path)?;
        let locked = match shared {
            true => file.try_lock_shared(),
            false => file.try_lock(),
        };
        match locked {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                // The holder writes its pid just after locking; a read in between finds none.
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(StoreError::InUse {
                    path: path.display().to_string(),
                    pid: if pid.is_empty() { "unknown" } else { pid }.to_string(),
                });
            }
            Err(TryLockError::Error(err)) => return Err(io_error(err)),
        }
        if !shared {
            file.set_len(0).map_err(io_error)?;
            file.seek(SeekFrom::Start(0)).map_err(io_error)?;
            write!(file, "{}", std::process::id()).map_err(io_error)?;
            file.flush().map_err(io_error)?;
        }
        Ok(ProcessLock { _file: file })
    }
}

/// Settings every connection gets.
pub(crate) fn configure(conn: &Connection, busy_timeout: Duration) -> rusqlite::Result<()> {
    conn.busy_timeout(busy_timeout)?;
    // A plan that does not depend on the values bound: otherwise a statement whose plan
    // looked at one (`session = ?1`) is compiled again every time it is taken from the
    // statement cache, which clears its bindings.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
}

/// The database's identity, which its search index file is matched with.
pub(crate) fn identity(conn: &Connection, path: &Path) -> Result<String, StoreError> {
    conn.query_row("SELECT id FROM store_identity", [], |row| row.get(0))
        .map_err(|err| sqlite_error(&err, &path.display().to_string()))
}

/// Brings the writer's database to [`SCHEMA_VERSION`], refusing one that is newer.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let error = |err: rusqlite::Error| sqlite_error(&err, &format!("migrating {}", path.display()));
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(error)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Backend(format!(
            "{}: the database cannot use write-ahead logging (journal mode stays `{mode}`)",
            path.display()
        )));
    }
    // The writer touches a page per session it appends to: keep them in memory (64 MiB).
    conn.pragma_update(None, "cache_size", -64 * 1024)
        .map_err(error)?;
    // After a checkpoint empties the log, its file is cut back to this size.
    conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)
        .map_err(error)?;
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(error)?;
    if found < 0 {
        return Err(StoreError::Backend(format!(
            "{}: schema version {found} is not one Qilin writes; is this a Qilin database?",
            path.display()
        )));
    }
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            database: path.display().to_string(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for (version, sql) in (found..).zip(&MIGRATIONS[usize::try_from(found).unwrap_or(0)..]) {
        let tx = conn.transaction().map_err(error)?;
        tx.execute_batch(sql).map_err(error)?;
        tx.pragma_update(None, "user_version", version + 1)
            .map_err(error)?;
        tx.commit().map_err(error)?;
    }
    Ok(())
}
