//! Subagents: what the `agent` family of tools returns and what a parent's log records of its
//! children.
//!
//! A child is an ordinary session in the same store, linked to its parent by
//! `parentSessionId` and `parentCallId` (in its `session.started`, and in
//! [`crate::api::SessionInfo`]). The parent's log records `agent.started` when a child is
//! created (folded onto the call's node as [`crate::tree::ToolNode::child`]), `agent.finished`
//! when a background child ends, and `agent.delivered` once its result was handed to the model,
//! so each result is delivered exactly once, across a restart too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a child stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ChildStatus {
    /// Its turn is running.
    Running,
    /// A teammate between turns: alive, waiting for a message to start its next turn.
    Idle,
    /// It answered.
    Completed,
    /// The model or the runtime failed, or the model refused.
    Failed,
    /// It was stopped: `agent_stop`, or its parent was interrupted.
    Interrupted,
    /// It used the steps (or tokens) its budget allows before answering.
    OutOfBudget,
}

impl ChildStatus {
    /// Whether the child has ended (any status but `running` and `idle`).
    pub fn ended(self) -> bool {
        !matches!(self, ChildStatus::Running | ChildStatus::Idle)
    }

    /// The status's wire name (`running`, `out_of_budget`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ChildStatus::Running => "running",
            ChildStatus::Idle => "idle",
            ChildStatus::Completed => "completed",
            ChildStatus::Failed => "failed",
            ChildStatus::Interrupted => "interrupted",
            ChildStatus::OutOfBudget => "out_of_budget",
        }
    }
}

/// Tokens (and cost, when the model has a price) a child used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChildUsage {
    /// Prompt tokens sent.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Tokens generated.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache (part of `inputTokens`); absent when none.
    #[serde(default, skip_serializing_if = "crate::event::is_zero")]
    #[ts(as = "Option<f64>", optional)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (part of `inputTokens`); absent when none.
    #[serde(default, skip_serializing_if = "crate::event::is_zero")]
    #[ts(as = "Option<f64>", optional)]
    pub cache_write_tokens: u64,
    /// The cost in US dollars, when the host knows the model's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
}

/// A child session and where it stands: what `agent`, `agent_stop`, `agent_wait` and
/// `agent_list` return, and what `agent.finished` records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChildRecord {
    /// The child's session id.
    pub session_id: String,
    /// The agent it runs (`explore`, `general`, or a workspace agent file's name).
    pub agent: String,
    /// The short description the parent gave it.
    pub description: String,
    /// The name the parent gave it, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    /// Whether it runs in the background (the `agent` call returned at once).
    pub background: bool,
    /// Where it stands.
    pub status: ChildStatus,
    /// Its final answer (the text of its last step), once it ended with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub answer: Option<String>,
    /// Why it failed, or what stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    /// Model steps taken so far.
    pub steps: u32,
    /// Tokens and cost so far.
    pub usage: ChildUsage,
    /// Wall time so far, or until it ended, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// What `agent_wait` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentWaitOutput {
    /// The children that ended and whose result was not delivered before, each delivered
    /// exactly once.
    pub finished: Vec<ChildRecord>,
    /// The ids of the children waited for that still run.
    pub running: Vec<String>,
    /// Whether the wait ended at `timeout_ms` with children still running.
    pub timed_out: bool,
}

/// What `agent_list` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentListOutput {
    /// The session's children, oldest first.
    pub children: Vec<ChildRecord>,
}

/// When a message sent with `agent_send` reaches its recipient's model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// The recipient was between steps: its next step sees the message.
    Now,
    /// The recipient was mid-step: the message follows that step.
    Queued,
}

/// What `agent_send` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentSendOutput {
    /// The recipient as given (a session id or a name).
    pub to: String,
    /// The recipient's session id.
    pub session_id: String,
    /// Whether the message is seen at the recipient's next step or after its current one.
    pub delivered: Delivery,
}

/// The `agent.started` event, in the parent's log: a call created a child session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentStartedEvent {
    /// The `agent` call that created the child.
    pub call_id: String,
    /// The `run_code` call that made that call, for a code-mode call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// The child's session id.
    pub child_session_id: String,
    /// The agent the child runs.
    pub agent: String,
    /// The short description the parent gave it.
    pub description: String,
    /// The name the parent gave it, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    /// Whether it runs in the background.
    pub background: bool,
}

/// The `agent.finished` event, in the parent's log: a background child ended. The parent's
/// model is told between its steps; `agent_wait` hands over the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentFinishedEvent {
    /// The child's session id.
    pub child_session_id: String,
    /// How it ended.
    pub record: ChildRecord,
}

/// The `agent.delivered` event, in the parent's log: a background child's result was handed
/// to the model (by `agent_wait`), and is never handed over again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentDeliveredEvent {
    /// The child's session id.
    pub child_session_id: String,
}

/// The `agent.message` event, in the recipient's log: a message sent with `agent_send`. The
/// recipient's model receives it as a user message after the step running when it arrived
/// (at once when none was).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessageEvent {
    /// The sender's session id.
    pub from_session_id: String,
    /// The sender's name, when it has one (a named teammate); absent for the parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub from_name: Option<String>,
    /// The message.
    pub text: String,
}
