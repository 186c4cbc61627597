//! `todo_write`: the session's todo list, replaced whole on each call and kept in the
//! [`TodoStore`] service.

use parking_lot::Mutex;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Write the session's todo list.
///
/// Send the whole list each time: items not sent are removed. Use it to plan multi-step work
/// and to show progress: mark an item `in_progress` when you start it and `completed` as
/// soon as it is done.
#[derive(qilin_tool::Tool)]
#[tool(name = "todo_write")]
pub struct TodoWrite;

/// Where a todo item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// not started yet
    Pending,
    /// being worked on now (keep exactly one item so)
    InProgress,
    /// finished
    Completed,
}

/// One item of the todo list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// A short id, unique in the list (e.g. `1`, `tests`), kept while the item lives.
    pub id: String,
    /// What is to be done, as a short imperative sentence.
    pub content: String,
    /// Where the item stands
    pub status: TodoStatus,
}

/// Arguments of `todo_write`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteArgs {
    /// The complete list, in order; it replaces the previous one.
    pub todos: Vec<TodoItem>,
}

/// The list as stored.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TodoList {
    /// Every item, in order.
    pub todos: Vec<TodoItem>,
    /// Items not started.
    pub pending: usize,
    /// Items being worked on.
    pub in_progress: usize,
    /// Items done.
    pub completed: usize,
}

/// The session's todo list. A host service: without it `todo_write` is refused, since a list
/// that is not kept would mislead the model.
#[derive(Default)]
pub struct TodoStore {
    items: Mutex<Vec<TodoItem>>,
}

impl TodoStore {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current list.
    pub fn items(&self) -> Vec<TodoItem> {
        self.items.lock().clone()
    }

    /// Replaces the list.
    pub fn replace(&self, items: Vec<TodoItem>) {
        *self.items.lock() = items;
    }
}

fn check(items: &[TodoItem]) -> ToolResult<()> {
    let mut seen = HashSet::new();
    for (index, item) in items.iter().enumerate() {
        if item.id.trim().is_empty() {
            return Err(ToolError::invalid_arguments(format!(
                "`todos.{index}.id` is empty; give each item a short unique id"
            )));
        }
        if item.content.trim().is_empty() {
            return Err(ToolError::invalid_arguments(format!(
                "`todos.{index}.content` (id `{}`) is empty; say what is to be done",
                item.id
            )));
        }
        if !seen.insert(item.id.as_str()) {
            return Err(ToolError::invalid_arguments(format!(
                "`todos.{index}.id` `{}` is used twice; ids must be unique",
                item.id
            )));
        }
    }
    Ok(())
}

fn render(list: &TodoList) -> String {
    if list.todos.is_empty() {
        return "The todo list is empty.".to_string();
    }
    let mut text = String::new();
    for item in &list.todos {
        let mark = match item.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Completed => "[x]",
        };
        text.push_str(&format!("- {mark} {} (id {})\n", item.content, item.id));
    }
    text
}

impl Tool for TodoWrite {
    type Args = TodoWriteArgs;
    type Output = TodoList;

    fn prompt_hint(&self) -> &str {
        "Use todo_write for tasks of three or more steps, or when the user gives several \
         tasks: write the plan as items, keep exactly one item `in_progress` while you work, \
         and mark each `completed` right after finishing it, not in batches. Send the whole \
         list every time, with the same ids for the same items. Skip it for a single simple \
         step."
    }

    fn present(&self, args: &TodoWriteArgs) -> CallPresentation {
        let done = args
            .todos
            .iter()
            .filter(|t| t.status == TodoStatus::Completed)
            .count();
        CallPresentation::new(
            "Update todos",
            format!("{done} of {} done", args.todos.len()),
        )
    }

    fn before_detail(&self, _args: &TodoWriteArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &TodoWriteArgs, result: &ToolResult<TodoList>) -> Option<Detail> {
        match result {
            Ok(list) => Some(Detail::Markdown {
                markdown: render(list),
            }),
            Err(error) => Some(Detail::Text {
                text: error.message.clone(),
            }),
        }
    }

    async fn call(&self, args: TodoWriteArgs, cx: &ToolContext) -> ToolResult<TodoList> {
        check(&args.todos)?;
        let store = cx.service::<TodoStore>().ok_or_else(|| {
            ToolError::failed(
                "the todo list is not available in this runtime (it has no todo store)",
            )
        })?;
        store.replace(args.todos.clone());
        let count = |status| args.todos.iter().filter(|t| t.status == status).count();
        Ok(TodoList {
            pending: count(TodoStatus::Pending),
            in_progress: count(TodoStatus::InProgress),
            completed: count(TodoStatus::Completed),
            todos: args.todos,
        })
    }

    fn content(&self, output: &TodoList) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "Todo list updated ({} pending, {} in progress, {} completed):\n{}",
            output.pending,
            output.in_progress,
            output.completed,
            render(output)
        ))]
    }
}
