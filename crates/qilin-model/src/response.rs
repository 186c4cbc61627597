use crate::provider::ModelStream;
use crate::{AssistantToolCall, Message, ModelError, ModelEvent, Reasoning, StopReason};
use futures_util::StreamExt;
use qilin_protocol::Usage;

/// A whole answer, assembled from its events: what goes back into the conversation as the
/// assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelResponse {
    /// The text, all deltas joined (a refusal's text included).
    pub text: String,
    /// The reasoning text, all reasoning deltas joined: for showing, not sent back.
    pub reasoning_text: String,
    /// The reasoning to send back with the assistant message, in order.
    pub reasoning: Vec<Reasoning>,
    /// The calls in the order they started, each with its whole argument text.
    pub tool_calls: Vec<AssistantToolCall>,
    /// The answer's token counts (zero until the provider reports them).
    pub usage: Usage,
    /// Why the model stopped; `None` until [`ModelEvent::Finished`] is applied.
    pub stop_reason: Option<StopReason>,
}

impl ModelResponse {
    /// Adds one event. A delta for a call that never started is kept under a call of that
    /// id with an empty name, so no argument text is lost.
    pub fn apply(&mut self, event: &ModelEvent) {
        match event {
            ModelEvent::TextDelta(text) => self.text.push_str(text),
            ModelEvent::ReasoningDelta(text) => self.reasoning_text.push_str(text),
            ModelEvent::ReasoningBlock(block) => self.reasoning.push(block.clone()),
            ModelEvent::ToolCallStart { id, name } => self.tool_calls.push(AssistantToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: String::new(),
            }),
            ModelEvent::ToolCallDelta {
                id,
                arguments_delta,
            } => match self.tool_calls.iter_mut().rev().find(|call| call.id == *id) {
                Some(call) => call.arguments.push_str(arguments_delta),
                None => self.tool_calls.push(AssistantToolCall {
                    id: id.clone(),
                    name: String::new(),
                    arguments: arguments_delta.clone(),
                }),
            },
            ModelEvent::ToolCallEnd { .. } => {}
            ModelEvent::Usage(usage) => self.usage = *usage,
            ModelEvent::Finished { stop_reason } => self.stop_reason = Some(stop_reason.clone()),
        }
    }

    /// Reads a whole stream; the first error ends it.
    pub async fn collect(mut stream: ModelStream) -> Result<ModelResponse, ModelError> {
        let mut response = ModelResponse::default();
        while let Some(event) = stream.next().await {
            response.apply(&event?);
        }
        Ok(response)
    }

    /// The answer as the assistant message of the conversation, with its reasoning.
    pub fn to_message(&self) -> Message {
        Message::assistant_with_reasoning(
            self.text.clone(),
            self.tool_calls.clone(),
            self.reasoning.clone(),
        )
    }
}
