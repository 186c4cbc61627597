//! A session: [`SessionBuilder`] puts it together, [`SessionHandle`] is what every host drives
//! it through — submit a prompt, interrupt, follow its events from any `seq`, answer its
//! requests, take a snapshot.

use crate::children::{
    BothReviewers, ChildBounds, ChildLimits, Children, ParentLink, ParentSetup, TeamLink,
};
use crate::goals::{GoalError, GoalKeeper, TurnOutcome};
use crate::loops::{LoopRunner, LoopSetup};
use crate::mount::{AgentSource, MountRequest, MountedAgent, Remount, mount};
use crate::recovery::{Closing, Dangling, OpenRun};
use crate::review::{AllowError, ModelReviewer, refused_call, retry_prompt, review_entries};
use crate::runtime::read_after;
use crate::{AllowCallError, CompactError, LiveTree, Runtime, RuntimeError, SubmitError};
use futures_util::FutureExt;
use futures_util::stream::BoxStream;
use parking_lot::Mutex;
use qilin_agent::{Agent, AgentPrompt, ConversationTree, LoopSettings, OpenTurn, TurnSummary};
use qilin_backoff::{Backoff, Retries};
use qilin_codemode::{CallJournal, Journals};
use qilin_goals::NewGoal;
use qilin_mcp::McpConnections;
use qilin_model::{ModelError, ModelProvider, ModelRequest, ModelStream, select_model};
use qilin_protocol::goals::{GoalActor, GoalBudget, GoalRecord, PauseCause};
use qilin_protocol::loops::{LoopRecord, StartLoop};
use qilin_protocol::review::{ReviewEntry, ReviewGrant};
use qilin_protocol::{
    AgentInfo, ContextCompactedEvent, Event, EventBody, PROTOCOL_VERSION, ProjectContext,
    RequestOpenedEvent, RequestResolution, RequestResolvedEvent, SessionStartedEvent,
};
use qilin_sandbox::{CONFIG_FILE_LIMIT, Protection, Sandbox, read_own_file};
use qilin_skill::{AgentFile, Diagnostic, agent_named_files};
use qilin_store::{EventStore, NewSession, StoreError};
use qilin_tool::{
    AutoReview, DynamicTool, ExecConfig, Executor, RegistryError, RequestReply, Requests,
    ResolveError, Reviewer, Services, Session, Tool, ToolCall, ToolError, ToolRegistry,
};
use qilin_tools::{GitGuard, JobTable, ShellTable, TerminalTable};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// The tools whose calls are no progress toward a goal by themselves: reading and settling the
/// goal, running its checks, and `run_code` (the calls its code makes are judged one by one).
const NOT_PROGRESS: &[&str] = &[
    "goal_get",
    "goal_create",
    "goal_update",
    "checks_run",
    "run_code",
];

/// The steps a turn may take when the agent file sets no limit.
pub const DEFAULT_MAX_STEPS: u32 = 50;

/// The longest one tool call may run when the host sets no other limit (time waiting for a
/// person not counted).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// The most events one append to the store carries.
const MAX_BATCH: usize = 1024;

/// Which model a session talks to.
#[derive(Clone)]
pub enum ModelChoice {
    /// `openai:NAME`, `anthropic:NAME` or `scripted:FILE`.
    Spec(String),
    /// A provider the host made itself.
    Provider {
        /// The provider.
        provider: Arc<dyn ModelProvider>,
        /// The model name it receives.
        model: String,
        /// How the session records it (`scripted:demo.script.yaml`).
        label: String,
    },
}

impl ModelChoice {
    /// No model: for a session whose host runs its tools itself (served over MCP, a script
    /// run from the command line). Asking it for an answer is an error saying so. The session
    /// records it as `none`.
    pub fn none() -> Self {
        ModelChoice::Provider {
            provider: Arc::new(NoModel),
            model: "none".to_string(),
            label: "none".to_string(),
        }
    }

    /// A model that plays `script` ([`qilin_model::ScriptedProvider`]): offline, no key — for
    /// tests, demos and an application's examples. The session records it as `scripted`.
    pub fn scripted(script: qilin_model::Script) -> Self {
        ModelChoice::Provider {
            provider: Arc::new(qilin_model::ScriptedProvider::new(script)),
            model: "scripted".to_string(),
            label: "scripted".to_string(),
        }
    }
}

/// The model of a session that has none ([`ModelChoice::none`]).
struct NoModel;

impl ModelProvider for NoModel {
    fn stream(&self, _request: ModelRequest) -> ModelStream {
        Box::pin(futures_util::stream::once(async {
            Err(ModelError::Config {
                provider: "none",
                reason: "this session has no model of its own: its host runs its tools".to_string(),
            })
        }))
    }
}

/// A stored session being continued.
pub(crate) struct Resumed {
    pub(crate) id: String,
    pub(crate) agent_hash: Option<String>,
    pub(crate) context: Option<ProjectContext>,
    pub(crate) events: Vec<Event>,
    /// A turn left open while `run_code` ran, to continue once built.
    pub(crate) open_run: Option<OpenRun>,
}

/// Puts a session together: its workspace, agent, model and who answers its requests.
pub struct SessionBuilder {
    runtime: Runtime,
    workspace: PathBuf,
    agent: Option<AgentSource>,
    model: Option<ModelChoice>,
    default_model: Option<ModelChoice>,
    skill_dirs: Vec<PathBuf>,
    attended: bool,
    call_timeout: Option<Duration>,
    no_sandbox: bool,
    id: Option<String>,
    data_dir: Option<PathBuf>,
    services: Services,
    resumed: Option<Resumed>,
    project_context: bool,
    /// The tools given for this session alone, beside the runtime's.
    tools: ToolRegistry,
    /// The first of them that could not be registered; `build` reports it.
    refused: Option<RegistryError>,
    /// The bounds on the session's children.
    child_limits: ChildLimits,
    /// For a child session: its parent, its bounds and its parent's reviewer.
    parent: Option<(ParentLink, ChildBounds, Arc<dyn Reviewer>)>,
    /// The reviewer model, instead of the one the agent file's `review.auto` names.
    reviewer_model: Option<ModelChoice>,
    /// For a teammate: its lead's children (the team) and its name.
    team: Option<TeamLink>,
}

impl SessionBuilder {
    pub(crate) fn new(runtime: Runtime, workspace: PathBuf) -> Self {
        SessionBuilder {
            runtime,
            workspace,
            agent: None,
            model: None,
            default_model: None,
            skill_dirs: Vec::new(),
            attended: false,
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            no_sandbox: false,
            id: None,
            data_dir: None,
            services: qilin_tools::session_services(),
            resumed: None,
            project_context: true,
            tools: ToolRegistry::new(),
            refused: None,
            child_limits: ChildLimits::default(),
            parent: None,
            reviewer_model: None,
            team: None,
        }
    }

    /// The model that reviews the calls the agent's policy sends to its reviewer, instead of
    /// the one its `review.auto.model` names (which must still be set: it turns auto review
    /// on, with its rules and timeout).
    pub fn reviewer_model(mut self, model: ModelChoice) -> Self {
        self.reviewer_model = Some(model);
        self
    }

    /// The bounds on the children (subagents) the session may start: how deep they nest, how
    /// many run at once, the steps of each ([`ChildLimits::default`] unless set). Its children
    /// have the same bounds.
    pub fn child_limits(mut self, limits: ChildLimits) -> Self {
        self.child_limits = limits;
        self
    }

    /// The agent, from wherever it comes.
    pub(crate) fn agent_source(mut self, source: AgentSource) -> Self {
        self.agent = Some(source);
        self
    }

    /// Makes the session a child of `parent`, bounded by `bounds`, its calls reviewed by the
    /// parent's `reviewer` too.
    pub(crate) fn child_of(
        mut self,
        parent: ParentLink,
        bounds: ChildBounds,
        reviewer: Arc<dyn Reviewer>,
    ) -> Self {
        self.parent = Some((parent, bounds, reviewer));
        self
    }

    /// Makes the session a teammate: a member of `team`'s team, addressed by its name.
    pub(crate) fn teammate(mut self, team: TeamLink) -> Self {
        self.team = Some(team);
        self
    }

