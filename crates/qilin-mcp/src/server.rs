//! Qilin as an MCP server: a session's directly mounted tools — and `run_code`, so an MCP host
//! gets code mode over Qilin's tools — served over stdio, each call dispatched through the
//! session's execution layer (validation, review, deadline, cancellation, output cap, events).

use futures_util::stream;
use qilin_model::{ModelError, ModelProvider, ModelRequest, ModelStream};
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

/// The MCP server over a session's tools.
#[derive(Clone)]
pub struct QilinMcpServer {
    served: Arc<ServedTools>,
    calls: Arc<AtomicU64>,
}

impl QilinMcpServer {
    /// A server over `served`.
    pub fn new(served: ServedTools) -> Self {
        QilinMcpServer {
            served: Arc::new(served),
            calls: Arc::default(),
        }
    }

    fn tools(&self) -> Vec<Tool> {
        self.served
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
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(self.served.instructions.clone());
        info.server_info = Implementation::new("qilin", env!("CARGO_PKG_VERSION"));
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
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let call = ToolCall {
            call_id: format!("mcp-{number}"),
            name: request.name.to_string(),
            arguments: request.arguments.map_or(Value::Null, Value::Object),
        };
        let outcome = self
            .served
            .executor
            .dispatch_cancellable(call, Caller::Direct, context.ct.clone())
            .await;
        Ok(CallToolResponse::Complete(tool_result(outcome)))
    }
}

/// Serves `served` on standard input and output until the host closes them.
pub async fn serve_stdio(served: ServedTools) -> Result<(), std::io::Error> {
    let running = QilinMcpServer::new(served)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|err| std::io::Error::other(format!("the MCP handshake failed: {err}")))?;
    running
        .waiting()
        .await
        .map_err(|err| std::io::Error::other(format!("the MCP server stopped: {err}")))?;
    Ok(())
}

/// The model of a session that has none: one served over MCP, where the host's model decides
/// the calls. Asking it for an answer is an error saying so.
pub struct NoModel;

impl ModelProvider for NoModel {
    fn stream(&self, _request: ModelRequest) -> ModelStream {
        Box::pin(stream::once(async {
            Err(ModelError::Config {
                provider: "mcp",
                reason: "this session is served over MCP and has no model of its own; the \
                         host's model calls its tools"
                    .to_string(),
            })
        }))
    }
}
