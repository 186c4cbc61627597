//! Qilin's goal tools: a session works toward an objective, turn after turn, until the goal's
//! checks pass.
//!
//! - `goal_get` — the session's goal (`{goal}`; null when it never had one).
//! - `goal_create` — set a goal (`{objective, token_budget?, time_budget?, max_turns?,
//!   checks?}`); refused while one is active, paused or budget-limited.
//! - `goal_update` — settle it (`{status: complete | blocked, reason, evidence?}`): `complete`
//!   runs the goal's checks here, in the runtime, and is accepted only when none fails.
//!
//! The tools only speak to the [`Goals`] host service (`qilin_tool::Services`, wrapped in
//! [`GoalService`]); the runtime implements it, keeps the goal as events in the session's log,
//! and starts the continuation turns. Without the service every call fails saying so.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod checks;
mod tools;

pub use checks::{declared_checks, judge};
pub use tools::{
    GoalCreate, GoalCreateArgs, GoalGet, GoalGetArgs, GoalUpdate, GoalUpdateArgs, record_line,
};

use qilin_protocol::checks::ChecksRunOutput;
use qilin_protocol::goals::{GoalActor, GoalBudget, GoalRecord, GoalUpdateOutput, GoalVerdict};
use qilin_tool::{RegistryError, ToolContext, ToolError, ToolRegistry, ToolResult};
use std::sync::Arc;

/// Registers `goal_get`, `goal_create` and `goal_update`.
pub fn register_tools(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry.register(GoalGet)?;
    registry.register(GoalCreate)?;
    registry.register(GoalUpdate)?;
    Ok(())
}

/// A goal as asked for (by `goal_create`, or a host's `PUT …/goal`), before the runtime checks
/// and records it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewGoal {
    /// What the session should work toward.
    pub objective: String,
    /// What it may spend.
    pub budget: GoalBudget,
    /// The ids of the checks that decide its completion; empty for every declared one.
    pub checks: Vec<String>,
}

/// The model's verdict on the goal, with what the runtime found.
#[derive(Debug, Clone, PartialEq)]
pub struct Settlement {
    /// Complete or blocked.
    pub verdict: GoalVerdict,
    /// Why, in the model's words.
    pub reason: String,
    /// What the model offers as evidence (for `complete`).
    pub evidence: Option<String>,
    /// The run of the goal's checks made for a `complete`; `None` when no check is declared.
    pub checks: Option<ChecksRunOutput>,
}

/// The goal of one session, as the runtime keeps it: what the tools call.
pub trait Goals: Send + Sync {
    /// The session's latest goal (settled ones included), if it ever had one.
    fn current(&self) -> Option<GoalRecord>;

    /// Sets a new goal for `by`; refused (with a message saying how to go on) while the
    /// session has a goal that is not settled, and for a check id that is not declared.
    fn create(&self, goal: NewGoal, by: GoalActor) -> ToolResult<GoalRecord>;

    /// Records the model's verdict: `complete` is accepted only when [`judge`] accepts its
    /// checks' run (the goal stays active otherwise, its `lastChecks` updated), `blocked`
    /// always. Refused when the session has no goal that is not settled.
    fn settle(&self, settlement: Settlement) -> ToolResult<GoalUpdateOutput>;
}

/// The [`Goals`] of a session, as a host service the tools look up.
#[derive(Clone)]
pub struct GoalService(pub Arc<dyn Goals>);

impl GoalService {
    /// The service of the call's session, or why there is none.
    pub(crate) fn of(cx: &ToolContext) -> ToolResult<Arc<dyn Goals>> {
        cx.service::<GoalService>()
            .map(|service| Arc::clone(&service.0))
            .ok_or_else(|| {
                ToolError::failed(
                    "goals are not available in this runtime (its host keeps no goal for the session)",
                )
            })
    }
}
