//! The host's side: a session's [`Sandbox`], which probes the kernel at start (once per helper
//! and process, when the kernel supports everything) and then turns each shell command into a
//! process started through the helper.

use crate::environment::command_environment;
use crate::probe::Support;
use crate::request::{Confinement, RunRequest, Streams, attach_args, probe_args};
use crate::runtime_dir::{private_runtime_dir, runtime_dirs, server_ports};
use crate::temp::TempFolder;
use crate::{Protection, SandboxMode, SandboxSettings};
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How to start the sandbox helper: a program and the arguments that select the helper in it
/// (`qilin sandbox-exec`, or a test binary that does nothing else).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxHelper {
    program: PathBuf,
    args: Vec<OsString>,
}

impl SandboxHelper {
    /// The helper is `program` run with `args` first, then the helper's own arguments.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> Self {
        SandboxHelper {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// The running binary itself, with `args` (e.g. `["sandbox-exec"]`) selecting the helper.
    pub fn current_exe(args: &[&str]) -> io::Result<Self> {
        Ok(SandboxHelper::new(
            std::env::current_exe()?,
            args.iter().copied(),
        ))
    }

    fn command(&self, helper_args: Vec<OsString>) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).args(helper_args);
        command
    }
}

/// The complete reports of the helpers probed in this process.
static PROBED: parking_lot::Mutex<Vec<(SandboxHelper, Support)>> =
    parking_lot::Mutex::new(Vec::new());

fn lock_probed() -> parking_lot::MutexGuard<'static, Vec<(SandboxHelper, Support)>> {
    PROBED.lock()
}

/// Why a session's sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The settings are wrong.
    #[error("{}", .0.join("\n"))]
    InvalidSettings(Vec<String>),
    /// The private temp folder could not be created.
    #[error("the sandbox's private temp folder could not be created: {0}")]
    TempDir(#[source] io::Error),
    /// The helper could not be started.
    #[error("the sandbox helper `{}` could not be started: {source}", .program.display())]
    Helper {
        /// The helper program.
        program: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The helper's probe did not report.
    #[error("the sandbox helper's probe failed ({status}): {output}")]
    Probe {
        /// How the probe ended.
        status: String,
        /// What it printed.
        output: String,
    },
    /// The kernel cannot confine commands, and the settings did not opt out. The message says
    /// how an agent file opts out; a host that offers its own way (a flag) adds it.
    #[error(
        "bash cannot be sandboxed on this machine, so Qilin will not start it in `{mode}` mode: \
         {}. To run commands without a sandbox (with your full file system, network and \
         environment rights), set `sandbox: {{mode: off}}` in the agent file",
        .missing.join("; ")
    )]
    Unsupported {
        /// The mode asked for.
        mode: SandboxMode,
        /// What is missing, each a sentence.
        missing: Vec<String>,
    },
}

/// Folders every confined command sees empty, besides the user's runtime folder and Qilin's:
/// the X server's and the ICE manager's sockets.
const MASKED_FOLDERS: &[&str] = &["/run/user", "/tmp/.X11-unix", "/tmp/.ICE-unix"];

/// A session's sandbox for `bash`: its settings, the kernel support found at start, and a
/// private temp folder (owner-only, removed with the sandbox). A host service: `bash` refuses
/// to run without one.
#[derive(Debug)]
pub struct Sandbox {
    settings: SandboxSettings,
    protection: Protection,
    helper: SandboxHelper,
    support: Option<Support>,
    temp: TempFolder,
    /// The allowed Unix sockets, expanded.
    unix_sockets: Vec<PathBuf>,
    /// The folders commands see empty.
    masks: Vec<PathBuf>,
    /// Where `qilin serve` writes token files, whose ports commands may not connect to.
    runtime_dirs: Vec<PathBuf>,
}

/// A command ready to spawn, and the pipe that keeps a confined one alive: when the host
/// drops (or dies holding) `lifeline`, the helper ends the command's whole process tree.
#[derive(Debug)]
pub struct SandboxedCommand {
    /// The process to spawn; its stdout and stderr are the caller's to set, unless it runs in
    /// a terminal.
    pub command: Command,
    /// The write end of the helper's stdin, for a confined command without input.
    pub lifeline: Option<io::PipeWriter>,
    /// What the caller writes to the command's stdin, with [`CommandIo::Input`]. For a
    /// confined command this pipe is also its lifeline: dropping it ends the command.
    pub input: Option<io::PipeWriter>,
}

