//! Goals: an objective a session works toward, turn after turn, until its checks pass.
//!
//! A session has at most one goal that is not settled (complete, blocked or cleared). Its state
//! lives in the session's log only: `goal.created` records it, and every change records
//! `goal.updated` with the whole new state, who made the change and why — so the last of those
//! events is the goal (folded into [`crate::api::SessionView::goal`]). While a goal is active
//! and the session idle, the runtime starts continuation turns by itself, within the goal's
//! budget.

use crate::checks::ChecksRunOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// The session works toward it: the runtime continues it while the session is idle.
    Active,
    /// Work on it stopped for now (see [`PauseCause`]); resuming continues it.
    Paused,
    /// The model said it cannot go on without help; settled.
    Blocked,
    /// A budget (tokens, time or turns) was spent; raising it resumes the goal.
    BudgetLimited,
    /// Done: its checks passed (or it declared none and the model said so); settled.
    Complete,
    /// The user dropped it; settled.
    Cleared,
}

impl GoalStatus {
    /// Whether the goal is over (complete, blocked or cleared): a new goal may replace it.
    pub fn settled(self) -> bool {
        matches!(
            self,
            GoalStatus::Complete | GoalStatus::Blocked | GoalStatus::Cleared
        )
    }

    /// The status's wire name (`active`, `budget_limited`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::Blocked => "blocked",
            GoalStatus::BudgetLimited => "budget_limited",
            GoalStatus::Complete => "complete",
            GoalStatus::Cleared => "cleared",
        }
    }
}

/// Why a paused goal is paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum PauseCause {
    /// The user paused it, or interrupted one of its turns.
    User,
    /// Three continuation turns in a row changed nothing and ended the same way.
    Stalled,
    /// The process running the session stopped while the goal was active; it came back paused.
    Restart,
}

/// Who changed a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum GoalActor {
    /// The model, with `goal_create` or `goal_update`.
    Model,
    /// A person, from a host (the terminal's `/goal`, the HTTP API).
    User,
    /// The runtime itself: a budget spent, a stall, a restart, a turn's accounting.
    Runtime,
}

/// What a goal may spend; an absent bound is no bound (the runtime still caps the turns of a
/// goal with no budget at all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct GoalBudget {
    /// Tokens (input and output) its turns may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub tokens: Option<u64>,
    /// Seconds of wall time its turns may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub seconds: Option<u64>,
    /// Turns it may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turns: Option<u32>,
}

/// What a goal spent so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct GoalUsage {
    /// Tokens (input and output) of its turns.
    #[ts(type = "number")]
    pub tokens: u64,
    /// Seconds of wall time spent in its turns.
    #[ts(type = "number")]
    pub seconds: u64,
    /// Turns run while it was active.
    pub turns: u32,
}

/// A goal and where it stands: what the goal tools return and the goal events record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct GoalRecord {
    /// The goal's id, unique in its session.
    pub id: String,
    /// What the session works toward.
    pub objective: String,
    /// Where it stands.
    pub status: GoalStatus,
    /// Why it is paused, while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub paused_because: Option<PauseCause>,
    /// What it may spend.
    pub budget: GoalBudget,
    /// What it spent so far.
    pub usage: GoalUsage,
    /// The ids of the checks that decide its completion; empty for every declared check.
    pub checks: Vec<String>,
    /// The last run of its checks the runtime made for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_checks: Option<ChecksRunOutput>,
    /// Why the last change was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// What the model offered as evidence with `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub evidence: Option<String>,
    /// When it was created, RFC 3339 UTC.
    pub created_at: String,
    /// When it last changed, RFC 3339 UTC.
    pub updated_at: String,
}

/// The `goal.created` event: a goal was set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct GoalCreatedEvent {
    /// The goal as created.
    pub goal: GoalRecord,
    /// Who set it.
    pub by: GoalActor,
}

/// The `goal.updated` event: a goal changed; `goal` is its whole new state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct GoalUpdatedEvent {
    /// The goal after the change.
    pub goal: GoalRecord,
    /// Who changed it.
    pub by: GoalActor,
    /// Why.
    pub reason: String,
}

/// What `goal_get` and `GET /api/sessions/{id}/goal` return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct GoalGetOutput {
    /// The session's latest goal (settled ones included), or null when it never had one.
    pub goal: Option<GoalRecord>,
}

/// What the model may settle a goal as with `goal_update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum GoalVerdict {
    /// The objective is met: accepted only when the goal's checks pass.
    Complete,
    /// The objective cannot be met without help.
    Blocked,
}

/// What `goal_update` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct GoalUpdateOutput {
    /// The goal after the call.
    pub goal: GoalRecord,
    /// Whether the change was made (a `complete` whose checks fail is refused).
    pub accepted: bool,
    /// What happened, for the model: which checks failed, or that none verified the goal.
    pub message: String,
    /// The run of the goal's checks a `complete` made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub checks: Option<ChecksRunOutput>,
}

/// `PUT /api/sessions/{id}/goal`: a new goal.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetGoal {
    /// What the session should work toward (not only spaces).
    #[schemars(length(min = 1), regex(pattern = crate::api::NOT_BLANK))]
    pub objective: String,
    /// Tokens its turns may use.
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[ts(optional, type = "number")]
    pub token_budget: Option<u64>,
    /// Seconds its turns may take.
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[ts(optional, type = "number")]
    pub time_budget: Option<u64>,
    /// Turns it may take.
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[ts(optional)]
    pub max_turns: Option<u32>,
    /// The ids of the checks that decide its completion; every declared check when omitted.
    #[serde(default)]
    #[ts(optional)]
    pub checks: Option<Vec<String>>,
}

/// `POST /api/sessions/{id}/goal/resume`: resume a paused or budget-limited goal, raising its
/// budget when a bound is given (each given bound replaces the goal's).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResumeGoal {
    /// The new token budget.
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[ts(optional, type = "number")]
    pub token_budget: Option<u64>,
    /// The new time budget, in seconds.
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[ts(optional, type = "number")]
    pub time_budget: Option<u64>,
    /// The new turns budget.
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[ts(optional)]
    pub max_turns: Option<u32>,
}
