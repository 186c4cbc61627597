//! `qilin run`: a session on the terminal — one turn of a prompt, or a conversation — rendered
//! as it happens (or printed as the event log in JSON lines), with Ctrl-C interrupting the turn.
//! The session itself is `qilin-runtime`'s; this is a host that renders its events and answers
//! its requests on the terminal.

use crate::asking::ask_on_terminal;
use crate::commands::{open_store, sandbox_helper, worker_sandbox};
use crate::config::{Settings, no_model_help, price_key};
use crate::input::{GoalCommand, LineEditor, SLASH_HELP, Slash, Typed, slash};
use crate::keys::{Keys, restore_terminal};
use crate::render::{SPINNER, Style, TerminalRenderer, goal_line, thousands, visible};
use anyhow::{Context, Result, bail};
use clap::Args;
use futures_util::StreamExt;
use qilin_mcp::{McpError, UntrustedServers};
use qilin_protocol::goals::GoalBudget;
use qilin_protocol::{Event, EventBody, FinishReason};
use qilin_runtime::{DEFAULT_AGENT, ModelChoice, NewGoal, Runtime, RuntimeError, SessionHandle};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, watch};

/// `qilin run`'s arguments (and `qilin`'s own, with no command).
#[derive(Args)]
pub struct RunArgs {
    /// The `.agent` file; the built-in coder agent when omitted.
    #[arg(long)]
    pub agent: Option<PathBuf>,
    /// The model: `openai:NAME`, `anthropic:NAME` or `scripted:FILE`; else the agent file's
    /// `model`, `QILIN_MODEL` or the config file's `model` (or the resumed session's).
    #[arg(long)]
    pub model: Option<String>,
    /// The folder the tools work in; the current folder when omitted.
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Another folder of skills, searched after the workspace's and `~/.qilin/skills/` and
    /// before the built-in skills.
    #[arg(long = "skills", value_name = "DIR")]
    pub skills: Vec<PathBuf>,
    /// Continue the stored session ID (`qilin sessions list` shows them).
    #[arg(long, value_name = "ID", conflicts_with_all = ["agent", "continue_latest"])]
    pub resume: Option<String>,
    /// Continue the latest session of the workspace.
    #[arg(long = "continue", conflicts_with = "agent")]
    pub continue_latest: bool,
    /// Print the event log as JSON lines instead of rendering it.
    #[arg(long)]
    pub json: bool,
    /// Run bash commands without the sandbox (as the agent file's `sandbox: {mode: off}`).
    #[arg(long)]
    pub no_sandbox: bool,
    /// Trust the MCP servers the workspace's `.qilin/mcp.yaml` declares, without asking
    /// (remembered until the file changes); without it a terminal asks, and no terminal
    /// refuses.
    #[arg(long)]
    pub trust: bool,
    /// What to ask the agent. Without it, a terminal gets a conversation (`/help` lists its
    /// commands, Ctrl-D leaves) and piped input is read whole as the prompt.
    pub prompt: Option<String>,
}

/// Runs `qilin run` (and `qilin` with no command).
pub fn run(args: RunArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(run_session(args, None))
}

/// Where a session comes from.
enum Origin {
    New,
    Resume(String),
}

/// What opens the sessions of one `qilin run`: the runtime, the workspace and the choices the
/// arguments and the settings made.
struct Opener<'a> {
    runtime: Runtime,
    workspace: PathBuf,
    args: &'a RunArgs,
    settings: Settings,
    model: Option<ModelChoice>,
    interactive: bool,
}

