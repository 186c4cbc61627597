//! Resolution of the paths tools receive, kept inside the workspace root.
//!
//! A relative path is taken from the workspace root; an absolute path is accepted only when it
//! lies inside the root. A `..` that climbs out of the root, or a symlink whose target lies
//! outside it, is refused with an error naming the path.

use qilin_tool::ToolError;
use std::io;
use std::path::{Component, Path, PathBuf};

/// A path checked to lie inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    /// The absolute path, with symlinks of existing folders resolved.
    pub absolute: PathBuf,
    /// The path relative to the workspace root, with `/` separators (`.` for the root).
    pub relative: String,
}

/// Why a path was refused.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The argument was empty.
    #[error("the path is empty; give a path relative to the workspace root, e.g. `src/main.rs`")]
    Empty,
    /// The path, after `..` and absolute parts, lies outside the workspace.
    #[error(
        "the path `{path}` is outside the workspace `{workspace}`; give a path inside it, relative to the workspace root"
    )]
    Outside {
        /// The path as given.
        path: String,
        /// The workspace root.
        workspace: String,
    },
    /// The path goes through a symlink whose target is outside the workspace.
    #[error(
        "the path `{path}` leads out of the workspace through a symlink (to `{target}`); only files inside `{workspace}` can be used"
    )]
    SymlinkOut {
        /// The path as given.
        path: String,
        /// Where the symlink leads.
        target: String,
        /// The workspace root.
        workspace: String,
    },
    /// The workspace root itself could not be opened.
    #[error("the workspace `{workspace}` cannot be opened: {source}")]
    Workspace {
        /// The workspace root.
        workspace: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl From<PathError> for ToolError {
    fn from(error: PathError) -> Self {
        ToolError::invalid_arguments(error.to_string())
    }
}

/// Resolves `raw` against the workspace `root`, refusing every way out of it.
pub fn resolve(root: &Path, raw: &str) -> Result<WorkspacePath, PathError> {
    if raw.trim().is_empty() {
        return Err(PathError::Empty);
    }
    let given_root = normalize(root).unwrap_or_else(|| root.to_path_buf());
    let root = root.canonicalize().map_err(|source| PathError::Workspace {
        workspace: root.display().to_string(),
        source,
    })?;
    let outside = || PathError::Outside {
        path: raw.to_string(),
        workspace: root.display().to_string(),
    };
    let given = Path::new(raw);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        root.join(given)
    };
    let lexical = normalize(&joined).ok_or_else(outside)?;
    let inside = lexical
        .strip_prefix(&root)
        .or_else(|_| lexical.strip_prefix(&given_root))
        .map_err(|_| outside())?;
    let absolute = resolve_links(&root, inside).map_err(|target| PathError::SymlinkOut {
        path: raw.to_string(),
        target: target.display().to_string(),
        workspace: root.display().to_string(),
    })?;
    let relative = relative_string(&root, &absolute);
    Ok(WorkspacePath { absolute, relative })
}

/// The workspace root itself, canonical.
pub fn root(root: &Path) -> Result<WorkspacePath, PathError> {
    resolve(root, ".")
}

/// `path` relative to `root` with `/` separators, or `.` for the root itself.
pub fn relative_string(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let text: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if text.is_empty() {
        ".".to_string()
    } else {
        text.join("/")
    }
}

/// Removes `.` and folds `..` without touching the file system; `None` when `..` climbs
/// above the file system root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(part) => out.push(part),
        }
    }
    Some(out)
}

/// Walks `inside` from `root` one component at a time, following each symlink and checking
/// that its target stays inside `root`. Components that do not exist yet are appended as they
/// are. On refusal, returns where the symlink leads.
fn resolve_links(root: &Path, inside: &Path) -> Result<PathBuf, PathBuf> {
    let mut current = root.to_path_buf();
    let mut parts = inside.components().peekable();
    while let Some(part) = parts.next() {
        let next = current.join(part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = next.canonicalize().unwrap_or_else(|_| {
                    let link = std::fs::read_link(&next).unwrap_or_default();
                    normalize(&current.join(link)).unwrap_or_default()
                });
                if !target.starts_with(root) {
                    return Err(target);
                }
                current = target;
            }
            Ok(_) => current = next,
            Err(_) => {
                current = next;
                for rest in parts.by_ref() {
                    current.push(rest);
                }
            }
        }
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_absolute_paths_inside_resolve() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let by_relative = resolve(dir.path(), "src/../src/main.rs").unwrap();
        assert_eq!(by_relative.absolute, root.join("src/main.rs"));
        assert_eq!(by_relative.relative, "src/main.rs");
        let by_absolute = resolve(dir.path(), root.join("src").to_str().unwrap()).unwrap();
        assert_eq!(by_absolute.relative, "src");
        assert_eq!(resolve(dir.path(), ".").unwrap().relative, ".");
    }

    #[test]
    fn escapes_are_refused_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve(dir.path(), "../etc/passwd").unwrap_err();
        assert!(matches!(err, PathError::Outside { .. }));
        assert!(err.to_string().contains("`../etc/passwd`"));
        let err = resolve(dir.path(), "/etc/passwd").unwrap_err();
        assert!(
            err.to_string()
                .contains("`/etc/passwd` is outside the workspace")
        );
        assert!(matches!(resolve(dir.path(), " "), Err(PathError::Empty)));
    }

    #[test]
    fn a_symlink_out_is_refused_and_one_inside_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("alias")).unwrap();
        let err = resolve(dir.path(), "out/secret.txt").unwrap_err();
        assert!(matches!(err, PathError::SymlinkOut { .. }), "{err}");
        let followed = resolve(dir.path(), "alias/new.txt").unwrap();
        assert_eq!(followed.relative, "real/new.txt");
    }
}
