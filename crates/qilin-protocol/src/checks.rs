//! Declared checks: what `checks_run` returns.
//!
//! A check is a command declared once (in an agent file's `checks:` or the workspace's
//! `.qilin/checks.yaml`) that verifies the work: a test suite, a linter, a type checker. Each
//! run is shaped like a CI check run: a [`CheckStatus`] (did it run to the end), a
//! [`CheckConclusion`] (did it pass), a one-line summary and [`CheckAnnotation`]s (the
//! diagnostics its output names, with their paths and lines). A timeout or a command that could
//! not start is always a failure, never a success.

use crate::SpillNotice;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Whether a check's command ran to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// The command ran and exited (its exit code decides, with its output, the conclusion).
    Completed,
    /// The check's timeout ran out and its process group was killed.
    TimedOut,
    /// The command could not be started (the shell could not run, or it found no such
    /// command or could not execute it).
    FailedToStart,
}

impl CheckStatus {
    /// The status's wire name (`completed`, `timed_out`, `failed_to_start`).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Completed => "completed",
            CheckStatus::TimedOut => "timed_out",
            CheckStatus::FailedToStart => "failed_to_start",
        }
    }
}

/// Whether a check passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum CheckConclusion {
    /// It completed and found nothing wrong.
    Success,
    /// It found something wrong, timed out, or could not start.
    Failure,
    /// It decided nothing (no check ran).
    Neutral,
}

impl CheckConclusion {
    /// The conclusion's wire name (`success`, `failure`, `neutral`).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckConclusion::Success => "success",
            CheckConclusion::Failure => "failure",
            CheckConclusion::Neutral => "neutral",
        }
    }
}

/// How serious an annotation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum AnnotationLevel {
    /// An error: a failing test, a compile error, a type error.
    Error,
    /// A warning.
    Warning,
    /// A remark worth reading that is neither.
    Notice,
}

impl AnnotationLevel {
    /// The level's wire name (`error`, `warning`, `notice`).
    pub fn as_str(self) -> &'static str {
        match self {
            AnnotationLevel::Error => "error",
            AnnotationLevel::Warning => "warning",
            AnnotationLevel::Notice => "notice",
        }
    }
}

/// One diagnostic a check's output names: where, how serious, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckAnnotation {
    /// The file, relative to the workspace when inside it, else as the tool printed it.
    pub path: String,
    /// The line, counted from 1, when the tool named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<u32>,
    /// The column, counted from 1, when the tool named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub column: Option<u32>,
    /// How serious it is.
    pub level: AnnotationLevel,
    /// What is wrong, on one line (the first line of a longer message), capped.
    pub message: String,
}

/// One run of one declared check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckRun {
    /// The check's id, as declared.
    pub id: String,
    /// What the check verifies, as declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// The command that ran (`bash -c`, in the workspace root, in the session's sandbox).
    pub command: String,
    /// Whether the command ran to its end.
    pub status: CheckStatus,
    /// Whether the check passed; a timeout or a failed start is always `failure`.
    pub conclusion: CheckConclusion,
    /// Wall time in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// One line: `12 tests passed`, `2 errors, 1 warning`, `timed out after 60 s`.
    pub summary: String,
    /// The diagnostics parsed from the output, at most [`MAX_ANNOTATIONS`], errors first.
    pub annotations: Vec<CheckAnnotation>,
    /// How many annotations were left out past the cap.
    pub omitted_annotations: u32,
    /// The command's combined stdout and stderr; when long, its head and tail with the spill
    /// notice naming the file that holds all of it.
    pub output: String,
    /// Where the whole output was saved, when `output` was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub spill: Option<SpillNotice>,
    /// True when this result is an earlier run's, returned because neither the command nor a
    /// file the check reads has changed since.
    pub cached: bool,
    /// When the run started, RFC 3339 in UTC.
    pub started_at: String,
    /// The command's exit code; absent when it timed out, did not start, or a signal ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit_code: Option<i32>,
}

/// The most annotations one [`CheckRun`] carries; the rest are counted in
/// [`CheckRun::omitted_annotations`].
pub const MAX_ANNOTATIONS: usize = 50;

