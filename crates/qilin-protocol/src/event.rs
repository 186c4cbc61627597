use crate::agents::{
    AgentDeliveredEvent, AgentFinishedEvent, AgentMessageEvent, AgentStartedEvent,
};
use crate::goals::{GoalCreatedEvent, GoalUpdatedEvent};
use crate::loops::{LoopFinishedEvent, LoopIterationEvent, LoopStartedEvent};
use crate::review::{ReviewCircuitOpenEvent, ReviewGrantedEvent, ToolReviewedEvent};
use crate::schedules::{
    ScheduleCreatedEvent, ScheduleDeletedEvent, ScheduleFinishedEvent, ScheduleFiredEvent,
};
use crate::tasks::{TaskCreatedEvent, TaskUpdatedEvent};
use crate::workflows::{WorkflowFinishedEvent, WorkflowStartedEvent, WorkflowStepEvent};
use crate::{
    Answer, CallPresentation, ContentBlock, Detail, ErrorCode, ProjectContext, Question,
    SessionGrant,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The version of this event vocabulary, recorded in every `session.started`. It changes when
/// an event changes in a way an older reader would misread.
pub const PROTOCOL_VERSION: u32 = 2;

/// One entry of a session's append-only event log.
///
/// `seq` numbers the events of a session from 1 without gaps, in the order they happened;
/// the `type` tag and the fields of [`EventBody`] sit beside it on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct Event {
    /// Position in the session's log, starting at 1.
    #[ts(type = "number")]
    pub seq: u64,
    /// When it happened: RFC 3339 in UTC with milliseconds (`2026-11-30T17:05:16.123Z`).
    pub time: String,
    /// What happened.
    #[serde(flatten)]
    pub body: EventBody,
}

