use qilin_protocol::Usage;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One piece of a streamed model answer.
///
/// The order within one answer: reasoning, text deltas and tool calls as the model produces
/// them; each call is `ToolCallStart`, zero or more `ToolCallDelta`s, then `ToolCallEnd` (every
/// call ends before the answer finishes, a call cut by the token limit included); each run of
/// reasoning the provider wants back ends with a `ReasoningBlock`; at most one `Usage`;
/// `Finished` last. A stream that fails after the provider announced usage yields that
/// `Usage` before the error, so a failed step still counts the tokens it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelEvent {
    /// More of the answer's text. A refusal's text arrives here too, so it is shown and kept
    /// as the answer; the stop reason then says [`StopReason::Refusal`].
    TextDelta(String),
    /// More of the model's reasoning (thinking) text, as it streams: for clients to show or
    /// fold, never part of the answer's text.
    ReasoningDelta(String),
    /// A finished piece of reasoning the provider wants sent back with the assistant
    /// message (Anthropic thinking with its signature, redacted thinking, DeepSeek's
    /// `reasoning_content`): keep it in [`crate::Message::Assistant`]'s `reasoning`.
    /// Reasoning a provider never asks back (Mistral's thinking parts, a `reasoning` field)
    /// streams as [`ModelEvent::ReasoningDelta`] only.
    ReasoningBlock(Reasoning),
    /// The model named a tool; its arguments follow as deltas.
    ToolCallStart {
        /// The call's id.
        id: String,
        /// The tool's wire name.
        name: String,
    },
    /// More of a call's raw argument text.
    ToolCallDelta {
        /// The call's id.
        id: String,
        /// The next piece of argument text.
        arguments_delta: String,
    },
    /// A call's arguments are complete, or cut short by the token limit (the answer then
    /// finishes with [`StopReason::MaxTokens`]).
    ToolCallEnd {
        /// The call's id.
        id: String,
    },
    /// Token counts of this answer. `input_tokens` counts the whole prompt, cached part
    /// included; `cache_read_tokens` is the part served from the provider's cache.
    Usage(Usage),
    /// The answer is complete.
    Finished {
        /// Why the model stopped.
        stop_reason: StopReason,
    },
}

/// Reasoning kept with an assistant message and sent back to the provider that produced it,
/// each provider encoding what its API requires (and leaving out what it forbids).
///
/// Serialized as `{"type": "text", "text", "signature"}` or `{"type": "redacted", "data"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reasoning {
    /// Reasoning text. `signature` is the provider's proof that the text is its own
    /// (Anthropic's thinking blocks carry one); `None` for reasoning an OpenAI-compatible
    /// server sent as `reasoning_content`.
    Text {
        /// The reasoning as the model wrote it.
        text: String,
        /// The provider's signature over it, sent back verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider keeps encrypted (Anthropic's `redacted_thinking`), sent back
    /// verbatim.
    Redacted {
        /// The encrypted reasoning.
        data: String,
    },
}

/// Why a model stopped answering.
///
/// Serialized as its name (`end_turn`, `tool_use`, `max_tokens`, `refusal`,
/// `content_filter`, or another provider's reason as it was named).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants its tool calls run.
    ToolUse,
    /// The answer hit the token limit (OpenAI `finish_reason: length`, Anthropic
    /// `stop_reason: max_tokens`); a call it was writing is cut short.
    MaxTokens,
    /// The model declined to answer (Anthropic `stop_reason: refusal`, an OpenAI answer that
    /// streamed `delta.refusal`); the refusal's text, if any, is the answer's text.
    Refusal,
    /// The provider's content filter stopped the answer (OpenAI `finish_reason:
    /// content_filter`).
    ContentFilter,
    /// Another reason, as the provider named it.
    Other(String),
}

impl StopReason {
    /// The reason's name, as [`fmt::Display`] writes it.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::Refusal => "refusal",
            StopReason::ContentFilter => "content_filter",
            StopReason::Other(reason) => reason,
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<String> for StopReason {
    fn from(name: String) -> Self {
        match name.as_str() {
            "end_turn" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
            "refusal" => StopReason::Refusal,
            "content_filter" => StopReason::ContentFilter,
            _ => StopReason::Other(name),
        }
    }
}

impl From<StopReason> for String {
    fn from(reason: StopReason) -> Self {
        match reason {
            StopReason::Other(name) => name,
            known => known.as_str().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_serialize_as_their_names_and_read_back() {
        for reason in [
            StopReason::EndTurn,
            StopReason::ToolUse,
            StopReason::MaxTokens,
            StopReason::Refusal,
            StopReason::ContentFilter,
            StopReason::Other("pause_turn".into()),
        ] {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{reason}\""));
            assert_eq!(serde_json::from_str::<StopReason>(&json).unwrap(), reason);
        }
    }

    #[test]
    fn reasoning_serializes_with_a_type_tag() {
        let signed = Reasoning::Text {
            text: "Check the file first.".into(),
            signature: Some("EqQBCgIYAh".into()),
        };
        let json = serde_json::to_value(&signed).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "text", "text": "Check the file first.", "signature": "EqQBCgIYAh"})
        );
        assert_eq!(serde_json::from_value::<Reasoning>(json).unwrap(), signed);
        let unsigned: Reasoning = serde_json::from_str(r#"{"type":"text","text":"hm"}"#).unwrap();
        assert_eq!(
            unsigned,
            Reasoning::Text {
                text: "hm".into(),
                signature: None
            }
        );
        let redacted = Reasoning::Redacted {
            data: "EmwKAhgB".into(),
        };
        assert_eq!(
            serde_json::to_string(&redacted).unwrap(),
            r#"{"type":"redacted","data":"EmwKAhgB"}"#
        );
    }
}
