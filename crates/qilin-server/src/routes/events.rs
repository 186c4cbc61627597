//! A session's events: as JSON pages, and live as Server-Sent Events — one stream per session,
//! or one stream for several sessions (a browser allows six connections per origin, so a tab
//! follows every session it shows on one).
//!
//! Every event is committed before it is sent, with its `seq` as the SSE `id`; a client that
//! reconnects sends the last one it saw (`Last-Event-ID`, which browsers send by themselves)
//! and gets the events after it, stored then live, each exactly once. A stream of several
//! sessions has a cursor for an `id`: `ID:SEQ` for every session, joined by `,`.
//!
//! Each stream has a bounded buffer between the store and the client: a client that stops
//! reading while it is full is cut after a while (it reconnects and resumes where it was), so a
//! slow client never holds more than the buffer, and never slows a turn.
//!
//! An event goes out as the JSON the store keeps, framed once, never decoded and encoded again;
//! the messages waiting in the buffer leave in one write, so a client catching up on a long
//! history gets it in few large writes rather than one per event.

use crate::ServerState;
use crate::api::{EndReason, EventsQuery, MultiStreamQuery, SessionPath, StreamEnd, StreamQuery};
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream, SelectAll};
use qilin_store::{EventJson, StoreError};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::SendTimeoutError;
use tokio_util::sync::CancellationToken;

/// The most sessions one stream follows.
pub const MAX_STREAM_SESSIONS: usize = 64;

/// How a stream is paced.
#[derive(Debug, Clone, Copy)]
pub struct StreamOptions {
    /// Events buffered for a client at most.
    pub buffer: usize,
    /// How long a full buffer may wait for a client that does not read before the client is
    /// cut.
    pub stall: Duration,
    /// How often a quiet stream sends a `heartbeat` event.
    pub heartbeat: Duration,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            buffer: 1024,
            stall: Duration::from_secs(10),
            heartbeat: Duration::from_secs(15),
        }
    }
}

/// `GET /api/sessions/{id}/events`: a page of events after `after`.
pub async fn page(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> Result<Response, ApiError> {
    let limit = query.limit.unwrap_or(500);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("`limit` is {limit}; give 1 to 1000"),
        ));
    }
    let store = state.store();
    let events = store
        .read_json(&path.id, query.after.unwrap_or(0), limit as usize)
        .await?;
    let head_seq = store
        .session(&path.id)
        .await?
        .ok_or_else(|| ApiError::unknown_session(&path.id))?
        .head_seq;
    let more = events.last().is_some_and(|last| last.seq < head_seq);
    // An `EventPage` written around the JSON the store keeps: no event decoded and encoded
    // again (the OpenAPI document names the type).
    let mut body = String::with_capacity(
        events
            .iter()
            .map(|event| event.json.len() + 1)
            .sum::<usize>()
            + 48,
    );
    body.push_str("{\"events\":[");
    for (index, event) in events.iter().enumerate() {
        if index > 0 {
            body.push(',');
        }
        body.push_str(&event.json);
    }
    body.push_str(&format!("],\"headSeq\":{head_seq},\"more\":{more}}}"));
    Ok((
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response())
}

/// The position a reconnecting client sends.
fn last_event_id(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    headers
        .get("last-event-id")
        .map(|value| {
            value.to_str().map(str::trim).map_err(|_| {
                ApiError::bad_request("invalid_last_event_id", "`Last-Event-ID` is not text")
            })
        })
        .transpose()
}

