//! Qilin and the Model Context Protocol, on `rmcp` (the official Rust SDK).
//!
//! **As a client**: each MCP server an agent declares (`mcp_servers:` in its `.agent` file, or
//! the workspace's `.qilin/mcp.yaml`) is started (stdio) or reached (streamable HTTP) by an
//! [`McpClient`]; its tools become dynamic tools named `server__tool`, **code-mode-only** unless
//! the agent mounts one directly, and Qilin writes a skill per server ([`generate_skill`]:
//! `SKILL.md` with the server's instructions and a section per tool, plus Python stubs) — the
//! model learns the tools there and calls them from `run_code` with `sdk.tool.call`. Every call
//! passes Qilin's execution layer; a server that crashes or hangs fails its calls with a clear
//! error and is started again. [`McpConnections`] holds a session's clients and says when a
//! server's tool list changed, so the session regenerates its prompt between turns. The
//! servers a workspace's `.qilin/mcp.yaml` declares start only once the user trusted that file
//! ([`check_trust`]).
//!
//! **As a server**: [`QilinMcpServer`] serves a session's directly mounted tools (and
//! `run_code`) to an MCP host, each call through the same execution layer.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod client;
mod connections;
mod error;
mod names;
mod result;
mod server;
mod skill;
mod snapshot;
mod stdio;
mod tools;
mod trust;

pub use client::{INHERITED_ENV, MAX_TOOL_PAGES, McpClient, RESTART_BACKOFF};
pub use connections::{McpConnections, add_direct_tools, add_server_skills, generated_skills};
pub use error::McpError;
pub use names::tool_wire_name;
pub use result::map_call_result;
pub use server::{QilinMcpServer, ServedSession, ServedTools, serve_stdio};
pub use skill::{GeneratedSkill, STUBS_FILE, example_arguments, generate_skill};
pub use snapshot::{ServerSnapshot, snapshot_path, workspace_snapshots};
pub use stdio::MAX_MESSAGE_BYTES;
pub use tools::{McpTools, dynamic_tools, register_server_tools};
pub use trust::{TrustFile, TrustState, UntrustedServers, check_trust, describe};
