use crate::Reasoning;
use qilin_protocol::ContentBlock;
use qilin_tool::DirectDefinition;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// One request to a model: the provider-neutral conversation a provider translates into its
/// own wire format.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRequest {
    /// The model name as the provider knows it (e.g. `gpt-4.1`, `claude-sonnet-4-5`).
    pub model: String,
    /// The system prompt; empty for none.
    pub system: String,
    /// The tools the model may call, exactly as the tool registry describes them.
    pub tools: Vec<DirectDefinition>,
    /// The conversation so far, oldest first.
    pub messages: Vec<Message>,
    /// The most tokens the model may generate in this answer; the provider's default when
    /// `None`.
    pub max_tokens: Option<u32>,
    /// How much the model should reason before answering; the model's default when `None`.
    /// Sent as OpenAI's `reasoning_effort` and Anthropic's `thinking` (see
    /// [`ReasoningSetting`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningSetting>,
}

/// How much a model should reason (think) before answering: an effort, or a token budget.
///
/// Each provider gets what its API reads: OpenAI-compatible servers `reasoning_effort`
/// (`low`, `medium`, `high`; a budget is sent as the effort it is closest to, see
/// [`ReasoningSetting::effort`]); Anthropic `thinking: {type: enabled, budget_tokens}` (an
/// effort is sent as the budget [`ReasoningSetting::budget_tokens`] gives it).
///
/// Written (in an agent file, in JSON) as `low`, `medium`, `high`, or a whole number of
/// tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReasoningSetting {
    /// An effort level.
    Effort(ReasoningEffort),
    /// At most this many tokens of reasoning.
    BudgetTokens(u32),
}

/// A reasoning effort level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReasoningEffort {
    /// Little reasoning: quick answers.
    Low,
    /// The usual amount.
    Medium,
    /// Much reasoning: hard problems.
    High,
}

impl ReasoningEffort {
    /// `low`, `medium` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

impl ReasoningSetting {
    /// The token budget of an effort: `low` 2,048, `medium` 8,192, `high` 24,576; a budget
    /// as given.
    pub fn budget_tokens(self) -> u32 {
        match self {
            ReasoningSetting::Effort(ReasoningEffort::Low) => 2_048,
            ReasoningSetting::Effort(ReasoningEffort::Medium) => 8_192,
            ReasoningSetting::Effort(ReasoningEffort::High) => 24_576,
            ReasoningSetting::BudgetTokens(tokens) => tokens,
        }
    }

    /// The effort of a budget: up to 4,096 tokens `low`, up to 16,384 `medium`, more `high`
    /// (so each effort's own budget maps back to it); an effort as given.
    pub fn effort(self) -> ReasoningEffort {
        match self {
            ReasoningSetting::Effort(effort) => effort,
            ReasoningSetting::BudgetTokens(tokens) if tokens <= 4_096 => ReasoningEffort::Low,
            ReasoningSetting::BudgetTokens(tokens) if tokens <= 16_384 => ReasoningEffort::Medium,
            ReasoningSetting::BudgetTokens(_) => ReasoningEffort::High,
        }
    }
}

impl fmt::Display for ReasoningSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReasoningSetting::Effort(effort) => f.write_str(effort.as_str()),
            ReasoningSetting::BudgetTokens(tokens) => write!(f, "{tokens} tokens"),
        }
    }
}

impl Serialize for ReasoningSetting {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ReasoningSetting::Effort(effort) => serializer.serialize_str(effort.as_str()),
            ReasoningSetting::BudgetTokens(tokens) => serializer.serialize_u32(*tokens),
        }
    }
}

