//! What can go wrong between Qilin and an MCP server.

use crate::UntrustedServers;

/// Why an MCP server could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// The server could not be started or reached, or did not answer `initialize`.
    #[error("MCP server `{server}` could not be started: {reason}")]
    Start {
        /// The server's name.
        server: String,
        /// What went wrong, with what it printed on stderr when it did.
        reason: String,
    },
    /// The server failed to start a moment ago, and is left alone for a while before it is
    /// tried again.
    #[error(
        "MCP server `{server}` could not be started: {reason}. It is tried again in {retry_in_secs} s (between turns, or by a call then)"
    )]
    Down {
        /// The server's name.
        server: String,
        /// Why its last start failed.
        reason: String,
        /// The seconds left before it is tried again.
        retry_in_secs: u64,
    },
    /// A declaration needs a variable of Qilin's environment that is not set.
    #[error(
        "MCP server `{server}` needs the environment variable `{variable}` (its `{field}` reads `${{{variable}}}`), which is not set"
    )]
    MissingVariable {
        /// The server's name.
        server: String,
        /// The variable.
        variable: String,
        /// Where it is read (`headers.Authorization`, `env.TOKEN`).
        field: String,
    },
    /// A request to the server failed.
    #[error("MCP server `{server}`: {reason}")]
    Request {
        /// The server's name.
        server: String,
        /// What went wrong.
        reason: String,
    },
    /// Two tools would have the same name in the registry (a server's tool named like another
    /// server's, or like a built-in tool), or a tool name is not usable.
    #[error("{0}")]
    Tools(String),
    /// A workspace's `.qilin/mcp.yaml` declares servers the user has not trusted (as the file
    /// is now), so they are not started.
    #[error("{0}")]
    Untrusted(UntrustedServers),
    /// The user's answers about trusting workspaces could not be read or written.
    #[error("the trusted workspaces at {path} could not be {what}: {reason}")]
    Trust {
        /// The file.
        path: String,
        /// `written` or `read`.
        what: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The snapshot of a server's tools could not be written or read.
    #[error("MCP server `{server}`: its tool list at {path} could not be {what}: {reason}")]
    Snapshot {
        /// The server's name.
        server: String,
        /// The file.
        path: String,
        /// `written` or `read`.
        what: &'static str,
        /// What went wrong.
        reason: String,
    },
}
