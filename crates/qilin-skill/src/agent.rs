//! `.agent` files: what an agent mounts, which skills it reads or preloads, its limits and
//! its review policy, loaded and checked against the tools and skills that exist.

use crate::agent_workspace;
use crate::checks::{CHECK_KEYS, CheckDeclaration, RawCheck, merge_checks, read_checks};
use crate::mcp::{McpServer, RawMcpServers, SERVER_KEYS, agent_mcp_servers};
use crate::yaml::{KnownKeys, Segment, Source, dotted};
use crate::{Diagnostic, DiagnosticKind, Limits, Loaded, SKILL_FILE, SkillSet};
use qilin_model::ReasoningSetting;
use qilin_sandbox::{CONFIG_FILE_LIMIT, SandboxSettings, read_own_text};
use qilin_tool::{PathError, PolicyConfig, RulePolicy, ToolRegistry, Workspace};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The keys of an agent file that name files the agent's prompt or behaviour comes from:
/// those files stay read-only to the model, as the agent file itself does. A key added here
/// (a `checks` file, a workflow) is protected with no other change.
pub const NAMED_FILE_KEYS: &[&str] = &["instructions_file"];

/// The catalog budget when an agent file sets none, in estimated tokens (bytes / 4).
pub const DEFAULT_CATALOG_TOKENS: usize = 2000;

const KNOWN_KEYS: KnownKeys = &[
    (
        "",
        &[
            "name",
            "description",
            "model",
            "instructions",
            "instructions_file",
            "tools",
            "skills",
            "code_mode",
            "code_tools",
            "limits",
            "review",
            "reasoning",
            "sandbox",
            "files",
            "mcp_servers",
            "session_queries",
            "checks",
            "lsp",
        ],
    ),
    ("lsp", &["diagnostics_after_edit"]),
    ("mcp_servers.*", SERVER_KEYS),
    (
        "sandbox",
        &["mode", "network", "env", "unix_sockets", "limits"],
    ),
    ("sandbox.limits", &["processes", "memory_mb", "shm_mb"]),
    ("files", &["write_qilin_files", "write_git"]),
    ("skills", &["available", "preload", "catalog_tokens"]),
    ("skills.preload.*", &["name", "files"]),
    ("limits", &["max_steps", "code"]),
    (
        "limits.code",
        &[
            "wall_time_ms",
            "memory_mb",
            "max_recursion_depth",
            "max_tool_calls",
            "max_output_bytes",
            "max_concurrency",
        ],
    ),
    ("checks.*", CHECK_KEYS),
];

/// Which skills an agent may read: every discovered one, or those named.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AvailableSkills {
    /// Every skill discovered for the workspace (`available: all`, and the default).
    #[default]
    All,
    /// Only these, by name (`available: [a, b]`).
    Named(Vec<String>),
}

impl<'de> Deserialize<'de> for AvailableSkills {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AvailableVisitor;
        impl<'de> Visitor<'de> for AvailableVisitor {
            type Value = AvailableSkills;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`all` or a list of skill names")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<AvailableSkills, E> {
                match value {
                    "all" => Ok(AvailableSkills::All),
                    other => Err(E::custom(format!(
                        "`available: {other}` is not understood; write `all` or a list of skill names"
                    ))),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AvailableSkills, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(AvailableSkills::Named(names))
            }
        }
        deserializer.deserialize_any(AvailableVisitor)
    }
}

/// Which tools the agent's code may call with `sdk.tool.call` (never `run_code` itself).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CodeTools {
    /// Every tool of the runtime but `run_code` (`code_tools: all`, and the default).
    #[default]
    All,
    /// Only these: wire names, or prefixes ending in `*` (`mcp_github__*`).
    Named(Vec<String>),
}

impl CodeTools {
    /// Whether code may call the tool `name`.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            CodeTools::All => true,
            CodeTools::Named(patterns) => {
                patterns
                    .iter()
                    .any(|pattern| match pattern.strip_suffix('*') {
                        Some(prefix) => name.starts_with(prefix),
                        None => pattern == name,
                    })
            }
        }
    }
}

impl<'de> Deserialize<'de> for CodeTools {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match AvailableSkills::deserialize(deserializer)? {
            AvailableSkills::All => Ok(CodeTools::All),
            AvailableSkills::Named(names) => Ok(CodeTools::Named(names)),
        }
    }
}

