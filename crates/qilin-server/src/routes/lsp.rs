//! The language servers of the server's workspace.

use crate::ServerState;
use crate::error::ApiError;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use qilin_lsp::{LspOptions, LspWorkspace};
use qilin_protocol::lsp::LspStatusResponse;

/// `GET /api/lsp`: each language's server of the workspace — the ones its sessions started,
/// and for the others whether they are installed.
pub async fn status(State(state): State<ServerState>) -> Result<Json<LspStatusResponse>, ApiError> {
    let workspace = &state.defaults().workspace;
    let servers = LspWorkspace::live(workspace).unwrap_or_else(|| {
        std::sync::Arc::new(LspWorkspace::new(workspace, LspOptions::default()))
    });
    servers.status().map(Json).map_err(|err| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "lsp_config",
            err.to_string(),
        )
    })
}
