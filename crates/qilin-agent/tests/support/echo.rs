//! The `echo` test tool: says its text back as `echo: TEXT`.

use qilin_protocol::{CallPresentation, Detail};
use qilin_tool::{Tool, ToolContext, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Clone, Deserialize, JsonSchema)]
pub struct EchoArgs {
    /// The text.
    pub text: String,
}

/// Says the text back.
#[derive(qilin_tool::Tool)]
#[tool(name = "echo")]
pub struct Echo;

impl Tool for Echo {
    type Args = EchoArgs;
    type Output = String;
    fn prompt_hint(&self) -> &str {
        "Repeats text."
    }
    fn present(&self, args: &EchoArgs) -> CallPresentation {
        CallPresentation::new("Echo", &args.text)
    }
    fn before_detail(&self, _: &EchoArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &EchoArgs, _: &ToolResult<String>) -> Option<Detail> {
        None
    }
    async fn call(&self, args: EchoArgs, _: &ToolContext) -> ToolResult<String> {
        Ok(format!("echo: {}", args.text))
    }
}
