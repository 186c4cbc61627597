//! Unified diffs of a file's change, with the counts the diff card shows.

use similar::{ChangeTag, TextDiff};

/// A file's change as a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The unified diff, with `a/` and `b/` headers.
    pub text: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

/// The unified diff (3 lines of context) from `before` to `after` of the file at `path`.
pub fn unified_diff(path: &str, before: &str, after: &str) -> FileDiff {
    let diff = TextDiff::from_lines(before, after);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
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
}
