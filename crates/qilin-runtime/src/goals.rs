//! A session's goal, as the runtime keeps it — the runtime's side of `qilin_goals::Goals`.
//!
//! The goal lives in the session's log only: [`GoalKeeper`] folds the stored `goal.created`
//! and `goal.updated` events when the session is built and records a `goal.updated` (the whole
//! new state) for every change — the model's (`goal_create`, `goal_update`), a host's (set,
//! pause, resume, clear) and its own: each turn's accounting, a budget spent, a stall, a
//! restart. After each turn the session asks it whether to start a continuation turn, whose
//! prompt is [`CONTINUATION_PROMPT`].

use parking_lot::{Mutex, MutexGuard};
use qilin_goals::{Goals, NewGoal, Settlement, judge};
use qilin_protocol::goals::{
    GoalActor, GoalBudget, GoalCreatedEvent, GoalRecord, GoalStatus, GoalUpdateOutput,
    GoalUpdatedEvent, GoalVerdict, PauseCause,
};
use qilin_protocol::{Event, EventBody, FinishReason};
use qilin_tool::{Session, ToolError, ToolResult, now};
use std::sync::{OnceLock, Weak};
use std::time::Instant;

/// The prompt of a continuation turn: the turn the runtime starts by itself when a goal is
/// active and the session idle. `{objective}`, `{budget_left}`, `{turns}` and `{checks}` are
/// filled in (see [`continuation_prompt`]).
pub const CONTINUATION_PROMPT: &str = "\
This turn was started by the runtime, not typed by the user: the session has an active goal, \
and you keep working toward it until it is done.

Objective: {objective}

Budget left: {budget_left}. Turns spent on the goal so far: {turns}.
Last run of the goal's checks: {checks}

Take the next concrete step toward the objective, building on what the earlier turns did \
rather than starting over. When the objective is met, call goal_update with status \"complete\", \
a reason and your evidence: the runtime runs the goal's checks and accepts it only when none \
fails. If you cannot make progress without the user, call goal_update with status \"blocked\" \
and say what you need. Turns that change nothing pause the goal.";

/// The most turns a goal with no budget at all may take.
pub const DEFAULT_GOAL_TURNS: u32 = 50;

/// How many continuation turns in a row that change nothing and end with the same text pause
/// a goal as stalled.
pub const STALL_TURNS: u32 = 3;

/// Why a host's change to a goal was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoalError {
    /// The session never had a goal.
    #[error("the session has no goal; set one first")]
    NoGoal,
    /// The goal is not in a state the change applies to (one is active already, a settled goal
    /// cannot be paused, a budget is still spent).
    #[error("{0}")]
    Conflict(String),
    /// The request does not fit (an empty objective, a zero bound).
    #[error("{0}")]
    Invalid(String),
    /// A check id the session does not declare (the message names the declared ones).
    #[error("{0}")]
    UnknownCheck(String),
}

impl From<GoalError> for ToolError {
    fn from(err: GoalError) -> Self {
        match err {
            GoalError::Invalid(message) | GoalError::UnknownCheck(message) => {
                ToolError::invalid_arguments(message)
            }
            other => ToolError::failed(other.to_string()),
        }
    }
}

/// The turn running now, as far as the goal is concerned.
struct TurnWatch {
    started: Instant,
    /// The goal was active at some point during the turn: its tokens and time count.
    goal_turn: bool,
    /// The runtime started it (a continuation turn).
    continuation: bool,
}

/// What the keeper knows.
#[derive(Default)]
struct State {
    goal: Option<GoalRecord>,
    /// Goals created in the session so far (the next one's id follows).
    created: u32,
    /// Milliseconds of the goal's turns (its `seconds` is this, whole).
    millis: u64,
    turn: Option<TurnWatch>,
    /// Continuation turns in a row that changed nothing and ended with `last_text`.
    unchanged: u32,
    last_text: Option<String>,
    /// The session is closing: a turn ending now is interrupted by the close, not the user.
    closing: bool,
    /// The session is a child (a subagent): it answers its parent and keeps no goal.
    child: bool,
    /// A turn ended and the goal's next one is about to start.
    continuing: bool,
}

