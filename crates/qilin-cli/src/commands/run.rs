//! `qilin run`: one turn of an agent, rendered on the terminal as it happens (or printed as
//! the event log in JSON lines), with Ctrl-C interrupting the turn.

use crate::asking::{TerminalAnswerer, TerminalApprover};
use crate::render::{Style, TerminalRenderer};
use crate::runtime::{code_limits, discover_skills, full_registry, pooled_code_mode, workspace_of};
use anyhow::{Context, Result, bail};
use clap::Args;
use qilin_agent::{Agent, AgentPrompt, LoopSettings};
use qilin_model::{Message, SelectedModel, select_model};
use qilin_protocol::{Event, FinishReason};
use qilin_skill::{Agent as AgentFile, SkillSet, assemble_prompt};
use qilin_tool::{AskingPolicy, ExecConfig, Executor, Session, ToolRegistry};
use qilin_tools::QuestionAnswerer;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The steps a turn may take when the agent file sets no limit.
const DEFAULT_MAX_STEPS: u32 = 50;

/// `qilin run`'s arguments.
#[derive(Args)]
pub struct RunArgs {
    /// The `.agent` file.
    #[arg(long)]
    pub agent: PathBuf,
    /// The model: `openai:NAME`, `anthropic:NAME` or `scripted:FILE`; the agent file's
    /// `model` when omitted.
    #[arg(long)]
    pub model: Option<String>,
    /// The folder the tools work in; the agent file's workspace (the nearest folder above it
    /// holding `.qilin/`) when omitted.
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Another folder of skills, searched after the workspace's and `~/.qilin/skills/` and
    /// before the built-in skills.
    #[arg(long = "skills", value_name = "DIR")]
    pub skills: Vec<PathBuf>,
    /// Print the event log as JSON lines instead of rendering it.
    #[arg(long)]
    pub json: bool,
    /// What to ask the agent. Without it, a terminal gets a conversation (one turn per line,
    /// `/exit` or Ctrl-D to leave) and piped input is read whole as the prompt.
    pub prompt: Option<String>,
}

/// Runs `qilin run`.
pub fn run(args: RunArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(run_turn(args, None))
}

/// Loads the agent, runs one turn of it and renders it; the exit status says how it ended.
/// `model` replaces the model the arguments or the agent file name.
pub async fn run_turn(args: RunArgs, model: Option<SelectedModel>) -> Result<ExitCode> {
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => workspace_of(&args.agent),
    };
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
    let found = discover_skills(&workspace, &args.skills)?;
    for diagnostic in &found.diagnostics {
        eprintln!("{diagnostic}");
    }
    let skills = Arc::new(found.skills);
    let (agent_file, registry) = load_agent(&args.agent, &skills)?;
    let prompt = assemble_prompt(&agent_file, &skills, &registry)?;

    let model = match (model, &args.model, &agent_file.model) {
        (Some(model), _, _) => model,
        (None, Some(spec), _) | (None, None, Some(spec)) => select_model(spec)?,
        (None, None, None) => bail!(
            "{} names no model: pass --model openai:NAME, anthropic:NAME or scripted:FILE",
            args.agent.display()
        ),
    };

    let session_id = new_session_id();
    let data_dir = workspace.join(".qilin").join("sessions").join(&session_id);
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create the session folder {}", data_dir.display()))?;
    let style = Style::detect();
    let renderer = Arc::new(Mutex::new(TerminalRenderer::new(
        style,
        Box::new(std::io::stdout()),
    )));
    let mut services = qilin_tools::session_services();
    services.insert(Arc::new(qilin_tools::FileAccess {
        write_qilin_files: agent_file.files.write_qilin_files,
    }));
    let interactive = !args.json && std::io::stdin().is_terminal();
    let reviewer = match interactive {
        true => {
            services.insert(Arc::new(QuestionAnswerer(Arc::new(TerminalAnswerer::new(
                Arc::clone(&renderer),
            )))));
            let approver = Arc::new(TerminalApprover::new(Arc::clone(&renderer)));
            agent_file.policy.reviewer().with_approver(approver)
        }
        false => AskingPolicy::unattended(agent_file.policy.reviewer()),
    };
    let session =
        Arc::new(Session::new(&session_id, &workspace, &data_dir).with_services(services));
    let events = session.events().subscribe();
    let executor = Executor::with_policy(
        Arc::new(registry),
        session,
        Arc::new(reviewer),
        ExecConfig::default(),
    );
    let agent = Agent::new(
        model.provider,
        AgentPrompt {
            system: prompt.system,
            tools: prompt.tools,
        },
        executor,
        LoopSettings {
            model: model.model,
            max_steps: agent_file.limits.max_steps.unwrap_or(DEFAULT_MAX_STEPS),
            max_tokens: None,
        },
    );

    let log = std::fs::File::create(data_dir.join("events.jsonl"))
        .with_context(|| format!("cannot write the event log in {}", data_dir.display()))?;
    let display = Display::start(events, log, args.json, renderer);
    let interrupts = Interrupts::listen();
    let mut history = Vec::new();
    let status = match args.prompt {
        Some(prompt) => {
            let reason = interrupts.run(&agent, &mut history, &prompt).await;
            exit_status(reason)
        }
        None if std::io::stdin().is_terminal() => {
            while let Some(prompt) = read_prompt().await? {
                interrupts.run(&agent, &mut history, &prompt).await;
                display.flush().await;
            }
            ExitCode::SUCCESS
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
            exit_status(interrupts.run(&agent, &mut history, prompt.trim()).await)
        }
    };
    display.stop().await?;
    Ok(status)
}

