//! Loops: the same prompt run again and again, each iteration in a fresh child session (or, with
//! `freshContext: false`, as the next turn of one child session compacted in between), until
//! the declared checks pass (or the model writes the promised marker), a bound is reached, the
//! work stalls or a person stops it.
//!
//! A loop's state lives in the starting session's log only: `loop.started` records it,
//! `loop.iteration` records each iteration when it starts (status running) and again with its
//! report when it ends (same `number`), and `loop.finished` records the whole loop when it stops.
//! Folding those events by `loopId` gives the loop; nothing the model can edit holds it.

use crate::checks::CheckConclusion;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// When a loop is done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoopUntil {
    /// The ids of the declared checks that must all pass after an iteration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub checks: Vec<String>,
    /// The text the model writes as `<promise>TEXT</promise>` in an iteration's final answer
    /// when it judges the work done. With checks declared too, the loop stops only when the
    /// checks pass; the promise alone decides only when no check is declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1), regex(pattern = crate::api::NOT_BLANK))]
    #[ts(optional)]
    pub promise: Option<String>,
}

/// What a loop may spend over all its iterations; an absent bound is no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoopBudget {
    /// Tokens (input and output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    #[ts(optional, type = "number")]
    pub tokens: Option<u64>,
    /// Cost in US dollars. Refused when a loop starts: usage counts tokens only, and prices are
    /// known only to the terminal's display, never to the runtime running the loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
    /// Seconds of wall time since the loop started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    #[ts(optional, type = "number")]
    pub duration_secs: Option<u64>,
}

/// Whether a loop still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum LoopStatus {
    /// An iteration runs or the next one is about to start.
    Running,
    /// It stopped; `stopReason` says why.
    Finished,
}

/// Why a loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum LoopStopReason {
    /// Every check of `until.checks` passed after an iteration.
    ChecksPassed,
    /// The iteration's final answer held the promise (and no check is declared).
    PromiseSeen,
    /// `maxIterations` iterations ran without the loop being done.
    MaxIterations,
    /// A bound of its budget (tokens, cost or time) was reached.
    Budget,
    /// Three iterations in a row changed no file and ended with the same failing checks.
    Stalled,
    /// A person (or the model, with `loop_stop`) stopped it.
    Stopped,
    /// An iteration failed (its turn ended in an error) or the loop could not go on.
    Failed,
}

impl LoopStopReason {
    /// The reason's wire name (`checks_passed`, `max_iterations`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LoopStopReason::ChecksPassed => "checks_passed",
            LoopStopReason::PromiseSeen => "promise_seen",
            LoopStopReason::MaxIterations => "max_iterations",
            LoopStopReason::Budget => "budget",
            LoopStopReason::Stalled => "stalled",
            LoopStopReason::Stopped => "stopped",
            LoopStopReason::Failed => "failed",
        }
    }
}

/// Where one iteration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum IterationStatus {
    /// Its turn runs (or its checks do).
    Running,
    /// Its turn ended and its report is complete.
    Finished,
    /// It was cut short: stopped mid-turn, or the process running it stopped.
    Interrupted,
    /// Its turn ended in an error.
    Failed,
}

impl IterationStatus {
    /// The status's wire name (`running`, `finished`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            IterationStatus::Running => "running",
            IterationStatus::Finished => "finished",
            IterationStatus::Interrupted => "interrupted",
            IterationStatus::Failed => "failed",
        }
    }
}

/// One file an iteration changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The path, relative to the workspace, with `/` separators.
    pub path: String,
    /// Lines added (0 when only file hashes were compared, or for a binary file).
    pub insertions: u32,
    /// Lines removed (0 when only file hashes were compared, or for a binary file).
    pub deletions: u32,
    /// `added`, `modified` or `deleted`.
    pub change: String,
}

/// One check's conclusion after an iteration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct IterationCheck {
    /// The check's id.
    pub id: String,
    /// Whether it passed.
    pub conclusion: CheckConclusion,
    /// Its one-line summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub summary: Option<String>,
}

/// One iteration and its report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoopIteration {
    /// Its number, from 1.
    pub number: u32,
    /// The child session its turn ran in: a fresh one per iteration, or, with `freshContext:
    /// false`, the loop's one session, the same for every iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    /// Where it stands.
    pub status: IterationStatus,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    /// When it ended, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ended_at: Option<String>,
    /// How long it took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub duration_ms: Option<u64>,
    /// What it changed in the workspace (a git diff stat when the workspace is a repository,
    /// else a comparison of file hashes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<FileChange>>", optional)]
    pub files: Vec<FileChange>,
    /// The conclusions of the loop's checks after it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<IterationCheck>>", optional)]
    pub checks: Vec<IterationCheck>,
    /// Input tokens of its turn (and of the compaction before it, with `freshContext: false`).
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Output tokens of its turn (and of the compaction before it, with `freshContext: false`).
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Its cost in US dollars, when the runtime knows the model's price (it never does yet:
    /// prices are the terminal's display setting), else absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
    /// Whether its final answer held the promise.
    pub promise_seen: bool,
    /// Why the loop goes on or stops after it, one sentence; set when it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<String>,
}