/// `GET /api/sessions/{id}/events/stream`: the events after `after` (or `Last-Event-ID`),
/// stored then live, as Server-Sent Events.
pub async fn stream(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiQuery(query): ApiQuery<StreamQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let after = match last_event_id(&headers)? {
        Some(id) => id.parse::<u64>().map_err(|_| {
            ApiError::bad_request(
                "invalid_last_event_id",
                format!("`Last-Event-ID: {id}` is not an event's `seq`"),
            )
        })?,
        None => query.after.unwrap_or(0),
    };
    if state.store().session(&path.id).await?.is_none() {
        return Err(ApiError::unknown_session(&path.id));
    }
    state.watching(&path.id);
    let follow = state.store().follow_json(&path.id, after);
    let id = path.id.clone();
    let messages = follow.map(move |next| match next {
        Ok(event) => Message::Event(event_message(&event)),
        Err(err) => Message::Failed(error_message(&id, &err)),
    });
    let stopping = state.stopping();
    let ended = stopping.clone();
    let messages = messages.take_until(async move { stopping.cancelled().await });
    let session = path.id.clone();
    let end = move || end_message(Some(&session), ended_because(&ended));
    Ok(respond(
        state.stream_options(),
        messages.boxed(),
        end,
        Some(path.id),
    ))
}

/// `GET /api/stream`: the events of several sessions on one stream. Each message's `data` is
/// `{sessionId, event}` and its `id` the cursor of every session (`ID:SEQ,…`).
pub async fn multi(
    State(state): State<ServerState>,
    ApiQuery(query): ApiQuery<MultiStreamQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let cursor = match last_event_id(&headers)? {
        Some(id) => Cursor::parse(id)?,
        None => Cursor::parse(&query.sessions)?,
    };
    for (id, _) in &cursor.positions {
        if state.store().session(id).await?.is_none() {
            return Err(ApiError::unknown_session(id));
        }
    }
    let mut streams: SelectAll<BoxStream<'static, Tagged>> = SelectAll::new();
    for (index, (id, after)) in cursor.positions.iter().enumerate() {
        state.watching(id);
        // Each session's stream says when it ends, so the client learns it.
        let follow = state
            .store()
            .follow_json(id, *after)
            .map(move |next| (index, Some(next)))
            .chain(stream::once(async move { (index, None) }));
        streams.push(follow.boxed());
    }
    let stopping = state.stopping();
    let start = (streams, cursor, stopping.clone());
    let messages = stream::unfold(start, |(mut streams, mut cursor, stopping)| async move {
        let (index, next) = streams.next().await?;
        let id = cursor.positions[index].0.clone();
        let message = match next {
            Some(Ok(event)) => {
                cursor.positions[index].1 = event.seq;
                Message::Event(frame(
                    None,
                    Some(&cursor.to_string()),
                    &session_event_json(&id, &event),
                ))
            }
            Some(Err(err)) => Message::Event(error_message(&id, &err)),
            None => Message::Event(end_message(Some(&id), ended_because(&stopping))),
        };
        Some((message, (streams, cursor, stopping)))
    });
    let ended = stopping.clone();
    let messages = messages.take_until(async move { stopping.cancelled().await });
    let end = move || end_message(None, ended_because(&ended));
    Ok(respond(state.stream_options(), messages.boxed(), end, None))
}

/// Why a session's events ended: the server is stopping, or else the session was deleted
/// (the store ends a session's followers only then).
fn ended_because(stopping: &CancellationToken) -> EndReason {
    match stopping.is_cancelled() {
        true => EndReason::Stopping,
        false => EndReason::Deleted,
    }
}

/// The next event of the `usize`-th session of a stream, or its end (`None`).
type Tagged = (usize, Option<Result<EventJson, StoreError>>);

/// What the store's side of a stream hands the client's side: a framed message.
enum Message {
    /// Send it and go on.
    Event(Bytes),
    /// Send it and end the stream.
    Failed(Bytes),
}

/// The most bytes of waiting messages gathered into one write.
const WRITE_BYTES: usize = 64 * 1024;

