//! The `run_code` tool.

use crate::run::{CodeMode, RunCodeOutput};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// Run Python in a sandbox; it calls tools with `sdk.tool.call` and returns only what it
/// prints and the value of its last expression.
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
    /// Python source.
    pub code: String,
    /// A shorter time limit in ms for the code itself (tool calls not counted); the
    /// agent's applies when omitted.
    pub timeout_ms: Option<u64>,
}

const PROMPT_HINT: &str = "\
Use it to do in one step what would take many calls, keeping intermediate results out of the \
conversation: loop, filter, aggregate, print only what matters.

Python subset: no subclassing, generators or `match`; imports: json, re, asyncio, math, \
collections, itertools, datetime; no file, network or environment access but through tools. \
`sdk.tool.call(\"name\", {\"arg\": value})` (or `arg=value`) returns the tool's output as \
dicts, lists, strings, numbers; concurrently: \
`await asyncio.gather(sdk.tool.call_async(\"a\", {...}), ...)`.

A failed call raises ToolError, message \"CODE: message\" (`except ToolError as e`; \
`sdk.tool.error(e)` gives {\"code\", \"message\"}). Codes: UNKNOWN_TOOL, INVALID_ARGUMENTS, \
AUTO_REVIEW_DENIED, TIMEOUT, INTERRUPTED, TOOL_FAILED.

A long printed output is cut, the whole saved to a file named at its end. Run time, memory, \
recursion, tool calls and output are limited; a run past a limit ends with an error naming \
it. Tracebacks give your code's line numbers.";

/// The prompt of `run_code` in a code-only agent: the skills teach calling, results and
/// errors (a generated MCP skill says each; the sandbox's errors name a limit reached or an
/// output cut), so only the sandbox's Python is said here.
const CODE_ONLY_HINT: &str = "\
Python subset: no subclassing, generators or `match`; imports: json, re, asyncio, math, \
collections, itertools, datetime. A failed call raises ToolError.";

impl Tool for RunCode {
    type Args = RunCodeArgs;
    type Output = RunCodeOutput;

    fn prompt_hint(&self) -> &str {
        PROMPT_HINT
    }

    /// In a code-only agent there are no direct calls to weigh code against, and the skills
    /// the catalog says to read first teach calling, results and errors.
    fn code_only_prompt_hint(&self) -> Option<&str> {
        Some(CODE_ONLY_HINT)
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
