use qilin_protocol::Usage;
use std::fmt;

/// One piece of a streamed model answer.
///
/// The order within one answer: text deltas and tool calls as the model produces them; each
/// call is `ToolCallStart`, zero or more `ToolCallDelta`s, then `ToolCallEnd` (every call ends
/// before the answer finishes); at most one `Usage`; `Finished` last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelEvent {
    /// More of the answer's text.
    TextDelta(String),
    /// The model named a tool; its arguments follow as deltas.
    ToolCallStart {
        /// The call's id.
        id: String,
        /// The tool's wire name.
        name: String,
    },
    /// More of a call's raw argument text.
    ToolCallDelta {
        /// The call's id.
        id: String,
        /// The next piece of argument text.
        arguments_delta: String,
    },
    /// A call's arguments are complete.
    ToolCallEnd {
        /// The call's id.
        id: String,
    },
    /// Token counts of this answer. `input_tokens` counts the whole prompt, cached part
    /// included; `cache_read_tokens` is the part served from the provider's cache.
    Usage(Usage),
    /// The answer is complete.
    Finished {
        /// Why the model stopped.
        stop_reason: StopReason,
    },
}

/// Why a model stopped answering.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants its tool calls run.
    ToolUse,
    /// The answer hit the token limit.
    MaxTokens,
    /// Another reason, as the provider named it.
    Other(String),
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::EndTurn => f.write_str("end_turn"),
            StopReason::ToolUse => f.write_str("tool_use"),
            StopReason::MaxTokens => f.write_str("max_tokens"),
            StopReason::Other(reason) => f.write_str(reason),
        }
    }
}
