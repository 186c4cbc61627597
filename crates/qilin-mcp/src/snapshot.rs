//! What a server offered when last listed — its identity, instructions and tools — kept in
//! the workspace (`.qilin/mcp/NAME.json`) so that `qilin check`, `qilin skills` and a session
//! whose server is down see the same tools and the same generated skill without starting it.

use crate::McpError;
use qilin_sandbox::read_own_text;
use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The most bytes of a kept snapshot read back (a server with hundreds of tools stays far
/// below it).
const MAX_SNAPSHOT_BYTES: u64 = 16 * 1024 * 1024;

/// A server's offer as listed: who it is, what it says about itself, its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerSnapshot {
    /// The server's name in the declaration (the prefix of its tools' names).
    pub server: String,
    /// The name the server gives itself, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// Its human-readable title, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its version, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its instructions for using it (`initialize`'s `instructions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Its tools, as `tools/list` gave them.
    pub tools: Vec<Tool>,
}

/// Where the snapshot of server `server` is kept in `workspace`.
pub fn snapshot_path(workspace: &Path, server: &str) -> PathBuf {
    workspace
        .join(".qilin")
        .join("mcp")
        .join(format!("{server}.json"))
}

/// Every snapshot kept in `workspace` (`.qilin/mcp/*.json`), by server name; a file that
/// cannot be read is an error naming it.
pub fn workspace_snapshots(workspace: &Path) -> (Vec<ServerSnapshot>, Vec<McpError>) {
    let folder = workspace.join(".qilin").join("mcp");
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return (Vec::new(), Vec::new());
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json")
                .filter(|stem| !stem.starts_with('.'))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    let mut snapshots = Vec::new();
    let mut errors = Vec::new();
    for name in names {
        match ServerSnapshot::read(workspace, &name) {
            Ok(Some(snapshot)) => snapshots.push(snapshot),
            Ok(None) => {}
            Err(error) => errors.push(error),
        }
    }
    (snapshots, errors)
}

impl ServerSnapshot {
    /// The snapshot of `server` kept in `workspace`; `Ok(None)` when there is none.
    pub fn read(workspace: &Path, server: &str) -> Result<Option<ServerSnapshot>, McpError> {
        let path = snapshot_path(workspace, server);
        let failed = |reason: String| McpError::Snapshot {
            server: server.to_string(),
            path: path.display().to_string(),
            what: "read",
            reason,
        };
        let text = match read_own_text(&path, MAX_SNAPSHOT_BYTES) {
            Ok(text) => text,
            Err(err) if err.is_not_found() => return Ok(None),
            Err(err) => return Err(failed(err.to_string())),
        };
        let snapshot: ServerSnapshot =
            serde_json::from_str(&text).map_err(|err| failed(err.to_string()))?;
        Ok(Some(snapshot))
    }

    /// Keeps the snapshot in `workspace`, replacing the file whole (written aside, then
    /// renamed) so a reader never sees half of it; unchanged content is not rewritten.
    pub fn write(&self, workspace: &Path) -> Result<(), McpError> {
        let path = snapshot_path(workspace, &self.server);
        let failed = |reason: String| McpError::Snapshot {
            server: self.server.clone(),
            path: path.display().to_string(),
            what: "written",
            reason,
        };
        let mut text = serde_json::to_string_pretty(self).map_err(|err| failed(err.to_string()))?;
        text.push('\n');
        if read_own_text(&path, MAX_SNAPSHOT_BYTES).is_ok_and(|old| old == text) {
            return Ok(());
        }
        let folder = path.parent().unwrap_or(workspace);
        std::fs::create_dir_all(folder).map_err(|err| failed(err.to_string()))?;
        let aside = folder.join(format!(".{}.{}.tmp", self.server, std::process::id()));
        std::fs::write(&aside, text).map_err(|err| failed(err.to_string()))?;
        std::fs::rename(&aside, &path).map_err(|err| {
            let _ = std::fs::remove_file(&aside);
            failed(err.to_string())
        })
    }

    /// The tool named `name` (its own name, not the namespaced one).
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }
}
