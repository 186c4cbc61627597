//! Reading the `chat.completion.chunk` stream, as OpenAI and the compatible servers send it.
//!
//! Chunks are read field by field from JSON values rather than into fixed types, because the
//! servers differ: `delta.content` is a string or (Mistral) a list of text and thinking parts;
//! reasoning comes as `reasoning_content` (DeepSeek, llama.cpp, xAI) or `reasoning` (Groq,
//! Ollama, vLLM); a refusal as `delta.refusal` (OpenAI); usage at the top level, inside
//! `x_groq` (Groq), with cached tokens under `prompt_tokens_details` or
//! `prompt_cache_hit_tokens` (DeepSeek). Whatever is not understood is skipped with a debug
//! trace; only a chunk that is not JSON at all, a call that never gets a name, or a call that
//! continues after its finish reason is an error.

use crate::error::excerpt;
use crate::sse::SseEvent;
use crate::sse_stream::SseDecoder;
use crate::{ModelError, ModelEvent, Reasoning, StopReason};
use qilin_protocol::Usage;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const PROVIDER: &str = super::PROVIDER;

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

/// Reasoning streamed as `reasoning_content`, which is sent back with the message.
struct OpenReasoning {
    text: String,
}

/// Turns chunks into events. Calls start when their name is known, end (in index order) at
/// the `finish_reason`; `reasoning_content` ends as a [`ModelEvent::ReasoningBlock`] when the
/// answer's text or a call begins, or at the end; usage (the latest a chunk carried) and
/// `Finished` come at `data: [DONE]`.
#[derive(Default)]
pub(crate) struct ChatDecoder {
    calls: BTreeMap<u64, Call>,
    reasoning: Option<OpenReasoning>,
    refused: bool,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl SseDecoder for ChatDecoder {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finish(data, out)?;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk = match serde_json::from_str::<Value>(data) {
            Ok(Value::Object(chunk)) => chunk,
            Ok(_) | Err(_) if is_named_event(event) => {
                tracing::debug!(
                    event = %event.event,
                    data = %excerpt(data),
                    "skipped an SSE event that is not a chat.completion.chunk"
                );
                return Ok(());
            }
            Ok(other) => {
                return Err(invalid(
                    format!("expected a chat.completion.chunk JSON object, got {other}"),
                    data,
                ));
            }
            Err(err) => {
                return Err(invalid(
                    format!("expected a chat.completion.chunk JSON object: {err}"),
                    data,
                ));
            }
        };
        if let Some(error) = chunk.get("error").filter(|error| !error.is_null()) {
            return Err(stream_error(error));
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if let Some(delta) = choice.get("delta").and_then(Value::as_object) {
                self.apply_delta(delta, data, out)?;
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
                self.close_reasoning(out);
                self.end_calls(data, out)?;
            }
        }
        let usage = chunk
            .get("usage")
            .filter(|usage| usage.is_object())
            .or_else(|| chunk.get("x_groq")?.get("usage"))
            .and_then(read_usage);
        if usage.is_some() {
            self.usage = usage;
        } else if choices.is_none() {
            tracing::debug!(chunk = %excerpt(data), "skipped a chunk with neither choices nor usage");
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn end_marker(&self) -> &'static str {
        "its end marker `data: [DONE]`"
    }

    fn take_unreported_usage(&mut self) -> Option<Usage> {
        self.usage.take()
    }
}

impl ChatDecoder {
    fn apply_delta(
        &mut self,
        delta: &Map<String, Value>,
        data: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        self.apply_reasoning(delta, out);
        match delta.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => self.text(text, out),
            Some(Value::Array(parts)) => {
                for part in parts {
                    self.apply_part(part, out);
                }
            }
            Some(other) => {
                tracing::debug!(content = %other, "skipped a delta content of an unknown kind")
            }
        }
        if let Some(refusal) = delta.get("refusal").and_then(Value::as_str) {
            self.refused = true;
            self.text(refusal, out);
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for (position, call_delta) in calls.into_iter().flatten().enumerate() {
            self.apply_call(position, call_delta, data, out)?;
        }
        Ok(())
    }

    /// `reasoning_content` (kept, and sent back) or else `reasoning` (shown only).
    fn apply_reasoning(&mut self, delta: &Map<String, Value>, out: &mut Vec<ModelEvent>) {
        if let Some(text) = delta.get("reasoning_content").and_then(Value::as_str) {
            self.reasoning
                .get_or_insert_with(|| OpenReasoning {
                    text: String::new(),
                })
                .text
                .push_str(text);
            if !text.is_empty() {
                out.push(ModelEvent::ReasoningDelta(text.to_owned()));
            }
        } else if let Some(text) = delta.get("reasoning").and_then(Value::as_str)
            && !text.is_empty()
        {
            out.push(ModelEvent::ReasoningDelta(text.to_owned()));
        }
    }