impl Opener<'_> {
    /// Builds the session (new or resumed) and prints its diagnostics and notes. When its
    /// agent uses MCP servers of a workspace's `.qilin/mcp.yaml` not trusted yet, the user
    /// trusts them first (`--trust`, or yes on a terminal), or nothing starts.
    async fn open(&self, origin: Origin) -> Result<SessionHandle> {
        loop {
            match self.build(&origin).await {
                Err(BuildError::Untrusted(untrusted)) => {
                    crate::trust::settle(&untrusted, self.args.trust)?;
                }
                Err(BuildError::Other(err)) => return Err(err),
                Ok(handle) => {
                    for diagnostic in handle.diagnostics() {
                        eprintln!("{diagnostic}");
                    }
                    for note in handle.notes() {
                        eprintln!("note: {note}");
                    }
                    return Ok(handle);
                }
            }
        }
    }

    /// Builds the session once.
    async fn build(&self, origin: &Origin) -> Result<SessionHandle, BuildError> {
        let mut builder = match origin {
            Origin::Resume(id) => self.runtime.resume(id).await?,
            Origin::New => match &self.args.agent {
                Some(agent) => self.runtime.session(&self.workspace).agent_file(agent),
                None => self
                    .runtime
                    .session(&self.workspace)
                    .builtin_agent(DEFAULT_AGENT),
            },
        };
        builder = builder
            .attended(self.interactive)
            .no_sandbox(self.args.no_sandbox);
        for dir in &self.args.skills {
            builder = builder.skill_dir(dir);
        }
        let resuming = builder.resumes().is_some();
        if let Some(model) = &self.model {
            builder = builder.model(model.clone());
        } else if let Some(spec) = &self.args.model {
            builder = builder.model(ModelChoice::Spec(spec.clone()));
        } else if let Some(default) = self.settings.default_model() {
            builder = builder.default_model(ModelChoice::Spec(default.spec));
        } else if !resuming && self.args.agent.is_none() {
            return Err(BuildError::Other(anyhow::anyhow!(
                "{}",
                no_model_help(&self.settings)
            )));
        }
        Ok(builder.build().await?)
    }
}

/// Why a session was not built: MCP servers not trusted yet, or anything else.
enum BuildError {
    Untrusted(UntrustedServers),
    Other(anyhow::Error),
}

impl From<RuntimeError> for BuildError {
    fn from(err: RuntimeError) -> Self {
        match err {
            RuntimeError::Mcp(McpError::Untrusted(untrusted)) => BuildError::Untrusted(untrusted),
            other => BuildError::Other(super::runtime_error(other)),
        }
    }
}

/// Opens a new session as `args` say (agent, model, workspace, sandbox, trust) and prints its
/// diagnostics and notes: for a command that drives the session itself (`qilin loop`).
/// `attended` when a person watches (its approvals and questions are asked on the terminal).
pub(crate) async fn open_new_session(args: &RunArgs, attended: bool) -> Result<SessionHandle> {
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let opener = Opener {
        runtime: crate::trust::trusting(
            Runtime::new(open_store(&workspace)?, worker_sandbox()?)
                .with_sandbox_helper(sandbox_helper()?),
        ),
        workspace,
        args,
        settings: Settings::load()?,
        model: None,
        interactive: attended,
    };
    opener.open(Origin::New).await
}

/// Opens (or resumes) the session, runs the prompt — or a conversation — and renders it; the
/// exit status says how the last turn ended. `model` replaces the model the arguments, the
/// agent file or the stored session name.
pub async fn run_session(args: RunArgs, model: Option<ModelChoice>) -> Result<ExitCode> {
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    if args.prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
        bail!("the prompt is empty; say what the agent should do");
    }
    let interactive = !args.json && std::io::stdin().is_terminal();
    let opener = Opener {
        runtime: crate::trust::trusting(
            Runtime::new(open_store(&workspace)?, worker_sandbox()?)
                .with_sandbox_helper(sandbox_helper()?),
        ),
        workspace: workspace.clone(),
        args: &args,
        settings: Settings::load()?,
        model,
        interactive,
    };
    let origin = match (&args.resume, args.continue_latest) {
        (Some(id), _) => Origin::Resume(id.clone()),
        (None, true) => Origin::Resume(latest_session(&opener.runtime, &workspace).await?),
        (None, false) => Origin::New,
    };
    let resuming = matches!(origin, Origin::Resume(_));
    let handle = opener.open(origin).await?;
    if resuming && !args.json {
        eprintln!("Continuing session {}.", handle.id());
    }

    let renderer = Arc::new(Mutex::new(
        TerminalRenderer::new(Style::detect(), Box::new(std::io::stdout()))
            .with_notices(Box::new(std::io::stderr())),
    ));
    let current = Arc::new(std::sync::Mutex::new(handle.clone()));
    listen_for_interrupts(Arc::clone(&current));
    // Esc interrupts a turn when the terminal is the input (not with `--json`).
    let keys = interactive.then(Keys::default);
    start_showing(&renderer, &handle, &opener.settings).await;
    let display = Display::open(&handle, resuming, args.json, &renderer, keys.as_ref());
    // A turn the session's last process left open while code ran went on as the session
    // resumed (its runs replayed from their journals): it ends, shown, before a new one starts.
    if resuming && handle.running_turn().is_some() {
        if !args.json {
            eprintln!("Finishing the turn left open when the session last ran.");
        }
        handle.wait_idle().await;
    }
    let status = match &args.prompt {
        Some(prompt) => exit_status(run_turn(&handle, &display, prompt, keys.as_ref()).await?.0),
        None if interactive => {
            let keys = keys.unwrap_or_default();
            conversation(&opener, handle.clone(), display, &renderer, &current, &keys).await?;
            let handle = current.lock().map(|h| h.clone()).unwrap_or(handle);
            handle.close().await?;
            return Ok(ExitCode::SUCCESS);
        }
        None => {
            let prompt = tokio::task::spawn_blocking(|| std::io::read_to_string(std::io::stdin()))
                .await
                .context("reading the prompt failed")?
                .context("cannot read the prompt from stdin")?;
            anyhow::ensure!(
                !prompt.trim().is_empty(),
                "the prompt read from stdin is empty"
            );
            exit_status(run_turn(&handle, &display, prompt.trim(), None).await?.0)
        }
    };
    handle.close().await?;
    display.caught_up(&handle).await;
    Ok(status)
}

