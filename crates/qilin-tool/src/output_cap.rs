//! The one cap on what the model sees of an output, and the spill of the rest.
//!
//! [`OutputCapture`] collects an output as it is produced, with bounded memory: every byte
//! while it is short; past the visible cap, its head and a rolling tail in memory and the
//! whole in a spill file (mode 0600), up to a per-call limit on the bytes spilled to disk. The
//! model sees the head, the tail and the spill notice naming the file. Every capped output
//! uses it: a tool's content ([`OutputCap`], in the execution layer), a command's output, the
//! text code prints.
//!
//! The event log keeps the capped text too: [`OutputCap::for_the_log`] cuts the long strings
//! of a call's structured output and detail, and saves the whole output beside the spill
//! files, so a large output is never kept whole twice.

use qilin_protocol::{ContentBlock, Detail, spill_notice};
use serde_json::Value;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The most bytes of one output written to its spill file, unless the caller says otherwise.
pub const DEFAULT_SPILL_LIMIT: u64 = 64 * 1024 * 1024;

/// How much of a call's output the model sees and the disk keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCap {
    /// The most bytes of text the model sees from one call; also the longest string of a
    /// call's output or detail the event log keeps whole.
    pub max_bytes: usize,
    /// The most bytes of one call's output saved to its spill file.
    pub max_spill_bytes: u64,
}

impl Default for OutputCap {
    fn default() -> Self {
        OutputCap {
            max_bytes: 30_000,
            max_spill_bytes: DEFAULT_SPILL_LIMIT,
        }
    }
}

impl OutputCap {
    /// Caps `content`, spilling the whole text to `spill_path` when it is too long. Images
    /// and JSON blocks are kept as they are.
    pub fn apply(&self, content: Vec<ContentBlock>, spill_path: &Path) -> Vec<ContentBlock> {
        let text_bytes: usize = content
            .iter()
            .map(|block| match block {
                ContentBlock::Text { text } => text.len(),
                _ => 0,
            })
            .sum();
        if text_bytes <= self.max_bytes {
            return content;
        }
        let mut capture = OutputCapture::new(self.max_bytes, spill_path.to_path_buf())
            .with_spill_limit(self.max_spill_bytes);
        let mut others = Vec::new();
        for block in content {
            match block {
                ContentBlock::Text { text } => capture.push(text.as_bytes()),
                other => others.push(other),
            }
        }
        let mut capped = vec![ContentBlock::text(capture.finish().text)];
        capped.extend(others);
        capped
    }

    /// What the event log keeps of a call's structured output and detail: every string
    /// longer than [`OutputCap::max_bytes`] cut to its head and tail. When the output was
    /// cut, the whole of it is saved as JSON to `spill_path` and the cuts name that file.
    pub fn for_the_log(
        &self,
        output: Option<&Value>,
        detail: Option<Detail>,
        spill_path: &Path,
    ) -> (Option<Value>, Option<Detail>) {
        let too_long = output.is_some_and(|value| longest_string(value) > self.max_bytes);
        let saved = match output {
            Some(value) if too_long => {
                let written = serde_json::to_vec(value)
                    .map_err(io::Error::other)
                    .and_then(|bytes| write_private(spill_path, &bytes));
                Some(match written {
                    Ok(()) => format!("the whole output is saved in {}", spill_path.display()),
                    Err(err) => format!("the whole output could not be saved: {err}"),
                })
            }
            _ => None,
        };
        let note = saved
            .as_deref()
            .unwrap_or("the whole text is not kept in the log");
        let output = output.map(|value| {
            let mut value = value.clone();
            if too_long {
                cut_strings(&mut value, self.max_bytes, note);
            }
            value
        });
        let detail = detail.map(|mut detail| {
            match &mut detail {
                Detail::Text { text } => cut_text(text, self.max_bytes, note),
                Detail::Markdown { markdown } => cut_text(markdown, self.max_bytes, note),
                Detail::Code { code, .. } => cut_text(code, self.max_bytes, note),
                Detail::Diff { diff, .. } => cut_text(diff, self.max_bytes, note),
                Detail::Shell { output, .. } => cut_text(output, self.max_bytes, note),
                Detail::Json { value } => cut_strings(value, self.max_bytes, note),
            }
            detail
        });
        (output, detail)
    }
}