impl<'de> Deserialize<'de> for ReasoningSetting {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SettingVisitor;
        impl Visitor<'_> for SettingVisitor {
            type Value = ReasoningSetting;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`low`, `medium`, `high` or a token budget (a whole number above 0)")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<ReasoningSetting, E> {
                let effort = match value.trim() {
                    "low" => ReasoningEffort::Low,
                    "medium" => ReasoningEffort::Medium,
                    "high" => ReasoningEffort::High,
                    other => {
                        return Err(E::custom(format!(
                            "`{other}` is not a reasoning setting; write `low`, `medium`, \
                             `high` or a token budget such as `8000`"
                        )));
                    }
                };
                Ok(ReasoningSetting::Effort(effort))
            }
            fn visit_u64<E: de::Error>(self, tokens: u64) -> Result<ReasoningSetting, E> {
                match u32::try_from(tokens) {
                    Ok(tokens) if tokens > 0 => Ok(ReasoningSetting::BudgetTokens(tokens)),
                    _ => Err(E::custom(format!(
                        "a reasoning budget of {tokens} tokens is out of range; give 1 to {}",
                        u32::MAX
                    ))),
                }
            }
            fn visit_i64<E: de::Error>(self, tokens: i64) -> Result<ReasoningSetting, E> {
                match u64::try_from(tokens) {
                    Ok(tokens) => self.visit_u64(tokens),
                    Err(_) => Err(E::custom(format!(
                        "a reasoning budget of {tokens} tokens is out of range; give a whole \
                         number above 0"
                    ))),
                }
            }
        }
        deserializer.deserialize_any(SettingVisitor)
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user said.
    User {
        /// The user's text.
        text: String,
    },
    /// What the model answered: its text, the tools it called, and the reasoning its
    /// provider wants sent back.
    Assistant {
        /// The answer's text; empty when the model only called tools.
        text: String,
        /// The calls, in the order the model made them.
        tool_calls: Vec<AssistantToolCall>,
        /// The answer's [`ModelEvent::ReasoningBlock`](crate::ModelEvent::ReasoningBlock)s,
        /// in order. Each provider sends back what its API requires and leaves out the rest
        /// (another provider's reasoning included): Anthropic its signed and redacted
        /// thinking when the request turns thinking on; OpenAI-compatible servers unsigned
        /// text as `reasoning_content` on the assistant messages of a turn that called tools
        /// (which DeepSeek's thinking mode requires).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<Reasoning>,
    },
    /// The results of the calls of the assistant message before it.
    ToolResults {
        /// One result per call, each under its call's id.
        results: Vec<ToolCallResult>,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// An assistant message with its text and tool calls, and no reasoning.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<AssistantToolCall>) -> Self {
        Self::assistant_with_reasoning(text, tool_calls, Vec::new())
    }

    /// An assistant message with its text, tool calls and the reasoning to send back.
    pub fn assistant_with_reasoning(
        text: impl Into<String>,
        tool_calls: Vec<AssistantToolCall>,
        reasoning: Vec<Reasoning>,
    ) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls,
            reasoning,
        }
    }

    /// A message carrying tool results.
    pub fn tool_results(results: Vec<ToolCallResult>) -> Self {
        Message::ToolResults { results }
    }
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistantToolCall {
    /// The call's id, as the provider assigned it.
    pub id: String,
    /// The tool's wire name.
    pub name: String,
    /// The argument text exactly as the model produced it (normally a JSON object, but not
    /// necessarily valid JSON).
    pub arguments: String,
}

/// What a tool call returned, sent back to the model under the call's id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// The model-visible output.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed (was refused, errored, timed out or was interrupted).
    pub is_error: bool,
}

impl ToolCallResult {
    /// A successful result.
    pub fn ok(call_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        ToolCallResult {
            call_id: call_id.into(),
            content,
            is_error: false,
        }
    }

    /// A failed result; `content` tells the model what went wrong.
    pub fn error(call_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        ToolCallResult {
            call_id: call_id.into(),
            content,
            is_error: true,
        }
    }
}

/// The number of bytes a base64 text decodes to (standard alphabet, padded or not).
pub(crate) fn base64_decoded_len(data: &str) -> usize {
    let trimmed = data.trim_end_matches('=');
    let significant = trimmed.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    significant * 3 / 4
}

/// A content block as text, for providers whose tool results are text-only: text as is, JSON
/// serialized, an image as `[image: MEDIA_TYPE, N bytes]`.
pub(crate) fn block_as_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text { text } => text.clone(),
        ContentBlock::Json { value } => value.to_string(),
        ContentBlock::Image { media_type, data } => {
            format!("[image: {media_type}, {} bytes]", base64_decoded_len(data))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_lengths_match_the_decoded_bytes() {
        assert_eq!(base64_decoded_len(""), 0);
        assert_eq!(base64_decoded_len("YQ=="), 1);
        assert_eq!(base64_decoded_len("YWI="), 2);
        assert_eq!(base64_decoded_len("YWJj"), 3);
        assert_eq!(base64_decoded_len("YWJjZA"), 4);
    }

    #[test]
    fn reasoning_settings_read_an_effort_or_a_budget() {
        let read = |json: &str| serde_json::from_str::<ReasoningSetting>(json);
        assert_eq!(
            read("\"high\"").unwrap(),
            ReasoningSetting::Effort(ReasoningEffort::High)
        );
        assert_eq!(read("6000").unwrap(), ReasoningSetting::BudgetTokens(6000));
        let err = read("\"extreme\"").unwrap_err().to_string();
        assert!(err.contains("write `low`, `medium`, `high`"), "{err}");
        assert!(read("0").is_err());
        assert!(read("-5").is_err());
        assert_eq!(
            serde_json::to_string(&read("6000").unwrap()).unwrap(),
            "6000"
        );
        assert_eq!(
            serde_json::to_string(&ReasoningSetting::Effort(ReasoningEffort::Low)).unwrap(),
            "\"low\""
        );
    }

    #[test]
    fn efforts_and_budgets_map_onto_each_other() {
        for effort in [
            ReasoningEffort::Low,
            ReasoningEffort::Medium,
            ReasoningEffort::High,
        ] {
            let budget = ReasoningSetting::Effort(effort).budget_tokens();
            assert_eq!(ReasoningSetting::BudgetTokens(budget).effort(), effort);
        }
        assert_eq!(
            ReasoningSetting::BudgetTokens(1024).effort(),
            ReasoningEffort::Low
        );
        assert_eq!(
            ReasoningSetting::BudgetTokens(50_000).effort(),
            ReasoningEffort::High
        );
    }

    #[test]
    fn an_image_block_is_described_as_text() {
        let block = ContentBlock::Image {
            media_type: "image/png".into(),
            data: "YWJjZA==".into(),
        };
        assert_eq!(block_as_text(&block), "[image: image/png, 4 bytes]");
        let json = ContentBlock::Json {
            value: serde_json::json!({"a": 1}),
        };
        assert_eq!(block_as_text(&json), r#"{"a":1}"#);
    }
}