    /// The agent file to run.
    pub fn agent_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.agent = Some(AgentSource::File(path.into()));
        self
    }

    /// An agent file's text, checked when the session is built; `path` names it in findings
    /// (it need not exist, and the session records no agent file).
    pub fn agent_text(mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        self.agent = Some(AgentSource::Text {
            path: path.into(),
            text: text.into(),
        });
        self
    }

    /// An agent already loaded.
    pub fn agent(mut self, agent: AgentFile) -> Self {
        self.agent = Some(AgentSource::Loaded(Box::new(agent)));
        self
    }

    /// The agent built into Qilin named `name` (`coder`, [`crate::DEFAULT_AGENT`]).
    pub fn builtin_agent(mut self, name: impl Into<String>) -> Self {
        self.agent = Some(AgentSource::Builtin(name.into()));
        self
    }

    /// Whether the system prompt carries the project context — the environment (workspace,
    /// OS, shell, date, git branch) and the memory files (`AGENTS.md`, `CLAUDE.md`) — read when
    /// the session begins (on by default). A resumed session keeps what its start recorded.
    pub fn project_context(mut self, on: bool) -> Self {
        self.project_context = on;
        self
    }

    /// The model used when neither [`SessionBuilder::model`] nor the agent file names one (the
    /// user's configured default).
    pub fn default_model(mut self, model: ModelChoice) -> Self {
        self.default_model = Some(model);
        self
    }

    /// The model; the agent file's `model` when not set.
    pub fn model(mut self, model: ModelChoice) -> Self {
        self.model = Some(model);
        self
    }

    /// Another folder of skills, searched after the workspace's and the user's and before
    /// the built-in skills.
    pub fn skill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.skill_dirs.push(dir.into());
        self
    }

    /// Whether a host answers the session's requests (approvals, questions). Without one
    /// (the default), an approval is refused and a question fails, saying no one can answer.
    pub fn attended(mut self, attended: bool) -> Self {
        self.attended = attended;
        self
    }

    /// The longest one tool call may run ([`DEFAULT_CALL_TIMEOUT`] unless set; `None` for no
    /// limit).
    pub fn call_timeout(mut self, limit: Option<Duration>) -> Self {
        self.call_timeout = limit;
        self
    }

    /// Runs bash commands without the sandbox, whatever the agent file says (the user's
    /// `--no-sandbox`); the session's notes then carry a loud warning.
    pub fn no_sandbox(mut self, unconfined: bool) -> Self {
        self.no_sandbox = unconfined;
        self
    }

    /// The session's id, instead of a new one (ignored when resuming).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Adds (or replaces) a host service the session's tools can look up.
    pub fn service<T: std::any::Any + Send + Sync>(mut self, service: Arc<T>) -> Self {
        self.services.insert(service);
        self
    }

    /// Adds a tool of the application's for this session alone, beside the built-ins and the
    /// runtime's ([`crate::Runtime::builder`]): the agent file mounts it by name and `run_code`
    /// reaches it. A name already taken is reported by `build`. A resumed session has only the
    /// tools given again to its builder.
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        if self.refused.is_none()
            && let Err(err) = self.tools.register(tool)
        {
            self.refused = Some(err);
        }
        self
    }

    /// Adds a tool defined at run time for this session alone (see
    /// [`crate::RuntimeBuilder::dynamic_tool`]).
    pub fn dynamic_tool(mut self, tool: DynamicTool) -> Self {
        if self.refused.is_none()
            && let Err(err) = self.tools.register_dynamic(tool)
        {
            self.refused = Some(err);
        }
        self
    }

    pub(crate) fn resuming(mut self, resumed: Resumed) -> Self {
        self.resumed = Some(resumed);
        self
    }

    /// The id of the stored session this builder continues, if it does.
    pub fn resumes(&self) -> Option<&str> {
        self.resumed.as_ref().map(|resumed| resumed.id.as_str())
    }

    /// Where the session keeps its files (spilled outputs, job logs): `.qilin/sessions/ID` of
    /// the workspace unless set. The folder is created private (mode 0700) if missing.
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// The prompt the session would send its model — the system prompt and the tools list,
    /// byte for byte — with the findings about its agent and skills, mounted exactly as
    /// [`SessionBuilder::build`] mounts them (the agent's MCP servers reached and closed
    /// again), without starting a session: nothing is stored and no model is needed.
    pub async fn prompt(self) -> Result<SessionPrompt, RuntimeError> {
        let (mounted, _) = self.mount().await?;
        mounted.remount.mcp.close().await;
        Ok(SessionPrompt {
            prompt: mounted.tools.prompt,
            diagnostics: mounted.diagnostics,
            notes: mounted.notes,
        })
    }

    /// Mounts the session's agent and tools: what [`SessionBuilder::build`] and
    /// [`SessionBuilder::prompt`] share. Returns the rest of the builder with the mount.
    async fn mount(mut self) -> Result<(MountedAgent, Self), RuntimeError> {
        if let Some(refused) = self.refused.take() {
            return Err(RuntimeError::Tools(refused));
        }
        let agent = self.agent.take().ok_or_else(|| {
            RuntimeError::Model("the session has no agent: give it an agent file".to_string())
        })?;
        // The application's tools: the runtime's, then this session's.
        let mut app_tools = self.runtime.tools().clone();
        app_tools.extend(&self.tools)?;
        let workspace =
            self.workspace
                .canonicalize()
                .map_err(|source| RuntimeError::Workspace {
                    path: self.workspace.display().to_string(),
                    source,
                })?;
        // A resumed session runs the agent file it began with, or nothing: checked before any
        // of the file's settings (its MCP servers first) take effect.
        if let (Some(resumed), Some(path)) = (&self.resumed, agent.recorded_file())
            && let Some(recorded) = &resumed.agent_hash
        {
            let now = agent_file_hash(path);
            if now.as_ref().ok() != Some(recorded) {
                return Err(RuntimeError::AgentChanged {
                    id: resumed.id.clone(),
                    file: path.display().to_string(),
                    recorded: format!("SHA-256 {recorded}"),
                    now: match now {
                        Ok(hash) => format!("SHA-256 {hash} now"),
                        Err(err) => format!("it cannot be read now: {err}"),
                    },
                });
            }
        }
        let context = match &self.resumed {
            Some(resumed) => resumed.context.clone(),
            None => self
                .project_context
                .then(|| crate::project_context(&workspace)),
        };
        let mounted = mount(MountRequest {
            workspace: &workspace,
            agent,
            skill_dirs: &self.skill_dirs,
            app_tools,
            sandbox: self.runtime.code_sandbox(),
            trust: self.runtime.trust_file(),
            context,
            bounds: self.parent.as_ref().map(|(_, bounds, _)| bounds),
        })
        .await?;
        self.workspace = workspace;
        Ok((mounted, self))
    }

    /// Loads the agent, assembles its prompt and tools, and starts the session: a new one gets
    /// its row in the store and its `session.started`; a resumed one continues its log.
    pub async fn build(self) -> Result<SessionHandle, RuntimeError> {
        let (mounted, this) = self.mount().await?;
        let MountedAgent {
            agent,
            builtin,
            recorded_file,
            tools: mounted_tools,
            remount,
            diagnostics,
            mut notes,
        } = mounted;
        let workspace = this.workspace;
        let protection = session_protection(&agent, &workspace);
        let sandbox = Sandbox::start(
            agent.sandbox.clone().opted_out(this.no_sandbox),
            this.runtime.sandbox_helper().clone(),
        )?
        .with_protection(protection.clone());
        notes.extend(sandbox.warning());
        // The language servers run confined as bash does, unconfined when the user opted out.
        let server_sandbox = match sandbox.settings().mode {
            qilin_sandbox::SandboxMode::Off => qilin_lsp::ServerSandbox::Off,
            _ => qilin_lsp::ServerSandbox::Confined(this.runtime.sandbox_helper().clone()),
        };
        let mut services = this.services;
        services.insert(Arc::new(sandbox));
        services.insert(Arc::new(qilin_tools::FileAccess { protection }));
        let (provider, model_name, model_label) = match this.model {
            Some(ModelChoice::Provider {
                provider,
                model,
                label,
            }) => (provider, model, label),
            Some(ModelChoice::Spec(spec)) => select(&spec)?,
            None => match (&agent.model, this.default_model) {
                (Some(spec), _) => select(spec)?,
                (None, Some(ModelChoice::Spec(spec))) => select(&spec)?,
                (
                    None,
                    Some(ModelChoice::Provider {
                        provider,
                        model,
                        label,
                    }),
                ) => (provider, model, label),
                (None, None) => {
                    return Err(RuntimeError::NoModel {
                        agent: agent.path.display().to_string(),
                    });
                }
            },
        };
        let agent_hash = recorded_file
            .as_deref()
            .and_then(|path| agent_file_hash(path).ok());
        let store = Arc::clone(this.runtime.store());

        let id = match (&this.resumed, this.id) {
            (Some(resumed), _) => resumed.id.clone(),
            (None, Some(id)) => id,
            (None, None) => new_session_id(),
        };
        // A host's folder is made private itself; the default one with the folder of the
        // workspace's sessions it sits in.
        let (data_dir, private) = match this.data_dir {
            Some(dir) => (dir.clone(), vec![dir]),
            None => {
                let sessions = workspace.join(".qilin").join("sessions");
                let dir = sessions.join(&id);
                (dir.clone(), vec![dir, sessions])
            }
        };
        private_folder(&data_dir, &private).map_err(|source| RuntimeError::Io {
            what: format!("creating the session folder {}", data_dir.display()),
            source,
        })?;
        let started = SessionStartedEvent {
            session_id: id.clone(),
            protocol_version: PROTOCOL_VERSION,
            agent: AgentInfo {
                name: agent.name.clone(),
                file: recorded_file.map(|path| path.display().to_string()),
                file_hash: agent_hash.clone(),
                builtin,
            },
            model: model_label,
            workspace: workspace.display().to_string(),
            context: remount.context().cloned(),
            parent_session_id: this
                .parent
                .as_ref()
                .map(|(link, ..)| link.session_id.clone()),
            parent_call_id: this.parent.as_ref().map(|(link, ..)| link.call_id.clone()),
        };
        let depth = match (&this.parent, &this.resumed) {
            (Some((link, ..)), _) => link.depth,
            // A resumed child keeps at least a child's depth.
            (None, Some(resumed)) => u32::from(resumed.events.iter().any(|event| {
                matches!(&event.body, EventBody::SessionStarted(started) if started.parent_session_id.is_some())
            })),
            (None, None) => 0,
        };
        let children = Children::new(this.runtime.clone(), this.child_limits, depth);
        if let Some(team) = this.team.clone() {
            children.join_team(team);
        }
        services.insert(Arc::new(qilin_subagents::SubagentService(
            Arc::clone(&children) as Arc<dyn qilin_subagents::Subagents>,
        )));
        let goals = Arc::new(GoalKeeper::from_events(
            this.resumed
                .as_ref()
                .map_or(&[][..], |resumed| &resumed.events),
            depth > 0,
        ));
        services.insert(Arc::new(qilin_goals::GoalService(
            Arc::clone(&goals) as Arc<dyn qilin_goals::Goals>
        )));
        // The runs of earlier processes keep their ids; those left running are resumed or
        // closed below, once the session's log is being written.
        let workflow_runs = Arc::new(qilin_workflows::WorkflowRuns::from_events(
            this.resumed
                .as_ref()
                .map_or(&[][..], |resumed| &resumed.events),
        ));
        services.insert(Arc::clone(&workflow_runs));
        let loops = LoopRunner::from_events(
            this.resumed
                .as_ref()
                .map_or(&[][..], |resumed| &resumed.events),
            depth > 0,
        );
        services.insert(Arc::new(qilin_loops::LoopService(
            Arc::clone(&loops) as Arc<dyn qilin_loops::Loops>
        )));
        let requests = match this.attended {
            true => Requests::attended(),
            false => Requests::unattended(),
        };
        let auto_review = match &agent.review.auto {
            Some(auto) => {
                let timeout = auto.timeout().map_err(|problem| {
                    RuntimeError::Model(format!("{}: review.auto: {problem}", agent.path.display()))
                })?;
                let (provider, model, label) = match this.reviewer_model.clone() {
                    Some(ModelChoice::Provider {
                        provider,
                        model,
                        label,
                    }) => (provider, model, label),
                    Some(ModelChoice::Spec(spec)) => select(&spec)?,
                    // A script is found as a session's own is: beside the workspace.
                    None => {
                        let spec = match crate::workspace_model(&workspace, &auto.model) {
                            ModelChoice::Spec(spec) => spec,
                            ModelChoice::Provider { .. } => auto.model.clone(),
                        };
                        select(&spec).map_err(|err| {
                            RuntimeError::Model(format!(
                                "{}: the reviewer model of `review.auto` cannot be used: {err}",
                                agent.path.display()
                            ))
                        })?
                    }
                };
                let judge = ModelReviewer::new(provider, model, label, auto.rules.text());
                let review = Arc::new(AutoReview::new(Arc::new(judge), timeout));
                services.insert(Arc::clone(&review));
                Some(review)
            }
            None => None,
        };
        services.insert(Arc::new(qilin_lsp::LspService::new(
            qilin_lsp::LspWorkspace::shared(
                &workspace,
                qilin_lsp::LspOptions {
                    sandbox: server_sandbox,
                    ..qilin_lsp::LspOptions::default()
                },
            ),
            agent.lsp.diagnostics_after_edit,
        )));
        if let Some(checks) = session_checks(&agent, &workspace, &mut notes) {
            services.insert(Arc::new(checks));
        }
        services.insert(Arc::new(crate::schedule_service(
            Arc::clone(&store),
            &id,
            &workspace,
        )));
        services.insert(Arc::new(qilin_sessions::SessionQueries::new(
            Arc::clone(&store),
            &id,
            &started.workspace,
            agent.session_queries,
        )));
        let journals = Arc::new(Journals::default());
        services.insert(Arc::clone(&journals));
        let mut session = Session::new(&id, &workspace, &data_dir)
            .with_services(services)
            .with_requests(requests);
        let mut open_run = None;
        let stored = match this.resumed {
            Some(resumed) => {
                session = session.continuing_after(resumed.events.last().map_or(0, |e| e.seq));
                open_run = resumed.open_run;
                resumed.events
            }
            None => {
                store
                    .create_session(NewSession {
                        id: id.clone(),
                        workspace: started.workspace.clone(),
                        agent: agent.name.clone(),
                        agent_file: started.agent.file.clone(),
                        model: started.model.clone(),
                        created_at: qilin_tool::now(),
                        parent_session_id: started.parent_session_id.clone(),
                        parent_call_id: started.parent_call_id.clone(),
                    })
                    .await?;
                Vec::new()
            }
        };
        let session = Arc::new(session);
        let continued: Vec<String> = open_run
            .iter()
            .flat_map(|open_run| open_run.runs.iter().map(|run| run.call_id.clone()))
            .collect();
        for call_id in continued
            .iter()
            .chain(&workflow_runs.waiting_background_calls())
        {
            journals.insert(CallJournal::from_events(call_id, &stored, &session));
        }
        goals.set_up(Arc::downgrade(&session));
        session
            .requests()
            .continue_after(stored.iter().filter_map(|event| match &event.body {
                EventBody::RequestOpened(opened) => Some(opened.request_id.clone()),
                _ => None,
            }));
        if let Some(auto) = &auto_review {
            auto.restore(&stored);
        }
        session.restore_prompts(stored.iter().filter_map(|event| match &event.body {
            EventBody::TurnStarted { prompt, .. } => Some(prompt.clone()),
            _ => None,
        }));
        session
            .requests()
            .restore_grants(stored.iter().filter_map(|event| match &event.body {
                EventBody::RequestResolved(resolved) => match &resolved.resolution {
                    RequestResolution::ApprovedForSession { grant } => Some(grant.clone()),
                    _ => None,
                },
                _ => None,
            }));
        let client_turns = stored
            .iter()
            .filter_map(|event| match &event.body {
                EventBody::TurnStarted {
                    turn_id,
                    client_turn_id: Some(client),
                    ..
                } => Some((client.clone(), turn_id.clone())),
                _ => None,
            })
            .collect();
        let committer = Committer::start(
            Arc::clone(&store),
            id.clone(),
            session.events().subscribe(),
            session.events().head(),
        );
        // A foreground workflow run whose turn is not continued cannot be resumed, nor any
        // run when the agent's code mode is off now.
        let code_mode = agent
            .code_mode
            .then(|| this.runtime.code_sandbox().code_mode(agent.limits.code));
        workflow_runs.close_unresumable(&session, &continued, code_mode.is_some());
        let own_reviewer: Arc<dyn Reviewer> = agent.policy.reviewer();
        let reviewer: Arc<dyn Reviewer> = match &this.parent {
            Some((_, _, parent)) => Arc::new(BothReviewers {
                own: own_reviewer,
                parent: Arc::clone(parent),
            }),
            None => own_reviewer,
        };
        let reviewer_for_children = Arc::clone(&reviewer);
        let child_bounds = ChildBounds {
            tools: mounted_tools
                .registry
                .list()
                .map(|tool| tool.name().to_string())
                .collect(),
            code_mode: agent.code_mode,
            sandbox: agent.sandbox.clone(),
            max_steps: this.child_limits.max_steps,
        };
        let parent_model = ModelChoice::Provider {
            provider: Arc::clone(&provider),
            model: model_name.clone(),
            label: started.model.clone(),
        };
        let config = ExecConfig {
            timeout: this.call_timeout,
            ..ExecConfig::default()
        };
        let executor = Executor::with_mounts(
            Arc::new(mounted_tools.registry),
            Arc::clone(&session),
            Arc::clone(&reviewer),
            config.clone(),
            mounted_tools.mounts,
        );
        let mcp = remount.mcp.clone();
        let remount = remount
            .into_remount(Arc::clone(&session), reviewer, config)
            .map(Arc::new);
        let agent_loop = Agent::resume(
            provider,
            mounted_tools.prompt,
            executor,
            LoopSettings {
                model: model_name,
                max_steps: agent.limits.max_steps.unwrap_or(DEFAULT_MAX_STEPS),
                max_tokens: None,
                reasoning: agent.reasoning,
            },
            &stored,
        );
        if stored.is_empty() {
            session
                .events()
                .emit(EventBody::SessionStarted(started.clone()));
        } else {
            // A goal its last process left active waits for a person to resume it.
            goals.pause_for_restart();
        }
        children.set_up(ParentSetup {
            session: Arc::downgrade(&session),
            session_id: id.clone(),
            workspace: workspace.clone(),
            model: parent_model,
            bounds: child_bounds,
            reviewer: Arc::clone(&reviewer_for_children),
            no_sandbox: this.no_sandbox,
            skill_dirs: this.skill_dirs.clone(),
            call_timeout: this.call_timeout,
            agent: agent.clone(),
        });
        // A resumed parent gets its children back; a background child whose end its log lacks
        // (the process stopped first) has it recorded now, so the model is told once.
        for ended in children.restore(&stored, &this.runtime).await {
            session.events().emit(ended);
        }
        let loop_setup = LoopSetup {
            session: Arc::downgrade(&session),
            handle: None,
            children: Arc::clone(&children),
            workspace: workspace.clone(),
        };
        let handle = SessionHandle {
            inner: Arc::new(SessionInner {
                id,
                store,
                session,
                agent: Arc::new(agent_loop),
                committer,
                started,
                diagnostics,
                notes,
                mcp,
                remount,
                children,
                goals,
                loops,
                runtime: this.runtime.clone(),
                turns: Mutex::new(Turns {
                    running: None,
                    by_client_id: client_turns,
                    compacting: None,
                }),
            }),
        };
        this.runtime.register_live(&handle);
        handle.inner.loops.set_up(LoopSetup {
            handle: Some(handle.downgrade()),
            ..loop_setup
        });
        // A loop its last process left running goes on here, with its next iteration.
        handle.inner.loops.restore();
        if let Some(open_run) = open_run {
            handle.continue_open_run(open_run);
        }
        // A background workflow run its last process left running goes on here, replaying
        // its journal.
        if let Some(code_mode) = &code_mode {
            qilin_workflows::resume_background_runs(code_mode, &handle.inner.agent.executor());
        }
        Ok(handle)
    }
}

