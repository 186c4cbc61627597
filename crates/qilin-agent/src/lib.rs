//! Qilin's agent layer: the loop that turns a prompt into model steps and tool calls, and the
//! conversation tree every client renders (folded by `qilin_protocol::tree`, re-exported here).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod agent_loop;
mod compact;
mod history;

pub use agent_loop::{Agent, AgentPrompt, LoopSettings, OpenTurn, TurnSummary};
pub use compact::{CompactionError, estimate_tokens, transcript};
pub use history::HistoryFold;
pub use qilin_model::{COMPACT_INSTRUCTION, COMPACT_SYSTEM, SUMMARY_PREFIX};
pub use qilin_protocol::tree::{
    CompactionNode, ConversationTree, Phase, RequestNode, ToolNode, ToolOutcome, TurnItem, TurnNode,
};
