//! The search index in SQLite: `search_docs` (where each text is: session, event, turn, call,
//! field, time), `search_text` (the text's tokens, in a contentless FTS5 table with the
//! `unicode61` tokenizer, its rowid the document's id: the text itself is in the events
//! already) and `search_calls` (each call's tool and status). The writer fills them in the
//! transaction of the append; a search reads them on a reading connection, ranks the newest
//! [`RANKED`] matches that pass its filters by `bm25`, and marks the matches of a page's hits
//! in their text read back from the events.

use super::sqlite_error;
use super::writer::ApplyError;
use crate::plan::{AppendPlan, decode};
use crate::search::{
    IndexDoc, IndexPlan, PreparedSearch, StepEnd, StepPiece, fts_string, push_step_text,
    scan_match, score, step_doc, step_text_doc, turn_of,
};
use crate::{SearchHit, SearchPage, StoreError};
use qilin_protocol::Event;
use qilin_protocol::sessions::HitField;
use rusqlite::{Connection, params};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

/// The most matches a search ranks: the newest that pass its filters.
const RANKED: usize = 2_000;

/// The appends an open transaction applied, to be indexed once all of its operations are:
/// each operation runs in a savepoint, where SQLite copies every page it first changes to the
/// savepoint's journal and FTS5 writes what it holds in memory to a new segment of the index;
/// the index rows written after the last operation, outside any savepoint, cost neither, and
/// FTS5 writes one segment at the commit. They are still written in the transaction of the
/// appends, so an append is searchable once it committed.
#[derive(Default)]
pub(super) struct PendingIndex<'a> {
    /// Each append with its session's key and the session's turns before it.
    appends: Vec<(i64, i64, &'a AppendPlan)>,
}

impl<'a> PendingIndex<'a> {
    /// Adds `plan`, applied to the session with key `key` that had `session_turns` turns
    /// before it.
    pub(super) fn add(&mut self, key: i64, session_turns: i64, plan: &'a AppendPlan) {
        self.appends.push((key, session_turns, plan));
    }

    /// Adds the appends `other` holds (an operation's, once it is applied).
    pub(super) fn extend(&mut self, other: PendingIndex<'a>) {
        self.appends.extend(other.appends);
    }

    /// Whether there is nothing to write.
    pub(super) fn is_empty(&self) -> bool {
        self.appends.is_empty()
    }

