//! The sandbox helper: the process that confines itself and then runs the command, so Qilin
//! itself never changes its own namespaces or rights (and needs no `unsafe` `pre_exec`).
//!
//! A command runs in two stages of the helper:
//!
//! 1. **run** (a child of Qilin): starts a new session (no controlling terminal), enters new
//!    user, mount and PID namespaces (and a network namespace with only a loopback interface
//!    unless the network is allowed), mounts a private, minimal `/dev` (module `dev`), hides
//!    the host's runtime folders and Unix sockets (module `masks`), mounts the protected set
//!    ([`crate::Protection`]) read-only and each folder above it onto itself (so it cannot be
//!    renamed), then starts stage 2 and waits for it. It ends everything when its stdin (the
//!    host's lifeline pipe) closes.
//! 2. **init** (process 1 of the new PID namespace): dies with stage 1, mounts a `/proc` of
//!    its own, sets the limits on processes and memory (module `limits`), confines itself with
//!    Landlock (writes only in the writable folders, no signals or abstract sockets out of the
//!    sandbox, no connection to Qilin's own servers) and runs the command, reaping orphans
//!    until the command exits. When process 1 exits, the kernel kills every process left in
//!    the namespace: a `setsid` child or a double-forked daemon cannot outlive the command.
//!
//! A command's streams are wired one of three ways: stdin closed (a `bash -c` call); stdin fed
//! by the host through stage 1, which relays what arrives on the lifeline (`--input`, for a
//! shell kept between calls); or a terminal, which stage 1 gets as stdout and stage 2 makes
//! the command's controlling terminal after leaving stage 1's session (`--terminal`). Without
//! confinement, the **attach** stage does that last part alone.

mod dev;
mod init;
mod limits;
mod loopback;
mod masks;
mod namespaces;
mod outer;
mod protect;
mod rules;

use crate::probe::{LandlockSupport, Support};
use crate::request::{Confinement, Invocation, UsageError};
use crate::{SandboxLimits, SandboxMode};
use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::ExitCode;

/// The exit status of a helper that could not run the command (the one `env` uses).
pub const HELPER_FAILED: u8 = 125;

/// Why the helper could not run the command.
#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    /// The command line is wrong.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// A set-up step failed.
    #[error("cannot {step}: {source}")]
    Step {
        /// The step, e.g. `mount /proc`.
        step: String,
        /// Why.
        source: io::Error,
    },
    /// Landlock refused the rules.
    #[error("Landlock refused the sandbox's rules: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// The kernel did not enforce Landlock.
    #[error("Landlock is not enforced by this kernel, so the command was not run")]
    NotEnforced,
}

impl HelperError {
    pub(crate) fn step(step: impl Into<String>) -> impl FnOnce(nix::Error) -> HelperError {
        let step = step.into();
        move |errno| HelperError::Step {
            step,
            source: io::Error::from(errno),
        }
    }

    pub(crate) fn io(step: impl Into<String>) -> impl FnOnce(io::Error) -> HelperError {
        let step = step.into();
        move |source| HelperError::Step { step, source }
    }
}

/// How a helper run ended.
#[derive(Debug)]
pub enum HelperOutcome {
    /// The command ran; exit with its status (128 + the signal when a signal ended it).
    Exited(ExitCode),
    /// A probe ran; print [`HelperOutcome::report`] on stdout for the host, and exit 0.
    Probed(Support),
}

impl HelperOutcome {
    /// The line a probe prints for the host (JSON); `None` after a command.
    pub fn report(&self) -> Option<String> {
        match self {
            HelperOutcome::Exited(_) => None,
            HelperOutcome::Probed(support) => serde_json::to_string(support).ok(),
        }
    }

    /// The status to exit with.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            HelperOutcome::Exited(code) => *code,
            HelperOutcome::Probed(_) => ExitCode::SUCCESS,
        }
    }
}

