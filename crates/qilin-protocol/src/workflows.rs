//! Workflows: Python files in `.qilin/workflows/NAME.py` run on the code-mode engine, calling
//! tools in sequence and in parallel and adding sections to a report.
//!
//! A run is recorded in the session's log: `workflow.started` with the run as it began,
//! `workflow.step` for each step (a call step when it starts and again when it ends, under the
//! same index; a report section once), and `workflow.finished` with the whole run as it ended.
//! `workflow_run`, `workflow_status` and `workflow_stop` return [`WorkflowRun`]s.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a workflow run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum WorkflowStatus {
    /// The script is running.
    Running,
    /// The script ran to its end; `result` holds its final value.
    Completed,
    /// The script raised an error, a step it awaited failed, or a limit was reached.
    Failed,
    /// Someone stopped it with `workflow_stop`; its running calls ended `interrupted`.
    Stopped,
    /// The turn or the process running it ended before the script did.
    Interrupted,
}

impl WorkflowStatus {
    /// Whether the run is over.
    pub fn finished(self) -> bool {
        self != WorkflowStatus::Running
    }

    /// The status's wire name (`running`, `completed`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            WorkflowStatus::Running => "running",
            WorkflowStatus::Completed => "completed",
            WorkflowStatus::Failed => "failed",
            WorkflowStatus::Stopped => "stopped",
            WorkflowStatus::Interrupted => "interrupted",
        }
    }
}

/// What a step of a workflow run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum WorkflowStepKind {
    /// A tool call the script made (`sdk.tool.call` or `call_async`).
    Call,
    /// A report section the script added (`sdk.report(title, text)`).
    Report,
}

/// One step of a workflow run: a call the script made, or a report section it added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowStep {
    /// The step's position, 0-based, in the order the script made the steps.
    pub index: u32,
    /// A call or a report section.
    pub kind: WorkflowStepKind,
    /// For a call: the nested call's id (its card nests under the `workflow_run` card).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub call_id: Option<String>,
    /// For a call: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool: Option<String>,
    /// For a call: `running`, `ok`, `error`, `denied` or `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub status: Option<String>,
    /// For a call, a short label (the agent's description, else the tool's name); for a
    /// report section, its title.
    pub title: String,
    /// For a report section: its Markdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    /// For a call: its result came from the call journal after a restart, not a new run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub replayed: bool,
    /// When the step was made (a call: when it started), RFC 3339 UTC.
    pub at: String,
}

/// A workflow run and where it stands: what the workflow tools return and the workflow events
/// record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowRun {
    /// The run's id, unique in its session.
    pub run_id: String,
    /// The `workflow_run` call that started it: its calls nest under that call, and a run
    /// resumed after a restart replays the journal kept under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub call_id: Option<String>,
    /// The workflow's name: its file's name without `.py`.
    pub workflow: String,
    /// The workflow's description, from its front matter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// The arguments the run was given, defaults filled in.
    #[ts(type = "unknown")]
    pub args: serde_json::Value,
    /// Where it stands.
    pub status: WorkflowStatus,
    /// It runs in the background: `workflow_run` returned at once, and the model is told
    /// between its steps when the run ends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub background: bool,
    /// Its steps so far, by index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<WorkflowStep>>", optional)]
    pub steps: Vec<WorkflowStep>,
    /// The script's final value, when it completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub result: Option<serde_json::Value>,
    /// Why it failed, stopped or was interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    /// When it ended, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ended_at: Option<String>,
    /// How long it ran, in milliseconds, once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub duration_ms: Option<u64>,
}

/// The `workflow.started` event: a run began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowStartedEvent {
    /// The run as it began (status running, no steps).
    pub run: WorkflowRun,
}

/// The `workflow.step` event: a step was made, or a call step ended (same index again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowStepEvent {
    /// The run the step belongs to.
    pub run_id: String,
    /// The step as it is now.
    pub step: WorkflowStep,
}

/// The `workflow.finished` event: a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowFinishedEvent {
    /// The whole run as it ended.
    pub run: WorkflowRun,
}

/// What `workflow_run` and `workflow_stop` return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowRunOutput {
    /// The run: finished for a foreground `workflow_run`, running for a background one.
    pub run: WorkflowRun,
}

/// What `workflow_status` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowStatusOutput {
    /// The session's runs, oldest first (only the one asked for, when an id was given).
    pub runs: Vec<WorkflowRun>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_camel_case_with_empty_fields_left_out() {
        let run = WorkflowRun {
            run_id: "wf1".into(),
            call_id: None,
            workflow: "review".into(),
            description: None,
            args: serde_json::json!({"path": "src"}),
            status: WorkflowStatus::Running,
            background: false,
            steps: vec![WorkflowStep {
                index: 0,
                kind: WorkflowStepKind::Report,
                call_id: None,
                tool: None,
                status: None,
                title: "Summary".into(),
                text: Some("all good".into()),
                replayed: false,
                at: "2026-01-01T00:00:00Z".into(),
            }],
            result: None,
            error: None,
            started_at: "2026-01-01T00:00:00Z".into(),
            ended_at: None,
            duration_ms: None,
        };
        let wire = serde_json::to_value(&run).unwrap();
        assert_eq!(
            wire,
            serde_json::json!({
                "runId": "wf1", "workflow": "review", "args": {"path": "src"},
                "status": "running", "startedAt": "2026-01-01T00:00:00Z",
                "steps": [{"index": 0, "kind": "report", "title": "Summary",
                           "text": "all good", "at": "2026-01-01T00:00:00Z"}]
            })
        );
        let back: WorkflowRun = serde_json::from_value(wire).unwrap();
        assert_eq!(back, run);
    }
}
