//! The agents built into Qilin, run when a host names no agent file: today `coder`, the
//! default of `qilin` in a folder.

use std::path::PathBuf;

/// The name of the agent a host runs when none is named.
pub const DEFAULT_AGENT: &str = "coder";

/// Every built-in agent: its name and the text of its agent file.
const BUILTIN_AGENTS: &[(&str, &str)] = &[("coder", include_str!("../agents/coder.agent"))];

/// The text of the built-in agent `name`'s agent file, if there is one.
pub fn builtin_agent(name: &str) -> Option<&'static str> {
    BUILTIN_AGENTS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
}

/// The names of the built-in agents.
pub fn builtin_agents() -> impl Iterator<Item = &'static str> {
    BUILTIN_AGENTS.iter().map(|(name, _)| *name)
}

/// How a built-in agent's file is named in findings: `(built-in)/coder.agent`.
pub(crate) fn builtin_agent_path(name: &str) -> PathBuf {
    PathBuf::from(format!("(built-in)/{name}.agent"))
}
