//! Collects a process's output with bounded memory: every byte while it is short; past the
//! cap, the head and a rolling tail in memory and every byte in a spill file.

use qilin_protocol::spill_notice;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

/// Bytes of output the model sees at most from one command (head and tail together).
pub const DEFAULT_OUTPUT_CAP: usize = 24_000;

/// Output collected so far.
pub struct OutputCapture {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    spill_path: PathBuf,
    spill: Option<File>,
    spill_error: Option<String>,
    cut: bool,
}

/// What the model sees of a finished capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedText {
    /// The whole output, or its head and tail with a marker and the spill notice.
    pub text: String,
    /// Every byte the process wrote.
    pub total_bytes: u64,
    /// Where the whole output was saved when it was cut.
    pub spill_path: Option<String>,
}

impl OutputCapture {
    /// A capture that keeps at most `cap` bytes for the model and spills to `spill_path`.
    pub fn new(cap: usize, spill_path: PathBuf) -> Self {
        OutputCapture {
            cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            spill_path,
            spill: None,
            spill_error: None,
            cut: false,
        }
    }

    /// Adds a chunk of output.
    pub fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let mut rest = chunk;
        if !self.cut {
            if self.head.len() + chunk.len() <= self.cap {
                self.head.extend_from_slice(chunk);
                return;
            }
            self.cut = true;
            if let Err(err) = self.open_spill() {
                self.spill_error = Some(err.to_string());
            }
            let head_budget = self.cap * 2 / 3;
            if self.head.len() > head_budget {
                let overflow = self.head.split_off(head_budget);
                self.tail.extend(overflow);
            } else {
                let take = (head_budget - self.head.len()).min(chunk.len());
                self.head.extend_from_slice(&chunk[..take]);
                rest = &chunk[take..];
            }
        }
        if let Some(file) = &mut self.spill
            && let Err(err) = file.write_all(chunk)
        {
            self.spill_error = Some(err.to_string());
            self.spill = None;
        }
        self.tail.extend(rest);
        let tail_budget = self.cap - self.cap * 2 / 3;
        if self.tail.len() > tail_budget {
            let excess = self.tail.len() - tail_budget;
            self.tail.drain(..excess);
        }
    }

    fn open_spill(&mut self) -> io::Result<()> {
        if let Some(parent) = self.spill_path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = File::create(&self.spill_path)?;
        file.write_all(&self.head)?;
        self.spill = Some(file);
        Ok(())
    }

    /// Every byte received so far.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// The model-visible text: whole when short, else head, marker, tail and the notice.
    pub fn finish(mut self) -> CapturedText {
        if let Some(file) = &mut self.spill {
            let _ = file.flush();
        }
        if !self.cut {
            return CapturedText {
                text: String::from_utf8_lossy(&self.head).into_owned(),
                total_bytes: self.total,
                spill_path: None,
            };
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        let omitted = self.total - self.head.len() as u64 - tail.len() as u64;
        let head = String::from_utf8_lossy(&self.head);
        let tail = String::from_utf8_lossy(&tail);
        let path = self.spill_path.to_string_lossy().into_owned();
        let (ending, spill_path) = match self.spill_error {
            None => (spill_notice(&path, self.total), Some(path)),
            Some(err) => (
                format!(
                    "[qilin: output cut; the whole output could not be saved to {path}: {err}]"
                ),
                None,
            ),
        };
        CapturedText {
            text: format!("{head}\n[... {omitted} bytes omitted ...]\n{tail}\n{ending}\n"),
            total_bytes: self.total,
            spill_path,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::parse_spill_notice;

    #[test]
    fn short_output_is_kept_whole_without_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut capture = OutputCapture::new(100, dir.path().join("s.txt"));
        capture.push(b"hello ");
        capture.push(b"world");
        let out = capture.finish();
        assert_eq!(out.text, "hello world");
        assert_eq!(out.spill_path, None);
        assert!(!dir.path().join("s.txt").exists());
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_spills_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let mut capture = OutputCapture::new(300, dir.path().join("spill/s.txt"));
        let whole: String = (0..500).map(|i| format!("line {i}\n")).collect();
        for chunk in whole.as_bytes().chunks(37) {
            capture.push(chunk);
        }
        let out = capture.finish();
        assert!(out.text.starts_with("line 0\n"));
        assert!(out.text.contains("line 499\n"));
        assert!(out.text.contains("bytes omitted"));
        assert!(out.text.len() < 500);
        let notice = parse_spill_notice(&out.text).unwrap();
        assert_eq!(notice.total_bytes, whole.len() as u64);
        assert_eq!(std::fs::read_to_string(notice.path).unwrap(), whole);
    }

    #[test]
    fn one_chunk_larger_than_the_cap_still_keeps_its_head() {
        let dir = tempfile::tempdir().unwrap();
        let mut capture = OutputCapture::new(300, dir.path().join("s.txt"));
        let whole: String = (0..500).map(|i| format!("line {i}\n")).collect();
        capture.push(whole.as_bytes());
        let out = capture.finish();
        assert!(out.text.starts_with("line 0\nline 1\n"), "{}", out.text);
        assert!(out.text.contains("line 499\n"));
        let notice = parse_spill_notice(&out.text).unwrap();
        assert_eq!(std::fs::read_to_string(notice.path).unwrap(), whole);
    }
}
