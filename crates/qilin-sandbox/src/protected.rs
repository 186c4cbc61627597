//! The protected set: the paths of a workspace that stay read-only to the model, one
//! definition for the file tools (which refuse to write them) and for `bash` (whose sandbox
//! mounts them read-only).
//!
//! - every `.git` (a folder or a worktree's file, at any depth, and the git folder a `.git`
//!   file names when it lies in the workspace): a repository's config and hooks run code at
//!   the user's next git command;
//! - every `.qilin` folder: skills that reach the next agent's prompt, session logs;
//! - every `*.agent` file: an agent's tools, review rules and sandbox settings;
//! - every file an agent file names ([`Protection::with_named_files`]: its
//!   `instructions_file`, which becomes the system prompt of every later session).
//!
//! An agent file opts out per part: `files: {write_git: true}` lets the model change and
//! create git repositories, `files: {write_qilin_files: true}` Qilin's own files and the files
//! agent files name.

use crate::own_file::{SMALL_FILE_LIMIT, read_own_text};
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use walkdir::WalkDir;

/// The name of a repository's folder (or a worktree's file naming it).
pub const GIT_NAME: &str = ".git";
/// The name of Qilin's own folder.
pub const QILIN_NAME: &str = ".qilin";
/// What an agent file's name ends with.
pub const AGENT_SUFFIX: &str = ".agent";

/// Why a path is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectedKind {
    /// A `.git` folder or file, or what lies in one (or in the git folder a `.git` file
    /// names).
    Git,
    /// Qilin's own folder `.qilin`, or what lies in it.
    Qilin,
    /// An agent file.
    AgentFile,
    /// A file an agent file names (its instructions).
    NamedFile,
}

impl ProtectedKind {
    /// What the path is, for a message: "`PATH` is ...".
    pub fn describe(self) -> &'static str {
        match self {
            ProtectedKind::Git => {
                "part of a git repository (its config and hooks run code at the user's next git \
                 command)"
            }
            ProtectedKind::Qilin => "inside `.qilin/` (skills, session logs)",
            ProtectedKind::AgentFile => "an agent file",
            ProtectedKind::NamedFile => {
                "a file an agent file names (its instructions become a session's system prompt)"
            }
        }
    }

    /// The agent-file setting that lets the model change such a path.
    pub fn opt_in(self) -> &'static str {
        match self {
            ProtectedKind::Git => "`files: {write_git: true}`",
            _ => "`files: {write_qilin_files: true}`",
        }
    }
}

/// What of the protected set an agent may write, and the files its agent files name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protection {
    write_git: bool,
    write_qilin_files: bool,
    named_files: Vec<PathBuf>,
}

/// A protected name skipped by a [`Scan`], and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedPath {
    /// The path in the workspace.
    pub path: PathBuf,
    /// Where its link leads.
    pub target: PathBuf,
}

