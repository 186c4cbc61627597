//! The `sandbox:` section of an agent file: how confined its `bash` commands run.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// How much of the machine a `bash` command may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Nothing may be written but the session's private temp folder.
    ReadOnly,
    /// Writes are allowed in the workspace (except `.git/`, `.qilin/` and `*.agent` files) and
    /// in the session's private temp folder; the default.
    #[default]
    WorkspaceWrite,
    /// No sandbox: commands run with the rights of the user running Qilin.
    Off,
}

impl SandboxMode {
    /// The mode as an agent file spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Off => "off",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An agent's sandbox settings (`sandbox: {mode, network, env, unix_sockets, limits}`), every
/// key optional.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SandboxSettings {
    /// `read-only`, `workspace-write` (default) or `off`.
    #[serde(default)]
    pub mode: SandboxMode,
    /// Whether commands may reach the network (default false: a network namespace of their
    /// own, with only its loopback interface).
    #[serde(default)]
    pub network: bool,
    /// Environment variables passed to commands by name, beyond the built-in allow-list.
    #[serde(default)]
    pub env: Vec<String>,
    /// Unix sockets outside the workspace that commands may connect to (every other one is
    /// hidden from them): each a socket's path, or a folder whose sockets are all allowed,
    /// written in full or from `~/` or `$XDG_RUNTIME_DIR/`.
    #[serde(default)]
    pub unix_sockets: Vec<String>,
    /// What one command may use.
    #[serde(default)]
    pub limits: SandboxLimits,
}

/// The limits on what one command (with everything it starts) may use, from the `limits:` key
/// of an agent's `sandbox:` section; every key optional.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxLimits {
    /// Processes and threads the command may have at once (default 1024).
    pub processes: u32,
    /// Memory each process may allocate, in MiB: its data (heap and private writable
    /// mappings). By default half the machine's memory, at most 8192.
    pub memory_mb: u64,
    /// The size of the command's private `/dev/shm`, in MiB (default 256).
    pub shm_mb: u64,
}

impl SandboxLimits {
    /// The default number of processes and threads.
    pub const DEFAULT_PROCESSES: u32 = 1024;
    /// The most processes a limit may allow (the kernel's largest process id, less the ids it
    /// keeps for the namespace's first processes).
    pub const MAX_PROCESSES: u32 = 4_194_304 - 300;
    /// The largest default memory per process, in MiB.
    pub const MAX_DEFAULT_MEMORY_MB: u64 = 8192;
    /// The smallest memory per process a limit may set, in MiB (`bash` itself needs a few).
    pub const MIN_MEMORY_MB: u64 = 32;
    /// The default size of the private `/dev/shm`, in MiB.
    pub const DEFAULT_SHM_MB: u64 = 256;

    /// The memory per process in bytes.
    pub fn memory_bytes(&self) -> u64 {
        self.memory_mb.saturating_mul(MIB)
    }
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            processes: Self::DEFAULT_PROCESSES,
            memory_mb: default_memory_mb(),
            shm_mb: Self::DEFAULT_SHM_MB,
        }
    }
}

/// A MiB in bytes.
const MIB: u64 = 1024 * 1024;

/// Half the machine's memory, at most [`SandboxLimits::MAX_DEFAULT_MEMORY_MB`] (and that when
/// the machine's memory cannot be read).
fn default_memory_mb() -> u64 {
    let half = nix::sys::sysinfo::sysinfo()
        .map(|info| info.ram_total() / MIB / 2)
        .unwrap_or(SandboxLimits::MAX_DEFAULT_MEMORY_MB);
    half.clamp(
        SandboxLimits::MIN_MEMORY_MB,
        SandboxLimits::MAX_DEFAULT_MEMORY_MB,
    )
}

/// Something wrong in the `sandbox:` section: the key, below `sandbox`, and what to write
/// instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsProblem {
    /// The key below `sandbox`, dotted (`env`, `limits.processes`).
    pub key: &'static str,
    /// What is wrong and what is expected.
    pub message: String,
}

impl SandboxSettings {
    /// The same settings with the sandbox turned off when `opt_out` is set (the `--no-sandbox`
    /// flag of a host).
    pub fn opted_out(mut self, opt_out: bool) -> Self {
        if opt_out {
            self.mode = SandboxMode::Off;
        }
        self
    }

