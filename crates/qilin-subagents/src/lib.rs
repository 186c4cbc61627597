//! Qilin's subagent tools: an agent hands a piece of work to a child agent with its own
//! context, and follows, messages, stops and lists its children.
//!
//! - `agent` — start a child session (`{agent, prompt, description, name?, background?}`):
//!   foreground, the call returns the child's final answer; background, it returns at once
//!   and the result comes later, exactly once.
//! - `agent_wait` — the results of finished background children, each handed over once.
//! - `agent_send` — a message to a running child, seen between its steps.
//! - `agent_stop` — interrupts a child; its running calls end `interrupted`.
//! - `agent_list` — the session's children with their status and usage.
//! - `task_create`, `task_update`, `task_list` — the team's shared task list (the lead and
//!   its teammates: children started with a name in the background).
//!
//! A child is an ordinary session of the same store, linked to its parent. The tools only
//! speak to the [`Subagents`] host service (`qilin_tool::Services`, wrapped in
//! [`SubagentService`]); the runtime implements it, builds every child through its one
//! assembly path, and enforces the bounds (depth, running children, steps, tools, sandbox) —
//! never the prompt. Without the service every call fails saying so.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod tasks;
mod tools;

pub use tasks::{TaskCreate, TaskCreateArgs, TaskList, TaskListArgs, TaskUpdate, TaskUpdateArgs};

pub use tools::{
    Agent, AgentArgs, AgentList, AgentListArgs, AgentSend, AgentSendArgs, AgentStop, AgentStopArgs,
    AgentWait, AgentWaitArgs,
};

use futures_util::future::BoxFuture;
use qilin_protocol::agents::{AgentListOutput, AgentSendOutput, AgentWaitOutput, ChildRecord};
use qilin_protocol::tasks::{TaskCreateOutput, TaskListOutput, TaskStatus, TaskUpdateOutput};
use qilin_tool::{RegistryError, ToolContext, ToolError, ToolRegistry, ToolResult};
use std::sync::Arc;
use std::time::Duration;

/// The deepest a chain of children may go when the host sets no other bound: a top-level
/// session's children may start children of their own, and those none.
pub const DEFAULT_MAX_DEPTH: u32 = 2;

/// The most children one session may have running at once when the host sets no other bound
/// (ended children do not count).
pub const DEFAULT_MAX_RUNNING: usize = 4;

/// The most model steps one child's turn may take when the host sets no other bound (its
/// agent file's own limit applies when lower).
pub const DEFAULT_CHILD_STEPS: u32 = 30;

/// The longest `agent_wait` waits when the call names no timeout.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10 * 60);

/// Registers `agent`, `agent_wait`, `agent_send`, `agent_stop`, `agent_list`,
/// `task_create`, `task_update` and `task_list`.
pub fn register_tools(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry.register(Agent)?;
    registry.register(AgentWait)?;
    registry.register(AgentSend)?;
    registry.register(AgentStop)?;
    registry.register(AgentList)?;
    registry.register(TaskCreate)?;
    registry.register(TaskUpdate)?;
    registry.register(TaskList)?;
    Ok(())
}

/// A task to add to the team's list (`task_create`'s arguments, checked).
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    /// What to do, in a line.
    pub title: String,
    /// More about it.
    pub description: Option<String>,
    /// Who does it: `lead` or a teammate's name.
    pub assignee: Option<String>,
    /// The ids of the tasks it waits for.
    pub blocked_by: Vec<String>,
}

/// A change to a task of the team's list (`task_update`'s arguments, checked).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskChange {
    /// The task's id.
    pub id: String,
    /// Its new status.
    pub status: Option<TaskStatus>,
    /// Its new assignee: `lead` or a teammate's name.
    pub assignee: Option<String>,
    /// A note to add.
    pub note: Option<String>,
}

/// What the parent asks for when it starts a child (the `agent` call's arguments, checked).
#[derive(Debug, Clone, PartialEq)]
pub struct ChildRequest {
    /// The agent to run: a workspace agent file's name or a built-in agent.
    pub agent: String,
    /// The child's task: its whole context.
    pub prompt: String,
    /// A short description, shown on the card.
    pub description: String,
    /// A name to address it by.
    pub name: Option<String>,
    /// Whether the call returns at once.
    pub background: bool,
}

/// The children of one session, as the runtime hosts them: what the tools call.
pub trait Subagents: Send + Sync {
    /// Starts a child for the call of `cx`. A foreground child is waited for (the call's
    /// cancellation stops it) and its ended record returned; a background one's record says
    /// `running`. Refused, with an error naming the bound, past the depth bound, and for a
    /// background child past the running bound (a foreground one waits for a free place).
    fn start<'a>(
        &'a self,
        cx: &'a ToolContext,
        request: ChildRequest,
    ) -> BoxFuture<'a, ToolResult<ChildRecord>>;

    /// Waits until every child named in `ids` (every running or undelivered background child
    /// when `None`) has ended, or `timeout` passed, or the call is cancelled; returns the
    /// ended ones not delivered before, each marked delivered.
    fn wait<'a>(
        &'a self,
        cx: &'a ToolContext,
        ids: Option<Vec<String>>,
        timeout: Duration,
    ) -> BoxFuture<'a, ToolResult<AgentWaitOutput>>;

    /// Delivers `message` to the running child `to` (its session id or name).
    fn send<'a>(
        &'a self,
        cx: &'a ToolContext,
        to: String,
        message: String,
    ) -> BoxFuture<'a, ToolResult<AgentSendOutput>>;

    /// Interrupts the child `id` (its session id or name) and returns its record once it
    /// ended.
    fn stop<'a>(
        &'a self,
        cx: &'a ToolContext,
        id: String,
    ) -> BoxFuture<'a, ToolResult<ChildRecord>>;

    /// The session's children, oldest first.
    fn list(&self, cx: &ToolContext) -> ToolResult<AgentListOutput>;

    /// Adds a task to the team's list, recording `task.created` in the lead's log. Refused
    /// for an unknown assignee or blocker.
    fn task_create(&self, cx: &ToolContext, task: NewTask) -> ToolResult<TaskCreateOutput>;

    /// Changes a task of the team's list, recording `task.updated` in the lead's log. Refused
    /// for an unknown task or assignee, and `in_progress` while a blocker is open.
    fn task_update(&self, cx: &ToolContext, change: TaskChange) -> ToolResult<TaskUpdateOutput>;

    /// The team's tasks, in creation order.
    fn task_list(&self, cx: &ToolContext) -> ToolResult<TaskListOutput>;
}

/// The [`Subagents`] of a session, as a host service the tools look up.
#[derive(Clone)]
pub struct SubagentService(pub Arc<dyn Subagents>);

impl SubagentService {
    /// The service of the call's session, or why there is none.
    pub(crate) fn of(cx: &ToolContext) -> ToolResult<Arc<dyn Subagents>> {
        cx.service::<SubagentService>()
            .map(|service| Arc::clone(&service.0))
            .ok_or_else(|| {
                ToolError::failed(
                    "subagents are not available in this runtime (its host gave the session no way to start child sessions)",
                )
            })
    }
}
