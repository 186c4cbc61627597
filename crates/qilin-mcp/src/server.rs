//! Qilin as an MCP server: a session's directly mounted tools — and `run_code`, so an MCP host
//! gets code mode over Qilin's tools — served over stdio, each call dispatched through the
//! session's execution layer (validation, review, deadline, cancellation, output cap, events).
//! The session's own MCP servers are kept up to date while it is served: one that comes up
//! later, or changes its tools, joins, and the host is told the tool list changed.

use futures_util::future::BoxFuture;
use qilin_protocol::{CallStatus, ContentBlock};
use qilin_tool::{CallOutcome, Caller, DirectDefinition, Executor, ToolCall};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as McpBlock,
    Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often a served session's MCP servers are looked at for a change when no host request
/// comes (a server due for another start is tried; a changed tool list is remounted).
const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// What a session serves: the executor its calls run on, the tools it offers (as a provider
/// would receive them) and the instructions a host shows its model (the session's system
/// prompt: its instructions and catalog of skills).
#[derive(Clone)]
pub struct ServedTools {
    /// The session's executor.
    pub executor: Executor,
    /// The tools offered.
    pub tools: Vec<DirectDefinition>,
    /// What the host's model should know first.
    pub instructions: String,
}

/// A session served over MCP: what it offers now, and a way to bring that up to date.
pub trait ServedSession: Send + Sync + 'static {
    /// The tools offered now, with the executor their calls run on.
    fn served(&self) -> ServedTools;

    /// Brings the tools up to date (one of the session's MCP servers came up, or changed its
    /// tools); resolves to true when they changed.
    fn refresh(&self) -> BoxFuture<'_, bool>;
}

/// A session whose tools never change: serves `ServedTools` as given.
impl ServedSession for ServedTools {
    fn served(&self) -> ServedTools {
        self.clone()
    }

    fn refresh(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
}

/// The MCP server over a session's tools.
#[derive(Clone)]
pub struct QilinMcpServer {
    session: Arc<dyn ServedSession>,
    calls: Arc<AtomicU64>,
}

impl QilinMcpServer {
    /// A server over `session`.
    pub fn new(session: Arc<dyn ServedSession>) -> Self {
        QilinMcpServer {
            session,
            calls: Arc::default(),
        }
    }

    /// The session's tools now, after bringing them up to date; the host is told when they
    /// changed.
    async fn current(&self, peer: &rmcp::Peer<RoleServer>) -> ServedTools {
        if self.session.refresh().await {
            // A host that left or ignores the notification still gets the new list when it
            // next asks.
            let _ = peer.notify_tool_list_changed().await;
        }
        self.session.served()
    }
}

/// The MCP form of the tools a session offers.
fn mcp_tools(served: &ServedTools) -> Vec<Tool> {
    served
        .tools
        .iter()
        .map(|definition| {
            let schema = match &definition.parameters {
                Value::Object(map) => map.clone(),
                _ => Default::default(),
            };
            Tool::new(
                definition.name.clone(),
                definition.description.clone(),
                Arc::new(schema),
            )
        })
        .collect()
}

/// An MCP result from the outcome of a dispatched call: its content as text (and images), the
/// output as `structuredContent` when it is an object, and `isError` unless it succeeded.
fn tool_result(outcome: CallOutcome) -> CallToolResult {
    let content: Vec<McpBlock> = outcome
        .content
        .into_iter()
        .map(|block| match block {
            ContentBlock::Text { text } => McpBlock::text(text),
            ContentBlock::Image { media_type, data } => McpBlock::image(data, media_type),
            ContentBlock::Json { value } => McpBlock::text(
                serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string()),
            ),
        })
        .collect();
    let mut result = if outcome.status == CallStatus::Ok {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    if let Some(output @ Value::Object(_)) = outcome.output {
        result.structured_content = Some(output);
    }
    result
}

impl ServerHandler for QilinMcpServer {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let mut info = InitializeResult::new(capabilities)
            .with_instructions(self.session.served().instructions);
        info.server_info = Implementation::new("qilin", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = self.current(&context.peer).await;
        Ok(ListToolsResult::with_all_items(mcp_tools(&served)))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        mcp_tools(&self.session.served())
            .into_iter()
            .find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let call = ToolCall {
            call_id: format!("mcp-{number}"),
            name: request.name.to_string(),
            arguments: request.arguments.map_or(Value::Null, Value::Object),
        };
        let served = self.current(&context.peer).await;
        let outcome = served
            .executor
            .dispatch_cancellable(call, Caller::Direct, context.ct.clone())
            .await;
        Ok(CallToolResponse::Complete(tool_result(outcome)))
    }
}

/// Serves `session` on standard input and output until the host closes them, looking at its
/// MCP servers every second meanwhile (the host is told when its tools change).
pub async fn serve_stdio(session: Arc<dyn ServedSession>) -> Result<(), std::io::Error> {
    let server = QilinMcpServer::new(session);
    let running = server
        .clone()
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|err| std::io::Error::other(format!("the MCP handshake failed: {err}")))?;
    let peer = running.peer().clone();
    let watcher = tokio::spawn(async move {
        loop {
            tokio::time::sleep(REFRESH_EVERY).await;
            server.current(&peer).await;
        }
    });
    let stopped = running.waiting().await;
    watcher.abort();
    stopped.map_err(|err| std::io::Error::other(format!("the MCP server stopped: {err}")))?;
    Ok(())
}
