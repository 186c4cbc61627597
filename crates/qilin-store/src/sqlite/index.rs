//! The search index in SQLite: `search_docs` (where each text is: session, event, turn, call,
//! field, time), `search_text` (the text, in an FTS5 table with the `unicode61` tokenizer, its
//! rowid the document's id) and `search_calls` (each call's tool and status). The writer fills
//! them in the transaction of the append; a search reads them on a reading connection, ranks
//! the newest [`RANKED`] matches that pass its filters by `bm25`, and marks the matches with
//! FTS5's `snippet`.

use super::sqlite_error;
use super::writer::ApplyError;
use crate::plan::{AppendPlan, decode};
use crate::search::{IndexDoc, PreparedSearch, fts_string, score, step_doc, turn_of, unsegment};
use crate::{SearchHit, SearchPage, StoreError};
use qilin_protocol::Event;
use qilin_protocol::sessions::HitField;
use rusqlite::{Connection, params};
use std::path::Path;

/// The words of context a snippet keeps.
const SNIPPET_TOKENS: i64 = 24;
/// The most matches a search ranks: the newest that pass its filters.
const RANKED: usize = 2_000;

/// Adds what `plan` brings to the index of the session with key `key`, which had
/// `session_turns` turns before it. Its events are stored already (a step's text is read
/// from them).
pub(super) fn index_append(
    conn: &Connection,
    key: i64,
    session_turns: i64,
    plan: &AppendPlan,
) -> Result<(), ApplyError> {
    for doc in &plan.index.docs {
        insert_doc(conn, key, session_turns, doc)?;
    }
    for call in &plan.index.calls {
        conn.prepare_cached(
            "INSERT INTO search_calls (session, call_id, tool, status) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (session, call_id) DO UPDATE
             SET tool = excluded.tool, status = COALESCE(excluded.status, status)",
        )?
        .execute(params![key, call.call_id, call.tool, call.status])?;
    }
    for end in &plan.index.step_ends {
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
        if let Some(doc) = step_doc(&plan.session, end, &deltas)? {
            insert_doc(conn, key, session_turns, &doc)?;
        }
    }
    Ok(())
}

fn insert_doc(
    conn: &Connection,
    key: i64,
    session_turns: i64,
    doc: &IndexDoc,
) -> rusqlite::Result<()> {
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
    conn.prepare_cached("INSERT INTO search_text (rowid, body) VALUES (last_insert_rowid(), ?1)")?
        .execute([&doc.body])?;
    Ok(())
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
            index_append(conn, key, 0, &plan).map_err(|err| err.into_store(&error))?;
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
         SELECT m.id, s.id, s.title, m.seq, m.turn, m.call_id, m.tool, m.field, m.time,
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
                    id: row.get(0)?,
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
    let mut snippets = conn
        .prepare_cached(&format!(
            "SELECT snippet(search_text, 0, '«', '»', '…', {SNIPPET_TOKENS})
             FROM search_text WHERE search_text MATCH ?1 AND rowid = ?2"
        ))
        .map_err(error)?;
    let mut hits = Vec::with_capacity(search.limit);
    for row in rows.into_iter().take(search.limit) {
        let snippet: String = snippets
            .query_row(params![words, row.id], |r| r.get(0))
            .map_err(error)?;
        let field = HitField::from_name(&row.field).ok_or_else(|| StoreError::Corrupt {
            session: row.session.clone(),
            message: format!("unknown search field `{}`", row.field),
        })?;
        hits.push(SearchHit {
            title: row.title.unwrap_or_default(),
            seq: u64::try_from(row.seq).unwrap_or(0),
            turn: row.turn.and_then(|turn| u32::try_from(turn).ok()),
            call_id: row.call_id,
            tool: row.tool,
            field,
            snippet: unsegment(&snippet),
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
    id: i64,
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
}