/// What a turn's end means for the goal.
pub(crate) struct TurnOutcome<'a> {
    /// How the turn ended.
    pub reason: FinishReason,
    /// Tokens it used (input and output).
    pub tokens: u64,
    /// The text of its last step.
    pub final_text: &'a str,
    /// Whether it made a call with side effects.
    pub changed: bool,
}

/// A session's goal: folded from its log, changed by the tools and the hosts, recorded as
/// events.
pub(crate) struct GoalKeeper {
    state: Mutex<State>,
    session: OnceLock<Weak<Session>>,
}

impl GoalKeeper {
    /// The goal `events` (a stored log) leave; `child` for a child session (a subagent), which
    /// may not set one.
    pub(crate) fn from_events(events: &[Event], child: bool) -> Self {
        let mut state = State {
            child,
            ..State::default()
        };
        for event in events {
            match &event.body {
                EventBody::GoalCreated(created) => {
                    state.created += 1;
                    state.goal = Some(created.goal.clone());
                }
                EventBody::GoalUpdated(updated) => state.goal = Some(updated.goal.clone()),
                _ => {}
            }
        }
        state.millis = state
            .goal
            .as_ref()
            .map_or(0, |goal| goal.usage.seconds * 1000);
        GoalKeeper {
            state: Mutex::new(state),
            session: OnceLock::new(),
        }
    }