/// A conversation on the terminal: a banner, then one turn per message typed, slash commands
/// answered here, until `/exit`, Ctrl-D or Ctrl-C twice.
async fn conversation(
    opener: &Opener<'_>,
    mut handle: SessionHandle,
    mut display: Display,
    renderer: &Arc<Mutex<TerminalRenderer>>,
    current: &Arc<std::sync::Mutex<SessionHandle>>,
    keys: &Keys,
) -> Result<()> {
    let style = Style::detect();
    eprintln!("{}", banner(&handle, &style));
    let mut editor = LineEditor::new();
    let mut interrupted = false;
    loop {
        let typed = editor.read().await?;
        let line = match typed {
            Typed::End => return Ok(()),
            Typed::Interrupt if interrupted => return Ok(()),
            Typed::Interrupt => {
                interrupted = true;
                eprintln!("{}", style.dim("(Ctrl-C again or Ctrl-D to quit)"));
                continue;
            }
            Typed::Line(line) => line,
        };
        interrupted = false;
        if line.trim().is_empty() {
            continue;
        }
        let Some(command) = slash(&line) else {
            let (_, typed_ahead) = run_turn(&handle, &display, line.trim(), Some(keys)).await?;
            editor.set_draft(&typed_ahead);
            continue;
        };
        let next = match command {
            Slash::Exit => return Ok(()),
            Slash::Help => {
                eprintln!("{SLASH_HELP}");
                None
            }
            Slash::Agent => {
                let info = handle.info();
                let source = match (&info.agent.file, info.agent.builtin) {
                    (_, true) => "built in".to_string(),
                    (Some(file), false) => file.clone(),
                    (None, false) => "given by the host".to_string(),
                };
                eprintln!("agent: {} ({source})", info.agent.name);
                None
            }
            Slash::Model(None) => {
                eprintln!("model: {}", handle.info().model);
                None
            }
            Slash::Cost => {
                let renderer = renderer.lock().await;
                eprintln!("{}", renderer.session_summary());
                if !renderer.priced() {
                    eprintln!(
                        "{}",
                        style.dim(&format!(
                            "no price for {}: add a [prices.\"{}\"] table (input, output, \
                             cached_input: US dollars per million tokens) to {}",
                            handle.info().model,
                            price_key(&handle.info().model),
                            opener.settings.shown_path()
                        ))
                    );
                }
                None
            }
            Slash::Compact => {
                compact(&handle, &style).await;
                None
            }
            Slash::Goal(command) => {
                goal(&handle, &display, keys, &style, command).await?;
                None
            }
            Slash::Sessions => {
                list_sessions(&opener.runtime, &opener.workspace).await?;
                None
            }
            Slash::Resume(None) => {
                eprintln!("/resume needs a session id; /sessions lists them");
                None
            }
            Slash::Unknown(name) => {
                eprintln!("unknown command /{name}; /help lists the commands");
                None
            }
            Slash::Clear => Some((Origin::New, None)),
            Slash::Model(Some(spec)) => Some((Origin::New, Some(spec))),
            Slash::Resume(Some(id)) => Some((Origin::Resume(id), None)),
        };
        let Some((origin, model)) = next else {
            continue;
        };
        let resuming = matches!(origin, Origin::Resume(_));
        let opened = match model {
            Some(spec) => {
                let args = RunArgs {
                    model: Some(spec),
                    agent: opener.args.agent.clone(),
                    workspace: opener.args.workspace.clone(),
                    skills: opener.args.skills.clone(),
                    resume: None,
                    continue_latest: false,
                    json: false,
                    no_sandbox: opener.args.no_sandbox,
                    trust: opener.args.trust,
                    prompt: None,
                };
                let other = Opener {
                    runtime: opener.runtime.clone(),
                    workspace: opener.workspace.clone(),
                    args: &args,
                    settings: Settings::load()?,
                    model: None,
                    interactive: true,
                };
                other.open(origin).await
            }
            None => opener.open(origin).await,
        };
        match opened {
            Ok(next) => {
                handle.close().await?;
                display.caught_up(&handle).await;
                handle = next;
                if let Ok(mut current) = current.lock() {
                    *current = handle.clone();
                }
                start_showing(renderer, &handle, &opener.settings).await;
                display = Display::open(&handle, resuming, false, renderer, Some(keys));
                let verb = if resuming { "Continuing" } else { "New" };
                eprintln!(
                    "{verb} session {} · model {}",
                    handle.id(),
                    handle.info().model
                );
            }
            Err(err) => eprintln!("error: {err:#}"),
        }
    }
}

