//! What can go wrong putting a session together or running it.

use qilin_skill::{AgentError, PromptError};
use qilin_store::StoreError;

/// Why a session could not be built, resumed or driven.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The workspace folder is missing or unreadable.
    #[error("the workspace {path} cannot be used: {source}")]
    Workspace {
        /// The folder given.
        path: String,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// The agent file could not be loaded; each diagnostic names its file and line.
    #[error("{0}")]
    Agent(#[from] AgentError),
    /// The agent's prompt could not be assembled.
    #[error("{0}")]
    Prompt(PromptError),
    /// The model named cannot be used, or the built-in agent named does not exist.
    #[error("{0}")]
    Model(String),
    /// Neither the session nor its agent file names a model.
    #[error(
        "{agent} names no model and the session was given none: choose one (`openai:NAME`, \
         `anthropic:NAME` or `scripted:FILE`) for the session, or add `model:` to the agent file"
    )]
    NoModel {
        /// The agent file (or built-in agent) that names none.
        agent: String,
    },
    /// The bash sandbox cannot be set up as the agent asks (the message names what the kernel
    /// lacks and how to opt out).
    #[error("{0}")]
    Sandbox(#[from] qilin_sandbox::SandboxError),
    /// The session store failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// No stored session has this id.
    #[error("no session `{0}` is in the session store")]
    UnknownSession(String),
    /// A stored session cannot be resumed (its log lacks what resuming needs).
    #[error("session `{id}` cannot be resumed: {reason}")]
    NotResumable {
        /// The session.
        id: String,
        /// What is missing.
        reason: String,
    },
    /// A stored session's agent file is not the one it began with.
    #[error(
        "session `{id}` cannot be resumed: its agent file {file} changed since the session \
         began ({now}; it was {recorded}). A changed agent file can give the session other \
         tools, review rules or sandbox settings than it began with, so Qilin will not load it \
         into this session: restore the file, or start a new session with it as it is."
    )]
    AgentChanged {
        /// The session.
        id: String,
        /// The agent file.
        file: String,
        /// The SHA-256 recorded when the session began.
        recorded: String,
        /// What the file is now: its SHA-256, or why it cannot be read.
        now: String,
    },
    /// The tools of the session's MCP servers could not be registered (two with one name).
    #[error("{0}")]
    Mcp(#[from] qilin_mcp::McpError),
    /// A tool the application gave could not be registered: its name is taken (by a built-in
    /// or another of its tools) or refused by providers, or its schema does not compile.
    #[error("{0}")]
    Tools(#[from] qilin_tool::RegistryError),
    /// What was given to the linter is not a workspace, a skill folder or an agent file.
    #[error("{0}")]
    CheckTarget(#[from] qilin_check::TargetError),
    /// A file operation failed.
    #[error("{what} failed: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
}

/// Why a prompt was not started as a turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The prompt is empty.
    #[error("the prompt is empty; say what the agent should do")]
    EmptyPrompt,
    /// A turn is running; only one runs at a time.
    #[error("turn `{turn_id}` is still running; wait for it to end or interrupt it")]
    Busy {
        /// The running turn.
        turn_id: String,
    },
    /// A turn with this client turn id was started already (a retried request).
    #[error("client turn id `{client_turn_id}` already started turn `{turn_id}`")]
    AlreadySubmitted {
        /// The id the client chose.
        client_turn_id: String,
        /// The turn it started.
        turn_id: String,
    },
    /// The session is being compacted; a turn may start once the summary is recorded.
    #[error("the conversation is being compacted; wait for the summary or interrupt it")]
    Compacting,
    /// The session's events cannot be stored, so no turn may start: for now (the store is
    /// full or unreachable; they wait in memory and the session goes on once they are
    /// stored), or for good.
    #[error("the session cannot record its events: {0}")]
    Broken(String),
}

/// Why the conversation was not compacted (it is unchanged in every case).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    /// A turn is running; compaction happens between turns.
    #[error("turn `{turn_id}` is still running; compact once it ends, or interrupt it")]
    Busy {
        /// The running turn.
        turn_id: String,
    },
    /// Another compaction is under way.
    #[error("the conversation is being compacted already")]
    Compacting,
    /// Nothing to compact, interrupted, or the model gave no summary.
    #[error("{0}")]
    Failed(#[from] qilin_agent::CompactionError),
    /// The session's events cannot be stored, for now or for good.
    #[error("the session cannot record its events: {0}")]
    Broken(String),
}

/// Why a person's "allow this call" was refused.
#[derive(Debug, thiserror::Error)]
pub enum AllowCallError {
    /// The call cannot be allowed (unknown, not refused by the reviewer, no reviewer).
    #[error("{0}")]
    Refused(#[from] crate::review::AllowError),
    /// The session's log could not be read.
    #[error("{0}")]
    Runtime(#[from] RuntimeError),
}
