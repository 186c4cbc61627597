//! An MCP tool result as Qilin's: `isError` → a failed call (a `ToolError` the code can
//! catch); else the output code receives is `structuredContent` when present, else the text
//! parsed as JSON when it is JSON, else the text itself. The model sees the content blocks.

use qilin_protocol::ContentBlock;
use qilin_tool::{DynamicOutput, DynamicResult, ToolError};
use rmcp::model::{CallToolResult, ContentBlock as McpBlock, ResourceContents};
use serde_json::Value;

/// Qilin's result for an MCP `tools/call` result of tool `tool` of server `server`.
pub fn map_call_result(server: &str, tool: &str, result: CallToolResult) -> DynamicResult {
    let mut content = Vec::new();
    let mut texts = Vec::new();
    for block in result.content {
        match block {
            McpBlock::Text(text) => {
                texts.push(text.text.clone());
                content.push(ContentBlock::text(text.text));
            }
            McpBlock::Image(image) => content.push(ContentBlock::Image {
                media_type: image.mime_type,
                data: image.data,
            }),
            McpBlock::Audio(audio) => content.push(ContentBlock::text(format!(
                "[audio of type {}, {} bytes in base64, not shown]",
                audio.mime_type,
                audio.data.len()
            ))),
            McpBlock::Resource(resource) => match resource.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    texts.push(text.clone());
                    content.push(ContentBlock::text(format!("[resource {uri}]\n{text}")));
                }
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                    content.push(ContentBlock::text(format!(
                        "[resource {uri}: binary{}, not shown]",
                        mime_type.map(|m| format!(" {m}")).unwrap_or_default()
                    )))
                }
                _ => {}
            },
            McpBlock::ResourceLink(link) => content.push(ContentBlock::text(format!(
                "[resource link {}{}]",
                link.uri,
                link.description
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            ))),
            _ => {}
        }
    }
    let text = texts.join("\n");
    if result.is_error == Some(true) {
        let message = if text.trim().is_empty() {
            format!("the MCP tool `{tool}` of server `{server}` failed without saying why")
        } else {
            text
        };
        return Err(ToolError::failed(message));
    }
    let output = match result.structured_content {
        Some(structured) => structured,
        None => match serde_json::from_str::<Value>(text.trim()) {
            Ok(parsed) if !text.trim().is_empty() => parsed,
            _ => Value::String(text),
        },
    };
    if content.is_empty() {
        content.push(match &output {
            Value::String(text) => ContentBlock::text(text.clone()),
            other => ContentBlock::text(
                serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
            ),
        });
    }
    Ok(DynamicOutput { output, content })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn each_kind_of_result_reaches_code_as_the_issue_says() {
        let structured = map_call_result(
            "s",
            "t",
            result(json!({"content": [{"type": "text", "text": "{\"sum\": 3}"}], "structuredContent": {"sum": 3}})),
        )
        .unwrap();
        assert_eq!(structured.output, json!({"sum": 3}));

        let json_text = map_call_result(
            "s",
            "t",
            result(json!({"content": [{"type": "text", "text": "[1, 2]"}]})),
        )
        .unwrap();
        assert_eq!(json_text.output, json!([1, 2]));

        let plain = map_call_result(
            "s",
            "t",
            result(json!({"content": [{"type": "text", "text": "Echo: hi"}]})),
        )
        .unwrap();
        assert_eq!(plain.output, json!("Echo: hi"));
        assert_eq!(plain.content, vec![ContentBlock::text("Echo: hi")]);

        let failed = map_call_result(
            "s",
            "t",
            result(json!({"content": [{"type": "text", "text": "no such file"}], "isError": true})),
        )
        .unwrap_err();
        assert_eq!(failed.message, "no such file");

        let empty = map_call_result("s", "t", result(json!({"content": []}))).unwrap();
        assert_eq!(empty.output, json!(""));
    }
}
