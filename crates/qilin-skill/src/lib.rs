//! Qilin's skills and agent files.
//!
//! A **skill** is a folder with a `SKILL.md` in the Agent Skills format (YAML front matter
//! with `name` and `description`, then Markdown) and any other files (`reference/*.md`,
//! `scripts/`, `assets/`). [`discover`] finds them under the roots [`skill_roots`] lists; the
//! [`SkillTool`] (`skill`) lets the model read them on demand.
//!
//! An **agent file** (`.agent`, YAML) says which tools an agent mounts directly, which skills
//! it may read or preloads, whether code mode is on, its limits and its review policy;
//! [`AgentFile::load`] checks it against the registry and the skills. [`assemble_prompt`] turns
//! an agent into exactly what a provider receives.
//!
//! **Checks** (`checks:` in an agent file, the workspace's `.qilin/checks.yaml`) are declared
//! and checked here ([`CheckDeclaration`], [`workspace_checks`], [`merge_checks`]); the
//! `qilin-checks` crate runs them.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod agent;
mod checks;
mod diagnostic;
mod discovery;
mod embedded;
mod front_matter;
mod generated;
mod limits;
mod mcp;
mod prompt;
mod skill;
mod skill_files;
mod skill_set;
mod skill_tool;
mod workspace;
mod yaml;

pub use agent::{
    AgentError, AgentFile, AvailableSkills, CodeTools, CompiledPolicy, DEFAULT_CATALOG_TOKENS,
    FilesConfig, LspSettings, NAMED_FILE_KEYS, PreloadedFile, SessionQueryScope, agent_named_files,
};
pub use checks::{
    CHECKS_WORKSPACE_FILE, CheckDeclaration, CheckParser, DEFAULT_CHECK_TIMEOUT,
    MAX_CHECK_ID_CHARS, MAX_CHECK_TIMEOUT, checks_in, merge_checks, parse_check_timeout,
    workspace_checks,
};
pub use diagnostic::{Diagnostic, DiagnosticKind, Loaded, Severity};
pub use discovery::{
    AgentDiagnostics, RootOrigin, SkillDiscovery, SkillRoot, discover, skill_roots,
};
pub use embedded::EmbeddedSkills;
pub use generated::{GENERATED_ROOT, GeneratedSkills};
pub use limits::Limits;
pub use mcp::{
    DEFAULT_MCP_STARTUP, MAX_SERVER_NAME_CHARS, MCP_WORKSPACE_FILE, McpServer, McpServerConfig,
    McpTransport, RawMcpServers, declared_mcp_servers, declared_mcp_servers_in, mcp_skill_name,
    workspace_mcp_servers,
};
pub use prompt::{
    AssembledPrompt, CatalogSummary, PromptError, RUN_CODE_TOOL, SHORT_DESCRIPTION_CHARS,
    SKILL_TOOL, agent_skill_set, assemble_prompt, assemble_prompt_in, estimate_tokens,
};
pub use skill::{
    MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, SKILL_FILE, Skill,
};
pub use skill_files::{MAX_LISTED_FILES, SkillFileError};
pub use skill_set::SkillSet;
pub use skill_tool::{SkillArgs, SkillOutput, SkillTool};
pub use workspace::agent_workspace;
