//! The HTTP API's request and reply shapes (`qilin serve`), beside the events: generated into
//! TypeScript with them, so the web client speaks the server's own types.
//!
//! Fields a request may leave out are optional in TypeScript; fields a reply always carries
//! (`null` when empty) are required there.

use crate::goals::GoalRecord;
use crate::sessions::SearchHit;
use crate::{
    Answer, CallStatus, CompactionNode, Event, RequestOpenedEvent, RequestResolution, SessionGrant,
    TurnNode,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use ts_rs::TS;

/// The pattern a text field that must not be blank matches: one character outside Unicode's
/// `White_Space` set, which is exactly what Rust's `str::trim` removes and so what the server
/// refuses as blank. Spelled out rather than `\S`, whose meaning differs between regex engines
/// (ECMAScript's leaves out U+0085 and adds U+FEFF).
pub const NOT_BLANK: &str =
    r"[^\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]";

/// Whether a turn is running in a session, as its events say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// No turn is running.
    Idle,
    /// A turn started and has not finished.
    Running,
}

/// A session as listed: what it runs and where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session's id.
    pub id: String,
    /// The workspace folder, absolute.
    pub workspace: String,
    /// The agent's name.
    pub agent: String,
    /// The agent file, when there is one.
    pub agent_file: Option<String>,
    /// The model, as `provider:name`.
    pub model: String,
    /// The title: the first prompt (its first line, shortened) until someone renames it.
    pub title: Option<String>,
    /// When it was created, RFC 3339 UTC.
    pub created_at: String,
    /// The time of its latest event (its creation before any), RFC 3339 UTC.
    pub last_activity: String,
    /// Whether a turn is running.
    pub status: SessionStatus,
    /// Turns started so far.
    pub turns: u32,
    /// The `seq` of its latest event; 0 before any.
    #[ts(type = "number")]
    pub head_seq: u64,
    /// For a child session (a subagent): the session that started it; null for a top-level
    /// session.
    #[serde(default)]
    pub parent_session_id: Option<String>,
    /// For a child session: the parent's `agent` call that started it; null for a top-level
    /// session.
    #[serde(default)]
    pub parent_call_id: Option<String>,
    /// How many children (subagents and teammates, of any status) it started.
    #[serde(default)]
    pub child_count: u32,
}

/// One page of sessions (`GET /api/sessions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionPage {
    /// The sessions, newest activity first.
    pub sessions: Vec<SessionInfo>,
    /// The cursor of the next page, when there is one.
    pub next: Option<String>,
}

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// A stable code a client can branch on (`turn_running`, `unknown_session`, …).
    pub code: String,
    /// What is wrong and what is expected, for a person.
    pub message: String,
    /// The turn concerned (`turn_running`: the one running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<String>,
    /// Who answered a request first (`already_answered`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resolved_by: Option<String>,
    /// The server process that runs the session (`owned_elsewhere`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub owner: Option<String>,
}

/// `POST /api/sessions`: a new session.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSession {
    /// The folder the tools work in, relative to the server's workspace or absolute; the
    /// server's workspace when omitted. It must lie under the server's workspace or a folder
    /// the server was started with `--allow-root` (links resolved), else 403 `outside_roots`.
    #[serde(default)]
    #[ts(optional)]
    pub workspace: Option<String>,
    /// The `.agent` file, relative to the workspace or absolute; the server's agent when
    /// omitted. It must lie under the same folders as `workspace`.
    #[serde(default)]
    #[ts(optional)]
    pub agent_file: Option<String>,
    /// The model (`openai:NAME`, `anthropic:NAME`, `scripted:FILE`); the server's, else the
    /// agent file's, when omitted. A `scripted:` file must lie under the same folders as
    /// `workspace`.
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<String>,
    /// A title (1 to 200 characters, not only spaces); the first prompt gives one when
    /// omitted.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200), regex(pattern = NOT_BLANK))]
    #[ts(optional)]
    pub title: Option<String>,
}

/// `PATCH /api/sessions/{id}`: what to change.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSession {
    /// The new title (1 to 200 characters, not only spaces).
    #[schemars(length(min = 1, max = 200), regex(pattern = NOT_BLANK))]
    pub title: String,
}

