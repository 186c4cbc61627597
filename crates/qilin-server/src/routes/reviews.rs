//! Auto review: a session's recent refusals by its reviewer model, and a person allowing one
//! of them. Reading folds the session's stored log; allowing runs where the session runs,
//! like a turn.

use crate::ServerState;
use crate::api::{ReviewPath, SessionPath};
use crate::commands::{self, Command};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use qilin_protocol::review::{AllowCall, ReviewGrant, ReviewList};

/// How many events one read of the store takes.
const PAGE: usize = 10_000;

/// `GET /api/sessions/{id}/reviews`: the calls the reviewer refused, newest first.
pub async fn list(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<ReviewList>, ApiError> {
    if state.store().session(&path.id).await?.is_none() {
        return Err(ApiError::unknown_session(&path.id));
    }
    if let Some(handle) = state.host().hosted(&path.id) {
        handle.flush().await?;
    }
    let mut events = Vec::new();
    loop {
        let after = events
            .last()
            .map_or(0, |event: &qilin_protocol::Event| event.seq);
        let page = state.store().read(&path.id, after, PAGE).await?;
        let full = page.len() == PAGE;
        events.extend(page);
        if !full {
            break;
        }
    }
    Ok(Json(ReviewList {
        reviews: qilin_runtime::review_entries(&events),
    }))
}

/// `POST /api/sessions/{id}/reviews/{callId}/allow`: a person allows a call the reviewer
/// refused; with `retry` (the default) a turn asks the model to run it again.
pub async fn allow(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<ReviewPath>,
    ApiJson(body): ApiJson<AllowCall>,
) -> Result<(StatusCode, Json<ReviewGrant>), ApiError> {
    let value = commands::run(
        &state,
        &path.id,
        Command::AllowCall {
            call_id: path.call_id,
            retry: body.retry.unwrap_or(true),
        },
    )
    .await?;
    let grant = serde_json::from_value(value)
        .map_err(|err| ApiError::internal(format!("the command's answer is unreadable: {err}")))?;
    Ok((StatusCode::CREATED, Json(grant)))
}
