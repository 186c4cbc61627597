//! The session's access to its workspace's servers ([`LspService`]), and the diagnostics an
//! edit changed: read before the edit, read again for the new version, compared.

use crate::convert::{self, Lines};
use crate::server::{Published, Server};
use crate::uri::path_to_uri;
use crate::workspace::LspWorkspace;
use qilin_protocol::lsp::{EditDiagnostics, LspItem, LspSeverity};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most introduced, and the most resolved, diagnostics an edit's result carries.
pub const MAX_EDIT_DIAGNOSTICS: usize = 10;

/// A session's language servers: the workspace's shared ones, and whether its file edits
/// report the diagnostics they changed (the agent file's `lsp: {diagnostics_after_edit}`). A
/// host service on the session; dropping the last one of a workspace stops its servers.
pub struct LspService {
    workspace: Arc<LspWorkspace>,
    diagnostics_after_edit: bool,
}

impl LspService {
    /// A session's access to `workspace`.
    pub fn new(workspace: Arc<LspWorkspace>, diagnostics_after_edit: bool) -> Self {
        LspService {
            workspace,
            diagnostics_after_edit,
        }
    }

    /// The workspace's servers.
    pub fn workspace(&self) -> &Arc<LspWorkspace> {
        &self.workspace
    }

    /// Whether edits report the diagnostics they changed.
    pub fn diagnostics_after_edit(&self) -> bool {
        self.diagnostics_after_edit
    }

    /// Reads the diagnostics of the file at `absolute` before an edit; `None` when edits do
    /// not report diagnostics or no server handles the file.
    pub async fn before_edit(&self, absolute: &Path) -> Option<EditBaseline> {
        if !self.diagnostics_after_edit {
            return None;
        }
        let absolute = absolute
            .parent()
            .and_then(|dir| dir.canonicalize().ok())
            .and_then(|dir| absolute.file_name().map(|name| dir.join(name)))
            .unwrap_or_else(|| absolute.to_path_buf());
        let (language, server) = self.workspace.server_for_file(&absolute).await?;
        let language = crate::config::language_id(&language, &absolute);
        let wait = self.workspace.diagnostics_wait();
        let before = match std::fs::read_to_string(&absolute) {
            Ok(text) => {
                let published = current(&server, &absolute, &language, &text, wait).await;
                items(self.workspace.root(), &absolute, &text, published.as_ref())
            }
            Err(_) => Vec::new(),
        };
        Some(EditBaseline {
            server,
            root: self.workspace.root().to_path_buf(),
            path: absolute,
            language,
            before,
            wait,
        })
    }
}

/// The diagnostics of the latest version of `path` after syncing it as `text`: those already
/// published when nothing changed, else the fresh ones (waiting up to `wait`); `None` when the
/// server published none in time.
async fn current(
    server: &Server,
    path: &Path,
    language: &str,
    text: &str,
    wait: std::time::Duration,
) -> Option<Published> {
    let since = server.published(path).map_or(0, |p| p.count);
    let synced = server.sync(path, language, text).await.ok()?;
    let (version, changed) = (synced.version, synced.changed);
    if !changed && let Some(published) = server.published(path) {
        return Some(published);
    }
    let (published, fresh) = server.fresh_diagnostics(path, version, since, wait).await;
    published.filter(|_| fresh)
}

fn items(root: &Path, path: &Path, text: &str, published: Option<&Published>) -> Vec<LspItem> {
    let uri = path_to_uri(path);
    let mut lines = Lines::new(root).with_text(path, text);
    published
        .map(|p| {
            p.diagnostics
                .iter()
                .map(|d| convert::diagnostic(&mut lines, &uri, d))
                .collect()
        })
        .unwrap_or_default()
}

/// A file's diagnostics before an edit, to compare with those after it.
pub struct EditBaseline {
    server: Arc<Server>,
    root: PathBuf,
    path: PathBuf,
    language: String,
    before: Vec<LspItem>,
    wait: std::time::Duration,
}

