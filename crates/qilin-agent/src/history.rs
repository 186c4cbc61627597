//! The model-facing history, folded from the event log.
//!
//! The loop never keeps a history of its own: it folds the events it and the execution layer
//! record, and sends what the fold holds. A stored log folds to exactly the same messages, so a
//! session resumed in another process sends the same bytes an uninterrupted one would have.

use qilin_model::{AssistantToolCall, Message, Reasoning, ToolCallResult};
use qilin_protocol::agents::{AgentFinishedEvent, AgentMessageEvent};
use qilin_protocol::workflows::WorkflowRun;
use qilin_protocol::{CallStatus, CallerKind, Event, EventBody};

/// The messages a provider receives, rebuilt from events in `seq` order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryFold {
    messages: Vec<Message>,
    step: Option<StepSoFar>,
    turns: u32,
    /// Turns started since the session began or since its last compaction.
    turns_since_compaction: u32,
    /// Notes for the model that arrived while a step was open (a message from another agent,
    /// a background child's end): they follow the step's messages once it finishes.
    pending: Vec<Message>,
    /// A message from another agent reached the history after the model's last step, so the
    /// model has not answered it yet.
    awaiting_reply: bool,
}

/// What one step has produced so far.
#[derive(Debug, Clone, Default, PartialEq)]
struct StepSoFar {
    text: String,
    /// Reasoning streamed since the last block ended; shown only unless a block end follows.
    reasoning_text: String,
    /// The blocks of reasoning the provider wants back, in order.
    reasoning: Vec<Reasoning>,
    calls: Vec<AssistantToolCall>,
    results: Vec<ToolCallResult>,
}

impl HistoryFold {
    /// The history of a stored log.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut fold = HistoryFold::default();
        for event in events {
            fold.apply(event);
        }
        fold
    }

    /// The messages so far, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// How many turns have started.
    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// Whether a message from another agent (`agent.message`) came after the model's last
    /// step: the loop gives the model a step to answer it before the turn ends.
    pub fn awaits_reply(&self) -> bool {
        self.awaiting_reply
    }

    /// A note for the model: at once between steps, after the open step otherwise.
    fn note(&mut self, message: Message, wants_reply: bool) {
        match self.step {
            Some(_) => self.pending.push(message),
            None => self.messages.push(message),
        }
        self.awaiting_reply |= wants_reply;
    }

    /// How many turns started since the session began or since its last compaction: none
    /// means there is nothing (new) to compact.
    pub fn turns_since_compaction(&self) -> u32 {
        self.turns_since_compaction
    }

    /// Folds one more event.
    pub fn apply(&mut self, event: &Event) {
        match &event.body {
            EventBody::TurnStarted { prompt, .. } => {
                self.turns += 1;
                self.turns_since_compaction += 1;
                // A teammate woken by its messages has no prompt: the messages are its input.
                if !prompt.is_empty() {
                    self.messages.push(Message::user(prompt.clone()));
                }
            }
            EventBody::StepStarted { .. } => {
                self.step = Some(StepSoFar::default());
                self.awaiting_reply = false;
            }
            EventBody::AgentMessage(message) => self.note(message_note(message), true),
            EventBody::AgentFinished(finished) => self.note(finished_note(finished), false),
            EventBody::WorkflowFinished(finished) if finished.run.background => {
                self.note(workflow_note(&finished.run), false)
            }
            EventBody::StepTextDelta { text, .. } => {
                if let Some(step) = &mut self.step {
                    step.text.push_str(text);
                }
            }
            EventBody::StepReasoningDelta { text, .. } => {
                if let Some(step) = &mut self.step {
                    step.reasoning_text.push_str(text);
                }
            }
            EventBody::StepReasoningEnd {
                signature,
                redacted,
                ..
            } => {
                if let Some(step) = &mut self.step {
                    let text = std::mem::take(&mut step.reasoning_text);
                    step.reasoning.push(match redacted {
                        Some(data) => Reasoning::Redacted { data: data.clone() },
                        None => Reasoning::Text {
                            text,
                            signature: signature.clone(),
                        },
                    });
                }
            }
            EventBody::ToolPreparing(preparing) => {
                let Some(step) = &mut self.step else { return };
                match step.calls.iter_mut().find(|c| c.id == preparing.call_id) {
                    Some(call) => call.arguments.push_str(&preparing.arguments_delta),
                    None => step.calls.push(AssistantToolCall {
                        id: preparing.call_id.clone(),
                        name: preparing.tool_name.clone(),
                        arguments: preparing.arguments_delta.clone(),
                    }),
                }
            }
            EventBody::ToolResult(result) if result.caller == CallerKind::Direct => {
                let Some(step) = &mut self.step else { return };
                if step.calls.iter().any(|call| call.id == result.call_id)
                    && !step.results.iter().any(|r| r.call_id == result.call_id)
                {
                    step.results.push(ToolCallResult {
                        call_id: result.call_id.clone(),
                        content: result.content.clone(),
                        is_error: result.status != CallStatus::Ok,
                    });
                }
            }
            EventBody::StepFinished { .. } => {
                let Some(step) = self.step.take() else { return };
                let pending = std::mem::take(&mut self.pending);
                if step.calls.is_empty() && step.text.is_empty() && step.reasoning.is_empty() {
                    self.messages.extend(pending);
                    return;
                }
                let results: Vec<ToolCallResult> = step
                    .calls
                    .iter()
                    .map(|call| {
                        step.results
                            .iter()
                            .find(|r| r.call_id == call.id)
                            .cloned()
                            .unwrap_or_else(|| missing_result(&call.id))
                    })
                    .collect();
                let made_calls = !step.calls.is_empty();
                self.messages.push(Message::assistant_with_reasoning(
                    step.text,
                    step.calls,
                    step.reasoning,
                ));
                if made_calls {
                    self.messages.push(Message::tool_results(results));
                }
                self.messages.extend(pending);
            }
            EventBody::ContextCompacted(compacted) => {
                self.step = None;
                self.pending.clear();
                self.turns_since_compaction = 0;
                self.messages = vec![crate::compact::summary_message(&compacted.summary)];
            }
            _ => {}
        }
    }
}

