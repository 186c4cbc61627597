//! How the file tools reach the workspace: every path resolved once beneath the workspace
//! handle ([`qilin_tool::Workspace`]), Qilin's own files protected from writes, and the work
//! done on a blocking thread so the async workers never wait on the disk.

use qilin_tool::{Resolved, ToolContext, ToolError, ToolResult, Workspace};
use std::path::PathBuf;

/// What the file tools may write beyond ordinary workspace files. A host service, set from the
/// agent file's `files:` section; without it Qilin's own files are protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileAccess {
    /// Let `write`, `edit` and `str_replace_editor` change Qilin's own files: anything under
    /// `.qilin/` (skills, session logs) and `*.agent` files (agents and their review rules).
    pub write_qilin_files: bool,
}

/// The workspace of a call and the write permission its session grants, to take onto a
/// blocking thread.
#[derive(Debug, Clone)]
pub(crate) struct FileScope {
    root: PathBuf,
    access: FileAccess,
}

impl FileScope {
    /// The scope of the call `cx`.
    pub fn of(cx: &ToolContext) -> Self {
        FileScope {
            root: cx.workspace().to_path_buf(),
            access: cx
                .service::<FileAccess>()
                .map(|access| *access)
                .unwrap_or_default(),
        }
    }

    /// Opens the workspace root.
    pub fn open(&self) -> ToolResult<Workspace> {
        Ok(Workspace::open(&self.root)?)
    }

    /// Resolves `raw` for reading.
    pub fn readable(&self, raw: &str) -> ToolResult<(Workspace, Resolved)> {
        let workspace = self.open()?;
        let resolved = workspace.resolve(raw)?;
        Ok((workspace, resolved))
    }

    /// Resolves `raw` for writing: Qilin's own files are refused unless the session allows
    /// them.
    pub fn writable(&self, raw: &str) -> ToolResult<Resolved> {
        let resolved = self.open()?.resolve(raw)?;
        if !self.access.write_qilin_files
            && let Some(what) = protected(resolved.relative())
        {
            return Err(ToolError::new(
                qilin_protocol::ErrorCode::InvalidArguments,
                format!(
                    "`{}` is {what}, one of Qilin's own files; the file tools do not change \
                     `.qilin/` or `*.agent` files unless the agent file allows it with \
                     `files: {{write_qilin_files: true}}`. Change another file, or ask the user.",
                    resolved.relative()
                ),
            ));
        }
        Ok(resolved)
    }
}

/// What a protected workspace-relative path is, or `None` for an ordinary file.
pub(crate) fn protected(relative: &str) -> Option<&'static str> {
    let first = relative.split('/').next().unwrap_or_default();
    let name = relative.rsplit('/').next().unwrap_or_default();
    if first == ".qilin" {
        Some("inside `.qilin/` (skills, session logs)")
    } else if name.ends_with(".agent") {
        Some("an agent file")
    } else {
        None
    }
}

/// Runs `work` on a blocking thread; when the call ends first (interrupted or timed out), the
/// work finishes on its own and its result is dropped.
pub(crate) async fn blocking<T, F>(work: F) -> ToolResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> ToolResult<T> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ToolError::failed(format!("the file work stopped unexpectedly: {err}")))?
}

#[cfg(test)]
mod tests {
    use super::protected;

    #[test]
    fn qilin_folders_and_agent_files_are_protected() {
        assert!(protected(".qilin/skills/x/SKILL.md").is_some());
        assert!(protected(".qilin").is_some());
        assert!(protected("agents/coder.agent").is_some());
        assert!(protected("src/.qilin.rs").is_none());
        assert!(protected("docs/agent.md").is_none());
    }
}
