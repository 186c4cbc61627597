//! The conversation tree: a pure fold of a session's event log into what a client renders.
//!
//! Each turn holds its assistant text and its root calls in order; a call is one node across
//! its phases (preparing → running → done), with the time it entered each, and holds the
//! calls its code made as `subCalls`, recursively. The raw argument text of a preparing call
//! is kept beside the tree, so streaming it never touches a node. The node types are part of
//! the wire (the server's snapshot serves them) and generated into TypeScript with the events.

use crate::agents::AgentStartedEvent;
use crate::goals::GoalRecord;
use crate::review::AutoReviewRecord;
use crate::{
    CallPresentation, CallStatus, CallerKind, ContentBlock, ContextCompactedEvent, Detail,
    ErrorCode, Event, EventBody, FinishReason, LiveView, RequestAsk, RequestOpenedEvent,
    RequestResolution, RequestResolvedEvent, ToolPreparingEvent, ToolResultEvent, ToolStartEvent,
    Usage,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use ts_rs::TS;

/// Where a call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The model is still streaming its arguments.
    Preparing,
    /// Dispatched and running.
    Running,
    /// Dispatched, and waiting for a person to answer a request (an approval, a question).
    Waiting,
    /// Ended (see the outcome).
    Done,
}

/// How a finished call ended, as its `tool.result` recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutcome {
    /// Ok, error, denied or interrupted.
    pub status: CallStatus,
    /// Why it failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error_code: Option<ErrorCode>,
    /// What the model saw: the output, or the error message.
    pub content: Vec<ContentBlock>,
    /// For a denied call, the reason for the person watching (see the `tool.result` event).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub user_reason: Option<String>,
    /// The structured output, when the call succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub output: Option<Value>,
    /// The detail shown after the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub detail: Option<Detail>,
    /// Wall time from dispatch to result, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// One call, across all its phases, with the calls its code made.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolNode {
    /// The call's id, the same through every phase.
    pub call_id: String,
    /// The tool's wire name.
    pub tool_name: String,
    /// Which entry the call came through.
    pub caller: CallerKind,
    /// The `run_code` call that made this call, for a code-mode call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// The step of its turn the call was made in (a nested call: its `run_code` call's step);
    /// absent for a call seen before any `step.started` of its turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub step: Option<u32>,
    /// Where the call is in its life.
    pub phase: Phase,
    /// When the model named the tool (its first `tool.preparing`); absent for a call that was
    /// never seen preparing (a nested call, or one dispatched in one piece).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub preparing_at: Option<String>,
    /// When it was dispatched (`tool.start`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub started_at: Option<String>,
    /// When it ended (`tool.result`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub finished_at: Option<String>,
    /// The final arguments, once dispatched (any JSON value: the runtime records what it got).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub arguments: Option<Value>,
    /// The card's header: while the arguments stream, as the tool presents them so far; once
    /// dispatched, as it presents the final ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub presentation: Option<CallPresentation>,
    /// The detail shown while running.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before_detail: Option<Detail>,
    /// Live output received so far: all of it, or its start when it outgrew the live bound
    /// (see [`crate::live`]; the result holds the whole output).
    pub progress: String,
    /// Bytes of live output not shown between `progress` and `progress_tail`; absent when none.
    #[serde(skip_serializing_if = "crate::event::is_zero")]
    #[ts(as = "Option<u32>", optional)]
    pub progress_omitted_bytes: u64,
    /// The latest live output, past what `progress` holds and what was left out; absent while
    /// `progress` holds all of it.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[ts(as = "Option<String>", optional)]
    pub progress_tail: String,
    /// How the call ended, once it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<ToolOutcome>,
    /// The requests the call opened (an approval, questions), in order; the last may still
    /// wait for an answer.
    pub requests: Vec<RequestNode>,
    /// Calls made by this call's code, in order.
    pub sub_calls: Vec<ToolNode>,
    /// The child session the call started (an `agent` call), from its `agent.started`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub child: Option<ChildLink>,
    /// The reviewer model's judgement of the call, from its `tool.reviewed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub review: Option<AutoReviewRecord>,
}

