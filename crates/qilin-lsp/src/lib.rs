//! Qilin's language servers and the `lsp` tool.
//!
//! A workspace's servers ([`LspWorkspace`]) are one per language — the known defaults
//! (`pyright-langserver` or `basedpyright-langserver`, `typescript-language-server`,
//! `rust-analyzer`, `gopls`, found on `PATH`) under the workspace's `.qilin/lsp.yaml`. Each
//! starts on the first request for its language, runs inside the sandbox `bash` uses (the
//! workspace read-only to it, its caches in a private temp folder, no network unless
//! `.qilin/lsp.yaml` gives it `network: true`; see [`ServerSandbox`]) with the workspace as its
//! folder, speaks JSON-RPC with `Content-Length` framing
//! on its stdin and stdout, and is restarted on the next request after a crash, with back-off.
//! Before each request the file is read from disk and sent (`didOpen`, then `didChange` when
//! it changed), so an answer never describes an older version of it.
//!
//! The sessions of one workspace share its servers ([`LspWorkspace::shared`]) through their
//! [`LspService`]; the servers are killed when the last of those is dropped. The service also
//! gives `write`, `edit` and `str_replace_editor` the diagnostics an edit changed
//! ([`LspService::before_edit`], [`EditBaseline::after_edit`]).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod config;
mod convert;
mod edits;
mod sandbox;
mod server;
mod tool;
mod uri;
mod workspace;

pub use config::{ConfigError, LSP_WORKSPACE_FILE, ServerSpec, known_servers, workspace_servers};
pub use edits::{EditBaseline, LspService, MAX_EDIT_DIAGNOSTICS};
pub use sandbox::{SERVER_VARIABLES, ServerSandbox};
pub use tool::{Lsp, LspArgs, render, render_edit_diagnostics, result_summary};
pub use uri::{path_to_uri, uri_to_path};
pub use workspace::{LspError, LspOptions, LspQuery, LspWorkspace, MAX_ITEMS};

use qilin_tool::{RegistryError, ToolRegistry};

/// Registers `lsp`.
pub fn register_tools(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry.register(Lsp)
}