    /// Connects the keeper to its session, whose log it records in.
    pub(crate) fn set_up(&self, session: Weak<Session>) {
        let _ = self.session.set(session);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Records `body` in the session's log (nothing once the session is gone).
    fn emit(&self, body: EventBody) {
        if let Some(session) = self.session.get().and_then(Weak::upgrade) {
            session.events().emit(body);
        }
    }

    /// Changes the goal with `change`, stamps it, and records `goal.updated`.
    fn update(
        &self,
        state: &mut State,
        by: GoalActor,
        reason: String,
        change: impl FnOnce(&mut GoalRecord),
    ) -> Option<GoalRecord> {
        let goal = state.goal.as_mut()?;
        change(goal);
        goal.updated_at = now();
        goal.reason = Some(reason.clone());
        let goal = goal.clone();
        self.emit(EventBody::GoalUpdated(GoalUpdatedEvent {
            goal: goal.clone(),
            by,
            reason,
        }));
        Some(goal)
    }

    /// The ids of the checks the session declares.
    fn declared_checks(&self) -> Vec<String> {
        self.session
            .get()
            .and_then(Weak::upgrade)
            .map(|session| qilin_goals::declared_checks(session.services()))
            .unwrap_or_default()
    }

    /// Sets a new goal for `by`.
    pub(crate) fn create_goal(&self, new: NewGoal, by: GoalActor) -> Result<GoalRecord, GoalError> {
        let objective = new.objective.trim().to_string();
        if objective.is_empty() {
            return Err(GoalError::Invalid(
                "the objective is empty; say what the session should achieve".to_string(),
            ));
        }
        let zero = [
            ("token budget", new.budget.tokens == Some(0)),
            ("time budget", new.budget.seconds == Some(0)),
            ("turns budget", new.budget.turns == Some(0)),
        ];
        if let Some((name, _)) = zero.iter().find(|(_, zero)| *zero) {
            return Err(GoalError::Invalid(format!(
                "the {name} is 0; give a positive number, or none for no bound"
            )));
        }
        if !new.checks.is_empty() {
            let declared = self.declared_checks();
            if let Some(unknown) = new.checks.iter().find(|id| !declared.contains(id)) {
                return Err(GoalError::UnknownCheck(match declared.is_empty() {
                    true => format!(
                        "no check `{unknown}`: the session declares no checks (declare them in \
                         the agent file's `checks:` or in `.qilin/checks.yaml`)"
                    ),
                    false => format!(
                        "no check `{unknown}`; the declared checks are: {}",
                        declared.join(", ")
                    ),
                }));
            }
        }
        let mut state = self.state();
        if state.child {
            return Err(GoalError::Conflict(
                "a child session (a subagent) keeps no goal: it answers the session that \
                 started it, which may set one"
                    .to_string(),
            ));
        }
        if let Some(goal) = state.goal.as_ref().filter(|goal| !goal.status.settled()) {
            return Err(GoalError::Conflict(format!(
                "the session has a goal already ({}, {}: \"{}\"); settle it with goal_update, \
                 or clear it (`/goal clear` on the terminal, `DELETE /api/sessions/{{id}}/goal`) \
                 before setting another",
                goal.id,
                goal.status.as_str(),
                goal.objective
            )));
        }
        state.created += 1;
        let time = now();
        let goal = GoalRecord {
            id: format!("goal-{}", state.created),
            objective,
            status: GoalStatus::Active,
            paused_because: None,
            budget: new.budget,
            usage: Default::default(),
            checks: new.checks,
            last_checks: None,
            reason: None,
            evidence: None,
            created_at: time.clone(),
            updated_at: time,
        };
        state.goal = Some(goal.clone());
        state.millis = 0;
        state.unchanged = 0;
        state.last_text = None;
        if let Some(turn) = state.turn.as_mut() {
            turn.goal_turn = true;
        }
        self.emit(EventBody::GoalCreated(GoalCreatedEvent {
            goal: goal.clone(),
            by,
        }));
        Ok(goal)
    }

    /// The goal that is not settled, or why there is none.
    fn open_goal(state: &State) -> Result<&GoalRecord, GoalError> {
        match &state.goal {
            None => Err(GoalError::NoGoal),
            Some(goal) if goal.status.settled() => Err(GoalError::Conflict(format!(
                "the goal {} is {} already",
                goal.id,
                goal.status.as_str()
            ))),
            Some(goal) => Ok(goal),
        }
    }

    /// Pauses the active goal for `cause`, recorded as by `by`.
    pub(crate) fn pause(
        &self,
        by: GoalActor,
        cause: PauseCause,
        reason: String,
    ) -> Result<GoalRecord, GoalError> {
        let mut state = self.state();
        let goal = Self::open_goal(&state)?;
        if goal.status != GoalStatus::Active {
            return Err(GoalError::Conflict(format!(
                "the goal {} is {}, not active",
                goal.id,
                goal.status.as_str()
            )));
        }
        self.update(&mut state, by, reason, |goal| {
            goal.status = GoalStatus::Paused;
            goal.paused_because = Some(cause);
        })
        .ok_or(GoalError::NoGoal)
    }

    /// Resumes a paused or budget-limited goal, each bound given in `raise` replacing the
    /// goal's (an active goal only has its budget changed); refused when a budget stays
    /// spent.
    pub(crate) fn resume(&self, raise: GoalBudget) -> Result<GoalRecord, GoalError> {
        let mut state = self.state();
        let goal = Self::open_goal(&state)?;
        let raising = raise.tokens.is_some() || raise.seconds.is_some() || raise.turns.is_some();
        if goal.status == GoalStatus::Active && !raising {
            return Err(GoalError::Conflict(format!(
                "the goal {} is active already",
                goal.id
            )));
        }
        let mut budget = goal.budget;
        budget.tokens = raise.tokens.or(budget.tokens);
        budget.seconds = raise.seconds.or(budget.seconds);
        budget.turns = raise.turns.or(budget.turns);
        if let Some(spent) = spent(&budget, goal) {
            return Err(GoalError::Conflict(format!(
                "{spent}: raise that budget to resume the goal"
            )));
        }
        let raised = budget != goal.budget;
        let reason = match (goal.status, raised) {
            (GoalStatus::Active, _) => {
                format!("budget set by the user to {}", budget_words(&budget))
            }
            (_, true) => format!(
                "resumed by the user with a budget of {}",
                budget_words(&budget)
            ),
            (_, false) => "resumed by the user".to_string(),
        };
        state.unchanged = 0;
        state.last_text = None;
        if let Some(turn) = state.turn.as_mut() {
            turn.goal_turn = true;
        }
        self.update(&mut state, GoalActor::User, reason, |goal| {
            goal.status = GoalStatus::Active;
            goal.paused_because = None;
            goal.budget = budget;
        })
        .ok_or(GoalError::NoGoal)
    }

    /// Clears the goal (a cleared one is returned as it is).
    pub(crate) fn clear(&self) -> Result<GoalRecord, GoalError> {
        let mut state = self.state();
        match &state.goal {
            Some(goal) if goal.status == GoalStatus::Cleared => return Ok(goal.clone()),
            _ => {
                Self::open_goal(&state)?;
            }
        }
        self.update(
            &mut state,
            GoalActor::User,
            "cleared by the user".to_string(),
            |goal| {
                goal.status = GoalStatus::Cleared;
                goal.paused_because = None;
            },
        )
        .ok_or(GoalError::NoGoal)
    }

    /// Whether the goal is active.
    pub(crate) fn active(&self) -> bool {
        let state = self.state();
        !state.closing
            && state
                .goal
                .as_ref()
                .is_some_and(|goal| goal.status == GoalStatus::Active)
    }

    /// The prompt of the next continuation turn, while the goal is active and the session is
    /// not closing.
    pub(crate) fn continuation(&self) -> Option<String> {
        let state = self.state();
        if state.closing {
            return None;
        }
        state
            .goal
            .as_ref()
            .filter(|goal| goal.status == GoalStatus::Active)
            .map(continuation_prompt)
    }

    /// A turn started (`continuation`: by the runtime).
    pub(crate) fn turn_started(&self, continuation: bool) {
        let mut state = self.state();
        let goal_turn = state
            .goal
            .as_ref()
            .is_some_and(|goal| goal.status == GoalStatus::Active);
        state.turn = Some(TurnWatch {
            started: Instant::now(),
            goal_turn,
            continuation,
        });
    }

    /// Whether the running turn is a continuation turn.
    pub(crate) fn running_continuation(&self) -> bool {
        self.state()
            .turn
            .as_ref()
            .is_some_and(|turn| turn.continuation)
    }

    /// The running turn ended as `outcome` says: its tokens and time are added to the goal
    /// (when it was the goal's), and the goal is paused (an interrupt, a stall) or budget
    /// limited as the end calls for, in one `goal.updated`. Returns whether a continuation
    /// turn should start.
    pub(crate) fn turn_ended(&self, outcome: TurnOutcome<'_>) -> bool {
        let mut state = self.state();
        let Some(turn) = state.turn.take() else {
            return false;
        };
        let Some(goal) = state.goal.clone() else {
            return false;
        };
        if !turn.goal_turn {
            return false;
        }
        let active = goal.status == GoalStatus::Active;
        state.millis += turn.started.elapsed().as_millis() as u64;
        let mut usage = goal.usage;
        usage.tokens += outcome.tokens;
        usage.seconds = state.millis / 1000;
        usage.turns += 1;
        let accounting = format!(
            "turn {} of the goal ended ({}): {} tokens, {} s so far",
            usage.turns,
            finish_words(outcome.reason),
            usage.tokens,
            usage.seconds
        );
        // Stalls: continuation turns that change nothing and end the same way.
        if active && turn.continuation && !outcome.changed {
            let same = state.last_text.as_deref() == Some(outcome.final_text);
            state.unchanged = if same { state.unchanged + 1 } else { 1 };
            state.last_text = Some(outcome.final_text.to_string());
        } else {
            state.unchanged = 0;
            state.last_text = None;
        }
        let mut by = GoalActor::Runtime;
        let mut status = goal.status;
        let mut cause = goal.paused_because;
        let mut reason = accounting.clone();
        let mut go_on = false;
        if active && !state.closing {
            let mut budget_goal = goal.clone();
            budget_goal.usage = usage;
            if outcome.reason == FinishReason::Interrupted {
                status = GoalStatus::Paused;
                cause = Some(PauseCause::User);
                by = GoalActor::User;
                reason = format!("paused: the user interrupted the turn; {accounting}");
            } else if let Some(spent) = spent(&budget_goal.budget, &budget_goal) {
                status = GoalStatus::BudgetLimited;
                reason = format!("{spent}; {accounting}");
            } else if state.unchanged >= STALL_TURNS {
                status = GoalStatus::Paused;
                cause = Some(PauseCause::Stalled);
                reason = format!(
                    "paused: {STALL_TURNS} continuation turns in a row changed nothing and ended \
                     with the same text; {accounting}"
                );
                state.unchanged = 0;
                state.last_text = None;
            } else if matches!(
                outcome.reason,
                FinishReason::Completed | FinishReason::MaxSteps | FinishReason::MaxTokens
            ) {
                go_on = true;
            } else {
                reason = format!(
                    "{accounting}; no turn follows a turn that {}: a new prompt or a resume \
                     continues the goal",
                    finish_words(outcome.reason)
                );
            }
        }
        self.update(&mut state, by, reason, |goal| {
            goal.usage = usage;
            goal.status = status;
            goal.paused_because = cause;
        });
        state.continuing = go_on;
        go_on
    }

    /// Whether the goal's next turn is about to start (a turn ended and asked for it).
    pub(crate) fn continuing(&self) -> bool {
        self.state().continuing
    }

    /// The goal's next turn started (or could not).
    pub(crate) fn continued(&self) {
        self.state().continuing = false;
    }

    /// The session is closing: turns ending from now on start no continuation.
    pub(crate) fn closing(&self) {
        self.state().closing = true;
    }

    /// Pauses an active goal because the session is closed (or resumed after its process
    /// stopped): it waits for a person to resume it.
    pub(crate) fn pause_for_restart(&self) {
        let mut state = self.state();
        if state
            .goal
            .as_ref()
            .is_some_and(|goal| goal.status == GoalStatus::Active)
        {
            self.update(
                &mut state,
                GoalActor::Runtime,
                RESTART_REASON.to_string(),
                |goal| {
                    goal.status = GoalStatus::Paused;
                    goal.paused_because = Some(PauseCause::Restart);
                },
            );
        }
    }
}

/// Why a goal comes back paused after its session was closed or its process stopped.
const RESTART_REASON: &str = "paused: the process running the session stopped (or closed the \
                              session) while the goal was active; its usage is kept, and \
                              resuming the goal continues it";

/// The `goal.updated` that pauses the goal `events` leave active, for a session whose process
/// stopped while it was (`None` when no goal is active).
pub(crate) fn restart_pause(events: &[Event]) -> Option<EventBody> {
    let mut goal = events
        .iter()
        .rev()
        .find_map(|event| match &event.body {
            EventBody::GoalCreated(created) => Some(created.goal.clone()),
            EventBody::GoalUpdated(updated) => Some(updated.goal.clone()),
            _ => None,
        })
        .filter(|goal| goal.status == GoalStatus::Active)?;
    goal.status = GoalStatus::Paused;
    goal.paused_because = Some(PauseCause::Restart);
    goal.reason = Some(RESTART_REASON.to_string());
    goal.updated_at = now();
    Some(EventBody::GoalUpdated(GoalUpdatedEvent {
        goal,
        by: GoalActor::Runtime,
        reason: RESTART_REASON.to_string(),
    }))
}

impl Goals for GoalKeeper {
    fn current(&self) -> Option<GoalRecord> {
        self.state().goal.clone()
    }

