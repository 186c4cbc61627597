//! The paths inside a writable workspace that stay read-only: every `.git` (a repository's
//! hooks and config run code when the user next uses git), every `.qilin` (skills, sessions)
//! and every `*.agent` file (an agent's tools, review rules and sandbox settings).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

/// The names of folders (or files) protected wherever they are in the workspace.
const PROTECTED_NAMES: &[&str] = &[".git", ".qilin"];

/// The extension of agent files.
const AGENT_EXTENSION: &str = "agent";

/// Every protected path that exists in `workspace` now, found by walking it whole (without
/// following links or crossing into other file systems, and without looking inside protected
/// folders), plus the folder a `.git` file (a worktree's or submodule's) points to when that
/// lies in the workspace.
pub(crate) fn protected_paths(workspace: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut walk = WalkDir::new(workspace)
        .follow_links(false)
        .same_file_system(true)
        .into_iter();
    while let Some(entry) = walk.next() {
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type();
        if PROTECTED_NAMES
            .iter()
            .any(|name| entry.file_name() == *name)
        {
            if kind.is_dir() {
                walk.skip_current_dir();
            } else if kind.is_file() && entry.file_name() == ".git" {
                found.extend(git_dir_of(path).filter(|dir| dir.starts_with(workspace)));
            }
            found.push(path.to_path_buf());
        } else if !kind.is_dir() && path.extension() == Some(OsStr::new(AGENT_EXTENSION)) {
            found.push(path.to_path_buf());
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The folder a `.git` file names (`gitdir: PATH`, relative to the file's folder).
fn git_dir_of(dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    let base = dot_git.parent()?;
    base.join(target).canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_git_qilin_and_agent_files_at_any_depth_without_entering_protected_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for folder in [".git/hooks", ".qilin/skills/x", "sub/.git", "sub/deep"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        for file in [
            "a.agent",
            "sub/deep/b.agent",
            ".qilin/skills/x/inner.agent",
            "sub/deep/not-agent.txt",
            "sub/deep/agent",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        std::fs::create_dir_all(root.join("worktree")).unwrap();
        std::fs::create_dir_all(root.join("gitdirs/wt")).unwrap();
        std::fs::write(root.join("worktree/.git"), "gitdir: ../gitdirs/wt\n").unwrap();
        let found: Vec<String> = protected_paths(&root)
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert_eq!(
            found,
            [
                ".git",
                ".qilin",
                "a.agent",
                "gitdirs/wt",
                "sub/.git",
                "sub/deep/b.agent",
                "worktree/.git"
            ]
        );
    }
}
