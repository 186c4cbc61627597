//! Running checks: each in the session's sandbox as `bash` runs a command, concurrently but
//! for `depends_on` and `exclusive`, its output read by its parser into a [`CheckRun`].

use crate::cache::{RunCache, cache_key};
use crate::parse::{ParseInput, parse};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use qilin_protocol::checks::{
    AnnotationLevel, CheckAnnotation, CheckConclusion, CheckRun, CheckStatus, MAX_ANNOTATIONS,
};
use qilin_protocol::{ErrorCode, SpillNotice};
use qilin_skill::{CheckDeclaration, CheckParser};
use qilin_tool::{ToolContext, ToolError, ToolResult};
use qilin_tools::{CommandFailure, CommandRun, ShellKind, run_command};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The most bytes of one check's output in [`CheckRun::output`] (head and tail; the whole is
/// spilled to a file): a few checks' outputs together stay within what one call shows.
pub const CHECK_OUTPUT_CAP: usize = 8_000;

/// The most bytes of one check's output (or JUnit report) its parser reads.
pub const MAX_PARSED_BYTES: usize = 32 * 1024 * 1024;

/// The exit code bash gives when it found no such command.
const NOT_FOUND: i32 = 127;
/// The exit code bash gives when the command exists but cannot be executed.
const NOT_EXECUTABLE: i32 = 126;

/// Runs `checks` (in declaration order), reusing the cached run of each whose key did not
/// change, and returns their runs in the same order.
pub(crate) async fn run_checks(
    checks: &[CheckDeclaration],
    cache: &RunCache,
    cx: &ToolContext,
) -> ToolResult<Vec<CheckRun>> {
    let workspace = cx.workspace().to_path_buf();
    // Every key is taken before any check starts: a check may write files another reads.
    let keyed = Arc::new(checks.to_vec());
    let keys = {
        let (keyed, workspace) = (Arc::clone(&keyed), workspace.clone());
        tokio::task::spawn_blocking(move || {
            keyed
                .iter()
                .map(|check| cache_key(check, &workspace))
                .collect::<Vec<String>>()
        })
        .await
        .map_err(|err| ToolError::failed(format!("the checks' files could not be hashed: {err}")))?
    };
    let mut runs: Vec<Option<CheckRun>> = vec![None; checks.len()];
    let mut done: Vec<&str> = Vec::new();
    let mut pending: Vec<usize> = Vec::new();
    for (index, check) in checks.iter().enumerate() {
        match cache.get(&check.id, &keys[index]) {
            Some(mut run) => {
                run.cached = true;
                cx.progress(format!(
                    "{}: {} (unchanged, cached)\n",
                    check.id, run.summary
                ));
                runs[index] = Some(run);
                done.push(&check.id);
            }
            None => pending.push(index),
        }
    }
    let selected: Vec<&str> = checks.iter().map(|c| c.id.as_str()).collect();
    let mut running = FuturesUnordered::new();
    let mut running_exclusive = false;
    loop {
        let mut at = 0;
        while at < pending.len() {
            let check = &checks[pending[at]];
            let ready = check
                .depends_on
                .iter()
                .all(|dep| !selected.contains(&dep.as_str()) || done.contains(&dep.as_str()));
            let room = if check.exclusive {
                running.is_empty()
            } else {
                !running_exclusive
            };
            if !(ready && room) {
                at += 1;
                continue;
            }
            let index = pending.remove(at);
            running_exclusive |= check.exclusive;
            cx.progress(format!("{}: started\n", check.id));
            running.push(async move { (index, run_one(check, cx).await) });
            if check.exclusive {
                break;
            }
        }
        let Some((index, run)) = running.next().await else {
            break;
        };
        let run = run?;
        let check = &checks[index];
        if check.exclusive {
            running_exclusive = false;
        }
        cx.progress(format!(
            "{}: {} — {}\n",
            check.id,
            run.conclusion.as_str(),
            run.summary
        ));
        match run.status {
            CheckStatus::Completed => cache.put(&check.id, keys[index].clone(), run.clone()),
            CheckStatus::TimedOut | CheckStatus::FailedToStart => cache.forget(&check.id),
        }
        runs[index] = Some(run);
        done.push(&check.id);
    }
    runs.into_iter()
        .zip(checks)
        .map(|(run, check)| {
            run.ok_or_else(|| {
                ToolError::failed(format!(
                    "check `{}` never started: what it depends on never ended",
                    check.id
                ))
            })
        })
        .collect()
}