/// The prompt a session would send its model, from [`SessionBuilder::prompt`].
#[derive(Debug, Clone)]
pub struct SessionPrompt {
    /// The system prompt and the tools list, exactly as the provider receives them.
    pub prompt: AgentPrompt,
    /// Findings about the agent file and the skills it uses (warnings; errors fail the mount).
    pub diagnostics: Vec<Diagnostic>,
    /// Notes for the user: MCP servers down, skill findings not shown, what to turn on.
    pub notes: Vec<String>,
}

fn select(spec: &str) -> Result<(Arc<dyn ModelProvider>, String, String), RuntimeError> {
    let selected = select_model(spec).map_err(|err| RuntimeError::Model(err.to_string()))?;
    Ok((selected.provider, selected.model, spec.to_string()))
}

/// A running session. Cheap to clone; every clone drives the same session. A turn, once
/// started, runs to its end whether or not anyone holds a handle.
#[derive(Clone)]
pub struct SessionHandle {
    inner: Arc<SessionInner>,
}

/// A session that may have been dropped: what the runtime's list of live sessions holds.
pub(crate) struct WeakSession(std::sync::Weak<SessionInner>);

impl WeakSession {
    /// The session, if it is still alive.
    pub(crate) fn upgrade(&self) -> Option<SessionHandle> {
        self.0.upgrade().map(|inner| SessionHandle { inner })
    }

