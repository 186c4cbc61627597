//! The search index in SQLite, in its own file beside the database (`DB.search`, see
//! [`index_path`]): `search_docs` (where each text is: session, event, turn, call, field,
//! time), `search_text` (the text's tokens, in a contentless FTS5 table with the `unicode61`
//! tokenizer, its rowid the document's id: the text itself is in the events already),
//! `search_calls` (each call's tool and status) and `search_sessions` (how far each session's
//! log is indexed). The indexer ([`super::indexer`]) fills them from the log after the appends
//! committed, each session's rows and its `indexed_head` in one transaction; a search reads
//! them on a reading connection that attaches the file, ranks the newest [`RANKED`] matches that
//! pass its filters by `bm25`, and marks the matches of a page's hits in their text read back
//! from the events.

use super::writer::ApplyError;
use super::{private, schema, sqlite_error};
use crate::plan::decode;
use crate::search::{
    CallRow, IndexDoc, IndexPlan, PreparedSearch, StepEnd, StepPiece, fts_string, push_step_text,
    scan_match, score, step_doc, step_text_doc, turn_of,
};
use crate::{SearchHit, SearchPage, StoreError};
use qilin_protocol::sessions::HitField;
use qilin_protocol::{Event, EventBody};
use rusqlite::{Connection, ErrorCode, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The most matches a search ranks: the newest that pass its filters.
const RANKED: usize = 2_000;

/// The schema of the index file, at [`INDEX_VERSION`].
const INDEX_SCHEMA: &str = "
    CREATE TABLE search_owner (database TEXT NOT NULL);
    CREATE TABLE search_sessions (
        key INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        indexed_head INTEGER NOT NULL,
        turns INTEGER NOT NULL
    );
    CREATE TABLE search_docs (
        id INTEGER PRIMARY KEY,
        session INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        turn INTEGER,
        call_id TEXT,
        field TEXT NOT NULL,
        time TEXT NOT NULL
    );
    CREATE INDEX search_docs_by_session ON search_docs (session);
    CREATE VIRTUAL TABLE search_text USING fts5 (
        body, tokenize = 'unicode61', content = '', contentless_delete = 1
    );
    CREATE TABLE search_calls (
        session INTEGER NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        status TEXT,
        PRIMARY KEY (session, call_id)
    ) WITHOUT ROWID;";

/// The tables of [`INDEX_SCHEMA`], dropped when the file belongs to another database.
const INDEX_TABLES: &[&str] = &[
    "search_owner",
    "search_sessions",
    "search_docs",
    "search_text",
    "search_calls",
];

/// The version of the index file's schema this binary writes.
const INDEX_VERSION: i64 = 1;

/// The index file of the database at `path`: `DB.search`, beside it.
pub(super) fn index_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".search");
    PathBuf::from(name)
}

/// Opens the index file of the database at `path`, whose identity is `owner`, ready to write:
/// created (private, like the database) when missing; emptied when it was built for another
/// database (its identity differs: a database deleted and made again beside an old index);
/// renamed aside (`DB.search.damaged-SECONDS`, never deleted) and made anew when SQLite finds
/// it is not a database or is damaged. An emptied or new file is filled from the log by the
/// indexer.
pub(super) fn open_index(
    path: &Path,
    owner: &str,
    busy_timeout: Duration,
) -> Result<Connection, StoreError> {
    let index = index_path(path);
    match prepare_index(&index, owner, busy_timeout) {
        Err(IndexOpenError::Damaged(err)) => {
            set_aside(&index, &err)?;
            prepare_index(&index, owner, busy_timeout).map_err(|err| err.into_store(&index))
        }
        other => other.map_err(|err| err.into_store(&index)),
    }
}

/// Why the index file did not open.
enum IndexOpenError {
    /// SQLite says it is not a database, or a damaged one.
    Damaged(rusqlite::Error),
    /// Anything else.
    Other(StoreError),
}

impl IndexOpenError {
    fn into_store(self, index: &Path) -> StoreError {
        match self {
            IndexOpenError::Damaged(err) => sqlite_error(&err, &index.display().to_string()),
            IndexOpenError::Other(err) => err,
        }
    }
}

