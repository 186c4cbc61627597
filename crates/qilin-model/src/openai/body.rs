//! The Chat Completions request body.

use crate::request::block_as_text;
use crate::{Message, ModelRequest, Reasoning, ToolCallResult};
use serde_json::{Value, json};

/// The body of a streamed `/chat/completions` request.
///
/// The system prompt is the first message; tools are `{type: "function", function: {name,
/// description, parameters}}` (omitted when there are none, which some compatible servers
/// require); assistant calls carry their raw `arguments` text; each tool result is a
/// `role: "tool"` message under its `tool_call_id`. `max_tokens` is sent as `max_tokens`,
/// the field every compatible server reads; a reasoning setting as `reasoning_effort`.
///
/// The assistant messages of a turn (the messages between two user messages) in which the
/// model called tools carry their unsigned reasoning as `reasoning_content`, the way the
/// server sent it: DeepSeek's thinking mode refuses such a turn without it. No other message
/// does, and reasoning with a signature (another provider's) never does, as servers that
/// never sent the field (Groq, Cerebras) refuse it.
pub(crate) fn request_body(request: &ModelRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    let calling_turns = turns_with_calls(&request.messages);
    for (message, in_calling_turn) in request.messages.iter().zip(calling_turns) {
        match message {
            Message::User { text } => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                let mut entry = json!({"role": "assistant"});
                entry["content"] = if text.is_empty() && !tool_calls.is_empty() {
                    Value::Null
                } else {
                    Value::String(text.clone())
                };
                if !tool_calls.is_empty() {
                    let calls = tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.arguments},
                            })
                        })
                        .collect();
                    entry["tool_calls"] = Value::Array(calls);
                }
                if in_calling_turn && let Some(text) = reasoning_content(reasoning) {
                    entry["reasoning_content"] = Value::String(text);
                }
                messages.push(entry);
            }
            Message::ToolResults { results } => {
                messages.extend(results.iter().map(|result| {
                    json!({
                        "role": "tool",
                        "tool_call_id": result.call_id,
                        "content": result_text(result),
                    })
                }));
            }
        }
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    if let Some(max_tokens) = request.max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if let Some(reasoning) = request.reasoning {
        body["reasoning_effort"] = json!(reasoning.effort().as_str());
    }
    body
}

/// For each message, whether it belongs to a turn (the run of messages up to the next user
/// message) in which an assistant message called tools.
fn turns_with_calls(conversation: &[Message]) -> Vec<bool> {
    let mut marks = vec![false; conversation.len()];
    let mut start = 0;
    for end in 0..=conversation.len() {
        if end == conversation.len() || matches!(conversation[end], Message::User { .. }) {
            let called = conversation[start..end].iter().any(|message| {
                matches!(message, Message::Assistant { tool_calls, .. } if !tool_calls.is_empty())
            });
            marks[start..end].iter_mut().for_each(|mark| *mark = called);
            start = end;
        }
    }
    marks
}

/// The unsigned reasoning texts joined, when there are any: what the server streamed as
/// `reasoning_content`.
fn reasoning_content(reasoning: &[Reasoning]) -> Option<String> {
    let mut texts = reasoning.iter().filter_map(|block| match block {
        Reasoning::Text {
            text,
            signature: None,
        } => Some(text.as_str()),
        _ => None,
    });
    let first = texts.next()?;
    Some(texts.fold(first.to_owned(), |joined, text| joined + text))
}

/// A tool result as the text of a `role: "tool"` message, which is text-only: blocks joined
/// by blank lines, images described as `[image: MEDIA_TYPE, N bytes]`, and a failed call's
/// text after `Error: `.
fn result_text(result: &ToolCallResult) -> String {
    let text = result
        .content
        .iter()
        .map(block_as_text)
        .collect::<Vec<_>>()
        .join("\n\n");
    if result.is_error {
        format!("Error: {text}")
    } else {
        text
    }
}