    /// Whether the session is still alive.
    pub(crate) fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }

    /// Whether this is `handle`'s session.
    pub(crate) fn is(&self, handle: &SessionHandle) -> bool {
        std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&handle.inner))
    }
}

struct SessionInner {
    id: String,
    store: Arc<dyn EventStore>,
    session: Arc<Session>,
    agent: Arc<Agent>,
    committer: Committer,
    started: SessionStartedEvent,
    diagnostics: Vec<Diagnostic>,
    notes: Vec<String>,
    mcp: McpConnections,
    /// Makes the tools again when an MCP server's tool list changed (sessions with servers).
    remount: Option<Arc<Remount>>,
    /// The session's children (subagents).
    children: Arc<Children>,
    /// The session's goal.
    goals: Arc<GoalKeeper>,
    /// The session's loops.
    loops: Arc<LoopRunner>,
    /// The runtime that built it, which counts it alive until it is closed.
    runtime: crate::Runtime,
    turns: Mutex<Turns>,
}

struct Turns {
    running: Option<RunningTurn>,
    by_client_id: HashMap<String, String>,
    /// Cancels the compaction under way, while one is.
    compacting: Option<CancellationToken>,
}

/// What a turn's task runs.
enum TurnStart {
    /// A new turn of `prompt`.
    Prompt {
        prompt: String,
        client_turn_id: Option<String>,
    },
    /// A turn a previous process left open, continued.
    Open(OpenTurn),
}

struct RunningTurn {
    turn_id: String,
    cancel: CancellationToken,
    done: watch::Receiver<Option<TurnSummary>>,
}

impl RunningTurn {
    fn is_running(&self) -> bool {
        self.done.borrow().is_none()
    }
}

/// A turn started by [`SessionHandle::submit`].
pub struct TurnHandle {
    turn_id: String,
    done: watch::Receiver<Option<TurnSummary>>,
}

impl TurnHandle {
    /// The turn's id.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Waits for the turn to end and says how it ended.
    pub async fn finished(mut self) -> TurnSummary {
        let summary = match self.done.wait_for(Option::is_some).await {
            Ok(summary) => summary.clone(),
            Err(_) => None,
        };
        summary.unwrap_or_else(|| TurnSummary {
            reason: qilin_protocol::FinishReason::Error,
            steps: 0,
            usage: Default::default(),
            final_text: String::new(),
            error: Some("the turn's task ended without a summary".to_string()),
        })
    }
}

/// Where a session stands: its call tree as every client renders it, and what waits.
#[derive(Debug, Clone)]
pub struct SessionSnapshot {
    /// The session's id.
    pub id: String,
    /// The `seq` of the latest event folded into `tree`.
    pub head_seq: u64,
    /// The conversation, folded from the stored events.
    pub tree: ConversationTree,
    /// The requests waiting for an answer.
    pub open_requests: Vec<RequestOpenedEvent>,
    /// The turn running now, if one is.
    pub running_turn: Option<String>,
}

impl SessionHandle {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// What the session runs: its agent, model, workspace and protocol version.
    pub fn info(&self) -> &SessionStartedEvent {
        &self.inner.started
    }

