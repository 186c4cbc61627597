//! `str_replace_editor`: the text-editor tool models are trained on, with an undo history
//! kept per session in the [`EditHistory`] service.

use crate::diff::unified_diff;
use crate::edit::{find_unique, line_of, replaced};
use crate::file_access::{FileScope, blocking};
use crate::text_file::{cut_line, numbered, read_text};
use crate::workspace_path::relative_string;
use parking_lot::Mutex;
use qilin_protocol::lsp::EditDiagnostics;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{PathKind, Resolved, Tool, ToolContext, ToolError, ToolResult, Workspace};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

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
#[tool(name = "str_replace_editor", paths = ["path"])]
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
    /// For a change: the diagnostics it introduced or resolved in the file, when the agent
    /// asks for them (`lsp: {diagnostics_after_edit: true}`) and a language server handles
    /// the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<EditDiagnostics>,
}

/// The session's undo history: each file's earlier contents, most recent last (`None` when
/// the file did not exist). A host service; without it `undo_edit` is refused and the other
/// commands keep no history.
#[derive(Default)]
pub struct EditHistory {
    by_path: Mutex<HashMap<String, Vec<Option<String>>>>,
}

impl EditHistory {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    fn record(&self, path: &str, before: Option<String>) {
        self.by_path
            .lock()
            .entry(path.to_string())
            .or_default()
            .push(before);
    }

    fn pop(&self, path: &str) -> Option<Option<String>> {
        self.by_path.lock().get_mut(path)?.pop()
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
        let baseline = match args.command {
            EditorCommand::View => None,
            _ => crate::edit_diagnostics::before(cx, &args.path).await,
        };
        let scope = FileScope::of(cx);
        let history = cx.service::<EditHistory>();
        let mut output = blocking(move || run(&scope, &args, history)).await?;
        output.diagnostics = crate::edit_diagnostics::after(baseline).await;
        Ok(output)
    }

    fn content(&self, output: &StrReplaceEditorOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{}{}",
            output.text,
            crate::edit_diagnostics::text(output.diagnostics.as_ref())
        ))]
    }
}

fn run(
    scope: &FileScope,
    args: &StrReplaceEditorArgs,
    history: Option<Arc<EditHistory>>,
) -> ToolResult<StrReplaceEditorOutput> {
    let history = history.as_deref();
    match args.command {
        EditorCommand::View => {
            let (workspace, path) = scope.readable(&args.path)?;
            view(&workspace, path, args.view_range.as_deref())
        }
        EditorCommand::Create => {
            let text = need(&args.file_text, "file_text", "create")?;
            let path = scope.writable(&args.path)?;
            let before = match path.kind() {
                PathKind::File => Some(read_text(&path)?),
                _ => None,
            };
            change(
                path,
                before,
                text.clone(),
                EditorCommand::Create,
                history,
                1,
            )
        }
        EditorCommand::StrReplace => {
            let old = need(&args.old_str, "old_str", "str_replace")?;
            let new = args.new_str.clone().unwrap_or_default();
            let path = scope.writable(&args.path)?;
            let before = read_text(&path)?;
            let found = find_unique(&before, old, false, path.relative(), "old_str")?;
            let after = replaced(&before, &found, old, &new, path.relative())?;
            let first_line = line_of(&before, found[0]);
            change(
                path,
                Some(before),
                after,
                EditorCommand::StrReplace,
                history,
                first_line,
            )
        }
        EditorCommand::Insert => {
            let new = need(&args.new_str, "new_str", "insert")?;
            let at = *need(&args.insert_line, "insert_line", "insert")?;
            let path = scope.writable(&args.path)?;
            let before = read_text(&path)?;
            let after = insert_after(&before, at, new).map_err(|total| {
                ToolError::invalid_arguments(format!(
                    "`insert_line` is {at} but `{}` has {total} lines; give 0 to {total}",
                    path.relative()
                ))
            })?;
            change(
                path,
                Some(before),
                after,
                EditorCommand::Insert,
                history,
                at + 1,
            )
        }
        EditorCommand::UndoEdit => undo(scope.writable(&args.path)?, history),
    }
}

