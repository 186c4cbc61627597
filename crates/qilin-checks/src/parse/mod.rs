//! Reading a check's output: each parser turns what a tool printed (or the report it wrote)
//! into annotations, a count of what failed, and a one-line summary.

mod cargo;
mod eslint;
mod junit;
mod tap;
mod tsc;

use qilin_protocol::checks::{AnnotationLevel, CheckAnnotation};
use qilin_skill::CheckParser;
use std::path::Path;

/// The longest annotation message kept, in characters.
pub const MAX_MESSAGE_CHARS: usize = 300;

/// What a parser read from a check's output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The diagnostics found, in the order the tool printed them.
    pub annotations: Vec<CheckAnnotation>,
    /// How many things failed (failing tests, errors): a completed check with any is a failure
    /// whatever its exit code.
    pub failures: usize,
    /// The parser's one-line account (`2 of 14 tests failed`), when it found what it reads.
    pub summary: Option<String>,
}

/// What a parser reads: the command's output and, for JUnit, the report file's text.
pub struct ParseInput<'a> {
    /// The command's combined stdout and stderr (as much as was kept).
    pub output: &'a str,
    /// The JUnit report file's text, when the check names one and it could be read.
    pub report: Option<&'a str>,
    /// The workspace root, to make absolute paths inside it relative.
    pub workspace: &'a Path,
}

/// Reads `input` with `parser`.
pub fn parse(parser: CheckParser, input: &ParseInput<'_>) -> Parsed {
    let mut parsed = match parser {
        CheckParser::Plain => Parsed::default(),
        CheckParser::Cargo => cargo::parse(input.output),
        CheckParser::Junit => match input.report {
            Some(report) => junit::parse(report),
            None => junit::parse_from_output(input.output),
        },
        CheckParser::Tap => tap::parse(input.output),
        CheckParser::Eslint => eslint::parse(input.output),
        CheckParser::Tsc => tsc::parse(input.output),
    };
    for annotation in &mut parsed.annotations {
        annotation.path = workspace_relative(&annotation.path, input.workspace);
    }
    parsed
}

/// An annotation with its message cut to one line of at most [`MAX_MESSAGE_CHARS`].
pub(crate) fn annotation(
    path: &str,
    line: Option<u32>,
    column: Option<u32>,
    level: AnnotationLevel,
    message: &str,
) -> CheckAnnotation {
    CheckAnnotation {
        path: path.trim().to_string(),
        line: line.filter(|n| *n > 0),
        column: column.filter(|n| *n > 0),
        level,
        message: one_line(message),
    }
}

/// The first non-empty line of `text`, trimmed and cut to [`MAX_MESSAGE_CHARS`].
pub(crate) fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    if line.chars().count() <= MAX_MESSAGE_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(MAX_MESSAGE_CHARS - 1).collect();
    format!("{cut}…")
}

/// `path` relative to `workspace` when it lies inside it (and without a leading `./`), else
/// as printed.
pub(crate) fn workspace_relative(path: &str, workspace: &Path) -> String {
    let path = path.strip_prefix("file://").unwrap_or(path);
    let as_path = Path::new(path);
    if as_path.is_absolute() {
        let canonical = workspace.canonicalize().ok();
        for root in std::iter::once(workspace).chain(canonical.as_deref()) {
            if let Ok(inside) = as_path.strip_prefix(root) {
                return inside.to_string_lossy().into_owned();
            }
        }
        return path.to_string();
    }
    path.strip_prefix("./").unwrap_or(path).to_string()
}

/// `text` without ANSI escape sequences (colours a tool printed).
pub(crate) fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// `n thing` or `n things`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// `12 tests passed`, `2 of 14 tests failed`, with skipped ones when there are: the summary of
/// a test run.
pub(crate) fn tests_summary(total: usize, failed: usize, skipped: usize) -> String {
    let mut summary = if total == 0 {
        "no tests ran".to_string()
    } else if failed == 0 {
        format!("{} passed", count(total - skipped, "test"))
    } else {
        format!("{failed} of {} failed", count(total, "test"))
    };
    if skipped > 0 {
        summary.push_str(&format!(", {skipped} skipped"));
    }
    summary
}

/// `2 errors, 1 warning`, or `None` when there are neither.
pub(crate) fn diagnostics_summary(errors: usize, warnings: usize) -> Option<String> {
    match (errors, warnings) {
        (0, 0) => None,
        (e, 0) => Some(count(e, "error")),
        (0, w) => Some(count(w, "warning")),
        (e, w) => Some(format!("{}, {}", count(e, "error"), count(w, "warning"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_workspace_become_relative() {
        let ws = Path::new("/work/project");
        assert_eq!(workspace_relative("/work/project/src/a.rs", ws), "src/a.rs");
        assert_eq!(workspace_relative("./src/a.rs", ws), "src/a.rs");
        assert_eq!(workspace_relative("/usr/lib/x.rs", ws), "/usr/lib/x.rs");
    }

    #[test]
    fn a_message_keeps_its_first_line_capped() {
        assert_eq!(one_line("\n  first\nsecond"), "first");
        let long = "x".repeat(400);
        assert_eq!(one_line(&long).chars().count(), MAX_MESSAGE_CHARS);
        assert_eq!(strip_ansi("\u{1b}[31merror\u{1b}[0m: x"), "error: x");
        assert_eq!(tests_summary(14, 2, 0), "2 of 14 tests failed");
        assert_eq!(tests_summary(3, 0, 1), "2 tests passed, 1 skipped");
        assert_eq!(diagnostics_summary(2, 1).unwrap(), "2 errors, 1 warning");
    }
}
