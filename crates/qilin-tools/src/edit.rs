//! `edit`: replace an exact string in a file, with a unified diff of the change.

use crate::diff::unified_diff;
use crate::file_access::{FileScope, blocking};
use crate::text_file::read_text;
use qilin_protocol::lsp::EditDiagnostics;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Replace exact text in a file.
///
/// Replaces `old_string` with `new_string` and returns the unified diff. The text must occur
/// exactly once unless `replace_all` is set; otherwise the call fails and says how many
/// times, and on which lines, it occurs.
#[derive(qilin_tool::Tool)]
#[tool(name = "edit", paths = ["path"])]
pub struct Edit;

/// Arguments of `edit`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// The file, relative to the workspace root (an absolute path must lie inside it).
    pub path: String,
    /// The exact text to replace, including whitespace and indentation, without line numbers.
    pub old_string: String,
    /// The text to put in its place (may be empty to delete `old_string`).
    pub new_string: String,
    /// Replace every occurrence instead of exactly one (default false).
    pub replace_all: Option<bool>,
}

/// What `edit` changed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EditOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// How many occurrences were replaced.
    pub replacements: usize,
    /// Line numbers (from 1, in the file before the edit) where each replaced text started.
    pub lines: Vec<usize>,
    /// The change as a unified diff.
    pub diff: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// The diagnostics the edit introduced or resolved in the file, when the agent asks for
    /// them (`lsp: {diagnostics_after_edit: true}`) and a language server handles the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<EditDiagnostics>,
}

/// The largest file an edit may produce; a larger result is refused before it is built.
pub const MAX_EDITED_BYTES: usize = 64 * 1024 * 1024;

/// Byte offsets of every non-overlapping occurrence of `needle` in `haystack`.
pub(crate) fn occurrences(haystack: &str, needle: &str) -> Vec<usize> {
    haystack.match_indices(needle).map(|(at, _)| at).collect()
}

/// Replaces the occurrences of `old` at `found` by `new` in `text`, refusing a result larger
/// than [`MAX_EDITED_BYTES`] before building it (`replace_all` of a short string by a long one
/// can grow a file a thousandfold).
pub(crate) fn replaced(
    text: &str,
    found: &[usize],
    old: &str,
    new: &str,
    path: &str,
) -> ToolResult<String> {
    let size = (text.len() as u128 + found.len() as u128 * new.len() as u128)
        .saturating_sub(found.len() as u128 * old.len() as u128);
    if size > MAX_EDITED_BYTES as u128 {
        return Err(ToolError::invalid_arguments(format!(
            "the edit would make `{path}` {size} bytes ({} replacements), over the \
             {MAX_EDITED_BYTES}-byte limit for edited files; replace fewer occurrences or \
             shorter text",
            found.len()
        )));
    }
    let mut out = String::with_capacity(size as usize);
    let mut from = 0;
    for &at in found {
        out.push_str(&text[from..at]);
        out.push_str(new);
        from = at + old.len();
    }
    out.push_str(&text[from..]);
    Ok(out)
}

/// The line number (from 1) of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].bytes().filter(|&b| b == b'\n').count() + 1
}

/// The line numbers (from 1) of ascending byte offsets, in one pass over `text`.
pub(crate) fn lines_of(text: &str, offsets: &[usize]) -> Vec<usize> {
    let mut lines = Vec::with_capacity(offsets.len());
    let (mut line, mut from) = (1, 0);
    for &at in offsets {
        line += text.as_bytes()[from..at]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        from = at;
        lines.push(line);
    }
    lines
}

