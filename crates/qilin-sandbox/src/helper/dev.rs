//! A private, minimal `/dev`, built as bubblewrap's `--dev` builds one: a fresh tmpfs over the
//! host's `/dev` holding only `null`, `zero`, `full`, `random`, `urandom` and `tty` (bind
//! mounts of the host's nodes, since a user namespace cannot create device nodes), the links
//! `fd`, `stdin`, `stdout`, `stderr` and `ptmx`, a `devpts` instance of its own (so the
//! command can open new pseudo-terminals but never the host's `/dev/pts/N`), and a private
//! `/dev/shm` of a bounded size. In a terminal, the host's terminal is bound to
//! `/dev/console`, so that `tty` and `ttyname` find it; the command already holds it as its
//! stdin, stdout and stderr, so this gives nothing more.

use super::HelperError;
use super::masks::{Reachable, restore};
use nix::fcntl::{OFlag, open};
use nix::mount::{MsFlags, mount};
use nix::sys::stat::{Mode, fstat};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// The host's device nodes the private `/dev` keeps.
const DEVICES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// The links of the private `/dev`: name and target.
const LINKS: [(&str, &str); 5] = [
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
    ("ptmx", "pts/ptmx"),
];

/// The folder the private one covers.
const DEV: &str = "/dev";

/// The options of its tmpfs: it holds only mount points and links.
const DEV_OPTIONS: &str = "mode=0755,size=64k";

/// Where the host's terminal appears in a terminal's sandbox.
pub(crate) const CONSOLE: &str = "/dev/console";

/// Files per MiB the private `/dev/shm` may hold (one per 64 KiB of its size, at least 1,024):
/// its inodes take memory too, beyond its size.
const SHM_FILES_PER_MIB: u64 = 16;

/// Covers `/dev` with the private one, its `/dev/shm` holding at most `shm_mb` MiB; binds the
/// terminal on stdout to `/dev/console` when `terminal`, and what is `reachable` beneath
/// `/dev` (a temp folder in `/dev/shm`) back at its place. Called in the new mount namespace.
pub(crate) fn mount_private(
    shm_mb: u64,
    terminal: bool,
    reachable: &Reachable,
) -> Result<(), HelperError> {
    let kept = reachable.beneath(Path::new(DEV))?;
    // Handles on the host's nodes (and the terminal), taken before the tmpfs covers them.
    let mut nodes: Vec<(String, OwnedFd)> = Vec::new();
    for name in DEVICES {
        let path = format!("/dev/{name}");
        nodes.push((
            path.clone(),
            open(
                path.as_str(),
                OFlag::O_PATH | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .map_err(HelperError::step(format!("open the host's {path}")))?,
        ));
    }
    if terminal {
        nodes.push((CONSOLE.to_string(), terminal_node()?));
    }

    tmpfs(DEV, MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC, DEV_OPTIONS)?;
    for (path, node) in &nodes {
        create_file(Path::new(path))?;
        bind(&fd_path(node), path)?;
    }
    for (name, target) in LINKS {
        let link = format!("/dev/{name}");
        std::os::unix::fs::symlink(target, &link)
            .map_err(HelperError::io(format!("create the link {link}")))?;
    }
    for folder in ["/dev/pts", "/dev/shm"] {
        std::fs::DirBuilder::new()
            .mode(0o755)
            .create(folder)
            .map_err(HelperError::io(format!("create {folder}")))?;
    }
    mount(
        Some("devpts"),
        "/dev/pts",
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=620"),
    )
    .map_err(HelperError::step("mount a devpts of its own on /dev/pts"))?;
    let files = shm_mb.saturating_mul(SHM_FILES_PER_MIB).max(1024);
    tmpfs(
        "/dev/shm",
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        &format!("mode=1777,size={shm_mb}m,nr_inodes={files}"),
    )?;
    restore(Path::new(DEV), &kept)?;
    mount(
        None::<&str>,
        DEV,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some(DEV_OPTIONS),
    )
    .map_err(HelperError::step("make the private /dev read-only"))
}

/// A handle on the device node of the terminal on stdout, in this mount namespace (a mount
/// can only be bound from a path of the namespace, not from a descriptor opened before it).
fn terminal_node() -> Result<OwnedFd, HelperError> {
    let path = std::fs::read_link("/proc/self/fd/1")
        .map_err(HelperError::io("find the terminal's device"))?;
    let node = open(&path, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty()).map_err(
        HelperError::step(format!("open the terminal {}", path.display())),
    )?;
    let device = |stat: nix::sys::stat::FileStat| stat.st_rdev;
    let same = fstat(&node).map(device) == fstat(std::io::stdout().as_fd()).map(device);
    if !same {
        return Err(HelperError::Step {
            step: format!("find the terminal at {}", path.display()),
            source: std::io::Error::other("another device is there"),
        });
    }
    Ok(node)
}

/// Mounts a tmpfs on `target`.
pub(crate) fn tmpfs(target: &str, flags: MsFlags, options: &str) -> Result<(), HelperError> {
    mount(Some("tmpfs"), target, Some("tmpfs"), flags, Some(options))
        .map_err(HelperError::step(format!("mount a tmpfs on {target}")))
}

/// Bind-mounts `source` (with what is mounted beneath it) on `target`.
pub(crate) fn bind(source: &str, target: &str) -> Result<(), HelperError> {
    mount(
        Some(source),
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(HelperError::step(format!("bind-mount {target}")))
}

/// The path that names what `fd` refers to.
pub(crate) fn fd_path(fd: &OwnedFd) -> String {
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}

/// Creates an empty file to mount something on.
pub(crate) fn create_file(path: &Path) -> Result<(), HelperError> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(path)
        .map(drop)
        .map_err(HelperError::io(format!("create {}", path.display())))
}
