//! How the file tools reach the workspace: every path resolved once beneath the workspace
//! handle ([`qilin_tool::Workspace`]), Qilin's own files protected from writes, and the work
//! done on a blocking thread so the async workers never wait on the disk.

use qilin_sandbox::Protection;
use qilin_tool::{Resolved, ToolContext, ToolError, ToolResult, Workspace};
use std::path::{Path, PathBuf};

/// What the file tools may write beyond ordinary workspace files. A host service, set from the
/// agent file's `files:` section and the files agent files name; without it the whole
/// protected set is protected.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileAccess {
    /// The protected set, the same one the bash sandbox keeps read-only: `.git`, `.qilin/`,
    /// `*.agent` files and the files agent files name, with the agent file's opt-ins.
    pub protection: Protection,
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
                .map(|access| (*access).clone())
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

    /// Resolves `raw` for writing: the protected set is refused unless the session allows
    /// it. A path is checked by its name (so a new `.git` or agent file cannot be created
    /// either) and against the paths the sandbox would keep read-only now (a protected link's
    /// target, the git folder a `.git` file names).
    pub fn writable(&self, raw: &str) -> ToolResult<Resolved> {
        let workspace = self.open()?;
        let resolved = workspace.resolve(raw)?;
        let relative = Path::new(resolved.relative());
        let protection = &self.access.protection;
        let kind = protection.by_name(workspace.root(), relative).or_else(|| {
            let scan = protection.scan(workspace.root());
            protection.protects(workspace.root(), relative, &scan)
        });
        if let Some(kind) = kind {
            return Err(ToolError::new(
                qilin_protocol::ErrorCode::InvalidArguments,
                format!(
                    "`{}` is {}, which the file tools do not change (nor create) unless the \
                     agent file allows it with {}. Change another file, or ask the user.",
                    resolved.relative(),
                    kind.describe(),
                    kind.opt_in()
                ),
            ));
        }
        Ok(resolved)
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