/// Tells the renderer about the session it shows from now on: its model's price (the config
/// file's, if any).
async fn start_showing(
    renderer: &Arc<Mutex<TerminalRenderer>>,
    handle: &SessionHandle,
    settings: &Settings,
) {
    renderer
        .lock()
        .await
        .start_session(settings.price(&handle.info().model));
}

/// `/compact`: has the model summarise the conversation, with a live line while it works,
/// then says how much smaller a request became (or why nothing changed).
async fn compact(handle: &SessionHandle, style: &Style) {
    let live = style.live && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let ticker = live.then(|| {
        let style = *style;
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(Duration::from_millis(100));
            for frame in SPINNER.iter().cycle() {
                ticks.tick().await;
                eprint!(
                    "\r\x1b[2K{} {}",
                    style.cyan(frame),
                    style.dim(&format!(
                        "compacting the conversation… {}s · Ctrl-C stops",
                        started.elapsed().as_secs()
                    ))
                );
            }
        })
    });
    if !live {
        eprintln!("compacting the conversation…");
    }
    let result = handle.compact().await;
    if let Some(ticker) = ticker {
        ticker.abort();
        let _ = ticker.await;
        eprint!("\r\x1b[2K");
    }
    match result {
        Ok(compacted) => eprintln!(
            "{} conversation compacted: ~{} → ~{} tokens a request {}",
            style.green("✓"),
            thousands(compacted.estimated_tokens_before),
            thousands(compacted.estimated_tokens_after),
            style.dim(&format!(
                "(the summary took {} in · {} out, {:.1}s)",
                thousands(compacted.usage.input_tokens),
                thousands(compacted.usage.output_tokens),
                started.elapsed().as_secs_f64()
            ))
        ),
        Err(err) => eprintln!("{} {err}", style.red("✗")),
    }
}

/// The first lines of a conversation: the agent, the model and the workspace.
fn banner(handle: &SessionHandle, style: &Style) -> String {
    let info = handle.info();
    format!(
        "{} · agent {} · model {}\n{}",
        style.bold("Qilin"),
        info.agent.name,
        info.model,
        style.dim(&format!(
            "{} · /help for commands · Ctrl-D to quit",
            handle.workspace().display()
        ))
    )
}

/// The latest `limit` sessions of `workspace`, newest first.
async fn recent_sessions(
    runtime: &Runtime,
    workspace: &std::path::Path,
    limit: usize,
) -> Result<Vec<qilin_store::SessionInfo>> {
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
    let page = runtime
        .store()
        .list_sessions(&qilin_store::SessionQuery {
            workspace: Some(workspace.display().to_string()),
            limit,
            ..Default::default()
        })
        .await?;
    Ok(page.sessions)
}

/// `/sessions`: the workspace's latest sessions, newest first.
async fn list_sessions(runtime: &Runtime, workspace: &std::path::Path) -> Result<()> {
    for session in recent_sessions(runtime, workspace, 10).await? {
        eprintln!(
            "{}  {}  {} turns  {}",
            session.id,
            session.last_activity,
            session.turns,
            visible(session.title.as_deref().unwrap_or(""))
                .lines()
                .next()
                .unwrap_or("")
        );
    }
    Ok(())
}

