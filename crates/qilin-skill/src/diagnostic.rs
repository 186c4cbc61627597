//! Diagnostics: what loading a skill or an agent file found wrong, with the file and line.

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The thing still loaded; something in it deserves attention (an unknown key).
    Warning,
    /// The thing could not be loaded.
    Error,
}

/// One finding about a file: where it is and what is wrong, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Warning or error.
    pub severity: Severity,
    /// The file (or folder) the finding is about.
    pub path: PathBuf,
    /// The line in that file, from 1, when the finding has one.
    pub line: Option<usize>,
    /// What is wrong and what is expected.
    pub message: String,
}

impl Diagnostic {
    /// An error about `path`, at `line` when known.
    pub fn error(path: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// A warning about `path`, at `line` when known.
    pub fn warning(path: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// True for an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        match self.line {
            Some(line) => write!(
                f,
                "{}:{line}: {severity}: {}",
                self.path.display(),
                self.message
            ),
            None => write!(f, "{}: {severity}: {}", self.path.display(), self.message),
        }
    }
}

/// A value that loaded, with the warnings found while loading it.
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    /// The loaded value.
    pub value: T,
    /// Findings that did not stop the load (unknown keys, skipped files).
    pub warnings: Vec<Diagnostic>,
}
