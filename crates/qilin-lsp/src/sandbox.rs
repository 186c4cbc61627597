//! How a language server's process is started: inside the sandbox `bash` uses, with a policy
//! of its own — everything readable that the user can read (the workspace, the server's own
//! install, its libraries), nothing writable but a private temp folder (which also holds its
//! caches), no network unless `.qilin/lsp.yaml` gives the server `network: true` — or, when
//! the user turned the sandbox off, as a plain child process.

use qilin_sandbox::{
    CommandIo, Sandbox, SandboxError, SandboxHelper, SandboxMode, SandboxSettings,
};
use std::ffi::OsString;
use std::path::Path;

/// Whether a workspace's language servers run confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSandbox {
    /// Each server runs through this sandbox helper (`qilin sandbox-exec`), read-only.
    Confined(SandboxHelper),
    /// Servers run as plain child processes with the user's rights: the user turned the
    /// sandbox off (`sandbox: {mode: off}` in the agent file, or `--no-sandbox`), as `bash`
    /// then runs unconfined too. Their environment is still filtered.
    Off,
}

impl ServerSandbox {
    /// Whether servers run confined.
    pub fn is_confined(&self) -> bool {
        matches!(self, ServerSandbox::Confined(_))
    }
}

/// Variables a server gets from Qilin's environment beyond the sandbox's own allow-list: where
/// toolchains and interpreters are found. Secrets stay out.
pub const SERVER_VARIABLES: &[&str] = &[
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_HOME",
    "GOPATH",
    "GOROOT",
    "GOTOOLCHAIN",
    "NODE_PATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYTHONPATH",
    "PYTHONHOME",
    "JAVA_HOME",
];

/// The folder under the server's private temp folder that holds its caches
/// (`XDG_CACHE_HOME`).
const CACHE_FOLDER: &str = "cache";

/// The folder under the server's private temp folder where Cargo builds for it
/// (`CARGO_TARGET_DIR`), since the workspace's own `target` is read-only to it.
const CARGO_TARGET_FOLDER: &str = "cargo-target";

/// A server's process ready to spawn, and what must live as long as it does.
pub(crate) struct ServerLaunch {
    /// The process: stdin is `input`; the caller sets stdout and stderr.
    pub command: tokio::process::Command,
    /// What the caller writes to the server's stdin; for a confined server also its lifeline
    /// (dropping it ends the server and everything it started).
    pub input: std::io::PipeWriter,
    /// The sandbox: its private temp folder is removed when it is dropped.
    pub sandbox: Sandbox,
    /// Whether it runs confined.
    pub confined: bool,
}

/// Prepares `program args` to run in `root` as `sandbox` says, with `network` (the server's
/// `network:` key) and `search_path` as its `PATH` when given. Blocks while the sandbox's
/// probe runs (a few milliseconds). The error says why in a sentence.
pub(crate) fn launch(
    sandbox: &ServerSandbox,
    program: &Path,
    args: &[String],
    root: &Path,
    network: bool,
    search_path: Option<&OsString>,
) -> Result<ServerLaunch, String> {
    let (settings, helper) = match sandbox {
        ServerSandbox::Confined(helper) => (
            SandboxSettings {
                mode: SandboxMode::ReadOnly,
                network,
                env: SERVER_VARIABLES.iter().map(|s| s.to_string()).collect(),
                ..SandboxSettings::default()
            },
            helper.clone(),
        ),
        ServerSandbox::Off => (
            SandboxSettings {
                mode: SandboxMode::Off,
                network: true,
                env: SERVER_VARIABLES.iter().map(|s| s.to_string()).collect(),
                ..SandboxSettings::default()
            },
            // Never started: an unconfined command without a terminal needs no helper.
            SandboxHelper::new("qilin", ["sandbox-exec"]),
        ),
    };
    let sandbox = Sandbox::start(settings, helper).map_err(|err| match err {
        SandboxError::Unsupported { missing, .. } => format!(
            "language servers run only inside the sandbox, which this machine cannot provide: \
             {}. To run them (and bash) without a sandbox, set `sandbox: {{mode: off}}` in the \
             agent file",
            missing.join("; ")
        ),
        other => format!("its sandbox could not be set up: {other}"),
    })?;
    let temp = sandbox.temp_dir().to_path_buf();
    let cache = temp.join(CACHE_FOLDER);
    std::fs::create_dir_all(&cache).map_err(|err| {
        format!(
            "its cache folder {} could not be created: {err}",
            cache.display()
        )
    })?;
    let mut program_and_args: Vec<OsString> = vec![program.as_os_str().to_owned()];
    program_and_args.extend(args.iter().map(OsString::from));
    let prepared = sandbox
        .program(program_and_args, root, CommandIo::Input)
        .map_err(|err| format!("its command could not be prepared: {err}"))?;
    let input = prepared
        .input
        .ok_or_else(|| "the sandbox gave no pipe for its input".to_string())?;
    let mut command = prepared.command;
    command
        .env("XDG_CACHE_HOME", &cache)
        .env("CARGO_TARGET_DIR", temp.join(CARGO_TARGET_FOLDER));
    if let Some(path) = search_path {
        command.env("PATH", path);
    }
    Ok(ServerLaunch {
        command: tokio::process::Command::from(command),
        input,
        confined: sandbox.settings().mode != SandboxMode::Off,
        sandbox,
    })
}
