//! The limits on what one command may use, set by process 1 of the sandbox before it runs
//! the command, and the watch it keeps so that the command's output says when one was
//! reached.
//!
//! - **Processes**: `RLIMIT_NPROC`, which the kernel counts per user namespace (since Linux
//!   5.14), so it bounds this command's processes and threads alone; the kernel exempts a
//!   process whose user is root on the host from it, so the PID namespace's `pid_max` (settable
//!   inside it since Linux 6.14) bounds them too, to between the limit and 300 more (the kernel
//!   gives process ids below 300 once only).
//! - **Memory**: `RLIMIT_DATA` per process (heap and private writable mappings; address space
//!   reserved but not used, as JavaScript and Java runtimes reserve it, is not counted).
//! - **`/dev/shm`**: the size of its tmpfs (see the `dev` module).

use super::HelperError;
use crate::SandboxLimits;
use nix::sys::resource::{Resource, getrlimit, setrlimit};
use nix::sys::statvfs::statvfs;
use std::io::Write;

/// The process ids the kernel gives out once only in a PID namespace, before it wraps.
const RESERVED_PIDS: u64 = 300;

/// Sets the limits for this process and what it starts (a limit already lower is kept).
/// Called by process 1 after it mounted its `/proc`, before Landlock forbids writing there.
pub(crate) fn apply(limits: &SandboxLimits) -> Result<(), HelperError> {
    if nproc_counts_per_namespace(&kernel_release()) {
        lower(Resource::RLIMIT_NPROC, u64::from(limits.processes))?;
    }
    // Refused before Linux 6.14, where the file is the whole machine's; the namespace then
    // has no such bound, and `RLIMIT_NPROC` alone holds (for a user other than root).
    let _ = std::fs::write(
        "/proc/sys/kernel/pid_max",
        (u64::from(limits.processes) + RESERVED_PIDS).to_string(),
    );
    lower(Resource::RLIMIT_DATA, limits.memory_bytes())
}

/// Sets both the soft and the hard limit of `resource` to `value`, or leaves a lower one.
fn lower(resource: Resource, value: u64) -> Result<(), HelperError> {
    let (soft, hard) =
        getrlimit(resource).map_err(HelperError::step(format!("read the limit {resource:?}")))?;
    let value = value.min(hard);
    if soft == value && hard == value {
        return Ok(());
    }
    setrlimit(resource, value, value).map_err(HelperError::step(format!(
        "set the limit {resource:?} to {value}"
    )))
}

/// The kernel's release (`6.18.4-arch1`), empty when unknown.
fn kernel_release() -> String {
    nix::sys::utsname::uname()
        .map(|name| name.release().to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// True when `release` is Linux 5.14 or later, where `RLIMIT_NPROC` counts the processes of a
/// user namespace rather than every process of the user on the machine.
fn nproc_counts_per_namespace(release: &str) -> bool {
    let mut numbers = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    (major, minor) >= (5, 14)
}

/// What process 1 watches while the command runs: when the command reaches its process limit
/// or fills its `/dev/shm`, a note says so once on its stderr (which is the command's output),
/// naming the agent-file key that raises the limit.
#[derive(Debug)]
pub(crate) struct Watch {
    limits: SandboxLimits,
    /// Whether this process's `/proc` shows the sandbox's processes alone (else they are not
    /// counted).
    own_proc: bool,
    processes_noted: bool,
    shm_noted: bool,
}

impl Watch {
    /// A watch over `limits`; processes are counted only when `own_proc`.
    pub(crate) fn new(limits: SandboxLimits, own_proc: bool) -> Self {
        Watch {
            limits,
            own_proc,
            processes_noted: false,
            shm_noted: false,
        }
    }

    /// Looks once, and writes the notes now due.
    pub(crate) fn look(&mut self) {
        if self.own_proc && !self.processes_noted {
            // The first stage, outside this PID namespace, takes one of the limit.
            if tasks_running() + 1 >= u64::from(self.limits.processes) {
                self.processes_noted = true;
                note(&format!(
                    "the command reached its limit of {} processes and threads \
                     (`sandbox.limits.processes` in the agent file); starting more fails until \
                     some end",
                    self.limits.processes
                ));
            }
        }
        if !self.shm_noted && shm_full() {
            self.shm_noted = true;
            note(&format!(
                "the command's private /dev/shm is full: its {} MiB (`sandbox.limits.shm_mb` in \
                 the agent file) are used",
                self.limits.shm_mb
            ));
        }
    }
}

/// Writes a note of the sandbox on stderr.
fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "qilin sandbox: {text}");
}

/// The processes and threads in this PID namespace, from its `/proc`.
fn tasks_running() -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|entry| {
            std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|stat| threads_of(&stat))
                .unwrap_or(1)
        })
        .sum()
}

/// The thread count of a `/proc/PID/stat` line: the 20th field, the 18th after the command
/// name in parentheses (which may hold spaces and parentheses itself).
fn threads_of(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(17)?.parse().ok()
}

/// True when the private `/dev/shm` has no room or no file left.
fn shm_full() -> bool {
    statvfs("/dev/shm")
        .is_ok_and(|stat| stat.blocks_available() == 0 || stat.files_available() == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rlimit_nproc_is_used_from_linux_5_14() {
        for (release, per_namespace) in [
            ("6.18.44-fc-v857", true),
            ("5.14.0-284.el9.x86_64", true),
            ("5.13.0-52-generic", false),
            ("4.19.0", false),
            ("", false),
        ] {
            assert_eq!(
                nproc_counts_per_namespace(release),
                per_namespace,
                "{release}"
            );
        }
    }

    #[test]
    fn the_thread_count_is_read_past_a_command_name_with_spaces() {
        let stat = "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 7 0 1234 \
                    5678 90 18446744073709551615";
        assert_eq!(threads_of(stat), Some(7));
        assert_eq!(threads_of("garbage"), None);
    }
}
