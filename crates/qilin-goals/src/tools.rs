//! The three tools: each checks its arguments, asks the [`crate::Goals`] service, and presents
//! the call.

use crate::{GoalService, NewGoal, Settlement, checks};
use qilin_protocol::goals::{
    GoalActor, GoalBudget, GoalGetOutput, GoalRecord, GoalStatus, GoalUpdateOutput, GoalVerdict,
};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;

/// The session's goal: its objective, status (`active`, `paused`, `blocked`, `budget_limited`,
/// `complete`, `cleared`), budget, usage (tokens, seconds, turns), the checks that decide it
/// and their last run. Returns `{goal}`, null when the session never had one.
#[derive(qilin_tool::Tool)]
#[tool(name = "goal_get", read_only)]
pub struct GoalGet;

/// Arguments of `goal_get` (none).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalGetArgs {}

impl Tool for GoalGet {
    type Args = GoalGetArgs;
    type Output = GoalGetOutput;

    fn prompt_hint(&self) -> &str {
        "Use goal_get to see the goal you are working toward, what it has spent against its \
         budget and how its checks last ended, before deciding the next step."
    }

    fn present(&self, _args: &GoalGetArgs) -> CallPresentation {
        CallPresentation::new("Read the goal", "")
    }

    fn before_detail(&self, _args: &GoalGetArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &GoalGetArgs, result: &ToolResult<GoalGetOutput>) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, _args: GoalGetArgs, cx: &ToolContext) -> ToolResult<GoalGetOutput> {
        let goals = GoalService::of(cx)?;
        Ok(GoalGetOutput {
            goal: goals.current(),
        })
    }

    fn content(&self, output: &GoalGetOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(match &output.goal {
            Some(goal) => record_text(goal),
            None => "The session has no goal.".to_string(),
        })]
    }
}

/// Set a goal for this session: an objective it works toward over as many turns as it takes.
/// While the goal is active, the runtime starts a new turn each time one ends, until you settle
/// it with `goal_update`, the user pauses or clears it, or a budget (tokens, seconds, turns) is
/// spent. Completion is decided by the goal's checks, run by the runtime. Refused while the
/// session has a goal that is active, paused or budget-limited. Returns the goal's record.
#[derive(qilin_tool::Tool)]
#[tool(name = "goal_create")]
pub struct GoalCreate;

/// Arguments of `goal_create`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalCreateArgs {
    /// What to achieve, stated so that it can be verified: the outcome, not the steps.
    pub objective: String,
    /// The most tokens (input and output) the goal's turns may use.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub token_budget: Option<u64>,
    /// The most seconds of wall time the goal's turns may take.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub time_budget: Option<u64>,
    /// The most turns the goal may take.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_turns: Option<u32>,
    /// The ids of the declared checks that decide completion; every declared check when
    /// omitted.
    #[serde(default)]
    pub checks: Option<Vec<String>>,
}

impl Tool for GoalCreate {
    type Args = GoalCreateArgs;
    type Output = GoalRecord;

    fn prompt_hint(&self) -> &str {
        "Use goal_create when the user asks for an outcome that takes many turns (make the tests \
         pass, port a module): the runtime then keeps you working on it turn after turn. Give a \
         budget when the user names one. Do not create a goal for a task one turn finishes."
    }

    fn present(&self, args: &GoalCreateArgs) -> CallPresentation {
        CallPresentation::new("Set a goal", one_line(&args.objective, 80))
    }

    fn before_detail(&self, args: &GoalCreateArgs) -> Option<Detail> {
        Some(Detail::Text {
            text: args.objective.clone(),
        })
    }

    fn detail(&self, _args: &GoalCreateArgs, result: &ToolResult<GoalRecord>) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(goal) => record_text(goal),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: GoalCreateArgs, cx: &ToolContext) -> ToolResult<GoalRecord> {
        let goals = GoalService::of(cx)?;
        not_blank("objective", &args.objective)?;
        let checks = args.checks.unwrap_or_default();
        if let Some(blank) = checks.iter().find(|id| id.trim().is_empty()) {
            return Err(ToolError::invalid_arguments(format!(
                "`checks` holds an empty id ({blank:?}); give the ids of declared checks"
            )));
        }
        goals.create(
            NewGoal {
                objective: args.objective.trim().to_string(),
                budget: GoalBudget {
                    tokens: positive("token_budget", args.token_budget)?,
                    seconds: positive("time_budget", args.time_budget)?,
                    turns: positive("max_turns", args.max_turns)?,
                },
                checks: checks.iter().map(|id| id.trim().to_string()).collect(),
            },
            GoalActor::Model,
        )
    }

    fn content(&self, goal: &GoalRecord) -> Vec<ContentBlock> {
        vec![ContentBlock::text(record_text(goal))]
    }
}

/// Settle the session's goal. `complete` says the objective is met: the runtime runs the goal's
/// checks and accepts it only when none fails (otherwise the goal stays active and the message
/// names the failing checks); with no check declared it is accepted on your word. `blocked`
/// says it cannot be met without the user; the runtime stops continuing it. Returns `{goal,
/// accepted, message, checks}` (`checks`: the run a `complete` made).
#[derive(qilin_tool::Tool)]
#[tool(name = "goal_update")]
pub struct GoalUpdate;

/// Arguments of `goal_update`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalUpdateArgs {
    /// `complete` (the objective is met) or `blocked` (it cannot be met without help).
    pub status: GoalVerdict,
    /// Why: what was done, or what blocks it and what is needed.
    pub reason: String,
    /// For `complete`: what shows the objective is met (files changed, commands run and their
    /// results).
    #[serde(default)]
    pub evidence: Option<String>,
}

