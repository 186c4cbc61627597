//! What the code prints: the head and tail the model sees, and the whole of it in a spill
//! file once it passes the visible cap.

use qilin_protocol::spill_notice;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

/// The printed output of one run.
pub(crate) struct PrintedOutput {
    visible_cap: usize,
    spill_cap: usize,
    spill_path: PathBuf,
    head: String,
    tail: String,
    total: usize,
    spill: Option<Result<File, String>>,
    overflowed: bool,
}

impl PrintedOutput {
    /// An empty output that shows `visible_cap` bytes, spills to `spill_path` and refuses
    /// more than `spill_cap` bytes in all.
    pub(crate) fn new(visible_cap: usize, spill_cap: usize, spill_path: PathBuf) -> Self {
        PrintedOutput {
            visible_cap,
            spill_cap,
            spill_path,
            head: String::new(),
            tail: String::new(),
            total: 0,
            spill: None,
            overflowed: false,
        }
    }

    /// Appends printed text. Returns false once the output passed the spill cap (the text
    /// is dropped then and the run must stop).
    pub(crate) fn push(&mut self, text: &str) -> bool {
        if self.overflowed {
            return false;
        }
        if self.total + text.len() > self.spill_cap {
            self.overflowed = true;
            return false;
        }
        self.total += text.len();
        match &mut self.spill {
            None => {
                self.head.push_str(text);
                if self.total > self.visible_cap {
                    self.spill = Some(self.open_spill());
                }
            }
            Some(file) => {
                if let Ok(f) = file
                    && let Err(err) = f.write_all(text.as_bytes())
                {
                    *file = Err(err.to_string());
                }
                self.tail.push_str(text);
                let keep = self.visible_cap / 3;
                if self.tail.len() > keep * 2 + 1024 {
                    let mut cut = self.tail.len() - keep;
                    while !self.tail.is_char_boundary(cut) {
                        cut += 1;
                    }
                    self.tail.drain(..cut);
                }
            }
        }
        true
    }

    /// True once the output passed the spill cap.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    fn open_spill(&mut self) -> Result<File, String> {
        let open = || -> std::io::Result<File> {
            if let Some(parent) = self.spill_path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let mut file = File::create(&self.spill_path)?;
            file.write_all(self.head.as_bytes())?;
            Ok(file)
        };
        let file = open().map_err(|err| err.to_string());
        let head_budget = self.visible_cap * 2 / 3;
        let mut end = head_budget.min(self.head.len());
        while !self.head.is_char_boundary(end) {
            end -= 1;
        }
        let rest = self.head.split_off(end);
        self.tail = rest;
        file
    }

    /// The text the model sees: everything, or the head, the tail and the spill notice.
    pub(crate) fn visible(&self) -> String {
        match &self.spill {
            None => self.head.clone(),
            Some(file) => {
                let keep = self.visible_cap / 3;
                let mut start = self.tail.len().saturating_sub(keep);
                while !self.tail.is_char_boundary(start) {
                    start += 1;
                }
                let tail = &self.tail[start..];
                let omitted = self.total - self.head.len() - tail.len();
                let ending = match file {
                    Ok(_) => spill_notice(&self.spill_path.to_string_lossy(), self.total as u64),
                    Err(err) => format!(
                        "[qilin: output cut; the whole output could not be saved to {}: {err}]",
                        self.spill_path.display()
                    ),
                };
                format!(
                    "{}\n[... {omitted} bytes omitted ...]\n{tail}\n{ending}\n",
                    self.head
                )
            }
        }
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
        assert!(out.visible().contains(&"x".repeat(5)));
    }
}
