//! The terminal as a client: renders a session's events as they happen.

mod sanitize;
mod style;
mod terminal;

pub use sanitize::visible;
pub use style::Style;
pub use terminal::TerminalRenderer;
