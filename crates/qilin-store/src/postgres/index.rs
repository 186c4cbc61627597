//! The search index in PostgreSQL: `search_docs` holds each searchable text of an event with
//! where it is (session, event, turn, call, field, time), as written and as its tokens
//! ([`terms`]: the same words every store finds, where PostgreSQL's parser would read
//! `client.rs` as one host name), with the tokens' `tsvector` (the `simple` configuration: no
//! stemming, no stop words) under a GIN index; `search_calls` holds each call's tool and
//! status. The committer fills them in the append's transaction; a search ranks with
//! `ts_rank` the newest [`RANKED`] matches that pass its filters (as SQLite does, so a common
//! word costs no more than a rare one) and marks the matches of a page's hits as the memory
//! store does. Rows go with their session (`ON DELETE CASCADE`).

use super::pg_error;
use crate::plan::{AppendPlan, decode};
use crate::search::{
    IndexDoc, PreparedSearch, StepEnd, scan_match, score, step_doc, terms, turn_of,
};
use crate::{SearchHit, SearchPage, StoreError};
use qilin_protocol::Event;
use qilin_protocol::sessions::HitField;
use std::collections::HashMap;
use tokio_postgres::Transaction;

/// The most matches a search ranks: the newest that pass its filters (as SQLite's).
const RANKED: usize = 2_000;

/// A call of a batch, by session and call id.
type CallKey<'a> = (&'a str, &'a str);

/// A call's tool and latest status (stored name).
type CallState<'a> = (&'a str, Option<&'static str>);

/// What a batch of appends adds to the index, gathered before it is written.
#[derive(Default)]
pub(super) struct IndexRows<'a> {
    /// Each document with its session and the session's turns before its append.
    docs: Vec<(&'a str, i64, &'a IndexDoc)>,
    /// Each call's tool and latest status, by session and call, in first-seen order.
    calls: Vec<(CallKey<'a>, CallState<'a>)>,
    /// Where each call is in `calls`.
    call_at: HashMap<CallKey<'a>, usize>,
    /// Each step ended, with its session and the session's turns before its append.
    step_ends: Vec<(&'a str, i64, &'a StepEnd)>,
}

impl<'a> IndexRows<'a> {
    /// Adds what `plan` brings, its session having had `session_turns` turns before it.
    pub(super) fn add(&mut self, plan: &'a AppendPlan, session_turns: i64) {
        let session = plan.session.as_str();
        for doc in &plan.index.docs {
            self.docs.push((session, session_turns, doc));
        }
        for call in &plan.index.calls {
            let key = (session, call.call_id.as_str());
            match self.call_at.get(&key) {
                Some(&at) => {
                    let entry = &mut self.calls[at].1;
                    entry.0 = call.tool.as_str();
                    entry.1 = call.status.or(entry.1);
                }
                None => {
                    self.call_at.insert(key, self.calls.len());
                    self.calls.push((key, (call.tool.as_str(), call.status)));
                }
            }
        }
        for end in &plan.index.step_ends {
            self.step_ends.push((session, session_turns, end));
        }
    }