/// `GET /api/sessions`: which page.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListSessions {
    /// The most sessions on the page (1 to 500, default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    #[ts(optional)]
    pub limit: Option<u32>,
    /// The `next` of the previous page.
    #[serde(default)]
    #[schemars(regex(pattern = r"\|"))]
    #[ts(optional)]
    pub after: Option<String>,
    /// Only sessions whose title contains this text (case-insensitive).
    #[serde(default)]
    #[ts(optional)]
    pub q: Option<String>,
    /// Only sessions of this workspace (its absolute path).
    #[serde(default)]
    #[ts(optional)]
    pub workspace: Option<String>,
    /// Only the children (subagent sessions) of this session; without it, only top-level
    /// sessions are listed.
    #[serde(default)]
    #[ts(optional)]
    pub parent: Option<String>,
}

/// A session and where it stands.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    /// What the store keeps about it: title, status, turns, last activity, `headSeq`.
    #[serde(flatten)]
    pub info: SessionInfo,
    /// The turn running now, if one is.
    #[serde(default)]
    pub active_turn: Option<String>,
    /// The requests waiting for an answer, in the order opened.
    pub open_requests: Vec<RequestOpenedEvent>,
    /// The sessions it started (subagents), oldest first.
    #[serde(default)]
    pub children: Vec<SessionInfo>,
    /// Whether this server process runs the session now.
    pub hosted: bool,
    /// The session's latest goal (settled ones included), folded from its goal events; null
    /// when it never had one.
    #[serde(default)]
    pub goal: Option<GoalRecord>,
    /// The home folder of the user the server runs as (absolute, POSIX), when known: a client
    /// writes a path under it as `~/…` once it is not under the session's `workspace` (the
    /// folder its tools work in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub home: Option<String>,
}

/// `POST /api/sessions/{id}/turns`: a prompt.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartTurn {
    /// What to ask the agent (not only spaces).
    #[schemars(length(min = 1), regex(pattern = NOT_BLANK))]
    pub prompt: String,
    /// An id the client chooses for this turn (at most 128 characters); sending the same one
    /// again never starts a second turn, so a request can be retried safely.
    #[serde(default)]
    #[schemars(
        length(min = 1, max = 128),
        regex(pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$")
    )]
    #[ts(optional)]
    pub client_turn_id: Option<String>,
}

/// The answer to a started turn.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnAccepted {
    /// The turn's id (`turn.started`'s `turnId`).
    pub turn_id: String,
    /// The client's id for it, when it gave one.
    #[serde(default)]
    pub client_turn_id: Option<String>,
    /// True when this `clientTurnId` had started the turn already: nothing new was started.
    pub repeated: bool,
}

/// The answer to an interrupt.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Interrupted {
    /// True when a running turn was told to stop; false when none was running.
    pub interrupted: bool,
}

/// `GET /api/sessions/{id}/events`: which events.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Events after this `seq` (0, the default, for all).
    #[serde(default)]
    #[schemars(range(min = 0, max = u64::MAX))]
    #[ts(optional, type = "number")]
    pub after: Option<u64>,
    /// The most events on the page (1 to 1000, default 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// A page of a session's events.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct EventPage {
    /// The events, in order.
    pub events: Vec<Event>,
    /// The session's head when the page was read.
    #[ts(type = "number")]
    pub head_seq: u64,
    /// Whether more events follow the page (ask again after its last `seq`).
    pub more: bool,
}

/// `GET /api/sessions/{id}/events/stream`: where to start.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct StreamQuery {
    /// Stream the events after this `seq`; a `Last-Event-ID` header wins over it.
    #[serde(default)]
    #[schemars(range(min = 0, max = u64::MAX))]
    #[ts(optional, type = "number")]
    pub after: Option<u64>,
}

/// `GET /api/stream`: the sessions of one stream.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct MultiStreamQuery {
    /// The sessions and where to start in each: `ID:SEQ` items joined by `,`
    /// (`a1:0,b2:57`); a `Last-Event-ID` header (the `id` of the last event received) wins.
    pub sessions: String,
}

/// One event of a stream of several sessions (the `data` of each SSE message).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    /// The session it belongs to.
    pub session_id: String,
    /// The event.
    pub event: Event,
}

/// `GET /api/sessions/{id}/snapshot`: which turns.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct SnapshotQuery {
    /// The most turns to return (1 to 200, default 20): the latest ones before `before`.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    #[ts(optional)]
    pub turns: Option<u32>,
    /// Return turns before this index (0 is the first turn); the latest when omitted.
    #[serde(default)]
    #[schemars(range(min = 0, max = u32::MAX))]
    #[ts(optional)]
    pub before: Option<u32>,
}