/// Runs the helper with `args` (its command line after the program name and `reexec_args`).
/// `reexec_args` are the arguments that select the helper in this program (e.g.
/// `["sandbox-exec"]` for `qilin sandbox-exec`); stage 1 passes them on to start stage 2.
///
/// On an error the command did not run: the caller prints the error (it reaches the
/// command's output) and exits with [`HELPER_FAILED`].
pub fn run_helper(
    reexec_args: &[&str],
    args: impl IntoIterator<Item = OsString>,
) -> Result<HelperOutcome, HelperError> {
    match Invocation::parse(args)? {
        Invocation::Run(request) => outer::run(reexec_args, request).map(HelperOutcome::Exited),
        Invocation::Init(request) => init::run(request).map(HelperOutcome::Exited),
        Invocation::Probe { temp_dir } => Ok(HelperOutcome::Probed(probe(&temp_dir))),
        Invocation::Attach { program } => Err(attach(&program)),
    }
}

/// Becomes a session leader whose controlling terminal is the terminal on stdin, then runs
/// `program` in this very process; returns only when that fails.
fn attach(program: &[OsString]) -> HelperError {
    use std::os::unix::process::CommandExt;
    // Fails only for a process group leader; then the terminal cannot be taken either, and
    // the next step says so.
    let _ = nix::unistd::setsid();
    if let Err(errno) = rustix::process::ioctl_tiocsctty(std::io::stdin()) {
        return HelperError::Step {
            step: "make the terminal on stdin the controlling terminal".into(),
            source: errno.into(),
        };
    }
    let Some((name, args)) = program.split_first() else {
        return UsageError("no program to run".into()).into();
    };
    let error = std::process::Command::new(name).args(args).exec();
    HelperError::Step {
        step: format!("start `{}`", name.to_string_lossy()),
        source: error,
    }
}

/// The helper as a program's `main`: runs [`run_helper`] on this process's arguments after
/// the program name and `reexec_args`, prints a probe's report on stdout or an error on stderr
/// (which is the command's output, so the model reads why it did not run), and returns the
/// status to exit with.
pub fn helper_main(reexec_args: &[&str]) -> ExitCode {
    let args = std::env::args_os().skip(1 + reexec_args.len());
    match run_helper(reexec_args, args) {
        Ok(outcome) => {
            if let Some(report) = outcome.report() {
                println!("{report}");
            }
            outcome.exit_code()
        }
        Err(err) => {
            eprintln!("qilin sandbox: {err}");
            ExitCode::from(HELPER_FAILED)
        }
    }
}

/// Tries each step of the set-up in this (throw-away) process and reports what worked.
fn probe(temp_dir: &Path) -> Support {
    let limits = SandboxLimits::default();
    let namespaces = namespaces::enter(false)
        .and_then(|()| namespaces::bind_read_only(temp_dir))
        .and_then(|()| loopback::bring_up());
    let confinement = Confinement {
        mode: SandboxMode::WorkspaceWrite,
        network: false,
        workspace: temp_dir.to_path_buf(),
        temp_dir: temp_dir.to_path_buf(),
        protection: crate::Protection::new(),
        limits,
        masks: Vec::new(),
        unix_sockets: Vec::new(),
        refused_ports: Vec::new(),
    };
    let mounts = namespaces.as_ref().ok().map(|()| {
        let reachable = masks::Reachable::of(&confinement);
        dev::mount_private(limits.shm_mb, false, &reachable)
            .and_then(|()| masks::mask_folder(temp_dir, &Vec::new()))
    });
    let landlock =
        rules::confine(&confinement, &[]).unwrap_or_else(|err| LandlockSupport::Failed {
            error: err.to_string(),
        });
    Support {
        landlock,
        namespaces_error: namespaces.err().map(|err| err.to_string()),
        mounts_error: mounts.and_then(Result::err).map(|err| err.to_string()),
    }
}