    /// Everything wrong in the settings, each naming the key and what is expected.
    pub fn problems(&self) -> Vec<SettingsProblem> {
        let mut problems: Vec<SettingsProblem> = self
            .env
            .iter()
            .filter(|name| !is_variable_name(name))
            .map(|name| SettingsProblem {
                key: "env",
                message: format!(
                    "`sandbox.env` names `{name}`, which is not an environment variable name; \
                     use letters, digits and `_`, not starting with a digit (e.g. `NPM_TOKEN`)"
                ),
            })
            .collect();
        for socket in &self.unix_sockets {
            if SocketPath::parse(socket).is_none() {
                problems.push(SettingsProblem {
                    key: "unix_sockets",
                    message: format!(
                        "`sandbox.unix_sockets` names `{socket}`, which is not an absolute path; \
                         write it in full (`/run/docker.sock`) or from `~/` or \
                         `$XDG_RUNTIME_DIR/` (`$XDG_RUNTIME_DIR/podman/podman.sock`)"
                    ),
                });
            }
        }
        let limits = &self.limits;
        if !(1..=SandboxLimits::MAX_PROCESSES).contains(&limits.processes) {
            problems.push(SettingsProblem {
                key: "limits.processes",
                message: format!(
                    "`sandbox.limits.processes` is {}; give the processes and threads a command \
                     may have at once, from 1 to {} (e.g. {})",
                    limits.processes,
                    SandboxLimits::MAX_PROCESSES,
                    SandboxLimits::DEFAULT_PROCESSES
                ),
            });
        }
        if limits.memory_mb < SandboxLimits::MIN_MEMORY_MB
            || limits.memory_mb.checked_mul(MIB).is_none()
        {
            problems.push(SettingsProblem {
                key: "limits.memory_mb",
                message: format!(
                    "`sandbox.limits.memory_mb` is {}; give the MiB each process may allocate, at \
                     least {} (e.g. 4096)",
                    limits.memory_mb,
                    SandboxLimits::MIN_MEMORY_MB
                ),
            });
        }
        if limits.shm_mb == 0 || limits.shm_mb.checked_mul(MIB).is_none() {
            problems.push(SettingsProblem {
                key: "limits.shm_mb",
                message: format!(
                    "`sandbox.limits.shm_mb` is {}; give the size of the private /dev/shm in \
                     MiB, at least 1 (e.g. {})",
                    limits.shm_mb,
                    SandboxLimits::DEFAULT_SHM_MB
                ),
            });
        }
        problems
    }

    /// The paths of [`SandboxSettings::unix_sockets`], with `~/` and `$XDG_RUNTIME_DIR/`
    /// expanded by `variable` (which looks up `HOME` and `XDG_RUNTIME_DIR`). An error names an
    /// entry that is not a path, or whose variable is not set.
    pub fn unix_socket_paths(
        &self,
        variable: impl Fn(&str) -> Option<PathBuf>,
    ) -> Result<Vec<PathBuf>, String> {
        self.unix_sockets
            .iter()
            .map(|socket| {
                let parsed = SocketPath::parse(socket).ok_or_else(|| {
                    format!(
                        "`sandbox.unix_sockets` names `{socket}`, which is not an absolute path"
                    )
                })?;
                let (base, rest) = match parsed {
                    SocketPath::Absolute(path) => return Ok(PathBuf::from(path)),
                    SocketPath::Home(rest) => ("HOME", rest),
                    SocketPath::RuntimeDir(rest) => ("XDG_RUNTIME_DIR", rest),
                };
                let base = variable(base)
                    .filter(|dir| dir.is_absolute())
                    .ok_or_else(|| {
                        format!(
                            "`sandbox.unix_sockets` names `{socket}`, but {base} is not set to an \
                         absolute path here"
                        )
                    })?;
                Ok(base.join(rest))
            })
            .collect()
    }
}

