//! The wire vocabulary every Qilin client shares.
//!
//! Everything here is plain data with serde: camelCase fields, a `type` tag on every tagged
//! union. The events, the conversation tree folded from them ([`tree`]), the HTTP API's
//! shapes ([`api`]), what the session query tools return ([`sessions`]), the subagent family's
//! shapes ([`agents`]), what `checks_run` returns ([`checks`]), the goals' ([`goals`]), the
//! loops' ([`loops`]), the schedules' ([`schedules`]), auto review's ([`review`]) and the team task list's ([`tasks`]) are
//! generated into TypeScript, straight into the web client's
//! `@qilin-agent/protocol` package (see [`typescript::bindings`]), and checked to be current by
//! the test suite.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod agents;
pub mod api;
pub mod checks;
mod content;
mod context;
mod error;
mod event;
pub mod goals;
pub mod live;
pub mod loops;
mod presentation;
mod question;
pub mod review;
pub mod schedules;
pub mod sessions;
mod spill;
pub mod tasks;
pub mod tree;
pub mod typescript;
pub mod workflows;

pub use content::ContentBlock;
pub use context::{Environment, MemoryFile, ProjectContext, SessionGrant};
pub use error::ErrorCode;
pub use event::{
    AgentInfo, CallStatus, CallerKind, ContextCompactedEvent, Event, EventBody, FinishReason,
    PROTOCOL_VERSION, RequestAsk, RequestOpenedEvent, RequestResolution, RequestResolvedEvent,
    SessionStartedEvent, StopReason, ToolPreparingEvent, ToolProgressEvent, ToolResultEvent,
    ToolStartEvent, Usage,
};
pub use live::{
    LIVE_GLIMPSE_BUDGET, LIVE_GLIMPSE_BYTES, LIVE_HEAD_BYTES, LIVE_MAX_BYTES, LIVE_TAIL_BYTES,
    LiveView,
};
pub use presentation::{CallPresentation, Detail};
pub use question::{Answer, Question, check_answers};
pub use spill::{SpillNotice, parse_spill_notice, spill_notice};
pub use tree::{
    ChildLink, CompactionNode, ConversationTree, Phase, RequestNode, ToolNode, ToolOutcome,
    TurnItem, TurnNode,
};
