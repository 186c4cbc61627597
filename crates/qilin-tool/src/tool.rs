use crate::ToolContext;
use qilin_protocol::{CallPresentation, ContentBlock, Detail, ErrorCode};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;
use std::future::Future;

/// What `#[derive(Tool)]` writes: the tool's wire name, description and strategy.
pub trait ToolInfo {
    /// The wire name models, skills, events and clients use (`grep`).
    const NAME: &'static str;
    /// The tool's doc comment: what it does, for the model.
    const DESCRIPTION: &'static str;
    /// True when the tool is reached only from code mode and never sits in a tools list.
    const CODE_MODE_ONLY: bool;
    /// True when the tool changes nothing (its effect is [`crate::ToolEffect::ReadOnly`]): its
    /// calls may run beside the other read-only calls of a step.
    const READ_ONLY: bool = false;
    /// The arguments holding workspace paths (dotted for nested ones: `edits.path`); the
    /// execution layer gives review and the tool their canonical workspace-relative form.
    const PATH_ARGUMENTS: &'static [&'static str] = &[];
}

/// What a tool returns: its typed output, or an error told to the model.
pub type ToolResult<T> = Result<T, ToolError>;

/// A capability the model can call directly or from code mode.
///
/// Arguments and output are typed; their JSON Schemas come from `schemars`, each field's doc
/// comment becoming its description. Presentation is required: every call is shown to the
/// user as a card.
pub trait Tool: ToolInfo + Send + Sync + 'static {
    /// The arguments the model sends.
    type Args: DeserializeOwned + JsonSchema + Clone + Send + Sync + 'static;
    /// What the tool returns; code mode receives it as Python values.
    type Output: Serialize + JsonSchema + Send + Sync + 'static;

    /// Workflow guidance for the model when the tool is mounted directly: when to use it,
    /// what to prefer, what to avoid. Must stand on its own (the model may not see a skill).
    fn prompt_hint(&self) -> &str;

    /// The guidance instead of [`Tool::prompt_hint`] when the tool is a code-only agent's one
    /// entry (`run_code`, whose every other tool and skill is reached from code): `None` keeps
    /// the prompt hint.
    fn code_only_prompt_hint(&self) -> Option<&str> {
        None
    }

    /// The card's header before the call runs: a friendly action and a remark.
    fn present(&self, args: &Self::Args) -> CallPresentation;

    /// The detail shown while the call runs.
    fn before_detail(&self, args: &Self::Args) -> Option<Detail>;

    /// The detail shown after the call ends, from its arguments and result.
    fn detail(&self, args: &Self::Args, result: &ToolResult<Self::Output>) -> Option<Detail>;

    /// Runs the call.
    fn call(
        &self,
        args: Self::Args,
        cx: &ToolContext,
    ) -> impl Future<Output = ToolResult<Self::Output>> + Send;

    /// What the model sees of a successful output. The default is the output itself when it
    /// is a string, else its JSON.
    fn content(&self, output: &Self::Output) -> Vec<ContentBlock> {
        default_content(output)
    }
}

/// The model-visible form of an output: a string as itself, anything else as pretty JSON.
pub fn default_content<T: Serialize>(output: &T) -> Vec<ContentBlock> {
    match serde_json::to_value(output) {
        Ok(serde_json::Value::String(text)) => vec![ContentBlock::text(text)],
        Ok(value) => vec![ContentBlock::text(
            serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string()),
        )],
        Err(err) => vec![ContentBlock::text(format!(
            "the tool's output could not be encoded: {err}"
        ))],
    }
}

/// An error a tool reports; the model reads the message (code mode raises it as `ToolError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// The stable error code.
    pub code: ErrorCode,
    /// What went wrong and what would work instead, written for the model.
    pub message: String,
}

impl ToolError {
    /// An error with a given code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
        }
    }

    /// The tool ran and failed (`TOOL_FAILED`).
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::ToolFailed, message)
    }

    /// The arguments are unusable in a way the schema could not express (`INVALID_ARGUMENTS`).
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::InvalidArguments, message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}