impl std::fmt::Display for SkippedPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` is a link to `{}`, outside the workspace (or the workspace itself): it is not \
             protected, and nothing is mounted for it",
            self.path.display(),
            self.target.display()
        )
    }
}

/// The protected paths found in a workspace at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// The paths to keep read-only, links resolved to their targets in the workspace, sorted
    /// (none inside another).
    pub read_only: Vec<PathBuf>,
    /// Why each of [`Scan::read_only`] is protected, in the same order.
    pub kinds: Vec<ProtectedKind>,
    /// The folders between the workspace and a read-only path (not inside another), sorted:
    /// the sandbox mounts each onto itself, and a mount point cannot be renamed or removed,
    /// so a protected path cannot be moved away with its parent and replaced.
    pub pinned: Vec<PathBuf>,
    /// Protected names that are links leading out of the workspace: skipped, never mounted.
    pub skipped: Vec<SkippedPath>,
    /// Every `.git` entry in the workspace, opted in or not, sorted.
    pub git_entries: Vec<PathBuf>,
    /// Every agent file in the workspace (outside `.qilin`), opted in or not, sorted: the
    /// files they name are protected too ([`Protection::with_named_files`]).
    pub agent_files: Vec<PathBuf>,
}

impl Protection {
    /// Everything protected, no named files.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lets the model change and create git repositories (`files: {write_git: true}`).
    pub fn allow_git(mut self, allowed: bool) -> Self {
        self.write_git = allowed;
        self
    }

    /// Lets the model change `.qilin/`, agent files and the files agent files name
    /// (`files: {write_qilin_files: true}`).
    pub fn allow_qilin_files(mut self, allowed: bool) -> Self {
        self.write_qilin_files = allowed;
        self
    }

    /// Adds files agent files name (absolute paths); those inside a workspace are protected
    /// as [`ProtectedKind::NamedFile`].
    pub fn with_named_files(mut self, files: impl IntoIterator<Item = PathBuf>) -> Self {
        self.named_files.extend(files);
        self.named_files.sort();
        self.named_files.dedup();
        self
    }

    /// Whether git repositories may be changed and created.
    pub fn git_allowed(&self) -> bool {
        self.write_git
    }

    /// Whether Qilin's own files may be changed.
    pub fn qilin_files_allowed(&self) -> bool {
        self.write_qilin_files
    }

    /// The files agent files name.
    pub fn named_files(&self) -> &[PathBuf] {
        &self.named_files
    }

    fn allowed(&self, kind: ProtectedKind) -> bool {
        match kind {
            ProtectedKind::Git => self.write_git,
            _ => self.write_qilin_files,
        }
    }

    /// Why `relative` (a path relative to `workspace`, links already resolved) may not be
    /// written, from its name alone: a `.git` or `.qilin` component anywhere, a name ending in
    /// `.agent`, or a named file. This holds for paths that do not exist yet, so creating a
    /// new `.git` is refused like changing one. `None` when it may be written.
    pub fn by_name(&self, workspace: &Path, relative: &Path) -> Option<ProtectedKind> {
        let mut kinds = Vec::new();
        for component in relative.components() {
            if let Component::Normal(name) = component {
                if name == GIT_NAME {
                    kinds.push(ProtectedKind::Git);
                } else if name == QILIN_NAME {
                    kinds.push(ProtectedKind::Qilin);
                }
            }
        }
        if relative.file_name().is_some_and(is_agent_name) {
            kinds.push(ProtectedKind::AgentFile);
        }
        let absolute = workspace.join(relative);
        if self.named_files.contains(&absolute) {
            kinds.push(ProtectedKind::NamedFile);
        }
        kinds.into_iter().find(|kind| !self.allowed(*kind))
    }

    /// Why `relative` may not be written, by name ([`Protection::by_name`]) or because it lies
    /// in a path `scan` keeps read-only (the target of a protected link, the git folder a
    /// `.git` file names).
    pub fn protects(
        &self,
        workspace: &Path,
        relative: &Path,
        scan: &Scan,
    ) -> Option<ProtectedKind> {
        if let Some(kind) = self.by_name(workspace, relative) {
            return Some(kind);
        }
        let absolute = workspace.join(relative);
        scan.read_only
            .iter()
            .zip(&scan.kinds)
            .find(|(path, _)| absolute.starts_with(path))
            .map(|(_, kind)| *kind)
    }

    /// Walks `workspace` (a canonical folder) whole — without following links, crossing into
    /// other file systems or entering a `.git` or `.qilin` folder — and returns what is
    /// protected in it now.
    pub fn scan(&self, workspace: &Path) -> Scan {
        let mut scan = Scan::default();
        let mut candidates: Vec<(PathBuf, ProtectedKind)> = Vec::new();
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
            let name = entry.file_name();
            if name == GIT_NAME || name == QILIN_NAME {
                if kind.is_dir() {
                    walk.skip_current_dir();
                }
                if name == GIT_NAME {
                    scan.git_entries.push(path.to_path_buf());
                    if kind.is_file() {
                        candidates.extend(
                            git_dir_of(path)
                                .filter(|dir| dir.starts_with(workspace) && dir != workspace)
                                .map(|dir| (dir, ProtectedKind::Git)),
                        );
                    }
                    candidates.push((path.to_path_buf(), ProtectedKind::Git));
                } else {
                    candidates.push((path.to_path_buf(), ProtectedKind::Qilin));
                }
            } else if !kind.is_dir() && is_agent_name(name) {
                scan.agent_files.push(path.to_path_buf());
                candidates.push((path.to_path_buf(), ProtectedKind::AgentFile));
            }
        }
        for named in &self.named_files {
            if named.starts_with(workspace) && named.symlink_metadata().is_ok() {
                candidates.push((named.clone(), ProtectedKind::NamedFile));
            }
        }
        let mut read_only: Vec<(PathBuf, ProtectedKind)> = Vec::new();
        for (path, kind) in candidates {
            if self.allowed(kind) {
                continue;
            }
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            if !meta.file_type().is_symlink() {
                read_only.push((path, kind));
                continue;
            }
            // A link is protected at its target, and only when that lies in the workspace.
            let Ok(target) = path.canonicalize() else {
                // A link to nothing has nothing to protect.
                continue;
            };
            if target.starts_with(workspace) && target != workspace {
                read_only.push((target, kind));
            } else {
                scan.skipped.push(SkippedPath { path, target });
            }
        }
        read_only.sort_by(|a, b| a.0.cmp(&b.0));
        // A path inside another read-only one is read-only already.
        for (path, kind) in read_only {
            if !scan.read_only.iter().any(|outer| path.starts_with(outer)) {
                scan.read_only.push(path);
                scan.kinds.push(kind);
            }
        }
        let mut pinned: Vec<PathBuf> = scan
            .read_only
            .iter()
            .flat_map(|path| {
                path.ancestors()
                    .skip(1)
                    .take_while(|dir| dir.starts_with(workspace) && *dir != workspace)
                    .map(Path::to_path_buf)
                    .collect::<Vec<_>>()
            })
            .collect();
        pinned.sort();
        pinned.dedup();
        scan.pinned = pinned;
        scan.git_entries.sort();
        scan.agent_files.sort();
        scan
    }
}

/// Whether `name` is an agent file's.
fn is_agent_name(name: &OsStr) -> bool {
    name.to_str()
        .is_some_and(|name| name.ends_with(AGENT_SUFFIX))
}

/// The folder a `.git` file names (`gitdir: PATH`, relative to the file's folder), read with a
/// small cap and without following a link.
fn git_dir_of(dot_git: &Path) -> Option<PathBuf> {
    let text = read_own_text(dot_git, SMALL_FILE_LIMIT).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    let base = dot_git.parent()?;
    base.join(target).canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn relative(root: &Path, paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

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
        let scan = Protection::new().scan(&root);
        assert_eq!(
            relative(&root, &scan.read_only),
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
        assert_eq!(
            relative(&root, &scan.pinned),
            ["gitdirs", "sub", "sub/deep", "worktree"]
        );
        assert_eq!(
            relative(&root, &scan.git_entries),
            [".git", "sub/.git", "worktree/.git"]
        );
        assert_eq!(
            relative(&root, &scan.agent_files),
            ["a.agent", "sub/deep/b.agent"]
        );
        assert!(scan.skipped.is_empty());
    }

    #[test]
    fn opt_ins_and_named_files_change_the_set() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("prompts")).unwrap();
        std::fs::write(root.join("coder.agent"), "x").unwrap();
        std::fs::write(root.join("prompts/coder.md"), "x").unwrap();
        let named = Protection::new().with_named_files([root.join("prompts/coder.md")]);
        assert_eq!(
            relative(&root, &named.scan(&root).read_only),
            [".git", "coder.agent", "prompts/coder.md"]
        );
        let git_allowed = named.clone().allow_git(true);
        assert_eq!(
            relative(&root, &git_allowed.scan(&root).read_only),
            ["coder.agent", "prompts/coder.md"]
        );
        assert_eq!(
            relative(&root, &git_allowed.scan(&root).git_entries),
            [".git"],
            "the `.git` entries are listed even when they may be written"
        );
        let qilin_allowed = named.clone().allow_qilin_files(true);
        assert_eq!(
            relative(&root, &qilin_allowed.scan(&root).read_only),
            [".git"]
        );

        let by_name = |p: &Protection, path: &str| p.by_name(&root, Path::new(path));
        assert_eq!(by_name(&named, "pkg/.git/config"), Some(ProtectedKind::Git));
        assert_eq!(by_name(&named, "pkg/.git"), Some(ProtectedKind::Git));
        assert_eq!(by_name(&named, "a/.qilin/x"), Some(ProtectedKind::Qilin));
        assert_eq!(
            by_name(&named, "x/new.agent"),
            Some(ProtectedKind::AgentFile)
        );
        assert_eq!(
            by_name(&named, "prompts/coder.md"),
            Some(ProtectedKind::NamedFile)
        );
        assert_eq!(by_name(&named, "src/.gitignore"), None);
        assert_eq!(by_name(&named, "docs/agent.md"), None);
        assert_eq!(by_name(&git_allowed, "pkg/.git/config"), None);
        assert_eq!(by_name(&qilin_allowed, "prompts/coder.md"), None);
        assert_eq!(
            by_name(&qilin_allowed, ".git/config"),
            Some(ProtectedKind::Git)
        );
    }

    #[test]
    fn a_protected_link_is_protected_at_its_target_inside_and_skipped_when_it_leads_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::write(root.join("real/coder.yaml"), "x").unwrap();
        symlink("real/coder.yaml", root.join("coder.agent")).unwrap();
        symlink("/", root.join("tools.agent")).unwrap();
        symlink(".", root.join("self.agent")).unwrap();
        symlink("/etc", root.join(".qilin")).unwrap();
        symlink("missing", root.join("gone.agent")).unwrap();
        let scan = Protection::new().scan(&root);
        assert_eq!(relative(&root, &scan.read_only), ["real/coder.yaml"]);
        let mut skipped: Vec<String> = scan
            .skipped
            .iter()
            .map(|s| s.path.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        skipped.sort();
        assert_eq!(skipped, [".qilin", "self.agent", "tools.agent"]);
        let message = scan.skipped.iter().find(|s| s.target == Path::new("/"));
        assert!(
            message
                .unwrap()
                .to_string()
                .contains("outside the workspace")
        );
        // A write through the link lands on a read-only target.
        assert_eq!(
            Protection::new().protects(&root, Path::new("real/coder.yaml"), &scan),
            Some(ProtectedKind::AgentFile)
        );
        assert_eq!(
            Protection::new().protects(&root, Path::new("real/other.txt"), &scan),
            None
        );
    }

    #[test]
    fn a_huge_or_special_git_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::File::create(root.join("sub/.git"))
            .unwrap()
            .set_len(8 << 30)
            .unwrap();
        std::fs::create_dir_all(root.join("pipe")).unwrap();
        nix::unistd::mkfifo(&root.join("pipe/.git"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let scan = Protection::new().scan(&root);
        assert_eq!(relative(&root, &scan.read_only), ["pipe/.git", "sub/.git"]);
    }
}
