//! A terminal's output as plain text for the model: escape sequences (colours, cursor moves,
//! titles) removed, and a line rewritten in place — a progress bar redrawn after `\r`, a
//! character erased with backspace, the rest of a line cleared — shown as it ended up.

use vte::{Params, Parser, Perform};

/// Turns a terminal's byte stream into text, line by line. The line being written stays
/// open between chunks, so a line redrawn across two reads still comes out once.
pub(crate) struct TextRenderer {
    parser: Parser,
    lines: Lines,
}

#[derive(Default)]
struct Lines {
    /// Lines ended since the last [`TextRenderer::take`].
    done: String,
    /// The line being written.
    line: Vec<char>,
    /// The cursor's column in `line`.
    column: usize,
    /// What the last `take` showed of the open line.
    shown: Vec<char>,
    /// Bytes of ended lines dropped unread by [`TextRenderer::bound_pending`].
    dropped: u64,
}

impl Default for TextRenderer {
    fn default() -> Self {
        TextRenderer {
            parser: Parser::new(),
            lines: Lines::default(),
        }
    }
}

impl TextRenderer {
    /// Feeds bytes of output.
    pub fn push(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.lines, bytes);
    }

    /// The text since the previous `take`: the lines ended since, then the open line as it
    /// stands (a prompt, a question). When that open line only grew since it was last shown,
    /// the part already shown is not repeated.
    pub fn take(&mut self) -> String {
        let text = self.peek();
        self.lines.done.clear();
        self.lines.shown = self.lines.line.clone();
        text
    }

    /// What [`TextRenderer::take`] would return now, without taking it.
    pub fn peek(&self) -> String {
        let lines = &self.lines;
        let mut text = lines.done.clone();
        text.extend(lines.line.iter());
        let shown: String = lines.shown.iter().collect();
        if !shown.is_empty() && text.starts_with(&shown) {
            text.drain(..shown.len());
        }
        text
    }

    /// Keeps at most about `max` bytes of ended lines not yet taken, dropping the oldest
    /// whole lines (counted for [`TextRenderer::take_dropped`]).
    pub fn bound_pending(&mut self, max: usize) {
        let done = &mut self.lines.done;
        if done.len() <= max {
            return;
        }
        let mut cut = done.len() - max / 2;
        while !done.is_char_boundary(cut) {
            cut += 1;
        }
        let cut = done[cut..].find('\n').map_or(done.len(), |at| cut + at + 1);
        done.drain(..cut);
        self.lines.dropped += cut as u64;
    }

    /// Bytes of unread lines [`TextRenderer::bound_pending`] dropped since it was last asked.
    pub fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.lines.dropped)
    }
}

impl Lines {
    fn end_line(&mut self) {
        self.done.extend(self.line.iter());
        self.done.push('\n');
        self.line.clear();
        self.column = 0;
    }

    fn put(&mut self, c: char) {
        while self.line.len() < self.column {
            self.line.push(' ');
        }
        if self.column < self.line.len() {
            self.line[self.column] = c;
        } else {
            self.line.push(c);
        }
        self.column += 1;
    }
}

/// The first parameter of a sequence, or `default` when absent or zero.
fn first_param(params: &Params, default: usize) -> usize {
    match params.iter().next().and_then(|p| p.first()) {
        Some(&n) if n > 0 => n as usize,
        _ => default,
    }
}

impl Perform for Lines {
    fn print(&mut self, c: char) {
        self.put(c);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | 0x0b | 0x0c => self.end_line(),
            b'\r' => self.column = 0,
            0x08 => self.column = self.column.saturating_sub(1),
            b'\t' => {
                let next = (self.column / 8 + 1) * 8;
                while self.column < next {
                    self.put(' ');
                }
            }
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _ignore: bool, action: char) {
        if !intermediates.is_empty() {
            return;
        }
        match action {
            // Erase in line: to its end, to the cursor, or all of it.
            'K' => match params.iter().next().and_then(|p| p.first()).copied() {
                Some(1) => {
                    let end = (self.column + 1).min(self.line.len());
                    self.line[..end].fill(' ');
                }
                Some(2) => self.line.clear(),
                _ => self.line.truncate(self.column),
            },
            'C' => self.column += first_param(params, 1),
            'D' => self.column = self.column.saturating_sub(first_param(params, 1)),
            'G' => self.column = first_param(params, 1) - 1,
            // Erase in display: a cleared screen starts its text on a fresh line.
            'J' if first_param(params, 0) >= 2 && !self.line.is_empty() => self.end_line(),
            _ => {}
        }
    }
}

/// `bytes` with every escape sequence removed and each line shown as it ended up.
#[cfg(test)]
fn render(bytes: &[u8]) -> String {
    let mut renderer = TextRenderer::default();
    renderer.push(bytes);
    renderer.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_titles_go_and_text_stays() {
        assert_eq!(
            render(b"\x1b]0;title\x07\x1b[1;31mFAILED\x1b[0m x\r\n"),
            "FAILED x\n"
        );
    }

    #[test]
    fn a_redrawn_line_shows_as_it_ended_up() {
        assert_eq!(render(b"10%\r50%\r100%\r\ndone\r\n"), "100%\ndone\n");
        assert_eq!(render(b"abc\x08\x08X\r\n"), "aXc\n");
        assert_eq!(render(b"long line\r\x1b[Kshort\n"), "short\n");
        assert_eq!(render(b"a\tb\n"), "a       b\n");
    }

    #[test]
    fn an_open_line_is_not_repeated_when_it_only_grew() {
        let mut renderer = TextRenderer::default();
        renderer.push(b"Name? ");
        assert_eq!(renderer.take(), "Name? ");
        assert_eq!(renderer.peek(), "");
        renderer.push(b"Qilin\r\nHello, Qilin\r\n>>> ");
        assert_eq!(renderer.peek(), "Qilin\nHello, Qilin\n>>> ");
        assert_eq!(renderer.take(), "Qilin\nHello, Qilin\n>>> ");
        renderer.push(b"\r\x1b[Kredrawn");
        assert_eq!(renderer.take(), "redrawn");
    }

    #[test]
    fn unread_lines_are_bounded_oldest_first() {
        let mut renderer = TextRenderer::default();
        for n in 0..100 {
            renderer.push(format!("line {n:03}\n").as_bytes());
        }
        renderer.bound_pending(200);
        let dropped = renderer.take_dropped();
        let text = renderer.take();
        assert!(text.len() <= 200 && text.ends_with("line 099\n"), "{text}");
        assert!(text.starts_with("line "), "whole lines are kept: {text}");
        assert_eq!(dropped as usize + text.len(), 100 * 9);
    }

    #[test]
    fn a_multi_byte_character_split_between_chunks_comes_out_whole() {
        let mut renderer = TextRenderer::default();
        let bytes = "é€\n".as_bytes();
        renderer.push(&bytes[..1]);
        renderer.push(&bytes[1..4]);
        renderer.push(&bytes[4..]);
        assert_eq!(renderer.take(), "é€\n");
    }
}
