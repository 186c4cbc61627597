//! The `run_code` tool.

use crate::run::{CodeMode, RunCodeOutput};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// Run Python code in a sandbox; the code calls tools with `sdk.tool.call(name, {...})` and
/// only what it prints and the value of its last expression come back.
#[derive(qilin_tool::Tool)]
#[tool(name = "run_code")]
pub struct RunCode {
    mode: Arc<CodeMode>,
}

impl RunCode {
    /// The tool running code as `mode` says.
    pub fn new(mode: CodeMode) -> Self {
        RunCode {
            mode: Arc::new(mode),
        }
    }

    /// Code mode's settings.
    pub fn mode(&self) -> &CodeMode {
        &self.mode
    }
}

/// The arguments of `run_code`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RunCodeArgs {
    /// Python source to run. Call tools with `sdk.tool.call("name", {...})`; print what you
    /// need to see, or end with an expression whose value you want back.
    pub code: String,
    /// Milliseconds the code itself may run (time inside tool calls not counted); it can
    /// only shorten the agent's limit. Omit for the agent's limit.
    pub timeout_ms: Option<u64>,
}

const PROMPT_HINT: &str = "\
Use run_code to do in one step what would take many tool calls, and to keep intermediate \
results out of the conversation: loop over files, filter and aggregate outputs, and print only \
what matters.

The code is Python (a sandboxed interpreter: no classes inheriting from others, no generators \
or `match`; `import json, re, asyncio, math, collections, itertools, datetime` work; there is no \
file, network or environment access except through tools). Call any tool with \
`sdk.tool.call(\"name\", {\"arg\": value})` or keywords (`sdk.tool.call(\"name\", arg=value)`); \
it returns the tool's output as dicts, lists, strings and numbers. For concurrent calls use \
`await asyncio.gather(sdk.tool.call_async(\"a\", {...}), sdk.tool.call_async(\"b\", {...}))`.

A failed call raises ToolError (catch it with `except ToolError as e:`); its message is \
\"CODE: message\" and `sdk.tool.error(e)` returns {\"code\", \"message\"}. Codes: UNKNOWN_TOOL, \
INVALID_ARGUMENTS, AUTO_REVIEW_DENIED, TIMEOUT, INTERRUPTED, TOOL_FAILED.

Only what the code prints and the value of its last expression reach you; a long printed \
output is cut and saved to a file named at its end. The code's own run time, memory, \
recursion depth, number of tool calls and printed output are limited; a run past a limit \
ends with an error naming it. An uncaught exception returns a traceback whose line numbers \
are those of your code.";

impl Tool for RunCode {
    type Args = RunCodeArgs;
    type Output = RunCodeOutput;

    fn prompt_hint(&self) -> &str {
        PROMPT_HINT
    }

    fn present(&self, args: &RunCodeArgs) -> CallPresentation {
        CallPresentation::new("Run code", telling_line(&args.code))
    }

    fn before_detail(&self, args: &RunCodeArgs) -> Option<Detail> {
        Some(Detail::Code {
            language: "python".into(),
            code: args.code.clone(),
        })
    }

    fn detail(&self, _args: &RunCodeArgs, result: &ToolResult<RunCodeOutput>) -> Option<Detail> {
        let text = match result {
            Ok(output) => visible_text(output),
            Err(error) => error.message.clone(),
        };
        Some(Detail::Text { text })
    }

    async fn call(&self, args: RunCodeArgs, cx: &ToolContext) -> ToolResult<RunCodeOutput> {
        self.mode
            .run(&args.code, args.timeout_ms, cx)
            .await
            .map_err(|failure| failure.error.to_tool_error(&failure.printed))
    }

    fn content(&self, output: &RunCodeOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(visible_text(output))]
    }
}

/// What the model reads of a run: the printed text, then the value when there is one.
fn visible_text(output: &RunCodeOutput) -> String {
    let mut text = output.printed.clone();
    if !output.value.is_null() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("Value: ");
        text.push_str(&output.value.to_string());
    }
    if text.is_empty() {
        text.push_str("(the code printed nothing and returned None)");
    }
    text
}

/// The first line of `code` that does something (not blank, a comment or an import), or its
/// first non-blank line when none does.
fn telling_line(code: &str) -> &str {
    let mut lines = code.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next().unwrap_or_default();
    lines
        .find(|line| {
            !line.starts_with('#') && !line.starts_with("import ") && !line.starts_with("from ")
        })
        .unwrap_or(first)
}

#[cfg(test)]
mod tests {
    use super::telling_line;

    #[test]
    fn the_remark_skips_imports_and_comments() {
        assert_eq!(
            telling_line("import asyncio\nfrom x import y\n# look\n\nhits = run()\n"),
            "hits = run()"
        );
        assert_eq!(telling_line("import asyncio\n"), "import asyncio");
        assert_eq!(telling_line(""), "");
    }
}