    /// The warnings found putting the session together that concern this agent (its skills
    /// that did not load cleanly, unknown keys in its agent file), for the host to show.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.inner.diagnostics
    }

    /// Notes for the user: how many skill findings were not shown, which skills the catalog
    /// left out for its budget.
    pub fn notes(&self) -> &[String] {
        &self.inner.notes
    }

    /// The executor every call of the session runs through (an MCP host's calls included).
    pub fn executor(&self) -> Executor {
        self.inner.agent.executor()
    }

    /// The system prompt (the agent's instructions and its catalog of skills) and the tools
    /// the model receives directly, as a provider gets them.
    pub fn prompt(&self) -> AgentPrompt {
        self.inner.agent.prompt()
    }

    /// The workspace folder the tools work in.
    pub fn workspace(&self) -> &Path {
        self.inner.session.workspace()
    }

    fn turns(&self) -> parking_lot::MutexGuard<'_, Turns> {
        self.inner.turns.lock()
    }

    /// Starts a turn of `prompt`; it runs in the background to its end. Refused while another
    /// turn runs, for an empty prompt, and for a `client_turn_id` that started a turn already
    /// (so a retried request never starts a second turn).
    pub fn submit(
        &self,
        prompt: &str,
        client_turn_id: Option<String>,
    ) -> Result<TurnHandle, SubmitError> {
        self.submit_as(prompt, client_turn_id, false, false)
    }

    /// Starts a turn of `prompt` that no person watches (a scheduled run): while it runs, its
    /// approvals and questions end at once as unattended — refused with a reason the model
    /// reads — even in an attended session. Refused as [`SessionHandle::submit`] is.
    pub fn submit_unattended(&self, prompt: &str) -> Result<TurnHandle, SubmitError> {
        self.submit_as(prompt, None, false, true)
    }

    /// Starts a turn of `prompt`, as [`SessionHandle::submit`]; `continuation` when the runtime
    /// starts it for the session's goal, `unattended` when no person watches it.
    fn submit_as(
        &self,
        prompt: &str,
        client_turn_id: Option<String>,
        continuation: bool,
        unattended: bool,
    ) -> Result<TurnHandle, SubmitError> {
        if prompt.trim().is_empty() {
            return Err(SubmitError::EmptyPrompt);
        }
        self.start_turn(prompt, client_turn_id, continuation, unattended)
    }

    /// Starts a teammate's turn for the messages its log received since its last step (the
    /// `agent.message` events are what the model answers): a turn with an empty prompt.
    /// Refused as [`SessionHandle::submit`] is while another turn runs.
    pub(crate) fn wake(&self) -> Result<TurnHandle, SubmitError> {
        self.start_turn("", None, false, false)
    }

    /// Starts a turn of `prompt` (empty for a teammate woken by its messages).
    fn start_turn(
        &self,
        prompt: &str,
        client_turn_id: Option<String>,
        continuation: bool,
        unattended: bool,
    ) -> Result<TurnHandle, SubmitError> {
        let start = TurnStart::Prompt {
            prompt: prompt.to_string(),
            client_turn_id,
        };
        self.run_turn_task(start, continuation, unattended)
    }

    /// Continues the turn the session's last process left open while `run_code` ran (see
    /// [`Runtime::resume`]): each run replays its journal, then the turn goes on.
    fn continue_open_run(&self, run: OpenRun) {
        let open = OpenTurn {
            turn_id: run.turn_id,
            prompt: run.prompt,
            step: run.step,
            calls: run
                .runs
                .into_iter()
                .map(|start| ToolCall {
                    call_id: start.call_id,
                    name: start.tool_name,
                    arguments: start.arguments,
                })
                .collect(),
        };
        if let Err(err) = self.run_turn_task(TurnStart::Open(open), false, false) {
            tracing::error!(session = %self.inner.id, error = %err, "the open turn could not be continued");
        }
    }

    /// Starts the task running a turn: a new one, or one left open to continue.
    fn run_turn_task(
        &self,
        start: TurnStart,
        continuation: bool,
        unattended: bool,
    ) -> Result<TurnHandle, SubmitError> {
        let client_turn_id = match &start {
            TurnStart::Prompt { client_turn_id, .. } => client_turn_id.clone(),
            TurnStart::Open(_) => None,
        };
        if let Some(failure) = self.inner.committer.failure() {
            return Err(SubmitError::Broken(failure));
        }
        let mut turns = self.turns();
        if let Some(client) = &client_turn_id
            && let Some(turn_id) = turns.by_client_id.get(client)
        {
            return Err(SubmitError::AlreadySubmitted {
                client_turn_id: client.clone(),
                turn_id: turn_id.clone(),
            });
        }
        if let Some(running) = &turns.running
            && running.is_running()
        {
            return Err(SubmitError::Busy {
                turn_id: running.turn_id.clone(),
            });
        }
        if turns.compacting.is_some() {
            return Err(SubmitError::Compacting);
        }
        let (turn_id, prompt) = match &start {
            TurnStart::Prompt { prompt, .. } => (self.inner.agent.next_turn_id(), prompt.clone()),
            TurnStart::Open(open) => (open.turn_id.clone(), open.prompt.clone()),
        };
        let cancel = CancellationToken::new();
        let (finished, done) = watch::channel(None);
        let agent = Arc::clone(&self.inner.agent);
        let span = tracing::info_span!("session", id = %self.inner.id);
        let recorded_before = self.recorded_head();
        self.inner.goals.turn_started(continuation);
        self.inner
            .session
            .requests()
            .set_unattended_turn(unattended);
        {
            let cancel = cancel.clone();
            let remount = self.inner.remount.clone();
            let report = TurnReport(finished);
            let handle = self.clone();
            let crashed = CrashedTurn {
                handle: self.clone(),
                turn_id: turn_id.clone(),
                prompt: prompt.clone(),
                client_turn_id: client_turn_id.clone(),
                recorded_before,
                cancel: cancel.clone(),
            };
            tokio::spawn(
                async move {
                    let turn = async {
                        // Between turns, never within one: the prompt of a turn stays
                        // byte-stable. A server down since its last failed start is tried
                        // again first.
                        if let Some(remount) = remount
                            && let Err(err) = remount.refresh(&agent).await
                        {
                            tracing::warn!(error = %err, "the MCP servers' tools could not be made again; the turn keeps the previous ones");
                        }
                        match start {
                            TurnStart::Prompt {
                                prompt,
                                client_turn_id,
                            } => agent.run_turn_as(&prompt, client_turn_id, cancel).await,
                            TurnStart::Open(open) => agent.continue_turn(open, cancel).await,
                        }
                    };
                    // A panic anywhere in the turn (the loop, a provider) must not leave the
                    // session running for good: it ends the turn like an error.
                    let summary = match AssertUnwindSafe(turn).catch_unwind().await {
                        Ok(summary) => summary,
                        Err(panic) => crashed.close(&panic_text(panic.as_ref())).await,
                    };
                    // The goal's accounting and status are recorded before the turn is
                    // reported ended; its next turn starts after.
                    if unattended {
                        handle.inner.session.requests().set_unattended_turn(false);
                    }
                    let go_on = handle.goal_turn_ended(&summary, recorded_before).await;
                    report.send(summary);
                    if go_on {
                        handle.continue_goal();
                    }
                }
                .instrument(span),
            );
        }
        if let Some(client) = client_turn_id {
            turns.by_client_id.insert(client, turn_id.clone());
        }
        turns.running = Some(RunningTurn {
            turn_id: turn_id.clone(),
            cancel,
            done: done.clone(),
        });
        Ok(TurnHandle { turn_id, done })
    }

    /// Brings the MCP servers' tools up to date now, as happens before each turn: a server
    /// due for another start is tried, and when a server's tool list changed (or it came up)
    /// the tools and skills are made again. For a host with no turns of its own (`qilin mcp
    /// serve`). Returns whether the tools changed; does nothing while a turn runs, whose tools
    /// stay fixed (the next turn brings the change).
    pub async fn refresh_tools(&self) -> Result<bool, RuntimeError> {
        let Some(remount) = self.inner.remount.clone() else {
            return Ok(false);
        };
        if self.running_turn().is_some() {
            return Ok(false);
        }
        remount.refresh(&self.inner.agent).await
    }

    /// A handle that does not keep the session alive.
    pub(crate) fn downgrade(&self) -> WeakSession {
        WeakSession(Arc::downgrade(&self.inner))
    }

    /// How many of the session's children (subagents) are running now.
    pub fn running_children(&self) -> usize {
        self.inner.children.running()
    }

    /// Whether the session has unattended work going here: a loop running, or a workflow run
    /// (a background one outlives its turn).
    pub fn runs_loops_or_workflows(&self) -> bool {
        let workflows = self
            .inner
            .session
            .services()
            .get::<qilin_workflows::WorkflowRuns>()
            .is_some_and(|runs| runs.any_running());
        workflows
            || self
                .loops()
                .iter()
                .any(|record| record.status == qilin_protocol::loops::LoopStatus::Running)
    }

    /// The tokens the session's children (subagents) used so far, summed.
    pub fn children_usage(&self) -> qilin_protocol::agents::ChildUsage {
        self.inner.children.usage()
    }

    /// Every event the session records from now on, as it is recorded (before the store
    /// commits it).
    pub(crate) fn live_events(&self) -> mpsc::UnboundedReceiver<Event> {
        self.inner.session.events().subscribe()
    }

    /// The session as its tools see it (its log, requests and services).
    pub(crate) fn tool_session(&self) -> &Arc<Session> {
        &self.inner.session
    }

    /// Records `body` in the session's log (a message from another session): the model sees
    /// it between steps.
    pub(crate) fn deliver(&self, body: EventBody) {
        self.inner.session.events().emit(body);
    }

    /// Starts a loop for a person (a host's start): its iterations run in the background,
    /// linked to the session and the loop's id. Refused, saying why, as `loop_start` is.
    pub fn start_loop(&self, start: StartLoop) -> Result<LoopRecord, ToolError> {
        qilin_loops::Loops::start(self.inner.loops.as_ref(), None, start)
    }

    /// The session's loops, oldest first, as they stand now.
    pub fn loops(&self) -> Vec<LoopRecord> {
        qilin_loops::Loops::list(self.inner.loops.as_ref())
    }

    /// Stops loop `id` for a person: its running iteration is interrupted; resolves once the
    /// loop recorded its end (a loop that ended is returned as it is).
    pub async fn stop_loop(&self, id: &str) -> Result<LoopRecord, ToolError> {
        self.inner.loops.stop_for(id, "stopped by a person").await
    }

    /// The session's latest goal (settled ones included), if it ever had one.
    pub fn goal(&self) -> Option<GoalRecord> {
        qilin_goals::Goals::current(self.inner.goals.as_ref())
    }

    /// Sets a goal for the user: refused while the session has one that is not settled. An
    /// idle session starts working on it at once (a continuation turn).
    pub fn set_goal(&self, goal: NewGoal) -> Result<GoalRecord, GoalError> {
        let created = self.inner.goals.create_goal(goal, GoalActor::User)?;
        self.continue_goal();
        Ok(created)
    }

    /// Pauses the active goal for the user. It takes effect at once: the running turn is
    /// interrupted (its calls end `interrupted`) and no turn follows until the goal is
    /// resumed.
    pub fn pause_goal(&self) -> Result<GoalRecord, GoalError> {
        let paused = self.inner.goals.pause(
            GoalActor::User,
            PauseCause::User,
            "paused by the user".to_string(),
        )?;
        self.interrupt();
        Ok(paused)
    }

    /// Resumes a paused or budget-limited goal, each bound of `raise` replacing the goal's
    /// (refused while a budget stays spent). An idle session continues it at once.
    pub fn resume_goal(&self, raise: GoalBudget) -> Result<GoalRecord, GoalError> {
        let resumed = self.inner.goals.resume(raise)?;
        self.continue_goal();
        Ok(resumed)
    }

    /// Clears the goal for the user; the running turn is interrupted. A cleared goal is
    /// returned as it is.
    pub fn clear_goal(&self) -> Result<GoalRecord, GoalError> {
        let active = self.inner.goals.active();
        let cleared = self.inner.goals.clear()?;
        if active {
            self.interrupt();
        }
        Ok(cleared)
    }

    /// Starts a continuation turn when the goal is active and no turn runs.
    fn continue_goal(&self) {
        if let Some(prompt) = self.inner.goals.continuation() {
            match self.submit_as(&prompt, None, true, false) {
                // A turn already runs (or a compaction): the goal continues after it.
                Ok(_) | Err(SubmitError::Busy { .. } | SubmitError::Compacting) => {}
                Err(err) => {
                    tracing::warn!(session = %self.inner.id, error = %err, "the goal's next turn could not start");
                }
            }
        }
        self.inner.goals.continued();
    }

    /// Waits until no turn runs and none is about to start for the session's goal (whose
    /// continuation turns follow one another while it is active); returns the summary of the
    /// last turn that ended, when one ran.
    pub async fn wait_idle(&self) -> Option<TurnSummary> {
        let mut last = None;
        loop {
            let done = self
                .turns()
                .running
                .as_ref()
                .map(|running| running.done.clone());
            if let Some(mut done) = done
                && let Ok(summary) = done.wait_for(Option::is_some).await
            {
                last = summary.clone();
            }
            if self.inner.goals.continuing() {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
            if self.running_turn().is_none() {
                return last;
            }
        }
    }

    /// Records what the turn that just ended means for the goal; returns whether the goal's
    /// next turn should start.
    async fn goal_turn_ended(&self, summary: &TurnSummary, recorded_before: u64) -> bool {
        let goals = &self.inner.goals;
        let changed = match goals.running_continuation() && goals.active() {
            true => self.turn_changed(recorded_before).await,
            false => true,
        };
        goals.turn_ended(TurnOutcome {
            reason: summary.reason,
            tokens: summary.usage.input_tokens + summary.usage.output_tokens,
            final_text: &summary.final_text,
            changed,
        })
    }

    /// Whether the turn recorded after `recorded_before` made a call that may have changed
    /// something: one that ended `ok` of a tool not declared read-only, other than the goal
    /// and check tools and `run_code` (whose own calls are judged one by one). A log that
    /// cannot be read counts as a change (a goal is never paused on a guess).
    async fn turn_changed(&self, recorded_before: u64) -> bool {
        if self.flush().await.is_err() {
            return true;
        }
        let Ok(events) =
            read_after(self.inner.store.as_ref(), &self.inner.id, recorded_before).await
        else {
            return true;
        };
        let executor = self.executor();
        let registry = executor.registry();
        events.iter().any(|event| match &event.body {
            EventBody::ToolResult(result) => {
                result.status == qilin_protocol::CallStatus::Ok
                    && !NOT_PROGRESS.contains(&result.tool_name.as_str())
                    && registry
                        .get(&result.tool_name)
                        .and_then(|tool| tool.effect())
                        != Some(qilin_tool::ToolEffect::ReadOnly)
            }
            _ => false,
        })
    }

    /// The turn running now, to wait for its end, if one is.
    pub(crate) fn running_turn_handle(&self) -> Option<TurnHandle> {
        self.turns()
            .running
            .as_ref()
            .filter(|running| running.is_running())
            .map(|running| TurnHandle {
                turn_id: running.turn_id.clone(),
                done: running.done.clone(),
            })
    }

    /// The turn running now, if one is.
    pub fn running_turn(&self) -> Option<String> {
        self.turns()
            .running
            .as_ref()
            .filter(|running| running.is_running())
            .map(|running| running.turn_id.clone())
    }

    /// Interrupts the running turn: its model stream stops, its calls end `interrupted` (with
    /// what they had), its open requests end `cancelled`. A compaction under way stops too,
    /// leaving the conversation as it was. Returns false when nothing runs, or when it was
    /// interrupted already and is winding down.
    pub fn interrupt(&self) -> bool {
        self.inner.children.interrupt_all();
        if let Some(runs) = self
            .inner
            .session
            .services()
            .get::<qilin_workflows::WorkflowRuns>()
        {
            runs.interrupt_all();
        }
        let turns = self.turns();
        if let Some(compacting) = &turns.compacting
            && !compacting.is_cancelled()
        {
            compacting.cancel();
            return true;
        }
        match &turns.running {
            Some(running) if running.is_running() && !running.cancel.is_cancelled() => {
                running.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Compacts the conversation: the session's model is asked, with no tools, for a summary
    /// of everything so far (what the user wants, decisions, files touched, what remains),
    /// which is recorded as `context.compacted`. From then on the model receives the system
    /// prompt, the summary, then what follows; a resumed session rebuilds the same. Returns
    /// once the event is stored. Refused while a turn runs or another compaction does, and
    /// when no turn ran since the last compaction; [`SessionHandle::interrupt`] stops it. Like
    /// a turn, it runs to its end even if the caller stops waiting.
    pub async fn compact(&self) -> Result<ContextCompactedEvent, CompactError> {
        if let Some(failure) = self.inner.committer.failure() {
            return Err(CompactError::Broken(failure));
        }
        let cancel = CancellationToken::new();
        {
            let mut turns = self.turns();
            if let Some(running) = &turns.running
                && running.is_running()
            {
                return Err(CompactError::Busy {
                    turn_id: running.turn_id.clone(),
                });
            }
            if turns.compacting.is_some() {
                return Err(CompactError::Compacting);
            }
            turns.compacting = Some(cancel.clone());
        }
        let handle = self.clone();
        let span = tracing::info_span!("session", id = %self.inner.id);
        let task = tokio::spawn(
            async move {
                let result = handle.inner.agent.compact(cancel).await;
                let stored = match &result {
                    Ok(_) => handle.flush().await.map_err(|err| err.to_string()),
                    Err(_) => Ok(()),
                };
                handle.turns().compacting = None;
                match (result, stored) {
                    (Ok(compacted), Ok(())) => Ok(compacted),
                    (Ok(_), Err(failure)) => Err(CompactError::Broken(failure)),
                    (Err(err), _) => Err(CompactError::Failed(err)),
                }
            }
            .instrument(span),
        );
        match task.await {
            Ok(result) => result,
            Err(join_error) => {
                self.turns().compacting = None;
                Err(CompactError::Broken(format!(
                    "the compaction's task ended abnormally: {join_error}"
                )))
            }
        }
    }

    /// Whether a compaction is under way.
    pub fn compacting(&self) -> bool {
        self.turns().compacting.is_some()
    }

    /// The `seq` of the latest event in the store.
    pub fn committed_head(&self) -> u64 {
        *self.inner.committer.committed.borrow()
    }

    /// The `seq` of the latest event recorded: past [`SessionHandle::committed_head`] while
    /// events wait for the store.
    pub fn recorded_head(&self) -> u64 {
        self.inner.session.events().head()
    }

    /// Session `id` (a child this session started), while it is alive in this process: to
    /// follow its events live.
    pub fn live_child(&self, id: &str) -> Option<SessionHandle> {
        self.inner.runtime.live_session(id)
    }

    /// Every event after `after`, stored then live, each exactly once and in order.
    pub fn subscribe_from(&self, after: u64) -> BoxStream<'static, Result<Event, StoreError>> {
        self.inner.store.follow(&self.inner.id, after)
    }

    /// Answers the open request `request_id` for `resolved_by` (a name the log keeps:
    /// `terminal`, a client's id), giving the `request.resolved` recorded (its resolution as
    /// the log keeps it). Refused when it has ended or the answer does not fit.
    pub fn resolve(
        &self,
        request_id: &str,
        reply: RequestReply,
        resolved_by: &str,
    ) -> Result<RequestResolvedEvent, ResolveError> {
        let session = &self.inner.session;
        session
            .requests()
            .resolve(session.events(), request_id, reply, resolved_by)
    }

    /// The requests waiting for an answer now.
    pub fn open_requests(&self) -> Vec<RequestOpenedEvent> {
        self.inner.session.requests().open()
    }

    /// The session's call tree and what waits, folded from its stored events.
    pub async fn snapshot(&self) -> Result<SessionSnapshot, RuntimeError> {
        let mut live = LiveTree::default();
        live.catch_up(self.inner.store.as_ref(), &self.inner.id)
            .await?;
        Ok(SessionSnapshot {
            id: self.inner.id.clone(),
            head_seq: live.head_seq,
            tree: live.tree,
            open_requests: self.open_requests(),
            running_turn: self.running_turn(),
        })
    }

    /// The calls the reviewer model refused (or could not judge, and that were refused),
    /// newest first, at most 50, each with whether a person allowed it since.
    pub async fn reviews(&self) -> Result<Vec<ReviewEntry>, RuntimeError> {
        self.flush().await?;
        let events = read_after(self.inner.store.as_ref(), &self.inner.id, 0).await?;
        Ok(review_entries(&events))
    }

    /// A person allows `call_id`, a call the reviewer refused: a grant (`review.granted`)
    /// lets the next call of the same tool with the same canonical arguments run once without
    /// review. With `retry`, a turn telling the model so starts once the session is idle.
    pub async fn allow_call(
        &self,
        call_id: &str,
        retry: bool,
    ) -> Result<ReviewGrant, AllowCallError> {
        let auto = self
            .inner
            .session
            .services()
            .get::<AutoReview>()
            .ok_or(AllowCallError::Refused(AllowError::NoReviewer))?;
        self.flush().await?;
        let events = read_after(self.inner.store.as_ref(), &self.inner.id, 0).await?;
        let (tool, arguments) = refused_call(&events, call_id)?;
        let grant = auto.grant(self.inner.session.events(), call_id, &tool, &arguments);
        if retry {
            let prompt = retry_prompt(call_id, &tool, &arguments);
            let handle = self.clone();
            tokio::spawn(async move {
                handle.wait_idle().await;
                if let Err(err) = handle.submit(&prompt, None) {
                    tracing::warn!(error = %err, "the retry of an allowed call could not start");
                }
            });
        }
        Ok(grant)
    }

    /// Returns once every event recorded so far is in the store.
    pub async fn flush(&self) -> Result<(), RuntimeError> {
        self.inner.committer.committed(self.recorded_head()).await
    }

    /// Interrupts the running turn (and a compaction), waits for the turn to end, ends the
    /// session's background jobs, persistent shells and terminals (and everything they
    /// started) and its MCP connections, and flushes the log.
    pub async fn close(&self) -> Result<(), RuntimeError> {
        self.inner.goals.closing();
        self.inner.loops.closing();
        if let Some(compacting) = &self.turns().compacting {
            compacting.cancel();
        }
        let running = self
            .turns()
            .running
            .as_ref()
            .map(|running| (running.cancel.clone(), running.done.clone()));
        if let Some((cancel, mut done)) = running {
            cancel.cancel();
            let _ = done.wait_for(Option::is_some).await;
        }
        // The loops' tasks end their iterations and close the sessions they hold.
        self.inner.loops.closed().await;
        if let Some(jobs) = self.inner.session.services().get::<JobTable>() {
            jobs.end_all();
        }
        if let Some(runs) = self
            .inner
            .session
            .services()
            .get::<qilin_workflows::WorkflowRuns>()
        {
            runs.interrupt_all();
        }
        if let Some(shells) = self.inner.session.services().get::<ShellTable>() {
            shells.end_all();
        }
        if let Some(terminals) = self.inner.session.services().get::<TerminalTable>() {
            terminals.end_all();
        }
        // A repository created by a process the session just ended is moved aside too.
        let services = self.inner.session.services();
        if let (Some(guard), Some(sandbox)) =
            (services.get::<GitGuard>(), services.get::<Sandbox>())
        {
            let workspace = self.inner.session.workspace().to_path_buf();
            let found =
                tokio::task::spawn_blocking(move || guard.after_command(&workspace, &sandbox))
                    .await
                    .unwrap_or_default();
            if let Some(note) = qilin_tools::quarantine_note(&found) {
                tracing::warn!(session = %self.inner.session.id(), "{}", note.trim_end());
            }
        }
        self.inner.mcp.close().await;
        self.inner.goals.pause_for_restart();
        // Closed, it may be resumed from its log again (by this process or another).
        self.inner.runtime.forget_live(self);
        self.flush().await
    }
}

/// Sends a turn's summary to whoever waits for the turn: the summary it is given, or, when the
/// turn's task ends without one (it panicked past every guard), an error summary, so the
/// session is never left running.
struct TurnReport(watch::Sender<Option<TurnSummary>>);

impl TurnReport {
    fn send(self, summary: TurnSummary) {
        self.0.send_replace(Some(summary));
    }
}

impl Drop for TurnReport {
    fn drop(&mut self) {
        if self.0.borrow().is_none() {
            self.0.send_replace(Some(error_summary(
                "the turn's task ended abnormally without a summary".to_string(),
            )));
        }
    }
}

fn error_summary(error: String) -> TurnSummary {
    TurnSummary {
        reason: qilin_protocol::FinishReason::Error,
        steps: 0,
        usage: Default::default(),
        final_text: String::new(),
        error: Some(error),
    }
}

/// How long the calls of a crashed turn may take to end by themselves, once interrupted,
/// before the turn closes them as interrupted itself.
const CRASH_GRACE: Duration = Duration::from_secs(10);

/// What is needed to end a turn whose task panicked.
struct CrashedTurn {
    handle: SessionHandle,
    turn_id: String,
    prompt: String,
    client_turn_id: Option<String>,
    /// The `seq` of the last event recorded before the turn started.
    recorded_before: u64,
    cancel: CancellationToken,
}

impl CrashedTurn {
    /// Ends the turn after a panic: interrupts its calls and waits (a while) for them to end
    /// with their own results, closes what stays open (requests cancelled, calls interrupted,
    /// the step), and records `turn.finished` with the error — so every `tool.start` has its
    /// `tool.result` and the session takes the next prompt.
    async fn close(self, panic: &str) -> TurnSummary {
        tracing::error!(turn = %self.turn_id, panic, "the turn crashed; it ends as an error and the session goes on");
        let message = format!(
            "the turn stopped on an internal error (a panic: {panic}); its running calls were \
             interrupted. This is a bug in Qilin or in the model provider's code; the session \
             takes the next prompt"
        );
        self.cancel.cancel();
        let session = &self.handle.inner.session;
        let mut later = session.events().subscribe();
        let mut open = Dangling::default();
        let stored = tokio::time::timeout(CRASH_GRACE, async {
            self.handle.flush().await?;
            read_after(
                self.handle.inner.store.as_ref(),
                &self.handle.inner.id,
                self.recorded_before,
            )
            .await
        })
        .await;
        // Without the turn's events (the store cannot give them) only the turn is closed.
        let (mut turn_recorded, mut turn_finished) = (true, false);
        if let Ok(Ok(stored)) = stored {
            turn_recorded = false;
            for event in &stored {
                self.note(event, &mut turn_recorded, &mut turn_finished);
                open.apply(event);
            }
            let deadline = tokio::time::Instant::now() + CRASH_GRACE;
            while open.calls_or_requests_open() {
                match tokio::time::timeout_at(deadline, later.recv()).await {
                    Ok(Some(event)) => {
                        self.note(&event, &mut turn_recorded, &mut turn_finished);
                        open.apply(&event);
                    }
                    Ok(None) | Err(_) => break,
                }
            }
        }
        drop(later);
        if !turn_recorded {
            let started = EventBody::TurnStarted {
                turn_id: self.turn_id.clone(),
                prompt: self.prompt.clone(),
                client_turn_id: self.client_turn_id.clone(),
            };
            session.events().emit(started);
        }
        let closing = Closing {
            call_message: "The call was interrupted: the turn it belonged to stopped on an \
                           internal error. Its work may be incomplete.",
            turn_reason: qilin_protocol::FinishReason::Error,
            turn_message: &message,
        };
        let mut events = open.closing_events_because(&closing);
        if open.open_turn().is_none() && !turn_finished {
            events.push(EventBody::TurnFinished {
                turn_id: self.turn_id.clone(),
                reason: qilin_protocol::FinishReason::Error,
                message: Some(message.clone()),
            });
        }
        for event in events {
            session.events().emit(event);
        }
        error_summary(message)
    }

    /// Notes whether `event` starts or finishes this turn.
    fn note(&self, event: &Event, started: &mut bool, finished: &mut bool) {
        match &event.body {
            EventBody::TurnStarted { turn_id, .. } if *turn_id == self.turn_id => *started = true,
            EventBody::TurnFinished { turn_id, .. } if *turn_id == self.turn_id => {
                *finished = true;
            }
            _ => {}
        }
    }
}

/// The message of a panic's payload.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Writes a session's events to the store in order, in batches, and says how far it got.
///
/// A store that cannot take them for now (busy, full, unreachable) is tried again, the events
/// waiting in order in memory, until it takes them; meanwhile [`Committer::failure`] says why,
/// so no turn starts, and once they are stored the session goes on as before. Only a refusal
/// that no retry can mend (another writer's events in their place, the session deleted) ends
/// the storing for good.
struct Committer {
    committed: watch::Receiver<u64>,
    failure: Arc<Mutex<Option<String>>>,
}

impl Committer {
    fn start(
        store: Arc<dyn EventStore>,
        session: String,
        mut events: mpsc::UnboundedReceiver<Event>,
        head: u64,
    ) -> Self {
        let (committed, watched) = watch::channel(head);
        let failure: Arc<Mutex<Option<String>>> = Arc::default();
        let failed = Arc::clone(&failure);
        tokio::spawn(async move {
            let mut pending: Vec<Event> = Vec::new();
            let mut trouble: Option<Trouble> = None;
            let mut given_up = false;
            loop {
                if pending.is_empty() {
                    match events.recv().await {
                        Some(event) => pending.push(event),
                        None => return,
                    }
                }
                while pending.len() < MAX_BATCH {
                    match events.try_recv() {
                        Ok(event) => pending.push(event),
                        Err(_) => break,
                    }
                }
                if given_up {
                    pending.clear();
                    continue;
                }
                let last = pending.last().map_or(0, |event| event.seq);
                match store.append(&session, &pending).await {
                    Ok(_) => {
                        pending.clear();
                        if trouble.take().is_some_and(|trouble| trouble.reported) {
                            tracing::info!(session = %session, "the store takes the session's events again; none was lost");
                            *failed.lock() = None;
                        }
                        committed.send_replace(last);
                    }
                    Err(
                        err @ (StoreError::Busy(_) | StoreError::Full(_) | StoreError::Backend(_)),
                    ) => {
                        let trouble = trouble.get_or_insert_with(Trouble::new);
                        let patient = matches!(err, StoreError::Busy(_))
                            && trouble.since.elapsed() < BUSY_PATIENCE;
                        if !trouble.reported && !patient {
                            tracing::error!(session = %session, error = %err, "the session's events cannot be stored now; they wait in memory and are tried again");
                            *failed.lock() = Some(format!(
                                "{err}; its unstored events wait in memory and are stored once the store takes them again"
                            ));
                            trouble.reported = true;
                            committed.send_modify(|_| {});
                        } else if !trouble.warned && trouble.since.elapsed() >= RETRY_PAUSE_CAP {
                            tracing::warn!(session = %session, error = %err, "the store refuses the session's events for now; they wait for it");
                            trouble.warned = true;
                        }
                        trouble.retries.wait().await;
                    }
                    Err(err) => {
                        tracing::error!(session = %session, error = %err, "the session's events can no longer be stored");
                        *failed.lock() = Some(err.to_string());
                        given_up = true;
                        pending.clear();
                        committed.send_modify(|_| {});
                    }
                }
            }
        });
        Committer {
            committed: watched,
            failure,
        }
    }

    fn failure(&self) -> Option<String> {
        self.failure.lock().clone()
    }

    /// Waits until the events up to `seq` are stored; an error while the store cannot take
    /// them.
    async fn committed(&self, seq: u64) -> Result<(), RuntimeError> {
        let mut committed = self.committed.clone();
        loop {
            if *committed.borrow_and_update() >= seq {
                return Ok(());
            }
            if let Some(failure) = self.failure() {
                return Err(RuntimeError::Store(StoreError::Backend(failure)));
            }
            if committed.changed().await.is_err() {
                return Err(RuntimeError::Store(StoreError::Backend(
                    "the task storing the session's events ended".to_string(),
                )));
            }
        }
    }
}

/// A store refusing a session's events for now, since when, and what was said of it.
struct Trouble {
    since: tokio::time::Instant,
    /// The failed tries so far, and the pause before the next: [`RETRY_PAUSES`].
    retries: Retries,
    /// A warning was logged.
    warned: bool,
    /// The failure was reported to the session's host.
    reported: bool,
}

impl Trouble {
    fn new() -> Self {
        Trouble {
            since: tokio::time::Instant::now(),
            retries: RETRY_PAUSES.retries(),
            warned: false,
            reported: false,
        }
    }
}

/// How long a busy store (another process holding its write lock: a backup, a long
/// transaction) is waited for before the session reports it; a full or unreachable store is
/// reported at once. Either way the events wait in order in memory and are tried again.
const BUSY_PATIENCE: Duration = Duration::from_secs(120);

/// The longest pause between two tries of a store that refuses the events for now.
const RETRY_PAUSE_CAP: Duration = Duration::from_secs(1);

/// The pauses between tries of a store that refuses the events for now: from 20 ms, doubling
/// up to [`RETRY_PAUSE_CAP`].
const RETRY_PAUSES: Backoff = Backoff::new(Duration::from_millis(20), RETRY_PAUSE_CAP);

/// Creates the session folder `data_dir` (`.qilin/sessions/ID` unless the host gave one:
/// spilled outputs, job logs) and the folders above it that are missing, owner-only (0700); the
/// `private` folders (the session folder, and `.qilin/sessions` for the default one), when an
/// older Qilin left them open to others, are made owner-only too (when the user owns them).
/// Nothing else is touched: a host's folder may sit in a shared one such as `/tmp`.
fn private_folder(data_dir: &Path, private: &[PathBuf]) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(data_dir)?;
    for folder in private {
        let mode = std::fs::metadata(folder)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            match std::fs::set_permissions(folder, std::fs::Permissions::from_mode(mode & 0o700)) {
                // Another user's folder: only its owner may change its mode.
                Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => {}
                other => other?,
            }
        }
    }
    Ok(())
}

