//! The agents built into Qilin, run when a host names no agent file: `coder`, the default of
//! `qilin` in a folder, and `tools`, every tool mounted for a host that calls them itself; and
//! the subagents any session can start with the `agent` tool: `explore` (read-only) and
//! `general`.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The name of the agent a host runs when none is named.
pub const DEFAULT_AGENT: &str = "coder";

/// The name of the built-in agent mounting every dual-active built-in tool directly, with code
/// mode on: the agent of a host that runs tools for a caller of its own rather than for a
/// model's turn (tools served over MCP, a script run from the command line).
pub const TOOLS_AGENT: &str = "tools";

/// The built-in agents written as files: their names and texts.
const AGENT_FILES: &[(&str, &str)] = &[
    ("coder", include_str!("../agents/coder.agent")),
    ("explore", include_str!("../agents/explore.agent")),
    ("general", include_str!("../agents/general.agent")),
];

/// The text of [`TOOLS_AGENT`], made from the built-in tools of this build.
static TOOLS_AGENT_TEXT: LazyLock<String> = LazyLock::new(|| {
    let registry = crate::builtin_registry();
    let direct: Vec<&str> = registry
        .list()
        .filter(|tool| tool.direct_definition().is_some())
        .map(|tool| tool.name())
        .collect();
    format!(
        "name: {TOOLS_AGENT}\ndescription: Every tool of Qilin, for a host that calls them itself.\n\
         instructions: Qilin's tools.\ncode_mode: true\ntools: [{}]\n",
        direct.join(", ")
    )
});

/// The text of the built-in agent `name`'s agent file, if there is one.
pub fn builtin_agent(name: &str) -> Option<&'static str> {
    if name == TOOLS_AGENT {
        return Some(TOOLS_AGENT_TEXT.as_str());
    }
    AGENT_FILES
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
}

/// The names of the built-in agents.
pub fn builtin_agents() -> impl Iterator<Item = &'static str> {
    AGENT_FILES
        .iter()
        .map(|(name, _)| *name)
        .chain([TOOLS_AGENT])
}

/// Where agent `name` is, as the `agent` tool finds it: `WORKSPACE/NAME.agent`,
/// `WORKSPACE/.qilin/agents/NAME.agent`, then the built-in agents (all but `tools`). An error
/// says what is wrong and which agents exist.
pub fn find_agent(workspace: &Path, name: &str) -> Result<crate::AgentSource, String> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    if !plain {
        return Err(format!(
            "`{name}` is not an agent name: give a name of letters, digits, `-` and `_` \
             (`explore`, `general`, or a workspace's NAME.agent)"
        ));
    }
    for path in [
        workspace.join(format!("{name}.agent")),
        workspace
            .join(".qilin")
            .join("agents")
            .join(format!("{name}.agent")),
    ] {
        if path.is_file() {
            return Ok(crate::AgentSource::File(path));
        }
    }
    if builtin_agent(name).is_some() && name != TOOLS_AGENT {
        return Ok(crate::AgentSource::Builtin(name.to_string()));
    }
    Err(format!(
        "no agent `{name}`: not {name}.agent in the workspace (or .qilin/agents/), nor a \
         built-in agent ({})",
        builtin_agents()
            .filter(|agent| *agent != TOOLS_AGENT)
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// How a built-in agent's file is named in findings: `(built-in)/coder.agent`.
pub(crate) fn builtin_agent_path(name: &str) -> PathBuf {
    PathBuf::from(format!("(built-in)/{name}.agent"))
}
