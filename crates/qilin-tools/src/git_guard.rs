//! The [`GitGuard`] service: a new git repository a sandboxed command creates in the workspace
//! is moved aside.
//!
//! The kernel offers no way to refuse the creation of one name in a folder a command may
//! write (Landlock grants rights by folder, not by name; a seccomp filter cannot read a path
//! safely), so a new `.git` — which a command could fill with a `core.fsmonitor` or a hook
//! that the user's next `git` in that folder runs, unconfined — is found instead: the guard
//! remembers the `.git` entries of the workspace before the session's first command, looks
//! again when a command, a persistent shell's call or a look at a background job ends (and
//! when the session closes), and moves every `.git` that was not there into
//! `.qilin/quarantine/`, which commands cannot write, naming it in the call's result.

use parking_lot::Mutex;
use qilin_sandbox::{GIT_NAME, Protection, Sandbox, SandboxMode};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where quarantined repositories go, relative to the workspace.
pub const QUARANTINE: &str = ".qilin/quarantine";

/// The `.git` entries of a session's workspace that commands did not create. A host service
/// ([`crate::session_services`] adds one); without it new repositories are left in place.
#[derive(Debug, Default)]
pub struct GitGuard {
    known: Mutex<Option<BTreeSet<PathBuf>>>,
}

/// A repository the guard moved aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    /// The `.git` as the command left it, relative to the workspace.
    pub path: String,
    /// Where it is now, relative to the workspace; `None` when it could not be moved.
    pub moved_to: Option<String>,
    /// Why it could not be moved.
    pub error: Option<String>,
}

impl GitGuard {
    /// A guard that has not looked yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Remembers the workspace's `.git` entries, the first time only (before the session's
    /// first command).
    pub fn before_command(&self, workspace: &Path, sandbox: &Sandbox) {
        if !guards(sandbox) {
            return;
        }
        let mut known = self.known.lock();
        if known.is_none() {
            *known = Some(git_entries(&canonical(workspace)));
        }
    }

    /// Moves every `.git` entry that appeared in `workspace` since the last look into
    /// [`QUARANTINE`]; returns what it found.
    pub fn after_command(&self, workspace: &Path, sandbox: &Sandbox) -> Vec<Quarantined> {
        if !guards(sandbox) {
            return Vec::new();
        }
        let mut known = self.known.lock();
        let Some(before) = known.as_ref() else {
            // No command ran under the guard's watch.
            return Vec::new();
        };
        let workspace = canonical(workspace);
        let workspace = workspace.as_path();
        let mut now = git_entries(workspace);
        let mut found = Vec::new();
        for new in now.clone().difference(before) {
            let relative = new
                .strip_prefix(workspace)
                .unwrap_or(new)
                .to_string_lossy()
                .into_owned();
            match quarantine(workspace, new, &relative) {
                Ok(moved_to) => {
                    now.remove(new);
                    found.push(Quarantined {
                        path: relative,
                        moved_to: Some(moved_to),
                        error: None,
                    });
                }
                Err(err) => found.push(Quarantined {
                    path: relative,
                    moved_to: None,
                    error: Some(err.to_string()),
                }),
            }
        }
        // One that could not be moved stays unknown, so it is tried (and told) again.
        now.retain(|path| before.contains(path));
        *known = Some(now);
        found
    }
}

/// What the model and the user read of repositories moved aside, or `None`.
pub fn quarantine_note(found: &[Quarantined]) -> Option<String> {
    if found.is_empty() {
        return None;
    }
    let mut note = String::new();
    for entry in found {
        let what = match (&entry.moved_to, &entry.error) {
            (Some(to), _) => format!("it was moved to `{to}`"),
            (None, Some(err)) => format!("it could NOT be moved aside ({err}); remove it"),
            (None, None) => "it was left in place".to_string(),
        };
        note.push_str(&format!(
            "[qilin: a command created `{}`, a git repository; commands may not create one (its \
             config and hooks would run code at the user's next git command there), so {what}. \
             An agent file allows it with `files: {{write_git: true}}`.]\n",
            entry.path
        ));
    }
    Some(note)
}

/// Whether commands in `sandbox` are watched: they may write the workspace, confined, and
/// the agent did not allow git repositories.
fn guards(sandbox: &Sandbox) -> bool {
    sandbox.settings().mode == SandboxMode::WorkspaceWrite && !sandbox.protection().git_allowed()
}

fn canonical(workspace: &Path) -> PathBuf {
    workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf())
}

/// Every `.git` entry of `workspace` (canonical) now.
fn git_entries(workspace: &Path) -> BTreeSet<PathBuf> {
    Protection::new()
        .scan(workspace)
        .git_entries
        .into_iter()
        .collect()
}

/// Moves the `.git` at `path` (`relative` in the workspace) into the quarantine folder,
/// relative to handles opened beneath the workspace (the entry itself is moved, never what a
/// link points to); returns where it went, relative to the workspace.
fn quarantine(workspace: &Path, path: &Path, relative: &str) -> std::io::Result<String> {
    let root = qilin_tool::Workspace::open(workspace).map_err(std::io::Error::other)?;
    let parent = path
        .parent()
        .and_then(|parent| parent.strip_prefix(root.root()).ok())
        .map(|parent| parent.to_string_lossy().into_owned())
        .filter(|parent| !parent.is_empty())
        .unwrap_or_else(|| ".".to_string());
    let folder = root.resolve(&parent).map_err(std::io::Error::other)?;
    if folder.kind() != qilin_tool::PathKind::Folder {
        return Err(std::io::Error::other(format!(
            "`{parent}` is no longer a folder"
        )));
    }
    root.dir().create_dir_all(QUARANTINE)?;
    let quarantine = root.dir().open_dir(QUARANTINE)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or_default();
    let name = format!("{stamp}-{}", relative.replace('/', "%2F"));
    folder.folder().rename(GIT_NAME, &quarantine, &name)?;
    Ok(format!("{QUARANTINE}/{name}"))
}

/// Remembers the workspace's repositories before a command of the call `cx` starts (the
/// first time in the session), off the async workers.
pub(crate) async fn before_command(cx: &qilin_tool::ToolContext, workspace: &Path) {
    let (Some(guard), Some(sandbox)) = (cx.service::<GitGuard>(), cx.service::<Sandbox>()) else {
        return;
    };
    let workspace = workspace.to_path_buf();
    let _ = tokio::task::spawn_blocking(move || guard.before_command(&workspace, &sandbox)).await;
}

/// Moves aside the repositories commands created, once a command of the call `cx` ended,
/// off the async workers; returns the note for the call's result.
pub(crate) async fn after_command(
    cx: &qilin_tool::ToolContext,
    workspace: &Path,
) -> Option<String> {
    let (Some(guard), Some(sandbox)) = (cx.service::<GitGuard>(), cx.service::<Sandbox>()) else {
        return None;
    };
    let workspace = workspace.to_path_buf();
    let found = tokio::task::spawn_blocking(move || guard.after_command(&workspace, &sandbox))
        .await
        .unwrap_or_default();
    quarantine_note(&found)
}
