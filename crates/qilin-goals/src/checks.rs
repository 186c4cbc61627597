//! The one place goals reach the declared checks, and how a run of them decides a `complete`.
//!
//! The checks are the `checks` work of issue 29 (`qilin_checks::CheckService`, a host service
//! on the session). Until that crate is part of this build no session has a check service, so
//! [`declared_checks`] finds none and [`run`] runs none: a `complete` is then taken on the
//! model's word, saying that no check verified it. Merging it changes these two functions
//! alone.

use qilin_protocol::checks::{CheckConclusion, ChecksRunOutput};
use qilin_tool::{Services, ToolContext, ToolResult};

/// The ids of the checks a session with `services` declares, in order (none without a check
/// service, which this build does not have yet).
pub fn declared_checks(services: &Services) -> Vec<String> {
    let _no_check_service_in_this_build = services;
    Vec::new()
}

/// Runs the checks named by `ids` (every declared check when empty) for the call of `cx`;
/// `None` when the session declares no check (always, until the check service is part of this
/// build).
pub(crate) async fn run(cx: &ToolContext, ids: &[String]) -> ToolResult<Option<ChecksRunOutput>> {
    let _no_check_service_in_this_build = (cx, ids);
    Ok(None)
}

/// Whether a `complete` backed by `run` (the goal's checks, `None` when none is declared) is
/// accepted, and what the model is told: accepted unless a check failed (a timeout or a
/// command that did not start is a failure); with no check declared, accepted on the model's
/// word, saying that nothing verified it.
pub fn judge(run: Option<&ChecksRunOutput>) -> (bool, String) {
    let Some(run) = run else {
        return (
            true,
            "Accepted on your word: no checks are declared for this session, so none verified \
             the goal. Checks declared in the agent file (`checks:`) or in `.qilin/checks.yaml` \
             would."
                .to_string(),
        );
    };
    let failed: Vec<String> = run
        .runs
        .iter()
        .filter(|check| check.conclusion == CheckConclusion::Failure)
        .map(|check| format!("`{}` ({})", check.id, check.summary))
        .collect();
    if run.conclusion == CheckConclusion::Failure || !failed.is_empty() {
        return (
            false,
            format!(
                "Not complete: {} of {} checks failed: {}. The goal stays active: fix what \
                 failed, then call goal_update again.",
                failed.len(),
                run.runs.len(),
                failed.join("; ")
            ),
        );
    }
    let neutral = run
        .runs
        .iter()
        .filter(|check| check.conclusion == CheckConclusion::Neutral)
        .count();
    let mut message = format!("Complete: the goal's checks passed ({}).", run.summary);
    if neutral > 0 {
        message.push_str(&format!(
            " {neutral} of them ended neutral and verified nothing."
        ));
    }
    (true, message)
}
