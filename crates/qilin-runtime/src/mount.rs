//! How a session's model side is mounted: its MCP servers reached, its skills found, its agent
//! loaded and checked against every tool it could name, and its tools mounted — the registry,
//! the prompt the model receives and which tools each entry may call.
//!
//! [`crate::SessionBuilder::build`], [`crate::SessionBuilder::prompt`] and the remount between
//! turns (an MCP server's tools changed) all mount through here, so the prompt a host shows is
//! the prompt the provider receives.

use crate::assembly::{agent_registry, discover_skills_with, full_registry};
use crate::{CodeSandbox, RuntimeError};
use qilin_agent::{Agent, AgentPrompt};
use qilin_codemode::CodeMode;
use qilin_mcp::{
    McpConnections, ServerSnapshot, TrustFile, add_direct_tools, add_server_skills,
    generated_skills,
};
use qilin_protocol::ProjectContext;
use qilin_skill::{
    AgentFile, Diagnostic, RUN_CODE_TOOL, SKILL_TOOL, SkillSet, assemble_prompt_in,
    declared_mcp_servers,
};
use qilin_tool::{ExecConfig, Executor, Mounts, Reviewer, Session, ToolRegistry};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a session's agent comes from.
pub enum AgentSource {
    /// An `.agent` file, loaded and checked when the session is built.
    File(PathBuf),
    /// An agent file's text, checked when the session is built; `path` names it in findings
    /// (it need not exist, and no file is recorded for the session).
    Text {
        /// How findings name the agent (`served.agent`).
        path: PathBuf,
        /// The agent file's text.
        text: String,
    },
    /// An agent already loaded.
    Loaded(Box<AgentFile>),
    /// An agent built into Qilin, by name (see [`crate::builtin_agent`]).
    Builtin(String),
}

impl AgentSource {
    /// The agent file the session records (and a resumed session checks): a file given by
    /// path, or a loaded agent's own; none for text and the built-in agents.
    pub(crate) fn recorded_file(&self) -> Option<&Path> {
        match self {
            AgentSource::File(path) => Some(path),
            AgentSource::Loaded(agent) => Some(&agent.path),
            AgentSource::Text { .. } | AgentSource::Builtin(_) => None,
        }
    }
}

/// What mounting needs from the host: the agent and where its files are found.
pub(crate) struct MountRequest<'a> {
    /// The session's workspace (absolute, canonical).
    pub(crate) workspace: &'a Path,
    pub(crate) agent: AgentSource,
    /// Skill folders searched after the workspace's and the user's.
    pub(crate) skill_dirs: &'a [PathBuf],
    /// The application's tools: the runtime's, then the session's.
    pub(crate) app_tools: ToolRegistry,
    pub(crate) sandbox: &'a CodeSandbox,
    /// The file of trusted workspaces, when the host keeps one.
    pub(crate) trust: Option<&'a TrustFile>,
    /// The project context the prompt carries.
    pub(crate) context: Option<ProjectContext>,
    /// For a child session: what its agent may have at most (its parent's tools, sandbox).
    pub(crate) bounds: Option<&'a crate::children::ChildBounds>,
}

/// An agent mounted: what a session is started with.
pub(crate) struct MountedAgent {
    pub(crate) agent: AgentFile,
    /// Whether the agent is one built into Qilin.
    pub(crate) builtin: bool,
    /// The agent file the session records and a resumed session checks, if there is one.
    pub(crate) recorded_file: Option<PathBuf>,
    pub(crate) tools: MountedTools,
    /// What remounting needs to make the tools again.
    pub(crate) remount: RemountPlan,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) notes: Vec<String>,
}