/// Opens the index file at `index` and brings its schema and owner to what they must be.
fn prepare_index(
    index: &Path,
    owner: &str,
    busy_timeout: Duration,
) -> Result<Connection, IndexOpenError> {
    private::prepare(index).map_err(IndexOpenError::Other)?;
    let context = index.display().to_string();
    let classify = |err: rusqlite::Error| match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => IndexOpenError::Damaged(err),
        _ => IndexOpenError::Other(sqlite_error(&err, &context)),
    };
    let conn = Connection::open(index).map_err(classify)?;
    schema::configure(&conn, busy_timeout).map_err(classify)?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(classify)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(IndexOpenError::Other(StoreError::Backend(format!(
            "{context}: the search index cannot use write-ahead logging (journal mode stays \
             `{mode}`)"
        ))));
    }
    conn.pragma_update(None, "cache_size", -32 * 1024)
        .map_err(classify)?;
    conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)
        .map_err(classify)?;
    // Another process sharing the database may be preparing the same file: one at a time.
    conn.execute_batch("BEGIN IMMEDIATE").map_err(classify)?;
    let prepared = (|| {
        let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
        let found: Option<String> = match version {
            INDEX_VERSION => conn
                .query_row("SELECT database FROM search_owner", [], |row| row.get(0))
                .optional()?,
            _ => None,
        };
        if found.as_deref() == Some(owner) {
            return Ok(());
        }
        // Not this database's index (or from another version of Qilin): made anew, empty.
        for table in INDEX_TABLES {
            conn.execute_batch(&format!("DROP TABLE IF EXISTS {table}"))?;
        }
        conn.execute_batch(INDEX_SCHEMA)?;
        conn.execute("INSERT INTO search_owner (database) VALUES (?1)", [owner])?;
        conn.pragma_update(None, "user_version", INDEX_VERSION)
    })();
    match prepared {
        Ok(()) => conn.execute_batch("COMMIT").map_err(classify)?,
        Err(err) => {
            // The rollback's own failure changes nothing: the connection is dropped.
            let _ = conn.execute_batch("ROLLBACK");
            return Err(classify(err));
        }
    }
    Ok(conn)
}

/// Renames the damaged index file at `index` (and its log) aside, saying so on stderr.
fn set_aside(index: &Path, err: &rusqlite::Error) -> Result<(), StoreError> {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let mut aside = index.as_os_str().to_os_string();
    aside.push(format!(".damaged-{seconds}"));
    for suffix in ["", "-wal", "-shm"] {
        let mut from = index.as_os_str().to_os_string();
        from.push(suffix);
        let mut to = aside.clone();
        to.push(suffix);
        match std::fs::rename(&from, &to) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                return Err(StoreError::Backend(format!(
                    "the search index {} is damaged and cannot be moved aside to {}: {err}",
                    index.display(),
                    PathBuf::from(&to).display()
                )));
            }
        }
    }
    eprintln!(
        "qilin: the search index {} is damaged ({err}); it was moved to {} and is rebuilt from \
         the sessions' events",
        index.display(),
        PathBuf::from(aside).display()
    );
    Ok(())
}

/// A session's place in the index: which session held its key, and how far its log is in.
struct Indexed {
    id: String,
    head: i64,
    turns: i64,
}

/// How far the session with `key` is indexed, if it is.
fn indexed(index: &Connection, key: i64) -> rusqlite::Result<Option<Indexed>> {
    index
        .prepare_cached("SELECT id, indexed_head, turns FROM search_sessions WHERE key = ?1")?
        .query_row([key], |row| {
            Ok(Indexed {
                id: row.get(0)?,
                head: row.get(1)?,
                turns: row.get(2)?,
            })
        })
        .optional()
}

