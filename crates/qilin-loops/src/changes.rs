//! What an iteration changed in the workspace: a git diff stat between the trees before and
//! after it when the workspace is in a git repository, else a comparison of file hashes.
//!
//! The git way records the working tree (tracked and untracked files, `.gitignore` obeyed) as
//! a tree object through a private index file, so neither the repository's index nor its
//! branches are touched; the objects it writes are ordinary loose objects git collects later.
//! Qilin's own files — the sessions' folder (`.qilin/sessions/`) and the session store
//! (`.qilin/qilin.db*`) — are never counted.

use qilin_protocol::loops::FileChange;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// The folder of the sessions' own files, never counted as a change.
const SESSIONS_FOLDER: &str = ".qilin/sessions/";

/// The name the session store's files begin with, in `.qilin/`.
const STORE_FILES: &str = ".qilin/qilin.db";

/// Whether `relative` (a path in the workspace) is one of Qilin's own files.
fn own_file(relative: &str) -> bool {
    relative.starts_with(SESSIONS_FOLDER) || relative.starts_with(STORE_FILES)
}

/// The most files the hash comparison reads; past it the rest are not compared.
const MAX_HASHED_FILES: usize = 20_000;

/// The largest file the hash comparison reads; larger ones compare by size alone.
const MAX_HASHED_BYTES: u64 = 32 * 1024 * 1024;

/// One file as the hash comparison saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    digest: Vec<u8>,
    lines: u32,
}

/// The workspace at one moment, to compare with another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceState {
    /// A git tree of the working files; `prefix` is the workspace's folder in the repository
    /// (`""` at its root, else ending `/`).
    Git {
        /// The tree object's id.
        tree: String,
        /// The workspace's folder in the repository.
        prefix: String,
    },
    /// Every file's hash and line count, by path relative to the workspace.
    Files(BTreeMap<String, FileState>),
}

impl WorkspaceState {
    /// Records `workspace` now (blocking: run it off the async threads).
    pub fn capture(workspace: &Path) -> WorkspaceState {
        git_tree(workspace).unwrap_or_else(|| WorkspaceState::Files(hash_files(workspace)))
    }
}

/// What changed in `workspace` from `before` to `after`, by path (blocking). States of two
/// kinds (the repository appeared or vanished between them) compare as no change.
pub fn changes_between(
    workspace: &Path,
    before: &WorkspaceState,
    after: &WorkspaceState,
) -> Vec<FileChange> {
    match (before, after) {
        (WorkspaceState::Git { tree: from, prefix }, WorkspaceState::Git { tree: to, .. }) => {
            git_changes(workspace, from, to, prefix)
        }
        (WorkspaceState::Files(from), WorkspaceState::Files(to)) => file_changes(from, to),
        _ => Vec::new(),
    }
}