/// Reaches the agent's MCP servers, finds the skills, loads and checks the agent and mounts
/// its tools. The agent's MCP servers are reached first, so their tools are checked with the
/// agent file's and the skills generated for them are found with the others; a repository's
/// own servers run only once the user trusted its file.
pub(crate) async fn mount(request: MountRequest<'_>) -> Result<MountedAgent, RuntimeError> {
    let MountRequest {
        workspace,
        agent: source,
        skill_dirs,
        app_tools,
        sandbox,
        trust,
        context,
        bounds,
    } = request;
    let mcp_servers = match &source {
        AgentSource::File(path) => declared_mcp_servers(path).unwrap_or_default(),
        AgentSource::Loaded(agent) => agent.mcp_servers.clone(),
        AgentSource::Text { path, text } => {
            qilin_skill::declared_mcp_servers_in(path, text).unwrap_or_default()
        }
        // The built-in agents declare no MCP servers.
        AgentSource::Builtin(_) => Vec::new(),
    };
    qilin_mcp::check_trust(trust, &mcp_servers)?;
    let mut notes = Vec::new();
    let mcp = McpConnections::start(&mcp_servers).await;
    let (snapshots, listed_notes) = mcp.snapshots().await;
    notes.extend(listed_notes);
    let found = discover_skills_with(workspace, skill_dirs, generated_skills(&snapshots))?;
    let skills = Arc::new(found.skills.clone());
    let builtin = matches!(source, AgentSource::Builtin(_));
    let recorded_file = source.recorded_file().map(Path::to_path_buf);
    // Every tool the agent could name, to check the file against.
    let checking = || -> Result<ToolRegistry, RuntimeError> {
        let mut checking =
            full_registry(Arc::clone(&skills), sandbox.code_mode(Default::default()));
        checking.extend(&app_tools)?;
        mcp.register(&mut checking, &snapshots)?;
        Ok(checking)
    };
    let mut diagnostics = Vec::new();
    let mut agent = match source {
        AgentSource::File(path) => {
            let loaded = AgentFile::load(&path, &skills, &checking()?)?;
            diagnostics.extend(loaded.warnings);
            loaded.value
        }
        AgentSource::Text { path, text } => {
            let loaded = AgentFile::from_text(&path, &text, &skills, &checking()?)?;
            diagnostics.extend(loaded.warnings);
            loaded.value
        }
        AgentSource::Loaded(agent) => *agent,
        AgentSource::Builtin(name) => {
            let text = crate::builtin_agent(&name).ok_or_else(|| {
                RuntimeError::Model(format!(
                    "no built-in agent is named `{name}`; the built-in agents are: {}",
                    crate::builtin_agents().collect::<Vec<_>>().join(", ")
                ))
            })?;
            let path = crate::builtin::builtin_agent_path(&name);
            let loaded = AgentFile::from_text(&path, text, &skills, &checking()?)?;
            diagnostics.extend(loaded.warnings);
            loaded.value
        }
    };
    if let Some(bounds) = bounds {
        bounds.clamp(&mut agent);
    }
    add_server_skills(&mut agent, &skills, &snapshots);
    let concerning = found.diagnostics_for(&agent);
    diagnostics.splice(0..0, concerning.relevant.into_iter().cloned());
    match concerning.others {
        0 => {}
        1 => notes.push(
            "1 more skill finding is not shown, as this agent does not need it; a check of \
             the workspace lists every finding"
                .to_string(),
        ),
        others => notes.push(format!(
            "{others} more skill findings are not shown, as this agent does not need them; a \
             check of the workspace lists every finding"
        )),
    }
    let code_mode = agent
        .code_mode
        .then(|| sandbox.code_mode(agent.limits.code));
    let tools = mount_tools(
        &agent,
        &skills,
        &app_tools,
        code_mode.clone(),
        context.as_ref(),
        &mcp,
        &snapshots,
    )?;
    notes.extend(tools.notes.iter().cloned());
    Ok(MountedAgent {
        remount: RemountPlan {
            agent: agent.clone(),
            app_tools,
            code_mode,
            context,
            workspace: workspace.to_path_buf(),
            skill_dirs: skill_dirs.to_vec(),
            mcp,
        },
        agent,
        builtin,
        recorded_file,
        tools,
        diagnostics,
        notes,
    })
}

/// A session's tools as mounted: the registry, the prompt the model sees and which tools each
/// entry may call, with notes for the user.
pub(crate) struct MountedTools {
    pub(crate) registry: ToolRegistry,
    pub(crate) prompt: AgentPrompt,
    pub(crate) mounts: Mounts,
    pub(crate) notes: Vec<String>,
}

