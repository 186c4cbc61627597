//! `qilin demo`: a scripted agent tours the bundled example workspace, offline and with no
//! key — direct calls, a code-mode run with nested calls, an edit with its diff and a
//! command that fails — rendered exactly as `qilin run` renders a real model.

use crate::commands::run::{RunArgs, run_session};
use anyhow::{Context, Result};
use clap::Args;
use include_dir::{Dir, include_dir};
use qilin_model::{Script, ScriptedProvider};
use qilin_runtime::ModelChoice;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// The example workspace, built into the binary so the demo runs anywhere.
static EXAMPLE_WORKSPACE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../examples/workspace");

/// The prompt the scripted user gives.
pub const DEMO_PROMPT: &str = "Show me around this workspace: count the TODOs, summarise the sales \
                           data, fix the typo in the report and run the checks.";

/// Unpacks the example workspace into `workspace`, creating it.
pub fn unpack_example_workspace(workspace: &Path) -> Result<()> {
    std::fs::create_dir_all(workspace)
        .with_context(|| format!("cannot create {}", workspace.display()))?;
    EXAMPLE_WORKSPACE.extract(workspace).with_context(|| {
        format!(
            "cannot unpack the example workspace into {}",
            workspace.display()
        )
    })
}

/// The demo's scripted model, playing `demo.script.yaml` of the unpacked `workspace` (without
/// pauses when `fast`).
pub fn demo_model(workspace: &Path, fast: bool) -> Result<ModelChoice> {
    let mut script = Script::load(&workspace.join("demo.script.yaml"))?;
    if fast {
        script = script.with_chunk_delay(Duration::ZERO);
    }
    Ok(ModelChoice::Provider {
        provider: Arc::new(ScriptedProvider::new(script)),
        model: "scripted".to_string(),
        label: "scripted:demo.script.yaml".to_string(),
    })
}

/// `qilin demo`'s arguments.
#[derive(Args)]
pub struct DemoArgs {
    /// Unpack the example workspace into this folder (it must not exist yet) and keep it;
    /// a temporary folder, removed afterwards, when omitted.
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Stream the scripted model's answer without pauses.
    #[arg(long)]
    pub fast: bool,
    /// Print the event log as JSON lines instead of rendering it.
    #[arg(long)]
    pub json: bool,
    /// Run the demo's bash command without the sandbox.
    #[arg(long)]
    pub no_sandbox: bool,
}

/// Runs `qilin demo`.
pub fn run(args: DemoArgs) -> Result<ExitCode> {
    let temporary = tempfile::tempdir().context("cannot create a temporary folder")?;
    let workspace = match &args.workspace {
        Some(dir) => {
            anyhow::ensure!(
                !dir.exists(),
                "{} already exists; give a folder the demo may create",
                dir.display()
            );
            dir.clone()
        }
        None => temporary.path().join("workspace"),
    };
    unpack_example_workspace(&workspace)?;
    if !args.json {
        match &args.workspace {
            Some(dir) => println!("Demo workspace: {}", dir.display()),
            None => println!("Demo workspace: a temporary copy of examples/workspace"),
        }
        println!("> {DEMO_PROMPT}\n");
    }
    let model = demo_model(&workspace, args.fast)?;
    let run = RunArgs {
        agent: Some(workspace.join("demo.agent")),
        model: None,
        workspace: Some(workspace),
        skills: Vec::new(),
        resume: None,
        continue_latest: false,
        json: args.json,
        no_sandbox: args.no_sandbox,
        trust: false,
        prompt: Some(DEMO_PROMPT.to_string()),
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(run_session(run, Some(model)))
}