/// Runs git in `workspace` with `args` (and `index` as its index file), giving its output
/// when it succeeds.
fn git(workspace: &Path, args: &[&str], index: Option<&Path>) -> Option<String> {
    let mut command = Command::new("git");
    command.arg("-C").arg(workspace).args(args);
    if let Some(index) = index {
        command.env("GIT_INDEX_FILE", index);
    }
    let output = command.output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The working tree of the repository `workspace` is in, as a tree object.
fn git_tree(workspace: &Path) -> Option<WorkspaceState> {
    let inside = git(workspace, &["rev-parse", "--is-inside-work-tree"], None)?;
    if inside.trim() != "true" {
        return None;
    }
    let prefix = git(workspace, &["rev-parse", "--show-prefix"], None)?
        .trim()
        .to_string();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let index = std::env::temp_dir().join(format!(
        "qilin-loop-index-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let sessions = format!(":(exclude){SESSIONS_FOLDER}");
    let store = format!(":(exclude,glob){STORE_FILES}*");
    let added = git(
        workspace,
        &["add", "-A", "--", ".", &sessions, &store],
        Some(&index),
    );
    let tree = added.and_then(|_| git(workspace, &["write-tree"], Some(&index)));
    let _ = std::fs::remove_file(&index);
    Some(WorkspaceState::Git {
        tree: tree?.trim().to_string(),
        prefix,
    })
}

/// The diff stat of two trees, paths made relative to the workspace.
fn git_changes(workspace: &Path, from: &str, to: &str, prefix: &str) -> Vec<FileChange> {
    if from == to {
        return Vec::new();
    }
    let diff = |mode: &str| {
        git(
            workspace,
            &["diff-tree", "-r", "--no-renames", "-z", mode, from, to],
            None,
        )
        .unwrap_or_default()
    };
    // `--name-status -z`: STATUS NUL PATH NUL …
    let mut kinds = BTreeMap::new();
    let names = diff("--name-status");
    let mut fields = names.split('\0');
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        let change = match status.chars().next() {
            Some('A') => "added",
            Some('D') => "deleted",
            _ => "modified",
        };
        kinds.insert(path.to_string(), change);
    }
    // `--numstat -z`: INSERTIONS TAB DELETIONS TAB PATH NUL (`-` for a binary file).
    let mut changes = Vec::new();
    for entry in diff("--numstat").split('\0') {
        let mut parts = entry.splitn(3, '\t');
        let (Some(added), Some(removed), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let relative = path.strip_prefix(prefix).unwrap_or(path);
        if own_file(relative) {
            continue;
        }
        changes.push(FileChange {
            path: relative.to_string(),
            insertions: added.parse().unwrap_or(0),
            deletions: removed.parse().unwrap_or(0),
            change: kinds.get(path).copied().unwrap_or("modified").to_string(),
        });
    }
    changes
}

/// Every file under `workspace` (but `.git` and the sessions' folder), hashed.
fn hash_files(workspace: &Path) -> BTreeMap<String, FileState> {
    let mut files = BTreeMap::new();
    let mut folders = vec![workspace.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            if files.len() >= MAX_HASHED_FILES {
                return files;
            }
            let path = entry.path();
            let Ok(relative) = path.strip_prefix(workspace) else {
                continue;
            };
            let relative = relative.to_string_lossy().replace('\\', "/");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let skip = relative == ".git" || format!("{relative}/") == SESSIONS_FOLDER;
                if !skip {
                    folders.push(path);
                }
            } else if kind.is_file() && !own_file(&relative) {
                files.insert(relative, file_state(&path));
            }
        }
    }
    files
}

/// One file's hash and line count (its size alone when it is too large to read).
fn file_state(path: &Path) -> FileState {
    let size = std::fs::metadata(path).map_or(0, |meta| meta.len());
    if size > MAX_HASHED_BYTES {
        return FileState {
            digest: size.to_le_bytes().to_vec(),
            lines: 0,
        };
    }
    let bytes = std::fs::read(path).unwrap_or_default();
    let lines = bytes.iter().filter(|&&byte| byte == b'\n').count();
    FileState {
        digest: Sha256::digest(&bytes).to_vec(),
        lines: u32::try_from(lines).unwrap_or(u32::MAX),
    }
}

/// The files added, deleted or modified between two hash maps: an added file counts its lines
/// as insertions, a deleted one as deletions; a modified one counts none (hashes say only that
/// it changed).
fn file_changes(
    from: &BTreeMap<String, FileState>,
    to: &BTreeMap<String, FileState>,
) -> Vec<FileChange> {
    let mut changes = Vec::new();
    for (path, after) in to {
        match from.get(path) {
            None => changes.push(FileChange {
                path: path.clone(),
                insertions: after.lines,
                deletions: 0,
                change: "added".to_string(),
            }),
            Some(before) if before.digest != after.digest => changes.push(FileChange {
                path: path.clone(),
                insertions: 0,
                deletions: 0,
                change: "modified".to_string(),
            }),
            Some(_) => {}
        }
    }
    for (path, before) in from {
        if !to.contains_key(path) {
            changes.push(FileChange {
                path: path.clone(),
                insertions: 0,
                deletions: before.lines,
                change: "deleted".to_string(),
            });
        }
    }
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(changes: &[FileChange]) -> Vec<(String, String, u32, u32)> {
        changes
            .iter()
            .map(|c| (c.path.clone(), c.change.clone(), c.insertions, c.deletions))
            .collect()
    }

    #[test]
    fn without_git_files_compare_by_hash() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("keep.txt"), "same\n").unwrap();
        std::fs::write(root.join("edit.txt"), "one\n").unwrap();
        std::fs::write(root.join("gone.txt"), "a\nb\n").unwrap();
        std::fs::create_dir_all(root.join(".qilin/sessions/s1")).unwrap();
        let before = WorkspaceState::Files(hash_files(root));
        std::fs::write(root.join("edit.txt"), "two\n").unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/new.rs"), "x\ny\nz\n").unwrap();
        std::fs::write(root.join(".qilin/sessions/s1/spill.txt"), "noise\n").unwrap();
        std::fs::write(root.join(".qilin/qilin.db-wal"), "noise").unwrap();
        let after = WorkspaceState::Files(hash_files(root));
        assert_eq!(
            kinds(&changes_between(root, &before, &after)),
            [
                ("edit.txt".into(), "modified".into(), 0, 0),
                ("gone.txt".into(), "deleted".into(), 0, 2),
                ("src/new.rs".into(), "added".into(), 3, 0),
            ]
        );
    }

    #[test]
    fn in_a_repository_git_gives_the_diff_stat_and_leaves_the_index_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let run = |args: &[&str]| {
            let status = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(args)
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        run(&["init", "-q"]);
        std::fs::write(root.join(".gitignore"), "ignored.log\n").unwrap();
        std::fs::write(root.join("lib.rs"), "a\nb\nc\n").unwrap();
        run(&["add", "lib.rs", ".gitignore"]);
        let before = WorkspaceState::capture(root);
        assert!(matches!(before, WorkspaceState::Git { .. }), "{before:?}");
        std::fs::write(root.join("lib.rs"), "a\nB\nc\nd\n").unwrap();
        std::fs::write(root.join("untracked.txt"), "new\n").unwrap();
        std::fs::write(root.join("ignored.log"), "noise\n").unwrap();
        let after = WorkspaceState::capture(root);
        assert_eq!(
            kinds(&changes_between(root, &before, &after)),
            [
                ("lib.rs".into(), "modified".into(), 2, 1),
                ("untracked.txt".into(), "added".into(), 1, 0),
            ]
        );
        // The repository's own index still holds only what was added by hand.
        let staged = git(root, &["diff", "--cached", "--name-only"], None).unwrap();
        assert_eq!(staged.lines().collect::<Vec<_>>(), [".gitignore", "lib.rs"]);
        assert!(changes_between(root, &after, &after).is_empty());
    }
}
