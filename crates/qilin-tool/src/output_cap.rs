//! The cap on what the model sees of one call's output, and the spill of the rest.

use qilin_protocol::{ContentBlock, spill_notice};
use std::path::Path;

/// How much of a call's text output the model sees. Above the cap the whole text is written
/// to a spill file and the model gets its head, its tail and the spill notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCap {
    /// The most bytes of text the model sees from one call.
    pub max_bytes: usize,
}

impl Default for OutputCap {
    fn default() -> Self {
        OutputCap { max_bytes: 30_000 }
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
        let mut whole = String::with_capacity(text_bytes);
        let mut others = Vec::new();
        for block in content {
            match block {
                ContentBlock::Text { text } => whole.push_str(&text),
                other => others.push(other),
            }
        }
        let head_budget = self.max_bytes * 2 / 3;
        let tail_budget = self.max_bytes - head_budget;
        let head = cut_head(&whole, head_budget);
        let tail = cut_tail(&whole, tail_budget);
        let omitted = whole.len() - head.len() - tail.len();
        let ending = match write_spill(spill_path, &whole) {
            Ok(()) => spill_notice(&spill_path.to_string_lossy(), whole.len() as u64),
            Err(err) => format!(
                "[qilin: output cut; the whole output could not be saved to {}: {err}]",
                spill_path.display()
            ),
        };
        let text = format!("{head}\n[... {omitted} bytes omitted ...]\n{tail}\n{ending}\n");
        let mut capped = vec![ContentBlock::text(text)];
        capped.extend(others);
        capped
    }
}

fn write_spill(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

/// The longest prefix within `budget` bytes, ending at a line break when one is near.
fn cut_head(text: &str, budget: usize) -> &str {
    let mut end = budget.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let prefix = &text[..end];
    match prefix.rfind('\n') {
        Some(line_end) if line_end >= end / 2 => &prefix[..line_end],
        _ => prefix,
    }
}

/// The longest suffix within `budget` bytes, starting after a line break when one is near.
fn cut_tail(text: &str, budget: usize) -> &str {
    let mut start = text.len().saturating_sub(budget);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let suffix = &text[start..];
    match suffix.find('\n') {
        Some(line_start) if line_start <= suffix.len() / 2 => &suffix[line_start + 1..],
        _ => suffix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::parse_spill_notice;

    #[test]
    fn a_short_output_passes_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let content = vec![ContentBlock::text("hello")];
        let path = dir.path().join("s.txt");
        assert_eq!(
            OutputCap { max_bytes: 10 }.apply(content.clone(), &path),
            content
        );
        assert!(!path.exists());
    }

    #[test]
    fn a_long_output_keeps_head_and_tail_and_spills_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spill/call-1.txt");
        let whole: String = (0..2000).map(|i| format!("line {i} é\n")).collect();
        let capped =
            OutputCap { max_bytes: 1000 }.apply(vec![ContentBlock::text(whole.clone())], &path);
        let [ContentBlock::Text { text }] = capped.as_slice() else {
            panic!("expected one text block");
        };
        assert!(text.starts_with("line 0 é\n"));
        assert!(text.contains("line 1999 é\n"));
        assert!(text.len() < 1200);
        let notice = parse_spill_notice(text).expect("the notice is recognised");
        assert_eq!(notice.total_bytes, whole.len() as u64);
        assert_eq!(std::fs::read_to_string(notice.path).unwrap(), whole);
    }
}