    fn create(&self, goal: NewGoal, by: GoalActor) -> ToolResult<GoalRecord> {
        Ok(self.create_goal(goal, by)?)
    }

    fn settle(&self, settlement: Settlement) -> ToolResult<GoalUpdateOutput> {
        let mut state = self.state();
        Self::open_goal(&state).map_err(|_| {
            ToolError::failed(
                "the session has no goal to settle (goal_get shows its last one; goal_create \
                 sets a new one)",
            )
        })?;
        let Settlement {
            verdict,
            reason,
            evidence,
            checks,
        } = settlement;
        let (accepted, message) = match verdict {
            GoalVerdict::Complete => judge(checks.as_ref()),
            GoalVerdict::Blocked => (
                true,
                "The goal is blocked: the runtime starts no more turns for it; the user decides \
                 what comes next."
                    .to_string(),
            ),
        };
        let (by, recorded) = match (verdict, accepted) {
            (GoalVerdict::Complete, true) => (GoalActor::Model, format!("complete: {reason}")),
            (GoalVerdict::Blocked, _) => (GoalActor::Model, format!("blocked: {reason}")),
            (GoalVerdict::Complete, false) => {
                (GoalActor::Runtime, format!("`complete` refused: {message}"))
            }
        };
        let last_checks = checks.clone();
        let goal = self
            .update(&mut state, by, recorded, |goal| {
                if last_checks.is_some() {
                    goal.last_checks = last_checks;
                }
                if accepted {
                    goal.status = match verdict {
                        GoalVerdict::Complete => GoalStatus::Complete,
                        GoalVerdict::Blocked => GoalStatus::Blocked,
                    };
                    goal.paused_because = None;
                    goal.evidence = evidence;
                }
            })
            .ok_or_else(|| ToolError::failed("the session has no goal to settle"))?;
        Ok(GoalUpdateOutput {
            goal,
            accepted,
            message,
            checks,
        })
    }
}

/// What is spent of `budget` by `goal`'s usage, in words; for a goal with no budget at all,
/// the [`DEFAULT_GOAL_TURNS`] cap.
fn spent(budget: &GoalBudget, goal: &GoalRecord) -> Option<String> {
    let usage = &goal.usage;
    if let Some(tokens) = budget.tokens.filter(|&bound| usage.tokens >= bound) {
        return Some(format!(
            "the token budget is spent ({} of {tokens} tokens)",
            usage.tokens
        ));
    }
    if let Some(seconds) = budget.seconds.filter(|&bound| usage.seconds >= bound) {
        return Some(format!(
            "the time budget is spent ({} of {seconds} s)",
            usage.seconds
        ));
    }
    if let Some(turns) = budget.turns.filter(|&bound| usage.turns >= bound) {
        return Some(format!(
            "the turns budget is spent ({} of {turns} turns)",
            usage.turns
        ));
    }
    let unbounded = budget.tokens.is_none() && budget.seconds.is_none() && budget.turns.is_none();
    if unbounded && usage.turns >= DEFAULT_GOAL_TURNS {
        return Some(format!(
            "the goal took {} turns, the most a goal with no budget may take",
            usage.turns
        ));
    }
    None
}

/// A budget in words: `50000 tokens, 600 s, 10 turns`.
fn budget_words(budget: &GoalBudget) -> String {
    let mut parts = Vec::new();
    if let Some(tokens) = budget.tokens {
        parts.push(format!("{tokens} tokens"));
    }
    if let Some(seconds) = budget.seconds {
        parts.push(format!("{seconds} s"));
    }
    if let Some(turns) = budget.turns {
        parts.push(format!("{turns} turns"));
    }
    match parts.is_empty() {
        true => "no bound".to_string(),
        false => parts.join(", "),
    }
}

/// How a turn ended, in words.
fn finish_words(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Completed => "completed",
        FinishReason::MaxSteps => "reached its step limit",
        FinishReason::Interrupted => "was interrupted",
        FinishReason::MaxTokens => "reached the token limit",
        FinishReason::Refused => "was refused",
        FinishReason::Error => "failed",
    }
}

