//! How a loop decides after each iteration: the promise marker, the budget, a stall, and the
//! one-sentence outcome each iteration's report carries.

use qilin_protocol::checks::CheckConclusion;
use qilin_protocol::loops::{
    IterationStatus, LoopBudget, LoopIteration, LoopRecord, LoopStopReason,
};
use std::time::Duration;

/// How many iterations in a row that end with the same failure and change no file stall a
/// loop.
pub const STALL_ITERATIONS: usize = 3;

/// What the model writes to promise the work is done: `<promise>TEXT</promise>`.
pub fn promise_marker(promise: &str) -> String {
    format!("<promise>{promise}</promise>")
}

/// Whether `answer` (an iteration's final answer) holds `<promise>TEXT</promise>` whose TEXT is
/// `promise`: exact, except that spaces and line breaks at TEXT's ends are ignored and a run
/// of them inside counts as one space. Only the answer counts: a promise written in a tool
/// call or an earlier step does not.
pub fn promise_seen(answer: &str, promise: &str) -> bool {
    let wanted = squeeze(promise);
    let mut rest = answer;
    while let Some(open) = rest.find("<promise>") {
        let after = &rest[open + "<promise>".len()..];
        let Some(close) = after.find("</promise>") else {
            return false;
        };
        if squeeze(&after[..close]) == wanted {
            return true;
        }
        rest = &after[close + "</promise>".len()..];
    }
    false
}

/// `text` with its whitespace runs made one space and its ends trimmed.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the loop does after an iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Start the next iteration.
    GoOn,
    /// Stop, for this reason.
    Stop(LoopStopReason),
}

/// How an iteration's turn ended, as the runner saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The turn ran to its end (completed, or reached its step or token limit).
    Ran,
    /// The turn ended in an error (the message says which).
    Failed(String),
    /// The loop was stopped during the iteration (the text says by whom).
    Stopped(String),
    /// A budget ran out during the iteration, which was interrupted (the text says which).
    OverBudget(String),
}

/// What of `budget` is spent, in words, by `tokens` and `elapsed`; `None` while it lasts.
pub fn budget_spent(budget: Option<&LoopBudget>, tokens: u64, elapsed: Duration) -> Option<String> {
    let budget = budget?;
    if let Some(bound) = budget.tokens.filter(|&bound| tokens >= bound) {
        return Some(format!(
            "the token budget is spent ({tokens} of {bound} tokens)"
        ));
    }
    if let Some(bound) = budget
        .duration_secs
        .filter(|&bound| elapsed.as_secs() >= bound)
    {
        return Some(format!(
            "the time budget is spent ({} of {bound} s)",
            elapsed.as_secs()
        ));
    }
    None
}

/// Decides after the last iteration of `record` (its report complete: files, checks, promise,
/// tokens; the loop's totals include it), which ended as `ending`, `elapsed` after the loop
/// started. Returns what comes next and the iteration's outcome sentence.
///
/// In order: a stop, a budget cut or a failed turn ends the loop at once; then the checks
/// decide — all of `until.checks` passing stops it (`checks_passed`), and with checks declared
/// a promise alone never does; with no check declared the promise does (`promise_seen`);
/// then a budget spent, a stall ([`STALL_ITERATIONS`] iterations in a row that changed no
/// file and ended with the same failure), and `max_iterations` stop it; otherwise it goes on.
pub fn outcome_of(record: &LoopRecord, ending: &Ending, elapsed: Duration) -> (Next, String) {
    let Some(iteration) = record.iterations.last() else {
        return (
            Next::Stop(LoopStopReason::Failed),
            "no iteration ran".to_string(),
        );
    };
    match ending {
        Ending::Stopped(by) => return (Next::Stop(LoopStopReason::Stopped), by.clone()),
        Ending::OverBudget(spent) => {
            return (
                Next::Stop(LoopStopReason::Budget),
                format!("stopping: {spent}"),
            );
        }
        Ending::Failed(error) => {
            return (
                Next::Stop(LoopStopReason::Failed),
                format!("the iteration's turn failed ({error}); stopping"),
            );
        }
        Ending::Ran => {}
    }
    let has_checks = !record.until.checks.is_empty();
    let failure = match has_checks {
        true => {
            if checks_passed(iteration) {
                return (
                    Next::Stop(LoopStopReason::ChecksPassed),
                    "checks passed".to_string(),
                );
            }
            let mut failure = failing_words(iteration);
            if iteration.promise_seen {
                failure = format!("the promise was written, but {failure}");
            }
            failure
        }
        false => match &record.until.promise {
            Some(_) if iteration.promise_seen => {
                return (
                    Next::Stop(LoopStopReason::PromiseSeen),
                    "promise seen".to_string(),
                );
            }
            Some(_) => "no promise yet".to_string(),
            None => "the iteration ended".to_string(),
        },
    };
    let tokens = record.input_tokens + record.output_tokens;
    if let Some(spent) = budget_spent(record.budget.as_ref(), tokens, elapsed) {
        return (
            Next::Stop(LoopStopReason::Budget),
            format!("{failure}; stopping: {spent}"),
        );
    }
    if stalled(record) {
        return (
            Next::Stop(LoopStopReason::Stalled),
            format!(
                "{failure}; stopping: the same failure {STALL_ITERATIONS} iterations in a row \
                 with no file changed"
            ),
        );
    }
    let ran = record.iterations.len();
    if ran >= record.max_iterations as usize {
        return (
            Next::Stop(LoopStopReason::MaxIterations),
            format!(
                "{failure}; stopping: {ran} of {} iterations ran",
                record.max_iterations
            ),
        );
    }
    (Next::GoOn, format!("{failure}; going on"))
}

