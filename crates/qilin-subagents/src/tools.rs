//! The five tools: each checks its arguments, asks the [`crate::Subagents`] service, and
//! presents the call.

use crate::{ChildRequest, DEFAULT_WAIT, SubagentService};
use qilin_protocol::agents::{
    AgentListOutput, AgentSendOutput, AgentWaitOutput, ChildRecord, ChildStatus,
};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;

/// The longest `agent_wait` may be asked to wait: an hour.
const MAX_WAIT_MS: u64 = 60 * 60 * 1000;

/// Hand a self-contained task to a child agent with its own fresh context: it sees only your
/// `prompt` (not this conversation), works with its own tools, and its final answer comes back
/// to you. Foreground (default) the call returns when the child has answered; with
/// `background: true` it returns at once with the child's session id, you are told between
/// your steps when it ends, and `agent_wait` hands over its result. Returns the child's record:
/// session id, status, answer, steps, tokens, duration.
#[derive(qilin_tool::Tool)]
#[tool(name = "agent")]
pub struct Agent;

/// Arguments of `agent`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentArgs {
    /// The agent to run: `explore` (read-only: finds and reads, changes nothing), `general`
    /// (reads, edits and runs commands), or the name of an agent file of the workspace
    /// (`NAME.agent`).
    pub agent: String,
    /// The task, complete on its own: the child sees nothing of this conversation, so say what
    /// to do, where, what you know already and what to answer with.
    pub prompt: String,
    /// A short description of the task (3 to 8 words), shown to the user on the child's card.
    pub description: String,
    /// A name to address the child by in `agent_send`, `agent_stop` and `agent_wait`, unique
    /// among this session's children.
    #[serde(default)]
    pub name: Option<String>,
    /// Run in the background: return at once and collect the result with `agent_wait`.
    #[serde(default)]
    pub background: Option<bool>,
}

impl Tool for Agent {
    type Args = AgentArgs;
    type Output = ChildRecord;

    fn prompt_hint(&self) -> &str {
        "Use agent for a task that needs many lookups or steps whose details you do not need \
         (searching a large codebase, checking several files, a self-contained change): the \
         child does it in its own context and you get its answer alone. Write the prompt as a \
         complete brief — the child sees nothing of this conversation. Prefer `explore` for \
         finding and reading. Independent tasks can run at once: several calls with \
         `background: true`, then agent_wait; or, from run_code, `sdk.tool.call_async` with \
         asyncio.gather. Do not start a child for a single read or search you can do yourself."
    }

    fn present(&self, args: &AgentArgs) -> CallPresentation {
        let action = match args.background {
            Some(true) => format!("Start agent {} in the background", args.agent),
            _ => format!("Run agent {}", args.agent),
        };
        CallPresentation::new(action, one_line(&args.description, 80))
    }

    fn before_detail(&self, args: &AgentArgs) -> Option<Detail> {
        Some(Detail::Text {
            text: args.prompt.clone(),
        })
    }

    fn detail(&self, _args: &AgentArgs, result: &ToolResult<ChildRecord>) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(record) => record_text(record),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: AgentArgs, cx: &ToolContext) -> ToolResult<ChildRecord> {
        let children = SubagentService::of(cx)?;
        not_blank("agent", &args.agent)?;
        not_blank("prompt", &args.prompt)?;
        not_blank("description", &args.description)?;
        if let Some(name) = &args.name {
            not_blank("name", name)?;
        }
        children
            .start(
                cx,
                ChildRequest {
                    agent: args.agent.trim().to_string(),
                    prompt: args.prompt,
                    description: args.description.trim().to_string(),
                    name: args.name.map(|name| name.trim().to_string()),
                    background: args.background.unwrap_or(false),
                },
            )
            .await
    }

    fn content(&self, record: &ChildRecord) -> Vec<ContentBlock> {
        vec![ContentBlock::text(record_text(record))]
    }
}

