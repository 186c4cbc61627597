//! The shared task list of a team: the lead (a session that started named background children,
//! its teammates) and its teammates plan and divide work in one list.
//!
//! The list lives in the lead's log only: `task.created` records a new task and `task.updated`
//! the whole new state of a changed one, whoever of the team made the change — so the list is
//! folded from those events, across a restart too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Someone works on it.
    InProgress,
    /// Done.
    Completed,
    /// Dropped.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task still blocks the tasks waiting on it (pending or in progress).
    pub fn open(self) -> bool {
        matches!(self, TaskStatus::Pending | TaskStatus::InProgress)
    }

    /// The status's wire name (`pending`, `in_progress`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// A note on a task: progress, a finding, why it is blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskNote {
    /// Who wrote it: `lead` or a teammate's name.
    pub by: String,
    /// The note.
    pub text: String,
    /// When, RFC 3339 UTC.
    pub at: String,
}

/// One task of a team's list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// Its id: `1`, `2`, … in creation order within the team.
    pub id: String,
    /// What to do, in a line.
    pub title: String,
    /// More about it, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// Where it stands.
    pub status: TaskStatus,
    /// Who does it: `lead` or a teammate's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub assignee: Option<String>,
    /// The ids of the tasks it waits for: it cannot go `in_progress` while one is open.
    #[serde(default)]
    pub blocked_by: Vec<String>,
    /// Notes, oldest first.
    #[serde(default)]
    pub notes: Vec<TaskNote>,
    /// Who created it: `lead` or a teammate's name.
    pub created_by: String,
    /// When it was created, RFC 3339 UTC.
    pub created_at: String,
    /// When it last changed, RFC 3339 UTC.
    pub updated_at: String,
}

/// The `task.created` event, in the lead's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskCreatedEvent {
    /// The new task.
    pub task: TaskRecord,
    /// Who created it: `lead` or a teammate's name.
    pub by: String,
}

/// The `task.updated` event, in the lead's log: the task's whole new state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskUpdatedEvent {
    /// The task as it is now.
    pub task: TaskRecord,
    /// Who changed it: `lead` or a teammate's name.
    pub by: String,
}

/// What `task_create` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskCreateOutput {
    /// The new task.
    pub task: TaskRecord,
}

/// What `task_update` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskUpdateOutput {
    /// The task as it is now.
    pub task: TaskRecord,
    /// The task as it was before the change.
    pub previous: TaskRecord,
}

/// What `task_list` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskListOutput {
    /// The team's tasks, in creation order.
    pub tasks: Vec<TaskRecord>,
}