/// What an [`Event`] reports, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type")]
pub enum EventBody {
    /// The session began: the first event of every log.
    #[serde(rename = "session.started")]
    SessionStarted(SessionStartedEvent),
    /// A user prompt started a turn.
    #[serde(rename = "turn.started", rename_all = "camelCase")]
    TurnStarted {
        /// The turn's id.
        turn_id: String,
        /// The user's prompt.
        prompt: String,
        /// The id the client chose for this turn, so that a retried request starts no second turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        client_turn_id: Option<String>,
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
    /// The model streamed some of its reasoning (thinking) text.
    #[serde(rename = "step.reasoning.delta", rename_all = "camelCase")]
    StepReasoningDelta {
        /// The turn's id.
        turn_id: String,
        /// Step number within the turn.
        step: u32,
        /// The new reasoning text.
        text: String,
    },
    /// A block of reasoning ended. What the provider needs back verbatim (a signature, or a
    /// redacted block's data) is kept here so that a resumed session sends it again.
    #[serde(rename = "step.reasoning.end", rename_all = "camelCase")]
    StepReasoningEnd {
        /// The turn's id.
        turn_id: String,
        /// Step number within the turn.
        step: u32,
        /// The provider's signature over the block's text, when it gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        signature: Option<String>,
        /// The opaque data of a block the provider redacted (its text is empty).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        redacted: Option<String>,
    },
    /// The model finished a step.
    #[serde(rename = "step.finished", rename_all = "camelCase")]
    StepFinished {
        /// The turn's id.
        turn_id: String,
        /// Step number within the turn.
        step: u32,
        /// Tokens used by the step (what the provider reported before a failure too).
        usage: Usage,
        /// Why the model stopped; absent when the step ended without the model finishing
        /// (an interrupt, a failed stream).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        stop_reason: Option<StopReason>,
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
    /// A call waits for a person: an approval the review policy asks for, or a `question`.
    /// Until its `request.resolved`, the call is waiting, not running.
    #[serde(rename = "request.opened")]
    RequestOpened(RequestOpenedEvent),
    /// A request was answered, or cancelled. Every `request.opened` has exactly one.
    #[serde(rename = "request.resolved")]
    RequestResolved(RequestResolvedEvent),
    /// The conversation so far was summarised: from here on the model receives the system
    /// prompt, this summary as a user message, then what follows, instead of every earlier
    /// message. Recorded between turns, never within one.
    #[serde(rename = "context.compacted")]
    ContextCompacted(ContextCompactedEvent),
    /// A call created a child session (in the parent's log, before the child's first model
    /// request).
    #[serde(rename = "agent.started")]
    AgentStarted(AgentStartedEvent),
    /// A background child ended (in the parent's log).
    #[serde(rename = "agent.finished")]
    AgentFinished(AgentFinishedEvent),
    /// A background child's result was handed to the model (in the parent's log).
    #[serde(rename = "agent.delivered")]
    AgentDelivered(AgentDeliveredEvent),
    /// A message another session sent with `agent_send` (in the recipient's log).
    #[serde(rename = "agent.message")]
    AgentMessage(AgentMessageEvent),
    /// A task was added to the team's task list (in the lead's log).
    #[serde(rename = "task.created")]
    TaskCreated(TaskCreatedEvent),
    /// A task of the team's list changed: its whole new state (in the lead's log).
    #[serde(rename = "task.updated")]
    TaskUpdated(TaskUpdatedEvent),
    /// A goal was set (by the model, a person or the runtime).
    #[serde(rename = "goal.created")]
    GoalCreated(GoalCreatedEvent),
    /// A goal changed: its whole new state, who changed it and why.
    #[serde(rename = "goal.updated")]
    GoalUpdated(GoalUpdatedEvent),
    /// A loop started (in the starting session's log).
    #[serde(rename = "loop.started")]
    LoopStarted(LoopStartedEvent),
    /// A loop's iteration started, or ended with its report.
    #[serde(rename = "loop.iteration")]
    LoopIteration(LoopIterationEvent),
    /// A loop stopped: its whole final state.
    #[serde(rename = "loop.finished")]
    LoopFinished(LoopFinishedEvent),
    /// A schedule was created (in the creating session's log).
    #[serde(rename = "schedule.created")]
    ScheduleCreated(ScheduleCreatedEvent),
    /// A schedule was deleted.
    #[serde(rename = "schedule.deleted")]
    ScheduleDeleted(ScheduleDeletedEvent),
    /// A schedule fired: a run started, in this session or a new one.
    #[serde(rename = "schedule.fired")]
    ScheduleFired(ScheduleFiredEvent),
    /// A schedule's run ended, with its outcome.
    #[serde(rename = "schedule.finished")]
    ScheduleFinished(ScheduleFinishedEvent),
    /// The reviewer model judged a call (after its `tool.start`, before it runs or is refused).
    #[serde(rename = "tool.reviewed")]
    ToolReviewed(ToolReviewedEvent),
    /// A person allowed a call the reviewer refused, or a retry used that permission.
    #[serde(rename = "review.granted")]
    ReviewGranted(ReviewGrantedEvent),
    /// Too many denials: the circuit breaker ended the turn.
    #[serde(rename = "review.circuit_open")]
    ReviewCircuitOpen(ReviewCircuitOpenEvent),
    /// A workflow run began.
    #[serde(rename = "workflow.started")]
    WorkflowStarted(WorkflowStartedEvent),
    /// A workflow run made a step, or a call step of it ended.
    #[serde(rename = "workflow.step")]
    WorkflowStep(WorkflowStepEvent),
    /// A workflow run ended.
    #[serde(rename = "workflow.finished")]
    WorkflowFinished(WorkflowFinishedEvent),
}

impl EventBody {
    /// The event's `type` tag, as on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::SessionStarted(_) => "session.started",
            EventBody::TurnStarted { .. } => "turn.started",
            EventBody::TurnFinished { .. } => "turn.finished",
            EventBody::StepStarted { .. } => "step.started",
            EventBody::StepTextDelta { .. } => "step.text.delta",
            EventBody::StepReasoningDelta { .. } => "step.reasoning.delta",
            EventBody::StepReasoningEnd { .. } => "step.reasoning.end",
            EventBody::StepFinished { .. } => "step.finished",
            EventBody::ToolPreparing(_) => "tool.preparing",
            EventBody::ToolStart(_) => "tool.start",
            EventBody::ToolProgress(_) => "tool.progress",
            EventBody::ToolResult(_) => "tool.result",
            EventBody::RequestOpened(_) => "request.opened",
            EventBody::RequestResolved(_) => "request.resolved",
            EventBody::ContextCompacted(_) => "context.compacted",
            EventBody::AgentStarted(_) => "agent.started",
            EventBody::AgentFinished(_) => "agent.finished",
            EventBody::AgentDelivered(_) => "agent.delivered",
            EventBody::AgentMessage(_) => "agent.message",
            EventBody::TaskCreated(_) => "task.created",
            EventBody::TaskUpdated(_) => "task.updated",
            EventBody::GoalCreated(_) => "goal.created",
            EventBody::GoalUpdated(_) => "goal.updated",
            EventBody::LoopStarted(_) => "loop.started",
            EventBody::LoopIteration(_) => "loop.iteration",
            EventBody::LoopFinished(_) => "loop.finished",
            EventBody::ScheduleCreated(_) => "schedule.created",
            EventBody::ScheduleDeleted(_) => "schedule.deleted",
            EventBody::ScheduleFired(_) => "schedule.fired",
            EventBody::ScheduleFinished(_) => "schedule.finished",
            EventBody::ToolReviewed(_) => "tool.reviewed",
            EventBody::ReviewGranted(_) => "review.granted",
            EventBody::ReviewCircuitOpen(_) => "review.circuit_open",
            EventBody::WorkflowStarted(_) => "workflow.started",
            EventBody::WorkflowStep(_) => "workflow.step",
            EventBody::WorkflowFinished(_) => "workflow.finished",
        }
    }
}

