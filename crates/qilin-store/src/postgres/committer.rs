//! The committer: one task per store commits the appends its callers queued meanwhile in one
//! transaction — PostgreSQL syncs each commit to disk, and every commit that notifies is
//! serialised, so committing appends one by one caps a process at a few hundred a second.
//!
//! The transaction locks the rows of the batch's sessions (in id order, so two processes never
//! wait on each other in a circle), checks each append against its session's head — refusing
//! one alone, as `SeqConflict` or `UnknownSession`, without touching the others — writes the
//! events, the derived rows and the open requests with one statement each, announces each
//! session's new head, and commits.

use super::index::IndexRows;
use super::{append_payload, connection, pg_error};
use crate::StoreError;
use crate::live::LiveMap;
use crate::plan::{AppendPlan, RequestChange, sql_seq, status_name};
use deadpool_postgres::Pool;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::error::SqlState;

/// The most appends one transaction commits.
const MAX_BATCH: usize = 512;

/// An append for the committer, with where to send its outcome.
pub(super) struct Append {
    /// What to write.
    pub plan: AppendPlan,
    /// Where the new head, or why not, goes.
    pub reply: oneshot::Sender<Result<u64, StoreError>>,
}

/// What the committer needs.
pub(super) struct Committer {
    pub pool: Pool,
    pub schema: String,
    pub channel: String,
    pub live: Arc<LiveMap>,
}

impl Committer {
    /// Commits batches until every sender is gone.
    pub(super) async fn run(self, mut appends: mpsc::Receiver<Append>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while appends.recv_many(&mut batch, MAX_BATCH).await > 0 {
            let outcomes = self.commit(&batch).await;
            for (append, outcome) in batch.drain(..).zip(outcomes) {
                let Append { plan, reply } = append;
                if let Ok(head) = outcome {
                    let session = plan.session.clone();
                    self.live.publish(&session, head, || plan.into_json());
                }
                // A caller that stopped waiting dropped its receiver; the outcome stands.
                let _ = reply.send(outcome);
            }
        }
    }

    /// Commits what it can of `batch` and returns each append's outcome.
    async fn commit(&self, batch: &[Append]) -> Vec<Result<u64, StoreError>> {
        let context = format!("PostgreSQL schema `{}`: appending", self.schema);
        let mut outcomes: Vec<Option<Result<u64, StoreError>>> =
            batch.iter().map(|_| None).collect();
        let written = self.write(batch, &mut outcomes, &context).await;
        outcomes
            .into_iter()
            .zip(batch)
            .map(|(outcome, append)| match (outcome, &written) {
                (Some(Err(refused)), _) => Err(refused),
                (Some(Ok(head)), Ok(())) => Ok(head),
                (_, Err(failed)) => Err(failed.again(&append.plan)),
                (None, Ok(())) => Err(StoreError::Backend(format!("{context}: not written"))),
            })
            .collect()
    }