/// [`CONTINUATION_PROMPT`] for `goal`.
pub fn continuation_prompt(goal: &GoalRecord) -> String {
    let usage = &goal.usage;
    let budget = &goal.budget;
    let mut left = Vec::new();
    if let Some(tokens) = budget.tokens {
        left.push(format!("{} tokens", tokens.saturating_sub(usage.tokens)));
    }
    if let Some(seconds) = budget.seconds {
        left.push(format!("{} s", seconds.saturating_sub(usage.seconds)));
    }
    if let Some(turns) = budget.turns {
        left.push(format!("{} turns", turns.saturating_sub(usage.turns)));
    }
    let budget_left = match left.is_empty() {
        true => format!(
            "no budget set, so at most {} more turns",
            DEFAULT_GOAL_TURNS.saturating_sub(usage.turns)
        ),
        false => left.join(", "),
    };
    let checks = match &goal.last_checks {
        None => "none yet (they run when you call goal_update with \"complete\")".to_string(),
        Some(run) => {
            let failed: Vec<&str> = run
                .runs
                .iter()
                .filter(|check| {
                    check.conclusion == qilin_protocol::checks::CheckConclusion::Failure
                })
                .map(|check| check.id.as_str())
                .collect();
            match failed.is_empty() {
                true => run.summary.clone(),
                false => format!("{} (failed: {})", run.summary, failed.join(", ")),
            }
        }
    };
    // The objective last: its text is the user's or the model's, never a placeholder.
    CONTINUATION_PROMPT
        .replace("{budget_left}", &budget_left)
        .replace("{turns}", &usage.turns.to_string())
        .replace("{checks}", &checks)
        .replace("{objective}", &goal.objective)
}
