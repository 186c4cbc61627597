//! Hiding what a command must not reach on the host. Landlock cannot refuse a `connect` to a
//! Unix socket named by a path (before Linux gains `LANDLOCK_ACCESS_FS_RESOLVE_UNIX`), and
//! such sockets run code outside the sandbox: the session bus (`systemd-run --user`), the X
//! server, a `tmux` server, Docker. So the first stage changes what the command's mount
//! namespace shows:
//!
//! - **masked folders** — the user's runtime folder (`/run/user`, `$XDG_RUNTIME_DIR`), Qilin's
//!   own runtime folder with `qilin serve`'s token files, the X server's and ICE's socket
//!   folders — are covered with an empty read-only tmpfs; whatever is created there later stays
//!   hidden too;
//! - **every other Unix socket** bound with a path in the host's network namespace when the
//!   command starts (as `/proc/net/unix` lists them) is covered with `/dev/null`, read-only and
//!   `nodev`, so a `connect` finds no socket;
//!
//! except the workspace, the temp folder and the sockets (or folders) the agent file allows,
//! which are bound back where a mask covers them. The command cannot undo a mount: Landlock
//! refuses it every mount change.

use super::HelperError;
use super::dev::{bind, create_file, fd_path, tmpfs};
use crate::request::Confinement;
use nix::errno::Errno;
use nix::fcntl::{OFlag, open};
use nix::mount::{MsFlags, mount};
use nix::sys::stat::{Mode, SFlag, fstat, lstat};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The paths of the Unix sockets bound in this process's network namespace, from
/// `/proc/net/unix` (read before the command's own namespace is entered). Abstract sockets,
/// relative paths and unreadable lines are left out.
pub(crate) fn bound_sockets() -> Vec<PathBuf> {
    std::fs::read("/proc/net/unix")
        .map(|table| parse_socket_table(&String::from_utf8_lossy(&table)))
        .unwrap_or_default()
}

/// The absolute paths in a `/proc/net/unix` table: each line's eighth field onwards (a path
/// may hold spaces), after `Num RefCount Protocol Flags Type St Inode`.
fn parse_socket_table(table: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut rest = line.trim_start();
            for _ in 0..7 {
                let end = rest.find(' ')?;
                rest = rest[end..].trim_start();
            }
            rest.starts_with('/').then(|| PathBuf::from(rest))
        })
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// What stays reachable through every mask: the workspace, the temp folder and the allowed
/// sockets, in canonical form, found before anything covers them.
#[derive(Debug)]
pub(crate) struct Reachable {
    paths: Vec<PathBuf>,
}

/// A path beneath a folder about to be covered, and a handle on what it is now.
pub(crate) type Kept = Vec<(PathBuf, OwnedFd)>;

impl Reachable {
    /// What `confinement` keeps reachable (paths that do not exist are left out).
    pub(crate) fn of(confinement: &Confinement) -> Reachable {
        let mut paths: Vec<PathBuf> = [&confinement.workspace, &confinement.temp_dir]
            .into_iter()
            .chain(&confinement.unix_sockets)
            .filter_map(|path| path.canonicalize().ok())
            .collect();
        paths.sort();
        paths.dedup();
        Reachable { paths }
    }

    /// True when `path` is one of them or lies beneath one.
    fn contains(&self, path: &Path) -> bool {
        self.paths
            .iter()
            .any(|reachable| path.starts_with(reachable))
    }

    /// Handles on those beneath `folder` (or `folder` itself), to bind back once it is covered.
    pub(crate) fn beneath(&self, folder: &Path) -> Result<Kept, HelperError> {
        self.paths
            .iter()
            .filter(|path| path.starts_with(folder))
            .map(|path| Ok((path.clone(), handle(path)?)))
            .collect()
    }
}