/// Runs one turn and waits until everything it recorded is shown; with `keys`, Esc interrupts
/// it, and what was typed meanwhile is returned (for the next prompt).
async fn run_turn(
    handle: &SessionHandle,
    display: &Display,
    prompt: &str,
    keys: Option<&Keys>,
) -> Result<(FinishReason, String)> {
    // The watch starts first: a request the turn asks at once finds it there to pause.
    let interrupting = handle.clone();
    let watch = keys.and_then(|keys| {
        keys.watch_turn(move || {
            interrupting.interrupt();
        })
    });
    let turn = handle.submit(prompt, None)?;
    let mut summary = turn.finished().await;
    // While a goal is active the session goes on by itself: its turns are shown until it stops.
    if let Some(last) = handle.wait_idle().await {
        summary = last;
    }
    let typed_ahead = watch.map(|watch| watch.finish()).unwrap_or_default();
    handle.flush().await?;
    display.caught_up(handle).await;
    Ok((summary.reason, typed_ahead))
}

/// `/goal …`: sets, shows, pauses, resumes or clears the session's goal; a goal set or resumed
/// is worked on here (its turns shown, Esc pausing it) until it stops.
async fn goal(
    handle: &SessionHandle,
    display: &Display,
    keys: &Keys,
    style: &Style,
    command: GoalCommand,
) -> Result<()> {
    let changed = match command {
        GoalCommand::Show => {
            match handle.goal() {
                Some(goal) => eprintln!("{}", goal_line(&goal)),
                None => eprintln!("no goal; /goal OBJECTIVE sets one"),
            }
            return Ok(());
        }
        GoalCommand::Budget(None) => {
            eprintln!("/goal budget needs a positive number of tokens: /goal budget 200000");
            return Ok(());
        }
        GoalCommand::Set(objective) => handle.set_goal(NewGoal {
            objective,
            budget: GoalBudget::default(),
            checks: Vec::new(),
        }),
        GoalCommand::Pause => handle.pause_goal(),
        GoalCommand::Resume => handle.resume_goal(GoalBudget::default()),
        GoalCommand::Clear => handle.clear_goal(),
        GoalCommand::Budget(Some(tokens)) => handle.resume_goal(GoalBudget {
            tokens: Some(tokens),
            ..GoalBudget::default()
        }),
    };
    if let Err(err) = changed {
        eprintln!("{}", style.dim(&format!("goal: {err}")));
        return Ok(());
    }
    // The goal's turns, shown until it stops; Esc interrupts the running one, pausing it.
    let interrupting = handle.clone();
    let watch = keys.watch_turn(move || {
        interrupting.interrupt();
    });
    handle.wait_idle().await;
    if let Some(watch) = watch {
        watch.finish();
    }
    handle.flush().await?;
    display.caught_up(handle).await;
    Ok(())
}

/// The id of the latest session of `workspace`.
async fn latest_session(runtime: &Runtime, workspace: &std::path::Path) -> Result<String> {
    match recent_sessions(runtime, workspace, 1)
        .await?
        .into_iter()
        .next()
    {
        Some(session) => Ok(session.id),
        None => bail!(
            "no session to continue in {}; start one with `qilin`",
            workspace.display()
        ),
    }
}

fn exit_status(reason: FinishReason) -> ExitCode {
    match reason {
        FinishReason::Completed => ExitCode::SUCCESS,
        FinishReason::Interrupted => ExitCode::from(130),
        FinishReason::MaxSteps
        | FinishReason::MaxTokens
        | FinishReason::Refused
        | FinishReason::Error => ExitCode::FAILURE,
    }
}

/// The task that renders (or prints as JSON lines) every event the session commits, and puts
/// its requests to the user on the terminal (when `keys` is given: the terminal is the input).
struct Display {
    shown: watch::Receiver<u64>,
    renderer: Arc<Mutex<TerminalRenderer>>,
}

impl Display {
    /// Starts showing `handle`'s events: a resumed session from now on, a new one whole.
    fn open(
        handle: &SessionHandle,
        resumed: bool,
        json: bool,
        renderer: &Arc<Mutex<TerminalRenderer>>,
        keys: Option<&Keys>,
    ) -> Self {
        let after = if resumed { handle.committed_head() } else { 0 };
        Display::start(
            handle.clone(),
            after,
            json,
            Arc::clone(renderer),
            keys.cloned(),
        )
    }