/// An entry of `unix_sockets`, as written.
enum SocketPath<'a> {
    /// `/run/docker.sock`.
    Absolute(&'a str),
    /// `~/REST`.
    Home(&'a str),
    /// `$XDG_RUNTIME_DIR/REST`.
    RuntimeDir(&'a str),
}

impl<'a> SocketPath<'a> {
    fn parse(text: &'a str) -> Option<SocketPath<'a>> {
        if let Some(rest) = text.strip_prefix("~/") {
            Some(SocketPath::Home(rest))
        } else if let Some(rest) = text.strip_prefix("$XDG_RUNTIME_DIR/") {
            Some(SocketPath::RuntimeDir(rest))
        } else if text.starts_with('/') {
            Some(SocketPath::Absolute(text))
        } else {
            None
        }
    }
}

/// True for a portable environment variable name.
pub(crate) fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<SandboxSettings, serde_yaml_ng::Error> {
        serde_yaml_ng::from_str(yaml)
    }

    #[test]
    fn every_key_is_optional_and_the_default_is_workspace_write_without_network() {
        let settings = parse("{}").unwrap();
        assert_eq!(settings, SandboxSettings::default());
        assert_eq!(settings.mode, SandboxMode::WorkspaceWrite);
        assert!(!settings.network);
        let settings = parse("mode: read-only\nnetwork: true\nenv: [NPM_TOKEN]").unwrap();
        assert_eq!(settings.mode, SandboxMode::ReadOnly);
        assert!(settings.network);
        assert_eq!(settings.env, ["NPM_TOKEN"]);
        assert_eq!(parse("mode: off").unwrap().mode, SandboxMode::Off);
    }

    #[test]
    fn an_unknown_mode_names_the_modes_there_are() {
        let message = parse("mode: strict").unwrap_err().to_string();
        for mode in ["read-only", "workspace-write", "off"] {
            assert!(message.contains(mode), "{message}");
        }
    }

    #[test]
    fn env_names_must_be_variable_names_and_opting_out_turns_the_sandbox_off() {
        let settings = parse("env: [GOOD_1, _ok, 1BAD, 'A-B', '']").unwrap();
        let problems = settings.problems();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert_eq!(problems[0].key, "env");
        assert!(problems[0].message.contains("`1BAD`"));
        assert_eq!(settings.clone().opted_out(false).mode, settings.mode);
        assert_eq!(settings.opted_out(true).mode, SandboxMode::Off);
    }

    #[test]
    fn limits_have_defaults_and_a_wrong_one_names_its_key_and_what_is_expected() {
        let limits = parse("{}").unwrap().limits;
        assert_eq!(limits.processes, 1024);
        assert_eq!(limits.shm_mb, 256);
        assert!(
            (SandboxLimits::MIN_MEMORY_MB..=8192).contains(&limits.memory_mb),
            "{limits:?}"
        );
        let settings = parse("limits: {processes: 64, memory_mb: 512}").unwrap();
        assert_eq!(
            (settings.limits.processes, settings.limits.memory_mb),
            (64, 512)
        );
        assert_eq!(
            settings.limits.shm_mb, 256,
            "an omitted key keeps its default"
        );
        assert_eq!(settings.limits.memory_bytes(), 512 << 20);
        assert!(settings.problems().is_empty());

        let settings =
            parse("limits: {processes: 0, memory_mb: 8, shm_mb: 18446744073709551615}").unwrap();
        let problems = settings.problems();
        let keys: Vec<&str> = problems.iter().map(|problem| problem.key).collect();
        assert_eq!(
            keys,
            ["limits.processes", "limits.memory_mb", "limits.shm_mb"]
        );
        assert!(problems[0].message.contains("from 1 to"), "{problems:?}");
        assert!(problems[1].message.contains("at least 32"), "{problems:?}");
        let message = parse("limits: {processes: -1}").unwrap_err().to_string();
        assert!(message.contains("processes"), "{message}");
    }

    #[test]
    fn unix_sockets_are_absolute_or_from_home_or_the_runtime_folder() {
        let settings = parse(
            "unix_sockets: [/run/docker.sock, ~/.docker/run/docker.sock, \
             '$XDG_RUNTIME_DIR/podman/podman.sock', docker.sock]",
        )
        .unwrap();
        let problems = settings.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "unix_sockets");
        assert!(
            problems[0].message.contains("`docker.sock`"),
            "{problems:?}"
        );

        let settings = SandboxSettings {
            unix_sockets: settings.unix_sockets[..3].to_vec(),
            ..SandboxSettings::default()
        };
        let variables = |name: &str| match name {
            "HOME" => Some(PathBuf::from("/home/me")),
            "XDG_RUNTIME_DIR" => Some(PathBuf::from("/run/user/1000")),
            _ => None,
        };
        assert_eq!(
            settings.unix_socket_paths(variables).unwrap(),
            [
                PathBuf::from("/run/docker.sock"),
                PathBuf::from("/home/me/.docker/run/docker.sock"),
                PathBuf::from("/run/user/1000/podman/podman.sock"),
            ]
        );
        let message = settings
            .unix_socket_paths(|name| (name == "HOME").then(|| PathBuf::from("/home/me")))
            .unwrap_err();
        assert!(message.contains("XDG_RUNTIME_DIR is not set"), "{message}");
    }
}
