//! The team's task list: `task_create`, `task_update` and `task_list`. Each checks its
//! arguments, asks the [`crate::Subagents`] service (the lead's children keep the list), and
//! presents the call.

use crate::tools::{not_blank, one_line};
use crate::{NewTask, SubagentService, TaskChange};
use qilin_protocol::tasks::{
    TaskCreateOutput, TaskListOutput, TaskRecord, TaskStatus, TaskUpdateOutput,
};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;

/// Add a task to your team's shared task list (the lead and its teammates see the same list).
/// Returns the task with its id (`1`, `2`, … in creation order).
#[derive(qilin_tool::Tool)]
#[tool(name = "task_create")]
pub struct TaskCreate;

/// Arguments of `task_create`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TaskCreateArgs {
    /// What to do, in a line.
    pub title: String,
    /// More about it: where, what done means.
    #[serde(default)]
    pub description: Option<String>,
    /// Who does it: `lead` or a teammate's name.
    #[serde(default)]
    pub assignee: Option<String>,
    /// The ids of the tasks it waits for: it cannot start while one of them is open.
    #[serde(default)]
    pub blocked_by: Option<Vec<String>>,
}

impl Tool for TaskCreate {
    type Args = TaskCreateArgs;
    type Output = TaskCreateOutput;

    fn prompt_hint(&self) -> &str {
        "Use task_create to plan a team's work: one task per piece a teammate (or the lead) can \
         do on its own, assigned by name, with `blockedBy` for the tasks it needs first."
    }

    fn present(&self, args: &TaskCreateArgs) -> CallPresentation {
        CallPresentation::new("Create task", one_line(&args.title, 80))
    }

    fn before_detail(&self, _args: &TaskCreateArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &TaskCreateArgs,
        result: &ToolResult<TaskCreateOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, args: TaskCreateArgs, cx: &ToolContext) -> ToolResult<TaskCreateOutput> {
        let tasks = SubagentService::of(cx)?;
        not_blank("title", &args.title)?;
        let blocked_by: Vec<String> = args
            .blocked_by
            .unwrap_or_default()
            .iter()
            .map(|id| id.trim().to_string())
            .collect();
        tasks.task_create(
            cx,
            NewTask {
                title: args.title.trim().to_string(),
                description: args
                    .description
                    .map(|text| text.trim().to_string())
                    .filter(|text| !text.is_empty()),
                assignee: args.assignee.map(|name| name.trim().to_string()),
                blocked_by,
            },
        )
    }

    fn content(&self, output: &TaskCreateOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "Created {}",
            task_line(&output.task)
        ))]
    }
}

/// Change a task of your team's list: its status (`pending`, `in_progress`, `completed`,
/// `cancelled`), its assignee, or add a note. Returns the task as it is now and as it was.
#[derive(qilin_tool::Tool)]
#[tool(name = "task_update")]
pub struct TaskUpdate;

/// Arguments of `task_update`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdateArgs {
    /// The task's id.
    pub id: String,
    /// Its new status: `pending`, `in_progress`, `completed` or `cancelled`.
    #[serde(default)]
    pub status: Option<TaskStatus>,
    /// Its new assignee: `lead` or a teammate's name.
    #[serde(default)]
    pub assignee: Option<String>,
    /// A note to add: progress, a finding, what blocks it.
    #[serde(default)]
    pub note: Option<String>,
}

impl Tool for TaskUpdate {
    type Args = TaskUpdateArgs;
    type Output = TaskUpdateOutput;

    fn prompt_hint(&self) -> &str {
        "Use task_update to say where a task stands: `in_progress` when you start it, \
         `completed` when done (with a note of the result), a note when something matters to \
         the team."
    }

    fn present(&self, args: &TaskUpdateArgs) -> CallPresentation {
        let change = match (&args.status, &args.assignee, &args.note) {
            (Some(status), ..) => status.as_str().to_string(),
            (None, Some(assignee), _) => format!("to {assignee}"),
            (None, None, Some(note)) => note.clone(),
            (None, None, None) => String::new(),
        };
        CallPresentation::new(
            format!("Update task {}", one_line(&args.id, 20)),
            one_line(&change, 80),
        )
    }

    fn before_detail(&self, _args: &TaskUpdateArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &TaskUpdateArgs,
        result: &ToolResult<TaskUpdateOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, args: TaskUpdateArgs, cx: &ToolContext) -> ToolResult<TaskUpdateOutput> {
        let tasks = SubagentService::of(cx)?;
        not_blank("id", &args.id)?;
        let note = args
            .note
            .map(|note| note.trim().to_string())
            .filter(|note| !note.is_empty());
        if args.status.is_none() && args.assignee.is_none() && note.is_none() {
            return Err(ToolError::invalid_arguments(
                "nothing to change: give `status`, `assignee` or `note`",
            ));
        }
        tasks.task_update(
            cx,
            TaskChange {
                id: args.id.trim().to_string(),
                status: args.status,
                assignee: args.assignee.map(|name| name.trim().to_string()),
                note,
            },
        )
    }

    fn content(&self, output: &TaskUpdateOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "Updated {}",
            task_line(&output.task)
        ))]
    }
}

/// Your team's tasks, in creation order, each with its status, assignee, blockers and notes.
#[derive(qilin_tool::Tool)]
#[tool(name = "task_list", read_only)]
pub struct TaskList;

/// Arguments of `task_list` (none).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskListArgs {}

impl Tool for TaskList {
    type Args = TaskListArgs;
    type Output = TaskListOutput;

    fn prompt_hint(&self) -> &str {
        "Use task_list to see what the team has done and what is left before choosing your \
         next task."
    }

    fn present(&self, _args: &TaskListArgs) -> CallPresentation {
        CallPresentation::new("List tasks", "")
    }

    fn before_detail(&self, _args: &TaskListArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &TaskListArgs, result: &ToolResult<TaskListOutput>) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, _args: TaskListArgs, cx: &ToolContext) -> ToolResult<TaskListOutput> {
        SubagentService::of(cx)?.task_list(cx)
    }

    fn content(&self, output: &TaskListOutput) -> Vec<ContentBlock> {
        let text = match output.tasks.is_empty() {
            true => "The team has no tasks yet.".to_string(),
            false => output
                .tasks
                .iter()
                .map(task_line)
                .collect::<Vec<_>>()
                .join("\n"),
        };
        vec![ContentBlock::text(text)]
    }
}

/// A task as the model reads it, on one line (its notes after).
fn task_line(task: &TaskRecord) -> String {
    let mut line = format!("task {} [{}] {}", task.id, task.status.as_str(), task.title);
    if let Some(assignee) = &task.assignee {
        line.push_str(&format!(" — {assignee}"));
    }
    if !task.blocked_by.is_empty() {
        line.push_str(&format!(" (blocked by {})", task.blocked_by.join(", ")));
    }
    for note in &task.notes {
        line.push_str(&format!("\n  note by {}: {}", note.by, note.text));
    }
    line
}
