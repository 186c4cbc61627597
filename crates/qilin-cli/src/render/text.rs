//! Measuring, cutting and wrapping lines by the columns a terminal gives them, with Qilin's own
//! colour codes (`ESC [ … m`, the only escapes a rendered line holds: everything from a model or
//! a tool is made visible first) taking none.

use unicode_width::UnicodeWidthChar;

/// The columns `text` takes on a terminal (colour codes take none; a tab counts as 4).
pub fn width(text: &str) -> usize {
    let mut columns = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_escape(&mut chars);
            continue;
        }
        columns += char_width(c);
    }
    columns
}

fn char_width(c: char) -> usize {
    if c == '\t' { 4 } else { c.width().unwrap_or(0) }
}

/// Skips the rest of an escape sequence whose `ESC` was just read.
fn skip_escape(chars: &mut std::str::Chars<'_>) {
    if chars.clone().next() == Some('[') {
        chars.next();
        for c in chars.by_ref() {
            if ('\x40'..='\x7e').contains(&c) {
                break;
            }
        }
    }
}

/// `text` cut to at most `columns` columns, ending in `…` when cut, its colours closed.
pub fn truncate(text: &str, columns: usize) -> String {
    if width(text) <= columns {
        return text.to_string();
    }
    if columns == 0 {
        return String::new();
    }
    let mut out = String::with_capacity(text.len());
    let mut used = 0;
    let mut styled = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            let start = chars.as_str();
            skip_escape(&mut chars);
            let taken = start.len() - chars.as_str().len();
            out.push('\x1b');
            out.push_str(&start[..taken]);
            styled = true;
            continue;
        }
        let w = char_width(c);
        if used + w > columns - 1 {
            break;
        }
        used += w;
        if c == '\t' {
            out.push_str("    ");
        } else {
            out.push(c);
        }
    }
    out.push('…');
    if styled {
        out.push_str("\x1b[0m");
    }
    out
}

/// `text` (one line, without line breaks) wrapped at spaces to lines of at most `columns`
/// columns; a word longer than a line is cut across lines. The colour in force at a break is
/// closed at the end of its line and opened again on the next. `indent` starts every line but
/// the first.
pub fn wrap(text: &str, columns: usize, indent: &str) -> Vec<String> {
    let columns = columns.max(8);
    let indent_width = width(indent);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut line_width = 0;
    let mut active = String::new();
    for word in split_words(text) {
        let word_width = width(&word);
        let limit = if lines.is_empty() {
            columns
        } else {
            columns.saturating_sub(indent_width).max(4)
        };
        if line_width + word_width > limit && line_width > 0 {
            let trimmed = line.trim_end_matches(' ').to_string();
            lines.push(close(&trimmed, &active));
            line = active.clone();
            line_width = 0;
            if word.trim().is_empty() {
                track(&word, &mut active);
                continue;
            }
        }
        let limit = if lines.is_empty() {
            columns
        } else {
            columns.saturating_sub(indent_width).max(4)
        };
        if word_width > limit {
            let mut chars = word.chars();
            while let Some(c) = chars.next() {
                if c == '\x1b' {
                    let start = chars.as_str();
                    skip_escape(&mut chars);
                    let code = format!("\x1b{}", &start[..start.len() - chars.as_str().len()]);
                    line.push_str(&code);
                    track(&code, &mut active);
                    continue;
                }
                let w = char_width(c);
                if line_width + w > limit && line_width > 0 {
                    lines.push(close(&line, &active));
                    line = active.clone();
                    line_width = 0;
                }
                line.push(c);
                line_width += w;
            }
            continue;
        }
        line.push_str(&word);
        line_width += word_width;
        track(&word, &mut active);
    }
    lines.push(close(line.trim_end_matches(' '), &active));
    lines
        .into_iter()
        .enumerate()
        .map(|(n, l)| if n == 0 { l } else { format!("{indent}{l}") })
        .collect()
}

/// The line closed with a reset when a colour is in force.
fn close(line: &str, active: &str) -> String {
    if active.is_empty() {
        line.to_string()
    } else {
        format!("{line}\x1b[0m")
    }
}

/// Follows the colour codes of `word`: a reset clears what is in force, another adds to it.
fn track(word: &str, active: &mut String) {
    let mut rest = word;
    while let Some(start) = rest.find('\x1b') {
        let after = &rest[start..];
        let end = after.find('m').map_or(after.len(), |e| e + 1);
        let code = &after[..end];
        if code == "\x1b[0m" {
            active.clear();
        } else {
            active.push_str(code);
        }
        rest = &after[end..];
    }
}

/// Words and the spaces after them, each escape sequence kept with the word it begins.
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_space = false;
    for c in text.chars() {
        let space = c == ' ';
        if !space && in_space && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        in_space = space;
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_codes_take_no_columns_and_wide_characters_two() {
        assert_eq!(width("\x1b[1mbold\x1b[0m"), 4);
        assert_eq!(width("漢字"), 4);
        assert_eq!(width("a\tb"), 6);
    }

    #[test]
    fn a_cut_keeps_within_the_columns_and_closes_its_colour() {
        assert_eq!(truncate("hello world", 8), "hello w…");
        assert_eq!(truncate("short", 8), "short");
        let cut = truncate("\x1b[2mdimmed text here\x1b[0m", 6);
        assert_eq!(width(&cut), 6);
        assert!(cut.ends_with("…\x1b[0m"), "{cut:?}");
        assert_eq!(width(&truncate("漢字漢字漢字", 5)), 5);
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_carries_colours_over() {
        assert_eq!(
            wrap("the quick brown fox jumps over", 12, ""),
            ["the quick", "brown fox", "jumps over"]
        );
        assert_eq!(wrap("ab cd", 12, "  "), ["ab cd"]);
        assert_eq!(
            wrap("one two three four", 9, "  "),
            ["one two", "  three", "  four"]
        );
        let styled = wrap("\x1b[1malpha beta gamma\x1b[0m", 11, "");
        assert_eq!(styled.len(), 2, "{styled:?}");
        assert!(styled[0].ends_with("\x1b[0m"), "{styled:?}");
        assert!(styled[1].starts_with("\x1b[1m"), "{styled:?}");
        for line in wrap(&"x".repeat(30), 10, "") {
            assert!(width(&line) <= 10);
        }
    }
}
