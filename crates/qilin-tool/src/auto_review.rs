//! Auto review: the reviewer model the execution layer asks about a call the policy sends it
//! (`auto`, or `ask` where no one attends), a person's one-off grants for calls it refused,
//! and the circuit breaker that pauses a turn after too many denials.
//!
//! The model itself is behind [`ModelJudge`] (the runtime implements it over a model
//! provider); this module holds what is the same whatever the model: the bounded input, the
//! time limit, the record of each review, the grants and the breaker.

use crate::{Caller, EventLog, ToolEffect, now};
use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use qilin_protocol::review::{
    ReviewCircuitOpenEvent, ReviewGrant, ReviewGrantedEvent, ReviewRisk, ReviewVerdict,
};
use qilin_protocol::{Event, EventBody, Usage};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// The most bytes of the user's messages a reviewer is shown (the most recent first).
pub const REVIEW_MESSAGE_BYTES: usize = 16 * 1024;

/// Denials in a row within one turn that open the circuit breaker.
pub const DENIALS_IN_A_ROW: u32 = 3;

/// Denials among the session's last [`REVIEW_WINDOW`] reviews that open the circuit breaker.
pub const DENIALS_IN_WINDOW: u32 = 10;

/// How many of the session's latest reviews the breaker counts denials among.
pub const REVIEW_WINDOW: usize = 50;

/// A call as the reviewer model is shown it: never a tool's result.
#[derive(Debug, Clone)]
pub struct ReviewedCall<'a> {
    /// The call's id.
    pub call_id: &'a str,
    /// The tool's wire name.
    pub tool: &'a str,
    /// The canonical arguments (validated, paths resolved), as the call would run with them.
    pub arguments: &'a Value,
    /// Which entry the call came through.
    pub caller: &'a Caller,
    /// What the tool says of its effects, when it says.
    pub effect: Option<ToolEffect>,
    /// Why the policy sent the call to the reviewer.
    pub policy_reason: &'a str,
    /// The user's messages of the session, the most recent first, within
    /// [`REVIEW_MESSAGE_BYTES`] (the oldest one kept may be cut).
    pub user_messages: Vec<String>,
}

/// What the reviewer model answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// A well-formed verdict.
    Verdict {
        /// Whether the call may run.
        allow: bool,
        /// How risky the reviewer judged it.
        risk: ReviewRisk,
        /// One line for the person watching.
        user_reason: String,
        /// What the model that made the call is told (for a denial: what to do instead).
        model_message: String,
        /// Tokens the review used.
        usage: Usage,
    },
    /// The reviewer errored, or answered something that is not a verdict: never an allow.
    Failed {
        /// What went wrong, in a line.
        problem: String,
        /// Tokens the review used before it failed.
        usage: Usage,
    },
}

/// A reviewer model: judges one call at a time, with no memory between calls.
pub trait ModelJudge: Send + Sync {
    /// The reviewer's model id (`provider:name`).
    fn model(&self) -> &str;

    /// Judges one call. A failure is [`Judgement::Failed`]; the caller bounds the time.
    fn judge<'a>(&'a self, call: ReviewedCall<'a>) -> BoxFuture<'a, Judgement>;
}

/// A session's auto review: its reviewer model and time limit, the grants people made, and
/// the breaker's counts. Put in the session's services; the execution layer finds it there.
pub struct AutoReview {
    judge: Arc<dyn ModelJudge>,
    timeout: Duration,
    state: Mutex<AutoState>,
}

#[derive(Default)]
struct AutoState {
    /// Every grant made in the session, used ones included, in the order made.
    grants: Vec<ReviewGrant>,
    /// The turn the run of denials belongs to, and its length.
    row: (String, u32),
    /// Whether each of the latest reviews denied, oldest first.
    window: VecDeque<bool>,
}

/// The breaker opened: what the `review.circuit_open` event and the turn's end say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CircuitOpen {
    /// Denials in a row in the turn.
    pub in_a_row: u32,
    /// Denials among the latest reviews.
    pub in_window: u32,
}

