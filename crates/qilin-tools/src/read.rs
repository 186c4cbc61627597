//! `read`: a text file with line numbers.

use crate::file_access::{FileScope, blocking};
use crate::text_file::{cut_line, numbered, read_text};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Lines returned when the call gives no `limit`.
pub const DEFAULT_LINE_LIMIT: usize = 2000;

/// Read a text file with line numbers.
///
/// Returns the file's lines numbered from 1, as `cat -n` shows them: up to 2000 lines from
/// the start unless `offset`/`limit` say otherwise; lines longer than 2000 characters are cut
/// with a note.
#[derive(qilin_tool::Tool)]
#[tool(name = "read", read_only, paths = ["path"])]
pub struct Read;

/// Arguments of `read`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The file, relative to the workspace root (an absolute path must lie inside it).
    pub path: String,
    /// The line number to start at, from 1 (default 1).
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    /// How many lines to return at most (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

/// The lines read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReadOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The lines read, without numbers, each ending in a line break; over-long lines are cut.
    pub text: String,
    /// The number of the first line returned (from 1); 0 when the file is empty.
    pub first_line: usize,
    /// The number of the last line returned; 0 when nothing was returned.
    pub last_line: usize,
    /// How many lines the file has in all.
    pub total_lines: usize,
    /// Numbers of the lines cut because they were longer than 2000 characters.
    pub cut_lines: Vec<usize>,
}

impl Tool for Read {
    type Args = ReadArgs;
    type Output = ReadOutput;

    fn prompt_hint(&self) -> &str {
        "Use read to look at a file before you edit it; the line numbers it shows are for \
         orientation and are not part of the file, so never copy them into `edit`'s \
         `old_string`. For a large file read the part you need with `offset` and `limit` \
         (the reply says how many lines the file has). Use grep to find where something is \
         first. For images use read_image; for folders use glob."
    }

    fn present(&self, args: &ReadArgs) -> CallPresentation {
        let remark = match (args.offset, args.limit) {
            (None, None) => args.path.clone(),
            (offset, limit) => {
                let first = offset.unwrap_or(1);
                let last = first + limit.unwrap_or(DEFAULT_LINE_LIMIT).saturating_sub(1);
                format!("{}:{first}-{last}", args.path)
            }
        };
        CallPresentation::new("Read", remark)
    }

    fn before_detail(&self, _args: &ReadArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &ReadArgs, result: &ToolResult<ReadOutput>) -> Option<Detail> {
        result.as_ref().ok().map(|out| Detail::Code {
            language: language_of(&out.path).to_string(),
            code: out.text.clone(),
        })
    }

    async fn call(&self, args: ReadArgs, cx: &ToolContext) -> ToolResult<ReadOutput> {
        let scope = FileScope::of(cx);
        blocking(move || read_lines(&scope, &args)).await
    }

    fn content(&self, output: &ReadOutput) -> Vec<ContentBlock> {
        if output.total_lines == 0 {
            return vec![ContentBlock::text(format!("`{}` is empty.", output.path))];
        }
        let mut text = numbered(output.text.lines(), output.first_line);
        if output.first_line > 1 || output.last_line < output.total_lines {
            text.push_str(&format!(
                "[lines {}-{} of {}; use offset/limit to read more]\n",
                output.first_line, output.last_line, output.total_lines
            ));
        }
        vec![ContentBlock::text(text)]
    }
}

fn read_lines(scope: &FileScope, args: &ReadArgs) -> ToolResult<ReadOutput> {
    let (_, path) = scope.readable(&args.path)?;
    let text = read_text(&path)?;
    let lines: Vec<&str> = text.lines().collect();
    let total_lines = lines.len();
    let offset = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(DEFAULT_LINE_LIMIT);
    if offset == 0 || limit == 0 {
        return Err(ToolError::invalid_arguments(
            "`offset` and `limit` count lines from 1; give values of at least 1",
        ));
    }
    if offset > total_lines.max(1) {
        return Err(ToolError::invalid_arguments(format!(
            "`offset` is {offset} but `{}` has only {total_lines} lines",
            path.relative()
        )));
    }
    let mut out = ReadOutput {
        path: path.relative().to_string(),
        text: String::new(),
        first_line: 0,
        last_line: 0,
        total_lines,
        cut_lines: Vec::new(),
    };
    for (index, line) in lines.iter().enumerate().skip(offset - 1).take(limit) {
        let (shown, was_cut) = cut_line(line);
        if was_cut {
            out.cut_lines.push(index + 1);
        }
        out.text.push_str(&shown);
        out.text.push('\n');
        if out.first_line == 0 {
            out.first_line = index + 1;
        }
        out.last_line = index + 1;
    }
    Ok(out)
}

/// The highlighter's language name for a path, from its extension.
pub fn language_of(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    match extension {
        "rs" => "rust",
        "py" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" | "tsx" => "typescript",
        "go" => "go",
        "sh" | "bash" => "bash",
        "md" => "markdown",
        "json" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "html" => "html",
        "css" => "css",
        "c" | "h" => "c",
        "cpp" | "hpp" | "cc" => "cpp",
        "java" => "java",
        _ => "text",
    }
}