/// The whole structured output of a call from what its `tool.result` logged: the logged value
/// itself when the log kept it whole, else the whole output read back from `saved` (where
/// [`OutputCap::for_the_log`] wrote it); `None` when the log cut it and the whole cannot be
/// read back.
pub fn whole_logged_output(logged: &Value, saved: &Path) -> Option<Value> {
    if let Ok(bytes) = std::fs::read(saved)
        && let Ok(whole) = serde_json::from_slice(&bytes)
    {
        return Some(whole);
    }
    (!has_cut_string(logged)).then(|| logged.clone())
}

/// Whether a string of `value` carries the marker [`cut_text`] leaves.
fn has_cut_string(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains(CUT_MARKER),
        Value::Array(items) => items.iter().any(has_cut_string),
        Value::Object(map) => map.values().any(has_cut_string),
        _ => false,
    }
}

/// What every cut the log makes says, between the count of bytes left out and the note.
const CUT_MARKER: &str = " bytes cut from the log; ";

/// An output collected as it is produced (see the module documentation).
pub struct OutputCapture {
    cap: usize,
    spill_limit: u64,
    spill_path: PathBuf,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    spilled: u64,
    spill: Option<File>,
    spill_error: Option<String>,
    cut: bool,
}

/// What the model sees of a finished capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedText {
    /// The whole output, or its head and tail with a marker and the spill notice.
    pub text: String,
    /// Every byte the output had.
    pub total_bytes: u64,
    /// Where the output was saved when it was cut.
    pub spill_path: Option<String>,
}

impl OutputCapture {
    /// A capture that shows at most `cap` bytes and spills to `spill_path`, at most
    /// [`DEFAULT_SPILL_LIMIT`] bytes of it.
    pub fn new(cap: usize, spill_path: PathBuf) -> Self {
        OutputCapture {
            cap,
            spill_limit: DEFAULT_SPILL_LIMIT,
            spill_path,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            spilled: 0,
            spill: None,
            spill_error: None,
            cut: false,
        }
    }

    /// The same capture saving at most `limit` bytes to its spill file; past it the file
    /// stops growing while the tail (and the count) go on.
    pub fn with_spill_limit(mut self, limit: u64) -> Self {
        self.spill_limit = limit;
        self
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
            self.open_spill();
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
        self.spill_write(chunk);
        self.tail.extend(rest);
        let tail_budget = self.cap - self.cap * 2 / 3;
        if self.tail.len() > tail_budget {
            let excess = self.tail.len() - tail_budget;
            self.tail.drain(..excess);
        }
    }

    /// Every byte received so far.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// True once the output is longer than the spill limit: the file holds only its start,
    /// and a producer that can stop should.
    pub fn over_spill_limit(&self) -> bool {
        self.total > self.spill_limit
    }

    fn open_spill(&mut self) {
        match create_private_file(&self.spill_path) {
            Ok(file) => {
                self.spill = Some(file);
                let head = std::mem::take(&mut self.head);
                self.spill_write(&head);
                self.head = head;
            }
            Err(err) => self.spill_error = Some(err.to_string()),
        }
    }

    fn spill_write(&mut self, bytes: &[u8]) {
        let room = self.spill_limit.saturating_sub(self.spilled);
        let take = bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        if let Some(file) = &mut self.spill
            && take > 0
        {
            match file.write_all(&bytes[..take]) {
                Ok(()) => self.spilled += take as u64,
                Err(err) => {
                    self.spill_error = Some(err.to_string());
                    self.spill = None;
                }
            }
        }
    }