/// What `checks_run` returns: the runs, and what they conclude together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChecksRunOutput {
    /// One run per check asked for, in declaration order.
    pub runs: Vec<CheckRun>,
    /// `failure` when any run failed, else `success` when any passed, else `neutral`.
    pub conclusion: CheckConclusion,
    /// One line: `3 checks: 2 passed, 1 failed`.
    pub summary: String,
}

impl ChecksRunOutput {
    /// The output for `runs`, with their joint conclusion and summary.
    pub fn from_runs(runs: Vec<CheckRun>) -> Self {
        let count = |conclusion| runs.iter().filter(|r| r.conclusion == conclusion).count();
        let (passed, failed, neutral) = (
            count(CheckConclusion::Success),
            count(CheckConclusion::Failure),
            count(CheckConclusion::Neutral),
        );
        let conclusion = if failed > 0 {
            CheckConclusion::Failure
        } else if passed > 0 {
            CheckConclusion::Success
        } else {
            CheckConclusion::Neutral
        };
        let mut parts = Vec::new();
        if passed > 0 {
            parts.push(format!("{passed} passed"));
        }
        if failed > 0 {
            parts.push(format!("{failed} failed"));
        }
        if neutral > 0 {
            parts.push(format!("{neutral} neutral"));
        }
        let noun = if runs.len() == 1 { "check" } else { "checks" };
        let summary = if parts.is_empty() {
            format!("{} {noun}", runs.len())
        } else {
            format!("{} {noun}: {}", runs.len(), parts.join(", "))
        };
        ChecksRunOutput {
            runs,
            conclusion,
            summary,
        }
    }

    /// The ids of the runs that failed, in declaration order.
    pub fn failed_ids(&self) -> Vec<&str> {
        self.runs
            .iter()
            .filter(|run| run.conclusion == CheckConclusion::Failure)
            .map(|run| run.id.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, conclusion: CheckConclusion) -> CheckRun {
        CheckRun {
            id: id.into(),
            description: None,
            command: "true".into(),
            status: CheckStatus::Completed,
            conclusion,
            duration_ms: 5,
            summary: "ok".into(),
            annotations: Vec::new(),
            omitted_annotations: 0,
            output: String::new(),
            spill: None,
            cached: false,
            started_at: "2026-01-01T00:00:00Z".into(),
            exit_code: Some(0),
        }
    }

    #[test]
    fn one_failure_fails_the_whole_run() {
        let output = ChecksRunOutput::from_runs(vec![
            run("test", CheckConclusion::Success),
            run("lint", CheckConclusion::Failure),
            run("fmt", CheckConclusion::Success),
        ]);
        assert_eq!(output.conclusion, CheckConclusion::Failure);
        assert_eq!(output.summary, "3 checks: 2 passed, 1 failed");
        assert_eq!(output.failed_ids(), ["lint"]);
    }

    #[test]
    fn no_run_is_neutral() {
        let output = ChecksRunOutput::from_runs(Vec::new());
        assert_eq!(output.conclusion, CheckConclusion::Neutral);
        assert_eq!(output.summary, "0 checks");
        let one = ChecksRunOutput::from_runs(vec![run("test", CheckConclusion::Success)]);
        assert_eq!(one.conclusion, CheckConclusion::Success);
        assert_eq!(one.summary, "1 check: 1 passed");
    }

    #[test]
    fn the_wire_form_is_camel_case_with_snake_case_enums() {
        let mut timed_out = run("test", CheckConclusion::Failure);
        timed_out.status = CheckStatus::TimedOut;
        timed_out.exit_code = None;
        timed_out.spill = Some(SpillNotice {
            path: "/data/spill/x.txt".into(),
            total_bytes: 99_000,
        });
        let json = serde_json::to_value(&timed_out).unwrap();
        assert_eq!(json["status"], "timed_out");
        assert_eq!(json["conclusion"], "failure");
        assert_eq!(json["durationMs"], 5);
        assert_eq!(json["omittedAnnotations"], 0);
        assert_eq!(json["spill"]["totalBytes"], 99_000);
        assert!(json.get("exitCode").is_none());
        let back: CheckRun = serde_json::from_value(json).unwrap();
        assert_eq!(back, timed_out);
    }
}