    fn start(
        handle: SessionHandle,
        after: u64,
        json: bool,
        renderer: Arc<Mutex<TerminalRenderer>>,
        keys: Option<Keys>,
    ) -> Self {
        let (shown_tx, shown) = watch::channel(after);
        let rendering = Arc::clone(&renderer);
        tokio::spawn(async move {
            let mut events = handle.subscribe_from(after);
            let mut ticker = tokio::time::interval(Duration::from_millis(80));
            let mut stdout = std::io::stdout();
            loop {
                tokio::select! {
                    biased;
                    next = events.next() => {
                        let event = match next {
                            Some(Ok(event)) => event,
                            Some(Err(err)) => {
                                eprintln!("error: the session's events cannot be read: {err}");
                                return;
                            }
                            None => return,
                        };
                        if json {
                            if let Ok(line) = serde_json::to_string(&event) {
                                let _ = writeln!(stdout, "{line}");
                            }
                        } else {
                            rendering.lock().await.handle(&event);
                            if let EventBody::AgentStarted(started) = &event.body
                                && let Some(child) = handle.live_child(&started.child_session_id)
                            {
                                follow_child(&child, Arc::clone(&rendering));
                            }
                        }
                        if let Some(keys) = &keys {
                            answer(&handle, &rendering, keys, &event);
                        }
                        shown_tx.send_replace(event.seq);
                    }
                    _ = ticker.tick() => {
                        if !json {
                            rendering.lock().await.tick();
                        }
                    }
                }
            }
        });
        Display { shown, renderer }
    }

    /// Returns once every event the session has committed is shown and the live region is
    /// cleared.
    async fn caught_up(&self, handle: &SessionHandle) {
        let head = handle.committed_head();
        let mut shown = self.shown.clone();
        let _ = shown.wait_for(|seq| *seq >= head).await;
        self.renderer.lock().await.finish();
    }
}

/// Feeds the events of `child` (a child session just started) to its live line — the call it
/// runs now, or that it is idle between a teammate's turns — for as long as the line lasts.
fn follow_child(child: &SessionHandle, renderer: Arc<Mutex<TerminalRenderer>>) {
    let id = child.id().to_string();
    // The stream reads the store and the live log; it does not keep the child alive.
    let mut events = child.subscribe_from(0);
    tokio::spawn(async move {
        let Some(gone) = renderer.lock().await.child_line_gone(&id) else {
            return;
        };
        loop {
            let event = tokio::select! {
                _ = gone.cancelled() => return,
                event = events.next() => event,
            };
            let Some(Ok(event)) = event else { return };
            renderer.lock().await.handle_child(&id, &event);
        }
    });
}

/// Puts a request the session opened to the user, in a task of its own (the terminal is
/// taken from the live display until it is answered), and hands the answer to the session.
fn answer(
    handle: &SessionHandle,
    renderer: &Arc<Mutex<TerminalRenderer>>,
    keys: &Keys,
    event: &Event,
) {
    let EventBody::RequestOpened(opened) = &event.body else {
        return;
    };
    let handle = handle.clone();
    let renderer = Arc::clone(renderer);
    let keys = keys.clone();
    let opened = opened.clone();
    tokio::spawn(async move {
        let asked = ask_on_terminal(&renderer, &keys, &opened).await;
        if let Err(err) = handle.resolve(&opened.request_id, asked.reply, "terminal") {
            eprintln!("(not applied: {err})");
        }
        if asked.interrupt {
            handle.interrupt();
        }
    });
}

/// Ctrl-C interrupts the running turn; pressed again, or with no turn running, it ends the
/// process once the session's events are stored. (At the conversation's prompt the line editor
/// reads Ctrl-C itself.) SIGTERM and SIGHUP (the terminal closed) interrupt the turn and end
/// the process the same way. Every way out removes the sandboxes' temp folders.
fn listen_for_interrupts(current: Arc<std::sync::Mutex<SessionHandle>>) {
    let session = Arc::clone(&current);
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            let Ok(handle) = current.lock().map(|h| h.clone()) else {
                restore_terminal();
                crate::ending::exit(130);
            };
            if !handle.interrupt() {
                restore_terminal();
                eprintln!("\nquitting: no turn is running");
                let _ = tokio::time::timeout(Duration::from_secs(3), handle.flush()).await;
                crate::ending::exit(130);
            }
        }
    });
    tokio::spawn(async move {
        let status = crate::ending::terminated().await;
        restore_terminal();
        let handle = session.lock().map(|h| h.clone()).ok();
        if let Some(handle) = handle {
            handle.interrupt();
            let _ = tokio::time::timeout(Duration::from_secs(3), handle.flush()).await;
        }
        crate::ending::exit(status);
    });
}
