//! `qilin run`: a session on the terminal — one turn of a prompt, or a conversation — rendered
//! as it happens (or printed as the event log in JSON lines), with Ctrl-C interrupting the turn.
//! The session itself is `qilin-runtime`'s; this is a host that renders its events and answers
//! its requests on the terminal.

use crate::asking::ask_on_terminal;
use crate::commands::{open_store, sandbox_helper, worker_sandbox};
use crate::render::{Style, TerminalRenderer};
use anyhow::{Context, Result, bail};
use clap::Args;
use futures_util::StreamExt;
use qilin_protocol::{Event, EventBody, FinishReason};
use qilin_runtime::{ModelChoice, Runtime, SessionHandle, workspace_of};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, watch};

/// `qilin run`'s arguments.
#[derive(Args)]
pub struct RunArgs {
    /// The `.agent` file (not needed with `--resume` or `--continue`).
    #[arg(long, required_unless_present_any = ["resume", "continue_latest"])]
    pub agent: Option<PathBuf>,
    /// The model: `openai:NAME`, `anthropic:NAME` or `scripted:FILE`; the agent file's
    /// `model` (or the resumed session's) when omitted.
    #[arg(long)]
    pub model: Option<String>,
    /// The folder the tools work in; the agent file's workspace (the nearest folder above it
    /// holding `.qilin/`) when omitted, or the current folder with `--continue`.
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
    /// What to ask the agent. Without it, a terminal gets a conversation (one turn per line,
    /// `/exit` or Ctrl-D to leave) and piped input is read whole as the prompt.
    pub prompt: Option<String>,
}

/// Runs `qilin run`.
pub fn run(args: RunArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(run_session(args, None))
}

/// Opens (or resumes) the session, runs the prompt — or a conversation — and renders it; the
/// exit status says how the last turn ended. `model` replaces the model the arguments, the
/// agent file or the stored session name.
pub async fn run_session(args: RunArgs, model: Option<ModelChoice>) -> Result<ExitCode> {
    let workspace = match (&args.workspace, &args.agent) {
        (Some(dir), _) => dir.clone(),
        (None, Some(agent)) => workspace_of(agent),
        (None, None) => std::env::current_dir().context("cannot read the current folder")?,
    };
    let runtime = Runtime::new(open_store(&workspace)?, worker_sandbox()?)
        .with_sandbox_helper(sandbox_helper()?);
    let interactive = !args.json && std::io::stdin().is_terminal();
    let mut builder = match (&args.resume, args.continue_latest, &args.agent) {
        (Some(id), _, _) => runtime.resume(id).await?,
        (None, true, _) => {
            let id = latest_session(&runtime, &workspace).await?;
            runtime.resume(&id).await?
        }
        (None, false, Some(agent)) => runtime.session(&workspace).agent_file(agent),
        (None, false, None) => bail!("pass --agent FILE, --resume ID or --continue"),
    };
    builder = builder.attended(interactive).no_sandbox(args.no_sandbox);
    for dir in &args.skills {
        builder = builder.skill_dir(dir);
    }
    if let Some(model) = model {
        builder = builder.model(model);
    } else if let Some(spec) = &args.model {
        builder = builder.model(ModelChoice::Spec(spec.clone()));
    }
    let resuming = builder.resumes().map(str::to_string);
    let handle = builder.build().await?;
    for diagnostic in handle.diagnostics() {
        eprintln!("{diagnostic}");
    }
    for note in handle.notes() {
        eprintln!("note: {note}");
    }
    if let Some(id) = &resuming
        && !args.json
    {
        eprintln!("Continuing session {id}.");
    }

    let renderer = Arc::new(Mutex::new(TerminalRenderer::new(
        Style::detect(),
        Box::new(std::io::stdout()),
    )));
    // A resumed session shows what happens from now on; a new one, everything.
    let after = match resuming {
        Some(_) => handle.committed_head(),
        None => 0,
    };
    let display = Display::start(
        handle.clone(),
        after,
        args.json,
        Arc::clone(&renderer),
        interactive,
    );
    listen_for_interrupts(handle.clone());
    let status = match &args.prompt {
        Some(prompt) => exit_status(run_turn(&handle, &display, prompt).await?),
        None if std::io::stdin().is_terminal() => {
            while let Some(prompt) = read_prompt().await? {
                run_turn(&handle, &display, &prompt).await?;
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
            exit_status(run_turn(&handle, &display, prompt.trim()).await?)
        }
    };
    handle.close().await?;
    display.caught_up(&handle).await;
    Ok(status)
}

/// Runs one turn and waits until everything it recorded is shown.
async fn run_turn(handle: &SessionHandle, display: &Display, prompt: &str) -> Result<FinishReason> {
    let turn = handle.submit(prompt, None)?;
    let summary = turn.finished().await;
    handle.flush().await?;
    display.caught_up(handle).await;
    Ok(summary.reason)
}

/// The id of the latest session of `workspace`.
async fn latest_session(runtime: &Runtime, workspace: &std::path::Path) -> Result<String> {
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
    let page = runtime
        .store()
        .list_sessions(&qilin_store::SessionQuery {
            workspace: Some(workspace.display().to_string()),
            limit: 1,
            ..Default::default()
        })
        .await?;
    match page.sessions.into_iter().next() {
        Some(session) => Ok(session.id),
        None => bail!(
            "no session to continue in {}; start one with `qilin run --agent FILE`",
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

/// The task that renders (or prints as JSON lines) every event the session commits, and puts
/// its requests to the user on the terminal.
struct Display {
    shown: watch::Receiver<u64>,
    renderer: Arc<Mutex<TerminalRenderer>>,
}

impl Display {
    fn start(
        handle: SessionHandle,
        after: u64,
        json: bool,
        renderer: Arc<Mutex<TerminalRenderer>>,
        interactive: bool,
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
                        }
                        if interactive {
                            answer(&handle, &rendering, &event);
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

/// Puts a request the session opened to the user, in a task of its own (the terminal is
/// taken from the live display until it is answered), and hands the answer to the session.
fn answer(handle: &SessionHandle, renderer: &Arc<Mutex<TerminalRenderer>>, event: &Event) {
    let EventBody::RequestOpened(opened) = &event.body else {
        return;
    };
    let handle = handle.clone();
    let renderer = Arc::clone(renderer);
    let opened = opened.clone();
    tokio::spawn(async move {
        let reply = ask_on_terminal(&renderer, &opened).await;
        if let Err(err) = handle.resolve(&opened.request_id, reply, "terminal") {
            eprintln!("(not applied: {err})");
        }
    });
}

/// Ctrl-C interrupts the running turn; pressed again, or with no turn running, it ends the
/// process once the session's events are stored.
fn listen_for_interrupts(handle: SessionHandle) {
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if !handle.interrupt() {
                let _ = tokio::time::timeout(Duration::from_secs(3), handle.flush()).await;
                std::process::exit(130);
            }
        }
    });
}
