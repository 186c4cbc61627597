//! `grep`: search file contents with a regular expression, on the ripgrep crates.

use crate::file_access::{FileScope, blocking};
use crate::grep_search::{FileHits, SearchRequest, search};
use crate::stop_flag::StopOnDrop;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{PathKind, Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Entries returned when the call gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = 200;
/// The most context lines a call may ask for on each side of a match.
pub const MAX_CONTEXT: usize = 20;

/// Search file contents with a regular expression.
///
/// Searches the files in the workspace with a Rust-syntax regular expression, as ripgrep
/// does. Files ignored by `.gitignore`, hidden files and binary files are skipped. Returns the
/// matching files, the matching lines with their numbers, or the count of matching lines per
/// file.
#[derive(qilin_tool::Tool)]
#[tool(name = "grep", read_only, paths = ["path"])]
pub struct Grep;

/// What `grep` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrepMode {
    /// the matching lines with their file and line number (and context lines when asked)
    Content,
    /// only the paths of the files that contain a match (the default)
    #[default]
    FilesWithMatches,
    /// the number of matching lines in each file
    Count,
}

/// Arguments of `grep`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// The regular expression to search for (Rust regex syntax: escape `(`, `{`, `.` and the
    /// like with `\` to match them literally). Matches within one line.
    pub pattern: String,
    /// The file or folder to search, relative to the workspace root; the whole workspace when
    /// absent.
    pub path: Option<String>,
    /// Only search files whose path matches this glob, e.g. `*.rs`, `src/**/*.ts`,
    /// `*.{js,jsx}`; a glob without `/` matches file names at any depth.
    pub glob: Option<String>,
    /// Match regardless of letter case (default false).
    pub case_insensitive: Option<bool>,
    /// What to return
    pub output_mode: Option<GrepMode>,
    /// In `content` mode: lines of context to show before and after each match (default 0,
    /// at most 20).
    #[schemars(range(max = 20))]
    pub context: Option<usize>,
    /// The most entries to return: matching lines in `content` mode, files otherwise
    /// (default 200). The reply says when it cut.
    #[schemars(range(min = 1))]
    pub head_limit: Option<usize>,
}

/// One line of a match listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GrepLine {
    /// The line number, from 1.
    pub line: u64,
    /// The line's text without its line break (cut when over 2000 characters).
    pub text: String,
    /// True for a context line around a match, false for a matching line.
    pub context: bool,
}

/// A file with matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GrepFile {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Matching lines in the file (`count` and `content` modes; absent in
    /// `files_with_matches` mode, which stops at a file's first match).
    pub match_count: Option<u64>,
    /// In `content` mode: the matching lines and their context, in file order.
    pub lines: Vec<GrepLine>,
}

/// The result of a search.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GrepOutput {
    /// The mode the search ran in.
    pub mode: GrepMode,
    /// The files with matches, sorted by path, up to `head_limit` entries.
    pub files: Vec<GrepFile>,
    /// How many files have a match in all.
    pub total_files: usize,
    /// How many matching lines were found in all (`content` and `count` modes).
    pub total_matches: u64,
    /// True when entries beyond `head_limit` were left out.
    pub truncated: bool,
}

impl Tool for Grep {
    type Args = GrepArgs;
    type Output = GrepOutput;

    fn prompt_hint(&self) -> &str {
        "Use grep to find where something is defined or used; never run grep or rg through \
         bash. Start with the default `files_with_matches` mode, then use `content` (with \
         `context` when you need surrounding lines) on a narrower path or glob. The pattern is \
         a regular expression: escape special characters (`fn foo\\(` to find `fn foo(`). Set \
         `case_insensitive` when unsure of case. When the reply says it was cut, narrow the \
         search rather than raising `head_limit` by much. To find files by name use glob."
    }

    fn present(&self, args: &GrepArgs) -> CallPresentation {
        let mut remark = args.pattern.clone();
        if let Some(path) = &args.path {
            remark.push_str(&format!(" in {path}"));
        }
        if let Some(glob) = &args.glob {
            remark.push_str(&format!(" ({glob})"));
        }
        CallPresentation::new("Search", remark)
    }

    fn before_detail(&self, _args: &GrepArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &GrepArgs, result: &ToolResult<GrepOutput>) -> Option<Detail> {
        match result {
            Ok(out) => Some(Detail::Text { text: render(out) }),
            Err(error) => Some(Detail::Text {
                text: error.message.clone(),
            }),
        }
    }