/// What stays read-only to the model in a session of `agent` in `workspace`: the protected
/// set with the agent file's opt-ins, and the files named by the agent's file and by every
/// agent file in the workspace now (a later session may run any of them).
/// The session's checks: the workspace's `.qilin/checks.yaml` with the agent's `checks:` over
/// it. `None` when there are none; what is wrong with the workspace's file (its checks are
/// then left out) or with their dependencies becomes a note for the user.
fn session_checks(
    agent: &AgentFile,
    workspace: &Path,
    notes: &mut Vec<String>,
) -> Option<qilin_checks::CheckService> {
    let (declared, diagnostics) = qilin_skill::workspace_checks(workspace);
    let errors: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    let declared = if errors.is_empty() {
        declared
    } else {
        notes.push(format!(
            "the workspace's checks are not available, as {} has errors (`qilin check` lists them):\n{}",
            qilin_skill::CHECKS_WORKSPACE_FILE,
            errors.join("\n")
        ));
        Vec::new()
    };
    let (checks, problems) = qilin_skill::merge_checks(declared, &agent.checks);
    notes.extend(problems);
    (!checks.is_empty()).then(|| qilin_checks::CheckService::new(checks))
}

fn session_protection(agent: &AgentFile, workspace: &Path) -> Protection {
    let in_workspace = Protection::new().scan(workspace).agent_files;
    let named = agent
        .named_files
        .iter()
        .cloned()
        .chain(in_workspace.iter().flat_map(|file| agent_named_files(file)));
    Protection::new()
        .allow_git(agent.files.write_git)
        .allow_qilin_files(agent.files.write_qilin_files)
        .with_named_files(named)
}

/// The SHA-256 of the agent file at `path`, in hex, read as Qilin reads its own files.
fn agent_file_hash(path: &Path) -> Result<String, qilin_sandbox::OwnFileError> {
    read_own_file(path, CONFIG_FILE_LIMIT).map(|bytes| hex(&Sha256::digest(&bytes)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A session id that sorts by time: seconds since the epoch and a random suffix.
fn new_session_id() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("{seconds}-{:06x}", fastrand::u32(..0x100_0000))
}
