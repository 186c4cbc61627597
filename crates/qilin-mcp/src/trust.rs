//! Workspace trust: the MCP servers a workspace's `.qilin/mcp.yaml` declares — a repository's
//! own file, which a clone brings along — are started only once the user trusted that file, as
//! it is now. Starting one runs its command on this machine with the user's rights, outside any
//! sandbox (and reaching an HTTP one sends it the headers the file asks for, tokens read from
//! the environment among them), so merely looking at a cloned repository must not do it.
//!
//! The answers are kept in a [`TrustFile`] in the user's own data folder, outside every
//! workspace, keyed by the workspace's resolved path and the SHA-256 of its `.qilin/mcp.yaml`:
//! a file changed since it was trusted is asked about again. Servers an agent file declares
//! itself are not concerned.

use crate::McpError;
use qilin_skill::{MCP_WORKSPACE_FILE, McpServer, McpTransport};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest `.qilin/mcp.yaml` read to be trusted.
const MAX_DECLARATION_BYTES: u64 = 1024 * 1024;

/// Whether a workspace's servers may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustState {
    /// The workspace has no `.qilin/mcp.yaml`.
    NothingDeclared,
    /// Its `.qilin/mcp.yaml`, as it is now, was trusted.
    Trusted,
    /// Not trusted: never, or (`changed`) the file changed since it was.
    Untrusted {
        /// An earlier version of the file was trusted.
        changed: bool,
    },
}

/// Servers that may not start: a workspace's `.qilin/mcp.yaml` not trusted (as it is now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UntrustedServers {
    /// The workspace, resolved.
    pub workspace: PathBuf,
    /// Each of its servers the session would start, as `NAME: COMMAND ARGS` or `NAME: URL`.
    pub servers: Vec<String>,
    /// An earlier version of the file was trusted.
    pub changed: bool,
}

impl fmt::Display for UntrustedServers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.workspace.join(MCP_WORKSPACE_FILE);
        let why = if self.changed {
            "it changed since its servers were trusted"
        } else {
            "this workspace's servers are not trusted yet"
        };
        // Host-neutral: each host adds how its user trusts the file.
        write!(
            f,
            "{} declares MCP servers that would run on this machine with your rights, outside \
             the sandbox ({}), and {why}: read the file, then trust it",
            file.display(),
            self.servers.join("; "),
        )
    }
}

/// How a server is reached, for a person deciding whether to trust it.
pub fn describe(server: &McpServer) -> String {
    match &server.transport {
        McpTransport::Stdio { command, args, .. } => {
            let mut line = format!("{}: {command}", server.name);
            for arg in args {
                line.push(' ');
                line.push_str(arg);
            }
            line
        }
        McpTransport::Http { url, .. } => format!("{}: {url}", server.name),
    }
}

/// The workspaces whose `.qilin/mcp.yaml` declares one of `servers`, each once, in order.
fn declaring_workspaces(servers: &[McpServer]) -> Vec<PathBuf> {
    let mut workspaces: Vec<PathBuf> = Vec::new();
    for server in servers {
        if server.declared_in == server.workspace.join(MCP_WORKSPACE_FILE)
            && !workspaces.contains(&server.workspace)
        {
            workspaces.push(server.workspace.clone());
        }
    }
    workspaces
}

/// Refuses `servers` when a workspace's `.qilin/mcp.yaml` declares some of them and is not
/// trusted in `trust` (with no trust file, no workspace's servers are trusted).
pub fn check_trust(trust: Option<&TrustFile>, servers: &[McpServer]) -> Result<(), McpError> {
    for workspace in declaring_workspaces(servers) {
        let state = match trust {
            Some(trust) => trust.state(&workspace)?,
            None => TrustState::Untrusted { changed: false },
        };
        if let TrustState::Untrusted { changed } = state {
            let servers = servers
                .iter()
                .filter(|server| server.declared_in == workspace.join(MCP_WORKSPACE_FILE))
                .map(describe)
                .collect();
            return Err(McpError::Untrusted(UntrustedServers {
                workspace: resolved(&workspace)?,
                servers,
                changed,
            }));
        }
    }
    Ok(())
}

/// The remembered answers: a JSON file in the user's data folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustFile {
    path: PathBuf,
}

/// The file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Remembered {
    /// Trusted workspaces by resolved path.
    workspaces: BTreeMap<String, TrustedWorkspace>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TrustedWorkspace {
    /// The SHA-256 of its `.qilin/mcp.yaml` when it was trusted, in hex.
    mcp_yaml_sha256: String,
    /// When, in seconds since 1970.
    trusted_at: u64,
}

impl TrustFile {
    /// The answers kept at `path` (created when the first is given).
    pub fn new(path: impl Into<PathBuf>) -> TrustFile {
        TrustFile { path: path.into() }
    }

    /// Where the answers are kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `workspace`'s `.qilin/mcp.yaml`, as it is now, is trusted.
    pub fn state(&self, workspace: &Path) -> Result<TrustState, McpError> {
        let Some(digest) = declaration_digest(workspace)? else {
            return Ok(TrustState::NothingDeclared);
        };
        let remembered = self.read()?;
        let key = resolved(workspace)?.display().to_string();
        Ok(match remembered.workspaces.get(&key) {
            Some(trusted) if trusted.mcp_yaml_sha256 == digest => TrustState::Trusted,
            Some(_) => TrustState::Untrusted { changed: true },
            None => TrustState::Untrusted { changed: false },
        })
    }

