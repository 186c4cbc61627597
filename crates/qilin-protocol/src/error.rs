use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use ts_rs::TS;

/// Why a tool call did not produce a normal result.
///
/// The code is stable on the wire (`SCREAMING_SNAKE_CASE`) and is what code mode raises as
/// `ToolError.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// No tool has that name.
    UnknownTool,
    /// The arguments do not match the tool's schema.
    InvalidArguments,
    /// A code-mode-only tool was called directly instead of through `run_code`.
    CodeModeOnly,
    /// The reviewer (the agent's policy, or its reviewer model) refused the call.
    AutoReviewDenied,
    /// The reviewer model errored or answered a malformed verdict, and the unattended policy
    /// refused the call.
    AutoReviewFailed,
    /// The reviewer model did not answer in time, and the unattended policy refused the call.
    AutoReviewTimeout,
    /// The call ran past its deadline.
    Timeout,
    /// The call was cancelled (the user interrupted the turn).
    Interrupted,
    /// The tool ran and failed.
    ToolFailed,
}

impl ErrorCode {
    /// The code as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::InvalidArguments => "INVALID_ARGUMENTS",
            ErrorCode::CodeModeOnly => "CODE_MODE_ONLY",
            ErrorCode::AutoReviewDenied => "AUTO_REVIEW_DENIED",
            ErrorCode::AutoReviewFailed => "AUTO_REVIEW_FAILED",
            ErrorCode::AutoReviewTimeout => "AUTO_REVIEW_TIMEOUT",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::Interrupted => "INTERRUPTED",
            ErrorCode::ToolFailed => "TOOL_FAILED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