/// Whether every check of the iteration passed (at least one ran, none failed or stayed
/// neutral).
fn checks_passed(iteration: &LoopIteration) -> bool {
    !iteration.checks.is_empty()
        && iteration
            .checks
            .iter()
            .all(|check| check.conclusion == CheckConclusion::Success)
}

/// `check unit failed (2 failed)`, `checks unit, lint failed`.
fn failing_words(iteration: &LoopIteration) -> String {
    let failing: Vec<_> = iteration
        .checks
        .iter()
        .filter(|check| check.conclusion != CheckConclusion::Success)
        .collect();
    match failing.as_slice() {
        [] => "no check ran".to_string(),
        [one] => match &one.summary {
            Some(summary) => format!("check {} failed ({summary})", one.id),
            None => format!("check {} failed", one.id),
        },
        many => format!(
            "checks {} failed",
            many.iter()
                .map(|check| check.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What makes two failures the same: the failing checks with their summaries (none when no
/// check is declared: the iteration did not end the loop, which is the failure).
fn failure_signature(iteration: &LoopIteration) -> Vec<(String, Option<String>)> {
    iteration
        .checks
        .iter()
        .filter(|check| check.conclusion != CheckConclusion::Success)
        .map(|check| (check.id.clone(), check.summary.clone()))
        .collect()
}

/// Whether the last [`STALL_ITERATIONS`] iterations all finished, changed no file, did not
/// end the loop, and failed the same way.
fn stalled(record: &LoopRecord) -> bool {
    let iterations = &record.iterations;
    if iterations.len() < STALL_ITERATIONS {
        return false;
    }
    let last = &iterations[iterations.len() - STALL_ITERATIONS..];
    let signature = failure_signature(&last[0]);
    last.iter().all(|iteration| {
        iteration.status == IterationStatus::Finished
            && iteration.files.is_empty()
            && failure_signature(iteration) == signature
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::loops::{FileChange, IterationCheck, LoopStatus, LoopUntil};

    fn iteration(
        number: u32,
        files: usize,
        check: Option<(CheckConclusion, &str)>,
    ) -> LoopIteration {
        LoopIteration {
            number,
            session_id: None,
            status: IterationStatus::Finished,
            started_at: String::new(),
            ended_at: None,
            duration_ms: None,
            files: (0..files)
                .map(|n| FileChange {
                    path: format!("f{n}"),
                    insertions: 1,
                    deletions: 0,
                    change: "added".into(),
                })
                .collect(),
            checks: check
                .map(|(conclusion, summary)| IterationCheck {
                    id: "unit".into(),
                    conclusion,
                    summary: Some(summary.into()),
                })
                .into_iter()
                .collect(),
            input_tokens: 10,
            output_tokens: 5,
            cost_usd: None,
            promise_seen: false,
            outcome: None,
        }
    }

    fn record(
        checks: &[&str],
        promise: Option<&str>,
        iterations: Vec<LoopIteration>,
    ) -> LoopRecord {
        let input_tokens = iterations.iter().map(|i| i.input_tokens).sum();
        let output_tokens = iterations.iter().map(|i| i.output_tokens).sum();
        LoopRecord {
            loop_id: "loop-1".into(),
            prompt: "p".into(),
            until: LoopUntil {
                checks: checks.iter().map(|c| c.to_string()).collect(),
                promise: promise.map(str::to_string),
            },
            max_iterations: 5,
            fresh_context: true,
            budget: None,
            status: LoopStatus::Running,
            stop_reason: None,
            iterations,
            started_at: String::new(),
            ended_at: None,
            input_tokens,
            output_tokens,
            cost_usd: None,
        }
    }

    const FAIL: Option<(CheckConclusion, &str)> = Some((CheckConclusion::Failure, "1 failed"));

    #[test]
    fn the_promise_is_the_exact_marker_in_the_answer() {
        assert!(promise_seen("All done.\n<promise>DONE</promise>", "DONE"));
        assert!(promise_seen(
            "<promise>\n  tests  pass\n</promise>",
            "tests pass"
        ));
        assert!(promise_seen(
            "<promise>no</promise> <promise>DONE</promise>",
            "DONE"
        ));
        assert!(!promise_seen("DONE", "DONE"));
        assert!(!promise_seen("<promise>done</promise>", "DONE"));
        assert!(!promise_seen("<promise>DONE", "DONE"));
        assert!(!promise_seen("<promise>DONE NOW</promise>", "DONE"));
        assert_eq!(promise_marker("DONE"), "<promise>DONE</promise>");
    }

    #[test]
    fn checks_decide_when_declared_and_the_promise_alone_does_not() {
        let passed = record(
            &["unit"],
            None,
            vec![iteration(1, 1, Some((CheckConclusion::Success, "ok")))],
        );
        assert_eq!(
            outcome_of(&passed, &Ending::Ran, Duration::ZERO),
            (
                Next::Stop(LoopStopReason::ChecksPassed),
                "checks passed".into()
            )
        );
        let mut promised = iteration(1, 1, FAIL);
        promised.promise_seen = true;
        let failing = record(&["unit"], Some("DONE"), vec![promised]);
        let (next, outcome) = outcome_of(&failing, &Ending::Ran, Duration::ZERO);
        assert_eq!(next, Next::GoOn);
        assert_eq!(
            outcome,
            "the promise was written, but check unit failed (1 failed); going on"
        );
        let mut promised = iteration(1, 0, None);
        promised.promise_seen = true;
        let only_promise = record(&[], Some("DONE"), vec![promised]);
        assert_eq!(
            outcome_of(&only_promise, &Ending::Ran, Duration::ZERO).0,
            Next::Stop(LoopStopReason::PromiseSeen)
        );
    }

    #[test]
    fn three_unchanged_identical_failures_stall_and_a_change_resets() {
        let stalled = record(
            &["unit"],
            None,
            vec![
                iteration(1, 0, FAIL),
                iteration(2, 0, FAIL),
                iteration(3, 0, FAIL),
            ],
        );
        let (next, outcome) = outcome_of(&stalled, &Ending::Ran, Duration::ZERO);
        assert_eq!(next, Next::Stop(LoopStopReason::Stalled), "{outcome}");
        let changed = record(
            &["unit"],
            None,
            vec![
                iteration(1, 0, FAIL),
                iteration(2, 1, FAIL),
                iteration(3, 0, FAIL),
            ],
        );
        assert_eq!(
            outcome_of(&changed, &Ending::Ran, Duration::ZERO).0,
            Next::GoOn
        );
        let other = record(
            &["unit"],
            None,
            vec![
                iteration(1, 0, FAIL),
                iteration(2, 0, Some((CheckConclusion::Failure, "2 failed"))),
                iteration(3, 0, FAIL),
            ],
        );
        assert_eq!(
            outcome_of(&other, &Ending::Ran, Duration::ZERO).0,
            Next::GoOn
        );
    }

    #[test]
    fn the_bounds_stop_the_loop() {
        let mut full = record(
            &["unit"],
            None,
            (1..=5).map(|n| iteration(n, 1, FAIL)).collect(),
        );
        let (next, outcome) = outcome_of(&full, &Ending::Ran, Duration::ZERO);
        assert_eq!(next, Next::Stop(LoopStopReason::MaxIterations));
        assert!(
            outcome.ends_with("stopping: 5 of 5 iterations ran"),
            "{outcome}"
        );
        full.iterations.truncate(1);
        (full.input_tokens, full.output_tokens) = (10, 5);
        full.budget = Some(LoopBudget {
            tokens: Some(10),
            ..LoopBudget::default()
        });
        let (next, outcome) = outcome_of(&full, &Ending::Ran, Duration::ZERO);
        assert_eq!(next, Next::Stop(LoopStopReason::Budget));
        assert!(
            outcome.contains("token budget is spent (15 of 10 tokens)"),
            "{outcome}"
        );
        let stopped = outcome_of(
            &full,
            &Ending::Stopped("stopped by loop_stop".into()),
            Duration::ZERO,
        );
        assert_eq!(
            stopped,
            (
                Next::Stop(LoopStopReason::Stopped),
                "stopped by loop_stop".into()
            )
        );
    }
}
