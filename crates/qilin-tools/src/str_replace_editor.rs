//! `str_replace_editor`: the text-editor tool models are trained on, with an undo history
//! kept per session in the [`EditHistory`] service.

use crate::atomic_write::write_atomically;
use crate::diff::unified_diff;
use crate::edit::{find_unique, line_of};
use crate::jobs::lock;
use crate::text_file::{cut_line, numbered, read_text};
use crate::workspace_path::{self, WorkspacePath, relative_string};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Lines of context shown around an edit.
const SNIPPET_CONTEXT: usize = 4;
/// Entries a folder view lists at most.
const MAX_LISTED: usize = 500;

/// View, create and edit files.
///
/// `view` shows a file with line numbers (or lists a folder two levels deep), `create`
/// writes a file, `str_replace` replaces text that occurs exactly once, `insert` adds text
/// after a line, and `undo_edit` reverts the last change this tool made to a file.
#[derive(qilin_tool::Tool)]
#[tool(name = "str_replace_editor")]
pub struct StrReplaceEditor;

/// The editor's commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditorCommand {
    /// show a file with line numbers (optionally `view_range`), or list a folder
    View,
    /// write `file_text` as the file (replacing one that exists)
    Create,
    /// replace `old_str`, which must occur exactly once, with `new_str`
    StrReplace,
    /// insert `new_str` after line `insert_line` (0 inserts at the top)
    Insert,
    /// revert the last change this tool made to the file
    UndoEdit,
}

/// Arguments of `str_replace_editor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StrReplaceEditorArgs {
    /// The command to run
    pub command: EditorCommand,
    /// The file or folder, relative to the workspace root (an absolute path must lie inside it).
    pub path: String,
    /// For `create`: the file's complete content.
    pub file_text: Option<String>,
    /// For `str_replace`: the exact text to replace; it must occur exactly once.
    pub old_str: Option<String>,
    /// For `str_replace`: the replacement (empty or absent deletes `old_str`). For `insert`:
    /// the text to insert.
    pub new_str: Option<String>,
    /// For `insert`: the line after which `new_str` goes (0 for the top of the file).
    pub insert_line: Option<usize>,
    /// For `view` of a file: `[first, last]` line numbers from 1; `last` may be -1 for the
    /// end of the file.
    pub view_range: Option<Vec<i64>>,
}

/// What `str_replace_editor` did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StrReplaceEditorOutput {
    /// The command that ran.
    pub command: EditorCommand,
    /// The file or folder, relative to the workspace root.
    pub path: String,
    /// For `view`: the numbered lines or the folder listing. For a change: a confirmation with
    /// the changed region, numbered.
    pub text: String,
    /// For a change: the unified diff of the file.
    pub diff: Option<String>,
    /// Lines added by a change.
    pub added: u32,
    /// Lines removed by a change.
    pub removed: u32,
}

/// The session's undo history: each file's earlier contents, most recent last (`None` when
/// the file did not exist). A host service; without it `undo_edit` is refused and the other
/// commands keep no history.
#[derive(Default)]
pub struct EditHistory {
    by_path: Mutex<HashMap<PathBuf, Vec<Option<String>>>>,
}

impl EditHistory {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    fn record(&self, path: &Path, before: Option<String>) {
        lock(&self.by_path)
            .entry(path.to_path_buf())
            .or_default()
            .push(before);
    }

    fn pop(&self, path: &Path) -> Option<Option<String>> {
        lock(&self.by_path).get_mut(path)?.pop()
    }
}

fn need<'a, T>(value: &'a Option<T>, argument: &str, command: &str) -> ToolResult<&'a T> {
    value.as_ref().ok_or_else(|| {
        ToolError::invalid_arguments(format!("`{command}` needs the argument `{argument}`"))
    })
}

impl Tool for StrReplaceEditor {
    type Args = StrReplaceEditorArgs;
    type Output = StrReplaceEditorOutput;

    fn prompt_hint(&self) -> &str {
        "View a file before changing it. For `str_replace`, copy `old_str` exactly from the \
         file (whitespace included, line numbers excluded) with enough context to occur \
         exactly once; for `insert`, `insert_line` is the line after which the text goes. \
         After a change the edited region is shown with line numbers: check it. Use \
         `undo_edit` to revert your last change to a file."
    }

    fn present(&self, args: &StrReplaceEditorArgs) -> CallPresentation {
        let action = match args.command {
            EditorCommand::View => "View",
            EditorCommand::Create => "Create",
            EditorCommand::StrReplace => "Edit",
            EditorCommand::Insert => "Insert into",
            EditorCommand::UndoEdit => "Undo edit",
        };
        let remark = match (&args.command, args.view_range.as_deref()) {
            (EditorCommand::View, Some([first, last])) => {
                format!(
                    "{}:{first}-{}",
                    args.path,
                    if *last < 0 {
                        "end".to_string()
                    } else {
                        last.to_string()
                    }
                )
            }
            (EditorCommand::Insert, _) => {
                format!("{} after line {}", args.path, args.insert_line.unwrap_or(0))
            }
            _ => args.path.clone(),
        };
        CallPresentation::new(action, remark)
    }

