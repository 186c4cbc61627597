//! The `sandbox:` section of an agent file: how confined its `bash` commands run.

use serde::{Deserialize, Serialize};
use std::fmt;

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

/// An agent's sandbox settings (`sandbox: {mode, network, env}`), every key optional.
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

    /// The names under `env` that are not environment variable names (letters, digits and
    /// `_`, not starting with a digit), each with the reason.
    pub fn invalid_env_names(&self) -> Vec<String> {
        self.env
            .iter()
            .filter(|name| !is_variable_name(name))
            .map(|name| {
                format!(
                    "`sandbox.env` names `{name}`, which is not an environment variable name; \
                     use letters, digits and `_`, not starting with a digit (e.g. `NPM_TOKEN`)"
                )
            })
            .collect()
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
        let problems = settings.invalid_env_names();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("`1BAD`"));
        assert_eq!(settings.clone().opted_out(false).mode, settings.mode);
        assert_eq!(settings.opted_out(true).mode, SandboxMode::Off);
    }
}
