//! The sandbox's private temp folders: readable by their owner alone, removed when their
//! sandbox is dropped, and listed for as long as they live, so that a host ending without
//! dropping its sessions (on a signal, or through `std::process::exit`) removes them too
//! ([`remove_temp_folders`]). A host killed outright (SIGKILL, the OOM killer) cannot: each
//! folder is locked (`flock`) by its process while it lives, and the next sandbox to start
//! removes those of this user that no process holds any more (the first sandbox of a process,
//! then one at most every [`SWEEP_EVERY`]: a parent starting many children looks once).

use std::fs::File;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The private temp folders of this process's live sandboxes.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// When this process last looked for abandoned folders.
static LAST_SWEEP: Mutex<Option<Instant>> = Mutex::new(None);

/// How often a process looks for abandoned folders at most.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// The start of a private temp folder's name.
const PREFIX: &str = "qilin-bash-";

/// The file that marks a folder as locked by its process while it lives; it is created once
/// the lock is held, so a folder that has it and no lock is abandoned.
const LOCKED_MARK: &str = ".qilin-locked";

/// A sandbox's private temp folder, `qilin-bash-XXXXXX` in the system's temp folder, mode
/// 0700, locked while it lives.
#[derive(Debug)]
pub(crate) struct TempFolder {
    dir: tempfile::TempDir,
    /// The folder opened and locked (`flock`), released when the process ends however it ends.
    _lock: File,
}

impl TempFolder {
    /// Removes the abandoned folders of this user, then creates, locks and lists a new one.
    pub(crate) fn create() -> io::Result<TempFolder> {
        if sweep_due() {
            remove_abandoned(&std::env::temp_dir());
        }
        let dir = tempfile::Builder::new()
            .prefix(PREFIX)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        let lock = File::open(dir.path())?;
        lock.try_lock()?;
        File::create_new(dir.path().join(LOCKED_MARK))?;
        live().push(dir.path().to_path_buf());
        Ok(TempFolder { dir, _lock: lock })
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

/// Whether this process should look for abandoned folders now: the first time, then once
/// [`SWEEP_EVERY`] has passed since it last looked.
fn sweep_due() -> bool {
    let mut last = LAST_SWEEP
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match *last {
        Some(at) if at.elapsed() < SWEEP_EVERY => false,
        _ => {
            *last = Some(Instant::now());
            true
        }
    }
}

/// Removes the private temp folders in `parent` that a process of this user locked and no
/// process holds any more (its process was killed outright). A folder of another user, a link,
/// one without the mark (being created, or made by a Qilin that did not lock them), or one of
/// this process's live sandboxes is left.
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let uid = nix::unistd::geteuid().as_raw();
    let own = live().clone();
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let is_candidate = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(PREFIX))
            && !own.contains(&path);
        let owned_folder =
            std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir() && meta.uid() == uid);
        if !is_candidate || !owned_folder || !path.join(LOCKED_MARK).exists() {
            continue;
        }
        let Ok(folder) = File::open(&path) else {
            continue;
        };
        if folder.try_lock().is_ok() {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
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

    #[test]
    fn a_folder_no_process_holds_is_removed_and_a_live_or_unmarked_one_is_left() {
        let parent = tempfile::tempdir().unwrap();
        let folder = |name: &str, marked: bool| {
            let path = parent.path().join(name);
            std::fs::create_dir(&path).unwrap();
            if marked {
                std::fs::write(path.join(LOCKED_MARK), "").unwrap();
            }
            path
        };
        let abandoned = folder("qilin-bash-abandoned", true);
        let live = folder("qilin-bash-live", true);
        let held = File::open(&live).unwrap();
        held.try_lock().unwrap();
        let unmarked = folder("qilin-bash-older", false);
        let other = folder("other-abandoned", true);
        let link = parent.path().join("qilin-bash-link");
        std::os::unix::fs::symlink(&abandoned, &link).unwrap();

        remove_abandoned(parent.path());
        assert!(!abandoned.exists(), "the abandoned folder is removed");
        assert!(live.exists(), "a folder its process holds stays");
        assert!(unmarked.exists() && other.exists());
        drop(held);
        remove_abandoned(parent.path());
        assert!(!live.exists(), "once its process let go, it goes too");
    }
}
