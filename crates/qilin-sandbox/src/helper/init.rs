//! Stage 2, `init`: process 1 of the sandbox's PID namespace. It confines itself, runs the
//! command and reaps every orphan until the command exits; its own exit then ends every
//! process left in the namespace.

use super::{HelperError, namespaces, rules};
use crate::request::RunRequest;
use crate::request::UsageError;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;
use std::os::fd::AsFd;
use std::process::{Command, ExitCode, Stdio};

/// The exit status when stage 1 was already gone.
const PARENT_GONE: u8 = 137;

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
    namespaces::mount_own_proc();
    rules::confine_or_fail(&request.confinement)?;
    let Some((program, args)) = request.program.split_first() else {
        return Err(UsageError("no program to run".into()).into());
    };
    let command = Command::new(program)
        .args(args)
        .current_dir(&request.confinement.workspace)
        .stdin(Stdio::null())
        .spawn()
        .map_err(HelperError::io(format!(
            "start `{}`",
            program.to_string_lossy()
        )))?;
    let command_pid = Pid::from_raw(command.id() as i32);
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == command_pid => {
                return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
            }
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == command_pid => {
                return Ok(ExitCode::from(128 + signal as u8));
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(errno) => {
                return Err(HelperError::step("wait for the command")(errno));
            }
        }
    }
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
