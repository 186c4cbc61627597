//! A shell command started through the session's sandbox, in its own process group, with its
//! stdout and stderr merged into one pipe, and a guard that kills the whole group when dropped,
//! so nothing it started outlives it. A confined command also holds a lifeline: when the guard
//! drops it (or Qilin dies), the sandbox ends every process the command started, those that
//! left its group included.

use crate::shell_kind::ShellKind;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use qilin_sandbox::{CommandIo, Sandbox, SandboxedCommand};
use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::Stdio;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

/// A running `bash -c` command.
pub struct ShellProcess {
    /// The shell process (the group's leader).
    pub child: Child,
    /// Stdout and stderr, interleaved as the command wrote them.
    pub output: pipe::Receiver,
    /// Kills the group when dropped.
    pub group: GroupGuard,
}

/// Starts `bash -c command` in `cwd` as `sandbox` says, in a new process group, with stdin
/// closed.
pub fn spawn_shell(command: &str, cwd: &Path, sandbox: &Sandbox) -> io::Result<ShellProcess> {
    spawn_program(ShellKind::Bash.one_off(command), cwd, sandbox)
}

/// Starts `program` (its name, then its arguments) in `cwd` as `sandbox` says, in a new
/// process group, with stdin closed.
pub fn spawn_program(
    program: Vec<OsString>,
    cwd: &Path,
    sandbox: &Sandbox,
) -> io::Result<ShellProcess> {
    let (reader, writer) = std::io::pipe()?;
    let SandboxedCommand {
        command, lifeline, ..
    } = sandbox.program(program, cwd, CommandIo::Closed)?;
    let mut shell = Command::from(command);
    shell
        .stdout(Stdio::from(writer.try_clone()?))
        .stderr(Stdio::from(writer))
        .kill_on_drop(true);
    let child = shell.spawn()?;
    drop(shell);
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("the shell exited before its process id could be read"))?;
    let output = pipe::Receiver::from_owned_fd(reader.into())?;
    Ok(ShellProcess {
        child,
        output,
        group: GroupGuard::new(pid as i32, lifeline),
    })
}

/// Kills a process group (and closes its sandbox's lifeline) when dropped, unless disarmed.
pub struct GroupGuard {
    pgid: Pid,
    armed: bool,
    lifeline: Option<io::PipeWriter>,
}

impl GroupGuard {
    /// A guard for the group led by `pgid`, holding the sandbox's `lifeline` when there is one.
    pub fn new(pgid: i32, lifeline: Option<io::PipeWriter>) -> GroupGuard {
        GroupGuard {
            pgid: Pid::from_raw(pgid),
            armed: true,
            lifeline,
        }
    }

    /// The group's id (the leader's process id).
    pub fn id(&self) -> i32 {
        self.pgid.as_raw()
    }

    /// Sends `signal` to every process of the group. A group already gone (or killed through
    /// this guard) is not an error.
    pub fn signal(&self, signal: Signal) -> io::Result<()> {
        if !self.armed {
            return Ok(());
        }
        match killpg(self.pgid, signal) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(errno) => Err(io::Error::from(errno)),
        }
    }

    /// Kills every process of the group, ends the sandbox's processes outside it, and
    /// disarms the guard.
    pub fn kill(&mut self) {
        let _ = self.signal(Signal::SIGKILL);
        if self.armed {
            // A confined command's leader is the sandbox helper, outside any group of its own:
            // its death ends the sandbox's process 1 and with it every process inside.
            let _ = nix::sys::signal::kill(self.pgid, Signal::SIGKILL);
        }
        self.lifeline = None;
        self.armed = false;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}
