//! [`ApiError`]: every refusal the API gives, as a status and a JSON body naming what is wrong.

use aide::OperationOutput;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response};
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response as HttpResponse};
use qilin_agent::CompactionError;
use qilin_runtime::{
    AllowCallError, AllowError, CompactError, GoalError, HostError, RuntimeError, SubmitError,
};
use qilin_store::{RelayError, StoreError};
use qilin_tool::ResolveError;

pub use qilin_protocol::api::ErrorBody;

/// An error response: a status and an [`ErrorBody`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body (boxed, so results stay small).
    pub body: Box<ErrorBody>,
}

impl ApiError {
    /// An error with `status`, `code` and `message`.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: Box::new(ErrorBody {
                code: code.to_string(),
                message: message.into(),
                turn_id: None,
                resolved_by: None,
                owner: None,
            }),
        }
    }

    /// 400: the request is malformed or does not fit.
    pub fn bad_request(code: &str, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 404: no session has this id.
    pub fn unknown_session(id: &str) -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_session",
            format!("no session `{id}`; `GET /api/sessions` lists them"),
        )
    }

    /// 500: the server failed; the message says where.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// 409: another server process runs the session.
    pub fn owned_elsewhere(id: &str, owner: &str) -> Self {
        let mut error = ApiError::new(
            StatusCode::CONFLICT,
            "owned_elsewhere",
            format!("session `{id}` runs in another server process (`{owner}`); ask that process"),
        );
        error.body.owner = Some(owner.to_string());
        error
    }
}

impl From<HostError> for ApiError {
    fn from(err: HostError) -> Self {
        match err {
            HostError::UnknownSession(id) => ApiError::unknown_session(&id),
            HostError::OwnedElsewhere { session, owner }
            | HostError::NoRelay { session, owner } => ApiError::owned_elsewhere(&session, &owner),
            HostError::Relay(relay) => relay.into(),
            HostError::Resolve(refused) => refused.into(),
            HostError::Runtime(runtime) => runtime.into(),
            HostError::Store(store) => store.into(),
        }
    }
}

impl From<RelayError> for ApiError {
    fn from(err: RelayError) -> Self {
        match &err {
            RelayError::Failed(_) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "relay_failed",
                err.to_string(),
            ),
            RelayError::NotTaken { .. } | RelayError::Unfinished { .. } => ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "owner_unresponsive",
                err.to_string(),
            ),
        }
    }
}

impl From<ResolveError> for ApiError {
    fn from(err: ResolveError) -> Self {
        match err {
            ResolveError::Unknown(request_id) => ApiError::new(
                StatusCode::NOT_FOUND,
                "unknown_request",
                format!(
                    "the session has no request `{request_id}`; `GET …/requests` lists the open ones"
                ),
            ),
            ResolveError::Ended {
                request_id,
                ended: "cancelled",
                ..
            } => ApiError::new(
                StatusCode::GONE,
                "request_gone",
                format!(
                    "request `{request_id}` is no longer open: it was cancelled (the turn was \
                     interrupted, or the process running it ended)"
                ),
            ),
            ResolveError::Ended {
                request_id,
                resolved_by,
                ..
            } => {
                let mut error = ApiError::new(
                    StatusCode::CONFLICT,
                    "already_answered",
                    format!("request `{request_id}` was answered already, by {resolved_by}"),
                );
                error.body.resolved_by = Some(resolved_by);
                error
            }
            refused @ (ResolveError::InvalidAnswers { .. }
            | ResolveError::Mismatch { .. }
            | ResolveError::GrantMismatch { .. }) => {
                ApiError::bad_request("answer_does_not_fit", refused.to_string())
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> HttpResponse {
        let mut response = (self.status, Json(*self.body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"qilin\""),
            );
        }
        response
    }
}

impl OperationOutput for ApiError {
    type Inner = ErrorBody;

    fn operation_response(ctx: &mut GenContext, operation: &mut Operation) -> Option<Response> {
        Json::<ErrorBody>::operation_response(ctx, operation)
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match &err {
            StoreError::UnknownSession(id) => ApiError::unknown_session(id),
            StoreError::DuplicateSession(_) => {
                ApiError::new(StatusCode::CONFLICT, "duplicate_session", err.to_string())
            }
            StoreError::InvalidCursor(_) => {
                ApiError::bad_request("invalid_cursor", err.to_string())
            }
            StoreError::InvalidQuery(_) => ApiError::bad_request("invalid_query", err.to_string()),
            StoreError::Busy(_) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_busy",
                format!("{err}; nothing was changed, try again"),
            ),
            StoreError::Full(_) => ApiError::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "store_full",
                format!("{err}; nothing was changed"),
            ),
            StoreError::SeqConflict { .. } => {
                ApiError::new(StatusCode::CONFLICT, "seq_conflict", err.to_string())
            }
            StoreError::Corrupt { .. }
            | StoreError::InUse { .. }
            | StoreError::SchemaTooNew { .. }
            | StoreError::Config(_)
            | StoreError::Backend(_) => ApiError::internal(err.to_string()),
        }
    }
}

impl From<RuntimeError> for ApiError {
    fn from(err: RuntimeError) -> Self {
        match err {
            RuntimeError::Store(store) => store.into(),
            RuntimeError::UnknownSession(id) => ApiError::unknown_session(&id),
            RuntimeError::NotResumable { .. } | RuntimeError::AgentChanged { .. } => {
                ApiError::new(StatusCode::CONFLICT, "not_resumable", err.to_string())
            }
            RuntimeError::Mcp(qilin_mcp::McpError::Untrusted(_)) => ApiError::new(
                StatusCode::FORBIDDEN,
                "untrusted_mcp_servers",
                err.to_string(),
            ),
            RuntimeError::Workspace { .. }
            | RuntimeError::Agent(_)
            | RuntimeError::Prompt(_)
            | RuntimeError::Model(_)
            | RuntimeError::NoModel { .. }
            | RuntimeError::Sandbox(_)
            | RuntimeError::Mcp(_)
            | RuntimeError::Tools(_)
            | RuntimeError::CheckTarget(_) => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_session",
                err.to_string(),
            ),
            RuntimeError::Io { .. } => ApiError::internal(err.to_string()),
        }
    }
}

