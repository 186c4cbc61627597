//! The model-facing history, folded from the event log.
//!
//! The loop never keeps a history of its own: it folds the events it and the execution layer
//! record, and sends what the fold holds. A stored log folds to exactly the same messages, so a
//! session resumed in another process sends the same bytes an uninterrupted one would have.

use qilin_model::{AssistantToolCall, Message, Reasoning, ToolCallResult};
use qilin_protocol::{CallStatus, CallerKind, Event, EventBody};

/// The messages a provider receives, rebuilt from events in `seq` order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryFold {
    messages: Vec<Message>,
    step: Option<StepSoFar>,
    turns: u32,
    /// Turns started since the session began or since its last compaction.
    turns_since_compaction: u32,
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
                self.messages.push(Message::user(prompt.clone()));
            }
            EventBody::StepStarted { .. } => self.step = Some(StepSoFar::default()),
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
                if step.calls.is_empty() && step.text.is_empty() && step.reasoning.is_empty() {
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
            }
            EventBody::ContextCompacted(compacted) => {
                self.step = None;
                self.turns_since_compaction = 0;
                self.messages = vec![crate::compact::summary_message(&compacted.summary)];
            }
            _ => {}
        }
    }
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
