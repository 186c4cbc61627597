//! What changes a session: start a turn, interrupt it, answer a request, compact it, set or
//! change its goal, allow a call its reviewer refused. A command
//! runs where the session runs: here (resumed here first if it ran nowhere), or — relayed through
//! the store the processes share — in the process holding the session's lease.

use crate::ServerState;
use crate::api::{
    Interrupted, MAX_CLIENT_ID, RequestAnswer, RequestResolved, StartTurn, TurnAccepted,
};
use crate::error::{ApiError, ErrorBody};
use axum::http::StatusCode;
use qilin_protocol::goals::{GoalBudget, ResumeGoal, SetGoal};
use qilin_protocol::loops::StartLoop;
use qilin_runtime::{NewGoal, Placement, SessionHandle, SubmitError};
use qilin_tool::RequestReply;
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
    /// Set the session's goal.
    SetGoal(SetGoal),
    /// Pause the goal.
    PauseGoal,
    /// Resume the goal, raising its budget.
    ResumeGoal(ResumeGoal),
    /// Clear the goal.
    ClearGoal,
    /// Start a loop.
    StartLoop(StartLoop),
    /// Stop a loop.
    StopLoop {
        /// The loop's id.
        loop_id: String,
    },
    /// Allow a call the reviewer refused.
    AllowCall {
        /// The refused call.
        call_id: String,
        /// Start a turn asking the model to run it again.
        retry: bool,
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

    /// The outcome as the relay carries it: JSON.
    pub fn to_text(&self) -> String {
        // A status and a JSON value always serialise; the fallback is never empty, as the
        // relay requires.
        serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"status":500,"body":{"code":"internal","message":"the outcome cannot be written"}}"#
                .to_string()
        })
    }

    /// The outcome a relayed `text` carries.
    pub fn from_text(text: &str) -> Outcome {
        serde_json::from_str::<Relayed>(text)
            .map_err(|err| {
                ApiError::internal(format!(
                    "the owning process answered with an unreadable outcome: {err}"
                ))
            })?
            .outcome()
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
    match state.host().open(id).await? {
        Placement::Here(handle) => execute(state, &handle, command).await,
        Placement::Elsewhere(owner) => {
            let text = serde_json::to_string(&command).map_err(|err| {
                ApiError::internal(format!("the command cannot be written: {err}"))
            })?;
            let outcome = state.host().forward(&owner, id, &text).await?;
            Relayed::from_text(&outcome)
        }
    }
}

/// Runs the command `text` another process relayed for session `id` here (resuming the session
/// here if it runs nowhere), never passing it on.
pub async fn run_relayed(state: &ServerState, id: &str, text: &str) -> Outcome {
    let command = serde_json::from_str::<Command>(text).map_err(|err| {
        ApiError::bad_request(
            "unreadable_command",
            format!("the relayed command is unreadable: {err}"),
        )
    })?;
    check(&command)?;
    match state.host().open(id).await? {
        Placement::Here(handle) => execute(state, &handle, command).await,
        Placement::Elsewhere(owner) => Err(ApiError::owned_elsewhere(id, &owner)),
    }
}

/// Refuses a command whose parts are malformed before it goes anywhere.
fn check(command: &Command) -> Result<(), ApiError> {
    let client_id = match command {
        Command::StartTurn(start) => start.client_turn_id.as_deref(),
        Command::Answer { answer, .. } => answer.client_id(),
        Command::Interrupt
        | Command::Compact
        | Command::SetGoal(_)
        | Command::PauseGoal
        | Command::ResumeGoal(_)
        | Command::ClearGoal
        | Command::StartLoop(_)
        | Command::StopLoop { .. }
        | Command::AllowCall { .. } => None,
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
        Command::SetGoal(goal) => {
            let created = handle.set_goal(NewGoal {
                objective: goal.objective,
                budget: GoalBudget {
                    tokens: goal.token_budget,
                    seconds: goal.time_budget,
                    turns: goal.max_turns,
                },
                checks: goal.checks.unwrap_or_default(),
            })?;
            value(serde_json::to_value(created))
        }
        Command::PauseGoal => value(serde_json::to_value(handle.pause_goal()?)),
        Command::ResumeGoal(resume) => {
            value(serde_json::to_value(handle.resume_goal(GoalBudget {
                tokens: resume.token_budget,
                seconds: resume.time_budget,
                turns: resume.max_turns,
            })?))
        }
        Command::ClearGoal => value(serde_json::to_value(handle.clear_goal()?)),
        Command::StartLoop(start) => {
            let started = handle.start_loop(start).map_err(loop_error)?;
            value(serde_json::to_value(started))
        }
        Command::StopLoop { loop_id } => {
            if !handle
                .loops()
                .iter()
                .any(|record| record.loop_id == loop_id)
            {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    "unknown_loop",
                    format!("the session has no loop `{loop_id}`"),
                ));
            }
            let stopped = handle.stop_loop(&loop_id).await.map_err(loop_error)?;
            value(serde_json::to_value(stopped))
        }
        Command::AllowCall { call_id, retry } => value(serde_json::to_value(
            handle.allow_call(&call_id, retry).await?,
        )),
    }
}

/// A refused loop start or stop as an API error: bad arguments are the request's fault (400),
/// anything else the session's state (409).
fn loop_error(error: qilin_tool::ToolError) -> ApiError {
    match error.code {
        qilin_protocol::ErrorCode::InvalidArguments => {
            ApiError::bad_request("invalid_loop", error.message)
        }
        _ => ApiError::new(StatusCode::CONFLICT, "loop_conflict", error.message),
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
    let reply = match answer {
        RequestAnswer::Approve { .. } => RequestReply::Approve,
        RequestAnswer::ApproveForSession { grant, .. } => RequestReply::ApproveForSession(grant),
        RequestAnswer::Deny { reason, .. } => RequestReply::Deny { reason },
        RequestAnswer::Answer { answers, .. } => RequestReply::Answer(answers),
        RequestAnswer::Dismiss { .. } => RequestReply::Dismiss,
    };
    let recorded = state
        .host()
        .resolve(handle, request_id, reply, &resolved_by)
        .await?;
    Ok(RequestResolved {
        request_id: recorded.request_id,
        resolution: recorded.resolution,
        resolved_by: recorded.resolved_by,
    })
}
