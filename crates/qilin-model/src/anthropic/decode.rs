//! Reading the Messages event stream.

use crate::error::excerpt;
use crate::sse::SseEvent;
use crate::sse_stream::SseDecoder;
use crate::{ModelError, ModelEvent, Reasoning, StopReason};
use qilin_protocol::Usage;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

const PROVIDER: &str = super::PROVIDER;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u64,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
}

#[derive(Deserialize)]
struct StartMessage {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

/// What an open content block is.
enum OpenBlock {
    Text,
    Tool {
        id: String,
    },
    /// Thinking: its text so far and its signature once sent.
    Thinking {
        text: String,
        signature: Option<String>,
    },
    /// Redacted thinking, whole from its start.
    Redacted {
        data: String,
    },
    /// A block Qilin does not stream (server tools, future kinds): its deltas are skipped.
    Skipped,
}

impl OpenBlock {
    /// The event a block's end produces: a call's end, a reasoning block, or none.
    fn end(self) -> Option<ModelEvent> {
        match self {
            OpenBlock::Tool { id } => Some(ModelEvent::ToolCallEnd { id }),
            OpenBlock::Thinking { text, signature } => {
                Some(ModelEvent::ReasoningBlock(Reasoning::Text {
                    text,
                    signature,
                }))
            }
            OpenBlock::Redacted { data } => {
                Some(ModelEvent::ReasoningBlock(Reasoning::Redacted { data }))
            }
            OpenBlock::Text | OpenBlock::Skipped => None,
        }
    }
}

/// Turns Messages events into model events: text blocks into text deltas, thinking blocks
/// into reasoning deltas and, at their `content_block_stop`, a reasoning block with their
/// signature; `tool_use` blocks into calls (ended at their `content_block_stop`); usage and
/// `Finished` at `message_stop`. Unknown event, block and delta types are skipped.
#[derive(Default)]
pub(crate) struct MessagesDecoder {
    blocks: BTreeMap<u64, OpenBlock>,
    any_tool: bool,
    usage_seen: bool,
    usage_reported: bool,
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_tokens: u64,
    cache_read_tokens: u64,
    stop_reason: Option<StopReason>,
    done: bool,
}

impl SseDecoder for MessagesDecoder {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let data = event.data.trim();
        let invalid = |reason: String| ModelError::InvalidChunk {
            provider: PROVIDER,
            reason,
            chunk: excerpt(data),
        };
        let wire: Wire = match serde_json::from_str(data) {
            Ok(wire) => wire,
            Err(err) => {
                let kind = serde_json::from_str::<Value>(data)
                    .ok()
                    .and_then(|value| value.get("type")?.as_str().map(str::to_owned));
                return match kind {
                    Some(kind) if !is_known(&kind) => {
                        tracing::debug!(kind, "skipped a Messages stream event of an unknown type");
                        Ok(())
                    }
                    _ => Err(invalid(format!(
                        "expected a Messages stream event JSON object: {err}"
                    ))),
                };
            }
        };
        match wire {
            Wire::MessageStart { message } => self.add_usage(message.usage),
            Wire::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    Block::Text { text } => {
                        if !text.is_empty() {
                            out.push(ModelEvent::TextDelta(text));
                        }
                        OpenBlock::Text
                    }
                    Block::ToolUse { id, name, input } => {
                        self.any_tool = true;
                        out.push(ModelEvent::ToolCallStart {
                            id: id.clone(),
                            name,
                        });
                        if input.as_object().is_some_and(|object| !object.is_empty()) {
                            out.push(ModelEvent::ToolCallDelta {
                                id: id.clone(),
                                arguments_delta: input.to_string(),
                            });
                        }
                        OpenBlock::Tool { id }
                    }
                    Block::Thinking {
                        thinking,
                        signature,
                    } => {
                        if !thinking.is_empty() {
                            out.push(ModelEvent::ReasoningDelta(thinking.clone()));
                        }
                        OpenBlock::Thinking {
                            text: thinking,
                            signature: signature.filter(|s| !s.is_empty()),
                        }
                    }
                    Block::RedactedThinking { data } => OpenBlock::Redacted { data },
                    Block::Other => {
                        tracing::debug!(
                            block = %excerpt(data),
                            "skipped a content block of a type Qilin does not stream"
                        );
                        OpenBlock::Skipped
                    }
                };
                if self.blocks.insert(index, block).is_some() {
                    return Err(invalid(format!("content block {index} started twice")));
                }
            }
            Wire::ContentBlockDelta { index, delta } => {
                match (self.blocks.get_mut(&index), delta) {
                    (None, _) => {
                        return Err(invalid(format!(
                            "a delta for content block {index}, which was never started"
                        )));
                    }
                    (Some(OpenBlock::Text), BlockDelta::TextDelta { text }) => {
                        if !text.is_empty() {
                            out.push(ModelEvent::TextDelta(text));
                        }
                    }
                    (Some(OpenBlock::Tool { id }), BlockDelta::InputJsonDelta { partial_json }) => {
                        if !partial_json.is_empty() {
                            out.push(ModelEvent::ToolCallDelta {
                                id: id.clone(),
                                arguments_delta: partial_json,
                            });
                        }
                    }
                    (
                        Some(OpenBlock::Thinking { text, .. }),
                        BlockDelta::ThinkingDelta { thinking },
                    ) => {
                        if !thinking.is_empty() {
                            text.push_str(&thinking);
                            out.push(ModelEvent::ReasoningDelta(thinking));
                        }
                    }
                    (
                        Some(OpenBlock::Thinking { signature, .. }),
                        BlockDelta::SignatureDelta { signature: more },
                    ) => signature.get_or_insert_with(String::new).push_str(&more),
                    (Some(OpenBlock::Skipped), _) => {}
                    (Some(_), BlockDelta::Other) => {
                        tracing::debug!(delta = %excerpt(data), "skipped a delta of an unknown type");
                    }
                    (Some(_), _) => {
                        return Err(invalid(format!(
                            "a delta of the wrong kind for content block {index}"
                        )));
                    }
                }
            }
            Wire::ContentBlockStop { index } => match self.blocks.remove(&index) {
                Some(block) => out.extend(block.end()),
                None => {
                    return Err(invalid(format!(
                        "content block {index} stopped without being started"
                    )));
                }
            },
            Wire::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(stop_reason(&reason));
                }
                self.add_usage(usage);
            }
            Wire::MessageStop => self.finish(out),
            Wire::Ping => {}
            Wire::Error { error } => {
                let field = |key: &str| error.get(key).and_then(Value::as_str);
                return Err(ModelError::Provider {
                    provider: PROVIDER,
                    kind: field("type").unwrap_or("error").to_owned(),
                    message: field("message")
                        .map(str::to_owned)
                        .unwrap_or_else(|| error.to_string()),
                });
            }
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn end_marker(&self) -> &'static str {
        "its end marker `message_stop`"
    }

    fn take_unreported_usage(&mut self) -> Option<Usage> {
        if !self.usage_seen || self.usage_reported {
            return None;
        }
        self.usage_reported = true;
        Some(self.usage())
    }
}

