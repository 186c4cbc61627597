//! Qilin's sandbox for `bash` (and every shell and terminal the tools start).
//!
//! An agent chooses how confined its commands run ([`SandboxSettings`], the `sandbox:`
//! section of its file). The host gives each session a [`Sandbox`], which probes once what the
//! kernel supports and refuses a confined mode it cannot enforce; `bash` then asks it for
//! each command ([`Sandbox::command`]). A confined command is started through the sandbox
//! helper ([`run_helper`], run by `qilin sandbox-exec`), which confines itself with Landlock
//! and Linux namespaces before it runs the command; see the [`helper`] module.
//!
//! What a confined command can do:
//!
//! - **files**: read everything it could read anyway, except the folders it sees empty (the
//!   user's runtime folder, Qilin's with `qilin serve`'s token files, the X server's sockets);
//!   write only in the workspace (`workspace-write`) and the session's private temp folder
//!   (`TMPDIR`, owner-only), never in the protected set ([`Protection`]: `.git`, `.qilin`,
//!   `*.agent` files and the files agent files name), nor rename a folder above one;
//! - **devices**: a private, minimal `/dev` (its own pseudo-terminals, never the host's);
//! - **Unix sockets**: none bound outside the workspace when it starts, unless the agent names
//!   them (`unix_sockets`);
//! - **network**: none (a network namespace of its own with only `lo`), unless the agent sets
//!   `network: true`; then not the ports of Qilin's own servers;
//! - **limits**: processes and threads, memory per process and the size of `/dev/shm`
//!   ([`SandboxLimits`]);
//! - **environment**: the allow-list of [`ALLOWED_VARIABLES`] and the names the agent passes;
//! - **processes**: it and everything it starts (a `setsid` child, a daemon) end when the
//!   command ends or the host drops it, since they live in a PID namespace whose process 1 is
//!   the helper; no signal reaches a process outside it.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod environment;
pub mod helper;
mod host;
mod own_file;
mod probe;
mod protected;
mod request;
mod runtime_dir;
mod settings;
mod temp;

pub use environment::{ALLOWED_VARIABLES, command_environment};
pub use helper::{HELPER_FAILED, HelperError, HelperOutcome, helper_main, run_helper};
pub use host::{CommandIo, Sandbox, SandboxError, SandboxHelper, SandboxedCommand};
pub use own_file::{
    CONFIG_FILE_LIMIT, OwnFileError, SMALL_FILE_LIMIT, read_own_file, read_own_text,
};
pub use probe::{LandlockSupport, Support};
pub use protected::{
    AGENT_SUFFIX, GIT_NAME, ProtectedKind, Protection, QILIN_NAME, Scan, SkippedPath,
};
pub use request::UsageError;
pub use runtime_dir::{private_runtime_dir, token_file_name};
pub use settings::{SandboxLimits, SandboxMode, SandboxSettings, SettingsProblem};
pub use temp::remove_temp_folders;