/// The call tree of a session's latest turns, folded from its events up to `headSeq`.
#[derive(Debug, Clone, Serialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// The `seq` of the last event folded in: follow the events after it.
    #[ts(type = "number")]
    pub head_seq: u64,
    /// The number of turns in the session.
    pub total_turns: u32,
    /// The index of the first turn returned (0 is the session's first turn).
    pub first_turn: u32,
    /// The turns, oldest first.
    pub turns: Vec<TurnNode>,
    /// Every compaction of the session, oldest first, whichever turns are returned: each
    /// `afterTurns` counts from the session's first turn.
    pub compactions: Vec<CompactionNode>,
    /// Raw argument text of calls still preparing, by call id.
    pub preparing_arguments: BTreeMap<String, String>,
    /// The turn running now, if one is.
    #[serde(default)]
    pub active_turn: Option<String>,
}

/// The requests of a session waiting for an answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct OpenRequests {
    /// The requests, in the order opened.
    pub requests: Vec<RequestOpenedEvent>,
}

/// `POST /api/sessions/{id}/requests/{requestId}`: an answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "reply", rename_all = "snake_case", deny_unknown_fields)]
pub enum RequestAnswer {
    /// Allow the call (an approval).
    Approve {
        /// Who answers (a tab's id), kept in the log as `web:ID`.
        #[serde(default, rename = "clientId")]
        #[schemars(
            length(min = 1, max = 128),
            regex(pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$")
        )]
        #[ts(optional)]
        client_id: Option<String>,
    },
    /// Allow the call and, for the rest of the session, every call the grant covers (an
    /// approval): a tool, or a `bash` command prefix such as `git push`.
    ApproveForSession {
        /// What is allowed from now on; it must cover the call asked about.
        grant: SessionGrant,
        /// Who answers (a tab's id), kept in the log as `web:ID`.
        #[serde(default, rename = "clientId")]
        #[schemars(
            length(min = 1, max = 128),
            regex(pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$")
        )]
        #[ts(optional)]
        client_id: Option<String>,
    },
    /// Refuse the call (an approval); the reason is told to the model.
    Deny {
        /// Why, in the person's words.
        #[serde(default)]
        #[ts(optional)]
        reason: Option<String>,
        /// Who answers (a tab's id), kept in the log as `web:ID`.
        #[serde(default, rename = "clientId")]
        #[schemars(
            length(min = 1, max = 128),
            regex(pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$")
        )]
        #[ts(optional)]
        client_id: Option<String>,
    },
    /// Answer the questions (a question): one answer per question.
    Answer {
        /// The answers, paired with the questions by id.
        answers: Vec<Answer>,
        /// Who answers (a tab's id), kept in the log as `web:ID`.
        #[serde(default, rename = "clientId")]
        #[schemars(
            length(min = 1, max = 128),
            regex(pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$")
        )]
        #[ts(optional)]
        client_id: Option<String>,
    },
    /// Dismiss the questions without answering (a question).
    Dismiss {
        /// Who answers (a tab's id), kept in the log as `web:ID`.
        #[serde(default, rename = "clientId")]
        #[schemars(
            length(min = 1, max = 128),
            regex(pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$")
        )]
        #[ts(optional)]
        client_id: Option<String>,
    },
}

impl RequestAnswer {
    /// The client's id, if it gave one.
    pub fn client_id(&self) -> Option<&str> {
        match self {
            RequestAnswer::Approve { client_id }
            | RequestAnswer::ApproveForSession { client_id, .. }
            | RequestAnswer::Deny { client_id, .. }
            | RequestAnswer::Answer { client_id, .. }
            | RequestAnswer::Dismiss { client_id } => client_id.as_deref(),
        }
    }
}

/// How an answered request ended.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct RequestResolved {
    /// The request.
    pub request_id: String,
    /// The answer as recorded.
    pub resolution: RequestResolution,
    /// Who answered, as recorded.
    pub resolved_by: String,
}

/// `GET /api/sessions/{id}/files/text` and `…/files/image`: which file.
#[derive(Debug, Clone, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct FileQuery {
    /// The file, relative to the session's workspace (an absolute path must lie inside it);
    /// not only spaces.
    #[schemars(length(min = 1), regex(pattern = NOT_BLANK))]
    pub path: String,
}

