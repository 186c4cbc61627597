//! The shapes the API takes and gives: the bodies and replies are `qilin_protocol::api`'s (so
//! the web client's TypeScript is generated from them); the path parameters are the server's.

pub use qilin_protocol::api::{
    AuthRequest, CreateSession, EndReason, EventPage, EventsQuery, FileQuery, Interrupted,
    ListSessions, MultiStreamQuery, OpenRequests, RequestAnswer, RequestResolved, SearchSessions,
    ServerInfo, SessionEvent, SessionView, Snapshot, SnapshotQuery, StartTurn, StreamEnd,
    StreamQuery, TextFile, TurnAccepted, UpdateSession,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// The most characters of a client-chosen id (a `clientTurnId`, a `clientId`).
pub const MAX_CLIENT_ID: usize = 128;

/// A session's id in a path.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionPath {
    /// The session's id.
    pub id: String,
}

/// A schedule's id in a path.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchedulePath {
    /// The session's id.
    pub id: String,
    /// The schedule's id.
    pub schedule_id: String,
}

/// A loop's id in a path.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoopPath {
    /// The session's id.
    pub id: String,
    /// The loop's id (`loop.started`'s `loop.loopId`).
    pub loop_id: String,
}

/// A reviewed call's id in a path.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewPath {
    /// The session's id.
    pub id: String,
    /// The call's id (`tool.reviewed`'s `callId`).
    pub call_id: String,
}

/// A request's id in a path.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestPath {
    /// The session's id.
    pub id: String,
    /// The request's id (`request.opened`'s `requestId`).
    pub request_id: String,
}