    /// Writes the rows, in the transaction that stored the batch's events.
    pub(super) async fn write(
        &self,
        tx: &Transaction<'_>,
        context: &str,
    ) -> Result<(), StoreError> {
        let error = |err: tokio_postgres::Error| pg_error(&err, context);
        let mut step_docs = Vec::new();
        if !self.step_ends.is_empty() {
            let sessions: Vec<&str> = self.step_ends.iter().map(|end| end.0).collect();
            let seqs: Vec<i64> = self.step_ends.iter().map(|end| end.2.seq).collect();
            let rows = tx
                .query(
                    "SELECT u.ord, e.seq, e.time, e.data
                     FROM UNNEST($1::text[], $2::bigint[]) WITH ORDINALITY AS u (session_id, finished, ord)
                     CROSS JOIN LATERAL (
                         SELECT COALESCE((
                             SELECT s.seq FROM events s
                             WHERE s.session_id = u.session_id AND s.seq < u.finished
                               AND s.kind = 'step.started'
                             ORDER BY s.seq DESC LIMIT 1), 0) AS started
                     ) st
                     JOIN events e ON e.session_id = u.session_id AND e.seq > st.started
                         AND e.seq < u.finished AND e.kind = 'step.text.delta'
                     ORDER BY u.ord, e.seq",
                    &[&sessions, &seqs],
                )
                .await
                .map_err(error)?;
            let mut deltas: Vec<Vec<(i64, String, String)>> = vec![Vec::new(); seqs.len()];
            for row in rows {
                let ord: i64 = row.try_get(0).map_err(error)?;
                let at = usize::try_from(ord - 1).unwrap_or(usize::MAX);
                if let Some(step) = deltas.get_mut(at) {
                    step.push((
                        row.try_get(1).map_err(error)?,
                        row.try_get(2).map_err(error)?,
                        row.try_get(3).map_err(error)?,
                    ));
                }
            }
            for ((session, turns, end), deltas) in self.step_ends.iter().zip(&deltas) {
                if let Some(doc) = step_doc(session, end, deltas)? {
                    step_docs.push((*session, *turns, doc));
                }
            }
        }
        let docs = self
            .docs
            .iter()
            .map(|(session, turns, doc)| (*session, *turns, *doc))
            .chain(
                step_docs
                    .iter()
                    .map(|(session, turns, doc)| (*session, *turns, doc)),
            );
        let mut columns = DocColumns::default();
        for (session, turns, doc) in docs {
            columns.sessions.push(session);
            columns.seqs.push(doc.seq);
            columns
                .turns
                .push(turn_of(turns, doc.turns_before).map(i64::from));
            columns.call_ids.push(doc.call_id.as_deref());
            columns.fields.push(doc.field.as_str());
            columns.times.push(&doc.time);
            columns.bodies.push(&doc.body);
            columns.terms.push(terms(&doc.body));
        }
        if !columns.sessions.is_empty() {
            tx.execute(
                "INSERT INTO search_docs (session_id, seq, turn, call_id, field, time, body, terms)
                 SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::bigint[], $4::text[],
                                      $5::text[], $6::text[], $7::text[], $8::text[])",
                &[
                    &columns.sessions,
                    &columns.seqs,
                    &columns.turns,
                    &columns.call_ids,
                    &columns.fields,
                    &columns.times,
                    &columns.bodies,
                    &columns.terms,
                ],
            )
            .await
            .map_err(error)?;
        }
        if !self.calls.is_empty() {
            let sessions: Vec<&str> = self.calls.iter().map(|c| c.0.0).collect();
            let call_ids: Vec<&str> = self.calls.iter().map(|c| c.0.1).collect();
            let tools: Vec<&str> = self.calls.iter().map(|c| c.1.0).collect();
            let statuses: Vec<Option<&str>> = self.calls.iter().map(|c| c.1.1).collect();
            tx.execute(
                "INSERT INTO search_calls (session_id, call_id, tool, status)
                 SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[])
                 ON CONFLICT (session_id, call_id) DO UPDATE
                 SET tool = excluded.tool,
                     status = COALESCE(excluded.status, search_calls.status)",
                &[&sessions, &call_ids, &tools, &statuses],
            )
            .await
            .map_err(error)?;
        }
        Ok(())
    }
}

/// The document columns of one insert.
#[derive(Default)]
struct DocColumns<'a> {
    sessions: Vec<&'a str>,
    seqs: Vec<i64>,
    turns: Vec<Option<i64>>,
    call_ids: Vec<Option<&'a str>>,
    fields: Vec<&'static str>,
    times: Vec<&'a str>,
    bodies: Vec<&'a str>,
    terms: Vec<String>,
}

/// Indexes every stored event (the migration that creates the index), one session at a time.
pub(super) async fn backfill(tx: &Transaction<'_>, context: &str) -> Result<(), StoreError> {
    let error = |err: tokio_postgres::Error| pg_error(&err, context);
    let sessions = tx
        .query("SELECT id FROM sessions ORDER BY id", &[])
        .await
        .map_err(error)?;
    for row in sessions {
        let id: String = row.try_get(0).map_err(error)?;
        let events = tx
            .query(
                "SELECT data FROM events WHERE session_id = $1 ORDER BY seq",
                &[&id],
            )
            .await
            .map_err(error)?
            .iter()
            .map(|row| decode::<Event>(&id, row.try_get::<_, &str>(0).map_err(error)?))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(plan) = AppendPlan::new(&id, &events)? {
            let mut rows = IndexRows::default();
            rows.add(&plan, 0);
            rows.write(tx, context).await?;
        }
    }
    Ok(())
}