/// The child session an `agent` call started: what its card needs to follow the child's own
/// log (read with the session API like any session's).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChildLink {
    /// The child's session id.
    pub session_id: String,
    /// The agent it runs.
    pub agent: String,
    /// The short description the parent gave it.
    pub description: String,
    /// The name the parent gave it, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    /// Whether it runs in the background.
    pub background: bool,
}

/// A request a call opened, and how it ended once it did.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct RequestNode {
    /// The request's id, which an answer names.
    pub request_id: String,
    /// What is asked.
    pub ask: RequestAsk,
    /// When it was opened.
    pub opened_at: String,
    /// How it ended; absent while it waits for an answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resolution: Option<RequestResolution>,
    /// Who ended it (`runtime` for a cancellation, else the answering host's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resolved_by: Option<String>,
    /// When it was answered or cancelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resolved_at: Option<String>,
    /// For a request a child's call opened: the child's session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub child_session_id: Option<String>,
    /// For a request a child's call opened: the child's name, or its agent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub child_name: Option<String>,
}

/// One item of a turn, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum TurnItem {
    /// Assistant text of one step.
    Text {
        /// The step it belongs to.
        step: u32,
        /// The text streamed so far.
        text: String,
    },
    /// The model's reasoning in one step, shown folded.
    Reasoning {
        /// The step it belongs to.
        step: u32,
        /// The reasoning text streamed so far.
        text: String,
    },
    /// A root call (one the model made directly).
    Tool {
        /// The call.
        node: Box<ToolNode>,
    },
}

/// One turn: a user prompt and what followed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnNode {
    /// The turn's id (empty for events logged before any `turn.started`).
    pub turn_id: String,
    /// The user's prompt.
    pub prompt: String,
    /// Assistant text, reasoning and root calls, in order.
    pub items: Vec<TurnItem>,
    /// Why the turn ended, once it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub finished: Option<FinishReason>,
    /// The message of a turn that ended in error.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
    /// Tokens used by the turn's steps so far.
    pub usage: Usage,
    /// The latest step started in the turn (the one its next calls belong to); absent before
    /// its first.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub latest_step: Option<u32>,
}

/// A compaction: the conversation up to it was summarised for the model (the turns stay in
/// the tree; a client shows a divider after them).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CompactionNode {
    /// The `seq` of its `context.compacted` event.
    #[ts(type = "number")]
    pub seq: u64,
    /// How many turns came before it (it sits after the turn of that number).
    #[ts(type = "number")]
    pub after_turns: usize,
    /// The summary, what the model now receives for everything before it.
    pub summary: String,
    /// Tokens used writing the summary.
    pub usage: Usage,
    /// The estimated size of a request before it.
    #[ts(type = "number")]
    pub estimated_tokens_before: u64,
    /// The estimated size of a request after it.
    #[ts(type = "number")]
    pub estimated_tokens_after: u64,
}

impl CompactionNode {
    fn new(seq: u64, after_turns: usize, compacted: &ContextCompactedEvent) -> Self {
        CompactionNode {
            seq,
            after_turns,
            summary: compacted.summary.clone(),
            usage: compacted.usage,
            estimated_tokens_before: compacted.estimated_tokens_before,
            estimated_tokens_after: compacted.estimated_tokens_after,
        }
    }
}

/// The whole conversation as a client renders it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationTree {
    /// The turns, oldest first.
    pub turns: Vec<TurnNode>,
    /// The compactions, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compactions: Vec<CompactionNode>,
    /// Raw argument text of calls still preparing, by call id.
    pub preparing_arguments: BTreeMap<String, String>,
    /// The session's latest goal, as its last `goal.created` or `goal.updated` recorded it
    /// (served in the session's view, not in the tree).
    #[serde(skip)]
    pub goal: Option<GoalRecord>,
    /// Where each call's node is, by call id.
    #[serde(skip)]
    index: HashMap<String, NodePath>,
}

