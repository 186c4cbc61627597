//! What changes a session: start a turn, interrupt it, answer a request, compact it. A command runs where
//! the session runs: here (resumed here first if it ran nowhere), or — relayed through the
//! store's database — in the process holding the session's lease.

use crate::ServerState;
use crate::api::{
    Interrupted, MAX_CLIENT_ID, RequestAnswer, RequestResolved, StartTurn, TurnAccepted,
};
use crate::error::{ApiError, ErrorBody};
use crate::manager::{Owner, owned_elsewhere};
use crate::trees::find_request;
use axum::http::StatusCode;
use qilin_protocol::RequestResolution;
use qilin_runtime::{SessionHandle, SubmitError};
use qilin_tool::{RequestReply, ResolveError};
use serde::{Deserialize, Serialize};

/// A command for a session.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Start a turn.
    StartTurn(StartTurn),
    /// Interrupt the running turn (or compaction).
    Interrupt,
    /// Summarise the conversation so far (between turns).
    Compact,
    /// Answer a request.
    Answer {
        /// The request.
        request_id: String,
        /// The answer.
        answer: RequestAnswer,
    },
}

/// What a command gave: the body of a success, or an error.
pub type Outcome = Result<serde_json::Value, ApiError>;

/// The outcome as it travels between processes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Relayed {
    /// The HTTP status.
    pub status: u16,
    /// The body: the success's, or an [`ErrorBody`].
    pub body: serde_json::Value,
}

impl Relayed {
    /// An outcome, to send back.
    pub fn of(outcome: Outcome) -> Self {
        match outcome {
            Ok(body) => Relayed { status: 200, body },
            Err(err) => Relayed {
                status: err.status.as_u16(),
                body: serde_json::to_value(err.body).unwrap_or_default(),
            },
        }
    }

    /// The outcome it carries.
    pub fn outcome(self) -> Outcome {
        if self.status == 200 {
            return Ok(self.body);
        }
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_GATEWAY);
        match serde_json::from_value::<ErrorBody>(self.body) {
            Ok(body) => Err(ApiError {
                status,
                body: Box::new(body),
            }),
            Err(err) => Err(ApiError::internal(format!(
                "the owning process answered with an unreadable error: {err}"
            ))),
        }
    }
}

/// Runs `command` on session `id` wherever it runs.
pub async fn run(state: &ServerState, id: &str, command: Command) -> Outcome {
    check(&command)?;
    match state.sessions().open(id).await? {
        Owner::Here(handle) => execute(state, &handle, command).await,
        Owner::Elsewhere(owner) => match state.relay() {
            Some(relay) => relay.forward(&owner, id, &command).await,
            None => Err(owned_elsewhere(id, &owner)),
        },
    }
}

/// Runs `command` on session `id` here (resuming it here if it runs nowhere), never passing
/// it on: what a process does with a command another process relayed to it.
pub async fn run_here(state: &ServerState, id: &str, command: Command) -> Outcome {
    check(&command)?;
    match state.sessions().open(id).await? {
        Owner::Here(handle) => execute(state, &handle, command).await,
        Owner::Elsewhere(owner) => Err(owned_elsewhere(id, &owner)),
    }
}

/// Refuses a command whose parts are malformed before it goes anywhere.
fn check(command: &Command) -> Result<(), ApiError> {
    let client_id = match command {
        Command::StartTurn(start) => start.client_turn_id.as_deref(),
        Command::Answer { answer, .. } => answer.client_id(),
        Command::Interrupt | Command::Compact => None,
    };
    if let Some(client_id) = client_id
        && (client_id.is_empty()
            || client_id.chars().count() > MAX_CLIENT_ID
            || client_id.chars().any(char::is_control))
    {
        return Err(ApiError::bad_request(
            "invalid_client_id",
            format!(
                "a client's id has 1 to {MAX_CLIENT_ID} characters, none of them control characters"
            ),
        ));
    }
    Ok(())
}