/// What the model reads of a message another agent sent it.
fn message_note(message: &AgentMessageEvent) -> Message {
    let from = match &message.from_name {
        Some(name) => format!("agent `{name}` (session {})", message.from_session_id),
        None => format!(
            "the agent that started you (session {})",
            message.from_session_id
        ),
    };
    Message::user(format!("Message from {from}:\n\n{}", message.text))
}

/// What the model reads when one of its background children ended: a short notice (the
/// result itself is handed over by `agent_wait`, once).
fn finished_note(finished: &AgentFinishedEvent) -> Message {
    let record = &finished.record;
    let who = match &record.name {
        Some(name) => format!("`{name}` ({})", record.session_id),
        None => record.session_id.clone(),
    };
    Message::user(format!(
        "[Background agent {who} — \"{}\" — ended: {}. Call agent_wait to collect its result.]",
        record.description,
        record.status.as_str()
    ))
}

/// What the model reads when one of its background workflow runs ended: a short notice
/// (`workflow_status` gives the report and the result).
fn workflow_note(run: &WorkflowRun) -> Message {
    Message::user(format!(
        "[Background workflow `{}` run {} ended: {}. Call workflow_status with id {} for its \
         report and result.]",
        run.workflow,
        run.run_id,
        run.status.as_str(),
        run.run_id
    ))
}

/// The result of a call whose own result is missing from a log (a log cut by a crash that
/// recovery did not close): the model is told it did not run, so the conversation stays valid.
fn missing_result(call_id: &str) -> ToolCallResult {
    ToolCallResult::error(
        call_id,
        vec![qilin_protocol::ContentBlock::text(
            "The call has no recorded result: the session ended before it finished.",
        )],
    )
}
