//! Small tools shared by the tests and benches of Qilin's crates.
//!
//! Each is a complete [`Tool`] with documented arguments, so it passes validation, review
//! and presentation like a real one:
//!
//! - [`Echo`] (`echo`): says its text back, optionally repeated, with its length;
//! - [`Noop`] (`noop`): does nothing and returns `true`, for measuring the layers around a call;
//! - [`Secret`] (`secret`): code-mode-only, returns `"s3cret"`.
//!
//! The doc comments of their argument and output types are for Rust readers only:
//! `#[schemars(description = "")]` keeps them out of the JSON Schemas and Python stubs, which
//! tests pin field by field.

use qilin_protocol::{CallPresentation, Detail};
use qilin_tool::{Tool, ToolContext, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of [`Echo`].
#[derive(Clone, Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct EchoArgs {
    /// The text to say back.
    pub text: String,
    /// How many times to repeat it.
    pub times: Option<u32>,
}

/// What [`Echo`] returns.
#[derive(Serialize, JsonSchema)]
#[schemars(description = "")]
pub struct EchoOutput {
    /// The text, repeated `times` times (once by default).
    pub text: String,
    /// Its length in characters.
    pub length: usize,
}

/// Says the text back.
#[derive(qilin_tool::Tool)]
#[tool(name = "echo")]
pub struct Echo;

impl Tool for Echo {
    type Args = EchoArgs;
    type Output = EchoOutput;
    fn prompt_hint(&self) -> &str {
        "Use echo to repeat text verbatim."
    }
    fn present(&self, args: &EchoArgs) -> CallPresentation {
        CallPresentation::new("Echo", &args.text)
    }
    fn before_detail(&self, _: &EchoArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &EchoArgs, result: &ToolResult<EchoOutput>) -> Option<Detail> {
        result.as_ref().ok().map(|output| Detail::Text {
            text: output.text.clone(),
        })
    }
    async fn call(&self, args: EchoArgs, _: &ToolContext) -> ToolResult<EchoOutput> {
        let text = args.text.repeat(args.times.unwrap_or(1) as usize);
        Ok(EchoOutput {
            length: text.chars().count(),
            text,
        })
    }
}

/// Arguments of [`Noop`]: all optional, so it can be called with none or with some to validate.
#[derive(Clone, Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct NoopArgs {
    /// Any text.
    pub text: Option<String>,
    /// Any number.
    pub count: Option<u32>,
}

/// Does nothing.
#[derive(qilin_tool::Tool)]
#[tool(name = "noop")]
pub struct Noop;

impl Tool for Noop {
    type Args = NoopArgs;
    type Output = bool;
    fn prompt_hint(&self) -> &str {
        "For tests and benchmarks."
    }
    fn present(&self, args: &NoopArgs) -> CallPresentation {
        CallPresentation::new("Do nothing", args.text.as_deref().unwrap_or_default())
    }
    fn before_detail(&self, _: &NoopArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &NoopArgs, _: &ToolResult<bool>) -> Option<Detail> {
        None
    }
    async fn call(&self, _: NoopArgs, _: &ToolContext) -> ToolResult<bool> {
        Ok(true)
    }
}

/// Arguments of a tool that takes none.
#[derive(Clone, Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct NoArgs {}

/// Tells the secret; reachable from code only.
#[derive(qilin_tool::Tool)]
#[tool(name = "secret", code_mode_only)]
pub struct Secret;

impl Tool for Secret {
    type Args = NoArgs;
    type Output = String;
    fn prompt_hint(&self) -> &str {
        ""
    }
    fn present(&self, _: &NoArgs) -> CallPresentation {
        CallPresentation::new("Tell the secret", "")
    }
    fn before_detail(&self, _: &NoArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &NoArgs, _: &ToolResult<String>) -> Option<Detail> {
        None
    }
    async fn call(&self, _: NoArgs, _: &ToolContext) -> ToolResult<String> {
        Ok("s3cret".into())
    }
}