/// Where a call's node is: its turn, its item, then the sub-call indexes down from it.
#[derive(Debug, Clone, PartialEq)]
struct NodePath {
    turn: usize,
    item: usize,
    subs: Vec<usize>,
}

impl ConversationTree {
    /// Folds a whole event log.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut tree = ConversationTree::default();
        for event in events {
            tree.apply(event);
        }
        tree
    }

    /// Folds one more event into the tree.
    pub fn apply(&mut self, event: &Event) {
        match &event.body {
            EventBody::TurnStarted {
                turn_id, prompt, ..
            } => self.turns.push(TurnNode {
                turn_id: turn_id.clone(),
                prompt: prompt.clone(),
                items: Vec::new(),
                finished: None,
                message: None,
                usage: Usage::default(),
                latest_step: None,
            }),
            EventBody::TurnFinished {
                reason, message, ..
            } => {
                if let Some(turn) = self.turns.last_mut() {
                    turn.finished = Some(*reason);
                    turn.message = message.clone();
                }
            }
            EventBody::StepStarted { step, .. } => self.current_turn().latest_step = Some(*step),
            EventBody::SessionStarted(_)
            | EventBody::StepReasoningEnd { .. }
            | EventBody::AgentFinished(_)
            | EventBody::AgentDelivered(_)
            | EventBody::AgentMessage(_)
            | EventBody::ScheduleCreated(_)
            | EventBody::ScheduleDeleted(_)
            | EventBody::ScheduleFired(_)
            | EventBody::ScheduleFinished(_)
            | EventBody::ReviewGranted(_)
            | EventBody::ReviewCircuitOpen(_)
            | EventBody::TaskCreated(_)
            | EventBody::TaskUpdated(_)
            | EventBody::WorkflowStarted(_)
            | EventBody::WorkflowStep(_)
            | EventBody::WorkflowFinished(_)
            | EventBody::LoopStarted(_)
            | EventBody::LoopIteration(_)
            | EventBody::LoopFinished(_) => {}
            EventBody::ToolReviewed(reviewed) => {
                if let Some(node) = self.node_mut(&reviewed.call_id) {
                    node.review = Some(reviewed.review.clone());
                }
            }
            EventBody::AgentStarted(started) => self.link_child(started),
            EventBody::GoalCreated(created) => self.goal = Some(created.goal.clone()),
            EventBody::GoalUpdated(updated) => self.goal = Some(updated.goal.clone()),
            EventBody::StepFinished { usage, .. } => {
                let turn = self.current_turn();
                turn.usage.input_tokens += usage.input_tokens;
                turn.usage.output_tokens += usage.output_tokens;
                turn.usage.cache_read_tokens += usage.cache_read_tokens;
                turn.usage.cache_write_tokens += usage.cache_write_tokens;
            }
            EventBody::StepTextDelta { step, text, .. } => self.push_text(*step, text, false),
            EventBody::StepReasoningDelta { step, text, .. } => self.push_text(*step, text, true),
            EventBody::RequestOpened(opened) => self.open(opened, &event.time),
            EventBody::RequestResolved(resolved) => self.resolve(resolved, &event.time),
            EventBody::ToolPreparing(preparing) => self.prepare(preparing, &event.time),
            EventBody::ToolStart(start) => self.start(start, &event.time),
            EventBody::ToolProgress(progress) => {
                if let Some(node) = self.node_mut(&progress.call_id) {
                    node.push_progress(&progress.text, progress.omitted_bytes.unwrap_or(0));
                }
            }
            EventBody::ToolResult(result) => self.finish(result, &event.time),
            EventBody::ContextCompacted(compacted) => {
                self.compactions
                    .push(CompactionNode::new(event.seq, self.turns.len(), compacted))
            }
        }
    }

    /// The node of a call, wherever it sits.
    pub fn call(&self, call_id: &str) -> Option<&ToolNode> {
        let path = self.index.get(call_id)?;
        let TurnItem::Tool { node: root } = self.turns.get(path.turn)?.items.get(path.item)? else {
            return None;
        };
        let mut node: &ToolNode = root;
        for &sub in &path.subs {
            node = node.sub_calls.get(sub)?;
        }
        Some(node)
    }

    /// Appends streamed text (or reasoning) to the last item when it is of the same step and
    /// kind, else starts a new item.
    fn push_text(&mut self, step: u32, text: &str, reasoning: bool) {
        let turn = self.current_turn();
        match turn.items.last_mut() {
            Some(TurnItem::Text {
                step: last,
                text: so_far,
            }) if *last == step && !reasoning => return so_far.push_str(text),
            Some(TurnItem::Reasoning {
                step: last,
                text: so_far,
            }) if *last == step && reasoning => return so_far.push_str(text),
            _ => {}
        }
        let text = text.to_string();
        turn.items.push(match reasoning {
            true => TurnItem::Reasoning { step, text },
            false => TurnItem::Text { step, text },
        });
    }

    /// A waiting call: its phase, and the request appended to its requests. A request a
    /// child's call opened sits on the `agent` call that started the child, whose phase it
    /// leaves (a background child's call has ended).
    fn open(&mut self, opened: &RequestOpenedEvent, time: &str) {
        if let Some(node) = self.node_mut(&opened.call_id) {
            if opened.child_session_id.is_none() {
                node.phase = Phase::Waiting;
            }
            node.requests.push(RequestNode {
                request_id: opened.request_id.clone(),
                ask: opened.ask.clone(),
                opened_at: time.to_string(),
                resolution: None,
                resolved_by: None,
                resolved_at: None,
                child_session_id: opened.child_session_id.clone(),
                child_name: opened.child_name.clone(),
            });
        }
    }

    /// The request's answer recorded; a waiting call runs again.
    fn resolve(&mut self, resolved: &RequestResolvedEvent, time: &str) {
        if let Some(node) = self.node_mut(&resolved.call_id) {
            if let Some(request) = node
                .requests
                .iter_mut()
                .find(|r| r.request_id == resolved.request_id)
            {
                request.resolution = Some(resolved.resolution.clone());
                request.resolved_by = Some(resolved.resolved_by.clone());
                request.resolved_at = Some(time.to_string());
            }
            if node.phase == Phase::Waiting {
                node.phase = Phase::Running;
            }
        }
    }

    /// The child an `agent` call started, on the call's node (its `tool.start` always comes
    /// before).
    fn link_child(&mut self, started: &AgentStartedEvent) {
        if let Some(node) = self.node_mut(&started.call_id) {
            node.child = Some(ChildLink {
                session_id: started.child_session_id.clone(),
                agent: started.agent.clone(),
                description: started.description.clone(),
                name: started.name.clone(),
                background: started.background,
            });
        }
    }

    /// A call whose arguments stream: its node on the first delta, its text beside the tree.
    fn prepare(&mut self, preparing: &ToolPreparingEvent, time: &str) {
        if !self.index.contains_key(&preparing.call_id) {
            let node = self.new_node(
                &preparing.call_id,
                &preparing.tool_name,
                CallerKind::Direct,
                None,
            );
            self.insert(node);
        }
        if let Some(node) = self.node_mut(&preparing.call_id) {
            if node.preparing_at.is_none() {
                node.preparing_at = Some(time.to_string());
            }
            if let Some(presentation) = &preparing.presentation {
                node.presentation = Some(presentation.clone());
            }
        }
        self.preparing_arguments
            .entry(preparing.call_id.clone())
            .or_default()
            .push_str(&preparing.arguments_delta);
    }

    fn start(&mut self, start: &ToolStartEvent, time: &str) {
        self.preparing_arguments.remove(&start.call_id);
        if !self.index.contains_key(&start.call_id) {
            let node = self.new_node(
                &start.call_id,
                &start.tool_name,
                start.caller,
                start.parent_call_id.clone(),
            );
            self.insert(node);
        }
        if let Some(node) = self.node_mut(&start.call_id) {
            node.caller = start.caller;
            node.parent_call_id = start.parent_call_id.clone();
            node.phase = Phase::Running;
            node.started_at = Some(time.to_string());
            node.arguments = Some(start.arguments.clone());
            node.presentation = Some(start.presentation.clone());
            node.before_detail = start.before_detail.clone();
        }
    }

    fn finish(&mut self, result: &ToolResultEvent, time: &str) {
        self.preparing_arguments.remove(&result.call_id);
        if !self.index.contains_key(&result.call_id) {
            let node = self.new_node(
                &result.call_id,
                &result.tool_name,
                result.caller,
                result.parent_call_id.clone(),
            );
            self.insert(node);
        }
        if let Some(node) = self.node_mut(&result.call_id) {
            node.phase = Phase::Done;
            node.finished_at = Some(time.to_string());
            node.outcome = Some(ToolOutcome {
                status: result.status,
                error_code: result.error_code,
                content: result.content.clone(),
                user_reason: result.user_reason.clone(),
                output: result.output.clone(),
                detail: result.detail.clone(),
                duration_ms: result.duration_ms,
            });
        }
    }

    /// Places a new node under its parent when the parent is known, else as a root call.
    fn insert(&mut self, node: ToolNode) {
        let call_id = node.call_id.clone();
        let parent_path = node
            .parent_call_id
            .as_ref()
            .and_then(|parent| self.index.get(parent).cloned());
        if let Some(mut path) = parent_path
            && let Some(parent) = self.node_at_mut(&path)
        {
            parent.sub_calls.push(node);
            path.subs.push(parent.sub_calls.len() - 1);
            self.index.insert(call_id, path);
            return;
        }
        let turn = self.current_turn();
        turn.items.push(TurnItem::Tool {
            node: Box::new(node),
        });
        let path = NodePath {
            turn: self.turns.len() - 1,
            item: self.turns[self.turns.len() - 1].items.len() - 1,
            subs: Vec::new(),
        };
        self.index.insert(call_id, path);
    }

    fn node_mut(&mut self, call_id: &str) -> Option<&mut ToolNode> {
        let path = self.index.get(call_id)?.clone();
        self.node_at_mut(&path)
    }

    fn node_at_mut(&mut self, path: &NodePath) -> Option<&mut ToolNode> {
        let TurnItem::Tool { node: root } =
            self.turns.get_mut(path.turn)?.items.get_mut(path.item)?
        else {
            return None;
        };
        let mut node: &mut ToolNode = root;
        for &sub in &path.subs {
            node = node.sub_calls.get_mut(sub)?;
        }
        Some(node)
    }

    /// The turn events belong to; a log that starts mid-turn gets an unnamed one.
    fn current_turn(&mut self) -> &mut TurnNode {
        if self.turns.is_empty() {
            self.turns.push(TurnNode {
                turn_id: String::new(),
                prompt: String::new(),
                items: Vec::new(),
                finished: None,
                message: None,
                usage: Usage::default(),
                latest_step: None,
            });
        }
        let last = self.turns.len() - 1;
        &mut self.turns[last]
    }

    /// A new node in the current turn's latest step, or in its parent's step for a nested call.
    fn new_node(
        &mut self,
        call_id: &str,
        tool_name: &str,
        caller: CallerKind,
        parent: Option<String>,
    ) -> ToolNode {
        let parent_step = parent
            .as_deref()
            .and_then(|id| self.call(id))
            .map(|p| p.step);
        ToolNode {
            call_id: call_id.to_string(),
            tool_name: tool_name.to_string(),
            caller,
            parent_call_id: parent,
            step: parent_step.unwrap_or_else(|| self.current_turn().latest_step),
            phase: Phase::Preparing,
            preparing_at: None,
            started_at: None,
            finished_at: None,
            arguments: None,
            presentation: None,
            before_detail: None,
            progress: String::new(),
            progress_omitted_bytes: 0,
            progress_tail: String::new(),
            outcome: None,
            requests: Vec::new(),
            sub_calls: Vec::new(),
            child: None,
            review: None,
        }
    }
}

