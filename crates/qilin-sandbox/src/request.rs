//! The helper's command line: what Qilin asks of it, and what the helper asks of its second
//! stage.
//!
//! ```text
//! HELPER run    --mode workspace-write|read-only [--network] [--input|--terminal] --workspace DIR --temp DIR
//!               [--write-git] [--write-qilin-files] [--named-file PATH]...
//!               [--processes N] [--memory-mb N] [--shm-mb N] [--mask DIR]... [--unix-socket PATH]...
//!               [--refuse-port PORT]... -- PROGRAM ARGS...
//! HELPER init   (the same; only the helper starts this stage)
//! HELPER probe  --temp DIR
//! HELPER attach -- PROGRAM ARGS...   (no confinement: the terminal on stdin becomes PROGRAM's)
//! ```

use crate::{Protection, SandboxLimits, SandboxMode};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// What a confined command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Confinement {
    /// `read-only` or `workspace-write` (never `off`: an unconfined command needs no helper).
    pub mode: SandboxMode,
    /// Whether the command keeps the host's network.
    pub network: bool,
    /// The workspace: writable in `workspace-write`, the command's working folder.
    pub workspace: PathBuf,
    /// The session's private temp folder, always writable.
    pub temp_dir: PathBuf,
    /// What in the workspace stays read-only (in `workspace-write`).
    pub protection: Protection,
    /// What the command may use.
    pub limits: SandboxLimits,
    /// Folders the command sees empty (the user's runtime folder, Qilin's own, the X server's
    /// sockets), except for the workspace, the temp folder and `unix_sockets` beneath them.
    pub masks: Vec<PathBuf>,
    /// Unix sockets (or folders of them) outside the workspace the command may connect to.
    pub unix_sockets: Vec<PathBuf>,
    /// TCP ports the command may not connect to (Qilin's own servers), with the network.
    pub refused_ports: Vec<u16>,
}

/// How a confined command's standard streams are wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Streams {
    /// Stdin closed; stdout and stderr are the helper's.
    #[default]
    Closed,
    /// Stdin receives what the host writes on the helper's stdin, which stays the lifeline
    /// (`--input`): a shell kept running between calls reads its commands from it.
    Input,
    /// The helper's stdout is a terminal (`--terminal`): the command gets it as stdin, stdout,
    /// stderr and controlling terminal.
    Terminal,
}

/// A command to run confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunRequest {
    /// The confinement.
    pub confinement: Confinement,
    /// How the command's standard streams are wired.
    pub streams: Streams,
    /// The program and its arguments.
    pub program: Vec<OsString>,
}

/// What the helper was started to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Invocation {
    /// The first stage: enter new namespaces, protect paths, start the second stage.
    Run(RunRequest),
    /// The second stage, process 1 of the new PID namespace: confine itself, run the program.
    Init(RunRequest),
    /// Try every step of the set-up on `temp_dir` and report what the kernel supports.
    Probe {
        /// A folder the probe may use.
        temp_dir: PathBuf,
    },
    /// Without confinement (the sandbox is off): become a session leader whose controlling
    /// terminal is the one on stdin, then run the program in this process.
    Attach {
        /// The program and its arguments.
        program: Vec<OsString>,
    },
}

/// Why the helper's command line was not understood.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the sandbox helper's arguments are wrong: {0}; it is started by Qilin itself")]
pub struct UsageError(pub String);

impl RunRequest {
    /// The arguments that ask a helper for `stage` (`run` or `init`) of this request.
    pub fn to_args(&self, stage: &str) -> Vec<OsString> {
        let c = &self.confinement;
        let mut args: Vec<OsString> = vec![stage.into(), "--mode".into(), c.mode.as_str().into()];
        if c.network {
            args.push("--network".into());
        }
        if c.protection.git_allowed() {
            args.push("--write-git".into());
        }
        if c.protection.qilin_files_allowed() {
            args.push("--write-qilin-files".into());
        }
        for file in c.protection.named_files() {
            args.push("--named-file".into());
            args.push(file.clone().into_os_string());
        }
        match self.streams {
            Streams::Closed => {}
            Streams::Input => args.push("--input".into()),
            Streams::Terminal => args.push("--terminal".into()),
        }
        args.extend([
            "--workspace".into(),
            c.workspace.clone().into_os_string(),
            "--temp".into(),
            c.temp_dir.clone().into_os_string(),
            "--processes".into(),
            c.limits.processes.to_string().into(),
            "--memory-mb".into(),
            c.limits.memory_mb.to_string().into(),
            "--shm-mb".into(),
            c.limits.shm_mb.to_string().into(),
        ]);
        for (flag, paths) in [("--mask", &c.masks), ("--unix-socket", &c.unix_sockets)] {
            for path in paths {
                args.extend([flag.into(), path.clone().into_os_string()]);
            }
        }
        for port in &c.refused_ports {
            args.extend(["--refuse-port".into(), port.to_string().into()]);
        }
        args.push("--".into());
        args.extend(self.program.iter().cloned());
        args
    }
}