    /// Trusts `workspace`'s `.qilin/mcp.yaml` as it is now (until it changes).
    pub fn trust(&self, workspace: &Path) -> Result<(), McpError> {
        let Some(digest) = declaration_digest(workspace)? else {
            return Ok(());
        };
        let mut remembered = self.read()?;
        let trusted_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        remembered.workspaces.insert(
            resolved(workspace)?.display().to_string(),
            TrustedWorkspace {
                mcp_yaml_sha256: digest,
                trusted_at,
            },
        );
        self.write(&remembered)
    }

    fn failed(&self, what: &'static str, reason: impl fmt::Display) -> McpError {
        McpError::Trust {
            path: self.path.display().to_string(),
            what,
            reason: reason.to_string(),
        }
    }

    fn read(&self) -> Result<Remembered, McpError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|err| {
                self.failed(
                    "read",
                    format!("{err} (delete the file to forget every answer)"),
                )
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Remembered::default()),
            Err(err) => Err(self.failed("read", err)),
        }
    }

    /// Writes the answers whole, readable by the user alone, replacing the file at once.
    fn write(&self, remembered: &Remembered) -> Result<(), McpError> {
        use std::io::Write;
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let folder = self
            .path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)
            .map_err(|err| self.failed("written", err))?;
        let text =
            serde_json::to_vec_pretty(remembered).map_err(|err| self.failed("written", err))?;
        let mut aside = self.path.as_os_str().to_os_string();
        aside.push(format!(".{}.tmp", std::process::id()));
        let aside = PathBuf::from(aside);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&aside)
            .and_then(|mut file| file.write_all(&text).and_then(|()| file.sync_all()))
            .and_then(|()| std::fs::rename(&aside, &self.path));
        if let Err(err) = written {
            let _ = std::fs::remove_file(&aside);
            return Err(self.failed("written", err));
        }
        Ok(())
    }
}

/// `workspace` resolved (links followed), as the answers are keyed.
fn resolved(workspace: &Path) -> Result<PathBuf, McpError> {
    workspace.canonicalize().map_err(|err| McpError::Trust {
        path: workspace.display().to_string(),
        what: "read",
        reason: format!("the workspace cannot be resolved: {err}"),
    })
}

/// The SHA-256 of `workspace`'s `.qilin/mcp.yaml`, in hex; `None` when it has none.
fn declaration_digest(workspace: &Path) -> Result<Option<String>, McpError> {
    let path = workspace.join(MCP_WORKSPACE_FILE);
    let failed = |reason: String| McpError::Trust {
        path: path.display().to_string(),
        what: "read",
        reason,
    };
    let metadata = match std::fs::metadata(&path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(failed(err.to_string())),
    };
    if !metadata.is_file() {
        return Err(failed("it is not a regular file".to_string()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .and_then(|file| file.take(MAX_DECLARATION_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|err| failed(err.to_string()))?;
    if bytes.len() as u64 > MAX_DECLARATION_BYTES {
        return Err(failed(format!(
            "it is larger than {} KiB",
            MAX_DECLARATION_BYTES / 1024
        )));
    }
    Ok(Some(
        Sha256::digest(&bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_the_file_and_its_servers_and_no_host_command() {
        let untrusted = UntrustedServers {
            workspace: PathBuf::from("/work/repo"),
            servers: vec!["arith: node server.js".to_string()],
            changed: true,
        };
        assert_eq!(
            untrusted.to_string(),
            "/work/repo/.qilin/mcp.yaml declares MCP servers that would run on this machine with \
             your rights, outside the sandbox (arith: node server.js), and it changed since its \
             servers were trusted: read the file, then trust it"
        );
    }

    fn declare(workspace: &Path, text: &str) {
        std::fs::create_dir_all(workspace.join(".qilin")).unwrap();
        std::fs::write(workspace.join(MCP_WORKSPACE_FILE), text).unwrap();
    }

    #[test]
    fn a_trusted_file_stays_trusted_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("repo");
        std::fs::create_dir_all(&workspace).unwrap();
        let trust = TrustFile::new(dir.path().join("data/qilin/trust.json"));
        assert_eq!(
            trust.state(&workspace).unwrap(),
            TrustState::NothingDeclared
        );

        declare(&workspace, "mcp_servers:\n  files:\n    command: server\n");
        assert_eq!(
            trust.state(&workspace).unwrap(),
            TrustState::Untrusted { changed: false }
        );
        trust.trust(&workspace).unwrap();
        assert_eq!(trust.state(&workspace).unwrap(), TrustState::Trusted);
        // The same folder by another path (a link) is the same workspace.
        std::os::unix::fs::symlink(&workspace, dir.path().join("link")).unwrap();
        assert_eq!(
            trust.state(&dir.path().join("link")).unwrap(),
            TrustState::Trusted
        );

        declare(&workspace, "mcp_servers:\n  files:\n    command: other\n");
        assert_eq!(
            trust.state(&workspace).unwrap(),
            TrustState::Untrusted { changed: true }
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(trust.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_damaged_trust_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        declare(dir.path(), "mcp_servers: {}\n");
        let path = dir.path().join("trust.json");
        std::fs::write(&path, "not json").unwrap();
        let error = TrustFile::new(&path).state(dir.path()).unwrap_err();
        assert!(
            error.to_string().contains("trust.json") && error.to_string().contains("delete"),
            "{error}"
        );
    }
}