impl MessagesDecoder {
    /// Usage fields are cumulative: the latest value of each wins.
    fn add_usage(&mut self, usage: Option<WireUsage>) {
        let Some(usage) = usage else { return };
        self.usage_seen = true;
        let fields = [
            (usage.input_tokens, &mut self.input_tokens),
            (usage.output_tokens, &mut self.output_tokens),
            (
                usage.cache_creation_input_tokens,
                &mut self.cache_creation_tokens,
            ),
            (usage.cache_read_input_tokens, &mut self.cache_read_tokens),
        ];
        for (value, slot) in fields {
            if let Some(value) = value {
                *slot = value;
            }
        }
    }

    /// The usage so far; `input_tokens` counts the cached and cache-writing parts too.
    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens + self.cache_creation_tokens + self.cache_read_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens,
            cache_write_tokens: self.cache_creation_tokens,
        }
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        for (_, block) in std::mem::take(&mut self.blocks) {
            out.extend(block.end());
        }
        self.usage_reported = true;
        out.push(ModelEvent::Usage(self.usage()));
        let stop_reason = self.stop_reason.take().unwrap_or(if self.any_tool {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        });
        out.push(ModelEvent::Finished { stop_reason });
        self.done = true;
    }
}

/// Whether `kind` is an event type this decoder reads (an unknown type is skipped, as the API
/// asks of clients; a known one that does not parse is an error).
fn is_known(kind: &str) -> bool {
    matches!(
        kind,
        "message_start"
            | "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_delta"
            | "message_stop"
            | "ping"
            | "error"
    )
}

/// `end_turn` and `stop_sequence` end the turn; `refusal` is a refusal; others are kept
/// as named (`pause_turn`, ...).
fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}