/// Checks that `old` occurs in `text` (exactly once unless `all`), naming the count and the
/// lines otherwise. Returns the byte offsets of the occurrences.
pub(crate) fn find_unique(
    text: &str,
    old: &str,
    all: bool,
    path: &str,
    argument: &str,
) -> ToolResult<Vec<usize>> {
    if old.is_empty() {
        return Err(ToolError::invalid_arguments(format!(
            "`{argument}` is empty; give the exact text to replace (to create a file, write it)"
        )));
    }
    let found = occurrences(text, old);
    match found.len() {
        0 => Err(ToolError::invalid_arguments(format!(
            "`{argument}` was not found in `{path}` (0 occurrences). It must match the file \
             exactly, including whitespace and indentation, and must not include line \
             numbers; read the file again and copy the text from it"
        ))),
        1 => Ok(found),
        _ if all => Ok(found),
        n => {
            let lines: Vec<String> = lines_of(text, &found)
                .iter()
                .map(ToString::to_string)
                .collect();
            Err(ToolError::invalid_arguments(format!(
                "`{argument}` occurs {n} times in `{path}` (at lines {}); include more \
                 surrounding text to make it unique, or replace every occurrence",
                lines.join(", ")
            )))
        }
    }
}

impl Tool for Edit {
    type Args = EditArgs;
    type Output = EditOutput;

    fn prompt_hint(&self) -> &str {
        "Use edit for targeted changes to an existing file; read the file first. Copy \
         `old_string` exactly from the file (indentation included, line numbers excluded) \
         and include enough surrounding lines to make it unique. To rename something \
         everywhere in the file set `replace_all`. Prefer several small edits over rewriting \
         a file with write."
    }

    fn present(&self, args: &EditArgs) -> CallPresentation {
        CallPresentation::new("Edit", &args.path)
    }

    fn before_detail(&self, args: &EditArgs) -> Option<Detail> {
        let diff = unified_diff(&args.path, &args.old_string, &args.new_string);
        Some(Detail::Diff {
            path: args.path.clone(),
            diff: diff.text,
            added: diff.added,
            removed: diff.removed,
        })
    }

    fn detail(&self, args: &EditArgs, result: &ToolResult<EditOutput>) -> Option<Detail> {
        match result {
            Ok(out) => Some(Detail::Diff {
                path: out.path.clone(),
                diff: out.diff.clone(),
                added: out.added,
                removed: out.removed,
            }),
            Err(error) => Some(Detail::Text {
                text: format!("{}: {}", args.path, error.message),
            }),
        }
    }

    async fn call(&self, args: EditArgs, cx: &ToolContext) -> ToolResult<EditOutput> {
        if args.old_string == args.new_string {
            return Err(ToolError::invalid_arguments(
                "`old_string` and `new_string` are identical; there is nothing to change",
            ));
        }
        let baseline = crate::edit_diagnostics::before(cx, &args.path).await;
        let scope = FileScope::of(cx);
        let mut output = blocking(move || {
            let path = scope.writable(&args.path)?;
            let shown = path.relative().to_string();
            let before = read_text(&path)?;
            let all = args.replace_all == Some(true);
            let found = find_unique(&before, &args.old_string, all, &shown, "old_string")?;
            let after = replaced(&before, &found, &args.old_string, &args.new_string, &shown)?;
            path.write_atomically(after.as_bytes()).map_err(|err| {
                ToolError::failed(format!("`{shown}` could not be written: {err}"))
            })?;
            let diff = unified_diff(&shown, &before, &after);
            Ok(EditOutput {
                replacements: found.len(),
                lines: lines_of(&before, &found),
                path: shown,
                diff: diff.text,
                added: diff.added,
                removed: diff.removed,
                diagnostics: None,
            })
        })
        .await?;
        output.diagnostics = crate::edit_diagnostics::after(baseline).await;
        Ok(output)
    }

    fn content(&self, output: &EditOutput) -> Vec<ContentBlock> {
        let times = if output.replacements == 1 {
            "1 replacement".to_string()
        } else {
            format!("{} replacements", output.replacements)
        };
        vec![ContentBlock::text(format!(
            "Edited `{}` ({times}, +{} -{}):\n{}{}",
            output.path,
            output.added,
            output.removed,
            output.diff,
            crate::edit_diagnostics::text(output.diagnostics.as_ref())
        ))]
    }
}