/// One page of `search`'s hits.
pub(super) async fn search(
    client: &tokio_postgres::Client,
    search: &PreparedSearch,
    context: &str,
) -> Result<SearchPage, StoreError> {
    let error = |err: tokio_postgres::Error| pg_error(&err, context);
    let words = search.term_words();
    let phrase = (words.len() > 1).then(|| words.join(" "));
    // Every word as a quoted phrase of its tokens, which are letters and digits only: the
    // query is one call of a function PostgreSQL evaluates when it plans, so that it knows how
    // common the words are (to read the newest documents first for a common word, the GIN
    // index for a rare one).
    let words = words
        .iter()
        .map(|word| format!("\"{word}\""))
        .collect::<Vec<_>>()
        .join(" ");
    let sessions = (!search.sessions.is_empty()).then_some(&search.sessions);
    let fetch = i64::try_from(search.limit + 1).unwrap_or(i64::MAX);
    let offset = i64::try_from(search.offset).unwrap_or(i64::MAX);
    // The matches that pass the filters, the newest RANKED of them (a top-N by id, which
    // reads no text), then only they are ranked: a common word costs no more than a rare one.
    let sql = format!(
        "WITH candidates AS MATERIALIZED (
             SELECT d.id, d.session_id, s.title, d.seq, d.turn, d.call_id, c.tool, d.field,
                    d.time, d.terms_tsv, d.body
             FROM search_docs d
             JOIN sessions s ON s.id = d.session_id
             LEFT JOIN search_calls c ON c.session_id = d.session_id AND c.call_id = d.call_id
             WHERE d.terms_tsv @@ websearch_to_tsquery('simple', $1::text)
               AND ($3::text[] IS NULL OR d.session_id = ANY($3::text[]))
               AND ($4::text IS NULL OR s.workspace = $4::text)
               AND ($5::text IS NULL OR s.agent = $5::text)
               AND ($6::text IS NULL OR c.tool = $6::text)
               AND ($7::text IS NULL OR c.status = $7::text)
               AND ($8::text IS NULL OR d.time >= $8::text)
               AND ($9::text IS NULL OR d.time < $9::text)
             ORDER BY d.id DESC
             LIMIT {RANKED}
         )
         SELECT m.session_id, m.title, m.seq, m.turn, m.call_id, m.tool, m.field, m.time,
                ts_rank(m.terms_tsv, websearch_to_tsquery('simple', $1::text))::float8 AS rank,
                COALESCE(m.terms_tsv @@ phraseto_tsquery('simple', $2::text), false) AS exact,
                m.body
         FROM candidates m
         ORDER BY exact DESC, rank DESC, m.id
         LIMIT $10 OFFSET $11"
    );
    let rows = client
        .query(
            &sql,
            &[
                &words,
                &phrase,
                &sessions,
                &search.workspace,
                &search.agent,
                &search.tool,
                &search.status,
                &search.after,
                &search.before,
                &fetch,
                &offset,
            ],
        )
        .await
        .map_err(error)?;
    let more = rows.len() > search.limit;
    let mut hits = Vec::with_capacity(search.limit);
    for row in rows.iter().take(search.limit) {
        let session: String = row.try_get(0).map_err(error)?;
        let field: String = row.try_get(6).map_err(error)?;
        let field = HitField::from_name(&field).ok_or_else(|| StoreError::Corrupt {
            session: session.clone(),
            message: format!("unknown search field `{field}`"),
        })?;
        let turn: Option<i64> = row.try_get(3).map_err(error)?;
        let seq: i64 = row.try_get(2).map_err(error)?;
        let title: Option<String> = row.try_get(1).map_err(error)?;
        let body: String = row.try_get(10).map_err(error)?;
        let snippet = scan_match(search, &body)
            .map_or_else(|| body.chars().take(200).collect(), |(_, snippet)| snippet);
        hits.push(SearchHit {
            title: title.unwrap_or_default(),
            seq: u64::try_from(seq).unwrap_or(0),
            turn: turn.and_then(|turn| u32::try_from(turn).ok()),
            call_id: row.try_get(4).map_err(error)?,
            tool: row.try_get(5).map_err(error)?,
            field,
            snippet,
            time: row.try_get(7).map_err(error)?,
            score: score(
                row.try_get(8).map_err(error)?,
                row.try_get(9).map_err(error)?,
            ),
            session,
        });
    }
    Ok(SearchPage {
        hits,
        next: more.then(|| search.next_cursor()),
    })
}
