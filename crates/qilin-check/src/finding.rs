//! A finding: which rule, where, what is wrong and what would be right.

use crate::Rule;
use qilin_skill::{Diagnostic, Severity};
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a finding is: a place in a file, or a tool and one of its fields (a tool's
/// definition lives in Rust code the checker does not see).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Location {
    /// A file, with a line and column (both from 1) when known.
    File {
        /// The file or folder.
        path: PathBuf,
        /// The line, from 1.
        line: Option<usize>,
        /// The column, from 1, in characters.
        column: Option<usize>,
    },
    /// A tool, and the part of it the finding is about (`description`, `prompt hint`,
    /// `parameter `options.mode``).
    Tool {
        /// The tool's wire name.
        name: String,
        /// The part of the tool.
        field: String,
    },
}

impl Location {
    /// A place in a file.
    pub fn file(path: &Path, line: Option<usize>, column: Option<usize>) -> Self {
        Location::File {
            path: path.to_path_buf(),
            line,
            column,
        }
    }

    /// A part of a tool.
    pub fn tool(name: &str, field: impl Into<String>) -> Self {
        Location::Tool {
            name: name.to_string(),
            field: field.into(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File { path, line, column } => {
                write!(f, "{}", path.display())?;
                if let Some(line) = line {
                    write!(f, ":{line}")?;
                    if let Some(column) = column {
                        write!(f, ":{column}")?;
                    }
                }
                Ok(())
            }
            Location::Tool { name, field } => write!(f, "tool {name}: {field}"),
        }
    }
}

/// One problem found by a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule that found it.
    pub rule: Rule,
    /// Error or warning (the rule's severity).
    pub severity: Severity,
    /// What is wrong, in one line.
    pub message: String,
    /// Where.
    pub location: Location,
    /// What would be right.
    pub help: String,
}

impl Finding {
    /// A finding of `rule` with the rule's severity.
    pub fn new(
        rule: Rule,
        location: Location,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        Finding {
            rule,
            severity: rule.severity(),
            message: message.into(),
            location,
            help: help.into(),
        }
    }

    /// A finding of `rule` for a diagnostic from loading a skill or agent file: placed at its
    /// file and line; the message's last `; ` clause (a suggestion) becomes the help when
    /// `suggests`, else `default_help` is the help.
    pub(crate) fn from_diagnostic(
        rule: Rule,
        diagnostic: &Diagnostic,
        suggests: bool,
        default_help: &str,
    ) -> Self {
        let (message, help) = match diagnostic.message.rsplit_once("; ").filter(|_| suggests) {
            Some((message, help)) => (message, help),
            None => (diagnostic.message.as_str(), default_help),
        };
        let column = diagnostic.line.map(|_| 1);
        Finding::new(
            rule,
            Location::file(&diagnostic.path, diagnostic.line, column),
            message,
            help,
        )
    }

    /// True for an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The finding as `--json` prints it: stable field names, absent parts as `null`.
    pub fn to_json(&self) -> JsonFinding<'_> {
        let (path, line, column, tool, field) = match &self.location {
            Location::File { path, line, column } => {
                (Some(path.as_path()), *line, *column, None, None)
            }
            Location::Tool { name, field } => {
                (None, None, None, Some(name.as_str()), Some(field.as_str()))
            }
        };
        JsonFinding {
            code: self.rule.code(),
            rule: self.rule.name(),
            severity: self.severity,
            message: &self.message,
            location: self.location.to_string(),
            path,
            line,
            column,
            tool,
            field,
            help: &self.help,
        }
    }
}

/// A finding as JSON: `code`, `rule`, `severity`, `message`, `location` (as the text output
/// shows it), `path`/`line`/`column` for a file, `tool`/`field` for a tool, and `help`.
#[derive(Debug, Serialize)]
pub struct JsonFinding<'a> {
    /// The rule's code (`Q201`).
    pub code: &'static str,
    /// The rule's name (`parameter-undocumented`).
    pub rule: &'static str,
    /// `error` or `warning`.
    pub severity: Severity,
    /// What is wrong.
    pub message: &'a str,
    /// The place, as text.
    pub location: String,
    /// The file, for a finding in a file.
    pub path: Option<&'a Path>,
    /// The line, from 1.
    pub line: Option<usize>,
    /// The column, from 1.
    pub column: Option<usize>,
    /// The tool, for a finding about a tool.
    pub tool: Option<&'a str>,
    /// The part of the tool.
    pub field: Option<&'a str>,
    /// What would be right.
    pub help: &'a str,
}