/// Brings the index of the session with key `key` up to its log, in the index's open write
/// transaction, reading the log on `log` (in a read transaction of its own): at most `budget`
/// events, taken off it. Rows of a session no longer in the log, or of another session that
/// held the key before, are removed first. Returns whether the session is done.
pub(super) fn catch_up(
    index: &Connection,
    log: &Connection,
    key: i64,
    budget: &mut usize,
) -> Result<bool, ApplyError> {
    let in_log: Option<(String, i64)> = log
        .prepare_cached("SELECT id, head_seq FROM sessions WHERE key = ?1")?
        .query_row([key], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    let indexed: Option<Indexed> = indexed(index, key)?;
    let Some((id, head)) = in_log else {
        if indexed.is_some() {
            delete_session(index, key)?;
        }
        return Ok(true);
    };
    let mut progress = match indexed {
        // Another session held the key, or the log is behind what was indexed (a database
        // put back from a copy): its rows go, and the session is indexed from its start.
        Some(indexed) if indexed.id != id || indexed.head > head => {
            delete_session(index, key)?;
            Indexed {
                id,
                head: 0,
                turns: 0,
            }
        }
        Some(indexed) => indexed,
        None => Indexed {
            id,
            head: 0,
            turns: 0,
        },
    };
    if progress.head < head && *budget > 0 {
        let events: Vec<(i64, String)> = log
            .prepare_cached(
                "SELECT seq, data FROM events WHERE session = ?1 AND seq > ?2 ORDER BY seq
                 LIMIT ?3",
            )?
            .query_map(
                params![
                    key,
                    progress.head,
                    i64::try_from(*budget).unwrap_or(i64::MAX)
                ],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?
            .collect::<rusqlite::Result<_>>()?;
        *budget = budget.saturating_sub(events.len());
        match events.last() {
            Some((last, _)) => {
                let last = *last;
                progress.turns = index_events(index, log, key, &progress, &events)?;
                progress.head = last;
            }
            // The log says it has events past the index, but none are there: indexed to the
            // head (a later note brings what comes after).
            None => progress.head = head,
        }
    }
    set_indexed(index, key, &progress)?;
    Ok(progress.head >= head)
}

/// Writes the index rows of `events` (consecutive, the next after what `indexed` says) of the
/// session with key `key`; returns the session's turns after them. A step that began before
/// them has its text read back from the log.
fn index_events(
    index: &Connection,
    log: &Connection,
    key: i64,
    indexed: &Indexed,
    events: &[(i64, String)],
) -> Result<i64, ApplyError> {
    let mut plan = IndexPlan::default();
    let mut started = 0i64;
    for (seq, json) in events {
        let event: Event = decode(&indexed.id, json)?;
        if matches!(event.body, EventBody::TurnStarted { .. }) {
            started += 1;
        }
        plan.add(*seq, &event, started);
    }
    let mut texts: Vec<(i64, String)> = Vec::new();
    for doc in plan.docs {
        let id = insert_doc(index, key, indexed.turns, &doc)?;
        texts.push((id, doc.body));
    }
    insert_calls(index, key, &plan.calls)?;
    // The step in progress, when it started among these events: its first text event's `seq`
    // and time, and its text so far.
    let mut open: Option<(Option<(i64, String)>, String)> = None;
    let mut pieces = plan.step_pieces.iter().peekable();
    for end in &plan.step_ends {
        while let Some((seq, piece)) = pieces.next_if(|(seq, _)| *seq < end.seq) {
            match piece {
                StepPiece::Started => open = Some((None, String::new())),
                StepPiece::Text { time, text } => {
                    if let Some((first, body)) = open.as_mut() {
                        first.get_or_insert_with(|| (*seq, time.clone()));
                        push_step_text(body, text);
                    }
                }
            }
        }
        let doc = match open.take() {
            Some((first, body)) => {
                first.and_then(|(seq, time)| step_text_doc(end, seq, &time, &body))
            }
            None => read_step_doc(log, key, &indexed.id, end)?,
        };
        if let Some(doc) = doc {
            let id = insert_doc(index, key, indexed.turns, &doc)?;
            texts.push((id, doc.body));
        }
    }
    let mut insert =
        index.prepare_cached("INSERT INTO search_text (rowid, body) VALUES (?1, ?2)")?;
    for (id, body) in &texts {
        insert.execute(params![id, body])?;
    }
    Ok(indexed.turns + started)
}

/// An append the writer committed, with what it adds to the index (planned before it reached
/// the writer, off its thread): the indexer writes it without reading the events back.
pub(super) struct NotedAppend {
    /// The session's id.
    pub session: String,
    /// The `seq` of its first event.
    pub first_seq: i64,
    /// The `seq` of its last event.
    pub last_seq: i64,
    /// The turns it started.
    pub turns_started: i64,
    /// What it adds to the index.
    pub index: IndexPlan,
}

/// What became of a noted append.
pub(super) enum NotedOutcome {
    /// Its rows are written.
    Indexed,
    /// The index had it already (another process sharing the database indexed it).
    AlreadyIndexed,
    /// The index is not where it starts (behind it, or another session held the key): the
    /// session is to be brought up to its log by reading it.
    NeedsLog,
}

/// Writes the index rows of `noted`, an append to the session with key `key`, in the index's
/// open write transaction, when the index ends just before it; a step it ends whose text began
/// earlier comes from `steps`, or is read from the log on `log`.
pub(super) fn index_noted(
    index: &Connection,
    log: &Connection,
    key: i64,
    noted: &NotedAppend,
    steps: &mut OpenSteps,
) -> Result<NotedOutcome, ApplyError> {
    let indexed: Option<Indexed> = indexed(index, key)?;
    let (head, turns) = match indexed {
        Some(indexed) if indexed.id == noted.session => (indexed.head, indexed.turns),
        Some(_) => return Ok(NotedOutcome::NeedsLog),
        None => (0, 0),
    };
    if head >= noted.last_seq {
        return Ok(NotedOutcome::AlreadyIndexed);
    }
    if head != noted.first_seq - 1 {
        return Ok(NotedOutcome::NeedsLog);
    }
    let plan = &noted.index;
    let mut texts: Vec<(i64, &str)> = Vec::new();
    for doc in &plan.docs {
        let id = insert_doc(index, key, turns, doc)?;
        texts.push((id, &doc.body));
    }
    insert_calls(index, key, &plan.calls)?;
    let mut step_texts: Vec<(i64, String)> = Vec::new();
    steps.continued(key, noted.first_seq);
    let mut pieces = plan.step_pieces.iter().peekable();
    for end in &plan.step_ends {
        while let Some((seq, piece)) = pieces.next_if(|(seq, _)| *seq < end.seq) {
            steps.add(key, *seq, piece);
        }
        let doc = match steps.steps.remove(&key) {
            Some(step) => step
                .first
                .and_then(|(seq, time)| step_text_doc(end, seq, &time, &step.text)),
            None => read_step_doc(log, key, &noted.session, end)?,
        };
        if let Some(doc) = doc {
            let id = insert_doc(index, key, turns, &doc)?;
            step_texts.push((id, doc.body));
        }
    }
    for (seq, piece) in pieces {
        steps.add(key, *seq, piece);
    }
    if let Some(step) = steps.steps.get_mut(&key) {
        step.next_seq = noted.last_seq + 1;
    }
    let mut insert =
        index.prepare_cached("INSERT INTO search_text (rowid, body) VALUES (?1, ?2)")?;
    for (id, body) in texts
        .into_iter()
        .chain(step_texts.iter().map(|(id, body)| (*id, body.as_str())))
    {
        insert.execute(params![id, body])?;
    }
    set_indexed(
        index,
        key,
        &Indexed {
            id: noted.session.clone(),
            head: noted.last_seq,
            turns: turns + noted.turns_started,
        },
    )?;
    Ok(NotedOutcome::Indexed)
}

/// The most sessions whose step in progress [`OpenSteps`] keeps; past it, it starts afresh.
const MAX_OPEN_STEPS: usize = 4096;

/// The text of the step each session is writing, as its noted appends brought it, so that the
/// step's document is made when it ends without reading its text events back. A session's
/// entry is trusted only while its appends follow one another (an append that does not start
/// where the previous one ended drops it); without one, a step's text is read from the log.
#[derive(Default)]
pub(super) struct OpenSteps {
    steps: HashMap<i64, OpenStep>,
}

/// A step in progress.
struct OpenStep {
    /// The `seq` the session's next append must start at for this entry to hold.
    next_seq: i64,
    /// The `seq` and time of its first text event.
    first: Option<(i64, String)>,
    /// Its text so far.
    text: String,
}

impl OpenSteps {
    /// Forgets every step (after a transaction that rolled back).
    pub(super) fn clear(&mut self) {
        self.steps.clear();
    }

    /// Keeps the step in progress of the session with key `key` only when an append starting
    /// at `first_seq` follows the appends it was built from.
    fn continued(&mut self, key: i64, first_seq: i64) {
        if self
            .steps
            .get(&key)
            .is_some_and(|step| step.next_seq != first_seq)
        {
            self.steps.remove(&key);
        }
    }

    /// Adds a step's start or a piece of its text.
    fn add(&mut self, key: i64, seq: i64, piece: &StepPiece) {
        match piece {
            StepPiece::Started => {
                if self.steps.len() >= MAX_OPEN_STEPS {
                    self.steps.clear();
                }
                self.steps.insert(
                    key,
                    OpenStep {
                        next_seq: seq + 1,
                        first: None,
                        text: String::new(),
                    },
                );
            }
            StepPiece::Text { time, text } => {
                if let Some(step) = self.steps.get_mut(&key) {
                    step.first.get_or_insert_with(|| (seq, time.clone()));
                    push_step_text(&mut step.text, text);
                }
            }
        }
    }
}

/// Inserts or updates the rows of `calls` of the session with key `key`.
fn insert_calls(index: &Connection, key: i64, calls: &[CallRow]) -> rusqlite::Result<()> {
    let mut upsert = index.prepare_cached(
        "INSERT INTO search_calls (session, call_id, tool, status) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (session, call_id) DO UPDATE
         SET tool = excluded.tool, status = COALESCE(excluded.status, status)",
    )?;
    for call in calls {
        upsert.execute(params![key, call.call_id, call.tool, call.status])?;
    }
    Ok(())
}

/// Records how far the session with key `key` is indexed.
fn set_indexed(index: &Connection, key: i64, indexed: &Indexed) -> rusqlite::Result<()> {
    index
        .prepare_cached(
            "INSERT INTO search_sessions (key, id, indexed_head, turns) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (key) DO UPDATE
             SET id = excluded.id, indexed_head = excluded.indexed_head, turns = excluded.turns",
        )?
        .execute(params![key, indexed.id, indexed.head, indexed.turns])
        .map(|_| ())
}

/// The document of the step that `end` ends, from its text events as stored in the log.
fn read_step_doc(
    log: &Connection,
    key: i64,
    session: &str,
    end: &StepEnd,
) -> Result<Option<IndexDoc>, ApplyError> {
    let started: i64 = log
        .prepare_cached(
            "SELECT seq FROM events WHERE session = ?1 AND seq < ?2 AND kind = 'step.started'
             ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![key, end.seq], |row| row.get(0))
        .optional()?
        .unwrap_or(0);
    let mut statement = log.prepare_cached(
        "SELECT seq, time, data FROM events
         WHERE session = ?1 AND seq > ?2 AND seq < ?3 AND kind = 'step.text.delta'
         ORDER BY seq",
    )?;
    let deltas = statement
        .query_map(params![key, started, end.seq], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<Vec<(i64, String, String)>>>()?;
    Ok(step_doc(session, end, &deltas)?)
}

/// Inserts `doc`'s row in `search_docs` and returns its id.
fn insert_doc(
    conn: &Connection,
    key: i64,
    session_turns: i64,
    doc: &IndexDoc,
) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO search_docs (session, seq, turn, call_id, field, time)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        key,
        doc.seq,
        turn_of(session_turns, doc.turns_before),
        doc.call_id,
        doc.field.as_str(),
        doc.time,
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Removes the index rows of the session with key `key`, and its place in the index.
fn delete_session(conn: &Connection, key: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM search_text WHERE rowid IN (SELECT id FROM search_docs WHERE session = ?1)",
    )?
    .execute([key])?;
    conn.prepare_cached("DELETE FROM search_docs WHERE session = ?1")?
        .execute([key])?;
    conn.prepare_cached("DELETE FROM search_calls WHERE session = ?1")?
        .execute([key])?;
    conn.prepare_cached("DELETE FROM search_sessions WHERE key = ?1")?
        .execute([key])?;
    Ok(())
}

/// The keys of the sessions whose index is not at their log's head — behind it, holding
/// another session's rows, or of a session no longer in the log — on a log connection that
/// has the index file attached as `idx`.
pub(super) fn lagging(log: &Connection) -> rusqlite::Result<Vec<i64>> {
    log.prepare_cached(
        "SELECT s.key FROM main.sessions s
         LEFT JOIN idx.search_sessions st ON st.key = s.key
         WHERE s.head_seq > 0
           AND (st.key IS NULL OR st.id != s.id OR st.indexed_head != s.head_seq)
         UNION
         SELECT st.key FROM idx.search_sessions st
         WHERE NOT EXISTS (SELECT 1 FROM main.sessions s WHERE s.key = st.key AND s.id = st.id)",
    )?
    .query_map([], |row| row.get(0))?
    .collect()
}

/// One page of `search`'s hits.
pub(super) fn search(
    conn: &Connection,
    search: &PreparedSearch,
    context: &str,
) -> Result<SearchPage, StoreError> {
    let error = |err: rusqlite::Error| sqlite_error(&err, context);
    let words = search.fts_words();
    let phrase = search.phrase().map(|phrase| fts_string(&phrase));
    // Whether a candidate holds the words as one phrase: the phrase's matches from the oldest
    // candidate on, a range FTS5 reads from its index (a `rowid IN (…)` filter would make it
    // read every match of the phrase, however old).
    let exact = match phrase {
        Some(_) => {
            "m.id IN (SELECT rowid FROM idx.search_text
                      WHERE search_text MATCH ?2
                        AND rowid >= (SELECT min(id) FROM candidates))"
        }
        None => "(?2 IS NOT NULL)",
    };
    // The matches that pass the filters, newest first, the first RANKED of them, ranked as
    // they are read: reading in rowid order stops early, so only they are ranked, however
    // common the words.
    let sql = format!(
        "WITH candidates AS MATERIALIZED (
             SELECT search_text.rowid AS id, bm25(search_text) AS rank, d.session AS session,
                    d.seq AS seq, d.turn AS turn, d.call_id AS call_id, c.tool AS tool,
                    d.field AS field, d.time AS time
             FROM idx.search_text
             JOIN idx.search_docs d ON d.id = search_text.rowid
             JOIN main.sessions s ON s.key = d.session
             JOIN idx.search_sessions st ON st.key = d.session AND st.id = s.id
             LEFT JOIN idx.search_calls c ON c.session = d.session AND c.call_id = d.call_id
             WHERE search_text MATCH ?1
               AND (?3 IS NULL OR s.id IN (SELECT value FROM json_each(?3)))
               AND (?4 IS NULL OR s.workspace = ?4)
               AND (?5 IS NULL OR s.agent = ?5)
               AND (?6 IS NULL OR c.tool = ?6)
               AND (?7 IS NULL OR c.status = ?7)
               AND (?8 IS NULL OR d.time >= ?8)
               AND (?9 IS NULL OR d.time < ?9)
             ORDER BY search_text.rowid DESC
             LIMIT {RANKED}
         )
         SELECT m.session, s.id, s.title, m.seq, m.turn, m.call_id, m.tool, m.field, m.time,
                m.rank, {exact}
         FROM candidates m
         JOIN main.sessions s ON s.key = m.session
         ORDER BY 11 DESC, 10 ASC, m.id ASC
         LIMIT ?10 OFFSET ?11"
    );
    let sessions = (!search.sessions.is_empty())
        .then(|| serde_json::to_string(&search.sessions))
        .transpose()
        .map_err(|err| StoreError::Backend(format!("{context}: {err}")))?;
    let fetch = i64::try_from(search.limit + 1).unwrap_or(i64::MAX);
    let offset = i64::try_from(search.offset).unwrap_or(i64::MAX);
    let mut statement = conn.prepare_cached(&sql).map_err(error)?;
    let rows = statement
        .query_map(
            params![
                words,
                phrase,
                sessions,
                search.workspace,
                search.agent,
                search.tool,
                search.status,
                search.after,
                search.before,
                fetch,
                offset,
            ],
            |row| {
                Ok(Row {
                    key: row.get(0)?,
                    session: row.get(1)?,
                    title: row.get(2)?,
                    seq: row.get(3)?,
                    turn: row.get(4)?,
                    call_id: row.get(5)?,
                    tool: row.get(6)?,
                    field: row.get(7)?,
                    time: row.get(8)?,
                    bm25: row.get(9)?,
                    exact: row.get(10)?,
                })
            },
        )
        .map_err(error)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(error)?;
    let more = rows.len() > search.limit;
    let mut hits = Vec::with_capacity(search.limit);
    for row in rows.into_iter().take(search.limit) {
        let field = HitField::from_name(&row.field).ok_or_else(|| StoreError::Corrupt {
            session: row.session.clone(),
            message: format!("unknown search field `{}`", row.field),
        })?;
        let body = stored_text(conn, row.key, &row.session, row.seq, field, context)?;
        let snippet = scan_match(search, &body)
            .map_or_else(|| body.chars().take(200).collect(), |(_, snippet)| snippet);
        hits.push(SearchHit {
            title: row.title.unwrap_or_default(),
            seq: u64::try_from(row.seq).unwrap_or(0),
            turn: row.turn.and_then(|turn| u32::try_from(turn).ok()),
            call_id: row.call_id,
            tool: row.tool,
            field,
            snippet,
            time: row.time,
            score: score(-row.bm25, row.exact),
            session: row.session,
        });
    }
    Ok(SearchPage {
        hits,
        next: more.then(|| search.next_cursor()),
    })
}

