//! The search behind `grep`: a parallel walk that respects ignore files, searching each file
//! with a line-oriented searcher on every core.

use crate::grep::{GrepLine, GrepMode};
use crate::text_file::cut_line;
use crate::workspace_path::relative_string;
use cap_fs_ext::OpenOptionsSyncExt;
use cap_std::fs::OpenOptions;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;
use qilin_tool::{ToolError, Workspace};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// Lines of `content` output collected at most, beyond any sensible `head_limit`, so a search
/// that matches everything cannot exhaust memory.
const MAX_COLLECTED_LINES: usize = 100_000;

/// What to search for and where.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// The regular expression.
    pub pattern: String,
    /// Ignore letter case.
    pub case_insensitive: bool,
    /// The file or folder to search, as given.
    pub base: String,
    /// Only files matching this glob.
    pub glob: Option<String>,
    /// What to collect.
    pub mode: GrepMode,
    /// Context lines on each side of a match (`content` mode).
    pub context: usize,
}

/// The matches of one file.
#[derive(Debug, Clone)]
pub struct FileHits {
    /// Relative to the workspace root.
    pub path: String,
    /// Matching lines (1 in `files_with_matches` mode, which stops at the first).
    pub match_count: u64,
    /// Matching and context lines, in `content` mode.
    pub lines: Vec<GrepLine>,
}

/// Runs the search under `base` (resolved in `workspace`) on every core; stops early when
/// `stop` is set. Each file is opened beneath the workspace handle, so a folder swapped for a
/// link during the walk cannot lead the search outside. Files are reported in no particular
/// order.
pub fn search(
    request: &SearchRequest,
    workspace: &Workspace,
    base: &Path,
    stop: &AtomicBool,
) -> Result<Vec<FileHits>, ToolError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(request.case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(&request.pattern)
        .map_err(|err| {
            ToolError::invalid_arguments(format!(
                "`pattern` is not a valid regular expression: {err}"
            ))
        })?;
    let mut walk = ignore::WalkBuilder::new(base);
    walk.require_git(false);
    if let Some(glob) = &request.glob {
        let mut overrides = OverrideBuilder::new(base);
        overrides.add(glob).map_err(|err| {
            ToolError::invalid_arguments(format!("`glob` `{glob}` is not a valid glob: {err}"))
        })?;
        let overrides = overrides.build().map_err(|err| {
            ToolError::invalid_arguments(format!("`glob` `{glob}` is not a valid glob: {err}"))
        })?;
        walk.overrides(overrides);
    }
    let collected = AtomicUsize::new(0);
    let mut reading = OpenOptions::new();
    reading.read(true).nonblock(true);
    let reading = &reading;
    let (sender, receiver) = mpsc::channel::<FileHits>();
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let sender = sender.clone();
        let collected = &collected;
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(true)
            .before_context(request.context)
            .after_context(request.context)
            .build();
        Box::new(move |entry| {
            if stop.load(Ordering::Relaxed) {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let mut sink = Collect {
                mode: request.mode,
                count: 0,
                lines: Vec::new(),
            };
            // Opened beneath the workspace handle (one `openat2` with `RESOLVE_BENEATH`), and
            // non-blocking: a FIFO swapped in since the walk saw a file reads as empty or
            // fails, never waits.
            let Ok(within) = entry.path().strip_prefix(workspace.root()) else {
                return WalkState::Continue;
            };
            let Ok(file) = workspace.dir().open_with(within, reading) else {
                return WalkState::Continue;
            };
            let file = file.into_std();
            if searcher.search_file(&matcher, &file, &mut sink).is_err() || sink.count == 0 {
                return WalkState::Continue;
            }
            let path = relative_string(workspace.root(), entry.path());
            let total = collected.fetch_add(sink.lines.len(), Ordering::Relaxed);
            let hits = FileHits {
                path,
                match_count: sink.count,
                lines: sink.lines,
            };
            if sender.send(hits).is_err() || total > MAX_COLLECTED_LINES {
                return WalkState::Quit;
            }
            WalkState::Continue
        })
    });
    drop(sender);
    if stop.load(Ordering::Relaxed) {
        return Err(ToolError::new(
            qilin_protocol::ErrorCode::Interrupted,
            "the search was stopped before it finished",
        ));
    }
    Ok(receiver.into_iter().collect())
}

/// Collects one file's matches for the requested mode.
struct Collect {
    mode: GrepMode,
    count: u64,
    lines: Vec<GrepLine>,
}

impl Collect {
    fn push(&mut self, line: Option<u64>, bytes: &[u8], context: bool) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        self.lines.push(GrepLine {
            line: line.unwrap_or(0),
            text: cut_line(text).0,
            context,
        });
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        self.count += 1;
        match self.mode {
            GrepMode::FilesWithMatches => Ok(false),
            GrepMode::Count => Ok(true),
            GrepMode::Content => {
                self.push(found.line_number(), found.bytes(), false);
                Ok(true)
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        found: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        if self.mode == GrepMode::Content {
            self.push(found.line_number(), found.bytes(), true);
        }
        Ok(true)
    }
}