    /// One part of a list-valued `content`: `{type: text, text}` is text, `{type: thinking,
    /// thinking: [parts] | text}` is reasoning (shown only); other kinds are skipped.
    fn apply_part(&mut self, part: &Value, out: &mut Vec<ModelEvent>) {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    self.text(text, out);
                }
            }
            Some("thinking") => {
                let text = match part.get("thinking") {
                    Some(Value::String(text)) => text.clone(),
                    Some(Value::Array(inner)) => inner
                        .iter()
                        .filter_map(|piece| piece.get("text").and_then(Value::as_str))
                        .collect(),
                    _ => String::new(),
                };
                if !text.is_empty() {
                    out.push(ModelEvent::ReasoningDelta(text));
                }
            }
            _ => tracing::debug!(part = %part, "skipped a content part of an unknown kind"),
        }
    }

    fn text(&mut self, text: &str, out: &mut Vec<ModelEvent>) {
        if text.is_empty() {
            return;
        }
        self.close_reasoning(out);
        out.push(ModelEvent::TextDelta(text.to_owned()));
    }

    /// Ends the `reasoning_content` streamed so far as a block to send back.
    fn close_reasoning(&mut self, out: &mut Vec<ModelEvent>) {
        if let Some(open) = self.reasoning.take() {
            out.push(ModelEvent::ReasoningBlock(Reasoning::Text {
                text: open.text,
                signature: None,
            }));
        }
    }

    fn apply_call(
        &mut self,
        position: usize,
        call_delta: &Value,
        data: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        let index = call_delta
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let function = call_delta.get("function");
        let field = |key: &str| function.and_then(|f| f.get(key)).and_then(Value::as_str);
        let name = field("name").filter(|name| !name.is_empty());
        let arguments = field("arguments").unwrap_or_default();
        if !self.calls.get(&index).is_some_and(|call| call.started) && name.is_some() {
            self.close_reasoning(out);
        }
        let call = self.calls.entry(index).or_default();
        if call.ended {
            return Err(invalid(
                format!("tool call {index} continued after the finish reason"),
                data,
            ));
        }
        if !call.started && call.id.is_none() {
            call.id = call_delta
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map(str::to_owned);
        }
        if !call.started {
            if let Some(name) = name {
                call.name = name.to_owned();
            }
            call.early_arguments.push_str(arguments);
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
                arguments_delta: arguments.to_owned(),
            });
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
                return Err(invalid(
                    format!("tool call {index} ended without a function name"),
                    data,
                ));
            }
            call.ended = true;
            out.push(ModelEvent::ToolCallEnd {
                id: call.id.clone().unwrap_or_default(),
            });
        }
        Ok(())
    }

    /// `data: [DONE]`: the open reasoning and calls end, then usage, then `Finished`.
    fn finish(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        self.close_reasoning(out);
        self.end_calls(data, out)?;
        if let Some(usage) = self.usage.take() {
            out.push(ModelEvent::Usage(usage));
        }
        let stop_reason = stop_reason(
            self.finish_reason.as_deref(),
            self.refused,
            !self.calls.is_empty(),
        );
        out.push(ModelEvent::Finished { stop_reason });
        self.done = true;
        Ok(())
    }
}

/// Whether the event carries an `event:` name other than the default (`message`) or
/// `error`: a kind the chunk stream does not define, skipped when its data is not a chunk.
fn is_named_event(event: &SseEvent) -> bool {
    !matches!(event.event.as_str(), "" | "message" | "error")
}

fn invalid(reason: String, data: &str) -> ModelError {
    ModelError::InvalidChunk {
        provider: PROVIDER,
        reason,
        chunk: excerpt(data),
    }
}

/// Usage from `{prompt_tokens, completion_tokens, prompt_tokens_details: {cached_tokens}}`;
/// DeepSeek names the cached part `prompt_cache_hit_tokens`.
fn read_usage(usage: &Value) -> Option<Usage> {
    let number = |value: Option<&Value>| value.and_then(Value::as_u64);
    if !usage.is_object() {
        return None;
    }
    let cached = number(usage.pointer("/prompt_tokens_details/cached_tokens"))
        .or_else(|| number(usage.get("prompt_cache_hit_tokens")))
        .unwrap_or(0);
    Some(Usage {
        input_tokens: number(usage.get("prompt_tokens")).unwrap_or(0),
        output_tokens: number(usage.get("completion_tokens")).unwrap_or(0),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    })
}

/// An id for a call whose server sent none (some compatible servers omit it).
fn generated_id() -> String {
    let suffix: String = std::iter::repeat_with(fastrand::alphanumeric)
        .take(16)
        .collect();
    format!("call_{suffix}")
}

/// The stop reason of a finished answer. `stop` after a refusal is [`StopReason::Refusal`];
/// `stop` (or no reason) with calls is [`StopReason::ToolUse`], as some servers say `stop`
/// after calls.
fn stop_reason(reason: Option<&str>, refused: bool, made_calls: bool) -> StopReason {
    match reason {
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        Some("stop") | None if refused => StopReason::Refusal,
        Some("stop") | None if made_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some(other) => StopReason::Other(other.to_owned()),
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

#[cfg(test)]
mod tests {
    use super::stop_reason;
    use crate::StopReason;

    #[test]
    fn finish_reasons_map_to_stop_reasons() {
        assert_eq!(stop_reason(Some("stop"), false, false), StopReason::EndTurn);
        assert_eq!(stop_reason(None, false, false), StopReason::EndTurn);
        assert_eq!(
            stop_reason(Some("tool_calls"), false, true),
            StopReason::ToolUse
        );
        assert_eq!(stop_reason(Some("stop"), false, true), StopReason::ToolUse);
        assert_eq!(
            stop_reason(Some("length"), false, true),
            StopReason::MaxTokens
        );
        assert_eq!(
            stop_reason(Some("content_filter"), false, false),
            StopReason::ContentFilter
        );
        assert_eq!(stop_reason(Some("stop"), true, false), StopReason::Refusal);
        assert_eq!(
            stop_reason(Some("eos"), false, false),
            StopReason::Other("eos".into())
        );
    }
}
