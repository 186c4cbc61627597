//! The terminal as a client: renders a session's events as they happen.

mod markdown;
mod sanitize;
mod style;
mod terminal;
mod text;

pub use sanitize::visible;
pub(crate) use style::SPINNER;
pub use style::Style;
pub(crate) use terminal::thousands;
pub use terminal::{Presenter, TerminalRenderer};
