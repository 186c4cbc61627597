//! The workspace an agent file belongs to.

use std::path::{Path, PathBuf};

/// The workspace of an agent file: the nearest folder above it holding `.qilin/`, else the
/// file's own folder. The agent's `instructions_file` must lie inside it.
pub fn agent_workspace(agent_file: &Path) -> PathBuf {
    let absolute = std::path::absolute(agent_file).unwrap_or_else(|_| agent_file.to_path_buf());
    let folder = absolute.parent().unwrap_or(Path::new(".")).to_path_buf();
    folder
        .ancestors()
        .find(|dir| dir.join(".qilin").is_dir())
        .map_or(folder.clone(), Path::to_path_buf)
}