impl From<SubmitError> for ApiError {
    fn from(err: SubmitError) -> Self {
        match &err {
            SubmitError::EmptyPrompt => ApiError::bad_request("empty_prompt", err.to_string()),
            SubmitError::Busy { turn_id } => {
                let mut error =
                    ApiError::new(StatusCode::CONFLICT, "turn_running", err.to_string());
                error.body.turn_id = Some(turn_id.clone());
                error
            }
            SubmitError::AlreadySubmitted { .. } => {
                ApiError::new(StatusCode::CONFLICT, "already_submitted", err.to_string())
            }
            SubmitError::Compacting => {
                ApiError::new(StatusCode::CONFLICT, "compacting", err.to_string())
            }
            SubmitError::Broken(_) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "session_broken",
                err.to_string(),
            ),
        }
    }
}

impl From<CompactError> for ApiError {
    fn from(err: CompactError) -> Self {
        match &err {
            CompactError::Busy { turn_id } => {
                let mut error =
                    ApiError::new(StatusCode::CONFLICT, "turn_running", err.to_string());
                error.body.turn_id = Some(turn_id.clone());
                error
            }
            CompactError::Compacting => {
                ApiError::new(StatusCode::CONFLICT, "compacting", err.to_string())
            }
            CompactError::Failed(CompactionError::NothingToCompact) => {
                ApiError::new(StatusCode::CONFLICT, "nothing_to_compact", err.to_string())
            }
            CompactError::Failed(CompactionError::Interrupted) => {
                ApiError::new(StatusCode::CONFLICT, "interrupted", err.to_string())
            }
            CompactError::Failed(CompactionError::Model(_)) => {
                ApiError::new(StatusCode::BAD_GATEWAY, "model_failed", err.to_string())
            }
            CompactError::Broken(_) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "session_broken",
                err.to_string(),
            ),
        }
    }
}

impl From<GoalError> for ApiError {
    fn from(err: GoalError) -> Self {
        match &err {
            GoalError::NoGoal => ApiError::new(
                StatusCode::NOT_FOUND,
                "no_goal",
                "the session has no goal; `PUT …/goal` sets one",
            ),
            GoalError::Conflict(_) => {
                ApiError::new(StatusCode::CONFLICT, "goal_conflict", err.to_string())
            }
            GoalError::Invalid(_) => ApiError::bad_request("invalid_goal", err.to_string()),
            // Which checks exist is the session's state (its agent file and workspace).
            GoalError::UnknownCheck(_) => {
                ApiError::new(StatusCode::CONFLICT, "unknown_check", err.to_string())
            }
        }
    }
}

impl From<AllowCallError> for ApiError {
    fn from(err: AllowCallError) -> Self {
        match err {
            AllowCallError::Runtime(err) => err.into(),
            AllowCallError::Refused(refused) => match refused {
                AllowError::UnknownCall(_) => {
                    ApiError::new(StatusCode::NOT_FOUND, "unknown_call", refused.to_string())
                }
                AllowError::NotRefusedByReviewer(_) | AllowError::NoReviewer => ApiError::new(
                    StatusCode::CONFLICT,
                    "not_refused_by_reviewer",
                    refused.to_string(),
                ),
            },
        }
    }
}

/// Documents the error responses an operation may give, each with the [`ErrorBody`] schema.
macro_rules! errors {
    ($op:expr $(, $status:literal)* $(,)?) => {{
        let op = $op;
        $(
            let op = op.response_with::<$status, axum::Json<$crate::error::ErrorBody>, _>(|response| {
                response.description($crate::error::describe($status))
            });
        )*
        op
    }};
}
pub(crate) use errors;

/// What an error status means in this API, for the OpenAPI document.
pub(crate) fn describe(status: u16) -> &'static str {
    match status {
        400 => "The request is malformed or does not fit: the message says what is expected.",
        401 => "No token, or a wrong one: send `Authorization: Bearer TOKEN` or the cookie.",
        403 => {
            "Refused: a foreign `Host` or `Origin`, a path outside the workspace, a session's workspace, agent file or script outside the folders the server lets clients use, or MCP servers of a workspace's `.qilin/mcp.yaml` the user has not trusted."
        }
        404 => "No such session, request, goal or file.",
        409 => {
            "Conflicts with the session's state: a turn running, an answer given first, a session another process runs, a goal already open or not in a state the change applies to, a check the session does not declare."
        }
        410 => "The request ended without an answer (interrupted, or its process ended).",
        413 => "The body is larger than the server accepts.",
        415 => {
            "The body is not JSON (`Content-Type: application/json`), or the file is not of the kind asked for."
        }
        422 => {
            "Well-formed, but it cannot be done: an agent file, model or workspace that cannot be used, or a file too large, binary or not UTF-8 to show."
        }
        500 => "The server failed; the message says where.",
        502 => "The model failed or gave no usable answer; nothing was changed.",
        503 => "The store is busy, or the session cannot record events now: try again.",
        504 => "The process that runs the session did not answer in time.",
        507 => "The store is full: nothing was changed.",
        _ => "An error.",
    }
}