/// Streams `messages` to the client through a bounded buffer, with heartbeats; `end()` is
/// sent when the messages end, and `end` with reason `lagging` (for `session`, on a stream of
/// one) after what the buffer holds when the client is cut for not reading.
fn respond(
    options: StreamOptions,
    mut messages: BoxStream<'static, Message>,
    end: impl FnOnce() -> Bytes + Send + 'static,
    session: Option<String>,
) -> Response {
    let (sender, receiver) = mpsc::channel::<Bytes>(options.buffer.max(1));
    let cut = Arc::new(AtomicBool::new(false));
    let lagging = Arc::clone(&cut);
    let mut end = Some(end);
    tokio::spawn(async move {
        loop {
            let next = tokio::select! {
                next = messages.next() => next,
                () = sender.closed() => return,
            };
            let (message, last) = match next {
                Some(Message::Event(event)) => (event, false),
                Some(Message::Failed(event)) => (event, true),
                None => (end.take().map_or_else(Bytes::new, |end| end()), true),
            };
            match sender.send_timeout(message, options.stall).await {
                Ok(()) if !last => {}
                Ok(()) | Err(SendTimeoutError::Closed(_)) => return,
                Err(SendTimeoutError::Timeout(_)) => {
                    tracing::info!("an event stream's client stopped reading; cut so it resumes");
                    cut.store(true, Ordering::Release);
                    return;
                }
            }
        }
    });
    let heartbeat = frame(Some("heartbeat"), None, "{}");
    // Once the buffer is drained, a client that was cut learns why, and resumes.
    let body = stream::unfold(Some(receiver), move |receiver| {
        let heartbeat = heartbeat.clone();
        let lagging = Arc::clone(&lagging);
        let session = session.clone();
        async move {
            let mut receiver = receiver?;
            let first = match tokio::time::timeout(options.heartbeat, receiver.recv()).await {
                Ok(Some(first)) => first,
                Ok(None) if lagging.load(Ordering::Acquire) => {
                    let end = end_message(session.as_deref(), EndReason::Lagging);
                    return Some((Ok(end), None));
                }
                Ok(None) => return None,
                Err(_quiet) => return Some((Ok::<_, Infallible>(heartbeat), Some(receiver))),
            };
            Some((Ok(gather(first, &mut receiver)), Some(receiver)))
        }
    });
    let mut response = Body::from_stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `first` and the messages waiting behind it, up to [`WRITE_BYTES`], as one write.
fn gather(first: Bytes, receiver: &mut mpsc::Receiver<Bytes>) -> Bytes {
    let Ok(second) = receiver.try_recv() else {
        return first;
    };
    let mut write = Vec::with_capacity(WRITE_BYTES.max(first.len() + second.len()));
    write.extend_from_slice(&first);
    write.extend_from_slice(&second);
    while write.len() < WRITE_BYTES {
        match receiver.try_recv() {
            Ok(next) => write.extend_from_slice(&next),
            Err(_) => break,
        }
    }
    Bytes::from(write)
}

/// One Server-Sent Events message: its type (`message` when `None`), its id, and `data`, one
/// `data:` line per line of it.
fn frame(event: Option<&str>, id: Option<&str>, data: &str) -> Bytes {
    let mut message = String::with_capacity(data.len() + 64);
    if let Some(event) = event {
        message.push_str("event: ");
        message.push_str(event);
        message.push('\n');
    }
    if let Some(id) = id {
        message.push_str("id: ");
        message.push_str(id);
        message.push('\n');
    }
    for line in data.split(['\r', '\n']) {
        message.push_str("data: ");
        message.push_str(line);
        message.push('\n');
    }
    message.push('\n');
    Bytes::from(message)
}

/// `data` as JSON in a message of type `event`.
fn json_frame<T: serde::Serialize>(event: &str, data: &T) -> Bytes {
    match serde_json::to_string(data) {
        Ok(json) => frame(Some(event), None, &json),
        Err(err) => frame(
            Some("error"),
            None,
            &format!("{{\"message\":\"a message could not be written: {err}\"}}"),
        ),
    }
}

/// An event of one session's stream: its `seq` as the id, the stored event as the data.
fn event_message(event: &EventJson) -> Bytes {
    frame(None, Some(&event.seq.to_string()), &event.json)
}

/// The data of a stream of several sessions: a [`SessionEvent`](crate::SessionEvent) written around the stored
/// event.
fn session_event_json(session: &str, event: &EventJson) -> String {
    let id = serde_json::Value::from(session);
    format!("{{\"sessionId\":{id},\"event\":{}}}", event.json)
}

/// The stream could not go on: the client should reconnect from the last id it received.
fn error_message(session: &str, err: &StoreError) -> Bytes {
    json_frame(
        "error",
        &serde_json::json!({
            "sessionId": session,
            "message": format!("the events cannot be read: {err}; reconnect to resume"),
        }),
    )
}

/// A stream, or one session's events on it, ended, and why.
fn end_message(session: Option<&str>, reason: EndReason) -> Bytes {
    json_frame(
        "end",
        &StreamEnd {
            session_id: session.map(str::to_string),
            reason,
        },
    )
}

/// Where a stream of several sessions stands in each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// Each session and the `seq` of the last event sent of it.
    pub positions: Vec<(String, u64)>,
}