/// A skill file put into the system prompt when the agent starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreloadedFile {
    /// The skill it belongs to.
    pub skill: String,
    /// Its path inside the skill folder (`SKILL.md`, `reference/x.md`).
    pub path: String,
    /// Its text; for `SKILL.md`, the body without front matter.
    pub content: String,
}

/// A review policy compiled at load, shared by the runs of the agent.
#[derive(Clone)]
pub struct CompiledPolicy(Arc<RulePolicy>);

impl CompiledPolicy {
    /// The reviewer to give the executor.
    pub fn reviewer(&self) -> Arc<RulePolicy> {
        Arc::clone(&self.0)
    }
}

impl fmt::Debug for CompiledPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CompiledPolicy")
    }
}

/// A loaded and checked agent file.
#[derive(Debug, Clone)]
pub struct AgentFile {
    /// The agent file.
    pub path: PathBuf,
    /// The agent's name.
    pub name: String,
    /// What the agent is for.
    pub description: Option<String>,
    /// The model it asks for, as the provider names it.
    pub model: Option<String>,
    /// The instructions that open its system prompt.
    pub instructions: String,
    /// Wire names of the tools mounted directly, in the file's order, without repeats.
    pub tools: Vec<String>,
    /// Which skills it may read.
    pub available_skills: AvailableSkills,
    /// The skill files put into its system prompt, in the file's order.
    pub preload: Vec<PreloadedFile>,
    /// The catalog's budget, in estimated tokens (bytes / 4).
    pub catalog_tokens: usize,
    /// Whether `run_code` is mounted.
    pub code_mode: bool,
    /// The tools its code may call (with code mode on).
    pub code_tools: CodeTools,
    /// Step and code-mode limits.
    pub limits: Limits,
    /// The review policy as written.
    pub review: PolicyConfig,
    /// The review policy, compiled.
    pub policy: CompiledPolicy,
    /// How much the model reasons before answering (`reasoning: low|medium|high` or a token
    /// budget); the model's default when `None`.
    pub reasoning: Option<ReasoningSetting>,
    /// How confined its `bash` commands run (`sandbox: {mode, network, env, unix_sockets,
    /// limits}`).
    pub sandbox: SandboxSettings,
    /// What the file tools may write (`files:`).
    pub files: FilesConfig,
    /// The MCP servers whose tools it uses (`mcp_servers:`), resolved.
    pub mcp_servers: Vec<McpServer>,
    /// Which recorded sessions its session query tools (`session_search`, `session_events`,
    /// `session_trajectory`) may read (`session_queries:`).
    pub session_queries: SessionQueryScope,
    /// The files the agent file names ([`NAMED_FILE_KEYS`]: its `instructions_file`), as
    /// absolute paths: they stay read-only to the model.
    pub named_files: Vec<PathBuf>,
    /// The checks it declares (`checks:`); each replaces the workspace's check of the same id.
    pub checks: Vec<CheckDeclaration>,
    /// How it uses the workspace's language servers (`lsp:`).
    pub lsp: LspSettings,
}

/// The `lsp:` section of an agent file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub struct LspSettings {
    /// Whether the results of `write`, `edit` and `str_replace_editor` carry the diagnostics
    /// the edit introduced or resolved in the edited file, from the workspace's language
    /// server for it (default false).
    #[serde(default)]
    pub diagnostics_after_edit: bool,
}

/// Which recorded sessions an agent's session query tools may read: the `session_queries:`
/// key of its agent file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionQueryScope {
    /// Every session of its workspace (the default).
    #[default]
    Workspace,
    /// Its own session and its descendants (the child sessions its `agent` calls started).
    Session,
    /// None: the tools refuse every call.
    Off,
}

/// The `files:` section of an agent file: what the file tools may write beyond ordinary
/// workspace files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub struct FilesConfig {
    /// Let `write`, `edit` and `str_replace_editor` change Qilin's own files, `.qilin/` and
    /// `*.agent` (default false: they are refused).
    #[serde(default)]
    pub write_qilin_files: bool,
    /// Let the file tools and `bash` change git repositories (`.git`, its config and hooks)
    /// and create new ones (default false: refused, and a `.git` a command creates is moved
    /// to `.qilin/quarantine/`).
    #[serde(default)]
    pub write_git: bool,
}

