//! Turns, interrupts, compactions and answers: the commands, each run where the session runs.

use crate::ServerState;
use crate::api::{
    Interrupted, RequestAnswer, RequestPath, RequestResolved, SessionPath, StartTurn, TurnAccepted,
};
use crate::commands::{self, Command};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use qilin_protocol::ContextCompactedEvent;
use serde::de::DeserializeOwned;

fn decode<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    serde_json::from_value(value)
        .map_err(|err| ApiError::internal(format!("the command's answer is unreadable: {err}")))
}

/// `POST /api/sessions/{id}/turns`: starts a turn, which runs to its end whether or not any
/// client watches. 202 once started (or when its `clientTurnId` started one already).
pub async fn start(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiJson(start): ApiJson<StartTurn>,
) -> Result<(StatusCode, Json<TurnAccepted>), ApiError> {
    let value = commands::run(&state, &path.id, Command::StartTurn(start)).await?;
    Ok((StatusCode::ACCEPTED, Json(decode(value)?)))
}

/// `POST /api/sessions/{id}/interrupt`: interrupts the running turn; its calls end
/// `interrupted` and its open requests `cancelled`.
pub async fn interrupt(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<Interrupted>, ApiError> {
    let value = commands::run(&state, &path.id, Command::Interrupt).await?;
    Ok(Json(decode(value)?))
}

/// `POST /api/sessions/{id}/compact`: the model summarises the conversation so far, and the
/// summary (`context.compacted`, in the log before this answers) stands for it from then on.
/// 200 with the summary and the request's size before and after; 409 while a turn runs.
pub async fn compact(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<ContextCompactedEvent>, ApiError> {
    let value = commands::run(&state, &path.id, Command::Compact).await?;
    Ok(Json(decode(value)?))
}

/// `POST /api/sessions/{id}/requests/{requestId}`: answers a request. The first answer wins.
pub async fn answer(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<RequestPath>,
    ApiJson(answer): ApiJson<RequestAnswer>,
) -> Result<Json<RequestResolved>, ApiError> {
    let command = Command::Answer {
        request_id: path.request_id,
        answer,
    };
    let value = commands::run(&state, &path.id, command).await?;
    Ok(Json(decode(value)?))
}