/// The arguments that ask a helper to attach `program` to the terminal on its stdin.
pub(crate) fn attach_args(program: &[OsString]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["attach".into(), "--".into()];
    args.extend(program.iter().cloned());
    args
}

/// The arguments of a probe using `temp_dir`.
pub(crate) fn probe_args(temp_dir: &std::path::Path) -> Vec<OsString> {
    vec![
        "probe".into(),
        "--temp".into(),
        temp_dir.as_os_str().to_owned(),
    ]
}

impl Invocation {
    /// Reads a helper command line (without the program name).
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, UsageError> {
        let mut args = args.into_iter();
        let stage = args.next().ok_or_else(|| usage("no stage given"))?;
        let stage = stage.to_string_lossy().into_owned();
        if !["run", "init", "probe", "attach"].contains(&stage.as_str()) {
            return Err(usage(format!(
                "`{stage}` is not a stage (`run`, `init`, `probe` or `attach`)"
            )));
        }
        let mut mode = None;
        let mut network = false;
        let mut write_git = false;
        let mut write_qilin_files = false;
        let mut named_files = Vec::new();
        let mut limits = SandboxLimits::default();
        let mut masks = Vec::new();
        let mut unix_sockets = Vec::new();
        let mut refused_ports = Vec::new();
        let mut streams = Streams::Closed;
        let mut workspace = None;
        let mut temp_dir = None;
        let mut program = Vec::new();
        while let Some(arg) = args.next() {
            match arg.to_str() {
                Some("--mode") => {
                    let value = args.next().ok_or_else(|| usage("`--mode` needs a value"))?;
                    mode = Some(match value.to_str() {
                        Some("read-only") => SandboxMode::ReadOnly,
                        Some("workspace-write") => SandboxMode::WorkspaceWrite,
                        _ => {
                            return Err(usage(format!(
                                "`--mode {}` is not `read-only` or `workspace-write`",
                                value.to_string_lossy()
                            )));
                        }
                    });
                }
                Some("--network") => network = true,
                Some("--write-git") => write_git = true,
                Some("--write-qilin-files") => write_qilin_files = true,
                Some("--named-file") => named_files.push(PathBuf::from(
                    args.next()
                        .ok_or_else(|| usage("`--named-file` needs a path"))?,
                )),
                Some(flag @ "--processes") => limits.processes = number(flag, args.next())?,
                Some(flag @ "--memory-mb") => limits.memory_mb = number(flag, args.next())?,
                Some(flag @ "--shm-mb") => limits.shm_mb = number(flag, args.next())?,
                Some(flag @ "--refuse-port") => refused_ports.push(number(flag, args.next())?),
                Some(flag @ ("--mask" | "--unix-socket")) => {
                    let path = args
                        .next()
                        .map(PathBuf::from)
                        .filter(|path| path.is_absolute())
                        .ok_or_else(|| usage(format!("`{flag}` needs an absolute path")))?;
                    if flag == "--mask" {
                        masks.push(path);
                    } else {
                        unix_sockets.push(path);
                    }
                }
                Some(flag @ ("--input" | "--terminal")) => {
                    if streams != Streams::Closed {
                        return Err(usage("`--input` and `--terminal` exclude each other"));
                    }
                    streams = if flag == "--input" {
                        Streams::Input
                    } else {
                        Streams::Terminal
                    };
                }
                Some("--workspace") => workspace = args.next().map(PathBuf::from),
                Some("--temp") => temp_dir = args.next().map(PathBuf::from),
                Some("--") => {
                    program.extend(args.by_ref());
                }
                _ => {
                    return Err(usage(format!(
                        "`{}` is not an option",
                        arg.to_string_lossy()
                    )));
                }
            }
        }
        if stage == "attach" {
            if program.is_empty() {
                return Err(usage("no program follows `--`"));
            }
            return Ok(Invocation::Attach { program });
        }
        let temp_dir = temp_dir.ok_or_else(|| usage("`--temp DIR` is missing"))?;
        if stage == "probe" {
            return Ok(Invocation::Probe { temp_dir });
        }
        let request = RunRequest {
            confinement: Confinement {
                mode: mode.ok_or_else(|| usage("`--mode` is missing"))?,
                network,
                workspace: workspace.ok_or_else(|| usage("`--workspace DIR` is missing"))?,
                temp_dir,
                protection: Protection::new()
                    .allow_git(write_git)
                    .allow_qilin_files(write_qilin_files)
                    .with_named_files(named_files),
                limits,
                masks,
                unix_sockets,
                refused_ports,
            },
            streams,
            program,
        };
        if request.program.is_empty() {
            return Err(usage("no program follows `--`"));
        }
        match stage.as_str() {
            "run" => Ok(Invocation::Run(request)),
            _ => Ok(Invocation::Init(request)),
        }
    }
}

fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// The number following `flag`.
fn number<T: std::str::FromStr>(flag: &str, value: Option<OsString>) -> Result<T, UsageError> {
    value
        .as_deref()
        .and_then(OsStr::to_str)
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| usage(format!("`{flag}` needs a number")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> RunRequest {
        RunRequest {
            confinement: Confinement {
                mode: SandboxMode::WorkspaceWrite,
                network: true,
                workspace: "/work space".into(),
                temp_dir: "/tmp/q".into(),
                protection: Protection::new()
                    .allow_git(true)
                    .with_named_files(["/work space/prompts/a b.md".into()]),
                limits: SandboxLimits {
                    processes: 64,
                    memory_mb: 512,
                    shm_mb: 16,
                },
                masks: vec!["/run/user".into(), "/tmp/.X11-unix".into()],
                unix_sockets: vec!["/run/docker sock".into()],
                refused_ports: vec![8080, 41234],
            },
            streams: Streams::Input,
            program: vec!["bash".into(), "-c".into(), "echo --mode && ls --".into()],
        }
    }

    #[test]
    fn a_request_reads_back_as_written_at_each_stage() {
        let request = request();
        assert_eq!(
            Invocation::parse(request.to_args("run")),
            Ok(Invocation::Run(request.clone()))
        );
        assert_eq!(
            Invocation::parse(request.to_args("init")),
            Ok(Invocation::Init(request.clone()))
        );
        let terminal = RunRequest {
            streams: Streams::Terminal,
            ..request.clone()
        };
        assert_eq!(
            Invocation::parse(terminal.to_args("run")),
            Ok(Invocation::Run(terminal))
        );
        let program: Vec<OsString> = vec!["python3".into(), "--".into(), "-q".into()];
        assert_eq!(
            Invocation::parse(attach_args(&program)),
            Ok(Invocation::Attach { program })
        );
        assert_eq!(
            Invocation::parse(probe_args("/tmp/q".as_ref())),
            Ok(Invocation::Probe {
                temp_dir: "/tmp/q".into()
            })
        );
    }

    #[test]
    fn a_wrong_command_line_says_what_is_wrong() {
        let parse = |args: &[&str]| {
            Invocation::parse(args.iter().map(OsString::from))
                .unwrap_err()
                .to_string()
        };
        assert!(parse(&[]).contains("no stage"));
        assert!(parse(&["run", "--temp", "/t", "--mode", "off"]).contains("`--mode off`"));
        assert!(
            parse(&["run", "--temp", "/t", "--mode", "read-only", "--", "x"])
                .contains("--workspace")
        );
        assert!(
            parse(&[
                "run",
                "--temp",
                "/t",
                "--mode",
                "read-only",
                "--workspace",
                "/w"
            ])
            .contains("no program")
        );
        assert!(parse(&["go", "--temp", "/t"]).contains("`go` is not a stage"));
        assert!(parse(&["attach", "--"]).contains("no program"));
        assert!(
            parse(&[
                "run",
                "--input",
                "--terminal",
                "--temp",
                "/t",
                "--mode",
                "read-only"
            ])
            .contains("exclude each other")
        );
        assert!(parse(&["run", "--bogus"]).contains("`--bogus`"));
        assert!(parse(&["run", "--processes", "many"]).contains("`--processes` needs a number"));
        assert!(parse(&["run", "--refuse-port", "70000"]).contains("`--refuse-port` needs"));
        assert!(parse(&["run", "--mask", "run/user"]).contains("`--mask` needs an absolute"));
    }
}
