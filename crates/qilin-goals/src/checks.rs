//! The one place goals reach the declared checks (`qilin_checks::CheckService`, the session's
//! host service `checks_run` uses too), and how a run of them decides a `complete`.

use qilin_checks::CheckService;
use qilin_protocol::checks::{CheckConclusion, ChecksRunOutput};
use qilin_tool::{Services, ToolContext, ToolResult};

/// The ids of the checks a session with `services` declares, in order (none without a check
/// service).
pub fn declared_checks(services: &Services) -> Vec<String> {
    services
        .get::<CheckService>()
        .map(|service| service.ids())
        .unwrap_or_default()
}

/// Runs the checks named by `ids` (every declared check when empty) for the call of `cx`;
/// `None` when the session declares no check.
pub(crate) async fn run(cx: &ToolContext, ids: &[String]) -> ToolResult<Option<ChecksRunOutput>> {
    let Ok(service) = CheckService::of(cx) else {
        return Ok(None);
    };
    if service.ids().is_empty() {
        return Ok(None);
    }
    let ids = (!ids.is_empty()).then_some(ids);
    service.run(cx, ids).await.map(Some)
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
