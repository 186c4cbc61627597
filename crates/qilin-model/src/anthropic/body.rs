//! The Messages request body.

use crate::{Message, ModelRequest, ToolCallResult};
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
pub(crate) fn request_body(request: &ModelRequest, default_max_tokens: u32) -> Value {
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens.unwrap_or(default_max_tokens),
        "stream": true,
    });
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
    body["messages"] = Value::Array(messages(&request.messages));
    body
}

fn messages(conversation: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, blocks) = match message {
            Message::User { text } => ("user", text_block(text).into_iter().collect()),
            Message::Assistant { text, tool_calls } => {
                let mut blocks: Vec<Value> = text_block(text).into_iter().collect();
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
