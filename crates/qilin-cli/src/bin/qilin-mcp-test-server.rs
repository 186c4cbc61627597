//! A small MCP server on `rmcp`, speaking over stdio, that Qilin's tests start as a real
//! server process: arithmetic with a declared output shape, an unstructured echo, a tool that
//! fails, one that kills its own process mid-call, one that sleeps (writing to the file named
//! by `CANCEL_LOG` when the client cancels it), one that says its process id, and one that
//! adds a tool (telling the client its tool list changed). With `--http`, it serves
//! streamable HTTP on 127.0.0.1 instead, printing its URL first; its `auth` tool then says
//! which `Authorization` header the request carried. With `FAIL_FIRST_START` naming a file that
//! does not exist, it creates the file and exits with an error before the handshake (a server
//! down when a session starts, up when tried again). With `--hostile MODE` it is instead a
//! hand-written server that misbehaves as a hostile one would ([`hostile`]). It is a test
//! fixture, not part of Qilin.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The server: its one piece of state is whether `grow` added the `extra` tool.
#[derive(Clone, Default)]
struct TestServer {
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

/// A server written by hand, line by line, so it can misbehave in ways an SDK would not let
/// it. It answers `initialize` and `ping`; then, by `mode`:
///
/// - `never-lists`: never answers `tools/list`;
/// - `pages-forever`: answers every `tools/list` with one tool and a cursor to a next page;
/// - `lists-once`: answers the first `tools/list` (the tool `echo`), says its tool list
///   changed, and never answers `tools/list` again; `echo` still answers;
/// - `huge-answers`: its tool `big_id_first` answers with a message of 17 MiB whose `id` comes
///   before the result (as rmcp and the Python SDK write it), `big_id_last` with one whose `id`
///   comes after (as the TypeScript SDK writes it), and `small` with a few bytes.
fn hostile(mode: &str) -> std::io::Result<()> {
    use std::io::{BufRead, Write};
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let tool = |name: &str| json!({"name": name, "description": format!("The tool `{name}`."), "inputSchema": {"type": "object", "properties": {}}});
    let mut listed = 0;
    for line in stdin.lock().lines() {
        let Ok(message) = serde_json::from_str::<Value>(&line?) else {
            continue;
        };
        let id = message["id"].clone();
        let method = message["method"].as_str().unwrap_or_default();
        let answer =
            |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        let mut lines = Vec::new();
        match method {
            "initialize" => lines.push(answer(json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "hostile", "version": "1.0.0"},
            }))),
            "ping" => lines.push(answer(json!({}))),
            "tools/list" => {
                listed += 1;
                match mode {
                    "pages-forever" => lines.push(answer(
                        json!({"tools": [tool(&format!("t{listed}"))], "nextCursor": format!("page-{}", listed + 1)}),
                    )),
                    "lists-once" if listed == 1 => {
                        lines.push(answer(json!({"tools": [tool("echo")]})));
                        lines.push(
                            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                                .to_string(),
                        );
                    }
                    "huge-answers" => lines.push(answer(json!({
                        "tools": [tool("big_id_first"), tool("big_id_last"), tool("small")]
                    }))),
                    _ => {}
                }
            }
            "tools/call" => {
                let text = |text: String| json!({"content": [{"type": "text", "text": text}]});
                let huge = || "x".repeat(17 * 1024 * 1024);
                match message["params"]["name"].as_str().unwrap_or_default() {
                    "big_id_first" => lines.push(answer(text(huge()))),
                    "big_id_last" => lines.push(format!(
                        "{{\"result\":{},\"jsonrpc\":\"2.0\",\"id\":{id}}}",
                        text(huge())
                    )),
                    other => lines.push(answer(text(format!("{other} answered")))),
                }
            }
            _ => {}
        }
        for line in lines {
            stdout.write_all(line.as_bytes())?;
            stdout.write_all(b"\n")?;
        }
        stdout.flush()?;
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == "--hostile") {
        let mode = args.get(at + 1).map(String::as_str).unwrap_or_default();
        return Ok(hostile(mode)?);
    }
    if std::env::args().any(|arg| arg == "--http") {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpService, session::local::LocalSessionManager,
        };
        let service = StreamableHttpService::new(
            || Ok(TestServer::default()),
            LocalSessionManager::default().into(),
            Default::default(),
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("http://{}/mcp", listener.local_addr()?);
        axum::serve(listener, router).await?;
        return Ok(());
    }
    if let Some(marker) = std::env::var_os("FAIL_FIRST_START")
        && !std::path::Path::new(&marker).exists()
    {
        std::fs::write(&marker, "failed once\n")?;
        eprintln!("failing my first start on purpose");
        std::process::exit(1);
    }
    let running = TestServer::default()
        .serve(rmcp::transport::stdio())
        .await?;
    running.waiting().await?;
    Ok(())
}