impl LoopIteration {
    /// The iteration's report as one line: number, files changed, checks, tokens, duration and
    /// outcome (`#2 · 1 file (+3 −1) · unit failed · 1,234 tokens · 4.2s · check unit failed;
    /// going on`). The terminal prints one per iteration.
    pub fn one_line(&self) -> String {
        let mut parts = vec![format!("#{}", self.number)];
        if self.status == IterationStatus::Running {
            parts.push("running".to_owned());
            return parts.join(" · ");
        }
        let insertions: u32 = self.files.iter().map(|file| file.insertions).sum();
        let deletions: u32 = self.files.iter().map(|file| file.deletions).sum();
        parts.push(match self.files.len() {
            0 => "no files changed".to_owned(),
            1 => format!("1 file (+{insertions} −{deletions})"),
            count => format!("{count} files (+{insertions} −{deletions})"),
        });
        if !self.checks.is_empty() {
            let checks: Vec<String> = self
                .checks
                .iter()
                .map(|check| match check.conclusion {
                    CheckConclusion::Success => format!("{} passed", check.id),
                    CheckConclusion::Failure => format!("{} failed", check.id),
                    CheckConclusion::Neutral => format!("{} neutral", check.id),
                })
                .collect();
            parts.push(checks.join(", "));
        }
        parts.push(format!(
            "{} tokens",
            thousands(self.input_tokens + self.output_tokens)
        ));
        if let Some(ms) = self.duration_ms {
            parts.push(format!("{:.1}s", ms as f64 / 1000.0));
        }
        let status = match self.status {
            IterationStatus::Interrupted => Some("interrupted"),
            IterationStatus::Failed => Some("failed"),
            IterationStatus::Running | IterationStatus::Finished => None,
        };
        match (status, &self.outcome) {
            (_, Some(outcome)) => parts.push(outcome.clone()),
            (Some(status), None) => parts.push(status.to_owned()),
            (None, None) => {}
        }
        parts.join(" · ")
    }
}

/// `1234567` as `1,234,567`.
fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A loop and where it stands: what the loop tools return and the loop events record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoopRecord {
    /// The loop's id, unique in its session.
    pub loop_id: String,
    /// The prompt every iteration gets.
    pub prompt: String,
    /// When it is done.
    pub until: LoopUntil,
    /// The most iterations it runs.
    pub max_iterations: u32,
    /// Whether each iteration runs in a fresh child session; `false` when every iteration is
    /// the next turn of one child session of the loop, compacted before each iteration after
    /// the first.
    pub fresh_context: bool,
    /// What it may spend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub budget: Option<LoopBudget>,
    /// Whether it still runs.
    pub status: LoopStatus,
    /// Why it stopped, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stop_reason: Option<LoopStopReason>,
    /// Its iterations so far, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<LoopIteration>>", optional)]
    pub iterations: Vec<LoopIteration>,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    /// When it stopped, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ended_at: Option<String>,
    /// Input tokens of all its iterations.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Output tokens of all its iterations.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// The cost of all its iterations in US dollars, when every price was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
}

/// The `loop.started` event: a loop began (in the starting session's log).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoopStartedEvent {
    /// The loop as started.
    #[serde(rename = "loop")]
    #[ts(rename = "loop")]
    pub record: LoopRecord,
}

/// The `loop.iteration` event: an iteration started (status running) or ended (with its
/// report); both carry the same `number`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoopIterationEvent {
    /// The loop's id.
    pub loop_id: String,
    /// The iteration as it stands.
    pub iteration: LoopIteration,
}

/// The `loop.finished` event: a loop stopped; `loop` is its whole final state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoopFinishedEvent {
    /// The loop as it ended.
    #[serde(rename = "loop")]
    #[ts(rename = "loop")]
    pub record: LoopRecord,
}

