//! The fixture's well-behaved server, on `rmcp`: arithmetic with a declared output shape, an
//! unstructured echo, a tool that fails, one that kills its own process mid-call, one that
//! sleeps (writing to the file named by `CANCEL_LOG` when the client cancels it), one that says
//! its process id, one that says which `Authorization` header its request carried (over HTTP),
//! and one that adds a tool (telling the client its tool list changed). The binary serves it
//! over stdio; qilin-mcp's tests also serve it over streamable HTTP in their own process.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The server: its one piece of state is whether `grow` added the `extra` tool.
#[derive(Clone, Default)]
pub struct TestServer {
    grown: Arc<AtomicBool>,
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::default(),
    }
}

fn tool(name: &'static str, description: &'static str, input: Value) -> Tool {
    Tool::new(name, description, object(input))
}

impl TestServer {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            tool(
                "add",
                "Adds two numbers and returns their sum.",
                json!({
                    "type": "object",
                    "properties": {
                        "a": {"type": "number", "description": "The first number."},
                        "b": {"type": "number", "description": "The second number."}
                    },
                    "required": ["a", "b"]
                }),
            )
            .with_raw_output_schema(object(json!({
                "type": "object",
                "properties": {"sum": {"type": "number", "description": "a + b."}},
                "required": ["sum"]
            })))
            .with_annotations(ToolAnnotations::with_title("Add").read_only(true)),
            tool(
                "echo",
                "Repeats a text back, prefixed with `Echo: `.",
                json!({
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "What to repeat."}},
                    "required": ["text"]
                }),
            )
            .with_annotations(ToolAnnotations::default().read_only(true)),
            tool(
                "fail",
                "Always fails, with the message given.",
                json!({
                    "type": "object",
                    "properties": {"message": {"type": "string", "description": "The error message."}},
                    "required": ["message"]
                }),
            )
            .with_annotations(ToolAnnotations::default().read_only(true)),
            tool(
                "crash",
                "Ends the server's process in the middle of the call.",
                json!({"type": "object", "properties": {}}),
            )
            .with_annotations(ToolAnnotations::default().read_only(true)),
            tool(
                "sleep",
                "Waits the given number of milliseconds, then says so.",
                json!({
                    "type": "object",
                    "properties": {"ms": {"type": "integer", "description": "How long to wait."}},
                    "required": ["ms"]
                }),
            )
            .with_annotations(ToolAnnotations::default().read_only(true)),
            tool(
                "grow",
                "Adds the tool `extra` to this server's tools.",
                json!({"type": "object", "properties": {}}),
            )
            .with_annotations(ToolAnnotations::default().read_only(false).destructive(false)),
        ];
        tools.push(
            tool(
                "pid",
                "Says the server's process id.",
                json!({"type": "object", "properties": {}}),
            )
            .with_annotations(ToolAnnotations::default().read_only(true)),
        );
        tools.push(
            tool(
                "auth",
                "Says which `Authorization` header the request carried (over HTTP).",
                json!({"type": "object", "properties": {}}),
            )
            .with_annotations(ToolAnnotations::default().read_only(true)),
        );
        if self.grown.load(Ordering::SeqCst) {
            tools.push(
                tool(
                    "extra",
                    "Exists only after `grow` was called; returns `more`.",
                    json!({"type": "object", "properties": {}}),
                )
                .with_annotations(ToolAnnotations::default().read_only(true)),
            );
        }
        tools
    }
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> InitializeResult {
        let mut info = InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_instructions("Arithmetic and small utilities for Qilin's tests.".to_string());
        info.server_info = Implementation::new("qilin-mcp-test-server", "1.0.0");
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let number = |key: &str| args.get(key).and_then(Value::as_f64).unwrap_or(0.0);
        let string = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let result = match request.name.as_ref() {
            "add" => {
                let sum = number("a") + number("b");
                let mut result = text(format!("{sum}"));
                result.structured_content = Some(json!({"sum": sum}));
                result
            }
            "echo" => text(format!("Echo: {}", string("text"))),
            "fail" => CallToolResult::error(vec![ContentBlock::text(string("message"))]),
            "crash" => {
                eprintln!("crashing on purpose");
                std::process::exit(3);
            }
            "sleep" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => text(format!("slept {ms} ms")),
                    () = context.ct.cancelled() => {
                        // Tests see the client's cancellation arrive in this file.
                        if let Ok(path) = std::env::var("CANCEL_LOG") {
                            let _ = std::fs::write(path, format!("sleep of {ms} ms cancelled\n"));
                        }
                        text("cancelled")
                    }
                }
            }
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                text("grown")
            }
            "extra" if self.grown.load(Ordering::SeqCst) => text("more"),
            "pid" => text(std::process::id().to_string()),
            "auth" => {
                let header = context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.headers.get("authorization"))
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("none")
                    .to_string();
                text(header)
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool `{other}`"),
                    None,
                ));
            }
        };
        Ok(CallToolResponse::Complete(result))
    }
}
