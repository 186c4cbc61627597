//! The workspace root as the process-running tools need it (`bash` runs in it), and paths
//! of walked files shown relative to it. Every path a file tool opens is resolved beneath the
//! workspace handle by [`qilin_tool::Workspace`] instead (see `file_access`).

use qilin_tool::{PathError, Workspace};
use std::path::{Path, PathBuf};

/// The workspace root, checked to be an openable folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    /// The root, canonical.
    pub absolute: PathBuf,
    /// The root relative to itself: `.`.
    pub relative: String,
}

/// The workspace root itself, canonical.
pub fn root(root: &Path) -> Result<WorkspacePath, PathError> {
    let workspace = Workspace::open(root)?;
    Ok(WorkspacePath {
        absolute: workspace.root().to_path_buf(),
        relative: ".".to_string(),
    })
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