/// Wait for background children to end and collect their results. Each result is handed over
/// exactly once: a child already collected is not returned again. Returns `finished` (the
/// records of children that ended, with their answers), `running` (ids still running) and
/// `timedOut`.
#[derive(qilin_tool::Tool)]
#[tool(name = "agent_wait")]
pub struct AgentWait;

/// Arguments of `agent_wait`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentWaitArgs {
    /// The children to wait for (session ids or names); every background child not collected
    /// yet when omitted.
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// The longest to wait, in milliseconds (0 returns at once with what has ended; at most
    /// 3600000; default 600000).
    #[serde(default)]
    #[schemars(range(min = 0, max = 3_600_000))]
    pub timeout_ms: Option<u64>,
}

impl Tool for AgentWait {
    type Args = AgentWaitArgs;
    type Output = AgentWaitOutput;

    fn prompt_hint(&self) -> &str {
        "Use agent_wait after starting children with `background: true`, when you need their \
         results to go on; pass `timeout_ms: 0` to collect what has ended without waiting. A \
         result is returned once: keep what you need from it."
    }

    fn present(&self, args: &AgentWaitArgs) -> CallPresentation {
        let remark = match &args.ids {
            Some(ids) => ids.join(", "),
            None => "all background agents".to_string(),
        };
        CallPresentation::new("Wait for agents", one_line(&remark, 80))
    }

    fn before_detail(&self, _args: &AgentWaitArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &AgentWaitArgs,
        result: &ToolResult<AgentWaitOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, args: AgentWaitArgs, cx: &ToolContext) -> ToolResult<AgentWaitOutput> {
        let children = SubagentService::of(cx)?;
        let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_WAIT.as_millis() as u64);
        if timeout_ms > MAX_WAIT_MS {
            return Err(ToolError::invalid_arguments(format!(
                "`timeout_ms` is {timeout_ms}; give 0 to {MAX_WAIT_MS}"
            )));
        }
        children
            .wait(cx, args.ids, Duration::from_millis(timeout_ms))
            .await
    }

    fn content(&self, output: &AgentWaitOutput) -> Vec<ContentBlock> {
        let mut text: Vec<String> = output.finished.iter().map(record_text).collect();
        if !output.running.is_empty() {
            text.push(format!("Still running: {}", output.running.join(", ")));
        }
        if output.timed_out {
            text.push("The wait timed out.".to_string());
        }
        if text.is_empty() {
            text.push("No background agent is waiting to be collected.".to_string());
        }
        vec![ContentBlock::text(text.join("\n\n"))]
    }
}

/// Send a message to one of your running children: it receives it as a user message between
/// its steps (after the step it is in, if it is mid-step). Returns the child's session id and
/// whether the message is seen `now` (at its next step) or `queued` (after its current one).
#[derive(qilin_tool::Tool)]
#[tool(name = "agent_send")]
pub struct AgentSend;

/// Arguments of `agent_send`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSendArgs {
    /// The child: its session id or its name.
    pub to: String,
    /// The message: a correction, more information, a change of plan.
    pub message: String,
}

impl Tool for AgentSend {
    type Args = AgentSendArgs;
    type Output = AgentSendOutput;

    fn prompt_hint(&self) -> &str {
        "Use agent_send to steer a background child while it works (new information, a \
         narrower task). It reaches a running child only; a child that has ended cannot \
         receive messages — start a new one."
    }

    fn present(&self, args: &AgentSendArgs) -> CallPresentation {
        CallPresentation::new(
            format!("Message {}", one_line(&args.to, 40)),
            one_line(&args.message, 80),
        )
    }

    fn before_detail(&self, args: &AgentSendArgs) -> Option<Detail> {
        Some(Detail::Text {
            text: args.message.clone(),
        })
    }

