//! What the session query tools return: `session_search` (ranked hits over every recorded
//! session's text), `session_events` (a page of one session's events in a compact form) and
//! `session_trajectory` (a session's call tree as indented nodes). The same [`SearchHit`] is
//! what `GET /api/search` pages ([`crate::api::SearchPage`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which part of an event a search hit is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum HitField {
    /// A user prompt (`turn.started`).
    Prompt,
    /// The model's text of one step (its `step.text.delta` events together).
    Text,
    /// A call's arguments (`tool.start`).
    Arguments,
    /// What a call returned (`tool.result` with status `ok`).
    Result,
    /// Why a call or a turn failed (`tool.result` not `ok`, `turn.finished` with a message).
    Error,
    /// A person's answer to a request (`request.resolved`: answers, a refusal's reason).
    Answer,
    /// A call's tool name and header (`tool.start`'s tool and presentation).
    Tool,
}

impl HitField {
    /// The field's wire name (`prompt`, `arguments`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            HitField::Prompt => "prompt",
            HitField::Text => "text",
            HitField::Arguments => "arguments",
            HitField::Result => "result",
            HitField::Error => "error",
            HitField::Answer => "answer",
            HitField::Tool => "tool",
        }
    }

    /// The field named `name` (its wire name), if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            HitField::Prompt,
            HitField::Text,
            HitField::Arguments,
            HitField::Result,
            HitField::Error,
            HitField::Answer,
            HitField::Tool,
        ]
        .into_iter()
        .find(|field| field.as_str() == name)
    }
}

/// One place a search found its words: the event, where in the session it sits, and a
/// snippet of its text with each match wrapped as `«match»`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The session's id.
    pub session: String,
    /// The session's title; empty when it has none yet.
    pub title: String,
    /// The `seq` of the event the hit is in (of a step's text: its first text event).
    #[ts(type = "number")]
    pub seq: u64,
    /// The turn the event belongs to, counted from 1; null before the first turn.
    pub turn: Option<u32>,
    /// The call the event belongs to, when it is a call's (arguments, result, answer).
    pub call_id: Option<String>,
    /// That call's tool.
    pub tool: Option<String>,
    /// Which part of the event matched.
    pub field: HitField,
    /// Up to a few dozen words of the matched text around the match, each match as `«…»`,
    /// cut text marked `…`.
    pub snippet: String,
    /// When the event happened, RFC 3339 UTC.
    pub time: String,
    /// How well it matches; higher is better. An exact phrase scores above its words apart.
    pub score: f64,
}

/// What `session_search` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionSearchOutput {
    /// The query as searched.
    pub query: String,
    /// The hits, best first.
    pub hits: Vec<SearchHit>,
    /// Whether more hits matched than were returned (raise `limit`, or narrow the query).
    pub truncated: bool,
}

/// One event of a page `session_events` returns, in a compact form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct EventLine {
    /// The event's `seq`.
    #[ts(type = "number")]
    pub seq: u64,
    /// When it happened, RFC 3339 UTC.
    pub time: String,
    /// The event's `type` (`turn.started`, `tool.start`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// The turn it belongs to, counted from 1; null before the first turn.
    pub turn: Option<u32>,
    /// The call it belongs to, for a call's events.
    pub call_id: Option<String>,
    /// The event in a line or a few: the prompt, the text, the call and its arguments, the
    /// result's first lines, shortened.
    pub text: String,
}

/// What `session_events` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionEventsOutput {
    /// The session's id.
    pub session: String,
    /// The session's title; empty when it has none yet.
    pub title: String,
    /// The events, in order (consecutive model text of a step as one line).
    pub events: Vec<EventLine>,
    /// Pass as `after` for the next page; null when the page reaches the session's end.
    #[ts(type = "number | null")]
    pub next: Option<u64>,
}

/// What a trajectory node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum TrajectoryKind {
    /// A turn: its prompt.
    Turn,
    /// A call, direct or made from code.
    Call,
    /// The model's text.
    Text,
    /// A request a call opened (an approval, a question) and its answer.
    Request,
}

/// Where a trajectory node's call (or turn) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum TrajectoryStatus {
    /// Ended well.
    Ok,
    /// Failed.
    Error,
    /// Refused by review or by a person.
    Denied,
    /// Cancelled, or its process ended.
    Interrupted,
    /// Not ended (yet).
    Running,
}

/// One line of a trajectory: a turn, a call, some text or a request, indented by `depth`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TrajectoryNode {
    /// The indentation: 0 for a turn, one more than its parent for everything under it (a
    /// code-mode call sits one deeper than the `run_code` call that made it).
    pub depth: u32,
    /// What the node stands for.
    pub kind: TrajectoryKind,
    /// The turn it belongs to, counted from 1.
    pub turn: u32,
    /// The call, for a call or a request.
    pub call_id: Option<String>,
    /// The call's tool, for a call or a request.
    pub tool: Option<String>,
    /// Where the call or turn stands; null for text.
    pub status: Option<TrajectoryStatus>,
    /// The node in one line (a prompt, a call's header, text), shortened.
    pub summary: String,
    /// When it started, RFC 3339 UTC, when known.
    pub started_at: Option<String>,
    /// How long it ran, in milliseconds, once it ended.
    #[ts(type = "number | null")]
    pub duration_ms: Option<u64>,
}

/// What `session_trajectory` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionTrajectoryOutput {
    /// The session's id.
    pub session: String,
    /// The session's title; empty when it has none yet.
    pub title: String,
    /// The turn asked for (counted from 1), if one was.
    pub turn: Option<u32>,
    /// The call asked for, if one was.
    pub call: Option<String>,
    /// The nodes, in order, each under the one before it with a smaller depth.
    pub nodes: Vec<TrajectoryNode>,
    /// Whether nodes past the cap were left out (the spill file has them all).
    pub truncated: bool,
    /// The file holding the whole trajectory as text, when it was cut.
    pub spill: Option<String>,
}
