//! The project context of a new session: where it runs (workspace, OS, shell, date, git
//! branch) and the project's memory files — `AGENTS.md` and `CLAUDE.md` of every folder from
//! the repository root down to the workspace. Gathered once when a session begins and kept in
//! its `session.started`, so that a resumed session's prompt is byte-identical.

use qilin_protocol::{Environment, MemoryFile, ProjectContext};
use qilin_sandbox::{SMALL_FILE_LIMIT, read_own_text};
use qilin_tool::Workspace;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The names of the memory files read in each folder, in this order.
pub const MEMORY_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The most bytes of memory files a prompt carries, all files together; past it the last
/// file read is cut, and the cut says so.
pub const MAX_MEMORY_BYTES: usize = 32 * 1024;

/// The context of a session beginning now in `workspace` (an absolute, canonical folder).
pub fn project_context(workspace: &Path) -> ProjectContext {
    let repository = repository_root(workspace);
    ProjectContext {
        environment: Environment {
            workspace: workspace.display().to_string(),
            os: std::env::consts::OS.to_string(),
            shell: std::env::var("SHELL")
                .ok()
                .filter(|shell| !shell.is_empty()),
            date: chrono::Local::now().format("%Y-%m-%d").to_string(),
            git_branch: repository.as_deref().and_then(git_branch),
        },
        memory: memory_files(workspace, repository.as_deref()),
    }
}

/// The nearest folder at or above `workspace` holding `.git` (a folder, or a worktree's file).
pub fn repository_root(workspace: &Path) -> Option<PathBuf> {
    workspace
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The branch checked out in the repository at `root`, or `detached at SHA`. The `.git` file
/// and `HEAD` are read as Qilin reads its own files ([`read_own_text`]): a link, a FIFO, a
/// device or a large file gives no branch, never a hang or an allocation of its size.
fn git_branch(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        let pointer = read_own_text(&dot_git, SMALL_FILE_LIMIT).ok()?;
        let target = pointer.trim().strip_prefix("gitdir:")?.trim();
        root.join(target)
    } else {
        dot_git
    };
    let head = read_own_text(&git_dir.join("HEAD"), SMALL_FILE_LIMIT).ok()?;
    let head = head.trim();
    match head.strip_prefix("ref:") {
        Some(reference) => {
            let reference = reference.trim();
            Some(
                reference
                    .strip_prefix("refs/heads/")
                    .unwrap_or(reference)
                    .to_string(),
            )
        }
        None if head.len() >= 7 && head.chars().all(|c| c.is_ascii_hexdigit()) => {
            Some(format!("detached at {}", &head[..7]))
        }
        None => None,
    }
}

