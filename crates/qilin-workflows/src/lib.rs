//! Qilin's workflows: Python files in `.qilin/workflows/NAME.py` that call tools in sequence
//! and in parallel and write a report, run on code mode exactly as `run_code` runs code.
//!
//! - `workflow_run` — run a workflow (`{workflow, args?, background?}`): foreground, the call
//!   returns the ended run; background, it returns at once and the model is told when the run
//!   ends.
//! - `workflow_status` — the session's runs (`{id?}`), with their steps and report.
//! - `workflow_stop` — stop a run (`{id}`); its running calls end `interrupted`.
//!
//! A workflow file begins with a docstring holding its front matter in YAML (see [`file`]):
//! a description, the arguments it takes, the checks run after it, its limits. Inside, the
//! script has `sdk` as `run_code` has it, `args` (its arguments, defaults filled in) and
//! `sdk.report(title, text)` to add a section to the run's report. Each run is recorded in the
//! session's log (`workflow.started`, `workflow.step`, `workflow.finished`); its calls nest
//! under the `workflow_run` call as `run_code`'s do. The runs of a session are kept by the
//! [`WorkflowRuns`] host service the runtime gives each session, rebuilt from the log when the
//! session is resumed; a run an earlier process left running resumes by replaying its call
//! journal (see docs/journal.md): a foreground one with its turn, a background one through
//! [`resume_background_runs`].

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod file;
mod runs;
mod tools;

pub use file::{ArgSpec, ArgType, WorkflowFile, WorkflowFileError, WorkflowLimits};
pub use runs::WorkflowRuns;
pub use tools::{
    WorkflowRunArgs, WorkflowRunTool, WorkflowStatusArgs, WorkflowStatusTool, WorkflowStopArgs,
    WorkflowStopTool, resume_background_runs, run_text,
};

use qilin_codemode::CodeMode;
use qilin_tool::{RegistryError, ToolRegistry};

/// Registers `workflow_run` (running scripts as `mode` runs code), `workflow_status` and
/// `workflow_stop`.
pub fn register_tools(registry: &mut ToolRegistry, mode: CodeMode) -> Result<(), RegistryError> {
    registry.register(WorkflowRunTool::new(mode))?;
    registry.register(WorkflowStatusTool)?;
    registry.register(WorkflowStopTool)?;
    Ok(())
}
