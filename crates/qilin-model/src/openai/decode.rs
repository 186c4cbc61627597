//! Reading the `chat.completion.chunk` stream.

use crate::error::excerpt;
use crate::sse::SseEvent;
use crate::sse_stream::SseDecoder;
use crate::{ModelError, ModelEvent, StopReason};
use qilin_protocol::Usage;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

const PROVIDER: &str = super::PROVIDER;

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Deserialize)]
struct CallDelta {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

/// One streamed call, keyed by its `index`.
#[derive(Default)]
struct Call {
    id: Option<String>,
    name: String,
    started: bool,
    ended: bool,
    /// Argument text that came before the call's name (so before its start).
    early_arguments: String,
}

/// Turns chunks into events. Calls start when their name is known, end (in index order) at
/// the `finish_reason`; usage (from the last chunk, or the latest one that carried it) and
/// `Finished` come at `data: [DONE]`.
#[derive(Default)]
pub(crate) struct ChatDecoder {
    calls: BTreeMap<u64, Call>,
    stop_reason: Option<StopReason>,
    usage: Option<Usage>,
    done: bool,
}

impl SseDecoder for ChatDecoder {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.end_calls(data, out)?;
            if let Some(usage) = self.usage.take() {
                out.push(ModelEvent::Usage(usage));
            }
            let stop_reason = self.stop_reason.take().unwrap_or(if self.calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            });
            out.push(ModelEvent::Finished { stop_reason });
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|err| ModelError::InvalidChunk {
            provider: PROVIDER,
            reason: format!("expected a chat.completion.chunk JSON object: {err}"),
            chunk: excerpt(data),
        })?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        for choice in chunk.choices {
            if let Some(delta) = choice.delta {
                self.apply_delta(delta, data, out)?;
            }
            if let Some(reason) = choice.finish_reason {
                self.stop_reason = Some(stop_reason(&reason));
                self.end_calls(data, out)?;
            }
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
                cache_read_tokens: usage
                    .prompt_tokens_details
                    .and_then(|details| details.cached_tokens)
                    .unwrap_or(0),
            });
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn end_marker(&self) -> &'static str {
        "its end marker `data: [DONE]`"
    }
}

impl ChatDecoder {
    fn apply_delta(
        &mut self,
        delta: Delta,
        data: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
            out.push(ModelEvent::TextDelta(text));
        }
        for (position, call_delta) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
            let index = call_delta.index.unwrap_or(position as u64);
            let call = self.calls.entry(index).or_default();
            if call.ended {
                return Err(ModelError::InvalidChunk {
                    provider: PROVIDER,
                    reason: format!("tool call {index} continued after the finish reason"),
                    chunk: excerpt(data),
                });
            }
            if !call.started && call.id.is_none() {
                call.id = call_delta.id.filter(|id| !id.is_empty());
            }
            let (name, arguments) = match call_delta.function {
                Some(function) => (function.name, function.arguments.unwrap_or_default()),
                None => (None, String::new()),
            };
            if !call.started {
                if let Some(name) = name.filter(|name| !name.is_empty()) {
                    call.name = name;
                }
                call.early_arguments.push_str(&arguments);
                if !call.name.is_empty() {
                    call.started = true;
                    let id = call.id.get_or_insert_with(generated_id).clone();
                    out.push(ModelEvent::ToolCallStart {
                        id: id.clone(),
                        name: call.name.clone(),
                    });
                    let early = std::mem::take(&mut call.early_arguments);
                    if !early.is_empty() {
                        out.push(ModelEvent::ToolCallDelta {
                            id,
                            arguments_delta: early,
                        });
                    }
                }
            } else if !arguments.is_empty() {
                out.push(ModelEvent::ToolCallDelta {
                    id: call.id.clone().unwrap_or_default(),
                    arguments_delta: arguments,
                });
            }
        }
        Ok(())
    }

    /// Ends every open call in index order; a call that never got a name is an error.
    fn end_calls(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        for (index, call) in &mut self.calls {
            if call.ended {
                continue;
            }
            if !call.started {
                return Err(ModelError::InvalidChunk {
                    provider: PROVIDER,
                    reason: format!("tool call {index} ended without a function name"),
                    chunk: excerpt(data),
                });
            }
            call.ended = true;
            out.push(ModelEvent::ToolCallEnd {
                id: call.id.clone().unwrap_or_default(),
            });
        }
        Ok(())
    }
}

/// An id for a call whose server sent none (some compatible servers omit it).
fn generated_id() -> String {
    let suffix: String = std::iter::repeat_with(fastrand::alphanumeric)
        .take(16)
        .collect();
    format!("call_{suffix}")
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_owned()),
    }
}

/// An `{"error": ...}` chunk, which compatible servers send when generation fails midway.
fn stream_error(error: &Value) -> ModelError {
    let field = |key: &str| error.get(key).and_then(Value::as_str);
    let message = match error {
        Value::String(text) => text.clone(),
        _ => field("message")
            .map(str::to_owned)
            .unwrap_or_else(|| error.to_string()),
    };
    ModelError::Provider {
        provider: PROVIDER,
        kind: field("type")
            .or_else(|| field("code"))
            .unwrap_or("error")
            .to_owned(),
        message,
    }
}
