//! A server's tools as dynamic tools of Qilin's registry: named `server__tool`, code-mode-only
//! unless mounted directly, their effect read from MCP's annotations, each call sent to the
//! server through its [`McpClient`].

use crate::{McpClient, McpError, ServerSnapshot, map_call_result, tool_wire_name};
use futures_util::future::BoxFuture;
use qilin_protocol::{CallPresentation, Detail, ErrorCode};
use qilin_tool::{
    DynamicHandler, DynamicResult, DynamicTool, RegistryError, ToolContext, ToolEffect, ToolError,
    ToolRegistry,
};
use rmcp::model::Tool;
use serde_json::Value;
use std::sync::Arc;

/// What registering a server's tools did: the wire names mounted directly, and what the
/// user should hear about (a tool skipped for its schema, a `direct` name the server lacks).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpTools {
    /// The wire names of the tools mounted directly (dual-active), in the server's order.
    pub direct: Vec<String>,
    /// Notes for the user.
    pub warnings: Vec<String>,
}

/// Runs calls of one MCP tool.
struct McpToolHandler {
    client: Option<McpClient>,
    server: String,
    tool: String,
    action: String,
}

/// The part of the arguments shown beside the action: the first short string argument, else
/// the arguments as compact JSON, cut to 80 characters.
fn remark(arguments: &Value) -> String {
    let first_string = arguments
        .as_object()
        .and_then(|map| map.values().find_map(Value::as_str))
        .map(str::to_string);
    let text = first_string.unwrap_or_else(|| match arguments {
        Value::Object(map) if map.is_empty() => String::new(),
        other => other.to_string(),
    });
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(79).collect::<String>())
    } else {
        line.to_string()
    }
}

impl DynamicHandler for McpToolHandler {
    fn present(&self, arguments: &Value) -> CallPresentation {
        CallPresentation::new(self.action.clone(), remark(arguments))
    }

    fn before_detail(&self, _arguments: &Value) -> Option<Detail> {
        None
    }

    fn detail(&self, _arguments: &Value, result: &DynamicResult) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    fn call(&self, arguments: Value, cx: ToolContext) -> BoxFuture<'static, DynamicResult> {
        let client = self.client.clone();
        let server = self.server.clone();
        let tool = self.tool.clone();
        Box::pin(async move {
            let Some(client) = client else {
                return Err(ToolError::failed(format!(
                    "MCP server `{server}` is not connected in this process"
                )));
            };
            let arguments = match arguments {
                Value::Object(map) => map,
                _ => Default::default(),
            };
            let cancel = cx.cancellation().clone();
            match client.call(&tool, arguments, &cancel, cx.deadline()).await {
                Ok(result) => map_call_result(&server, &tool, result),
                Err(_) if cancel.is_cancelled() => Err(ToolError::new(
                    ErrorCode::Interrupted,
                    format!("The call was stopped; MCP server `{server}` was told to cancel it."),
                )),
                Err(error) => Err(ToolError::failed(error.to_string())),
            }
        })
    }
}

/// The effect MCP's annotations declare for `tool`, by the protocol's defaults.
fn effect(tool: &Tool) -> ToolEffect {
    let annotations = tool.annotations.as_ref();
    ToolEffect::from_hints(
        annotations.and_then(|a| a.read_only_hint),
        annotations.and_then(|a| a.destructive_hint),
    )
}

/// The title a tool's card shows: its title, else its annotations' title, else its name.
pub(crate) fn tool_title(tool: &Tool) -> String {
    tool.title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
        .unwrap_or_else(|| tool.name.to_string())
}

/// The dynamic tools of a server's snapshot, each calling through `client` (none: calls fail,
/// as when checking without a connection). A tool named in `direct` is dual-active; every
/// other is code-mode-only.
pub fn dynamic_tools(
    snapshot: &ServerSnapshot,
    client: Option<&McpClient>,
    direct: &[String],
) -> Vec<DynamicTool> {
    snapshot
        .tools
        .iter()
        .map(|tool| DynamicTool {
            name: tool_wire_name(&snapshot.server, &tool.name),
            description: tool
                .description
                .as_deref()
                .unwrap_or_default()
                .trim()
                .to_string(),
            prompt_hint: String::new(),
            code_mode_only: !direct.iter().any(|name| name == tool.name.as_ref()),
            parameters: Value::Object((*tool.input_schema).clone()),
            output_schema: tool
                .output_schema
                .as_ref()
                .map(|schema| Value::Object((**schema).clone())),
            effect: Some(effect(tool)),
            handler: Arc::new(McpToolHandler {
                client: client.cloned(),
                server: snapshot.server.clone(),
                tool: tool.name.to_string(),
                action: format!("{}: {}", snapshot.server, tool_title(tool)),
            }),
        })
        .collect()
}

