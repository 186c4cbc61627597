//! Stage 2, `init`: process 1 of the sandbox's PID namespace. It sets the limits, confines
//! itself, runs the command and reaps every orphan until the command exits, watching the
//! limits meanwhile; its own exit then ends every process left in the namespace.

use super::limits::{self, Watch};
use super::{HelperError, dev, namespaces, rules};
use crate::request::{RunRequest, Streams, UsageError};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::Pid;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The exit status when stage 1 was already gone.
const PARENT_GONE: u8 = 137;

/// How often the limits are looked at while the command runs.
const WATCH_EVERY: Duration = Duration::from_millis(200);

pub(crate) fn run(request: RunRequest) -> Result<ExitCode, HelperError> {
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
        .map_err(HelperError::step("ask to die with the first stage"))?;
    if parent_gone() {
        return Ok(ExitCode::from(PARENT_GONE));
    }
    // Stage 1 blocks the signals it waits for, and a child inherits the mask: clear it so the
    // command gets the signals sent to it.
    SigSet::all()
        .thread_unblock()
        .map_err(HelperError::step("unblock signals"))?;
    let own_proc = namespaces::mount_own_proc();
    limits::apply(&request.confinement.limits)?;
    let terminal = match request.streams {
        Streams::Terminal => Some(take_terminal()?),
        _ => None,
    };
    let devices: Vec<PathBuf> = terminal
        .iter()
        .map(|_| PathBuf::from(dev::CONSOLE))
        .collect();
    rules::confine_or_fail(&request.confinement, &devices)?;
    let Some((program, args)) = request.program.split_first() else {
        return Err(UsageError("no program to run".into()).into());
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(&request.confinement.workspace);
    match (request.streams, terminal) {
        (Streams::Terminal, Some(tty)) => {
            let copy = |fd: &OwnedFd| {
                fd.try_clone()
                    .map_err(HelperError::io("share the terminal with the command"))
            };
            command
                .stdin(Stdio::from(copy(&tty)?))
                .stdout(Stdio::from(copy(&tty)?))
                .stderr(Stdio::from(tty));
        }
        // The host's input, relayed by stage 1 onto this process's stdin.
        (Streams::Input, _) => {
            command.stdin(Stdio::inherit());
        }
        _ => {
            command.stdin(Stdio::null());
        }
    }
    // Child exits are read from a descriptor, so the wait can wake to watch the limits; the
    // command starts with no signal blocked (the standard library clears the mask).
    let mut child_exits = SigSet::empty();
    child_exits.add(Signal::SIGCHLD);
    child_exits
        .thread_block()
        .map_err(HelperError::step("block SIGCHLD"))?;
    let exits = SignalFd::with_flags(&child_exits, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(HelperError::step("open a signal descriptor"))?;
    let command = command.spawn().map_err(HelperError::io(format!(
        "start `{}`",
        program.to_string_lossy()
    )))?;
    let command_pid = Pid::from_raw(command.id() as i32);
    let mut watch = Watch::new(request.confinement.limits, own_proc);
    let mut looked = Instant::now();
    loop {
        // A last look while the command's exit leaves it a zombie, still counted as it was.
        if has_exited(command_pid) {
            watch.look();
        }
        if let Some(code) = reap(command_pid)? {
            return Ok(code);
        }
        let wait = WATCH_EVERY.saturating_sub(looked.elapsed());
        let mut fds = [PollFd::new(exits.as_fd(), PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::ZERO);
        match poll(&mut fds, timeout) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(errno) => return Err(HelperError::step("wait for the command")(errno)),
        }
        while let Ok(Some(_)) = exits.read_signal() {}
        if looked.elapsed() >= WATCH_EVERY {
            watch.look();
            looked = Instant::now();
        }
    }
}

/// True when the command has exited, without reaping it.
fn has_exited(command_pid: Pid) -> bool {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    matches!(
        waitid(Id::Pid(command_pid), flags),
        Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..))
    )
}

/// Reaps every process that has exited; the command's exit status once it is among them.
fn reap(command_pid: Pid) -> Result<Option<ExitCode>, HelperError> {
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(pid, code)) if pid == command_pid => {
                return Ok(Some(ExitCode::from(u8::try_from(code).unwrap_or(1))));
            }
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == command_pid => {
                return Ok(Some(ExitCode::from(128 + signal as u8)));
            }
            Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::ECHILD) => return Ok(None),
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(errno) => return Err(HelperError::step("wait for the command")(errno)),
        }
    }
}

/// Leaves stage 1's session for a new one whose controlling terminal is the terminal on
/// stdout, so that keys typed there (Ctrl-C) signal the command and not the helper; returns
/// the terminal (which the command may open again as `/dev/tty`, and as `/dev/console`, where
/// stage 1 bound it).
fn take_terminal() -> Result<OwnedFd, HelperError> {
    nix::unistd::setsid().map_err(HelperError::step("start a session for the terminal"))?;
    let tty = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map_err(HelperError::io("take the terminal"))?;
    rustix::process::ioctl_tiocsctty(&tty).map_err(|errno| HelperError::Step {
        step: "make the terminal the controlling terminal".into(),
        source: errno.into(),
    })?;
    Ok(tty)
}

/// True when stage 1 exited before this process asked to die with it: the write end of the
/// pipe on stdin, which stage 1 holds, is then closed.
fn parent_gone() -> bool {
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    poll(&mut fds, PollTimeout::ZERO).is_ok()
        && fds[0]
            .revents()
            .is_some_and(|events| events.contains(PollFlags::POLLHUP))
}
