//! The Messages request body.

use crate::{Message, ModelRequest, Reasoning, ToolCallResult};
use qilin_protocol::ContentBlock;
use serde_json::{Value, json};

/// The body of a streamed `/v1/messages` request.
///
/// The stable prefix carries cache markers (`cache_control: {type: "ephemeral"}`): on the
/// system prompt block and on the last tool definition. Consecutive messages of one role are
/// merged, as the API wants roles to alternate; tool results are `tool_result` blocks in a
/// user message, images included as image blocks. A call's raw arguments go back as its
/// `input` object: empty text as `{}`, text that is not a JSON object as
/// `{"raw_arguments": TEXT}` (the API accepts nothing but an object there).
///
/// A reasoning setting turns thinking on: `thinking: {type: "enabled", budget_tokens}` with
/// the setting's budget (at least [`MIN_THINKING_BUDGET`], the API's floor), and
/// `max_tokens` raised to the budget plus the default when it would not exceed the budget (the
/// API requires it to). With thinking on, each assistant message sends back its signed
/// thinking and redacted thinking first, as the API requires of the turn's last assistant
/// message; unsigned reasoning (another provider's) is left out. With thinking off no
/// reasoning is sent.
pub(crate) fn request_body(request: &ModelRequest, default_max_tokens: u32) -> Value {
    let mut max_tokens = request.max_tokens.unwrap_or(default_max_tokens);
    let thinking_budget = request
        .reasoning
        .map(|setting| setting.budget_tokens().max(MIN_THINKING_BUDGET));
    if let Some(budget) = thinking_budget
        && max_tokens <= budget
    {
        max_tokens = budget.saturating_add(default_max_tokens);
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": max_tokens,
        "stream": true,
    });
    if let Some(budget) = thinking_budget {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    if !request.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": request.system,
            "cache_control": {"type": "ephemeral"},
        }]);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = json!({"type": "ephemeral"});
        }
        body["tools"] = Value::Array(tools);
    }
    body["messages"] = Value::Array(messages(&request.messages, thinking_budget.is_some()));
    body
}

/// The smallest thinking budget the Messages API accepts.
pub(crate) const MIN_THINKING_BUDGET: u32 = 1024;

fn messages(conversation: &[Message], thinking: bool) -> Vec<Value> {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, blocks) = match message {
            Message::User { text } => ("user", text_block(text).into_iter().collect()),
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                let mut blocks: Vec<Value> = Vec::new();
                if thinking {
                    blocks.extend(reasoning.iter().filter_map(thinking_block));
                }
                blocks.extend(text_block(text));
                blocks.extend(tool_calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": tool_input(&call.arguments),
                    })
                }));
                ("assistant", blocks)
            }
            Message::ToolResults { results } => ("user", results.iter().map(tool_result).collect()),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// A signed thinking block or a redacted one, as the API wants it back; `None` for
/// reasoning without a signature, which the API would refuse.
fn thinking_block(reasoning: &Reasoning) -> Option<Value> {
    match reasoning {
        Reasoning::Text {
            text,
            signature: Some(signature),
        } => Some(json!({"type": "thinking", "thinking": text, "signature": signature})),
        Reasoning::Text {
            signature: None, ..
        } => None,
        Reasoning::Redacted { data } => Some(json!({"type": "redacted_thinking", "data": data})),
    }
}

fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn tool_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ => json!({"raw_arguments": arguments}),
    }
}

fn tool_result(result: &ToolCallResult) -> Value {
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => text_block(text),
            ContentBlock::Json { value } => text_block(&value.to_string()),
            ContentBlock::Image { media_type, data } => Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data},
            })),
        })
        .collect();
    let mut block = json!({"type": "tool_result", "tool_use_id": result.call_id});
    if !content.is_empty() {
        block["content"] = Value::Array(content);
    }
    if result.is_error {
        block["is_error"] = Value::Bool(true);
    }
    block
}