/// Runs one check and reads its output.
async fn run_one(check: &CheckDeclaration, cx: &ToolContext) -> ToolResult<CheckRun> {
    let started_at = qilin_tool::now();
    let began = SystemTime::now();
    let run = CommandRun {
        kind: ShellKind::Bash,
        command: &check.command,
        timeout: check.timeout,
        output_cap: CHECK_OUTPUT_CAP,
        spill_path: cx.spill_path(&format!("check-{}", check.id)),
        keep_bytes: MAX_PARSED_BYTES,
        live: false,
    };
    let mut record = CheckRun {
        id: check.id.clone(),
        description: check.description.clone(),
        command: check.command.clone(),
        status: CheckStatus::Completed,
        conclusion: CheckConclusion::Failure,
        duration_ms: 0,
        summary: String::new(),
        annotations: Vec::new(),
        omitted_annotations: 0,
        output: String::new(),
        spill: None,
        cached: false,
        started_at,
        exit_code: None,
    };
    let ran = match run_command(run, cx).await {
        Ok(ran) => ran,
        Err(CommandFailure::Unavailable(error)) => return Err(error),
        Err(CommandFailure::NotStarted(err)) => {
            record.status = CheckStatus::FailedToStart;
            record.summary = format!("could not start: {err}");
            return Ok(record);
        }
        Err(CommandFailure::Status(err)) => {
            return Err(ToolError::failed(format!(
                "the exit status of check `{}` could not be read: {err}",
                check.id
            )));
        }
        Err(CommandFailure::Interrupted(output)) => {
            return Err(ToolError::new(
                ErrorCode::Interrupted,
                format!(
                    "The checks were interrupted; check `{}` was stopped and its process group killed. Its output so far:\n{output}",
                    check.id
                ),
            ));
        }
    };
    let result = ran.result;
    record.duration_ms = result.duration_ms;
    record.exit_code = result.exit_code;
    record.output = result.output;
    record.spill = result.spill_path.map(|path| SpillNotice {
        path,
        total_bytes: result.total_bytes,
    });
    if result.timed_out {
        record.status = CheckStatus::TimedOut;
        record.exit_code = None;
        record.summary = format!("timed out after {} s", check.timeout.as_secs());
        return Ok(record);
    }
    if let Some(code @ (NOT_FOUND | NOT_EXECUTABLE)) = result.exit_code {
        record.status = CheckStatus::FailedToStart;
        let said = crate::parse::one_line(
            record
                .output
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
                .unwrap_or_default(),
        );
        let what = if code == NOT_FOUND {
            "command not found"
        } else {
            "the command could not be executed"
        };
        record.summary = match said.is_empty() {
            true => format!("could not start: {what} (exit code {code})"),
            false => format!("could not start: {what} (exit code {code}): {said}"),
        };
        return Ok(record);
    }
    let output = String::from_utf8_lossy(&ran.kept);
    let workspace = cx.workspace();
    let (report, report_problem) = match (&check.report, check.parser) {
        (Some(path), CheckParser::Junit) => match read_report(workspace, path, began) {
            Ok(text) => (Some(text), None),
            Err(problem) => (None, Some(problem)),
        },
        _ => (None, None),
    };
    let parsed = match &report_problem {
        Some(_) => Default::default(),
        None => parse(
            check.parser,
            &ParseInput {
                output: &output,
                report: report.as_deref(),
                workspace,
            },
        ),
    };
    let passed = result.exit_code == Some(0) && parsed.failures == 0 && report_problem.is_none();
    record.conclusion = match passed {
        true => CheckConclusion::Success,
        false => CheckConclusion::Failure,
    };
    record.summary = match (report_problem, parsed.summary, result.exit_code) {
        (Some(problem), _, _) => problem,
        (None, Some(summary), Some(0)) => summary,
        (None, Some(summary), Some(code)) => format!("{summary} (exit code {code})"),
        (None, Some(summary), None) => {
            format!("{summary} (ended by {})", signal(result.signal.as_deref()))
        }
        (None, None, Some(0)) => "passed (exit code 0)".to_string(),
        (None, None, Some(code)) => format!("failed with exit code {code}"),
        (None, None, None) => format!("ended by {}", signal(result.signal.as_deref())),
    };
    let (annotations, omitted) = capped(parsed.annotations);
    record.annotations = annotations;
    record.omitted_annotations = omitted;
    Ok(record)
}

/// The signal that ended a command, for a summary.
fn signal(signal: Option<&str>) -> &str {
    signal.unwrap_or("a signal")
}

/// The annotations, errors first, then warnings, then notices (each in output order), at most
/// [`MAX_ANNOTATIONS`] of them, and how many were left out.
fn capped(mut annotations: Vec<CheckAnnotation>) -> (Vec<CheckAnnotation>, u32) {
    let rank = |level: AnnotationLevel| match level {
        AnnotationLevel::Error => 0,
        AnnotationLevel::Warning => 1,
        AnnotationLevel::Notice => 2,
    };
    annotations.sort_by_key(|annotation| rank(annotation.level));
    annotations.dedup();
    let omitted = annotations.len().saturating_sub(MAX_ANNOTATIONS);
    annotations.truncate(MAX_ANNOTATIONS);
    (annotations, u32::try_from(omitted).unwrap_or(u32::MAX))
}

/// The JUnit report a check wrote, read beneath the workspace, or why it cannot be: it must
/// have been written since the check `began` (a report left by an earlier run proves nothing).
fn read_report(workspace: &Path, path: &str, began: SystemTime) -> Result<String, String> {
    let missing = |why: String| format!("no JUnit report to read at `{path}`: {why}");
    let resolved = qilin_tool::Workspace::open(workspace)
        .and_then(|ws| ws.resolve(path))
        .map_err(|err| missing(err.to_string()))?;
    let file = resolved
        .open_file()
        .map_err(|err| missing(err.to_string()))?;
    let modified = file
        .metadata()
        .and_then(|meta| meta.modified())
        .map_err(|err| missing(err.to_string()))?;
    // File times may be coarser than the clock: a second of slack.
    if modified + Duration::from_secs(1) < began {
        return Err(missing(
            "the file there was not written by this run (it is older)".to_string(),
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PARSED_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(|err| missing(err.to_string()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