/// Mounts `agent`'s tools: the built-ins, `skill` over `skills`, `run_code` when `code_mode`
/// is given, the application's `app_tools`, and the MCP tools of `snapshots` (code-mode-only,
/// but for each server's `direct` ones, which join the tools list).
fn mount_tools(
    agent: &AgentFile,
    skills: &SkillSet,
    app_tools: &ToolRegistry,
    code_mode: Option<CodeMode>,
    context: Option<&ProjectContext>,
    mcp: &McpConnections,
    snapshots: &[ServerSnapshot],
) -> Result<MountedTools, RuntimeError> {
    let mut notes = Vec::new();
    let mut registry = agent_registry(agent, skills, code_mode)?;
    registry.extend(app_tools)?;
    let mcp_tools = mcp.register(&mut registry, snapshots)?;
    notes.extend(mcp_tools.warnings);
    let mut prompt =
        assemble_prompt_in(agent, skills, &registry, context).map_err(RuntimeError::Prompt)?;
    add_direct_tools(&mut prompt.tools, &registry, &mcp_tools.direct);
    if !agent.code_mode && snapshots.iter().any(|s| !s.tools.is_empty()) {
        notes.push(
            "the agent's MCP tools are code-mode-only (but those under `direct`), and its \
             `code_mode` is off: turn it on so the model can call them from `run_code`"
                .to_string(),
        );
    }
    notes.extend(prompt.catalog.note());
    let code_tools: Vec<String> = match agent.code_mode {
        true => registry
            .names()
            .filter(|name| {
                // A code-only agent reads its skills from code, whatever `code_tools` says.
                *name != RUN_CODE_TOOL
                    && (agent.code_tools.allows(name) || (*name == SKILL_TOOL && agent.code_only()))
            })
            .map(str::to_string)
            .collect(),
        false => Vec::new(),
    };
    let mounts = Mounts::new(
        prompt.tools.iter().map(|tool| tool.name.clone()),
        code_tools,
    );
    Ok(MountedTools {
        registry,
        prompt: AgentPrompt {
            system: prompt.system,
            tools: prompt.tools,
        },
        mounts,
        notes,
    })
}

/// What a session's tools are made from, kept to make them again when an MCP server says its
/// tool list changed (or was started again).
pub(crate) struct RemountPlan {
    agent: AgentFile,
    /// The application's tools, the runtime's and the session's.
    app_tools: ToolRegistry,
    code_mode: Option<CodeMode>,
    /// The project context the session's prompt was made with.
    context: Option<ProjectContext>,
    workspace: PathBuf,
    skill_dirs: Vec<PathBuf>,
    pub(crate) mcp: McpConnections,
}

impl RemountPlan {
    /// The project context the session's prompt was made with.
    pub(crate) fn context(&self) -> Option<&ProjectContext> {
        self.context.as_ref()
    }

    /// The remount of a running session, or `None` when it has no MCP server whose tools could
    /// change.
    pub(crate) fn into_remount(
        self,
        session: Arc<Session>,
        reviewer: Arc<dyn Reviewer>,
        config: ExecConfig,
    ) -> Option<Remount> {
        (!self.mcp.is_empty()).then(|| Remount {
            plan: self,
            session,
            reviewer,
            config,
        })
    }
}

/// Makes a running session's tools again when an MCP server's tool list changed: the new tools
/// and the regenerated skills reach the model from the next turn on.
pub(crate) struct Remount {
    plan: RemountPlan,
    reviewer: Arc<dyn Reviewer>,
    config: ExecConfig,
    session: Arc<Session>,
}

impl Remount {
    /// Tries the servers due for another start, and makes the tools again when a server's tool
    /// list changed (or it came up); returns whether it did.
    pub(crate) async fn refresh(&self, agent: &Agent) -> Result<bool, RuntimeError> {
        let mcp = &self.plan.mcp;
        mcp.restart_due().await;
        if !mcp.take_changed() {
            return Ok(false);
        }
        self.run(agent).await?;
        Ok(true)
    }

    async fn run(&self, agent: &Agent) -> Result<(), RuntimeError> {
        let plan = &self.plan;
        let (snapshots, _) = plan.mcp.snapshots().await;
        let found = discover_skills_with(
            &plan.workspace,
            &plan.skill_dirs,
            generated_skills(&snapshots),
        )?;
        let mounted = mount_tools(
            &plan.agent,
            &found.skills,
            &plan.app_tools,
            plan.code_mode.clone(),
            plan.context.as_ref(),
            &plan.mcp,
            &snapshots,
        )?;
        let executor = Executor::with_mounts(
            Arc::new(mounted.registry),
            Arc::clone(&self.session),
            Arc::clone(&self.reviewer),
            self.config.clone(),
            mounted.mounts,
        );
        agent.replace_tools(mounted.prompt, executor);
        Ok(())
    }
}
