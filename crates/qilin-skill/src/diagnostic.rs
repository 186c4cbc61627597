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

/// What a diagnostic is about, for tools that act on diagnostics without reading their
/// message (`qilin check` picks its rule code from it). Serialized in snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    /// A skill or agent file is not valid YAML, or lacks a required key or has a value of the
    /// wrong type.
    InvalidYaml,
    /// A skill or agent file has a key that is not read; it has no effect (warning).
    UnknownKey,
    /// A skill's `SKILL.md` could not be read, has no front matter, or has an empty
    /// description.
    InvalidSkill,
    /// A skill's `metadata` value is not a string, number or boolean, so it is ignored
    /// (warning).
    IgnoredMetadata,
    /// A skill's name breaks the format's naming rules (uppercase, spaces, underscores, over
    /// 64 characters); the skill loads under it (warning).
    NonstandardName,
    /// A skill's name differs from its folder's; the skill loads under its name (warning).
    NameNotFolder,
    /// A skill has no usable `name`; it loads under its folder's name (warning).
    MissingName,
    /// A skill's description is over 1,024 characters; the skill loads with all of it
    /// (warning).
    LongDescription,
    /// A front matter value holds an unquoted `: `, which is not valid YAML; it was read as
    /// quoted text (warning).
    UnquotedColon,
    /// A skill's `license`, `compatibility` or `allowed-tools` is of the wrong type (ignored)
    /// or over its length (kept) (warning).
    IgnoredField,
    /// A symlink in a skill folder leads outside the folder or back into itself, so it is
    /// not listed (warning).
    SkippedLink,
    /// A skill folder, or an entry in it, could not be listed (warning).
    UnlistableSkillFiles,
    /// A skill folder holds more files than are listed; the rest are left out (warning).
    TooManySkillFiles,
    /// A skills folder given explicitly does not exist.
    MissingSkillsFolder,
    /// A skills folder exists but could not be read.
    UnreadableSkillsFolder,
    /// A folder among the skills has no `SKILL.md`, so it is not a skill (warning).
    NotASkill,
    /// A skill has the name of one found earlier, which is used instead (warning).
    DuplicateSkill,
    /// An agent file could not be read, or is wrong in a way no other kind names: its
    /// instructions (none, both forms, an unreadable `instructions_file`) or a review rule.
    InvalidAgent,
    /// An agent's `tools` names a tool that does not exist.
    UnknownTool,
    /// An agent's `tools` names a code-mode-only tool, which is left out of the tools list and
    /// reached through `run_code` only (warning; `qilin check` fails on it).
    CodeModeOnlyTool,
    /// An agent's `tools` names a tool twice; it is mounted once (warning).
    DuplicateTool,
    /// An agent's `skills.available` or `skills.preload` names a skill that was not found.
    UnknownSkill,
    /// A file an agent preloads cannot be read from its skill: it does not exist, leaves the
    /// skill folder, or is not text.
    UnreadablePreloadFile,
    /// An agent sets `limits.code` with code mode off, where it has no effect (warning).
    CodeLimitsWithoutCodeMode,
    /// An MCP server declaration (in an agent file's `mcp_servers` or the workspace's
    /// `.qilin/mcp.yaml`) is wrong: its name, no or both of `command` and `url`, a reference
    /// to a server the workspace does not declare.
    InvalidMcpServer,
    /// A check declaration (in an agent file's `checks` or the workspace's
    /// `.qilin/checks.yaml`) is wrong: no id or a duplicate one, no command, an unknown parser,
    /// a bad timeout, a `depends_on` naming no check.
    InvalidCheck,
}

/// One finding about a file: where it is and what is wrong, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Warning or error.
    pub severity: Severity,
    /// What the finding is about.
    pub kind: DiagnosticKind,
    /// The file (or folder) the finding is about.
    pub path: PathBuf,
    /// The line in that file, from 1, when the finding has one.
    pub line: Option<usize>,
    /// What is wrong and what is expected.
    pub message: String,
}

impl Diagnostic {
    /// An error of `kind` about `path`, at `line` when known.
    pub fn error(
        kind: DiagnosticKind,
        path: &Path,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Error,
            kind,
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// A warning of `kind` about `path`, at `line` when known.
    pub fn warning(
        kind: DiagnosticKind,
        path: &Path,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            kind,
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