    /// Writes the index rows of the appends, in the open transaction, and forgets them;
    /// `steps` holds the text of the steps in progress.
    pub(super) fn write(
        &mut self,
        conn: &Connection,
        steps: &mut OpenSteps,
    ) -> Result<(), ApplyError> {
        let mut texts: Vec<(i64, Cow<'a, str>)> = Vec::new();
        for (key, session_turns, plan) in self.appends.drain(..) {
            index_append(conn, key, session_turns, plan, steps, &mut texts)?;
        }
        let mut insert =
            conn.prepare_cached("INSERT INTO search_text (rowid, body) VALUES (?1, ?2)")?;
        for (id, body) in &texts {
            insert.execute(params![id, body.as_ref()])?;
        }
        Ok(())
    }
}

/// The most sessions whose step in progress [`OpenSteps`] keeps; past it, it starts afresh.
const MAX_OPEN_STEPS: usize = 4096;

/// The text of the step each session is writing, as its appends brought it, so that the
/// step's document is made when it ends without reading its text events back. A session's
/// entry is trusted only while its appends follow one another (an append that does not start
/// where the previous one ended — after a transaction rolled back, or a session's first append
/// since the writer started — drops it); without one, a step's text is read from the events.
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
    /// The step in progress of the session with key `key` when an append starting at
    /// `first_seq` follows the appends it was built from; dropped otherwise.
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

/// Adds what `plan` brings to the index of the session with key `key`, which had
/// `session_turns` turns before it: its documents and calls, and each document's id and text
/// to `texts`, for the FTS5 table. Its events are stored already: a step's text comes from
/// `steps`, or is read from them.
fn index_append<'a>(
    conn: &Connection,
    key: i64,
    session_turns: i64,
    plan: &'a AppendPlan,
    steps: &mut OpenSteps,
    texts: &mut Vec<(i64, Cow<'a, str>)>,
) -> Result<(), ApplyError> {
    for doc in &plan.index.docs {
        let id = insert_doc(conn, key, session_turns, doc)?;
        texts.push((id, Cow::Borrowed(&doc.body)));
    }
    for call in &plan.index.calls {
        conn.prepare_cached(
            "INSERT INTO search_calls (session, call_id, tool, status) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (session, call_id) DO UPDATE
             SET tool = excluded.tool, status = COALESCE(excluded.status, status)",
        )?
        .execute(params![key, call.call_id, call.tool, call.status])?;
    }
    let first_seq = i64::try_from(plan.first_seq()).unwrap_or(i64::MAX);
    steps.continued(key, first_seq);
    let mut pieces = plan.index.step_pieces.iter().peekable();
    for end in &plan.index.step_ends {
        while let Some((seq, piece)) = pieces.next_if(|(seq, _)| *seq < end.seq) {
            steps.add(key, *seq, piece);
        }
        let doc = match steps.steps.remove(&key) {
            Some(step) => step
                .first
                .and_then(|(seq, time)| step_text_doc(end, seq, &time, &step.text)),
            None => read_step_doc(conn, key, &plan.session, end)?,
        };
        if let Some(doc) = doc {
            let id = insert_doc(conn, key, session_turns, &doc)?;
            texts.push((id, Cow::Owned(doc.body)));
        }
    }
    for (seq, piece) in pieces {
        steps.add(key, *seq, piece);
    }
    if let Some(step) = steps.steps.get_mut(&key) {
        step.next_seq = i64::try_from(plan.last_seq).unwrap_or(i64::MAX) + 1;
    }
    Ok(())
}

/// The document of the step that `end` ends, from its text events as stored.
fn read_step_doc(
    conn: &Connection,
    key: i64,
    session: &str,
    end: &StepEnd,
) -> Result<Option<IndexDoc>, ApplyError> {
    let started: i64 = conn
        .prepare_cached(
            "SELECT seq FROM events WHERE session = ?1 AND seq < ?2 AND kind = 'step.started'
             ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![key, end.seq], |row| row.get(0))
        .or_else(|err| match err {
            rusqlite::Error::QueryReturnedNoRows => Ok(0),
            err => Err(err),
        })?;
    let mut statement = conn.prepare_cached(
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

/// Removes the index entries of the session with key `key`.
pub(super) fn delete_session(conn: &Connection, key: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM search_text WHERE rowid IN (SELECT id FROM search_docs WHERE session = ?1)",
    )?
    .execute([key])?;
    conn.prepare_cached("DELETE FROM search_docs WHERE session = ?1")?
        .execute([key])?;
    conn.prepare_cached("DELETE FROM search_calls WHERE session = ?1")?
        .execute([key])?;
    Ok(())
}

/// Indexes every stored event (the migration that creates the index), one session at a time.
pub(super) fn backfill(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let error = |err: rusqlite::Error| sqlite_error(&err, &format!("indexing {}", path.display()));
    let sessions = conn
        .prepare("SELECT key, id FROM sessions ORDER BY key")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(error)?;
    for (key, id) in sessions {
        let events = conn
            .prepare("SELECT data FROM events WHERE session = ?1 ORDER BY seq")
            .and_then(|mut statement| {
                statement
                    .query_map([key], |row| row.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(error)?
            .iter()
            .map(|json| decode::<Event>(&id, json))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(plan) = AppendPlan::new(&id, &events)? {
            let mut pending = PendingIndex::default();
            pending.add(key, 0, &plan);
            pending
                .write(conn, &mut OpenSteps::default())
                .map_err(|err| err.into_store(&error))?;
        }
    }
    Ok(())
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
            "m.id IN (SELECT rowid FROM search_text
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
             FROM search_text
             JOIN search_docs d ON d.id = search_text.rowid
             JOIN sessions s ON s.key = d.session
             LEFT JOIN search_calls c ON c.session = d.session AND c.call_id = d.call_id
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
         JOIN sessions s ON s.key = m.session
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
