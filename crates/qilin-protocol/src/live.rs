//! The bounds of a call's live output, and how a client keeps it within them.
//!
//! Whatever a command prints and for however long, one call's `tool.progress` events carry at
//! most [`LIVE_HEAD_BYTES`] + [`LIVE_GLIMPSE_BUDGET`] + [`LIVE_TAIL_BYTES`] bytes of text: the
//! start of its output, then at most once a second a glimpse of its latest output (at most
//! [`LIVE_GLIMPSE_BYTES`] each, within the glimpse budget), then when the call ends the last
//! part of what was not shown yet. Output left out between two of these is counted in the
//! event's `omittedBytes`; the call's result (and its spill file) holds the whole output.
//!
//! A client folds those events into a [`LiveView`]: the start, the bytes left out, and the
//! latest part, each bounded the same way, so a log recorded before these bounds (every byte a
//! progress event) folds within them too.

/// The most bytes of a call's output shown live from its start.
pub const LIVE_HEAD_BYTES: usize = 256 * 1024;

/// The most bytes of a call's latest output shown live after its start: what the last
/// progress event (sent when the call ends) carries at most, and what a client keeps.
pub const LIVE_TAIL_BYTES: usize = 256 * 1024;

/// The most bytes of one glimpse: the latest output sent while the call runs, past the start.
pub const LIVE_GLIMPSE_BYTES: usize = 4 * 1024;

/// The most bytes all of a call's glimpses carry together.
pub const LIVE_GLIMPSE_BUDGET: usize = 256 * 1024;

/// The most bytes of text one call's progress events carry, whatever the call prints.
pub const LIVE_MAX_BYTES: usize = LIVE_HEAD_BYTES + LIVE_GLIMPSE_BUDGET + LIVE_TAIL_BYTES;

/// A call's live output as a client keeps it: its start, the bytes left out, its latest part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveView {
    /// The start of the output, at most [`LIVE_HEAD_BYTES`]: all of it while it fits.
    pub head: String,
    /// Bytes left out between `head` and `tail`.
    pub omitted_bytes: u64,
    /// The latest output after what was left out (or after `head` filled up), at most
    /// [`LIVE_TAIL_BYTES`].
    pub tail: String,
}

impl LiveView {
    /// Folds one progress event: `text`, after `omitted_bytes` left out since the previous one.
    ///
    /// After a gap the view keeps one gap only: the bytes left out before, the tail shown
    /// then and the new gap are counted together, and `text` starts the tail again. Text that
    /// overflows the head goes to the tail; a tail longer than its bound loses its start to
    /// the count (cut on a character boundary).
    pub fn push(&mut self, text: &str, omitted_bytes: u64) {
        if omitted_bytes > 0 {
            self.omitted_bytes = self
                .omitted_bytes
                .saturating_add(self.tail.len() as u64)
                .saturating_add(omitted_bytes);
            self.tail.clear();
            self.tail.push_str(text);
        } else if self.omitted_bytes == 0 && self.tail.is_empty() {
            let room = LIVE_HEAD_BYTES.saturating_sub(self.head.len());
            let fits = floor_char_boundary(text, room);
            self.head.push_str(&text[..fits]);
            self.tail.push_str(&text[fits..]);
        } else {
            self.tail.push_str(text);
        }
        if self.tail.len() > LIVE_TAIL_BYTES {
            let cut = ceil_char_boundary(&self.tail, self.tail.len() - LIVE_TAIL_BYTES);
            self.tail.drain(..cut);
            self.omitted_bytes = self.omitted_bytes.saturating_add(cut as u64);
        }
    }
}

/// The largest index at most `at` that is a character boundary of `text`.
pub fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    let mut at = at;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest index at least `at` that is a character boundary of `text`.
pub fn ceil_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    let mut at = at;
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_within_the_head_is_kept_whole() {
        let mut view = LiveView::default();
        view.push("one\n", 0);
        view.push("two\n", 0);
        assert_eq!(view.head, "one\ntwo\n");
        assert_eq!((view.omitted_bytes, view.tail.as_str()), (0, ""));
    }

    #[test]
    fn output_past_the_head_goes_to_a_bounded_tail_and_the_rest_is_counted() {
        let mut view = LiveView::default();
        let chunk = "x".repeat(64 * 1024);
        for _ in 0..20 {
            view.push(&chunk, 0);
        }
        assert_eq!(view.head.len(), LIVE_HEAD_BYTES);
        assert_eq!(view.tail.len(), LIVE_TAIL_BYTES);
        let total = 20 * chunk.len() as u64;
        assert_eq!(
            view.head.len() as u64 + view.omitted_bytes + view.tail.len() as u64,
            total
        );
    }

    #[test]
    fn a_gap_folds_the_tail_shown_before_into_the_count() {
        let mut view = LiveView::default();
        view.push(&"h".repeat(LIVE_HEAD_BYTES), 0);
        view.push("glimpse one", 0);
        view.push("glimpse two", 100);
        assert_eq!(view.tail, "glimpse two");
        assert_eq!(view.omitted_bytes, "glimpse one".len() as u64 + 100);
        view.push(" goes on", 0);
        assert_eq!(view.tail, "glimpse two goes on");
    }

    /// The same case the web client's fold is tested with (`tree.test.ts`): both count UTF-8
    /// bytes and cut on the same boundaries.
    #[test]
    fn wide_characters_and_a_gap_fold_to_the_same_figures_as_the_web_client() {
        let mut view = LiveView::default();
        view.push(&"界".repeat(87_382), 0);
        assert_eq!((view.head.len(), view.tail.as_str()), (262_143, "界"));
        view.push(&"é".repeat(200_000), 0);
        assert_eq!(view.omitted_bytes, 137_859);
        assert_eq!(view.tail, "é".repeat(131_072));
        view.push("😀 end\n", 1_000);
        assert_eq!(view.head.len(), 262_143);
        assert_eq!(view.omitted_bytes, 401_003);
        assert_eq!(view.tail, "😀 end\n");
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let mut view = LiveView::default();
        // 3-byte characters never fit the head exactly: the head stops short of its bound.
        let wide = "界".repeat(LIVE_HEAD_BYTES / 3 + 1);
        view.push(&wide, 0);
        assert!(view.head.len() <= LIVE_HEAD_BYTES && view.head.len() > LIVE_HEAD_BYTES - 3);
        assert!(view.tail.chars().all(|c| c == '界'));
        view.push(&"界".repeat(LIVE_TAIL_BYTES / 3 + 5), 0);
        assert!(view.tail.len() <= LIVE_TAIL_BYTES);
        assert_eq!(
            view.head.len() as u64 + view.omitted_bytes + view.tail.len() as u64,
            (wide.len() + "界".len() * (LIVE_TAIL_BYTES / 3 + 5)) as u64
        );
    }
}