/// Runs `command` on a session hosted here.
pub async fn execute(state: &ServerState, handle: &SessionHandle, command: Command) -> Outcome {
    let value = |value: Result<serde_json::Value, serde_json::Error>| {
        value.map_err(|err| ApiError::internal(format!("the answer cannot be written: {err}")))
    };
    match command {
        Command::StartTurn(start) => {
            let client_turn_id = start.client_turn_id.clone();
            let accepted = match handle.submit(&start.prompt, client_turn_id.clone()) {
                Ok(turn) => TurnAccepted {
                    turn_id: turn.turn_id().to_string(),
                    client_turn_id,
                    repeated: false,
                },
                Err(SubmitError::AlreadySubmitted { turn_id, .. }) => TurnAccepted {
                    turn_id,
                    client_turn_id,
                    repeated: true,
                },
                Err(err) => return Err(err.into()),
            };
            value(serde_json::to_value(accepted))
        }
        Command::Interrupt => value(serde_json::to_value(Interrupted {
            interrupted: handle.interrupt(),
        })),
        Command::Compact => {
            let compacted = handle.compact().await?;
            value(serde_json::to_value(compacted))
        }
        Command::Answer { request_id, answer } => {
            let resolved = resolve(state, handle, &request_id, answer).await?;
            value(serde_json::to_value(resolved))
        }
    }
}

/// Answers request `request_id` of a hosted session.
async fn resolve(
    state: &ServerState,
    handle: &SessionHandle,
    request_id: &str,
    answer: RequestAnswer,
) -> Result<RequestResolved, ApiError> {
    let resolved_by = match answer.client_id() {
        Some(client) => format!("web:{client}"),
        None => "web".to_string(),
    };
    let (reply, resolution) = match answer {
        RequestAnswer::Approve { .. } => (RequestReply::Approve, RequestResolution::Approved),
        RequestAnswer::ApproveForSession { grant, .. } => (
            RequestReply::ApproveForSession(grant.clone()),
            RequestResolution::ApprovedForSession { grant },
        ),
        RequestAnswer::Deny { reason, .. } => (
            RequestReply::Deny {
                reason: reason.clone(),
            },
            RequestResolution::Denied { reason },
        ),
        RequestAnswer::Answer { answers, .. } => (
            RequestReply::Answer(answers.clone()),
            RequestResolution::Answered { answers },
        ),
        RequestAnswer::Dismiss { .. } => (RequestReply::Dismiss, RequestResolution::Dismissed),
    };
    match handle.resolve(request_id, reply, &resolved_by) {
        Ok(()) => Ok(RequestResolved {
            request_id: request_id.to_string(),
            resolution,
            resolved_by,
        }),
        Err(ResolveError::Ended {
            ended: "cancelled", ..
        }) => Err(gone(request_id)),
        Err(ResolveError::Ended { resolved_by, .. }) => Err(answered(request_id, &resolved_by)),
        Err(ResolveError::Unknown(_)) => {
            // Not open in this process: look at how the log says it ended.
            handle.flush().await?;
            let request = state
                .trees()
                .current(state.store().as_ref(), handle.id(), |folded| {
                    find_request(&folded.tree, request_id).cloned()
                })
                .await?;
            match request {
                None => Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    "unknown_request",
                    format!(
                        "session `{}` has no request `{request_id}`; `GET …/requests` lists the open ones",
                        handle.id()
                    ),
                )),
                Some(request) => match (&request.resolution, &request.resolved_by) {
                    (Some(RequestResolution::Cancelled) | None, _) => Err(gone(request_id)),
                    (Some(_), by) => Err(answered(request_id, by.as_deref().unwrap_or("someone"))),
                },
            }
        }
        Err(
            err @ (ResolveError::InvalidAnswers { .. }
            | ResolveError::Mismatch { .. }
            | ResolveError::GrantMismatch { .. }),
        ) => Err(ApiError::bad_request(
            "answer_does_not_fit",
            err.to_string(),
        )),
    }
}

/// 410: the request ended without an answer.
fn gone(request_id: &str) -> ApiError {
    ApiError::new(
        StatusCode::GONE,
        "request_gone",
        format!(
            "request `{request_id}` is no longer open: it was cancelled (the turn was interrupted, \
             or the process running it ended)"
        ),
    )
}

/// 409: someone answered first.
fn answered(request_id: &str, resolved_by: &str) -> ApiError {
    let mut error = ApiError::new(
        StatusCode::CONFLICT,
        "already_answered",
        format!("request `{request_id}` was answered already, by {resolved_by}"),
    );
    error.body.resolved_by = Some(resolved_by.to_string());
    error
}