    /// The model-visible text so far: whole when short, else head, marker, tail and notice.
    pub fn visible(&self) -> String {
        if !self.cut {
            return String::from_utf8_lossy(&self.head).into_owned();
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let head = cut_head(&self.head);
        let tail = cut_tail(&tail);
        let omitted = self.total - head.len() as u64 - tail.len() as u64;
        let path = self.spill_path.to_string_lossy();
        let ending = match &self.spill_error {
            None if self.spilled < self.total => format!(
                "[qilin: the output was {} bytes, over the {}-byte limit of its spill file; only \
                 its first {} bytes were saved]\n{}",
                self.total,
                self.spill_limit,
                self.spilled,
                spill_notice(&path, self.spilled)
            ),
            None => spill_notice(&path, self.total),
            Some(err) => {
                format!("[qilin: output cut; the whole output could not be saved to {path}: {err}]")
            }
        };
        format!(
            "{}\n[... {omitted} bytes omitted ...]\n{}\n{ending}\n",
            String::from_utf8_lossy(head),
            String::from_utf8_lossy(tail)
        )
    }

    /// The model-visible text, the total and where the output was saved.
    pub fn finish(mut self) -> CapturedText {
        if let Some(file) = &mut self.spill {
            let _ = file.flush();
        }
        let text = self.visible();
        let saved = self.cut && self.spill_error.is_none();
        CapturedText {
            text,
            total_bytes: self.total,
            spill_path: saved.then(|| self.spill_path.to_string_lossy().into_owned()),
        }
    }
}

/// Writes `bytes` as a file readable by its owner alone, creating its folder.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    create_private_file(path)?.write_all(bytes)
}

/// Creates `path` afresh as a file readable and writable by its owner alone (0600), opened
/// for reading and writing, creating its folder when missing. Whatever was at the path is
/// removed first (a link itself, never what it points to), then the file is created
/// exclusively, relative to a handle on its folder opened without following a link: a link
/// planted at the file's name or at its folder's makes the creation fail, never lands the
/// bytes elsewhere. For the files Qilin writes on a command's behalf (spilled outputs, job
/// logs) in folders a command might have reached.
pub fn create_private_file(path: &Path) -> io::Result<File> {
    use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
    use cap_std::fs::OpenOptionsExt as _;
    let invalid = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "`{}` is not a file path inside a folder, where a private file can be created",
                path.display()
            ),
        )
    };
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(invalid());
    };
    let (Some(above), Some(folder_name)) = (folder.parent(), folder.file_name()) else {
        return Err(invalid());
    };
    std::fs::create_dir_all(folder)?;
    let above = cap_std::fs::Dir::open_ambient_dir(above, cap_std::ambient_authority())?;
    let folder = above.open_dir_nofollow(folder_name)?;
    match folder.remove_file(name) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        _ => {}
    }
    let mut options = cap_std::fs::OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create_new(true)
        .follow(FollowSymlinks::No)
        .mode(0o600);
    Ok(folder.open_with(name, &options)?.into_std())
}

/// The head up to a whole character, ending at a line break when one is in its second half.
fn cut_head(head: &[u8]) -> &[u8] {
    let end = match std::str::from_utf8(head) {
        Ok(_) => head.len(),
        Err(err) if err.error_len().is_none() => err.valid_up_to(),
        Err(_) => head.len(),
    };
    let head = &head[..end];
    match head.iter().rposition(|&b| b == b'\n') {
        Some(line_end) if line_end >= end / 2 => &head[..line_end],
        _ => head,
    }
}

/// The tail from a whole character, starting after a line break when one is in its first
/// half.
fn cut_tail(tail: &[u8]) -> &[u8] {
    let start = tail
        .iter()
        .position(|&b| b & 0xc0 != 0x80)
        .unwrap_or(tail.len());
    let tail = &tail[start..];
    match tail.iter().position(|&b| b == b'\n') {
        Some(line_start) if line_start <= tail.len() / 2 => &tail[line_start + 1..],
        _ => tail,
    }
}

/// The length of the longest string inside `value`.
fn longest_string(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len(),
        Value::Array(items) => items.iter().map(longest_string).max().unwrap_or(0),
        Value::Object(map) => map.values().map(longest_string).max().unwrap_or(0),
        _ => 0,
    }
}

/// Cuts every string in `value` longer than `limit` bytes.
fn cut_strings(value: &mut Value, limit: usize, note: &str) {
    match value {
        Value::String(text) => cut_text(text, limit, note),
        Value::Array(items) => items.iter_mut().for_each(|v| cut_strings(v, limit, note)),
        Value::Object(map) => map.values_mut().for_each(|v| cut_strings(v, limit, note)),
        _ => {}
    }
}