    /// The transaction: fills `outcomes` with each append's head or refusal; an error means
    /// nothing was committed.
    async fn write(
        &self,
        batch: &[Append],
        outcomes: &mut [Option<Result<u64, StoreError>>],
        context: &str,
    ) -> Result<(), Failure> {
        let error = |err: tokio_postgres::Error| Failure::from_pg(&err, context);
        let mut client = connection(&self.pool, &self.schema)
            .await
            .map_err(Failure::Store)?;
        let tx = client.transaction().await.map_err(error)?;
        let mut ids: Vec<&str> = batch.iter().map(|a| a.plan.session.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let rows = tx
            .query(
                "SELECT id, head_seq, turns FROM sessions WHERE id = ANY($1) ORDER BY id FOR UPDATE",
                &[&ids],
            )
            .await
            .map_err(error)?;
        let mut heads = HashMap::with_capacity(rows.len());
        for row in &rows {
            let id: String = row.try_get(0).map_err(error)?;
            let head: i64 = row.try_get(1).map_err(error)?;
            let turns: i64 = row.try_get(2).map_err(error)?;
            heads.insert(id, (u64::try_from(head).unwrap_or(0), turns));
        }

        let mut rows = Rows::default();
        let mut index = IndexRows::default();
        for (append, outcome) in batch.iter().zip(outcomes.iter_mut()) {
            let plan = &append.plan;
            let Some((head, turns)) = heads.get_mut(&plan.session) else {
                *outcome = Some(Err(StoreError::UnknownSession(plan.session.clone())));
                continue;
            };
            if plan.first_seq() != *head + 1 {
                *outcome = Some(Err(StoreError::SeqConflict {
                    session: plan.session.clone(),
                    expected: *head + 1,
                    got: plan.first_seq(),
                }));
                continue;
            }
            *head = plan.last_seq;
            index.add(plan, *turns);
            *turns += plan.turns_started;
            rows.add(plan).map_err(Failure::Store)?;
            *outcome = Some(Ok(plan.last_seq));
        }
        if rows.is_empty() {
            return Ok(());
        }

        let inserted = tx
            .execute(
                "INSERT INTO events (session_id, seq, time, kind, data)
                 SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[])",
                &[&rows.event_sessions, &rows.seqs, &rows.times, &rows.kinds, &rows.data],
            )
            .await;
        match inserted {
            Err(err) if err.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                return Err(Failure::Conflict);
            }
            other => other.map_err(error)?,
        };
        index.write(&tx, context).await.map_err(Failure::Store)?;
        let sessions = rows.sessions();
        tx.execute(
            "UPDATE sessions AS s
             SET head_seq = u.head, last_activity = u.time, turns = s.turns + u.turns,
                 status = COALESCE(u.status, s.status), title = COALESCE(s.title, u.title),
                 title_lower = COALESCE(s.title_lower, u.title_lower)
             FROM UNNEST($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[],
                         $6::text[], $7::text[])
                  AS u (id, head, time, turns, status, title, title_lower)
             WHERE s.id = u.id",
            &[
                &sessions.ids,
                &sessions.heads,
                &sessions.times,
                &sessions.turns,
                &sessions.statuses,
                &sessions.titles,
                &sessions.titles_lower,
            ],
        )
        .await
        .map_err(error)?;
        let requests = rows.requests();
        if !requests.closed.0.is_empty() {
            tx.execute(
                "DELETE FROM requests AS r
                 USING UNNEST($1::text[], $2::text[]) AS d (session_id, request_id)
                 WHERE r.session_id = d.session_id AND r.request_id = d.request_id",
                &[&requests.closed.0, &requests.closed.1],
            )
            .await
            .map_err(error)?;
        }
        if !requests.open.0.is_empty() {
            tx.execute(
                "INSERT INTO requests (session_id, request_id, seq, data)
                 SELECT * FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[])
                 ON CONFLICT (session_id, request_id)
                 DO UPDATE SET seq = excluded.seq, data = excluded.data",
                &[
                    &requests.open.0,
                    &requests.open.1,
                    &requests.open.2,
                    &requests.open.3,
                ],
            )
            .await
            .map_err(error)?;
        }
        let payloads: Vec<String> = sessions
            .ids
            .iter()
            .zip(&sessions.heads)
            .map(|(id, head)| append_payload(id, u64::try_from(*head).unwrap_or(0)))
            .collect();
        tx.execute(
            "SELECT pg_notify($1, payload) FROM UNNEST($2::text[]) AS payload",
            &[&self.channel, &payloads],
        )
        .await
        .map_err(error)?;
        tx.commit().await.map_err(error)
    }
}

/// Why a batch's transaction failed: every append it accepted fails the same way.
enum Failure {
    /// A store error (the database's, mapped).
    Store(StoreError),
    /// Events already stored at an accepted `seq`: a writer that took no lock got there first.
    Conflict,
}

impl Failure {
    fn from_pg(err: &tokio_postgres::Error, context: &str) -> Self {
        Failure::Store(pg_error(err, context))
    }

