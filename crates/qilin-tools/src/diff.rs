//! Unified diffs of a file's change, with the counts the diff card shows, under a time and a
//! size budget: a change too large to show line by line becomes a summary of the changed
//! regions.

use similar::{Algorithm, ChangeTag, TextDiff};
use std::fmt::Write;
use std::time::Duration;

/// The longest the line diff may search for a minimal diff; past it a coarser (still correct)
/// diff is taken, so a huge rewrite costs milliseconds, not seconds.
const DIFF_TIME_BUDGET: Duration = Duration::from_millis(250);
/// Changed lines shown line by line at most; a larger change is summarised by its regions.
pub const MAX_DIFF_LINES: u32 = 4000;
/// Bytes of diff text shown at most.
const MAX_DIFF_BYTES: usize = 256 * 1024;
/// Changed regions listed at most in a summary.
const MAX_SUMMARY_REGIONS: usize = 40;

/// A file's change as a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The unified diff, with `a/` and `b/` headers; for a change too large to show, the
    /// headers and a summary of the changed regions.
    pub text: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

/// The unified diff (3 lines of context) from `before` to `after` of the file at `path`.
pub fn unified_diff(path: &str, before: &str, after: &str) -> FileDiff {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIME_BUDGET)
        .diff_lines(before, after);
    let (mut added, mut removed) = (0u32, 0u32);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let header = (format!("a/{path}"), format!("b/{path}"));
    if added + removed <= MAX_DIFF_LINES {
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header(&header.0, &header.1)
            .to_string();
        if text.len() <= MAX_DIFF_BYTES {
            return FileDiff {
                text,
                added,
                removed,
            };
        }
    }
    let groups = diff.grouped_ops(0);
    let mut text = format!(
        "--- {}\n+++ {}\n[the change is too large to show line by line: +{added} -{removed} \
         lines in {} regions; read the file to check it]\n",
        header.0,
        header.1,
        groups.len()
    );
    for group in groups.iter().take(MAX_SUMMARY_REGIONS) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let _ = writeln!(
            text,
            "@@ -{},{} +{},{} @@",
            old.start + 1,
            old.len(),
            new.start + 1,
            new.len()
        );
    }
    if groups.len() > MAX_SUMMARY_REGIONS {
        let _ = writeln!(
            text,
            "[... {} more regions]",
            groups.len() - MAX_SUMMARY_REGIONS
        );
    }
    FileDiff {
        text,
        added,
        removed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_headers() {
        let diff = unified_diff("x.txt", "a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!((diff.added, diff.removed), (2, 1));
        assert!(diff.text.starts_with("--- a/x.txt\n+++ b/x.txt\n@@"));
        assert!(diff.text.contains("-b\n+B\n"));
    }

    #[test]
    fn a_change_of_every_line_of_a_huge_file_is_summarised_by_region() {
        let before: String = (0..80_000).map(|i| format!("value = {i}\n")).collect();
        let after = before.replace("value", "amount");
        let diff = unified_diff("big.py", &before, &after);
        assert_eq!(diff.added, diff.removed);
        assert!(diff.added >= 80_000 - 1, "{}", diff.added);
        assert!(
            diff.text.contains("too large to show line by line"),
            "{}",
            diff.text
        );
        assert!(diff.text.len() < 8 * 1024, "{}", diff.text.len());
    }
}