impl Tool for GoalUpdate {
    type Args = GoalUpdateArgs;
    type Output = GoalUpdateOutput;

    fn prompt_hint(&self) -> &str {
        "Use goal_update with status `complete` once the goal's objective is met (the runtime \
         runs its checks; if one fails, fix it and try again), or `blocked` when you cannot go \
         on without the user, saying what you need. Never mark a goal complete to stop working."
    }

    fn present(&self, args: &GoalUpdateArgs) -> CallPresentation {
        let action = match args.status {
            GoalVerdict::Complete => "Mark the goal complete",
            GoalVerdict::Blocked => "Mark the goal blocked",
        };
        CallPresentation::new(action, one_line(&args.reason, 80))
    }

    fn before_detail(&self, args: &GoalUpdateArgs) -> Option<Detail> {
        Some(Detail::Text {
            text: match &args.evidence {
                Some(evidence) => format!("{}\n\nEvidence: {evidence}", args.reason),
                None => args.reason.clone(),
            },
        })
    }

    fn detail(
        &self,
        _args: &GoalUpdateArgs,
        result: &ToolResult<GoalUpdateOutput>,
    ) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(output) => output.message.clone(),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: GoalUpdateArgs, cx: &ToolContext) -> ToolResult<GoalUpdateOutput> {
        let goals = GoalService::of(cx)?;
        not_blank("reason", &args.reason)?;
        let Some(goal) = goals.current().filter(|goal| !goal.status.settled()) else {
            return Err(ToolError::failed(
                "the session has no goal to settle (goal_get shows its last one; goal_create \
                 sets a new one)",
            ));
        };
        let checks = match args.status {
            GoalVerdict::Complete => checks::run(cx, &goal.checks).await?,
            GoalVerdict::Blocked => None,
        };
        goals.settle(Settlement {
            verdict: args.status,
            reason: args.reason.trim().to_string(),
            evidence: args
                .evidence
                .map(|evidence| evidence.trim().to_string())
                .filter(|evidence| !evidence.is_empty()),
            checks,
        })
    }

    fn content(&self, output: &GoalUpdateOutput) -> Vec<ContentBlock> {
        let mut text = vec![output.message.clone()];
        if let Some(run) = &output.checks {
            for check in &run.runs {
                text.push(format!(
                    "- {}: {} ({})",
                    check.id,
                    serde_json::to_value(check.conclusion)
                        .ok()
                        .and_then(|value| value.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    check.summary
                ));
                for annotation in check.annotations.iter().take(10) {
                    let place = match annotation.line {
                        Some(line) => format!("{}:{line}", annotation.path),
                        None => annotation.path.clone(),
                    };
                    text.push(format!("  {place}: {}", annotation.message));
                }
            }
        }
        text.push(record_line(&output.goal));
        vec![ContentBlock::text(text.join("\n"))]
    }
}

/// A goal on one line: its status, objective, and usage against its budget.
pub fn record_line(goal: &GoalRecord) -> String {
    let mut line = format!(
        "Goal {} ({}): {}",
        goal.id,
        status_words(goal),
        one_line(&goal.objective, 120)
    );
    line.push_str(&format!(" — {}", usage_words(goal)));
    line
}

/// A goal's status in words: `paused (stalled)` for a paused one.
fn status_words(goal: &GoalRecord) -> String {
    match (goal.status, goal.paused_because) {
        (GoalStatus::Paused, Some(cause)) => format!(
            "paused: {}",
            serde_json::to_value(cause)
                .ok()
                .and_then(|value| value.as_str().map(str::to_string))
                .unwrap_or_default()
        ),
        (status, _) => status.as_str().to_string(),
    }
}

/// Usage against the budget: `1200 of 50000 tokens, 30 s, 2 of 10 turns`.
fn usage_words(goal: &GoalRecord) -> String {
    let of = |used: u64, bound: Option<u64>| match bound {
        Some(bound) => format!("{used} of {bound}"),
        None => used.to_string(),
    };
    format!(
        "{} tokens, {} s, {} turns",
        of(goal.usage.tokens, goal.budget.tokens),
        of(goal.usage.seconds, goal.budget.seconds),
        of(
            u64::from(goal.usage.turns),
            goal.budget.turns.map(u64::from)
        ),
    )
}

/// The model-facing text of a goal record.
fn record_text(goal: &GoalRecord) -> String {
    let mut text = vec![record_line(goal)];
    if !goal.checks.is_empty() {
        text.push(format!("Checks: {}", goal.checks.join(", ")));
    }
    if let Some(run) = &goal.last_checks {
        text.push(format!("Last checks: {}", run.summary));
    }
    if let Some(reason) = &goal.reason {
        text.push(format!("Last change: {reason}"));
    }
    text.join("\n")
}

fn not_blank(field: &str, value: &str) -> ToolResult<()> {
    if value.trim().is_empty() {
        return Err(ToolError::invalid_arguments(format!(
            "`{field}` is empty; give it some text"
        )));
    }
    Ok(())
}

/// A budget bound, refused when 0 (omit it for no bound).
fn positive<T: Copy + PartialEq + Default + std::fmt::Display>(
    field: &str,
    value: Option<T>,
) -> ToolResult<Option<T>> {
    match value {
        Some(zero) if zero == T::default() => Err(ToolError::invalid_arguments(format!(
            "`{field}` is {zero}; give a positive number, or leave it out for no bound"
        ))),
        other => Ok(other),
    }
}

/// `text` on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
