//! Qilin's loop tools: the same prompt run again and again, each time in a fresh child
//! session (or, with `fresh_context: false`, as the next turn of one child session compacted
//! in between), until the work is done.
//!
//! - `loop_start` — start a loop (`{prompt, until: {checks?, promise?}, max_iterations,
//!   fresh_context?, budget?}`); it runs in the background and the call returns at once.
//! - `loop_status` — the session's loops (`{id?}`), each with one report per iteration.
//! - `loop_stop` — stop a loop (`{id}`): its running iteration is interrupted.
//!
//! The tools only speak to the [`Loops`] host service (wrapped in [`LoopService`]); the
//! runtime implements it, runs the iterations and keeps each loop as events in the starting
//! session's log. This crate also holds what a runner decides with: whether an iteration's
//! answer holds the promise ([`promise_seen`]), what an iteration changed in the workspace
//! ([`WorkspaceState`]), and whether the loop goes on ([`outcome_of`]).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod changes;
mod decide;
mod fold;
mod tools;

pub use changes::{WorkspaceState, changes_between};
pub use decide::{
    Ending, Next, STALL_ITERATIONS, budget_spent, outcome_of, promise_marker, promise_seen,
};
pub use fold::fold_loops;
pub use tools::{
    LoopStart, LoopStartArgs, LoopStatus, LoopStatusArgs, LoopStop, LoopStopArgs, record_text,
};

use futures_util::future::BoxFuture;
use qilin_protocol::loops::{LoopRecord, StartLoop};
use qilin_tool::{RegistryError, ToolContext, ToolError, ToolRegistry, ToolResult};
use std::sync::Arc;

/// The most iterations one loop may run.
pub const MAX_ITERATIONS: u32 = 100;

/// Registers `loop_start`, `loop_status` and `loop_stop`.
pub fn register_tools(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry.register(LoopStart)?;
    registry.register(LoopStatus)?;
    registry.register(LoopStop)?;
    Ok(())
}

/// The loops of one session, as the runtime runs them: what the tools (and the hosts) call.
pub trait Loops: Send + Sync {
    /// Starts a loop from call `call_id` (`None` for a host's start); it runs in the
    /// background. Refused, saying why, for a check that is not declared, a bound out of
    /// range, or a session that cannot start loops.
    fn start(&self, call_id: Option<&str>, start: StartLoop) -> ToolResult<LoopRecord>;

    /// The session's loops, oldest first, as they stand now.
    fn list(&self) -> Vec<LoopRecord>;

    /// Stops loop `id`: its running iteration is interrupted; resolves once the loop has
    /// recorded its end. A loop that ended already is returned as it is.
    fn stop<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ToolResult<LoopRecord>>;
}

/// The [`Loops`] of a session, as a host service the tools look up.
#[derive(Clone)]
pub struct LoopService(pub Arc<dyn Loops>);

impl LoopService {
    /// The service of the call's session, or why there is none.
    pub(crate) fn of(cx: &ToolContext) -> ToolResult<Arc<dyn Loops>> {
        cx.service::<LoopService>()
            .map(|service| Arc::clone(&service.0))
            .ok_or_else(|| {
                ToolError::failed(
                    "loops are not available in this runtime (its host runs no loops for the \
                     session)",
                )
            })
    }
}

/// Why a cost budget is refused: a session's usage counts tokens only. Prices are a setting of
/// the terminal (`[prices]` in its `config.toml`), which `/cost` and the turn summary apply to
/// the tokens when they print; the runtime that runs a loop, in the terminal or in
/// `qilin serve`, never sees them, so it could not tell when a cost bound is reached.
pub const COST_REFUSED: &str = "`budget.cost_usd` cannot be kept: a session's usage counts \
     tokens only, and a model's price is known only to the terminal's display (the `[prices]` \
     of its config.toml, applied by `/cost` and the turn summary), never to the runtime that \
     runs the loop; bound the loop with `budget.tokens` or `budget.duration_secs` instead";