/// `loop_start`'s arguments and the body of `POST /api/sessions/{id}/loops`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartLoop {
    /// The prompt every iteration gets (not only spaces).
    #[schemars(length(min = 1), regex(pattern = crate::api::NOT_BLANK))]
    pub prompt: String,
    /// When the loop is done: checks that must pass, a promise the model may write, or both.
    #[serde(deserialize_with = "an_object")]
    pub until: LoopUntil,
    /// The most iterations to run (1 to 100).
    #[schemars(range(min = 1, max = 100))]
    pub max_iterations: u32,
    /// Whether each iteration runs in a fresh child session (`true`, the default); `false` runs
    /// every iteration as the next turn of one child session of the loop, compacted before
    /// each iteration after the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fresh_context: Option<bool>,
    /// What the loop may spend.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "an_object"
    )]
    #[ts(optional)]
    pub budget: Option<LoopBudget>,
}

/// Reads `T` only from a JSON object (or, for an optional `T`, `null`): serde would otherwise
/// take a struct from an array of its fields in order, which the API's schema does not allow.
fn an_object<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    if value.is_array() {
        return Err(serde::de::Error::custom(
            "expected an object (a map of named fields), not an array",
        ));
    }
    serde_json::from_value(value).map_err(serde::de::Error::custom)
}

/// `loop_stop`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StopLoop {
    /// The loop's id, as `loop_start` returned it.
    pub id: String,
}

/// `loop_status`'s arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoopStatusQuery {
    /// One loop's id; every loop of the session when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub id: Option<String>,
}

/// What `loop_start` and `loop_stop` return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoopOutput {
    /// The loop as it stands.
    #[serde(rename = "loop")]
    #[ts(rename = "loop")]
    pub record: LoopRecord,
}

/// What `loop_status` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoopStatusOutput {
    /// The loops asked for, oldest first.
    pub loops: Vec<LoopRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_loop_reads_the_shapes_wire_form_and_refuses_unknown_fields() {
        let start: StartLoop = serde_json::from_str(
            r#"{"prompt":"fix it","until":{"checks":["unit"],"promise":"DONE"},"maxIterations":5,
                "budget":{"tokens":1000,"costUsd":0.5,"durationSecs":60}}"#,
        )
        .unwrap();
        assert_eq!(start.until.checks, ["unit"]);
        assert_eq!(start.budget.unwrap().cost_usd, Some(0.5));
        let listed = r#"{"prompt":"x","until":[[]],"maxIterations":1,"budget":[null,null]}"#;
        let error = serde_json::from_str::<StartLoop>(listed).unwrap_err();
        assert!(error.to_string().contains("not an array"), "{error}");
        let listed = r#"{"prompt":"x","until":{},"maxIterations":1,"budget":[null,null]}"#;
        let error = serde_json::from_str::<StartLoop>(listed).unwrap_err();
        assert!(error.to_string().contains("not an array"), "{error}");
        let bad = r#"{"prompt":"x","until":{},"maxIterations":1,"max":3}"#;
        let error = serde_json::from_str::<StartLoop>(bad).unwrap_err();
        assert!(error.to_string().contains("max"), "{error}");
    }

    #[test]
    fn the_record_is_written_under_loop() {
        let record = LoopRecord {
            loop_id: "loop-1".into(),
            prompt: "p".into(),
            until: LoopUntil::default(),
            max_iterations: 3,
            fresh_context: true,
            budget: None,
            status: LoopStatus::Running,
            stop_reason: None,
            iterations: Vec::new(),
            started_at: "2026-01-01T00:00:00Z".into(),
            ended_at: None,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
        };
        let json = serde_json::to_value(LoopOutput { record }).unwrap();
        assert_eq!(json["loop"]["loopId"], "loop-1");
        assert_eq!(json["loop"]["maxIterations"], 3);
        assert!(json["loop"].get("iterations").is_none());
    }

    #[test]
    fn an_iteration_reads_as_one_line() {
        let iteration = LoopIteration {
            number: 2,
            session_id: Some("s-2".into()),
            status: IterationStatus::Finished,
            started_at: "2026-01-01T00:00:00Z".into(),
            ended_at: Some("2026-01-01T00:00:04Z".into()),
            duration_ms: Some(4_200),
            files: vec![FileChange {
                path: "src/lib.rs".into(),
                insertions: 3,
                deletions: 1,
                change: "modified".into(),
            }],
            checks: vec![IterationCheck {
                id: "unit".into(),
                conclusion: CheckConclusion::Failure,
                summary: Some("2 failed".into()),
            }],
            input_tokens: 1_000,
            output_tokens: 234,
            cost_usd: None,
            promise_seen: false,
            outcome: Some("check unit failed (2 failed); going on".into()),
        };
        assert_eq!(
            iteration.one_line(),
            "#2 · 1 file (+3 −1) · unit failed · 1,234 tokens · 4.2s · \
             check unit failed (2 failed); going on"
        );
    }
}
