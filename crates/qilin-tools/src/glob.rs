//! `glob`: find files by path pattern, newest first.

use crate::file_access::{FileScope, blocking};
use crate::workspace_path::relative_string;
use globset::GlobBuilder;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{PathKind, Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// Paths returned at most.
pub const MAX_RESULTS: usize = 100;

/// Find files by path pattern, newest first.
///
/// Lists the files in the workspace whose path matches a glob such as `**/*.rs` or
/// `src/**/test_*.py`, most recently modified first. Files ignored by `.gitignore` and hidden
/// files are skipped.
#[derive(qilin_tool::Tool)]
#[tool(name = "glob", read_only, paths = ["path"])]
pub struct Glob;

/// Arguments of `glob`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// The glob, matched against paths relative to `path`: `*` stays within one folder, `**`
    /// crosses folders, `{a,b}` is either, `[abc]` one of the characters. A pattern without
    /// `/` matches file names at any depth (`*.rs` is `**/*.rs`).
    pub pattern: String,
    /// The folder to search in, relative to the workspace root; the root when absent.
    pub path: Option<String>,
}

/// The files found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GlobOutput {
    /// Matching files relative to the workspace root, most recently modified first, at most
    /// 100.
    pub files: Vec<String>,
    /// How many files matched in all.
    pub total: usize,
    /// True when more than 100 files matched and the rest were left out.
    pub truncated: bool,
}

impl Tool for Glob {
    type Args = GlobArgs;
    type Output = GlobOutput;

    fn prompt_hint(&self) -> &str {
        "Use glob to find files by name or path pattern (e.g. `**/*.test.ts`, \
         `src/**/mod.rs`) instead of `find` or `ls -R` in bash. Results come newest first, \
         so recently edited files lead. To search inside files use grep. When the reply says \
         it was cut, narrow the pattern or the `path`."
    }

    fn present(&self, args: &GlobArgs) -> CallPresentation {
        let remark = match &args.path {
            Some(path) => format!("{} in {path}", args.pattern),
            None => args.pattern.clone(),
        };
        CallPresentation::new("Find files", remark)
    }

    fn before_detail(&self, _args: &GlobArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &GlobArgs, result: &ToolResult<GlobOutput>) -> Option<Detail> {
        match result {
            Ok(out) => Some(Detail::Text { text: render(out) }),
            Err(error) => Some(Detail::Text {
                text: error.message.clone(),
            }),
        }
    }

    async fn call(&self, args: GlobArgs, cx: &ToolContext) -> ToolResult<GlobOutput> {
        let pattern = if args.pattern.contains('/') {
            args.pattern.clone()
        } else {
            format!("**/{}", args.pattern)
        };
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|err| {
                ToolError::invalid_arguments(format!(
                    "`pattern` `{}` is not a valid glob: {err}",
                    args.pattern
                ))
            })?
            .compile_matcher();
        let cancelled = cx.cancellation().clone();
        let scope = FileScope::of(cx);
        let found = blocking(move || {
            let (workspace, base) = scope.readable(args.path.as_deref().unwrap_or("."))?;
            if base.kind() != PathKind::Folder {
                return Err(ToolError::invalid_arguments(format!(
                    "`{}` is not a folder; give the folder to search in",
                    base.relative()
                )));
            }
            let base = base.absolute();
            let mut found: Vec<(SystemTime, String)> = Vec::new();
            let walker = ignore::WalkBuilder::new(&base).require_git(false).build();
            for entry in walker.filter_map(Result::ok) {
                if cancelled.is_cancelled() {
                    break;
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let Ok(within) = entry.path().strip_prefix(&base) else {
                    continue;
                };
                if !matcher.is_match(within) {
                    continue;
                }
                // Checked beneath the workspace handle: a folder swapped for a link during
                // the walk lists nothing from outside.
                let relative = relative_string(workspace.root(), entry.path());
                let Ok(meta) = workspace.dir().symlink_metadata(&relative) else {
                    continue;
                };
                if meta.is_file() {
                    let modified = meta
                        .modified()
                        .map_or(SystemTime::UNIX_EPOCH, |m| m.into_std());
                    found.push((modified, relative));
                }
            }
            Ok(found)
        })
        .await?;
        let mut found = found;
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let total = found.len();
        Ok(GlobOutput {
            files: found
                .into_iter()
                .take(MAX_RESULTS)
                .map(|(_, p)| p)
                .collect(),
            total,
            truncated: total > MAX_RESULTS,
        })
    }

    fn content(&self, output: &GlobOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(render(output))]
    }
}

fn render(output: &GlobOutput) -> String {
    if output.files.is_empty() {
        return "No files matched.".to_string();
    }
    let mut text = output.files.join("\n");
    text.push('\n');
    if output.truncated {
        text.push_str(&format!(
            "[showing the {} most recently modified of {} matching files; narrow the pattern or \
             the path to see the others]\n",
            output.files.len(),
            output.total
        ));
    }
    text
}