impl ToolNode {
    /// Folds live output into the node, within the live bound.
    fn push_progress(&mut self, text: &str, omitted_bytes: u64) {
        let mut view = LiveView {
            head: std::mem::take(&mut self.progress),
            omitted_bytes: self.progress_omitted_bytes,
            tail: std::mem::take(&mut self.progress_tail),
        };
        view.push(text, omitted_bytes);
        self.progress = view.head;
        self.progress_omitted_bytes = view.omitted_bytes;
        self.progress_tail = view.tail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(seq: u64, body: EventBody) -> Event {
        Event {
            seq,
            time: "2026-01-01T00:00:00Z".into(),
            body,
        }
    }

    fn start(call_id: &str, tool: &str, parent: Option<&str>) -> EventBody {
        EventBody::ToolStart(ToolStartEvent {
            call_id: call_id.into(),
            tool_name: tool.into(),
            caller: match parent {
                Some(_) => CallerKind::Code,
                None => CallerKind::Direct,
            },
            parent_call_id: parent.map(str::to_string),
            arguments: json!({}),
            presentation: CallPresentation::new(tool, ""),
            before_detail: None,
        })
    }

    fn result(call_id: &str, tool: &str, parent: Option<&str>, output: Value) -> EventBody {
        EventBody::ToolResult(ToolResultEvent {
            call_id: call_id.into(),
            tool_name: tool.into(),
            caller: match parent {
                Some(_) => CallerKind::Code,
                None => CallerKind::Direct,
            },
            parent_call_id: parent.map(str::to_string),
            status: CallStatus::Ok,
            error_code: None,
            content: Vec::new(),
            user_reason: None,
            output: Some(output),
            detail: None,
            duration_ms: 1,
        })
    }

    fn turn(seq: u64, turn_id: &str) -> Event {
        event(
            seq,
            EventBody::TurnStarted {
                turn_id: turn_id.into(),
                prompt: "go".into(),
                client_turn_id: None,
            },
        )
    }

    #[test]
    fn a_background_runs_calls_nest_under_its_call_after_it_returned_even_in_a_later_turn() {
        let events = vec![
            turn(1, "turn-1"),
            event(2, start("call_1", "workflow_run", None)),
            event(
                3,
                result(
                    "call_1",
                    "workflow_run",
                    None,
                    json!({"run": {"runId": "wf1", "background": true, "status": "running"}}),
                ),
            ),
            event(
                4,
                EventBody::TurnFinished {
                    turn_id: "turn-1".into(),
                    reason: FinishReason::Completed,
                    message: None,
                },
            ),
            turn(5, "turn-2"),
            event(6, start("call_1.1", "bash", Some("call_1"))),
            event(7, result("call_1.1", "bash", Some("call_1"), json!({}))),
        ];
        let tree = ConversationTree::from_events(&events);
        let run = tree.call("call_1").expect("the run's call");
        let nested: Vec<&str> = run.sub_calls.iter().map(|c| c.call_id.as_str()).collect();
        assert_eq!(nested, ["call_1.1"]);
        assert_eq!(run.sub_calls[0].phase, Phase::Done);
        assert!(
            tree.turns[1].items.is_empty(),
            "not a call of the later turn"
        );
    }

    #[test]
    fn a_call_run_again_after_a_restart_keeps_one_card_timed_from_its_second_start() {
        let timed = |seq: u64, time: &str, body: EventBody| Event {
            time: time.into(),
            ..event(seq, body)
        };
        let events = vec![
            turn(1, "turn-1"),
            event(2, start("call_1", "run_code", None)),
            timed(
                3,
                "2026-01-01T00:00:01Z",
                start("call_1.1", "grep", Some("call_1")),
            ),
            // The process died; the replay ran the read-only call again under its id.
            timed(
                4,
                "2026-01-01T00:05:00Z",
                start("call_1.1", "grep", Some("call_1")),
            ),
            event(5, result("call_1.1", "grep", Some("call_1"), json!({}))),
        ];
        let tree = ConversationTree::from_events(&events);
        let run = tree.call("call_1").expect("the run's call");
        assert_eq!(run.sub_calls.len(), 1, "one card: {:?}", run.sub_calls);
        assert_eq!(run.sub_calls[0].phase, Phase::Done);
        assert_eq!(
            run.sub_calls[0].started_at.as_deref(),
            Some("2026-01-01T00:05:00Z")
        );
    }
}
