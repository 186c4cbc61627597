//! Scheduled tasks: a session's schedules (list, create, delete) and every schedule of the
//! store. Schedules are rows in the store; the server's scheduler fires them.

use crate::ServerState;
use crate::api::{SchedulePath, SessionPath};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use qilin_protocol::schedules::{CreateSchedule, ScheduleListOutput, ScheduleRecord};
use qilin_runtime::schedule_service;
use qilin_schedules::{ScheduleService, created_event, deleted_event};
use qilin_store::SessionInfo;

/// Session `id`, or 404.
async fn known_session(state: &ServerState, id: &str) -> Result<SessionInfo, ApiError> {
    match state.store().session(id).await? {
        Some(info) => Ok(info),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_session",
            format!("no session `{id}`"),
        )),
    }
}

/// The schedules of `session`, as its tools reach them.
fn service(state: &ServerState, session: &SessionInfo) -> ScheduleService {
    schedule_service(
        std::sync::Arc::clone(state.store()),
        &session.id,
        std::path::Path::new(&session.workspace),
    )
}

/// `GET /api/sessions/{id}/schedules`: the session's schedules, newest first.
pub async fn list(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<ScheduleListOutput>, ApiError> {
    known_session(&state, &path.id).await?;
    Ok(Json(ScheduleListOutput {
        schedules: state.store().list_schedules(Some(&path.id)).await?,
    }))
}

/// `GET /api/schedules`: every schedule of the store, newest first.
pub async fn list_all(
    State(state): State<ServerState>,
) -> Result<Json<ScheduleListOutput>, ApiError> {
    Ok(Json(ScheduleListOutput {
        schedules: state.store().list_schedules(None).await?,
    }))
}

/// `POST /api/sessions/{id}/schedules`: a new schedule of the session (422 for one it cannot
/// honour, saying what is wrong).
pub async fn create(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiJson(request): ApiJson<CreateSchedule>,
) -> Result<(StatusCode, Json<ScheduleRecord>), ApiError> {
    let session = known_session(&state, &path.id).await?;
    let service = service(&state, &session);
    let schedule = service.create(&request).await.map_err(|err| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_schedule",
            err.message,
        )
    })?;
    state
        .host()
        .record_schedule_event(&path.id, created_event(&schedule))
        .await;
    Ok((StatusCode::CREATED, Json(schedule)))
}

/// `DELETE /api/sessions/{id}/schedules/{scheduleId}`: the schedule fires no more.
pub async fn delete(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SchedulePath>,
) -> Result<Json<ScheduleRecord>, ApiError> {
    let session = known_session(&state, &path.id).await?;
    let schedule = service(&state, &session)
        .delete(&path.schedule_id)
        .await
        .map_err(|err| ApiError::new(StatusCode::NOT_FOUND, "unknown_schedule", err.message))?;
    state
        .host()
        .record_schedule_event(&path.id, deleted_event(&schedule))
        .await;
    Ok(Json(schedule))
}
