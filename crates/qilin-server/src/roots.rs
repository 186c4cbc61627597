//! [`Roots`]: the folders under which a client may put a session — its workspace, its agent
//! file and its scripted model's file. The server's workspace is one; `qilin serve
//! --allow-root DIR` adds others. A path a request names is resolved whole (every link
//! followed) before it is compared, so neither `..` nor a link leads out; the session then uses
//! the resolved path, so a link swapped in later is not followed either.

use crate::error::ApiError;
use axum::http::StatusCode;
use std::path::{Path, PathBuf};

/// What a request names a path for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// The session's workspace.
    Workspace,
    /// The session's agent file.
    AgentFile,
    /// The file of a `scripted:FILE` model.
    Script,
}

impl Named {
    fn noun(self) -> &'static str {
        match self {
            Named::Workspace => "the workspace",
            Named::AgentFile => "the agent file",
            Named::Script => "the scripted model's file",
        }
    }

    /// The code of the 422 answered when the path does not exist.
    fn missing_code(self) -> &'static str {
        match self {
            Named::Workspace => "invalid_workspace",
            Named::AgentFile | Named::Script => "invalid_session",
        }
    }
}

/// The folders a client may put a session under, resolved.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    folders: Vec<PathBuf>,
}

impl Roots {
    /// The roots `folders`, each resolved (links followed); one that cannot be resolved (it
    /// does not exist) is kept as given, and only a path under it as given matches it.
    pub fn new(folders: impl IntoIterator<Item = PathBuf>) -> Roots {
        let mut resolved: Vec<PathBuf> = Vec::new();
        for folder in folders {
            let folder = folder.canonicalize().unwrap_or(folder);
            if !resolved.contains(&folder) {
                resolved.push(folder);
            }
        }
        Roots { folders: resolved }
    }

    /// The roots, resolved.
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// `path` resolved (links followed), when it lies under a root: 422 when it does not
    /// exist, 403 when it lies outside every root.
    pub fn confine(&self, path: &Path, named: Named) -> Result<PathBuf, ApiError> {
        let resolved = path.canonicalize().map_err(|err| {
            let why = match err.kind() {
                std::io::ErrorKind::NotFound => "does not exist".to_string(),
                _ => format!("cannot be read ({err})"),
            };
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                named.missing_code(),
                format!("{} {} {why}", named.noun(), path.display()),
            )
        })?;
        if self.folders.iter().any(|root| resolved.starts_with(root)) {
            return Ok(resolved);
        }
        let shown = if resolved == path {
            resolved.display().to_string()
        } else {
            format!("{} (which is {})", path.display(), resolved.display())
        };
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "outside_roots",
            format!(
                "{} {shown} lies outside the folders this server lets a client use ({}); name one \
                 under them",
                named.noun(),
                self.folders
                    .iter()
                    .map(|root| root.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_must_resolve_under_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        let roots = Roots::new([root.clone()]);
        let root = root.canonicalize().unwrap();

        assert_eq!(
            roots.confine(&root.join("sub"), Named::Workspace).unwrap(),
            root.join("sub")
        );
        for escape in [
            root.join("../secret.txt"),
            root.join("out/secret.txt"),
            PathBuf::from("/etc/passwd"),
        ] {
            let refused = roots.confine(&escape, Named::Script).unwrap_err();
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{escape:?}");
            assert_eq!(refused.body.code, "outside_roots");
            assert!(
                refused
                    .body
                    .message
                    .contains("lies outside the folders this server lets")
                    && !refused.body.message.contains("--"),
                "{}",
                refused.body.message
            );
        }
        let missing = roots
            .confine(&root.join("none.agent"), Named::AgentFile)
            .unwrap_err();
        assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(missing.body.message.contains("none.agent does not exist"));
        // A root's prefix is not a root: `root-other` is not under `root`.
        let sibling = dir.path().join("root-other");
        std::fs::create_dir(&sibling).unwrap();
        assert!(roots.confine(&sibling, Named::Workspace).is_err());
    }
}
