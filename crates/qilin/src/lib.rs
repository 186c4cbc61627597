//! Qilin as one dependency: write tools in your application's own Rust and run agent sessions
//! that call them.
//!
//! Every capability of a Qilin agent is a tool, and a tool reaches the model through one of
//! two entries: **directly**, in the model's tools list (its description, a JSON Schema whose
//! every field is described, and a prompt hint), or through **code mode**, where the model
//! reads a skill (`SKILL.md`) and writes Python calling `sdk.tool.call("name", {...})` inside
//! the `run_code` tool. A tool is **dual-active** (both entries; the default) or
//! **code-mode-only** (`#[tool(code_mode_only)]`: never in a tools list, taught by its skill
//! alone). Either way, every call passes the same execution layer — validate, review, run under
//! deadline and cancellation, cap the output, record `tool.start` and `tool.result` events —
//! so your tools get what the built-ins get.
//!
//! The pieces:
//!
//! - [`Tool`] — the trait and `#[derive(Tool)]`: the doc comment is the description, the
//!   arguments a `serde` + `schemars` struct whose field doc comments are the descriptions;
//! - [`Runtime::builder`] — your tools for every session (`.tool(MyTool)`,
//!   `.tools(&registry)`, `.dynamic_tool(DynamicTool::from_fn(…))`); [`SessionBuilder::tool`]
//!   for one session;
//! - an agent file (`.agent`, YAML) mounts a dual-active tool by name under `tools:`, like a
//!   built-in; with `code_mode: true` the model reaches every tool from `run_code`;
//! - [`SessionHandle`] — submit a prompt, follow the session's [`Event`]s, answer requests;
//! - [`check`] — `qilin check` over your tools, skills and agent files;
//! - [`MemoryStore`], [`SqliteStore`], [`PostgresStore`] — where sessions are kept;
//! - [`ScriptedProvider`] — a model that plays a script, to run offline and in tests;
//!   [`ModelChoice::Spec`] names a real one (`openai:NAME`, `anthropic:NAME`).
//!
//! Your crate depends on `qilin`, `serde` (with `derive`) and `schemars` for the argument
//! types, and an async runtime (`tokio`) for `main`. The dependency must keep the name `qilin`:
//! the derive's expansion names `::qilin::tool`.
//!
//! # From nothing to a session calling your tool
//!
//! A dual-active tool, an agent file mounting it, and a session on a scripted model that calls
//! it directly; the events say how the call went, as any client would show it:
//!
//! ```
//! use qilin::{
//!     CallPresentation, CallStatus, CodeSandbox, Detail, EventBody, MemoryStore, ModelChoice,
//!     Runtime, Script, Tool, ToolContext, ToolError, ToolResult,
//! };
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use std::path::Path;
//! use std::sync::Arc;
//!
//! /// Greets a person by name and says how many times they were greeted today.
//! #[derive(Tool)]
//! #[tool(name = "greet")]
//! struct Greet;
//!
//! /// The arguments of `greet`.
//! #[derive(Clone, Deserialize, JsonSchema)]
//! struct GreetArgs {
//!     /// The person's name, as they wrote it (`Ada`).
//!     name: String,
//! }
//!
//! impl Tool for Greet {
//!     type Args = GreetArgs;
//!     type Output = String;
//!     fn prompt_hint(&self) -> &str {
//!         "Greet each person once, by the name they gave; never greet an empty name."
//!     }
//!     fn present(&self, args: &GreetArgs) -> CallPresentation {
//!         CallPresentation::new("Greet", &args.name)
//!     }
//!     fn before_detail(&self, _: &GreetArgs) -> Option<Detail> {
//!         None
//!     }
//!     fn detail(&self, _: &GreetArgs, _: &ToolResult<String>) -> Option<Detail> {
//!         None
//!     }
//!     async fn call(&self, args: GreetArgs, _: &ToolContext) -> ToolResult<String> {
//!         match args.name.trim() {
//!             "" => Err(ToolError::invalid_arguments("`name` is empty; give the person's name")),
//!             name => Ok(format!("Hello, {name}!")),
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let workspace = tempfile::tempdir()?;
//! let agent = workspace.path().join("greeter.agent");
//! std::fs::write(&agent, "name: greeter\ninstructions: Greet whoever you are asked to.\ntools: [greet]\n")?;
//!
//! // Every session of this runtime has `greet` beside the built-in tools.
//! let runtime = Runtime::builder(Arc::new(MemoryStore::new()), CodeSandbox::InProcess)
//!     .tool(Greet)
//!     .build()?;
//! // Your tools are linted as `qilin check` lints Qilin's: `greet` is fully described.
//! assert!(!runtime.check(workspace.path())?.fails(false));
//!
//! // A model that calls `greet`, then answers: offline, no key.
//! let script = "turns:\n  - calls:\n      - tool: greet\n        args: {name: Ada}\n  - say: I greeted Ada.\n";
//! let model = ModelChoice::scripted(Script::parse(script, Path::new("greeter.yaml"))?);
//! let session = runtime
//!     .session(workspace.path())
//!     .agent_file(&agent)
//!     .model(model)
//!     .no_sandbox(true) // the agent runs no commands, so the bash sandbox is not needed
//!     .build()
//!     .await?;
//! let summary = session.submit("Please greet Ada.", None)?.finished().await;
//! assert_eq!(summary.final_text, "I greeted Ada.");
//!
//! session.flush().await?;
//! let events = runtime.store().read(session.id(), 0, 1000).await?;
//! let greeted = events.iter().find_map(|event| match &event.body {
//!     EventBody::ToolResult(result) if result.tool_name == "greet" => Some(result),
//!     _ => None,
//! });
//! assert_eq!(greeted.map(|result| result.status), Some(CallStatus::Ok));
//! assert_eq!(greeted.and_then(|result| result.output.clone()), Some("Hello, Ada!".into()));
//! # Ok(())
//! # }
//! ```
//!
//! A code-mode-only tool is written the same way with `#[tool(name = "…", code_mode_only)]`;
//! the agent file turns on `code_mode: true` instead of listing it, and a skill in the
//! workspace's `.qilin/skills/` teaches the model to call it from Python. The example
//! application `examples/invoices` in Qilin's repository does both, and `docs/writing-tools.md`
//! says what each kind of tool must carry.
//!
//! # Features
//!
//! - `postgres` (on by default): [`PostgresStore`], sessions in PostgreSQL that several
//!   processes share.
//! - `server`: `qilin::server`, the HTTP API and web client of `qilin serve`, to serve your
//!   runtime's sessions to a browser: host them with [`SessionHost::new`] over the runtime
//!   your [`Runtime::builder`] built (so its tools are the sessions' tools), and give the host
//!   to `server::ServerState::new`. `examples/invoices` does it in `invoices serve`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

