//! `qilin loop`: the same prompt run again and again, each iteration a fresh child session,
//! until the named checks pass (or the promise is written), printing one line per iteration —
//! its number, the files it changed, the checks, its tokens, its duration and its outcome —
//! and the reason the loop stopped. Ctrl-C stops the loop (its running iteration is
//! interrupted).

use crate::commands::run::{RunArgs, open_new_session};
use anyhow::{Context, Result, bail};
use clap::Args;
use futures_util::StreamExt;
use qilin_protocol::EventBody;
use qilin_protocol::loops::{
    IterationStatus, LoopBudget, LoopRecord, LoopStopReason, LoopUntil, StartLoop,
};
use std::path::PathBuf;
use std::process::ExitCode;

/// `qilin loop`'s arguments.
#[derive(Args)]
pub struct LoopArgs {
    /// The prompt every iteration gets, whole (each iteration starts with no memory of the
    /// others).
    pub prompt: String,
    /// A declared check that must pass for the loop to stop (repeat it, or give several).
    #[arg(long = "until-checks", value_name = "ID", num_args = 1..)]
    pub until_checks: Vec<String>,
    /// The text the model writes as `<promise>TEXT</promise>` when the work is done; it stops
    /// the loop only when no check is named.
    #[arg(long, value_name = "TEXT")]
    pub promise: Option<String>,
    /// The most iterations to run (1 to 100).
    #[arg(long = "max", value_name = "N")]
    pub max_iterations: u32,
    /// The most tokens (input and output) the iterations may use together.
    #[arg(long = "max-tokens", value_name = "N")]
    pub max_tokens: Option<u64>,
    /// The most seconds the loop may take.
    #[arg(long = "max-seconds", value_name = "N")]
    pub max_seconds: Option<u64>,
    /// The `.agent` file; the built-in coder agent when omitted.
    #[arg(long)]
    pub agent: Option<PathBuf>,
    /// The model: `openai:NAME`, `anthropic:NAME` or `scripted:FILE`; else the agent file's
    /// `model`, `QILIN_MODEL` or the config file's `model`.
    #[arg(long)]
    pub model: Option<String>,
    /// The folder the tools work in; the current folder when omitted.
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Run bash commands without the sandbox.
    #[arg(long)]
    pub no_sandbox: bool,
    /// Trust the MCP servers the workspace declares, without asking.
    #[arg(long)]
    pub trust: bool,
}

/// Runs `qilin loop`: exits 0 when the checks passed (or the promise was seen), 1 otherwise.
pub fn run(args: LoopArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(run_loop(args))
}

async fn run_loop(args: LoopArgs) -> Result<ExitCode> {
    if args.prompt.trim().is_empty() {
        bail!("the prompt is empty; say what every iteration should do");
    }
    let run_args = RunArgs {
        agent: args.agent.clone(),
        model: args.model.clone(),
        workspace: args.workspace.clone(),
        skills: Vec::new(),
        resume: None,
        continue_latest: false,
        json: false,
        no_sandbox: args.no_sandbox,
        trust: args.trust,
        prompt: None,
    };
    // The loop never waits on a person: its iterations are unattended.
    let handle = open_new_session(&run_args, false).await?;
    let budget = (args.max_tokens.is_some() || args.max_seconds.is_some()).then_some(LoopBudget {
        tokens: args.max_tokens,
        cost_usd: None,
        duration_secs: args.max_seconds,
    });
    let head = handle.committed_head();
    let start = StartLoop {
        prompt: args.prompt.clone(),
        until: LoopUntil {
            checks: args.until_checks.clone(),
            promise: args.promise.clone(),
        },
        max_iterations: args.max_iterations,
        fresh_context: None,
        budget,
    };
    let started = match handle.start_loop(start) {
        Ok(started) => started,
        Err(error) => {
            handle.close().await?;
            bail!("the loop cannot start: {}", error.message);
        }
    };
    eprintln!(
        "Loop {} in session {}: up to {} iterations.",
        started.loop_id,
        handle.id(),
        started.max_iterations
    );
    let mut events = handle.subscribe_from(head);
    let mut finished: Option<LoopRecord> = None;
    let mut stopping = false;
    while finished.is_none() {
        tokio::select! {
            event = events.next() => {
                let Some(event) = event else { break };
                let event = event.context("reading the session's events failed")?;
                match event.body {
                    EventBody::LoopIteration(changed)
                        if changed.loop_id == started.loop_id
                            && changed.iteration.status != IterationStatus::Running =>
                    {
                        println!("{}", changed.iteration.one_line());
                    }
                    EventBody::LoopFinished(ended) if ended.record.loop_id == started.loop_id => {
                        finished = Some(ended.record);
                    }
                    _ => {}
                }
            }
            signal = tokio::signal::ctrl_c(), if !stopping => {
                signal.context("cannot watch for Ctrl-C")?;
                stopping = true;
                eprintln!("Stopping the loop…");
                let stopper = handle.clone();
                let id = started.loop_id.clone();
                tokio::spawn(async move { stopper.stop_loop(&id).await });
            }
        }
    }
    handle.close().await?;
    let Some(record) = finished else {
        bail!("the session's events ended before the loop did");
    };
    let reason = record.stop_reason.unwrap_or(LoopStopReason::Failed);
    println!(
        "Loop {} finished: {} after {} iteration{} ({} tokens).",
        record.loop_id,
        reason_words(reason),
        record.iterations.len(),
        if record.iterations.len() == 1 {
            ""
        } else {
            "s"
        },
        record.input_tokens + record.output_tokens
    );
    Ok(match reason {
        LoopStopReason::ChecksPassed | LoopStopReason::PromiseSeen => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

/// Why a loop stopped, in words.
fn reason_words(reason: LoopStopReason) -> &'static str {
    match reason {
        LoopStopReason::ChecksPassed => "the checks passed",
        LoopStopReason::PromiseSeen => "the promise was seen",
        LoopStopReason::MaxIterations => "the most iterations ran",
        LoopStopReason::Budget => "its budget was spent",
        LoopStopReason::Stalled => "it stalled (the same failure three times, nothing changed)",
        LoopStopReason::Stopped => "it was stopped",
        LoopStopReason::Failed => "an iteration failed",
    }
}
