//! Entering new namespaces and changing the mounts of the new mount namespace.

use super::HelperError;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};
use nix::unistd::{getgid, getuid};
use std::path::Path;

/// Moves this (single-threaded) process into new user and mount namespaces, and a new network
/// namespace unless `network`; its next children start a new PID namespace. The user running
/// Qilin becomes root inside (with rights over the new namespaces only), and every mount is
/// made private so nothing done here reaches the host.
pub(crate) fn enter(network: bool) -> Result<(), HelperError> {
    let uid = getuid();
    let gid = getgid();
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(HelperError::step(
        "create new user, mount, PID and network namespaces (unshare)",
    ))?;
    let write = |file: &str, contents: String| {
        std::fs::write(file, contents).map_err(HelperError::io(format!("write {file}")))
    };
    write("/proc/self/setgroups", "deny\n".to_string())?;
    write("/proc/self/uid_map", format!("0 {uid} 1\n"))?;
    write("/proc/self/gid_map", format!("0 {gid} 1\n"))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(HelperError::step("make the mounts private"))
}

/// Bind-mounts `path` onto itself read-only, keeping the flags (`nosuid`, `nodev`, ...) the
/// mount it lies on has, which a user namespace may not drop.
pub(crate) fn bind_read_only(path: &Path) -> Result<(), HelperError> {
    let kept = kept_flags(path);
    let describe = |what: &str| format!("{what} {} read-only", path.display());
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(HelperError::step(describe("bind-mount")))?;
    mount(
        None::<&str>,
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept,
        None::<&str>,
    )
    .map_err(HelperError::step(describe("remount")))
}

/// The flags of the mount holding `path` that a remount must repeat.
fn kept_flags(path: &Path) -> MsFlags {
    let Ok(stat) = statvfs(path) else {
        return MsFlags::empty();
    };
    let fs = stat.flags();
    let mut flags = MsFlags::empty();
    for (has, keep) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if fs.contains(has) {
            flags |= keep;
        }
    }
    if !fs.intersects(FsFlags::ST_NOATIME | FsFlags::ST_RELATIME) {
        flags |= MsFlags::MS_STRICTATIME;
    }
    flags
}

/// Mounts a `/proc` showing only the new PID namespace's processes (called by its process
/// 1). False when the kernel refuses (some containers mask parts of their `/proc`); the host's
/// stays, and Landlock still keeps the command from reading other processes' memory and
/// environment there.
pub(crate) fn mount_own_proc() -> bool {
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .is_ok()
}
