//! A session's loops: start one, list them, stop one. Starting and stopping run where the
//! session runs, like a turn; listing folds the session's log when it runs nowhere.

use crate::ServerState;
use crate::api::{LoopPath, SessionPath};
use crate::commands::{self, Command};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use qilin_protocol::loops::{LoopRecord, StartLoop};

fn decode(value: serde_json::Value) -> Result<LoopRecord, ApiError> {
    serde_json::from_value(value)
        .map_err(|err| ApiError::internal(format!("the command's answer is unreadable: {err}")))
}

/// `POST /api/sessions/{id}/loops`: starts a loop; it runs in the background.
pub async fn start(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiJson(start): ApiJson<StartLoop>,
) -> Result<(StatusCode, Json<LoopRecord>), ApiError> {
    let value = commands::run(&state, &path.id, Command::StartLoop(start)).await?;
    Ok((StatusCode::CREATED, Json(decode(value)?)))
}

/// `GET /api/sessions/{id}/loops`: the session's loops, oldest first.
pub async fn list(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<Vec<LoopRecord>>, ApiError> {
    Ok(Json(state.loops(&path.id).await?))
}

/// `POST /api/sessions/{id}/loops/{loopId}/stop`: stops a loop; its running iteration is
/// interrupted. Answers once the loop recorded its end.
pub async fn stop(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<LoopPath>,
) -> Result<Json<LoopRecord>, ApiError> {
    let command = Command::StopLoop {
        loop_id: path.loop_id,
    };
    let value = commands::run(&state, &path.id, command).await?;
    Ok(Json(decode(value)?))
}