    fn before_detail(&self, args: &StrReplaceEditorArgs) -> Option<Detail> {
        match args.command {
            EditorCommand::StrReplace => {
                let old = args.old_str.as_deref().unwrap_or_default();
                let new = args.new_str.as_deref().unwrap_or_default();
                let diff = unified_diff(&args.path, old, new);
                Some(Detail::Diff {
                    path: args.path.clone(),
                    diff: diff.text,
                    added: diff.added,
                    removed: diff.removed,
                })
            }
            _ => None,
        }
    }

    fn detail(
        &self,
        _args: &StrReplaceEditorArgs,
        result: &ToolResult<StrReplaceEditorOutput>,
    ) -> Option<Detail> {
        match result {
            Ok(StrReplaceEditorOutput {
                diff: Some(diff),
                path,
                added,
                removed,
                ..
            }) => Some(Detail::Diff {
                path: path.clone(),
                diff: diff.clone(),
                added: *added,
                removed: *removed,
            }),
            Ok(out) => Some(Detail::Text {
                text: out.text.clone(),
            }),
            Err(error) => Some(Detail::Text {
                text: error.message.clone(),
            }),
        }
    }

    async fn call(
        &self,
        args: StrReplaceEditorArgs,
        cx: &ToolContext,
    ) -> ToolResult<StrReplaceEditorOutput> {
        let root = cx.workspace();
        let path = workspace_path::resolve(root, &args.path)?;
        let history = cx.service::<EditHistory>();
        match args.command {
            EditorCommand::View => view(root, path, args.view_range.as_deref()),
            EditorCommand::Create => {
                let text = need(&args.file_text, "file_text", "create")?;
                let before = std::fs::read_to_string(&path.absolute).ok();
                change(
                    path,
                    before,
                    text.clone(),
                    EditorCommand::Create,
                    history.as_deref(),
                    1,
                )
            }
            EditorCommand::StrReplace => {
                let old = need(&args.old_str, "old_str", "str_replace")?;
                let new = args.new_str.clone().unwrap_or_default();
                let before = read_text(root, &path)?;
                let found = find_unique(&before, old, false, &path.relative, "old_str")?;
                let after = before.replacen(old.as_str(), &new, 1);
                let first_line = line_of(&before, found[0]);
                change(
                    path,
                    Some(before),
                    after,
                    EditorCommand::StrReplace,
                    history.as_deref(),
                    first_line,
                )
            }
            EditorCommand::Insert => {
                let new = need(&args.new_str, "new_str", "insert")?;
                let at = *need(&args.insert_line, "insert_line", "insert")?;
                let before = read_text(root, &path)?;
                let after = insert_after(&before, at, new).map_err(|total| {
                    ToolError::invalid_arguments(format!(
                        "`insert_line` is {at} but `{}` has {total} lines; give 0 to {total}",
                        path.relative
                    ))
                })?;
                change(
                    path,
                    Some(before),
                    after,
                    EditorCommand::Insert,
                    history.as_deref(),
                    at + 1,
                )
            }
            EditorCommand::UndoEdit => undo(path, history.as_deref()),
        }
    }

    fn content(&self, output: &StrReplaceEditorOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(output.text.clone())]
    }
}

fn view(
    root: &Path,
    path: WorkspacePath,
    range: Option<&[i64]>,
) -> ToolResult<StrReplaceEditorOutput> {
    let text = if path.absolute.is_dir() {
        if range.is_some() {
            return Err(ToolError::invalid_arguments(format!(
                "`view_range` applies to files, and `{}` is a folder",
                path.relative
            )));
        }
        list_folder(root, &path)
    } else {
        let content = read_text(root, &path)?;
        let lines: Vec<&str> = content.lines().collect();
        let total = lines.len();
        let (first, last) = match range {
            None => (1, total),
            Some([first, last]) => {
                let last_line = if *last == -1 { total as i64 } else { *last };
                if *first < 1 || last_line < *first || last_line > total as i64 {
                    return Err(ToolError::invalid_arguments(format!(
                        "`view_range` [{first}, {last}] does not fit `{}`, which has {total} \
                         lines; give [first, last] with 1 <= first <= last <= {total}, or last = -1",
                        path.relative
                    )));
                }
                (*first as usize, last_line as usize)
            }
            Some(other) => {
                return Err(ToolError::invalid_arguments(format!(
                    "`view_range` must be two numbers [first, last], got {} numbers",
                    other.len()
                )));
            }
        };
        let shown: Vec<String> = lines
            .get(first.saturating_sub(1)..last)
            .unwrap_or_default()
            .iter()
            .map(|line| cut_line(line).0)
            .collect();
        let mut text = format!("Here is `{}` with line numbers:\n", path.relative);
        text.push_str(&numbered(shown.iter().map(String::as_str), first));
        text
    };
    Ok(StrReplaceEditorOutput {
        command: EditorCommand::View,
        path: path.relative,
        text,
        diff: None,
        added: 0,
        removed: 0,
    })
}