    /// This failure as the outcome of `plan`.
    fn again(&self, plan: &AppendPlan) -> StoreError {
        match self {
            Failure::Store(StoreError::Busy(message)) => StoreError::Busy(message.clone()),
            Failure::Store(StoreError::Full(message)) => StoreError::Full(message.clone()),
            Failure::Store(other) => StoreError::Backend(other.to_string()),
            Failure::Conflict => StoreError::SeqConflict {
                session: plan.session.clone(),
                expected: plan.first_seq(),
                got: plan.first_seq(),
            },
        }
    }
}

/// The rows of a batch's accepted appends, as the column arrays the statements take.
#[derive(Default)]
struct Rows<'a> {
    event_sessions: Vec<&'a str>,
    seqs: Vec<i64>,
    times: Vec<&'a str>,
    kinds: Vec<&'a str>,
    data: Vec<&'a str>,
    plans: Vec<&'a AppendPlan>,
}

/// One row per session of the batch: what its appends change.
#[derive(Default)]
struct SessionRows<'a> {
    ids: Vec<&'a str>,
    heads: Vec<i64>,
    times: Vec<&'a str>,
    turns: Vec<i64>,
    statuses: Vec<Option<&'static str>>,
    titles: Vec<Option<&'a str>>,
    titles_lower: Vec<Option<String>>,
}

/// The requests a batch leaves open, and those it closes, by session and id.
#[derive(Default)]
struct RequestRows<'a> {
    open: (Vec<&'a str>, Vec<&'a str>, Vec<i64>, Vec<&'a str>),
    closed: (Vec<&'a str>, Vec<&'a str>),
}

impl<'a> Rows<'a> {
    fn add(&mut self, plan: &'a AppendPlan) -> Result<(), StoreError> {
        for row in &plan.rows {
            self.event_sessions.push(&plan.session);
            self.seqs.push(row.seq);
            self.times.push(&row.time);
            self.kinds.push(row.kind);
            self.data.push(&row.json);
        }
        sql_seq(&plan.session, plan.last_seq)?;
        self.plans.push(plan);
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }

    /// Each session's changes, its appends folded in order.
    fn sessions(&self) -> SessionRows<'a> {
        let mut rows = SessionRows::default();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for plan in &self.plans {
            let index = *at.entry(plan.session.as_str()).or_insert_with(|| {
                rows.ids.push(&plan.session);
                rows.heads.push(0);
                rows.times.push("");
                rows.turns.push(0);
                rows.statuses.push(None);
                rows.titles.push(None);
                rows.titles_lower.push(None);
                rows.ids.len() - 1
            });
            rows.heads[index] = i64::try_from(plan.last_seq).unwrap_or(i64::MAX);
            rows.times[index] = &plan.last_time;
            rows.turns[index] += plan.turns_started;
            if let Some(status) = plan.status {
                rows.statuses[index] = Some(status_name(status));
            }
            if rows.titles[index].is_none()
                && let Some(title) = &plan.title
            {
                rows.titles[index] = Some(title);
                rows.titles_lower[index] = Some(title.to_lowercase());
            }
        }
        rows
    }

    /// The final state of every request the batch touches: open (with its latest opening) or
    /// closed.
    fn requests(&self) -> RequestRows<'a> {
        let mut last: HashMap<(&str, &str), Option<(i64, &str)>> = HashMap::new();
        let mut order = Vec::new();
        for plan in &self.plans {
            for change in &plan.requests {
                let (key, state) = match change {
                    RequestChange::Open {
                        request_id,
                        seq,
                        json,
                    } => (
                        (plan.session.as_str(), request_id.as_str()),
                        Some((*seq, json.as_str())),
                    ),
                    RequestChange::Resolve { request_id } => {
                        ((plan.session.as_str(), request_id.as_str()), None)
                    }
                };
                if last.insert(key, state).is_none() {
                    order.push(key);
                }
            }
        }
        let mut rows = RequestRows::default();
        for key in order {
            match last.get(&key).copied().flatten() {
                Some((seq, json)) => {
                    rows.open.0.push(key.0);
                    rows.open.1.push(key.1);
                    rows.open.2.push(seq);
                    rows.open.3.push(json);
                }
                None => {
                    rows.closed.0.push(key.0);
                    rows.closed.1.push(key.1);
                }
            }
        }
        rows
    }
}
