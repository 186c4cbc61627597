//! Scheduled tasks: a session's schedules (list, create, delete) and every schedule of the
//! store. Schedules are rows in the store; the server's scheduler fires them.

use crate::ServerState;
use crate::api::{SchedulePath, SessionPath};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use qilin_protocol::EventBody;
use qilin_protocol::schedules::{
    CreateSchedule, ScheduleCreatedEvent, ScheduleDeletedEvent, ScheduleListOutput, ScheduleRecord,
};
use qilin_schedules::ScheduleService;

/// 404 unless session `id` exists.
async fn known_session(state: &ServerState, id: &str) -> Result<(), ApiError> {
    match state.store().session(id).await? {
        Some(_) => Ok(()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_session",
            format!("no session `{id}`"),
        )),
    }
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
    known_session(&state, &path.id).await?;
    let service = ScheduleService::new(std::sync::Arc::clone(state.store()), &path.id);
    let schedule = service.create(&request).await.map_err(|err| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_schedule",
            err.message,
        )
    })?;
    let body = EventBody::ScheduleCreated(ScheduleCreatedEvent {
        schedule: schedule.clone(),
    });
    state.host().record_schedule_event(&path.id, body).await;
    Ok((StatusCode::CREATED, Json(schedule)))
}

/// `DELETE /api/sessions/{id}/schedules/{scheduleId}`: the schedule fires no more.
pub async fn delete(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SchedulePath>,
) -> Result<Json<ScheduleRecord>, ApiError> {
    known_session(&state, &path.id).await?;
    let service = ScheduleService::new(std::sync::Arc::clone(state.store()), &path.id);
    let schedule = service
        .delete(&path.schedule_id)
        .await
        .map_err(|err| ApiError::new(StatusCode::NOT_FOUND, "unknown_schedule", err.message))?;
    let body = EventBody::ScheduleDeleted(ScheduleDeletedEvent {
        schedule_id: schedule.id.clone(),
    });
    state.host().record_schedule_event(&path.id, body).await;
    Ok(Json(schedule))
}
