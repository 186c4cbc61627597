//! Text from a model or a tool made safe to show on a terminal: control characters and escape
//! sequences are shown as visible escapes (`\x1b`, `\u{9b}`), never executed, so a tool's
//! output cannot write the clipboard (OSC 52), set the window title, move the cursor or
//! rewrite what was shown. Line breaks and tabs stay; Qilin's own styling is added after.

use qilin_protocol::Event;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character but line breaks and tabs written as a visible escape;
/// a carriage return before a line break is dropped (Windows line endings).
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if !needs_escape(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

/// C0 controls but `\n` and `\t`, DEL, C1 controls, and the bidirectional overrides that
/// reorder what a line shows.
fn needs_escape(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// The event with every string in it made [`visible`]; the event itself when none needs it.
pub fn sanitized(event: &Event) -> Cow<'_, Event> {
    let Ok(mut value) = serde_json::to_value(event) else {
        return Cow::Borrowed(event);
    };
    if !escape_strings(&mut value) {
        return Cow::Borrowed(event);
    }
    match serde_json::from_value(value) {
        Ok(clean) => Cow::Owned(clean),
        Err(_) => Cow::Borrowed(event),
    }
}

/// Makes every string in `value` visible; true when one changed.
fn escape_strings(value: &mut Value) -> bool {
    match value {
        Value::String(text) => match visible(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(clean) => {
                *text = clean;
                true
            }
        },
        Value::Array(items) => items.iter_mut().map(escape_strings).filter(|c| *c).count() > 0,
        Value::Object(map) => map.values_mut().map(escape_strings).filter(|c| *c).count() > 0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_not_executed_and_text_stays() {
        assert_eq!(visible("plain\ttext\nnext"), "plain\ttext\nnext");
        assert_eq!(
            visible("\x1b]52;c;aGk=\x07 title\x1b[2J\rX\u{9b}31m"),
            "\\x1b]52;c;aGk=\\x07 title\\x1b[2J\\x0dX\\u{9b}31m"
        );
        assert_eq!(visible("a\r\nb"), "a\nb");
        assert_eq!(visible("abc\u{202e}fed"), "abc\\u{202e}fed");
    }
}