/// The `session.started` event: what the session runs, recorded once at its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionStartedEvent {
    /// The session's id.
    pub session_id: String,
    /// The [`PROTOCOL_VERSION`] the log is written in.
    pub protocol_version: u32,
    /// The agent the session runs.
    pub agent: AgentInfo,
    /// The model, as `provider:name` (`openai:gpt-4.1`, `scripted:demo.script.yaml`).
    pub model: String,
    /// The workspace folder, absolute.
    pub workspace: String,
    /// The environment and project memory the system prompt carries, as they were when the
    /// session began (a resumed session reuses them, so its prompt stays byte-identical).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context: Option<ProjectContext>,
    /// For a child session (a subagent): the session that started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_session_id: Option<String>,
    /// For a child session: the parent's `agent` call that started it (for a code-mode call,
    /// that nested call's own id, not its `run_code` call's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
}

/// Which agent a session runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    /// The agent's name.
    pub name: String,
    /// The agent file, when the agent came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub file: Option<String>,
    /// A hash of the agent file's contents (hex), to tell whether it changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub file_hash: Option<String>,
    /// The agent is one built into Qilin (`coder`), loaded again by its name on resume.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub builtin: bool,
}

/// Why the model stopped a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model asked for its tool calls to run.
    ToolUse,
    /// The answer reached the token limit and was cut.
    MaxTokens,
    /// The model refused to answer.
    Refusal,
    /// The provider's content filter stopped the answer.
    ContentFilter,
    /// A reason the provider named that Qilin does not know.
    Other,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model answered without asking for more tools.
    Completed,
    /// The agent's step limit was reached.
    MaxSteps,
    /// The user interrupted the turn (or the process running it ended).
    Interrupted,
    /// The model's answer reached the token limit.
    MaxTokens,
    /// The model refused, or the provider's content filter stopped the answer.
    Refused,
    /// The model or the runtime failed.
    Error,
}

/// Token counts of one model step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
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
    /// Prompt tokens written to the provider's cache (a provider that reports it; absent when
    /// none were).
    #[serde(default, skip_serializing_if = "is_zero")]
    #[ts(as = "Option<f64>", optional)]
    pub cache_write_tokens: u64,
}

/// Whether a count is zero (left out of the wire form).
pub(crate) fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// Which entry a call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum CallerKind {
    /// The model called the tool from its tools list.
    Direct,
    /// Python called the tool through `sdk.tool.call` inside `run_code`.
    Code,
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolPreparingEvent {
    /// The call's id, the same through all phases.
    pub call_id: String,
    /// The tool's wire name.
    pub tool_name: String,
    /// Argument text appended since the previous `tool.preparing` of this call.
    pub arguments_delta: String,
    /// How the tool presents the call from the arguments streamed so far, when that changed
    /// since the last one sent: sent at most every few hundred milliseconds once the
    /// arguments are long, so every client can name a call while the model writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub presentation: Option<CallPresentation>,
}

