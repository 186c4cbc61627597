//! What a session knows of where it runs, recorded once in `session.started` so that a resumed
//! session shows the model exactly what it was shown at the start.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The project context a session's system prompt carries: its environment, and the project's
/// memory files (`AGENTS.md`, `CLAUDE.md`) as they read when the session began.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectContext {
    /// Where the session runs.
    pub environment: Environment,
    /// The project's memory files, from the repository root down to the workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<MemoryFile>>", optional)]
    pub memory: Vec<MemoryFile>,
}

/// Where a session runs, as the model is told.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    /// The workspace folder, absolute.
    pub workspace: String,
    /// The operating system (`linux`, `macos`, `windows`).
    pub os: String,
    /// The user's shell (`$SHELL`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub shell: Option<String>,
    /// The date the session began, `YYYY-MM-DD` in local time.
    pub date: String,
    /// The git branch checked out (or `detached at SHA`), when the workspace is in a repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub git_branch: Option<String>,
}

/// A memory file of the project: instructions its authors wrote for agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryFile {
    /// Its path relative to the repository root (or the workspace outside a repository).
    pub path: String,
    /// Its text, cut when the project's memory files are too long together.
    pub text: String,
}

/// An approval a person gave for the rest of a session: the review policy's `ask` for this
/// tool (and, with `command_prefix`, only for commands starting with it) is answered yes
/// without asking again. Recorded in `request.resolved`, so a resumed session keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionGrant {
    /// The tool's wire name.
    pub tool: String,
    /// Only commands (the call's `command` argument) that are this prefix, or start with it
    /// followed by a space, and that chain no other command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub command_prefix: Option<String>,
}