/// What a tool mounted directly lacks for the model to use it from the tools list alone (as
/// `qilin check` asks of a dual-active built-in): a description, and one for every parameter.
fn incomplete_for_direct(server: &str, tool: &Tool) -> Option<String> {
    let mut missing = Vec::new();
    if tool
        .description
        .as_deref()
        .is_none_or(|d| d.trim().is_empty())
    {
        missing.push("a description".to_string());
    }
    let undescribed: Vec<String> = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter(|(_, schema)| {
                    schema
                        .get("description")
                        .and_then(Value::as_str)
                        .is_none_or(|d| d.trim().is_empty())
                })
                .map(|(name, _)| format!("`{name}`"))
                .collect()
        })
        .unwrap_or_default();
    if !undescribed.is_empty() {
        missing.push(format!(
            "a description of parameter(s) {}",
            undescribed.join(", ")
        ));
    }
    (!missing.is_empty()).then(|| {
        format!(
            "MCP tool `{}` of server `{server}` is mounted directly (`direct`) but lacks {}; the \
             model sees only its tools-list entry, so it may misuse it — leave it to code mode, \
             where its skill shows the schema and an example",
            tool.name,
            missing.join(" and ")
        )
    })
}

/// Registers a server's tools. Two tools with one name (after namespacing) are an error
/// naming both; a tool whose input schema does not compile is left out with a warning.
pub fn register_server_tools(
    registry: &mut ToolRegistry,
    snapshot: &ServerSnapshot,
    client: Option<&McpClient>,
    direct: &[String],
) -> Result<McpTools, McpError> {
    let mut registered = McpTools::default();
    for (tool, dynamic) in snapshot
        .tools
        .iter()
        .zip(dynamic_tools(snapshot, client, direct))
    {
        let name = dynamic.name.clone();
        let code_mode_only = dynamic.code_mode_only;
        match registry.register_dynamic(dynamic) {
            Ok(()) => {
                if !code_mode_only {
                    registered
                        .warnings
                        .extend(incomplete_for_direct(&snapshot.server, tool));
                    registered.direct.push(name);
                }
            }
            Err(RegistryError::Duplicate(name)) => {
                return Err(McpError::Tools(format!(
                    "MCP server `{}` has a tool `{}` whose name in Qilin, `{name}`, is already taken \
                     (by a built-in tool or another server's); rename the server in its declaration",
                    snapshot.server, tool.name
                )));
            }
            Err(err) => registered.warnings.push(format!(
                "MCP server `{}`: tool `{}` is left out: {err}",
                snapshot.server, tool.name
            )),
        }
    }
    for name in direct {
        if snapshot.tool(name).is_none() {
            registered.warnings.push(format!(
                "MCP server `{}` offers no tool `{name}` to mount directly (`direct`); its tools are {}",
                snapshot.server,
                snapshot
                    .tools
                    .iter()
                    .map(|t| format!("`{}`", t.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(registered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(value: Value) -> Tool {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_direct_tool_without_descriptions_is_named_with_what_it_lacks() {
        let complete = tool(json!({
            "name": "add", "description": "Adds.",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number", "description": "A."}}}
        }));
        assert_eq!(incomplete_for_direct("calc", &complete), None);
        let bare = tool(json!({
            "name": "add",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number", "description": " "}}}
        }));
        let warning = incomplete_for_direct("calc", &bare).unwrap();
        assert!(
            warning.starts_with("MCP tool `add` of server `calc` is mounted directly (`direct`) but lacks a description and a description of parameter(s) `a`, `b`;"),
            "{warning}"
        );
    }
}