/// Checks a loop's request before it starts: a prompt that is not blank, 1 to
/// [`MAX_ITERATIONS`] iterations, something that can end it early or not (checks or a
/// promise are optional: `max_iterations` always bounds it), ids that are `declared`, a
/// promise that is not blank, budgets above 0, and no cost budget ([`COST_REFUSED`] says
/// why). Returns the request with its texts trimmed and `fresh_context` set (`true` unless
/// it was `false`).
pub fn validate(start: StartLoop, declared: &[String]) -> ToolResult<StartLoop> {
    let StartLoop {
        prompt,
        mut until,
        max_iterations,
        fresh_context,
        budget,
    } = start;
    let prompt = prompt.trim().to_string();
    if prompt.is_empty() {
        return Err(ToolError::invalid_arguments(
            "`prompt` is empty; give the prompt every iteration gets",
        ));
    }
    if !(1..=MAX_ITERATIONS).contains(&max_iterations) {
        return Err(ToolError::invalid_arguments(format!(
            "`max_iterations` is {max_iterations}; give a number from 1 to {MAX_ITERATIONS}"
        )));
    }
    for id in &mut until.checks {
        *id = id.trim().to_string();
    }
    if let Some(unknown) = until.checks.iter().find(|id| !declared.contains(id)) {
        return Err(ToolError::invalid_arguments(match declared.is_empty() {
            true => format!(
                "no check `{unknown}`: the session declares no checks (declare them in the \
                 agent file's `checks:` or in `.qilin/checks.yaml`)"
            ),
            false => format!(
                "no check `{unknown}`; the declared checks are: {}",
                declared.join(", ")
            ),
        }));
    }
    until.checks.dedup();
    if let Some(promise) = &until.promise {
        let trimmed = promise.trim();
        if trimmed.is_empty() {
            return Err(ToolError::invalid_arguments(
                "`until.promise` is empty; give the text the model writes as \
                 <promise>TEXT</promise> when it is done, or leave it out",
            ));
        }
        if trimmed.contains("</promise>") || trimmed.contains("<promise>") {
            return Err(ToolError::invalid_arguments(
                "`until.promise` holds a promise tag; give only the text between the tags",
            ));
        }
        until.promise = Some(trimmed.to_string());
    }
    if let Some(budget) = &budget {
        if budget.tokens == Some(0) || budget.duration_secs == Some(0) {
            return Err(ToolError::invalid_arguments(
                "a budget bound is 0; give a positive number, or leave it out for no bound",
            ));
        }
        if budget.cost_usd.is_some() {
            return Err(ToolError::invalid_arguments(COST_REFUSED));
        }
    }
    Ok(StartLoop {
        prompt,
        until,
        max_iterations,
        fresh_context: Some(fresh_context.unwrap_or(true)),
        budget,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::loops::{LoopBudget, LoopUntil};

    fn request(checks: &[&str], max: u32) -> StartLoop {
        StartLoop {
            prompt: "  fix the tests ".into(),
            until: LoopUntil {
                checks: checks.iter().map(|id| id.to_string()).collect(),
                promise: None,
            },
            max_iterations: max,
            fresh_context: None,
            budget: None,
        }
    }

    #[test]
    fn a_request_is_checked_and_trimmed() {
        let declared = vec!["unit".to_string()];
        let ok = validate(request(&["unit"], 3), &declared).unwrap();
        assert_eq!(ok.prompt, "fix the tests");
        assert_eq!(ok.fresh_context, Some(true));
        let error = validate(request(&["lint"], 3), &declared).unwrap_err();
        assert!(
            error.message.contains("declared checks are: unit"),
            "{error:?}"
        );
        let error = validate(request(&[], 0), &declared).unwrap_err();
        assert!(error.message.contains("from 1 to 100"), "{error:?}");
        let mut shared = request(&[], 2);
        shared.fresh_context = Some(false);
        assert_eq!(
            validate(shared, &declared).unwrap().fresh_context,
            Some(false)
        );
        let mut costly = request(&[], 2);
        costly.budget = Some(LoopBudget {
            cost_usd: Some(1.0),
            ..LoopBudget::default()
        });
        let error = validate(costly, &declared).unwrap_err();
        assert_eq!(error.message, COST_REFUSED);
        assert!(
            error.message.contains("usage counts tokens only"),
            "{error:?}"
        );
        assert!(error.message.contains("budget.tokens"), "{error:?}");
        let mut tagged = request(&[], 2);
        tagged.until.promise = Some("<promise>DONE</promise>".into());
        assert!(validate(tagged, &declared).is_err());
    }
}
