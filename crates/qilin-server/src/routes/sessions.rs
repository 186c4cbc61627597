//! Sessions: list, create, read, rename, delete; their snapshot; the server's own info and the
//! token-for-cookie trade.

use crate::api::{
    AuthRequest, CreateSession, ListSessions, OpenRequests, ServerInfo, SessionPath, SessionView,
    Snapshot, SnapshotQuery, UpdateSession,
};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::{ServerState, assets};
use axum::Json;
use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use qilin_store::{ParentFilter, SessionPage, SessionQuery};

/// The most characters of a title.
const MAX_TITLE: usize = 200;

/// `GET /api/sessions`: a page of sessions, newest activity first.
pub async fn list(
    State(state): State<ServerState>,
    ApiQuery(query): ApiQuery<ListSessions>,
) -> Result<Json<SessionPage>, ApiError> {
    let limit = query.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("`limit` is {limit}; give 1 to 500"),
        ));
    }
    let page = state
        .store()
        .list_sessions(&SessionQuery {
            workspace: query.workspace,
            title_contains: query.q.filter(|q| !q.is_empty()),
            after: query.after,
            limit: limit as usize,
            parent: match query.parent {
                Some(parent) => ParentFilter::ChildrenOf(parent),
                None => ParentFilter::TopLevel,
            },
        })
        .await?;
    Ok(Json(page))
}

/// `POST /api/sessions`: a new session, running here.
pub async fn create(
    State(state): State<ServerState>,
    ApiJson(request): ApiJson<CreateSession>,
) -> Result<(StatusCode, Json<SessionView>), ApiError> {
    if let Some(title) = &request.title {
        check_title(title)?;
    }
    let handle = state.create_session(&request, None).await?;
    let view = state.view(handle.id()).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `GET /api/sessions/{id}`: a session and where it stands.
pub async fn read(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<SessionView>, ApiError> {
    Ok(Json(state.view(&path.id).await?))
}

/// `PATCH /api/sessions/{id}`: renames a session.
pub async fn update(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiJson(update): ApiJson<UpdateSession>,
) -> Result<Json<SessionView>, ApiError> {
    check_title(&update.title)?;
    state
        .store()
        .rename_session(&path.id, update.title.trim())
        .await?;
    Ok(Json(state.view(&path.id).await?))
}

fn check_title(title: &str) -> Result<(), ApiError> {
    let length = title.trim().chars().count();
    if length == 0 || length > MAX_TITLE {
        return Err(ApiError::bad_request(
            "invalid_title",
            format!("a title has 1 to {MAX_TITLE} characters, not only spaces"),
        ));
    }
    Ok(())
}

/// `DELETE /api/sessions/{id}`: deletes a session with its events (its turn interrupted first
/// when it runs here).
pub async fn delete(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<StatusCode, ApiError> {
    state.host().delete(&path.id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/sessions/{id}/requests`: what waits for an answer.
pub async fn open_requests(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
) -> Result<Json<OpenRequests>, ApiError> {
    let requests = state.store().open_requests(&path.id).await?;
    Ok(Json(OpenRequests { requests }))
}

/// `GET /api/sessions/{id}/snapshot`: the call tree of the latest turns (or of the turns
/// before `before`), folded up to `headSeq`.
pub async fn snapshot(
    State(state): State<ServerState>,
    ApiPath(path): ApiPath<SessionPath>,
    ApiQuery(query): ApiQuery<SnapshotQuery>,
) -> Result<Json<Snapshot>, ApiError> {
    let wanted = query.turns.unwrap_or(20);
    if !(1..=200).contains(&wanted) {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("`turns` is {wanted}; give 1 to 200"),
        ));
    }
    if state.store().session(&path.id).await?.is_none() {
        return Err(ApiError::unknown_session(&path.id));
    }
    let before = query.before;
    let snapshot = state
        .host()
        .tree(&path.id, |folded| {
            let total = folded.tree.turns.len();
            let end = before.map_or(total, |before| (before as usize).min(total));
            let start = end.saturating_sub(wanted as usize);
            Snapshot {
                head_seq: folded.head_seq,
                total_turns: u32::try_from(total).unwrap_or(u32::MAX),
                first_turn: u32::try_from(start).unwrap_or(u32::MAX),
                turns: folded.tree.turns[start..end].to_vec(),
                active_turn: folded.active_turn(),
                compactions: folded.tree.compactions.clone(),
                preparing_arguments: folded.tree.preparing_arguments.clone(),
            }
        })
        .await?;
    Ok(Json(snapshot))
}

/// `GET /api/info`: what this server runs.
pub async fn info(State(state): State<ServerState>) -> Json<ServerInfo> {
    let defaults = state.defaults();
    Json(ServerInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        protocol_version: qilin_protocol::PROTOCOL_VERSION,
        workspace: defaults.workspace.display().to_string(),
        agent_file: defaults
            .agent_file
            .as_ref()
            .map(|file| file.display().to_string()),
        model: defaults.model.clone(),
        demo_session: state.demo_session(),
        web_client: assets::WEB_CLIENT_BUILT,
    })
}

/// `POST /api/auth`: trades the token (from the page URL's fragment) for the cookie.
pub async fn auth(
    State(state): State<ServerState>,
    ApiJson(request): ApiJson<AuthRequest>,
) -> Result<Response, ApiError> {
    let access = state.access();
    if !access.is_token(&request.token) {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "wrong_token",
            "the token is wrong; open the URL `qilin serve` printed",
        ));
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    let cookie = HeaderValue::from_str(&access.cookie())
        .map_err(|err| ApiError::internal(format!("the cookie cannot be set: {err}")))?;
    response.headers_mut().insert(SET_COOKIE, cookie);
    Ok(response)
}
