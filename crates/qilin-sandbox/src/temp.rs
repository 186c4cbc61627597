//! The sandbox's private temp folders: readable by their owner alone, removed when their
//! sandbox is dropped, and listed for as long as they live, so that a host ending without
//! dropping its sessions (on a signal, or through `std::process::exit`) removes them too
//! ([`remove_temp_folders`]).

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The private temp folders of this process's live sandboxes.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A sandbox's private temp folder, `qilin-bash-XXXXXX` in the system's temp folder, mode 0700.
#[derive(Debug)]
pub(crate) struct TempFolder {
    dir: tempfile::TempDir,
}

impl TempFolder {
    /// Creates the folder and lists it.
    pub(crate) fn create() -> io::Result<TempFolder> {
        let dir = tempfile::Builder::new()
            .prefix("qilin-bash-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        live().push(dir.path().to_path_buf());
        Ok(TempFolder { dir })
    }

    /// The folder.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        live().retain(|path| path != self.dir.path());
        // The folder itself goes with `dir`.
    }
}

/// The list, even if a thread panicked while holding it (a list of paths cannot be left
/// inconsistent).
fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes the private temp folder of every sandbox of this process that is still live, for a
/// host about to end without dropping its sessions (on SIGTERM, or before
/// `std::process::exit`); returns how many it removed. A command still running there may
/// write into a folder being removed, so each is tried a few times.
pub fn remove_temp_folders() -> usize {
    let folders = std::mem::take(&mut *live());
    folders
        .iter()
        .filter(|folder| {
            (0..3).any(|_| {
                let _ = std::fs::remove_dir_all(folder);
                !folder.exists()
            })
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temp_folder_is_owner_only_and_removed_when_dropped_or_on_demand() {
        let dropped = TempFolder::create().unwrap();
        let path = dropped.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        assert!(live().contains(&path));
        drop(dropped);
        assert!(!path.exists());
        assert!(!live().contains(&path));

        let kept = TempFolder::create().unwrap();
        std::fs::create_dir_all(kept.path().join("deep/er")).unwrap();
        std::fs::write(kept.path().join("deep/er/file"), "x").unwrap();
        assert!(remove_temp_folders() >= 1);
        assert!(!kept.path().exists());
        drop(kept);
    }
}