fn list_folder(root: &Path, path: &WorkspacePath) -> String {
    let mut entries = Vec::new();
    let walker = ignore::WalkBuilder::new(&path.absolute)
        .max_depth(Some(2))
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    for entry in walker.filter_map(Result::ok).skip(1) {
        if entries.len() == MAX_LISTED {
            entries.push("[... more entries; list a subfolder to see them]".to_string());
            break;
        }
        let mut shown = relative_string(root, entry.path());
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            shown.push('/');
        }
        entries.push(shown);
    }
    format!(
        "Files and folders up to 2 levels deep in `{}`, hidden and ignored ones left out:\n{}\n",
        path.relative,
        entries.join("\n")
    )
}

/// `text` with `new` inserted after line `at` (0 for the top), or the line count when `at`
/// is past the end.
fn insert_after(text: &str, at: usize, new: &str) -> Result<String, usize> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if at > lines.len() {
        return Err(lines.len());
    }
    let mut out = String::with_capacity(text.len() + new.len() + 1);
    for line in &lines[..at] {
        out.push_str(line);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(new);
    if !new.ends_with('\n') && at < lines.len() {
        out.push('\n');
    }
    for line in &lines[at..] {
        out.push_str(line);
    }
    Ok(out)
}

fn change(
    path: WorkspacePath,
    before: Option<String>,
    after: String,
    command: EditorCommand,
    history: Option<&EditHistory>,
    first_changed_line: usize,
) -> ToolResult<StrReplaceEditorOutput> {
    write_atomically(&path.absolute, after.as_bytes()).map_err(|err| {
        ToolError::failed(format!("`{}` could not be written: {err}", path.relative))
    })?;
    let diff = unified_diff(
        &path.relative,
        before.as_deref().unwrap_or_default(),
        &after,
    );
    let verb = match (command, before.is_some()) {
        (EditorCommand::Create, false) => "Created",
        (EditorCommand::Create, true) => "Replaced the content of",
        _ => "Edited",
    };
    if let Some(history) = history {
        history.record(&path.absolute, before);
    }
    let text = format!(
        "{verb} `{}`. The changed region, with line numbers:\n{}Check that it is as intended.",
        path.relative,
        snippet(&after, first_changed_line, diff.added as usize)
    );
    Ok(StrReplaceEditorOutput {
        command,
        path: path.relative,
        text,
        diff: Some(diff.text),
        added: diff.added,
        removed: diff.removed,
    })
}

/// Lines `first..first + count` of `text`, numbered, with a few lines of context each side.
fn snippet(text: &str, first: usize, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = first.saturating_sub(SNIPPET_CONTEXT).max(1);
    let end = (first + count.max(1) + SNIPPET_CONTEXT).min(lines.len());
    if start > end {
        return String::new();
    }
    let shown: Vec<String> = lines[start - 1..end]
        .iter()
        .map(|l| cut_line(l).0)
        .collect();
    numbered(shown.iter().map(String::as_str), start)
}

fn undo(path: WorkspacePath, history: Option<&EditHistory>) -> ToolResult<StrReplaceEditorOutput> {
    let history = history.ok_or_else(|| {
        ToolError::failed("undo is not available in this runtime (it keeps no edit history)")
    })?;
    let Some(before) = history.pop(&path.absolute) else {
        return Err(ToolError::invalid_arguments(format!(
            "there is no edit of `{}` to undo in this session",
            path.relative
        )));
    };
    let current = std::fs::read_to_string(&path.absolute).unwrap_or_default();
    let text = match &before {
        Some(content) => {
            write_atomically(&path.absolute, content.as_bytes()).map_err(|err| {
                ToolError::failed(format!("`{}` could not be restored: {err}", path.relative))
            })?;
            format!("Reverted the last edit of `{}`.", path.relative)
        }
        None => {
            std::fs::remove_file(&path.absolute).map_err(|err| {
                ToolError::failed(format!("`{}` could not be removed: {err}", path.relative))
            })?;
            format!(
                "Removed `{}`, which the undone edit had created.",
                path.relative
            )
        }
    };
    let diff = unified_diff(
        &path.relative,
        &current,
        before.as_deref().unwrap_or_default(),
    );
    Ok(StrReplaceEditorOutput {
        command: EditorCommand::UndoEdit,
        path: path.relative,
        text,
        diff: Some(diff.text),
        added: diff.added,
        removed: diff.removed,
    })
}
