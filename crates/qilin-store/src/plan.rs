//! [`AppendPlan`]: an append turned into rows before it reaches a database — the events
//! encoded, the gapless order checked within the batch, and what they change in the derived
//! rows (title, status, turns, last activity, open requests) and in the search index.

use crate::search::IndexPlan;
use crate::{EventJson, SessionStatus, StoreError, title_from_prompt};
use qilin_protocol::{Event, EventBody};

/// One event as stored: its position, time, type tag and JSON.
pub(crate) struct EventRow {
    /// The event's `seq`.
    pub seq: i64,
    /// The event's time.
    pub time: String,
    /// The event's `type` tag.
    pub kind: &'static str,
    /// The whole event as JSON.
    pub json: String,
}

/// A change an append makes to a session's open requests, in event order.
pub(crate) enum RequestChange {
    /// A `request.opened`: the request row to insert.
    Open {
        /// The request's id.
        request_id: String,
        /// The `seq` of its event, which orders open requests.
        seq: i64,
        /// The `request.opened` payload as JSON.
        json: String,
    },
    /// A `request.resolved`: the request row to remove.
    Resolve {
        /// The request's id.
        request_id: String,
    },
}

/// What one append writes.
pub(crate) struct AppendPlan {
    /// The session.
    pub session: String,
    /// The events as rows, consecutive.
    pub rows: Vec<EventRow>,
    /// The `seq` of the last event: the new head.
    pub last_seq: u64,
    /// The time of the last event: the session's new last activity.
    pub last_time: String,
    /// Turns the append starts.
    pub turns_started: i64,
    /// The title of the first turn's prompt, taken when the session has none yet.
    pub title: Option<String>,
    /// The status after the append, when one of its events changes it.
    pub status: Option<SessionStatus>,
    /// The open requests it adds and removes, in order.
    pub requests: Vec<RequestChange>,
    /// What it adds to the search index.
    pub index: IndexPlan,
}

impl AppendPlan {
    /// The events as the JSON stored, for the followers.
    pub(crate) fn into_json(self) -> Vec<EventJson> {
        self.rows
            .into_iter()
            .map(|row| EventJson {
                seq: u64::try_from(row.seq).unwrap_or(0),
                json: row.json.into(),
            })
            .collect()
    }

    /// Plans the append of `events` to `session`: `None` for no events, an error when they are
    /// not consecutive (the head check itself is the database's, in the transaction).
    pub(crate) fn new(session: &str, events: &[Event]) -> Result<Option<Self>, StoreError> {
        let (Some(first), Some(last)) = (events.first(), events.last()) else {
            return Ok(None);
        };
        // Past the largest integer a database stores, nothing can continue a log.
        sql_seq(session, first.seq.max(last.seq))?;
        for (expected, event) in (first.seq..).zip(events) {
            if event.seq != expected {
                return Err(StoreError::SeqConflict {
                    session: session.to_string(),
                    expected,
                    got: event.seq,
                });
            }
        }
        let mut plan = AppendPlan {
            session: session.to_string(),
            rows: Vec::with_capacity(events.len()),
            last_seq: last.seq,
            last_time: last.time.clone(),
            turns_started: 0,
            title: None,
            status: None,
            requests: Vec::new(),
            index: IndexPlan::default(),
        };
        for event in events {
            let seq = sql_seq(session, event.seq)?;
            match &event.body {
                EventBody::TurnStarted { prompt, .. } => {
                    plan.turns_started += 1;
                    plan.status = Some(SessionStatus::Running);
                    if plan.title.is_none() {
                        plan.title = Some(title_from_prompt(prompt));
                    }
                }
                EventBody::TurnFinished { .. } => plan.status = Some(SessionStatus::Idle),
                EventBody::RequestOpened(opened) => plan.requests.push(RequestChange::Open {
                    request_id: opened.request_id.clone(),
                    seq,
                    json: encode(session, opened)?,
                }),
                EventBody::RequestResolved(resolved) => {
                    plan.requests.push(RequestChange::Resolve {
                        request_id: resolved.request_id.clone(),
                    });
                }
                _ => {}
            }
            plan.index.add(seq, event, plan.turns_started);
            plan.rows.push(EventRow {
                seq,
                time: event.time.clone(),
                kind: event.body.kind(),
                json: encode(session, event)?,
            });
        }
        Ok(Some(plan))
    }

    /// The `seq` the first event must continue from: the head before the append.
    pub(crate) fn first_seq(&self) -> u64 {
        self.last_seq + 1 - self.rows.len() as u64
    }
}

/// A `seq` as a database integer; one too large for it cannot continue any log.
pub(crate) fn sql_seq(session: &str, seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq).map_err(|_| StoreError::SeqConflict {
        session: session.to_string(),
        expected: 1,
        got: seq,
    })
}

/// A value as stored JSON.
pub(crate) fn encode(session: &str, value: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|err| StoreError::Corrupt {
        session: session.to_string(),
        message: format!("an event could not be encoded: {err}"),
    })
}

/// Reads a stored event back.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    session: &str,
    json: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(json).map_err(|err| StoreError::Corrupt {
        session: session.to_string(),
        message: err.to_string(),
    })
}

/// The stored name of a status.
pub(crate) fn status_name(status: SessionStatus) -> &'static str {
    match status {
        SessionStatus::Idle => "idle",
        SessionStatus::Running => "running",
    }
}

/// A status read back from its stored name.
pub(crate) fn status_from_name(session: &str, name: &str) -> Result<SessionStatus, StoreError> {
    match name {
        "idle" => Ok(SessionStatus::Idle),
        "running" => Ok(SessionStatus::Running),
        other => Err(StoreError::Corrupt {
            session: session.to_string(),
            message: format!("unknown status `{other}`"),
        }),
    }
}