fn view(
    workspace: &Workspace,
    path: Resolved,
    range: Option<&[i64]>,
) -> ToolResult<StrReplaceEditorOutput> {
    let text = if path.kind() == PathKind::Folder {
        if range.is_some() {
            return Err(ToolError::invalid_arguments(format!(
                "`view_range` applies to files, and `{}` is a folder",
                path.relative()
            )));
        }
        list_folder(workspace, &path)
    } else {
        let content = read_text(&path)?;
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
                        path.relative()
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
        let mut text = format!("Here is `{}` with line numbers:\n", path.relative());
        text.push_str(&numbered(shown.iter().map(String::as_str), first));
        text
    };
    Ok(StrReplaceEditorOutput {
        command: EditorCommand::View,
        path: path.relative().to_string(),
        text,
        diff: None,
        added: 0,
        removed: 0,
        diagnostics: None,
    })
}

/// The folder's entries two levels deep; each entry is checked beneath the workspace handle,
/// so a folder swapped for a link during the walk lists nothing from outside.
fn list_folder(workspace: &Workspace, path: &Resolved) -> String {
    let mut entries = Vec::new();
    let walker = ignore::WalkBuilder::new(path.absolute())
        .max_depth(Some(2))
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    for entry in walker.filter_map(Result::ok).skip(1) {
        if entries.len() == MAX_LISTED {
            entries.push("[... more entries; list a subfolder to see them]".to_string());
            break;
        }
        let mut shown = relative_string(workspace.root(), entry.path());
        let Ok(meta) = workspace.dir().symlink_metadata(&shown) else {
            continue;
        };
        if meta.is_dir() {
            shown.push('/');
        }
        entries.push(shown);
    }
    format!(
        "Files and folders up to 2 levels deep in `{}`, hidden and ignored ones left out:\n{}\n",
        path.relative(),
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
    path: Resolved,
    before: Option<String>,
    after: String,
    command: EditorCommand,
    history: Option<&EditHistory>,
    first_changed_line: usize,
) -> ToolResult<StrReplaceEditorOutput> {
    let shown = path.relative().to_string();
    path.write_atomically(after.as_bytes())
        .map_err(|err| ToolError::failed(format!("`{shown}` could not be written: {err}")))?;
    let diff = unified_diff(&shown, before.as_deref().unwrap_or_default(), &after);
    let verb = match (command, before.is_some()) {
        (EditorCommand::Create, false) => "Created",
        (EditorCommand::Create, true) => "Replaced the content of",
        _ => "Edited",
    };
    if let Some(history) = history {
        history.record(&shown, before);
    }
    let text = format!(
        "{verb} `{shown}`. The changed region, with line numbers:\n{}Check that it is as intended.",
        snippet(&after, first_changed_line, diff.added as usize)
    );
    Ok(StrReplaceEditorOutput {
        command,
        path: shown,
        text,
        diff: Some(diff.text),
        added: diff.added,
        removed: diff.removed,
        diagnostics: None,
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

fn undo(path: Resolved, history: Option<&EditHistory>) -> ToolResult<StrReplaceEditorOutput> {
    let history = history.ok_or_else(|| {
        ToolError::failed("undo is not available in this runtime (it keeps no edit history)")
    })?;
    let shown = path.relative().to_string();
    let Some(before) = history.pop(&shown) else {
        return Err(ToolError::invalid_arguments(format!(
            "there is no edit of `{shown}` to undo in this session"
        )));
    };
    let current = match path.kind() {
        PathKind::File => read_text(&path).unwrap_or_default(),
        _ => String::new(),
    };
    let text = match &before {
        Some(content) => {
            path.write_atomically(content.as_bytes()).map_err(|err| {
                ToolError::failed(format!("`{shown}` could not be restored: {err}"))
            })?;
            format!("Reverted the last edit of `{shown}`.")
        }
        None => {
            path.remove_file().map_err(|err| {
                ToolError::failed(format!("`{shown}` could not be removed: {err}"))
            })?;
            format!("Removed `{shown}`, which the undone edit had created.")
        }
    };
    let diff = unified_diff(&shown, &current, before.as_deref().unwrap_or_default());
    Ok(StrReplaceEditorOutput {
        command: EditorCommand::UndoEdit,
        path: shown,
        text,
        diff: Some(diff.text),
        added: diff.added,
        removed: diff.removed,
        diagnostics: None,
    })
}