impl AutoReview {
    /// Auto review by `judge`, each review limited to `timeout`.
    pub fn new(judge: Arc<dyn ModelJudge>, timeout: Duration) -> Self {
        AutoReview {
            judge,
            timeout,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> parking_lot::MutexGuard<'_, AutoState> {
        self.state.lock()
    }

    /// The reviewer model.
    pub fn judge(&self) -> &dyn ModelJudge {
        &*self.judge
    }

    /// How long one review may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Takes back what a resumed session's log records: its grants (and which were used)
    /// and its latest reviews for the breaker's window.
    pub fn restore(&self, events: &[Event]) {
        let mut state = self.state();
        for event in events {
            match &event.body {
                EventBody::ReviewGranted(granted) => {
                    record_grant(&mut state.grants, granted.grant.clone())
                }
                EventBody::ToolReviewed(reviewed) => {
                    push_review(&mut state.window, reviewed.review.verdict);
                }
                EventBody::ReviewCircuitOpen(_) => state.window.clear(),
                _ => {}
            }
        }
    }

    /// A person allows the refused call `call_id` of `tool` with `arguments` (canonical):
    /// records `review.granted` and gives the grant.
    pub fn grant(
        &self,
        events: &EventLog,
        call_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> ReviewGrant {
        let mut state = self.state();
        let grant = ReviewGrant {
            id: format!("grant-{}", state.grants.len() + 1),
            call_id: call_id.to_string(),
            tool_name: tool.to_string(),
            arguments: arguments.clone(),
            granted_at: now(),
            used_by: None,
        };
        // Recorded under the lock, so that grants are numbered in log order.
        events.emit(EventBody::ReviewGranted(ReviewGrantedEvent {
            grant: grant.clone(),
        }));
        state.grants.push(grant.clone());
        grant
    }

    /// Uses the first unused grant for exactly `tool` with `arguments` (canonical), if there
    /// is one: marks it used by `call_id` and records that as `review.granted`.
    pub fn use_grant(
        &self,
        events: &EventLog,
        call_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> Option<ReviewGrant> {
        let mut state = self.state();
        let grant = state.grants.iter_mut().find(|grant| {
            grant.used_by.is_none() && grant.tool_name == tool && grant.arguments == *arguments
        })?;
        grant.used_by = Some(call_id.to_string());
        let used = grant.clone();
        events.emit(EventBody::ReviewGranted(ReviewGrantedEvent {
            grant: used.clone(),
        }));
        Some(used)
    }

    /// The grants made so far, in the order made, with the call that used each.
    pub fn grants(&self) -> Vec<ReviewGrant> {
        self.state().grants.clone()
    }

    /// Counts a review of turn `turn_id` for the breaker. Gives what opened it when this
    /// review does (counts start afresh then: a person resuming gets a clean slate).
    pub fn count(&self, turn_id: &str, verdict: ReviewVerdict) -> Option<CircuitOpen> {
        let mut state = self.state();
        push_review(&mut state.window, verdict);
        if state.row.0 != turn_id {
            state.row = (turn_id.to_string(), 0);
        }
        match verdict {
            ReviewVerdict::Deny => state.row.1 += 1,
            ReviewVerdict::Allow => state.row.1 = 0,
            ReviewVerdict::Failed | ReviewVerdict::TimedOut => {}
        }
        let in_a_row = state.row.1;
        let in_window = state.window.iter().filter(|denied| **denied).count() as u32;
        if in_a_row >= DENIALS_IN_A_ROW || in_window >= DENIALS_IN_WINDOW {
            state.window.clear();
            state.row.1 = 0;
            return Some(CircuitOpen {
                in_a_row,
                in_window,
            });
        }
        None
    }

    /// Records that the breaker opened in turn `turn_id`: `review.circuit_open`, and the
    /// message for the person (also what the turn ends with).
    pub fn record_open(&self, events: &EventLog, turn_id: &str, open: &CircuitOpen) -> String {
        let message = format!(
            "Auto review paused this turn: the reviewer denied {} call{} in a row here and {} of \
             the session's last {REVIEW_WINDOW} reviewed calls. Look at the denials, allow a call \
             you want run, or say what to do differently, then send a new prompt.",
            open.in_a_row,
            if open.in_a_row == 1 { "" } else { "s" },
            open.in_window
        );
        events.emit(EventBody::ReviewCircuitOpen(ReviewCircuitOpenEvent {
            turn_id: turn_id.to_string(),
            denials_in_a_row: open.in_a_row,
            denials_in_window: open.in_window,
            message: message.clone(),
        }));
        message
    }
}

/// Keeps a grant from the log: a later event for the same grant (its use) replaces it.
fn record_grant(grants: &mut Vec<ReviewGrant>, grant: ReviewGrant) {
    match grants.iter_mut().find(|known| known.id == grant.id) {
        Some(known) => *known = grant,
        None => grants.push(grant),
    }
}

/// Adds a review to the breaker's window, dropping the oldest beyond [`REVIEW_WINDOW`].
fn push_review(window: &mut VecDeque<bool>, verdict: ReviewVerdict) {
    window.push_back(verdict == ReviewVerdict::Deny);
    while window.len() > REVIEW_WINDOW {
        window.pop_front();
    }
}

/// The user's messages for a reviewer: the most recent first, within `budget` bytes; the
/// oldest one kept is cut at a character boundary when it does not fit whole.
pub fn recent_messages(prompts: &[String], budget: usize) -> Vec<String> {
    let mut kept = Vec::new();
    let mut left = budget;
    for prompt in prompts.iter().rev() {
        if left == 0 {
            break;
        }
        if prompt.len() <= left {
            left -= prompt.len();
            kept.push(prompt.clone());
        } else {
            let mut end = left;
            while !prompt.is_char_boundary(end) {
                end -= 1;
            }
            kept.push(format!("{}…", &prompt[..end]));
            break;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Never;

    impl ModelJudge for Never {
        fn model(&self) -> &str {
            "never"
        }
        fn judge<'a>(&'a self, _call: ReviewedCall<'a>) -> BoxFuture<'a, Judgement> {
            Box::pin(std::future::pending())
        }
    }

    fn review() -> AutoReview {
        AutoReview::new(Arc::new(Never), Duration::from_secs(1))
    }

    #[test]
    fn three_denials_in_a_row_in_one_turn_open_the_breaker() {
        let auto = review();
        assert_eq!(auto.count("turn-1", ReviewVerdict::Deny), None);
        assert_eq!(auto.count("turn-1", ReviewVerdict::Deny), None);
        // A new turn starts the row afresh; a failure neither breaks nor extends it.
        assert_eq!(auto.count("turn-2", ReviewVerdict::Deny), None);
        assert_eq!(auto.count("turn-2", ReviewVerdict::Failed), None);
        assert_eq!(auto.count("turn-2", ReviewVerdict::Deny), None);
        assert_eq!(
            auto.count("turn-2", ReviewVerdict::Deny),
            Some(CircuitOpen {
                in_a_row: 3,
                in_window: 5
            })
        );
        assert_eq!(
            auto.count("turn-2", ReviewVerdict::Deny),
            None,
            "a clean slate"
        );
    }

    #[test]
    fn ten_denials_in_the_last_fifty_open_the_breaker() {
        let auto = review();
        for turn in 0..9 {
            let turn = format!("turn-{turn}");
            assert_eq!(auto.count(&turn, ReviewVerdict::Deny), None);
            assert_eq!(auto.count(&turn, ReviewVerdict::Allow), None);
        }
        let open = auto.count("turn-9", ReviewVerdict::Deny).unwrap();
        assert_eq!(open.in_window, 10);
        // Denials older than the window do not count.
        let auto = review();
        for _ in 0..9 {
            auto.count("a", ReviewVerdict::Deny);
            auto.count("a", ReviewVerdict::Allow);
        }
        for _ in 0..REVIEW_WINDOW {
            auto.count("b", ReviewVerdict::Allow);
        }
        assert_eq!(auto.count("c", ReviewVerdict::Deny), None);
    }

    #[test]
    fn a_grant_is_used_once_and_only_by_the_same_tool_and_arguments() {
        let auto = review();
        let log = EventLog::new();
        let args = json!({"command": "git push"});
        let grant = auto.grant(&log, "call_1", "bash", &args);
        assert_eq!(grant.id, "grant-1");
        assert!(
            auto.use_grant(&log, "call_2", "bash", &json!({"command": "git push -f"}))
                .is_none()
        );
        assert!(auto.use_grant(&log, "call_2", "write", &args).is_none());
        let used = auto.use_grant(&log, "call_3", "bash", &args).unwrap();
        assert_eq!(used.used_by.as_deref(), Some("call_3"));
        assert!(auto.use_grant(&log, "call_4", "bash", &args).is_none());
        assert_eq!(log.head(), 2, "the grant and its use are recorded");
    }

    #[test]
    fn grants_and_their_use_come_back_from_the_log() {
        let auto = review();
        let log = EventLog::new();
        let mut events = log.subscribe();
        let args = json!({"path": "a"});
        auto.grant(&log, "call_1", "write", &args);
        auto.grant(&log, "call_2", "write", &args);
        auto.use_grant(&log, "call_3", "write", &args);
        let mut recorded = Vec::new();
        while let Ok(event) = events.try_recv() {
            recorded.push(event);
        }
        let resumed = review();
        resumed.restore(&recorded);
        let grants = resumed.grants();
        assert_eq!(grants.len(), 2);
        assert_eq!(grants[0].used_by.as_deref(), Some("call_3"));
        let used = resumed.use_grant(&log, "call_4", "write", &args).unwrap();
        assert_eq!(used.id, "grant-2");
    }

    #[test]
    fn the_most_recent_messages_come_first_within_the_budget() {
        let prompts = vec!["first".to_string(), "second".into(), "thïrd".into()];
        assert_eq!(
            recent_messages(&prompts, 100),
            vec!["thïrd", "second", "first"]
        );
        assert_eq!(recent_messages(&prompts, 9), vec!["thïrd", "sec…"]);
        assert_eq!(recent_messages(&prompts, 3), vec!["th…"]);
        assert!(recent_messages(&prompts, 0).is_empty());
    }
}