/// The memory files from the repository root (or the workspace, outside a repository) down to
/// the workspace, each read beneath that root (a link leading out of it, a FIFO or a device is
/// skipped), a file whose text repeats one already read (`CLAUDE.md` linked to `AGENTS.md`)
/// skipped, all of them together cut to [`MAX_MEMORY_BYTES`].
fn memory_files(workspace: &Path, repository: Option<&Path>) -> Vec<MemoryFile> {
    let root = repository.unwrap_or(workspace);
    let Ok(beneath) = Workspace::open(root) else {
        return Vec::new();
    };
    let Ok(below) = workspace.strip_prefix(root) else {
        return Vec::new();
    };
    let mut folders = vec![PathBuf::new()];
    let mut walked = PathBuf::new();
    for part in below.components() {
        walked.push(part);
        folders.push(walked.clone());
    }
    let mut files: Vec<MemoryFile> = Vec::new();
    let mut budget = MAX_MEMORY_BYTES;
    for folder in folders {
        for name in MEMORY_FILES {
            if budget == 0 {
                return files;
            }
            let relative = folder.join(name);
            let relative = relative.to_string_lossy().replace('\\', "/");
            let Some(text) = read_beneath(&beneath, &relative, budget) else {
                continue;
            };
            if text.trim().is_empty() || files.iter().any(|file| file.text == text) {
                continue;
            }
            let text = if text.len() > budget {
                let mut cut = budget.min(text.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!(
                    "{}\n[… cut here: the project's memory files are over {} KiB together]",
                    &text[..cut],
                    MAX_MEMORY_BYTES / 1024
                )
            } else {
                text
            };
            budget = budget.saturating_sub(text.len());
            files.push(MemoryFile {
                path: relative,
                text,
            });
        }
    }
    files
}

/// The text of the regular file `relative` beneath `root`, at most `limit` bytes and one more
/// (so that a cut shows), when it exists and is text.
fn read_beneath(root: &Workspace, relative: &str, limit: usize) -> Option<String> {
    let resolved = root.resolve(relative).ok()?;
    let file = resolved.open_file().ok()?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1).read_to_end(&mut bytes).ok()?;
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let bytes = err.into_bytes();
            // A cut in the middle of a character is not a reason to drop the file.
            (bytes.len() > limit).then(|| String::from_utf8_lossy(&bytes[..valid]).into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn memory_is_read_from_the_repository_root_down_to_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join(".git/HEAD"), "ref: refs/heads/feature/x\n");
        write(&root.join("AGENTS.md"), "Run `make test`.\n");
        write(&root.join("app/CLAUDE.md"), "Use tabs.\n");
        write(&root.join("app/web/AGENTS.md"), "   \n");
        write(&root.join("other/AGENTS.md"), "not on the way\n");
        let workspace = root.join("app/web");
        std::fs::create_dir_all(&workspace).unwrap();
        let context = project_context(&workspace);
        let paths: Vec<&str> = context.memory.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["AGENTS.md", "app/CLAUDE.md"]);
        assert_eq!(context.memory[1].text, "Use tabs.\n");
        assert_eq!(context.environment.git_branch.as_deref(), Some("feature/x"));
        assert_eq!(
            context.environment.workspace,
            workspace.display().to_string()
        );
    }

    #[test]
    fn a_linked_copy_is_read_once_and_a_link_out_of_the_repository_never() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        write(&root.join("AGENTS.md"), "Be brief.\n");
        std::os::unix::fs::symlink(root.join("AGENTS.md"), root.join("CLAUDE.md")).unwrap();
        write(&outside.path().join("secret"), "do not read\n");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join("sub/AGENTS.md"))
            .unwrap();
        let context = project_context(&root.join("sub"));
        let texts: Vec<&str> = context.memory.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["Be brief.\n"]);
        assert_eq!(context.environment.git_branch, None, "no HEAD, no branch");
    }

    #[test]
    fn memory_files_over_the_budget_are_cut_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join("AGENTS.md"), &"x".repeat(MAX_MEMORY_BYTES + 10));
        write(&root.join("CLAUDE.md"), "never reached\n");
        let context = project_context(&root);
        assert_eq!(context.memory.len(), 1);
        assert!(context.memory[0].text.ends_with("KiB together]"));
        assert!(context.memory[0].text.len() < MAX_MEMORY_BYTES + 100);
    }

    #[test]
    fn a_detached_head_names_its_commit() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join("repo/.git"), "gitdir: ../gitdir\n");
        write(
            &root.join("gitdir/HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        );
        let context = project_context(&root.join("repo"));
        assert_eq!(
            context.environment.git_branch.as_deref(),
            Some("detached at 0123456")
        );
    }

    #[test]
    fn a_head_that_is_a_fifo_a_device_link_or_huge_gives_no_branch_and_never_hangs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        // A FIFO: a plain read waits for a writer forever.
        std::fs::create_dir_all(root.join("fifo/.git")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("fifo/.git/HEAD"))
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(
            project_context(&root.join("fifo")).environment.git_branch,
            None
        );
        // A link to an endless device: a plain read exhausts memory.
        std::fs::create_dir_all(root.join("zero/.git")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero/.git/HEAD")).unwrap();
        assert_eq!(
            project_context(&root.join("zero")).environment.git_branch,
            None
        );
        // A sparse 8 GB `.git` file: refused from its size.
        std::fs::create_dir_all(root.join("big")).unwrap();
        std::fs::File::create(root.join("big/.git"))
            .unwrap()
            .set_len(8 << 30)
            .unwrap();
        assert_eq!(
            project_context(&root.join("big")).environment.git_branch,
            None
        );
    }
}
