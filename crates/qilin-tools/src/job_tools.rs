//! `job_output` and `job_kill`: follow and stop the background jobs `bash` started.

use crate::jobs::{Job, JobState, JobStatus, JobTable};
use crate::output_capture::{DEFAULT_OUTPUT_CAP, OutputCapture};
use nix::sys::signal::Signal;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// The longest `job_output` waits for a job to end, in seconds.
pub const MAX_WAIT_SECS: u64 = 600;
/// How long `job_kill` lets a job end after SIGTERM before it sends SIGKILL.
const TERMINATE_GRACE: Duration = Duration::from_secs(3);

/// Show a background job's new output and status.
///
/// For a job started by `bash` with `background: true`: the output written since the
/// previous look, and whether it is still running, with its exit code once it ended.
#[derive(qilin_tool::Tool)]
#[tool(name = "job_output")]
pub struct JobOutput;

/// Arguments of `job_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobOutputArgs {
    /// The job's id, as `bash` returned it (e.g. `job-1`).
    pub job_id: String,
    /// Seconds to wait for the job to end before answering (default 0: answer at once; at
    /// most 600). The call returns as soon as the job ends.
    #[schemars(range(max = 600))]
    pub wait_secs: Option<u64>,
}

/// Stop a background job.
///
/// Sends SIGTERM to the whole process group of a job started by `bash`, then SIGKILL if it
/// has not ended within 3 seconds. Returns its last output and final status.
#[derive(qilin_tool::Tool)]
#[tool(name = "job_kill")]
pub struct JobKill;

/// Arguments of `job_kill`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobKillArgs {
    /// The job's id, as `bash` returned it (e.g. `job-1`).
    pub job_id: String,
}

/// A background job's status and the output it wrote since it was last read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct JobReport {
    /// The job's id.
    pub job_id: String,
    /// The command it runs.
    pub command: String,
    /// `running`, `exited` or `killed`.
    pub state: JobState,
    /// The exit code, once the job exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<String>,
    /// Milliseconds it has run (so far, while running).
    pub ran_for_ms: u64,
    /// Output written since the previous `job_output` or `job_kill` of this job; when long,
    /// its head and tail with a notice naming the file that holds all of it.
    pub new_output: String,
    /// The file holding the job's whole output since it started.
    pub log_path: String,
}

fn job_table(cx: &ToolContext) -> ToolResult<Arc<JobTable>> {
    cx.service::<JobTable>().ok_or_else(|| {
        ToolError::failed("background jobs are not available in this runtime (it has no job table)")
    })
}

fn find_job(cx: &ToolContext, id: &str) -> ToolResult<Arc<Job>> {
    job_table(cx)?
        .get(id)
        .map_err(|err| ToolError::invalid_arguments(err.to_string()))
}

async fn report(job: &Job, status: JobStatus, cx: &ToolContext) -> ToolResult<JobReport> {
    let mut capture = OutputCapture::new(DEFAULT_OUTPUT_CAP, cx.spill_path(job.id()));
    job.take_new_output(|chunk| capture.push(chunk))
        .map_err(|err| {
            ToolError::failed(format!(
                "the output of {} could not be read from {}: {err}",
                job.id(),
                job.log_path().display()
            ))
        })?;
    let quarantined = crate::git_guard::after_command(cx, cx.workspace()).await;
    Ok(JobReport {
        job_id: job.id().to_string(),
        command: job.command().to_string(),
        state: status.state,
        exit_code: status.exit_code,
        signal: status.signal,
        ran_for_ms: status.ran_for.unwrap_or_default().as_millis() as u64,
        new_output: capture.finish().text + &quarantined.unwrap_or_default(),
        log_path: job.log_path().to_string_lossy().into_owned(),
    })
}

fn report_content(report: &JobReport) -> Vec<ContentBlock> {
    let seconds = report.ran_for_ms as f64 / 1000.0;
    let state = match (report.state, report.exit_code, &report.signal) {
        (JobState::Running, _, _) => format!("running for {seconds:.1} s"),
        (_, Some(code), _) => format!("exited with code {code} after {seconds:.1} s"),
        (_, None, Some(signal)) => format!("killed by {signal} after {seconds:.1} s"),
        _ => format!("ended after {seconds:.1} s"),
    };
    let output = if report.new_output.is_empty() {
        "(no new output)".to_string()
    } else {
        report.new_output.clone()
    };
    vec![ContentBlock::text(format!(
        "{} ({}): {state}\n{output}",
        report.job_id, report.command
    ))]
}

fn report_detail(result: &ToolResult<JobReport>) -> Option<Detail> {
    match result {
        Ok(report) => Some(Detail::Shell {
            command: report.command.clone(),
            output: report.new_output.clone(),
            exit_code: report.exit_code,
        }),
        Err(error) => Some(Detail::Text {
            text: error.message.clone(),
        }),
    }
}

impl Tool for JobOutput {
    type Args = JobOutputArgs;
    type Output = JobReport;

    fn prompt_hint(&self) -> &str {
        "Use job_output to check on a background job: each call returns only the output \
         written since the previous call, plus the job's state. To wait for a job to finish, \
         pass `wait_secs` instead of polling in a loop."
    }

    fn present(&self, args: &JobOutputArgs) -> CallPresentation {
        CallPresentation::new("Read job output", &args.job_id)
    }

    fn before_detail(&self, _args: &JobOutputArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &JobOutputArgs, result: &ToolResult<JobReport>) -> Option<Detail> {
        report_detail(result)
    }

    async fn call(&self, args: JobOutputArgs, cx: &ToolContext) -> ToolResult<JobReport> {
        let job = find_job(cx, &args.job_id)?;
        let wait = args.wait_secs.unwrap_or(0);
        if wait > MAX_WAIT_SECS {
            return Err(ToolError::invalid_arguments(format!(
                "`wait_secs` is {wait}; it must be at most {MAX_WAIT_SECS}"
            )));
        }
        let status = job.wait(Duration::from_secs(wait)).await;
        report(&job, status, cx).await
    }

    fn content(&self, output: &JobReport) -> Vec<ContentBlock> {
        report_content(output)
    }
}

impl Tool for JobKill {
    type Args = JobKillArgs;
    type Output = JobReport;

    fn prompt_hint(&self) -> &str {
        "Use job_kill to stop a background job (a server, a watcher) once you no longer need \
         it. Killing a job that already ended is harmless and reports how it ended."
    }

    fn present(&self, args: &JobKillArgs) -> CallPresentation {
        CallPresentation::new("Stop job", &args.job_id)
    }

    fn before_detail(&self, _args: &JobKillArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &JobKillArgs, result: &ToolResult<JobReport>) -> Option<Detail> {
        report_detail(result)
    }

    async fn call(&self, args: JobKillArgs, cx: &ToolContext) -> ToolResult<JobReport> {
        let job = find_job(cx, &args.job_id)?;
        let kill_failed = |err: std::io::Error| {
            ToolError::failed(format!("{} could not be signalled: {err}", job.id()))
        };
        if job.status().state == JobState::Running {
            job.signal(Signal::SIGTERM).map_err(kill_failed)?;
            if job.wait(TERMINATE_GRACE).await.state == JobState::Running {
                job.signal(Signal::SIGKILL).map_err(kill_failed)?;
            }
        }
        let status = job.wait(TERMINATE_GRACE).await;
        report(&job, status, cx).await
    }

    fn content(&self, output: &JobReport) -> Vec<ContentBlock> {
        report_content(output)
    }
}