impl EditBaseline {
    /// Reads the file's diagnostics after the edit and tells what changed: the new ones
    /// (errors first) and the gone ones, each at most [`MAX_EDIT_DIAGNOSTICS`].
    pub async fn after_edit(self) -> EditDiagnostics {
        let mut result = EditDiagnostics {
            server: self.server.command.clone(),
            introduced: Vec::new(),
            resolved: Vec::new(),
            remaining: self.before.len() as u32,
            note: None,
        };
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) => {
                result.note = Some(format!("the edited file could not be read: {err}"));
                return result;
            }
        };
        let Some(published) =
            current(&self.server, &self.path, &self.language, &text, self.wait).await
        else {
            result.note = Some(if self.server.is_dead() {
                format!(
                    "`{}` crashed before reporting diagnostics",
                    self.server.command
                )
            } else {
                format!(
                    "`{}` did not report diagnostics for the new version within {} s",
                    self.server.command,
                    self.wait.as_secs()
                )
            });
            return result;
        };
        let after = items(&self.root, &self.path, &text, Some(&published));
        result.remaining = after.len() as u32;
        let (mut introduced, mut resolved) = difference(&self.before, &after);
        for list in [&mut introduced, &mut resolved] {
            list.sort_by_key(|item| {
                (
                    item.severity.unwrap_or(LspSeverity::Error),
                    item.line,
                    item.character,
                )
            });
            list.truncate(MAX_EDIT_DIAGNOSTICS);
        }
        result.introduced = introduced;
        result.resolved = resolved;
        result
    }
}

/// What is in `after` and not `before`, and what is in `before` and not `after`, comparing
/// diagnostics by severity, message, code and the text of their line (their line numbers move
/// with the edit).
fn difference(before: &[LspItem], after: &[LspItem]) -> (Vec<LspItem>, Vec<LspItem>) {
    type Key = (Option<LspSeverity>, Option<String>, Option<String>, String);
    let key = |item: &LspItem| -> Key {
        (
            item.severity,
            item.message.clone(),
            item.code.clone(),
            item.text.clone().unwrap_or_default().trim().to_string(),
        )
    };
    let mut counts: HashMap<Key, i64> = HashMap::new();
    for item in before {
        *counts.entry(key(item)).or_default() += 1;
    }
    let mut introduced = Vec::new();
    for item in after {
        let count = counts.entry(key(item)).or_default();
        if *count > 0 {
            *count -= 1;
        } else {
            introduced.push(item.clone());
        }
    }
    let mut left: HashMap<Key, i64> = HashMap::new();
    for item in after {
        *left.entry(key(item)).or_default() += 1;
    }
    let mut resolved = Vec::new();
    for item in before {
        let count = left.entry(key(item)).or_default();
        if *count > 0 {
            *count -= 1;
        } else {
            resolved.push(item.clone());
        }
    }
    (introduced, resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(line: u32, message: &str, text: &str) -> LspItem {
        LspItem {
            uri: "file:///w/a.py".into(),
            line,
            character: 1,
            severity: Some(LspSeverity::Error),
            message: Some(message.into()),
            text: Some(text.into()),
            ..LspItem::default()
        }
    }

    #[test]
    fn a_diagnostic_that_moved_is_neither_new_nor_gone() {
        let before = vec![
            diag(3, "x is unknown", "y = x"),
            diag(5, "bad call", "f(1)"),
        ];
        let after = vec![
            diag(4, "x is unknown", "y = x"),
            diag(6, "too many args", "f(1, 2)"),
        ];
        let (introduced, resolved) = difference(&before, &after);
        assert_eq!(introduced, vec![diag(6, "too many args", "f(1, 2)")]);
        assert_eq!(resolved, vec![diag(5, "bad call", "f(1)")]);
    }
}