impl Cursor {
    /// Reads `ID:SEQ,ID:SEQ`.
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let invalid = |what: String| {
            ApiError::bad_request(
                "invalid_cursor",
                format!("{what}; a stream's cursor is `ID:SEQ` items joined by `,` (`a1:0,b2:57`)"),
            )
        };
        let mut positions: Vec<(String, u64)> = Vec::new();
        for item in text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
        {
            let (id, seq) = item
                .rsplit_once(':')
                .ok_or_else(|| invalid(format!("`{item}` has no `:SEQ`")))?;
            let valid_id = !id.is_empty()
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !valid_id {
                return Err(invalid(format!(
                    "`{id}` is not a session id this stream can follow (letters, digits, `-`, `_`, `.`)"
                )));
            }
            let seq = seq
                .parse::<u64>()
                .map_err(|_| invalid(format!("`{seq}` is not a `seq`")))?;
            if positions.iter().any(|(known, _)| known == id) {
                return Err(invalid(format!("session `{id}` is named twice")));
            }
            positions.push((id.to_string(), seq));
        }
        if positions.is_empty() {
            return Err(invalid("no session is named".into()));
        }
        if positions.len() > MAX_STREAM_SESSIONS {
            return Err(invalid(format!(
                "{} sessions are named; one stream follows at most {MAX_STREAM_SESSIONS}",
                positions.len()
            )));
        }
        Ok(Cursor { positions })
    }
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (index, (id, seq)) in self.positions.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{id}:{seq}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_carries_each_line_of_its_data_on_a_data_line() {
        let framed = frame(Some("error"), Some("7"), "{\"a\":\r\n1,\n\"b\":2}");
        assert_eq!(
            framed,
            "event: error\nid: 7\ndata: {\"a\":\ndata: \ndata: 1,\ndata: \"b\":2}\n\n"
        );
        assert_eq!(frame(None, None, "{}"), "data: {}\n\n");
    }

    #[test]
    fn a_stream_of_several_sessions_wraps_the_stored_event_as_its_type_serialises() {
        let event = EventJson {
            seq: 3,
            json: "{\"seq\":3}".into(),
        };
        let wrapped = session_event_json("s\"1", &event);
        assert_eq!(wrapped, "{\"sessionId\":\"s\\\"1\",\"event\":{\"seq\":3}}");
        let value: serde_json::Value = serde_json::from_str(&wrapped).unwrap();
        assert_eq!(value["sessionId"], "s\"1");
    }

    #[tokio::test]
    async fn waiting_messages_leave_in_one_write_up_to_its_size() {
        let (sender, mut receiver) = mpsc::channel::<Bytes>(8);
        for part in ["a", "b", "c"] {
            sender.send(Bytes::from(part)).await.unwrap();
        }
        let first = receiver.recv().await.unwrap();
        assert_eq!(gather(first, &mut receiver), "abc");
        let big = Bytes::from(vec![b'x'; WRITE_BYTES]);
        sender.send(big.clone()).await.unwrap();
        sender.send(Bytes::from("y")).await.unwrap();
        assert_eq!(
            gather(Bytes::from("z"), &mut receiver).len(),
            WRITE_BYTES + 1
        );
        assert_eq!(receiver.recv().await.unwrap(), "y");
    }
}
