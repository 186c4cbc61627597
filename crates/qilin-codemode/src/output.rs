//! What the code prints: Qilin's one head-and-tail cap with its spill file
//! ([`qilin_tool::OutputCapture`]), and a run that stops once the output passes the spill cap.

use qilin_tool::OutputCapture;
use std::path::PathBuf;

/// The printed output of one run.
pub(crate) struct PrintedOutput {
    capture: OutputCapture,
}

impl PrintedOutput {
    /// An empty output that shows `visible_cap` bytes, spills to `spill_path` and refuses
    /// more than `spill_cap` bytes in all.
    pub(crate) fn new(visible_cap: usize, spill_cap: usize, spill_path: PathBuf) -> Self {
        PrintedOutput {
            capture: OutputCapture::new(visible_cap, spill_path).with_spill_limit(spill_cap as u64),
        }
    }

    /// Appends printed text. Returns false once the output passed the spill cap (the text
    /// past it is not saved and the run must stop).
    pub(crate) fn push(&mut self, text: &str) -> bool {
        if self.capture.over_spill_limit() {
            return false;
        }
        self.capture.push(text.as_bytes());
        !self.capture.over_spill_limit()
    }

    /// True once the output passed the spill cap.
    pub(crate) fn overflowed(&self) -> bool {
        self.capture.over_spill_limit()
    }

    /// The text the model sees: everything, or the head, the tail and the spill notice.
    pub(crate) fn visible(&self) -> String {
        self.capture.visible()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::parse_spill_notice;

    #[test]
    fn a_small_output_is_kept_whole_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let mut out = PrintedOutput::new(100, 10_000, path.clone());
        assert!(out.push("hello\n"));
        assert_eq!(out.visible(), "hello\n");
        assert!(!path.exists());
    }

    #[test]
    fn a_long_output_shows_head_and_tail_and_spills_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spill").join("out.txt");
        let mut out = PrintedOutput::new(300, 1_000_000, path.clone());
        let mut whole = String::new();
        for i in 0..1000 {
            let line = format!("line {i}\n");
            whole.push_str(&line);
            assert!(out.push(&line));
        }
        let visible = out.visible();
        assert!(visible.starts_with("line 0\n"), "{visible}");
        assert!(visible.contains("line 999\n"), "{visible}");
        assert!(visible.len() < 500, "{}", visible.len());
        let notice = parse_spill_notice(&visible).expect("a spill notice ends the text");
        assert_eq!(notice.total_bytes, whole.len() as u64);
        assert_eq!(std::fs::read_to_string(path).unwrap(), whole);
    }

    #[test]
    fn past_the_spill_cap_the_output_refuses_more() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = PrintedOutput::new(10, 50, dir.path().join("o.txt"));
        assert!(out.push(&"x".repeat(40)));
        assert!(!out.push(&"x".repeat(20)));
        assert!(out.overflowed());
        assert!(!out.push("more"));
        assert!(out.visible().contains(&"x".repeat(5)));
    }
}
