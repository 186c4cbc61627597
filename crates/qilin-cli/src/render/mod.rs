//! The terminal as a client: renders a session's events as they happen.

mod style;
mod terminal;

pub use style::Style;
pub use terminal::TerminalRenderer;