/// The `tool.start` event: the call passed its checks' entry and is dispatched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
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
///
/// Live output is bounded per call (see [`crate::live`]): the start of the output, then now
/// and then its latest part, then its last part when the call ends; what is left out between
/// is counted in `omittedBytes`. The call's result holds the whole output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolProgressEvent {
    /// The call's id.
    pub call_id: String,
    /// The `run_code` call that made this call, for a code-mode call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// Bytes of output the call printed after the previous progress event's text and before
    /// this one's that are not shown live (the live view is bounded; the result holds them).
    /// Absent when `text` follows on from the previous progress event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub omitted_bytes: Option<u64>,
    /// New output since the previous progress event.
    pub text: String,
}

/// The `tool.result` event: how a call ended and what it returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
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
    /// For a denied call, why, in words for the person watching: the review rule's own
    /// `reason`, or what the user said declining it. The model's message, with what it should
    /// do instead, stays in `content`. Absent for every other result, and when there is no
    /// such reason (a client shows a generic one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub user_reason: Option<String>,
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

/// The `request.opened` event: a call waits for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct RequestOpenedEvent {
    /// The request's id, unique in the session; answers name it.
    pub request_id: String,
    /// The waiting call.
    pub call_id: String,
    /// The `run_code` call that made the waiting call, for a code-mode call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// The waiting call's tool.
    pub tool_name: String,
    /// What is asked.
    pub ask: RequestAsk,
    /// For a request of a parent session that a child's call opened: the child's session id
    /// (the child's own request is answered through this one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub child_session_id: Option<String>,
    /// For a request a child's call opened: the child's name, or its agent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub child_name: Option<String>,
}

/// What a request asks of a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RequestAsk {
    /// May this call run? The review policy asks.
    Approval {
        /// Why the policy asks.
        reason: String,
        /// The call's friendly action and remark.
        presentation: CallPresentation,
        /// The call's arguments.
        #[ts(type = "unknown")]
        arguments: serde_json::Value,
        /// The detail the call shows before it runs (a diff, a command).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        detail: Option<Detail>,
    },
    /// The `question` tool's questions.
    Question {
        /// The questions, in the order asked.
        questions: Vec<Question>,
    },
}

/// The `request.resolved` event: how a request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct RequestResolvedEvent {
    /// The request's id.
    pub request_id: String,
    /// The call that waited.
    pub call_id: String,
    /// The `run_code` call that made the waiting call, for a code-mode call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// The answer, or why there is none.
    pub resolution: RequestResolution,
    /// Who resolved it: `runtime` for a cancellation, else what the answering host named
    /// itself (`terminal`, a web client's id).
    pub resolved_by: String,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RequestResolution {
    /// The person allowed the call.
    Approved,
    /// The person allowed the call, and every later call the grant covers for the rest of
    /// the session.
    ApprovedForSession {
        /// What is allowed from now on.
        grant: SessionGrant,
    },
    /// The person refused the call.
    Denied {
        /// What the person said, told to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    /// The person answered the questions.
    Answered {
        /// One answer per question, paired by id.
        answers: Vec<Answer>,
    },
    /// The person dismissed the questions without answering.
    Dismissed,
    /// Nobody answered: the turn was interrupted or the process ended.
    Cancelled,
}

/// The `context.compacted` event: the model's summary of the conversation, which replaces
/// the messages of every earlier event in what the model receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompactedEvent {
    /// The summary: what the user wants, the decisions taken, the files touched, what
    /// remains to do.
    pub summary: String,
    /// The `seq` of the last event the summary replaces; the model is sent nothing of the
    /// events up to it but the summary.
    #[ts(type = "number")]
    pub replaces_through_seq: u64,
    /// Tokens used by the request that wrote the summary.
    pub usage: Usage,
    /// The size of a request before the compaction (system prompt, tools and messages),
    /// estimated at four bytes a token.
    #[ts(type = "number")]
    pub estimated_tokens_before: u64,
    /// The size of a request after it, estimated the same way.
    #[ts(type = "number")]
    pub estimated_tokens_after: u64,
}
