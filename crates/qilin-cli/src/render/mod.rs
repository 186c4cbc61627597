//! The terminal as a client: renders a session's events as they happen.

mod markdown;
mod sanitize;
mod style;
mod terminal;
mod text;

pub use sanitize::visible;
pub(crate) use style::SPINNER;
pub use style::Style;
pub use terminal::TerminalRenderer;
pub(crate) use terminal::{goal_line, thousands};