fn exit_status(reason: FinishReason) -> ExitCode {
    match reason {
        FinishReason::Completed => ExitCode::SUCCESS,
        FinishReason::Interrupted => ExitCode::from(130),
        FinishReason::MaxSteps | FinishReason::Error => ExitCode::FAILURE,
    }
}

/// The next line typed at the conversation prompt; `None` at `/exit`, `/quit` or end of input.
async fn read_prompt() -> Result<Option<String>> {
    loop {
        let line = tokio::task::spawn_blocking(|| {
            eprint!("\n› ");
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .map(|read| (read > 0).then_some(line))
        })
        .await
        .context("reading the prompt failed")?
        .context("cannot read from the terminal")?;
        let Some(line) = line else {
            return Ok(None);
        };
        match line.trim() {
            "" => continue,
            "/exit" | "/quit" => return Ok(None),
            prompt => return Ok(Some(prompt.to_string())),
        }
    }
}

/// Loads the agent file against the tools, then builds the registry it runs with (its
/// `run_code` carries the agent's code-mode limits).
fn load_agent(path: &Path, skills: &Arc<SkillSet>) -> Result<(AgentFile, ToolRegistry)> {
    let checking = full_registry(Arc::clone(skills), pooled_code_mode(Default::default())?)?;
    let loaded = AgentFile::load(path, skills, &checking)?;
    for warning in &loaded.warnings {
        eprintln!("{warning}");
    }
    let agent = loaded.value;
    let code_mode = pooled_code_mode(code_limits(&agent.limits.code))?;
    let registry = full_registry(Arc::clone(skills), code_mode)?;
    Ok((agent, registry))
}

/// The task that renders (or prints as JSON lines) every event and appends each to the
/// session's `events.jsonl`.
struct Display {
    flushes: mpsc::UnboundedSender<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<()>>,
}

impl Display {
    fn start(
        events: mpsc::UnboundedReceiver<Event>,
        log: std::fs::File,
        json: bool,
        renderer: Arc<Mutex<TerminalRenderer>>,
    ) -> Self {
        let (flushes, requests) = mpsc::unbounded_channel();
        let task = tokio::spawn(show_events(events, requests, log, json, renderer));
        Display { flushes, task }
    }

    /// Returns once every event emitted so far is shown and the live region is cleared.
    async fn flush(&self) {
        let (done, shown) = oneshot::channel();
        if self.flushes.send(done).is_ok() {
            let _ = shown.await;
        }
    }

    /// Shows what is left and ends the task.
    async fn stop(self) -> Result<()> {
        drop(self.flushes);
        self.task.await.context("the display task failed")?
    }
}

async fn show_events(
    mut events: mpsc::UnboundedReceiver<Event>,
    mut flushes: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
    log: std::fs::File,
    json: bool,
    renderer: Arc<Mutex<TerminalRenderer>>,
) -> Result<()> {
    let mut log = std::io::BufWriter::new(log);
    let mut ticker = tokio::time::interval(Duration::from_millis(80));
    let mut stdout = std::io::stdout();
    let mut show =
        async |event: Event, log: &mut std::io::BufWriter<std::fs::File>| -> Result<()> {
            let line = serde_json::to_string(&event)?;
            writeln!(log, "{line}")?;
            if json {
                writeln!(stdout, "{line}")?;
            } else {
                renderer.lock().await.handle(&event);
            }
            Ok(())
        };
    loop {
        tokio::select! {
            biased;
            Some(event) = events.recv() => show(event, &mut log).await?,
            request = flushes.recv() => {
                while let Ok(event) = events.try_recv() {
                    show(event, &mut log).await?;
                }
                renderer.lock().await.finish();
                log.flush()?;
                match request {
                    Some(done) => {
                        let _ = done.send(());
                    }
                    None => return Ok(()),
                }
            }
            _ = ticker.tick() => {
                if !json {
                    renderer.lock().await.tick();
                }
            }
        }
    }
}

/// Ctrl-C interrupts the running turn; pressed again, or with no turn running, it ends the
/// process.
struct Interrupts {
    current: Arc<std::sync::Mutex<Option<CancellationToken>>>,
}

impl Interrupts {
    fn listen() -> Self {
        let current: Arc<std::sync::Mutex<Option<CancellationToken>>> = Arc::default();
        let watched = Arc::clone(&current);
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                let turn = watched
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .clone();
                match turn {
                    Some(token) if !token.is_cancelled() => token.cancel(),
                    _ => std::process::exit(130),
                }
            }
        });
        Interrupts { current }
    }

    /// Runs one turn that Ctrl-C can interrupt.
    async fn run(&self, agent: &Agent, history: &mut Vec<Message>, prompt: &str) -> FinishReason {
        let token = CancellationToken::new();
        self.set(Some(token.clone()));
        let summary = agent.run_turn(history, prompt, token).await;
        self.set(None);
        summary.reason
    }

    fn set(&self, turn: Option<CancellationToken>) {
        *self
            .current
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = turn;
    }
}

/// A session id that sorts by time: seconds since the epoch and a random suffix.
fn new_session_id() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("{seconds}-{:04x}", fastrand::u16(..))
}