/// Why an agent file could not be loaded: every error found (and every warning), each naming
/// the file and line.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", .diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct AgentError {
    /// The errors, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Deserialize)]
struct RawAgent {
    name: String,
    description: Option<String>,
    model: Option<String>,
    instructions: Option<String>,
    instructions_file: Option<String>,
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    skills: RawSkills,
    #[serde(default)]
    code_mode: bool,
    #[serde(default)]
    code_tools: CodeTools,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    review: PolicyConfig,
    reasoning: Option<ReasoningSetting>,
    #[serde(default)]
    sandbox: SandboxSettings,
    #[serde(default)]
    files: FilesConfig,
    #[serde(default)]
    mcp_servers: RawMcpServers,
    #[serde(default)]
    session_queries: SessionQueryScope,
    #[serde(default)]
    checks: Vec<RawCheck>,
    #[serde(default)]
    lsp: LspSettings,
}

#[derive(Deserialize, Default)]
struct RawSkills {
    #[serde(default)]
    available: AvailableSkills,
    #[serde(default)]
    preload: Vec<RawPreload>,
    catalog_tokens: Option<usize>,
}

#[derive(Deserialize)]
struct RawPreload {
    name: String,
    #[serde(default = "default_preload_files")]
    files: Vec<String>,
}

fn default_preload_files() -> Vec<String> {
    vec![SKILL_FILE.to_string()]
}

fn key(name: &str) -> Segment {
    Segment::Key(name.to_string())
}

impl AgentFile {
    /// Whether every tool of the agent is reached from code: code mode is on and nothing is
    /// mounted directly (no built-in tool, no MCP tool under `direct`). Its tools list is then
    /// `run_code` alone, and its skills are read from code too (`sdk.skill("NAME")`), as a
    /// nested call of `run_code` like any other.
    pub fn code_only(&self) -> bool {
        self.code_mode
            && self.tools.is_empty()
            && self
                .mcp_servers
                .iter()
                .all(|server| server.direct.is_empty())
    }

    /// Loads the agent file at `path`, checking its tools against `registry` and its skills
    /// against `skills`. Every error found is reported; unknown keys are warnings.
    pub fn load(
        path: &Path,
        skills: &SkillSet,
        registry: &ToolRegistry,
    ) -> Result<Loaded<AgentFile>, AgentError> {
        let fail = |diagnostic: Diagnostic| AgentError {
            diagnostics: vec![diagnostic],
        };
        let text = read_own_text(path, CONFIG_FILE_LIMIT).map_err(|err| {
            fail(Diagnostic::error(
                DiagnosticKind::InvalidAgent,
                path,
                None,
                format!("the agent file could not be read: {err}"),
            ))
        })?;
        Self::from_text(path, &text, skills, registry)
    }

