//! Colours and glyphs, or none of them when `NO_COLOR` is set or the output is not a terminal.

use qilin_protocol::CallStatus;

/// How the renderer may decorate its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours allowed.
    pub color: bool,
    /// A live region (spinners redrawn in place) allowed: the output is a terminal.
    pub live: bool,
}

impl Style {
    /// The style for standard output: live and coloured on a terminal, colour off under
    /// `NO_COLOR` (any non-empty value), plain when piped or when `TERM=dumb`.
    pub fn detect() -> Self {
        use std::io::IsTerminal;
        let dumb = std::env::var("TERM").is_ok_and(|term| term == "dumb");
        let terminal = std::io::stdout().is_terminal() && !dumb;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: terminal && !no_color,
            live: terminal,
        }
    }

    /// Plain text: no colour, no live region.
    #[cfg(test)]
    pub fn plain() -> Self {
        Style {
            color: false,
            live: false,
        }
    }

    pub(crate) fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub(crate) fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    pub(crate) fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    pub(crate) fn red(&self, text: &str) -> String {
        self.paint("31", text)
    }

    pub(crate) fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }

    pub(crate) fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }

    pub(crate) fn cyan(&self, text: &str) -> String {
        self.paint("36", text)
    }

    /// The glyph of a finished call.
    pub(crate) fn status_glyph(&self, status: CallStatus) -> String {
        match status {
            CallStatus::Ok => self.green("✓"),
            CallStatus::Error => self.red("✗"),
            CallStatus::Denied => self.yellow("⊘"),
            CallStatus::Interrupted => self.yellow("■"),
        }
    }
}

/// Spinner frames for running calls.
pub(crate) const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
