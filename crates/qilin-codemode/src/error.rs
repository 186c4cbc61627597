//! Why a run of code failed, each variant naming the limit or the cause.

use qilin_protocol::ErrorCode;
use qilin_tool::ToolError;

/// Why a `run_code` run ended without a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    /// The code does not parse, or uses syntax the sandbox does not support.
    #[error("{traceback}")]
    Syntax {
        /// The Python-style error with the line and column in the model's code.
        traceback: String,
    },
    /// The type checker found errors against the tools' stubs; nothing ran.
    #[error("the code does not type-check against the tools' stubs:\n{diagnostics}")]
    TypeCheck {
        /// One diagnostic per line, with the model's line numbers.
        diagnostics: String,
    },
    /// An exception nobody caught.
    #[error("{traceback}")]
    Python {
        /// The Python-style traceback with the model's line numbers.
        traceback: String,
    },
    /// The code itself ran longer than `wall_time_ms`.
    #[error(
        "the code ran longer than its wall_time_ms limit of {limit_ms} ms (time inside tool \
         calls is not counted) and was stopped; do less work per run or split it"
    )]
    WallTime {
        /// The limit in milliseconds.
        limit_ms: u64,
    },
    /// The code allocated more than `memory_mb`.
    #[error(
        "the code used more than its memory_mb limit of {limit_mb} MiB and was stopped; \
         process data in smaller pieces"
    )]
    Memory {
        /// The limit in MiB.
        limit_mb: u64,
    },
    /// The code made more than `max_tool_calls` tool calls.
    #[error(
        "the code made more than its max_tool_calls limit of {limit} tool calls and was \
         stopped; batch the work into fewer calls"
    )]
    ToolCalls {
        /// The limit.
        limit: usize,
    },
    /// The code printed more than can be kept.
    #[error(
        "the code printed more than {limit} bytes (max_output_bytes is {visible}) and was \
         stopped; print summaries, not raw data"
    )]
    Output {
        /// The most printed bytes kept.
        limit: usize,
        /// The visible part.
        visible: usize,
    },
    /// The worker process running the code died (a stack overflow, an abort).
    #[error(
        "the sandbox worker running the code crashed ({reason}); the run was lost but the \
         runtime is fine; simplify the code (deep recursion is a common cause) and run again"
    )]
    Crashed {
        /// What the pool saw.
        reason: String,
    },
    /// Replaying the run after a restart, the code asked for another call than the journal
    /// holds at that position (or ended before making every journaled call).
    #[error(
        "the run could not be resumed after a restart: at call {call_id} the code asked for \
         {asked}, but the journal holds {journaled}. The code no longer makes the calls it \
         made before the restart, so it was stopped rather than run differently; run it anew \
         if that is what you want"
    )]
    Diverged {
        /// The call's id (`RUN.N`).
        call_id: String,
        /// What the journal holds at that position: the tool and its arguments.
        journaled: String,
        /// What the code asked for: the tool and its arguments, or that it ended.
        asked: String,
    },
    /// Replaying the run after a restart, a call that may change something has no journaled
    /// result: it may or may not have taken effect, so it is not run again.
    #[error(
        "the run could not be resumed after a restart: the outcome of call {call_id} \
         (`{tool}` with {arguments}) is unknown, because the process ended while it ran, and \
         `{tool}` is not read-only, so it was not run again. Check whether it took effect \
         before doing the rest of the work"
    )]
    UnknownOutcome {
        /// The call's id (`RUN.N`).
        call_id: String,
        /// The tool called.
        tool: String,
        /// Its arguments, as JSON.
        arguments: String,
    },
    /// The run was interrupted (the user stopped the turn).
    #[error("the run was interrupted before it finished")]
    Interrupted,
    /// The sandbox could not run the code at all.
    #[error("the sandbox is unavailable: {0}")]
    Sandbox(String),
}

impl CodeError {
    /// The error code the execution layer records for this failure.
    pub fn code(&self) -> ErrorCode {
        match self {
            CodeError::Syntax { .. } | CodeError::TypeCheck { .. } => ErrorCode::InvalidArguments,
            CodeError::WallTime { .. } => ErrorCode::Timeout,
            CodeError::Interrupted => ErrorCode::Interrupted,
            _ => ErrorCode::ToolFailed,
        }
    }

    /// The error as a tool error, with what the code printed before it failed.
    pub fn to_tool_error(&self, printed: &str) -> ToolError {
        let mut message = self.to_string();
        if !printed.is_empty() {
            message = format!("{message}\n\nPrinted before the failure:\n{printed}");
        }
        ToolError::new(self.code(), message)
    }
}
