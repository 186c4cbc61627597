//! The language servers of the server's workspace.

use crate::ServerState;
use crate::error::ApiError;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use qilin_lsp::{LspOptions, LspWorkspace, ServerSandbox};
use qilin_protocol::lsp::LspStatusResponse;

/// `GET /api/lsp`: each language's server of the workspace — the ones its sessions started,
/// and for the others whether they are installed.
pub async fn status(State(state): State<ServerState>) -> Result<Json<LspStatusResponse>, ApiError> {
    let defaults = state.defaults();
    let workspace = &defaults.workspace;
    let servers = LspWorkspace::live(workspace).unwrap_or_else(|| {
        // None runs yet: they would run as the server's sessions run bash.
        let mut options = LspOptions::default();
        if defaults.no_sandbox {
            options.sandbox = ServerSandbox::Off;
        }
        std::sync::Arc::new(LspWorkspace::new(workspace, options))
    });
    servers.status().map(Json).map_err(|err| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "lsp_config",
            err.to_string(),
        )
    })
}
