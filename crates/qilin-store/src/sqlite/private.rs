//! The database's files kept to their owner: every prompt, file read and output is in them.
//!
//! A missing folder is created owner-only (0700); the database is created owner-only (0600)
//! before SQLite opens it, so its log and index (`-wal`, `-shm`), which SQLite creates with the
//! database's own mode, are too; the lock file as well. Files an older Qilin left readable by
//! others are made owner-only again when the store opens them (a file the user does not own is
//! left as it is: only its owner may change it).

use crate::StoreError;
use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The mode of the database's files.
pub(crate) const FILE_MODE: u32 = 0o600;

/// The mode of a folder the store creates.
const FOLDER_MODE: u32 = 0o700;

/// The files SQLite keeps beside the database at `path` (its log and its index).
fn companions(path: &Path) -> [PathBuf; 2] {
    ["-wal", "-shm"].map(|suffix| {
        let mut name = path.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name)
    })
}

/// Makes the database at `path` ready to open, private: its folder created owner-only when
/// missing, the database created owner-only when missing, and the database and its `-wal`
/// and `-shm` files made owner-only when they are not.
pub(crate) fn prepare(path: &Path) -> Result<(), StoreError> {
    if let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        DirBuilder::new()
            .recursive(true)
            .mode(FOLDER_MODE)
            .create(folder)
            .map_err(|err| {
                StoreError::Backend(format!("cannot create {}: {err}", folder.display()))
            })?;
    }
    // An empty file is a new database to SQLite; creating it here gives it its mode.
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(path)
        .map_err(|err| StoreError::Backend(format!("cannot open {}: {err}", path.display())))?;
    restrict(path)?;
    for companion in companions(path) {
        restrict(&companion)?;
    }
    Ok(())
}

/// Takes the rights of the group and of others off the file at `path`, when it exists and the
/// user owns it.
pub(crate) fn restrict(path: &Path) -> Result<(), StoreError> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(()),
        Err(err) => {
            return Err(StoreError::Backend(format!(
                "cannot read the permissions of {}: {err}",
                path.display()
            )));
        }
    };
    let mode = metadata.permissions().mode() & 0o7777;
    if mode & 0o077 == 0 {
        return Ok(());
    }
    match std::fs::set_permissions(path, Permissions::from_mode(mode & 0o700)) {
        Ok(()) => Ok(()),
        // Another user's file (a database shared on purpose): only its owner may change its
        // mode, and the store can still use it.
        Err(err) if err.kind() == ErrorKind::PermissionDenied => Ok(()),
        Err(err) => Err(StoreError::Backend(format!(
            "cannot make {} readable by its owner alone: {err}",
            path.display()
        ))),
    }
}