/// Covers the masked folders and the sockets of `sockets` outside what is `reachable`, as the
/// module says. Called in the new mount namespace, after the private `/dev` (whose `null`
/// covers the sockets).
pub(crate) fn hide(
    confinement: &Confinement,
    reachable: &Reachable,
    sockets: &[PathBuf],
) -> Result<(), HelperError> {
    let mut masks: Vec<PathBuf> = confinement
        .masks
        .iter()
        .filter_map(|path| path.canonicalize().ok())
        .filter(|path| path.is_dir())
        .collect();
    masks.sort();
    let mut applied: Vec<PathBuf> = Vec::new();
    for mask in masks {
        if applied.iter().any(|outer| mask.starts_with(outer)) {
            continue;
        }
        let kept = reachable.beneath(&mask)?;
        mask_folder(&mask, &kept)?;
        applied.push(mask);
    }

    for socket in sockets {
        // Hidden already beneath a mask (the path no longer resolves), or gone.
        let Ok(socket) = socket.canonicalize() else {
            continue;
        };
        let is_socket = lstat(&socket).is_ok_and(|stat| {
            SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFSOCK
        });
        if is_socket && !reachable.contains(&socket) {
            cover_socket(&socket)?;
        }
    }
    Ok(())
}

/// Covers `folder` with an empty read-only tmpfs, binding each of `kept` back at its place.
pub(crate) fn mask_folder(folder: &Path, kept: &Kept) -> Result<(), HelperError> {
    let target = folder.to_string_lossy();
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    let options = "mode=0755,size=64k,nr_inodes=1024";
    tmpfs(&target, flags, options)?;
    restore(folder, kept)?;
    mount(
        None::<&str>,
        target.as_ref(),
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | flags,
        Some(options),
    )
    .map_err(HelperError::step(format!(
        "make the mask on {target} read-only"
    )))
}

/// Binds each of `kept` back at its place beneath `folder`, now covered by a tmpfs still
/// writable: its parent folders and a mount point (a folder or an empty file) are created
/// there first.
pub(crate) fn restore(folder: &Path, kept: &Kept) -> Result<(), HelperError> {
    for (path, original) in kept {
        if path != folder {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(HelperError::io(format!("create {}", parent.display())))?;
            }
            let is_dir = fstat(original).is_ok_and(|stat| {
                SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
            });
            if is_dir {
                std::fs::create_dir(path)
                    .map_err(HelperError::io(format!("create {}", path.display())))?;
            } else {
                create_file(path)?;
            }
        }
        bind(&fd_path(original), &path.to_string_lossy())?;
    }
    Ok(())
}

/// A handle on `path` that still names it once a mask covers it.
fn handle(path: &Path) -> Result<OwnedFd, HelperError> {
    open(path, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty())
        .map_err(HelperError::step(format!("open {}", path.display())))
}

/// Covers the socket at `path` with the private `/dev/null`, read-only and `nodev`: a
/// `connect` there is refused, and so is opening it. A socket whose path does not resolve for
/// this process (gone since, or its folder not searchable) cannot be reached by the command
/// either, and is left; any other failure fails the command rather than leave the socket open.
fn cover_socket(path: &Path) -> Result<(), HelperError> {
    let covered = mount(
        Some("/dev/null"),
        path,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    );
    match covered {
        Ok(()) => {}
        Err(Errno::ENOENT | Errno::EACCES | Errno::ENOTDIR) => return Ok(()),
        Err(errno) => {
            return Err(HelperError::step(format!(
                "cover the socket {}",
                path.display()
            ))(errno));
        }
    }
    mount(
        None::<&str>,
        path,
        None::<&str>,
        MsFlags::MS_BIND
            | MsFlags::MS_REMOUNT
            | MsFlags::MS_RDONLY
            | MsFlags::MS_NODEV
            | MsFlags::MS_NOSUID
            | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(HelperError::step(format!(
        "make the cover on the socket {} read-only",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_table_gives_absolute_paths_only() {
        let table = "\
Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 23456 /run/user/1000/bus
0000000000000000: 00000002 00000000 00010000 0001 01  3456 /tmp/with space/s.sock
0000000000000000: 00000003 00000000 00000000 0001 03 34567
0000000000000000: 00000002 00000000 00010000 0001 01 45678 @/tmp/.X11-unix/X0
0000000000000000: 00000002 00000000 00010000 0001 01 56789 relative.sock
0000000000000000: 00000002 00000000 00010000 0005 01 67890 /run/user/1000/bus
";
        assert_eq!(
            parse_socket_table(table),
            [
                PathBuf::from("/run/user/1000/bus"),
                PathBuf::from("/tmp/with space/s.sock")
            ]
        );
    }
}