/// A text file of the session's workspace, whole.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TextFile {
    /// The file's canonical path relative to the workspace.
    pub path: String,
    /// Its text.
    pub text: String,
    /// Its size in bytes.
    #[ts(type = "number")]
    pub size: u64,
    /// Its number of lines.
    #[ts(type = "number")]
    pub total_lines: u64,
    /// The highlighter's language name, from the extension (`text` when unknown).
    pub language: String,
}

/// `POST /api/auth`: the token to trade for the cookie.
#[derive(Debug, Clone, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct AuthRequest {
    /// The token from the URL's fragment (`#token=…`).
    pub token: String,
}

/// `GET /api/info`: what this server runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// Qilin's version.
    pub version: String,
    /// The event vocabulary's version (`session.started`'s `protocolVersion`).
    pub protocol_version: u32,
    /// The workspace new sessions work in unless told otherwise.
    pub workspace: String,
    /// The agent file new sessions run unless told otherwise.
    #[serde(default)]
    pub agent_file: Option<String>,
    /// The model new sessions use unless told otherwise.
    #[serde(default)]
    pub model: Option<String>,
    /// The demo session, under `qilin serve --demo`.
    #[serde(default)]
    pub demo_session: Option<String>,
    /// Whether the page's files are built into this binary.
    pub web_client: bool,
}

/// Why an event stream ends: the `reason` of its last message, `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The session was deleted: nothing more will come; do not reconnect.
    Deleted,
    /// The server is stopping: reconnect after a pause, from the last `id` received.
    Stopping,
    /// The client read more slowly than the session's events came and its buffer filled:
    /// reconnect now, from the last `id` received; nothing was lost.
    Lagging,
}

/// The `data` of an event stream's `end` message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct StreamEnd {
    /// The session whose events end. A stream of several sessions ends each deleted session
    /// on its own, and the stream as a whole (`stopping`, `lagging`) with this null.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Why.
    pub reason: EndReason,
}

/// `GET /api/search`: what to find in the sessions' recorded text, where, and which page.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchSessions {
    /// The words to find (1 to 1000 characters, not only spaces): every word must occur in
    /// a hit; the words as one phrase rank first. Taken literally: quotes, `*`, `-` and the
    /// like are no operators.
    #[schemars(length(min = 1, max = 1000), regex(pattern = NOT_BLANK))]
    pub q: String,
    /// Only these sessions: their ids joined by `,`.
    #[serde(default)]
    #[ts(optional)]
    pub sessions: Option<String>,
    /// Only sessions of this agent (its name).
    #[serde(default)]
    #[ts(optional)]
    pub agent: Option<String>,
    /// Only hits in calls of this tool (its wire name).
    #[serde(default)]
    #[ts(optional)]
    pub tool: Option<String>,
    /// Only hits in calls that ended so.
    #[serde(default)]
    #[ts(optional)]
    pub status: Option<CallStatus>,
    /// Only events at or after this time: RFC 3339 (`2026-12-02T05:00:00Z`) or a date
    /// (`2026-12-02`, midnight UTC).
    #[serde(default)]
    #[ts(optional)]
    pub after: Option<String>,
    /// Only events before this time: RFC 3339 or a date, as `after`.
    #[serde(default)]
    #[ts(optional)]
    pub before: Option<String>,
    /// The most hits on the page (1 to 100, default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    #[ts(optional)]
    pub limit: Option<u32>,
    /// The `next` of the previous page.
    #[serde(default)]
    #[ts(optional)]
    pub cursor: Option<String>,
}

/// One page of search hits (`GET /api/search`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchPage {
    /// The hits, best first.
    pub hits: Vec<SearchHit>,
    /// The cursor of the next page, when more hits follow.
    pub next: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::NOT_BLANK;

    #[test]
    fn not_blank_refuses_exactly_what_trim_removes() {
        let pattern = regex::Regex::new(&format!("^{NOT_BLANK}$")).expect("the pattern compiles");
        let mismatches: Vec<char> = (0..=char::MAX as u32)
            .filter_map(char::from_u32)
            .filter(|c| pattern.is_match(&c.to_string()) == c.to_string().trim().is_empty())
            .collect();
        assert!(
            mismatches.is_empty(),
            "pattern and trim disagree on {mismatches:?}"
        );
    }
}