/// The tool layer: the trait, the registry, the execution layer, the review policy. The
/// `#[derive(Tool)]` here is the one for applications (its expansion names `::qilin::tool`).
pub mod tool {
    pub use qilin_tool::*;
    pub use qilin_tool_macros::FacadeTool as Tool;
}

/// The wire vocabulary: events, content blocks, presentations, error codes.
pub use qilin_protocol as protocol;

/// Model providers: OpenAI-compatible, Anthropic, scripted.
pub use qilin_model as model;

/// The session stores.
pub use qilin_store as store;

/// Skills and agent files.
pub use qilin_skill as skill;

/// The linter's report, findings and rules, and how `qilin check` prints them.
pub use qilin_check as lint;

/// The HTTP server of `qilin serve` (feature `server`).
#[cfg(feature = "server")]
pub use qilin_server as server;

pub use qilin_agent::TurnSummary;
pub use qilin_check::{Finding, Report, Rule, render_json, render_text};
pub use qilin_model::{ModelProvider, Script, ScriptedProvider};
pub use qilin_protocol::{
    CallPresentation, CallStatus, CallerKind, ContentBlock, Detail, ErrorCode, Event, EventBody,
    FinishReason, ToolResultEvent, ToolStartEvent,
};
pub use qilin_runtime::{
    CodeSandbox, LeaseTiming, ModelChoice, Runtime, RuntimeBuilder, RuntimeError, SessionBuilder,
    SessionHandle, SessionHost, SessionSnapshot, TurnHandle, check,
};
#[cfg(feature = "postgres")]
pub use qilin_store::PostgresStore;
pub use qilin_store::{EventStore, MemoryStore, SqliteStore, StoreError};
pub use tool::{
    DynamicTool, Tool, ToolContext, ToolError, ToolRegistry, ToolResult, default_content,
};