    async fn call(&self, args: GrepArgs, cx: &ToolContext) -> ToolResult<GrepOutput> {
        let mode = args.output_mode.unwrap_or_default();
        let context = args.context.unwrap_or(0);
        if context > MAX_CONTEXT {
            return Err(ToolError::invalid_arguments(format!(
                "`context` is {context}; it must be at most {MAX_CONTEXT}"
            )));
        }
        let limit = args.head_limit.unwrap_or(DEFAULT_HEAD_LIMIT).max(1);
        let scope = FileScope::of(cx);
        let request = SearchRequest {
            pattern: args.pattern,
            case_insensitive: args.case_insensitive == Some(true),
            base: args.path.unwrap_or_else(|| ".".to_string()),
            glob: args.glob,
            mode,
            context: if mode == GrepMode::Content {
                context
            } else {
                0
            },
        };
        let stop = Arc::new(AtomicBool::new(false));
        let _stop_on_drop = StopOnDrop(Arc::clone(&stop));
        let hits = blocking(move || {
            let (workspace, base) = scope.readable(&request.base)?;
            if base.kind() == PathKind::Missing {
                return Err(ToolError::invalid_arguments(format!(
                    "`{}` does not exist; give a file or folder inside the workspace",
                    base.relative()
                )));
            }
            search(&request, &workspace, &base.absolute(), &stop)
        })
        .await?;
        Ok(limit_output(mode, hits, limit))
    }

    fn content(&self, output: &GrepOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(render(output))]
    }
}

fn limit_output(mode: GrepMode, mut hits: Vec<FileHits>, limit: usize) -> GrepOutput {
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    let total_files = hits.len();
    let total_matches = hits.iter().map(|h| h.match_count).sum();
    let mut files = Vec::new();
    let mut truncated = false;
    let mut budget = limit;
    for hit in hits {
        if budget == 0 {
            truncated = true;
            break;
        }
        let mut lines = hit.lines;
        if mode == GrepMode::Content {
            let mut matches_kept = 0;
            let keep = lines
                .iter()
                .position(|line| {
                    if !line.context {
                        matches_kept += 1;
                    }
                    matches_kept > budget
                })
                .unwrap_or(lines.len());
            if keep < lines.len() {
                truncated = true;
                lines.truncate(keep);
                while lines.last().is_some_and(|l| l.context) {
                    lines.pop();
                }
            }
            budget -= lines.iter().filter(|l| !l.context).count().min(budget);
        } else {
            budget -= 1;
        }
        files.push(GrepFile {
            path: hit.path,
            match_count: (mode != GrepMode::FilesWithMatches).then_some(hit.match_count),
            lines,
        });
    }
    GrepOutput {
        mode,
        files,
        total_files,
        total_matches,
        truncated,
    }
}

fn render(output: &GrepOutput) -> String {
    if output.total_files == 0 {
        return "No matches.".to_string();
    }
    let mut text = String::new();
    match output.mode {
        GrepMode::FilesWithMatches => {
            for file in &output.files {
                text.push_str(&file.path);
                text.push('\n');
            }
        }
        GrepMode::Count => {
            for file in &output.files {
                text.push_str(&format!(
                    "{}:{}\n",
                    file.path,
                    file.match_count.unwrap_or(0)
                ));
            }
        }
        GrepMode::Content => {
            for file in &output.files {
                let mut previous: Option<u64> = None;
                for line in &file.lines {
                    if previous.is_some_and(|p| line.line > p + 1) {
                        text.push_str("--\n");
                    }
                    let separator = if line.context { '-' } else { ':' };
                    text.push_str(&format!(
                        "{}{separator}{}{separator}{}\n",
                        file.path, line.line, line.text
                    ));
                    previous = Some(line.line);
                }
            }
        }
    }
    if output.truncated {
        let (shown, total, what) = match output.mode {
            GrepMode::Content => (
                output
                    .files
                    .iter()
                    .flat_map(|f| &f.lines)
                    .filter(|l| !l.context)
                    .count(),
                output.total_matches as usize,
                "matching lines",
            ),
            _ => (output.files.len(), output.total_files, "files"),
        };
        text.push_str(&format!(
            "[results cut: showing {shown} of {total} {what}; narrow the search with `path`, \
             `glob` or a more specific pattern, or raise `head_limit`]\n"
        ));
    }
    text
}
