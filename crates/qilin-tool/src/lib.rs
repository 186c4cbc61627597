//! Qilin's tool layer: the tool trait, the registry, the schemas a provider receives, the
//! review policy and the execution layer every call passes through.
//!
//! A tool author writes a type with `#[derive(Tool)]` (wire name, description from the doc
//! comment) and implements [`Tool`]. The [`ToolRegistry`] erases it; the [`Executor`]
//! dispatches calls from both entries — the model's tools list ([`Caller::Direct`]) and code
//! mode ([`Caller::Code`]) — through the same steps.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

extern crate self as qilin_tool;

mod auto_review;
mod code_limits;
mod context;
mod definition;
mod dispatch;
mod events;
mod live;
mod output_cap;
mod partial;
mod path_arguments;
mod registry;
mod requests;
mod review;
mod schema;
mod suggest;
mod tool;
mod workspace;

pub use auto_review::{
    AutoReview, CircuitOpen, DENIALS_IN_A_ROW, DENIALS_IN_WINDOW, Judgement, ModelJudge,
    REVIEW_MESSAGE_BYTES, REVIEW_WINDOW, ReviewedCall, recent_messages,
};
pub use code_limits::{CodeLimits, MAX_SAFE_RECURSION_DEPTH};
pub use context::{Services, Session, ToolContext};
pub use definition::DirectDefinition;
pub use dispatch::{
    CallOutcome, Caller, DEFAULT_MAX_RUNNING_CALLS, ExecConfig, Executor, Mounts, RUN_CODE,
    ToolCall,
};
pub use events::{EventLog, now};
pub use live::{COALESCE_BYTES, COALESCE_INTERVAL, GLIMPSE_INTERVAL};
pub use output_cap::{
    CapturedText, DEFAULT_SPILL_LIMIT, OutputCap, OutputCapture, create_private_file,
    whole_logged_output,
};
pub use partial::partial_arguments;
pub use qilin_tool_macros::Tool;
pub use registry::{
    DynamicHandler, DynamicOutput, DynamicResult, DynamicTool, RegisteredTool, RegistryError,
    ToolRegistry,
};
pub use requests::{
    RequestOutcome, RequestRelay, RequestReply, Requests, ResolveError, WaitingCall, ended_as,
    grant_covers,
};
pub use review::{
    AllowAll, AutoProblem, AutoReviewConfig, AutoRules, DEFAULT_AUTO_REVIEW_TIMEOUT, PolicyConfig,
    PolicyError, PolicyRule, ReviewDecision, ReviewRequest, Reviewer, RulePolicy, ToolEffect,
    Verdict,
};
pub use schema::{normalize_for_providers, output_schema_for, parameters_schema_for};
pub use suggest::closest_names;
pub use tool::{Tool, ToolError, ToolInfo, ToolResult, default_content};
pub use workspace::{PathError, PathKind, Resolved, Workspace};
