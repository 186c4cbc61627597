//! Making the protected set ([`crate::Protection`]) hold inside the sandbox's mount namespace:
//! each folder above a protected path is mounted onto itself (a mount point cannot be renamed
//! or removed, so `mv agents x` fails rather than carry `agents/coder.agent` away and let a new
//! one take its place), then each protected path is mounted read-only. A protected name that
//! is a link leading out of the workspace is skipped and reported, never mounted.

use super::{HelperError, namespaces};
use crate::protected::Scan;
use nix::mount::{MsFlags, mount};
use std::path::Path;

/// Applies `scan` in this (new) mount namespace; each skipped link is reported on stderr,
/// which is the command's output.
pub(crate) fn apply(scan: &Scan) -> Result<(), HelperError> {
    for skipped in &scan.skipped {
        eprintln!("qilin sandbox: {skipped}");
    }
    // Parents first (the list is sorted): a folder mounted after a protected path below it
    // would hide that path's read-only mount.
    for folder in &scan.pinned {
        // A folder gone or replaced since the walk has nothing left to pin.
        if is_real_folder(folder) {
            pin(folder)?;
        }
    }
    for path in &scan.read_only {
        // A path gone since the walk (or a link to nothing) has nothing left to protect.
        if path.exists() {
            namespaces::bind_read_only(path)?;
        }
    }
    Ok(())
}

/// Mounts `folder` onto itself, with what is mounted below it, keeping it writable.
fn pin(folder: &Path) -> Result<(), HelperError> {
    mount(
        Some(folder),
        folder,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(HelperError::step(format!(
        "mount {} onto itself so it cannot be renamed",
        folder.display()
    )))
}

/// Whether `path` is a folder itself, not a link to one.
fn is_real_folder(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|meta| meta.is_dir())
}