    /// An agent from the text of an agent file (one built into a host, say); `path` names it
    /// in findings, and an `instructions_file` is read relative to it.
    pub fn from_text(
        path: &Path,
        text: &str,
        skills: &SkillSet,
        registry: &ToolRegistry,
    ) -> Result<Loaded<AgentFile>, AgentError> {
        let fail = |diagnostic: Diagnostic| AgentError {
            diagnostics: vec![diagnostic],
        };
        let source = Source {
            path,
            text,
            line_offset: 0,
        };
        let (raw, mut warnings): (RawAgent, _) = source.parse(KNOWN_KEYS).map_err(fail)?;
        let mut errors = Vec::new();
        let (instructions, instructions_path) = read_instructions(&raw, &source, &mut errors);
        let tools = check_tools(
            &raw.tools,
            raw.code_mode,
            &source,
            skills,
            registry,
            &mut errors,
            &mut warnings,
        );
        check_available(&raw.skills.available, &source, skills, &mut errors);
        check_code_tools(&raw, &source, registry, &mut errors, &mut warnings);
        let preload = read_preloads(&raw.skills.preload, &source, skills, &mut errors);
        let mcp_servers = agent_mcp_servers(&raw.mcp_servers, &source, &mut errors);
        let checks = agent_checks(&raw.checks, &source, &mut errors);
        if !raw.code_mode && raw.limits.code != qilin_tool::CodeLimits::default() {
            warnings.push(Diagnostic::warning(
                DiagnosticKind::CodeLimitsWithoutCodeMode,
                path,
                source.line_of(&[key("limits"), key("code")]),
                "`limits.code` has no effect because `code_mode` is off; set `code_mode: true` to mount run_code",
            ));
        }
        for problem in raw.sandbox.problems() {
            let at: Vec<Segment> = std::iter::once("sandbox")
                .chain(problem.key.split('.'))
                .map(key)
                .collect();
            errors.push(Diagnostic::error(
                DiagnosticKind::InvalidAgent,
                path,
                source.line_of(&at),
                problem.message,
            ));
        }
        let policy = match RulePolicy::new(raw.review.clone()) {
            Ok(policy) => Some(CompiledPolicy(Arc::new(policy))),
            Err(err) => {
                let at = [key("review"), key("rules"), Segment::Index(err.index - 1)];
                errors.push(Diagnostic::error(
                    DiagnosticKind::InvalidAgent,
                    path,
                    source.line_of(&at),
                    err.to_string(),
                ));
                None
            }
        };
        check_auto_review(&raw.review, &source, &mut errors);
        let (Some(policy), true) = (policy, errors.is_empty()) else {
            // The warnings go with the errors, so that fixing the errors reveals nothing new.
            errors.extend(warnings);
            errors.sort_by_key(|d| d.line);
            return Err(AgentError {
                diagnostics: errors,
            });
        };
        Ok(Loaded {
            value: AgentFile {
                path: path.to_path_buf(),
                name: raw.name,
                description: raw.description,
                model: raw.model,
                instructions,
                tools,
                available_skills: raw.skills.available,
                preload,
                catalog_tokens: raw.skills.catalog_tokens.unwrap_or(DEFAULT_CATALOG_TOKENS),
                code_mode: raw.code_mode,
                code_tools: raw.code_tools,
                limits: raw.limits,
                review: raw.review,
                policy,
                reasoning: raw.reasoning,
                sandbox: raw.sandbox,
                files: raw.files,
                mcp_servers,
                session_queries: raw.session_queries,
                named_files: instructions_path.into_iter().collect(),
                checks,
                lsp: raw.lsp,
            },
            warnings,
        })
    }
}

/// The agent's use of a reviewer model: an `auto` decision needs `review.auto`, whose timeout
/// must read as a duration and whose model must be written as `model:` is.
fn check_auto_review(review: &PolicyConfig, source: &Source, errors: &mut Vec<Diagnostic>) {
    for problem in review.auto_problems() {
        let mut at = vec![key("review")];
        match problem.rule {
            Some(rule) => at.extend([key("rules"), Segment::Index(rule - 1), key(problem.key)]),
            None => at.extend(problem.key.split('.').map(key)),
        }
        errors.push(Diagnostic::error(
            DiagnosticKind::InvalidAgent,
            source.path,
            source.line_of(&at),
            problem.message,
        ));
    }
    if let Some(auto) = &review.auto
        && !auto.model.trim().is_empty()
        && let Err(err) = auto.model.parse::<qilin_model::ModelSpec>()
    {
        errors.push(Diagnostic::error(
            DiagnosticKind::InvalidAgent,
            source.path,
            source.line_of(&[key("review"), key("auto"), key("model")]),
            format!("review.auto: the reviewer's {err}"),
        ));
    }
}

/// The agent's `checks`, checked, with their `depends_on` checked against the workspace's
/// checks too (an agent's check may wait for one the workspace declares).
fn agent_checks(
    raw: &[RawCheck],
    source: &Source,
    errors: &mut Vec<Diagnostic>,
) -> Vec<CheckDeclaration> {
    if raw.is_empty() {
        return Vec::new();
    }
    let checks = read_checks(raw, source, &[key("checks")], errors);
    let (workspace, _) = crate::workspace_checks(&agent_workspace(source.path));
    let (_, problems) = merge_checks(workspace, &checks);
    for problem in problems {
        errors.push(Diagnostic::error(
            DiagnosticKind::InvalidCheck,
            source.path,
            source.line_of(&[key("checks")]),
            problem,
        ));
    }
    checks
}

