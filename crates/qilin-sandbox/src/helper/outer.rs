//! Stage 1, `run`: the namespaces and mounts, then stage 2 as process 1 of the new PID
//! namespace, waited for while the host's lifeline holds.

use super::{HelperError, dev, masks, namespaces, protect};
use crate::SandboxMode;
use crate::protected::Scan;
use crate::request::{RunRequest, Streams};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal, raise};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use std::io::Write;
use std::os::fd::AsFd;
use std::process::{Command, ExitCode, ExitStatus, Stdio};

/// The exit status when the host's lifeline closed (the host ended the command, or died).
const LIFELINE_CLOSED: i32 = 137;

/// Signals that end the command: the helper waits for the command to act on them (the whole
/// process group receives them), then dies of the same signal so the host sees it.
const ENDING_SIGNALS: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

pub(crate) fn run(reexec_args: &[&str], request: RunRequest) -> Result<ExitCode, HelperError> {
    // A new session: no controlling terminal to read keys from or write escapes to, and a
    // process group the host can signal as a whole. It fails only for a group leader, which
    // already is such a group.
    let _ = nix::unistd::setsid();
    let confinement = &request.confinement;
    let scan = match confinement.mode {
        SandboxMode::WorkspaceWrite => {
            let workspace = confinement
                .workspace
                .canonicalize()
                .unwrap_or_else(|_| confinement.workspace.clone());
            confinement.protection.scan(&workspace)
        }
        _ => Scan::default(),
    };
    // The sockets bound in the host's network namespace, listed before leaving it.
    let sockets = masks::bound_sockets();
    namespaces::enter(confinement.network)?;
    let reachable = masks::Reachable::of(confinement);
    dev::mount_private(
        confinement.limits.shm_mb,
        request.streams == Streams::Terminal,
        &reachable,
    )?;
    masks::hide(confinement, &reachable, &sockets)?;
    // The protected set last, so it holds over whatever the masks bound back.
    protect::apply(&scan)?;
    if !confinement.network {
        super::loopback::bring_up()?;
    }

    // Signals are read from a descriptor, beside the lifeline, in this one thread (no thread
    // can be started once the process has asked for a new PID namespace).
    let mut waited = SigSet::empty();
    waited.add(Signal::SIGCHLD);
    for signal in ENDING_SIGNALS {
        waited.add(signal);
    }
    waited
        .thread_block()
        .map_err(HelperError::step("block signals"))?;
    let signals = SignalFd::with_flags(&waited, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(HelperError::step("open a signal descriptor"))?;

    // `/proc/self/exe` is this very program, even if its file was replaced since it started.
    let mut init = Command::new("/proc/self/exe")
        .args(reexec_args)
        .args(request.to_args("init"))
        .stdin(Stdio::piped())
        .spawn()
        .map_err(HelperError::io("start the sandbox's process 1"))?;
    // With `--input`, what the host writes on the lifeline is the command's input.
    let mut input = match request.streams {
        Streams::Input => init.stdin.take(),
        _ => None,
    };
    let lifeline = std::io::stdin();
    let mut received = vec![0u8; 64 * 1024];
    let mut ending_signal = None;
    let status = loop {
        if let Some(status) = init
            .try_wait()
            .map_err(HelperError::io("wait for the sandbox's process 1"))?
        {
            break status;
        }
        let mut fds = [
            PollFd::new(signals.as_fd(), PollFlags::POLLIN),
            PollFd::new(lifeline.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(errno) => return Err(HelperError::step("wait for the command")(errno)),
        }
        if fds[1].any().unwrap_or(false) {
            match nix::unistd::read(lifeline.as_fd(), &mut received) {
                Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => {}
                // The host ended the command, or died: process 1 dies with this process (its
                // parent-death signal), and every other process in the sandbox with process 1.
                Ok(0) | Err(_) => std::process::exit(LIFELINE_CLOSED),
                Ok(n) => {
                    if let Some(pipe) = input.as_mut() {
                        // A command that stopped reading loses its input, not its sandbox.
                        if pipe.write_all(&received[..n]).is_err() {
                            input = None;
                        }
                    }
                }
            }
        }
        while let Ok(Some(info)) = signals.read_signal() {
            match Signal::try_from(info.ssi_signo as i32) {
                Ok(Signal::SIGCHLD) | Err(_) => {}
                Ok(signal) => {
                    ending_signal.get_or_insert(signal);
                }
            }
        }
    };
    if let Some(signal) = ending_signal {
        // Die of the signal that ended the command, as the host expects of a killed process.
        let _ = raise(signal);
        let _ = waited.thread_unblock();
    }
    Ok(exit_code(status))
}

/// The exit status to report for process 1's: its code, or 128 + the signal that killed it.
fn exit_code(status: ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
