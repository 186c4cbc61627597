//! A session's goal: read it, set it, pause, resume (raising its budget) and clear it. Reading
//! folds the session's log; every change runs where the session runs, like a turn.

use crate::ServerState;
use crate::api::SessionPath;
use crate::commands::{self, Command};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use axum::Json;
use axum::extract::State;
use qilin_protocol::goals::{GoalGetOutput, GoalRecord, ResumeGoal, SetGoal};

fn decode(value: serde_json::Value) -> Result<GoalRecord, ApiError> {
    serde_json::from_value(value)
        .map_err(|err| ApiError::internal(format!("the command's answer is unreadable: {err}")))
}

/// `GET /api/sessions/{id}/goal`: the session's latest goal, null when it never had one.
pub async fn read(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<GoalGetOutput>, ApiError> {
    Ok(Json(GoalGetOutput {
        goal: state.goal(&path.id).await?,
    }))
}

/// `PUT /api/sessions/{id}/goal`: sets a goal (replacing a settled one); an idle session
/// starts working on it at once.
pub async fn set(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiJson(goal): ApiJson<SetGoal>,
) -> Result<Json<GoalRecord>, ApiError> {
    let value = commands::run(&state, &path.id, Command::SetGoal(goal)).await?;
    Ok(Json(decode(value)?))
}

/// `DELETE /api/sessions/{id}/goal`: clears the goal; its running turn is interrupted.
pub async fn clear(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<GoalRecord>, ApiError> {
    let value = commands::run(&state, &path.id, Command::ClearGoal).await?;
    Ok(Json(decode(value)?))
}

/// `POST /api/sessions/{id}/goal/pause`: pauses the active goal; its running turn is
/// interrupted and none follows until it is resumed.
pub async fn pause(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<GoalRecord>, ApiError> {
    let value = commands::run(&state, &path.id, Command::PauseGoal).await?;
    Ok(Json(decode(value)?))
}

/// `POST /api/sessions/{id}/goal/resume`: resumes a paused or budget-limited goal, with the
/// bounds given replacing its budget's.
pub async fn resume(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiJson(resume): ApiJson<ResumeGoal>,
) -> Result<Json<GoalRecord>, ApiError> {
    let value = commands::run(&state, &path.id, Command::ResumeGoal(resume)).await?;
    Ok(Json(decode(value)?))
}