fn read_instructions(
    raw: &RawAgent,
    source: &Source,
    errors: &mut Vec<Diagnostic>,
) -> (String, Option<PathBuf>) {
    match (&raw.instructions, &raw.instructions_file) {
        (Some(text), None) => (text.trim().to_string(), None),
        (None, Some(file)) => match read_confined(source.path, file) {
            Ok((text, path)) => (text.trim().to_string(), Some(path)),
            Err(reason) => {
                errors.push(Diagnostic::error(
                    DiagnosticKind::InvalidAgent,
                    source.path,
                    source.line_of(&[key("instructions_file")]),
                    format!(
                        "`instructions_file: {file}` {reason}; the path is relative to the agent file and must stay inside the agent's workspace"
                    ),
                ));
                (String::new(), None)
            }
        },
        (Some(_), Some(_)) => {
            errors.push(Diagnostic::error(
                DiagnosticKind::InvalidAgent,
                source.path,
                source.line_of(&[key("instructions_file")]),
                "both `instructions` and `instructions_file` are set; keep one",
            ));
            (String::new(), None)
        }
        (None, None) => {
            errors.push(Diagnostic::error(
                DiagnosticKind::InvalidAgent,
                source.path,
                Some(1),
                "the agent has no instructions: add `instructions:` (text) or `instructions_file:` (a path relative to the agent file)",
            ));
            (String::new(), None)
        }
    }
}