/// Cuts `text` to its head and tail within `limit` bytes, with a marker saying how much was
/// left out and `note`.
fn cut_text(text: &mut String, limit: usize, note: &str) {
    if text.len() <= limit {
        return;
    }
    let mut head_end = limit * 2 / 3;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - (limit - limit * 2 / 3);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let omitted = tail_start - head_end;
    *text = format!(
        "{}\n[... {omitted}{CUT_MARKER}{note} ...]\n{}",
        &text[..head_end],
        &text[tail_start..]
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::parse_spill_notice;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_short_output_passes_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let content = vec![ContentBlock::text("hello")];
        let path = dir.path().join("s.txt");
        let cap = OutputCap {
            max_bytes: 10,
            ..OutputCap::default()
        };
        assert_eq!(cap.apply(content.clone(), &path), content);
        assert!(!path.exists());
    }

    #[test]
    fn a_long_output_keeps_head_and_tail_and_spills_every_byte_privately() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spill/call-1.txt");
        let whole: String = (0..2000).map(|i| format!("line {i} é\n")).collect();
        let cap = OutputCap {
            max_bytes: 1000,
            ..OutputCap::default()
        };
        let capped = cap.apply(vec![ContentBlock::text(whole.clone())], &path);
        let [ContentBlock::Text { text }] = capped.as_slice() else {
            panic!("expected one text block");
        };
        assert!(text.starts_with("line 0 é\n"));
        assert!(text.contains("line 1999 é\n"));
        assert!(text.len() < 1200);
        let notice = parse_spill_notice(text).expect("the notice is recognised");
        assert_eq!(notice.total_bytes, whole.len() as u64);
        assert_eq!(std::fs::read_to_string(&notice.path).unwrap(), whole);
        let mode = std::fs::metadata(&notice.path)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn output_streamed_in_chunks_keeps_its_head_even_from_one_large_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let whole: String = (0..500).map(|i| format!("line {i}\n")).collect();
        for chunk_size in [37, whole.len()] {
            let path = dir.path().join(format!("s{chunk_size}.txt"));
            let mut capture = OutputCapture::new(300, path);
            for chunk in whole.as_bytes().chunks(chunk_size) {
                capture.push(chunk);
            }
            let out = capture.finish();
            assert!(out.text.starts_with("line 0\nline 1\n"), "{}", out.text);
            assert!(out.text.contains("line 499\n"));
            let notice = parse_spill_notice(&out.text).unwrap();
            assert_eq!(std::fs::read_to_string(notice.path).unwrap(), whole);
        }
    }

    #[test]
    fn the_spill_file_stops_at_its_limit_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.txt");
        let mut capture = OutputCapture::new(100, path.clone()).with_spill_limit(1000);
        for _ in 0..100 {
            capture.push(&[b'x'; 100]);
        }
        capture.push(b"\nthe end\n");
        assert!(capture.over_spill_limit());
        let out = capture.finish();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1000);
        assert!(
            out.text.contains("only its first 1000 bytes were saved"),
            "{}",
            out.text
        );
        assert!(out.text.contains("the end"), "{}", out.text);
        assert_eq!(parse_spill_notice(&out.text).unwrap().total_bytes, 1000);
    }

    #[test]
    fn the_log_keeps_long_strings_cut_and_the_whole_output_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spill/call-1-output.json");
        let text = "y".repeat(100_000);
        let output = serde_json::json!({"path": "big.txt", "text": text, "total_lines": 1});
        let detail = Detail::Code {
            language: "text".into(),
            code: text.clone(),
        };
        let (logged, detail) = OutputCap::default().for_the_log(Some(&output), Some(detail), &path);
        let logged = logged.unwrap();
        assert_eq!(logged["path"], "big.txt");
        let kept = logged["text"].as_str().unwrap();
        assert!(kept.len() < 31_000, "{}", kept.len());
        assert!(kept.contains(&path.display().to_string()));
        let Some(Detail::Code { code, .. }) = detail else {
            panic!("the detail keeps its kind");
        };
        assert!(code.len() < 31_000);
        let saved: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(saved, output);
        let small = serde_json::json!({"ok": true});
        let (kept, _) = OutputCap::default().for_the_log(Some(&small), None, &path);
        assert_eq!(kept.unwrap(), small);
    }
}
