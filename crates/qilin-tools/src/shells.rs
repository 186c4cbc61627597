//! The [`ShellTable`] service: a session's persistent shells, by shell program and name,
//! ended with the session.

use crate::persistent::{PersistentShell, ShellSummary};
use crate::shell_kind::ShellKind;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The most persistent shells one session may keep.
pub const MAX_SHELLS: usize = 16;
/// The longest name a persistent shell may have.
pub const MAX_SHELL_NAME: usize = 32;
/// The name of the shell a call gets with `persistent: true` and no `shell`.
pub const DEFAULT_SHELL: &str = "default";

/// A session's persistent shells. A host service: put one in the session's
/// [`qilin_tool::Services`] ([`crate::session_services`] does); without it `bash` with
/// `persistent: true` is refused. [`ShellTable::end_all`], and dropping the table, end every
/// shell and everything it started.
#[derive(Default)]
pub struct ShellTable {
    shells: Mutex<BTreeMap<(ShellKind, String), Arc<PersistentShell>>>,
}

/// Why a persistent shell could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ShellTableError {
    /// The name is not a short word.
    #[error(
        "`{0}` is not a shell name: use 1 to {MAX_SHELL_NAME} letters, digits, `-` or `_` \
         (e.g. `default`, `server`)"
    )]
    BadName(String),
    /// The session keeps as many shells as it may.
    #[error(
        "this session already keeps {MAX_SHELLS} persistent shells ({0}); reuse one of them \
         by name"
    )]
    Full(String),
}

/// One row of [`ShellTable::list`].
#[derive(Debug, Clone)]
pub struct ShellListing {
    /// `bash` or `pwsh`.
    pub kind: ShellKind,
    /// The shell's name.
    pub name: String,
    /// Its state.
    pub summary: ShellSummary,
}

impl ShellTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The shell of `kind` named `name`, made (not yet started) on first use.
    pub fn shell(
        &self,
        kind: ShellKind,
        name: &str,
    ) -> Result<Arc<PersistentShell>, ShellTableError> {
        let valid = !name.is_empty()
            && name.len() <= MAX_SHELL_NAME
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(ShellTableError::BadName(name.to_string()));
        }
        let mut shells = self.shells.lock();
        let key = (kind, name.to_string());
        if let Some(shell) = shells.get(&key) {
            return Ok(Arc::clone(shell));
        }
        if shells.len() >= MAX_SHELLS {
            let names: Vec<String> = shells.keys().map(|(_, name)| name.clone()).collect();
            return Err(ShellTableError::Full(names.join(", ")));
        }
        let shell = Arc::new(PersistentShell::new(kind, name));
        shells.insert(key, Arc::clone(&shell));
        Ok(shell)
    }

    /// Every shell made in the session, by program and name.
    pub fn list(&self) -> Vec<ShellListing> {
        self.shells
            .lock()
            .iter()
            .map(|((kind, name), shell)| ShellListing {
                kind: *kind,
                name: name.clone(),
                summary: shell.summary(),
            })
            .collect()
    }

    /// Ends every shell process and everything it started, as a session does when it ends;
    /// returns how many were running.
    pub fn end_all(&self) -> usize {
        self.shells
            .lock()
            .values()
            .filter(|shell| shell.end())
            .count()
    }
}

impl Drop for ShellTable {
    fn drop(&mut self) {
        self.end_all();
    }
}
