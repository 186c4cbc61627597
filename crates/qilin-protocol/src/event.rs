use crate::{CallPresentation, ContentBlock, Detail, ErrorCode};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One entry of a session's append-only event log.
///
/// `seq` numbers the events of a session from 1 without gaps, in the order they happened;
/// the `type` tag and the fields of [`EventBody`] sit beside it on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Event {
    /// Position in the session's log, starting at 1.
    #[ts(type = "number")]
    pub seq: u64,
    /// What happened.
    #[serde(flatten)]
    pub body: EventBody,
}

/// What an [`Event`] reports, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type")]
pub enum EventBody {
    /// A user prompt started a turn.
    #[serde(rename = "turn.started", rename_all = "camelCase")]
    TurnStarted {
        /// The turn's id.
        turn_id: String,
        /// The user's prompt.
        prompt: String,
    },
    /// A turn ended.
    #[serde(rename = "turn.finished", rename_all = "camelCase")]
    TurnFinished {
        /// The turn's id.
        turn_id: String,
        /// Why it ended.
        reason: FinishReason,
        /// A message for the user when the turn ended in error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        message: Option<String>,
    },
    /// The model was asked for its next step.
    #[serde(rename = "step.started", rename_all = "camelCase")]
    StepStarted {
        /// The turn's id.
        turn_id: String,
        /// Step number within the turn, from 1.
        step: u32,
    },
    /// The model streamed some assistant text.
    #[serde(rename = "step.text.delta", rename_all = "camelCase")]
    StepTextDelta {
        /// The turn's id.
        turn_id: String,
        /// Step number within the turn.
        step: u32,
        /// The new text.
        text: String,
    },
    /// The model finished a step.
    #[serde(rename = "step.finished", rename_all = "camelCase")]
    StepFinished {
        /// The turn's id.
        turn_id: String,
        /// Step number within the turn.
        step: u32,
        /// Tokens used by the step.
        usage: Usage,
    },
    /// The model named a tool and its arguments are streaming; nothing runs yet.
    #[serde(rename = "tool.preparing")]
    ToolPreparing(ToolPreparingEvent),
    /// A call was dispatched with its final arguments.
    #[serde(rename = "tool.start")]
    ToolStart(ToolStartEvent),
    /// A running call produced live output.
    #[serde(rename = "tool.progress")]
    ToolProgress(ToolProgressEvent),
    /// A call ended. Every `tool.start` has exactly one.
    #[serde(rename = "tool.result")]
    ToolResult(ToolResultEvent),
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model answered without asking for more tools.
    Completed,
    /// The agent's step limit was reached.
    MaxSteps,
    /// The user interrupted the turn.
    Interrupted,
    /// The model or the runtime failed.
    Error,
}

/// Token counts of one model step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens sent.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Tokens generated.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    #[ts(type = "number")]
    pub cache_read_tokens: u64,
}

/// Which entry a call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CallerKind {
    /// The model called the tool from its tools list.
    Direct,
    /// Python called the tool through `sdk.tool.call` inside `run_code`.
    Code,
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool ran and returned its output.
    Ok,
    /// The call failed (see the error code).
    Error,
    /// The reviewer refused the call.
    Denied,
    /// The call was cancelled.
    Interrupted,
}

/// The `tool.preparing` event: a slice of the raw argument text as the model streams it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolPreparingEvent {
    /// The call's id, the same through all phases.
    pub call_id: String,
    /// The tool's wire name.
    pub tool_name: String,
    /// Argument text appended since the previous `tool.preparing` of this call.
    pub arguments_delta: String,
}

/// The `tool.start` event: the call passed its checks' entry and is dispatched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolStartEvent {
    /// The call's id.
    pub call_id: String,
    /// The tool's wire name.
    pub tool_name: String,
    /// Which entry the call came through.
    pub caller: CallerKind,
    /// The `run_code` call that made this call, for a code-mode call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// The final arguments.
    #[ts(type = "unknown")]
    pub arguments: serde_json::Value,
    /// Friendly action and remark for the card's header.
    pub presentation: CallPresentation,
    /// The detail shown while the call runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before_detail: Option<Detail>,
}

/// The `tool.progress` event: live output of a running call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolProgressEvent {
    /// The call's id.
    pub call_id: String,
    /// The `run_code` call that made this call, for a code-mode call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// New output since the previous progress event.
    pub text: String,
}

/// The `tool.result` event: how a call ended and what it returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultEvent {
    /// The call's id.
    pub call_id: String,
    /// The tool's wire name.
    pub tool_name: String,
    /// Which entry the call came through.
    pub caller: CallerKind,
    /// The `run_code` call that made this call, for a code-mode call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// How the call ended.
    pub status: CallStatus,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error_code: Option<ErrorCode>,
    /// What the model sees: the output, or the error message.
    pub content: Vec<ContentBlock>,
    /// The tool's structured output, when it ran to completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub output: Option<serde_json::Value>,
    /// The detail shown after the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub detail: Option<Detail>,
    /// Wall time from dispatch to result, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
}