/// Resolves `file` (relative to the agent file's folder) beneath the agent's workspace: a
/// `..` or a symlink that leads out of it is refused.
fn resolve_confined(agent_file: &Path, file: &str) -> Result<qilin_tool::Resolved, String> {
    let workspace = agent_workspace(agent_file);
    let folder = std::path::absolute(agent_file)
        .ok()
        .and_then(|path| path.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let within = folder.strip_prefix(&workspace).unwrap_or(Path::new(""));
    let raw = within.join(file);
    Workspace::open(&workspace)
        .and_then(|ws| ws.resolve(&raw.to_string_lossy()))
        .map_err(|err| match err {
            PathError::Outside { .. } | PathError::SymlinkOut { .. } => format!(
                "leads outside the agent's workspace `{}`",
                workspace.display()
            ),
            other => format!("could not be read: {other}"),
        })
}

/// Reads the instructions file `file` beneath the agent's workspace ([`resolve_confined`]),
/// at most [`CONFIG_FILE_LIMIT`] bytes of a regular file; returns its text and its absolute
/// path.
fn read_confined(agent_file: &Path, file: &str) -> Result<(String, PathBuf), String> {
    use std::io::Read;
    let opened = resolve_confined(agent_file, file)?;
    let unreadable = |err: &dyn std::fmt::Display| {
        format!("could not be read ({}): {err}", opened.absolute().display())
    };
    let mut bytes = Vec::new();
    opened
        .open_file()
        .and_then(|f| f.take(CONFIG_FILE_LIMIT + 1).read_to_end(&mut bytes))
        .map_err(|err| unreadable(&err))?;
    if bytes.len() as u64 > CONFIG_FILE_LIMIT {
        return Err(unreadable(&format!(
            "it is larger than {CONFIG_FILE_LIMIT} bytes"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| unreadable(&"it is not UTF-8 text"))?;
    Ok((text, opened.absolute()))
}

/// The files the agent file at `path` names ([`NAMED_FILE_KEYS`]) that exist beneath its
/// workspace, as absolute paths, read leniently: an agent file that cannot be read or parsed,
/// or a key that names nothing usable, contributes nothing. For protecting the files of every
/// agent file in a workspace, not only the one a session runs.
pub fn agent_named_files(path: &Path) -> Vec<PathBuf> {
    let Ok(text) = read_own_text(path, CONFIG_FILE_LIMIT) else {
        return Vec::new();
    };
    let Ok(serde_yaml_ng::Value::Mapping(top)) = serde_yaml_ng::from_str(&text) else {
        return Vec::new();
    };
    let mut named = Vec::new();
    for key in NAMED_FILE_KEYS {
        let values = match top.get(*key) {
            Some(serde_yaml_ng::Value::String(file)) => vec![file.clone()],
            Some(serde_yaml_ng::Value::Sequence(files)) => files
                .iter()
                .filter_map(|file| file.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        for file in values {
            if let Ok(resolved) = resolve_confined(path, &file)
                && resolved.kind() == qilin_tool::PathKind::File
            {
                named.push(resolved.absolute());
            }
        }
    }
    named
}

/// The tools `tools:` mounts directly, in order, once each. A code-mode-only tool listed there
/// is left out with a warning (it stays reachable from `run_code`), so the agent still loads.
fn check_tools(
    names: &[String],
    code_mode: bool,
    source: &Source,
    skills: &SkillSet,
    registry: &ToolRegistry,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let mut mounted: Vec<String> = Vec::new();
    for (index, name) in names.iter().enumerate() {
        let line = source.line_of(&[key("tools"), Segment::Index(index)]);
        let Some(tool) = registry.get(name) else {
            errors.push(unknown_tool(source, line, "tools", name, registry));
            continue;
        };
        if tool.code_mode_only() {
            warnings.push(code_mode_only_mounted(
                name, source, line, skills, code_mode,
            ));
            continue;
        }
        if mounted.contains(name) {
            warnings.push(Diagnostic::warning(
                DiagnosticKind::DuplicateTool,
                source.path,
                line,
                format!("`{name}` is listed twice under `tools`; it is mounted once"),
            ));
            continue;
        }
        mounted.push(name.clone());
    }
    mounted
}

/// The warning for code-mode-only tool `name` listed under `tools:` at `line`: it is left out
/// of the tools list, and how the model reaches it instead (or that it cannot, with code mode
/// off). Its last clause, after `; `, is the fix.
fn code_mode_only_mounted(
    name: &str,
    source: &Source,
    line: Option<usize>,
    skills: &SkillSet,
    code_mode: bool,
) -> Diagnostic {
    let taught_by: Vec<&str> = skills
        .iter()
        .filter(|skill| skill.body.contains(&format!("\"{name}\"")))
        .map(|skill| skill.name.as_str())
        .collect();
    let skill_hint = match taught_by.as_slice() {
        [] => "as its skill teaches".to_string(),
        found => format!("as skill `{}` teaches", found.join("` / `")),
    };
    let reach = match code_mode {
        true => format!(
            "the model reaches it from Python inside `run_code` with sdk.tool.call(\"{name}\", \
             {{...}}), {skill_hint}"
        ),
        false => format!(
            "and with `code_mode` off no model can reach it: set `code_mode: true` to call it \
             from Python inside `run_code` with sdk.tool.call(\"{name}\", {{...}}), {skill_hint}"
        ),
    };
    Diagnostic::warning(
        DiagnosticKind::CodeModeOnlyTool,
        source.path,
        line,
        format!(
            "`{name}` is code-mode-only, so it is left out of the tools list: {reach}; remove it \
             from `tools`"
        ),
    )
}

/// The error for `key` naming a tool that does not exist, with close names.
fn unknown_tool(
    source: &Source,
    line: Option<usize>,
    key: &str,
    name: &str,
    registry: &ToolRegistry,
) -> Diagnostic {
    let suggestions = registry.suggest(name);
    let hint = if suggestions.is_empty() {
        "; the tools are the built-ins and those the host adds".to_string()
    } else {
        format!("; did you mean `{}`?", suggestions.join("` or `"))
    };
    Diagnostic::error(
        DiagnosticKind::UnknownTool,
        source.path,
        line,
        format!("`{key}` names `{name}`, but no tool has that name{hint}"),
    )
}

fn check_code_tools(
    raw: &RawAgent,
    source: &Source,
    registry: &ToolRegistry,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) {
    let CodeTools::Named(names) = &raw.code_tools else {
        return;
    };
    if !raw.code_mode {
        warnings.push(Diagnostic::warning(
            DiagnosticKind::CodeLimitsWithoutCodeMode,
            source.path,
            source.line_of(&[key("code_tools")]),
            "`code_tools` has no effect because `code_mode` is off; set `code_mode: true` to mount run_code",
        ));
    }
    for (index, name) in names.iter().enumerate() {
        let line = source.line_of(&[key("code_tools"), Segment::Index(index)]);
        if name == "run_code" {
            errors.push(Diagnostic::error(
                DiagnosticKind::InvalidAgent,
                source.path,
                line,
                "`code_tools` names `run_code`, which code can never call (the code already runs inside it); remove it",
            ));
        } else if !name.ends_with('*') && registry.get(name).is_none() {
            errors.push(unknown_tool(source, line, "code_tools", name, registry));
        }
    }
}

fn unknown_skill(name: &str, skills: &SkillSet) -> String {
    let suggestions = skills.suggest(name);
    if suggestions.is_empty() {
        format!(
            "no skill is named `{name}` among the skills found (the workspace's `.qilin/skills/`, \
             the user's `~/.qilin/skills/`, the folders given and the built-in skills)"
        )
    } else {
        format!(
            "no skill is named `{name}`; did you mean `{}`?",
            suggestions.join("` or `")
        )
    }
}

fn check_available(
    available: &AvailableSkills,
    source: &Source,
    skills: &SkillSet,
    errors: &mut Vec<Diagnostic>,
) {
    let AvailableSkills::Named(names) = available else {
        return;
    };
    for (index, name) in names.iter().enumerate() {
        if skills.get(name).is_none() {
            let at = [key("skills"), key("available"), Segment::Index(index)];
            errors.push(Diagnostic::error(
                DiagnosticKind::UnknownSkill,
                source.path,
                source.line_of(&at),
                format!("`skills.available`: {}", unknown_skill(name, skills)),
            ));
        }
    }
}

fn read_preloads(
    preloads: &[RawPreload],
    source: &Source,
    skills: &SkillSet,
    errors: &mut Vec<Diagnostic>,
) -> Vec<PreloadedFile> {
    let mut files = Vec::new();
    for (index, preload) in preloads.iter().enumerate() {
        let at = [key("skills"), key("preload"), Segment::Index(index)];
        let Some(skill) = skills.get(&preload.name) else {
            let mut name_at = at.to_vec();
            name_at.push(key("name"));
            errors.push(Diagnostic::error(
                DiagnosticKind::UnknownSkill,
                source.path,
                source.line_of(&name_at),
                format!("`skills.preload`: {}", unknown_skill(&preload.name, skills)),
            ));
            continue;
        };
        for (file_index, file) in preload.files.iter().enumerate() {
            match skill.read_file(file) {
                Ok(content) => files.push(PreloadedFile {
                    skill: skill.name.clone(),
                    path: file.trim().trim_start_matches("./").to_string(),
                    content,
                }),
                Err(err) => {
                    let mut file_at = at.to_vec();
                    file_at.extend([key("files"), Segment::Index(file_index)]);
                    errors.push(Diagnostic::error(
                        DiagnosticKind::UnreadablePreloadFile,
                        source.path,
                        source.line_of(&file_at),
                        format!("`{}`: preload file: {err}", dotted(&file_at)),
                    ));
                }
            }
        }
    }
    files
}

#[cfg(test)]
mod known_keys_tests {
    use super::*;
    use crate::mcp::McpServerConfig;
    use qilin_sandbox::SandboxLimits;
    use qilin_tool::CodeLimits;
    use serde::de::value::Error;

    /// Catches the field names serde's derive passes to `deserialize_struct`: the keys the
    /// type accepts, as written in a file.
    struct FieldNames(Option<&'static [&'static str]>);

    impl<'de> Deserializer<'de> for &mut FieldNames {
        type Error = Error;

        fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
            Err(de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Error> {
            self.0 = Some(fields);
            Err(de::Error::custom("fields caught"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    fn fields_of<T: for<'de> Deserialize<'de>>() -> Vec<&'static str> {
        let mut names = FieldNames(None);
        let _ = T::deserialize(&mut names);
        let mut fields = names.0.expect("a struct with derived Deserialize").to_vec();
        fields.sort_unstable();
        fields
    }

    #[test]
    fn the_known_keys_are_the_fields_of_the_types_they_are_read_into() {
        let types: Vec<(&str, Vec<&str>)> = vec![
            ("", fields_of::<RawAgent>()),
            ("mcp_servers.*", fields_of::<McpServerConfig>()),
            ("sandbox", fields_of::<SandboxSettings>()),
            ("sandbox.limits", fields_of::<SandboxLimits>()),
            ("files", fields_of::<FilesConfig>()),
            ("skills", fields_of::<RawSkills>()),
            ("skills.preload.*", fields_of::<RawPreload>()),
            ("limits", fields_of::<Limits>()),
            ("limits.code", fields_of::<CodeLimits>()),
            ("checks.*", fields_of::<RawCheck>()),
        ];
        let known: Vec<(&str, Vec<&str>)> = KNOWN_KEYS
            .iter()
            .map(|(path, keys)| {
                let mut keys = keys.to_vec();
                keys.sort_unstable();
                (*path, keys)
            })
            .collect();
        assert_eq!(known, types);
    }
}