/// How a command's standard streams are wired.
#[derive(Debug)]
pub enum CommandIo {
    /// Stdin closed; the caller sets stdout and stderr.
    Closed,
    /// Stdin is a pipe the caller writes ([`SandboxedCommand::input`]); the caller sets stdout
    /// and stderr.
    Input,
    /// Stdin, stdout and stderr are this terminal (the secondary side of a pseudo-terminal),
    /// which becomes the command's controlling terminal in a session of its own, so keys
    /// written on the primary side (Ctrl-C) signal the command.
    Terminal(OwnedFd),
}

impl Sandbox {
    /// Sets up a session's sandbox: checks the settings, creates the private temp folder and,
    /// unless the mode is `off`, probes what the kernel supports through `helper`. Refuses a
    /// confined mode the kernel cannot enforce, naming what is missing and how to opt out.
    pub fn start(
        settings: SandboxSettings,
        helper: SandboxHelper,
    ) -> Result<Sandbox, SandboxError> {
        let problems = settings.problems();
        if !problems.is_empty() {
            return Err(SandboxError::InvalidSettings(
                problems
                    .into_iter()
                    .map(|problem| problem.message)
                    .collect(),
            ));
        }
        let variable = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        let unix_sockets = settings
            .unix_socket_paths(variable)
            .map_err(|problem| SandboxError::InvalidSettings(vec![problem]))?;
        let temp = TempFolder::create().map_err(SandboxError::TempDir)?;
        let runtime_dirs = runtime_dirs();
        let mut masks: Vec<PathBuf> = MASKED_FOLDERS.iter().map(PathBuf::from).collect();
        masks.extend(variable("XDG_RUNTIME_DIR"));
        masks.extend(runtime_dirs.iter().cloned());
        // A relative one (a variable set wrongly) names no folder the helper could cover.
        masks.retain(|mask| mask.is_absolute());
        let mut sandbox = Sandbox {
            settings,
            protection: Protection::new(),
            helper,
            support: None,
            temp,
            unix_sockets,
            masks,
            runtime_dirs,
        };
        if sandbox.settings.mode == SandboxMode::Off {
            return Ok(sandbox);
        }
        // The folder a server started from this environment writes its token file to exists
        // from now on, so a command's mask covers whatever it holds later.
        if let Some(dir) = private_runtime_dir() {
            use std::os::unix::fs::DirBuilderExt;
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir);
        }
        let support = sandbox.probe_once()?;
        if !support.is_complete() {
            return Err(SandboxError::Unsupported {
                mode: sandbox.settings.mode,
                missing: support.missing(),
            });
        }
        sandbox.support = Some(support);
        Ok(sandbox)
    }

    /// The helper's probe, run once per process: what the kernel lets the helper do does not
    /// change while Qilin runs, so a complete report is kept and the later sessions of the same
    /// helper (a parent's children, a server's sessions) start without a process of their own.
    /// An incomplete report is not kept: the next session probes again, and sees a setting the
    /// user changed meanwhile.
    fn probe_once(&self) -> Result<Support, SandboxError> {
        let known = |probed: &[(SandboxHelper, Support)]| {
            probed
                .iter()
                .find(|(helper, _)| *helper == self.helper)
                .map(|(_, support)| support.clone())
        };
        if let Some(support) = known(&lock_probed()) {
            return Ok(support);
        }
        let support = self.probe()?;
        if support.is_complete() {
            let mut probed = lock_probed();
            if known(&probed).is_none() {
                probed.push((self.helper.clone(), support.clone()));
            }
        }
        Ok(support)
    }

    /// Runs the helper's probe, which tries each step of the set-up and reports.
    pub fn probe(&self) -> Result<Support, SandboxError> {
        let output = self
            .helper
            .command(probe_args(self.temp.path()))
            .stdin(Stdio::null())
            .output()
            .map_err(|source| SandboxError::Helper {
                program: self.helper.program.clone(),
                source,
            })?;
        let failed = |what: String| SandboxError::Probe {
            status: output.status.to_string(),
            output: what,
        };
        if !output.status.success() {
            return Err(failed(
                String::from_utf8_lossy(&output.stderr).trim().to_string(),
            ));
        }
        serde_json::from_slice(&output.stdout).map_err(|err| {
            failed(format!(
                "{err}: {}",
                String::from_utf8_lossy(&output.stdout).trim()
            ))
        })
    }

    /// The settings in force.
    pub fn settings(&self) -> &SandboxSettings {
        &self.settings
    }

    /// The same sandbox keeping `protection`'s set read-only (everything protected, no named
    /// files, unless set).
    pub fn with_protection(mut self, protection: Protection) -> Self {
        self.protection = protection;
        self
    }

    /// What in the workspace stays read-only to commands.
    pub fn protection(&self) -> &Protection {
        &self.protection
    }

    /// What the probe found (`None` when the mode is `off`).
    pub fn support(&self) -> Option<&Support> {
        self.support.as_ref()
    }

    /// The session's private temp folder (commands get it as `TMPDIR`).
    pub fn temp_dir(&self) -> &Path {
        self.temp.path()
    }

    /// The warning a host shows at start when commands run unconfined.
    pub fn warning(&self) -> Option<String> {
        (self.settings.mode == SandboxMode::Off).then(|| {
            "WARNING: the bash sandbox is OFF for this session: commands \
             can write anywhere you can, reach any network address, and leave processes running \
             after the session ends. Only the environment is still filtered."
                .to_string()
        })
    }

    /// `bash -c shell_command` in `workspace`, confined as the settings say, with the
    /// filtered environment and stdin closed.
    pub fn command(&self, shell_command: &str, workspace: &Path) -> io::Result<SandboxedCommand> {
        self.program(
            vec!["bash".into(), "-c".into(), shell_command.into()],
            workspace,
            CommandIo::Closed,
        )
    }

    /// `program` (its name, then its arguments) in `workspace`, confined as the settings say,
    /// with the filtered environment and its streams wired as `io` says. Unconfined, a command
    /// without a terminal starts a process group of its own; every other command is a session
    /// leader.
    pub fn program(
        &self,
        program: Vec<OsString>,
        workspace: &Path,
        io: CommandIo,
    ) -> io::Result<SandboxedCommand> {
        if program.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no program was given to run",
            ));
        }
        let mut lifeline = None;
        let mut input = None;
        let mut command = match self.settings.mode {
            SandboxMode::Off => match &io {
                CommandIo::Terminal(_) => self.helper.command(attach_args(&program)),
                _ => {
                    let mut command = Command::new(&program[0]);
                    command.args(&program[1..]).process_group(0);
                    command
                }
            },
            mode => {
                let streams = match &io {
                    CommandIo::Closed => Streams::Closed,
                    CommandIo::Input => Streams::Input,
                    CommandIo::Terminal(_) => Streams::Terminal,
                };
                let network = self.settings.network;
                let request = RunRequest {
                    confinement: Confinement {
                        mode,
                        network,
                        workspace: workspace.to_path_buf(),
                        temp_dir: self.temp.path().to_path_buf(),
                        protection: self.protection.clone(),
                        limits: self.settings.limits,
                        masks: self.masks.clone(),
                        unix_sockets: self.unix_sockets.clone(),
                        refused_ports: if network {
                            server_ports(&self.runtime_dirs)
                        } else {
                            Vec::new()
                        },
                    },
                    streams,
                    program,
                };
                let (reader, writer) = io::pipe()?;
                let mut command = self.helper.command(request.to_args("run"));
                command.stdin(Stdio::from(reader));
                match io {
                    CommandIo::Input => input = Some(writer),
                    _ => lifeline = Some(writer),
                }
                command
            }
        };
        match io {
            CommandIo::Closed if lifeline.is_none() => {
                command.stdin(Stdio::null());
            }
            CommandIo::Input if input.is_none() => {
                let (reader, writer) = io::pipe()?;
                command.stdin(Stdio::from(reader));
                input = Some(writer);
            }
            CommandIo::Terminal(tty) => {
                if lifeline.is_none() {
                    command.stdin(Stdio::from(tty.try_clone()?));
                }
                command
                    .stdout(Stdio::from(tty.try_clone()?))
                    .stderr(Stdio::from(tty));
            }
            _ => {}
        }
        command
            .current_dir(workspace)
            .env_clear()
            .envs(command_environment(
                std::env::vars_os(),
                &self.settings.env,
                self.temp.path(),
            ));
        Ok(SandboxedCommand {
            command,
            lifeline,
            input,
        })
    }
}