    fn detail(
        &self,
        _args: &AgentSendArgs,
        result: &ToolResult<AgentSendOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, args: AgentSendArgs, cx: &ToolContext) -> ToolResult<AgentSendOutput> {
        let children = SubagentService::of(cx)?;
        not_blank("to", &args.to)?;
        not_blank("message", &args.message)?;
        children
            .send(cx, args.to.trim().to_string(), args.message)
            .await
    }
}

/// Stop one of your children: its turn is interrupted and its running calls end
/// `interrupted`. Returns its record once it has stopped (or how it ended, if it had).
#[derive(qilin_tool::Tool)]
#[tool(name = "agent_stop")]
pub struct AgentStop;

/// Arguments of `agent_stop`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentStopArgs {
    /// The child: its session id or its name.
    pub id: String,
}

impl Tool for AgentStop {
    type Args = AgentStopArgs;
    type Output = ChildRecord;

    fn prompt_hint(&self) -> &str {
        "Use agent_stop when a background child is no longer needed or has gone astray; what \
         it did so far stays in its session."
    }

    fn present(&self, args: &AgentStopArgs) -> CallPresentation {
        CallPresentation::new("Stop agent", one_line(&args.id, 80))
    }

    fn before_detail(&self, _args: &AgentStopArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &AgentStopArgs, result: &ToolResult<ChildRecord>) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, args: AgentStopArgs, cx: &ToolContext) -> ToolResult<ChildRecord> {
        let children = SubagentService::of(cx)?;
        not_blank("id", &args.id)?;
        children.stop(cx, args.id.trim().to_string()).await
    }

    fn content(&self, record: &ChildRecord) -> Vec<ContentBlock> {
        vec![ContentBlock::text(record_text(record))]
    }
}

/// List this session's children, oldest first, each with its status, steps, tokens and
/// duration (and its answer once it ended).
#[derive(qilin_tool::Tool)]
#[tool(name = "agent_list", read_only)]
pub struct AgentList;

/// Arguments of `agent_list` (none).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentListArgs {}

impl Tool for AgentList {
    type Args = AgentListArgs;
    type Output = AgentListOutput;

    fn prompt_hint(&self) -> &str {
        "Use agent_list to see which children run and what they have used so far; it does not \
         collect results (agent_wait does)."
    }

    fn present(&self, _args: &AgentListArgs) -> CallPresentation {
        CallPresentation::new("List agents", "")
    }

    fn before_detail(&self, _args: &AgentListArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &AgentListArgs,
        result: &ToolResult<AgentListOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, _args: AgentListArgs, cx: &ToolContext) -> ToolResult<AgentListOutput> {
        SubagentService::of(cx)?.list(cx)
    }
}

/// A child's record as the model reads it: a header line, then its answer or error.
fn record_text(record: &ChildRecord) -> String {
    let who = match &record.name {
        Some(name) => format!("{name} ({})", record.session_id),
        None => record.session_id.clone(),
    };
    let mut text = format!(
        "Agent {} `{}` — {}: {} steps, {} input and {} output tokens, {} ms.",
        who,
        record.agent,
        record.status.as_str(),
        record.steps,
        record.usage.input_tokens,
        record.usage.output_tokens,
        record.duration_ms
    );
    if record.status == ChildStatus::Running {
        text.push_str(" It runs in the background; agent_wait collects its result.");
    }
    if let Some(error) = &record.error {
        text.push_str(&format!("\nWhat stopped it: {error}"));
    }
    if let Some(answer) = &record.answer {
        text.push_str(&format!("\nIts answer:\n{answer}"));
    }
    text
}

/// `value` is not blank, or an error naming `field`.
pub(crate) fn not_blank(field: &str, value: &str) -> ToolResult<()> {
    if value.trim().is_empty() {
        return Err(ToolError::invalid_arguments(format!(
            "`{field}` is empty; give it some text"
        )));
    }
    Ok(())
}

/// `text` on one line, cut to `max` characters.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