/// A hit as the query returns it.
struct Row {
    session: String,
    title: Option<String>,
    seq: i64,
    turn: Option<i64>,
    call_id: Option<String>,
    tool: Option<String>,
    field: String,
    time: String,
    bm25: f64,
    exact: bool,
    /// The session's key.
    key: i64,
}

/// The text a hit was indexed from, read back from its events (the FTS5 table keeps none):
/// the event's `field`, or for the model's text the step's text events from `seq` on.
fn stored_text(
    conn: &Connection,
    key: i64,
    session: &str,
    seq: i64,
    field: HitField,
    context: &str,
) -> Result<String, StoreError> {
    let error = |err: rusqlite::Error| sqlite_error(&err, context);
    if field == HitField::Text {
        let mut statement = conn
            .prepare_cached(
                "SELECT seq, time, kind, data FROM events WHERE session = ?1 AND seq >= ?2
                 ORDER BY seq",
            )
            .map_err(error)?;
        let mut rows = statement.query(params![key, seq]).map_err(error)?;
        let mut deltas = Vec::new();
        while let Some(row) = rows.next().map_err(error)? {
            let kind: String = row.get(2).map_err(error)?;
            match kind.as_str() {
                "step.text.delta" => deltas.push((
                    row.get(0).map_err(error)?,
                    row.get(1).map_err(error)?,
                    row.get(3).map_err(error)?,
                )),
                "step.finished" | "step.started" => break,
                _ => {}
            }
        }
        let end = StepEnd {
            seq,
            turns_before: 0,
        };
        return Ok(step_doc(session, &end, &deltas)?.map_or_else(String::new, |doc| doc.body));
    }
    let json: String = conn
        .prepare_cached("SELECT data FROM events WHERE session = ?1 AND seq = ?2")
        .and_then(|mut statement| statement.query_row(params![key, seq], |row| row.get(0)))
        .map_err(error)?;
    let event: Event = decode(session, &json)?;
    let mut plan = IndexPlan::default();
    plan.add(seq, &event, 0);
    Ok(plan
        .docs
        .into_iter()
        .find(|doc| doc.field == field)
        .map_or_else(String::new, |doc| doc.body))
}
