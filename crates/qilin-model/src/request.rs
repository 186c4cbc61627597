use qilin_protocol::ContentBlock;
use qilin_tool::DirectDefinition;
use serde::Serialize;

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
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user said.
    User {
        /// The user's text.
        text: String,
    },
    /// What the model answered: its text and the tools it called.
    Assistant {
        /// The answer's text; empty when the model only called tools.
        text: String,
        /// The calls, in the order the model made them.
        tool_calls: Vec<ToolCall>,
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

    /// An assistant message with its text and tool calls.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls,
        }
    }

    /// A message carrying tool results.
    pub fn tool_results(results: Vec<ToolCallResult>) -> Self {
        Message::ToolResults { results }
    }
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    /// The call's id, as the provider assigned it.
    pub id: String,
    /// The tool's wire name.
    pub name: String,
    /// The argument text exactly as the model produced it (normally a JSON object, but not
    /// necessarily valid JSON).
    pub arguments: String,
}

/// What a tool call returned, sent back to the model under the call's id.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
