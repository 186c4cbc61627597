//! `checks_run`: runs the session's declared checks and reports them like CI check runs.

use crate::CheckService;
use qilin_protocol::checks::{CheckConclusion, CheckRun, CheckStatus, ChecksRunOutput};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;

/// The most lines of a failing check's output the model reads beside its annotations.
const FAILING_OUTPUT_LINES: usize = 40;

/// Run the checks declared for this workspace and report each like a CI check run.
///
/// A check is a command the project declared once (tests, a linter, a type checker). Each run
/// returns its `status` (completed, timed_out, failed_to_start), `conclusion` (success,
/// failure), a one-line `summary`, `annotations` (path, line, column, level, message) read from
/// its output, the output's head and tail with the whole saved to a file when long, and
/// `cached: true` when nothing it reads changed since its last run, so it was not run again.
/// The checks run in the sandbox, in the workspace root, concurrently unless declared
/// otherwise; a timeout is a failure.
#[derive(qilin_tool::Tool)]
#[tool(name = "checks_run")]
pub struct ChecksRun;

/// Arguments of `checks_run`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecksRunArgs {
    /// The ids of the checks to run, as declared; every declared check when omitted. The runs
    /// come back in declaration order.
    #[serde(default)]
    pub ids: Option<Vec<String>>,
}

impl Tool for ChecksRun {
    type Args = ChecksRunArgs;
    type Output = ChecksRunOutput;

    fn prompt_hint(&self) -> &str {
        "Use checks_run to verify your work with the checks the project declared, before you \
         say it is done and after each change that could break it: it runs them all (or the \
         `ids` you name) and returns each one's conclusion, a summary and the failing places \
         (path:line and message). Fix what the annotations name and run the failing checks \
         again; a check whose files did not change is not rerun (`cached: true`), so change \
         something before expecting another result. A timed-out check failed. Read the spill \
         file named in a check's output for what its head and tail leave out."
    }

    fn present(&self, args: &ChecksRunArgs) -> CallPresentation {
        let remark = match &args.ids {
            Some(ids) if !ids.is_empty() => ids.join(", "),
            _ => "all declared checks".to_string(),
        };
        CallPresentation::new("Run checks", remark)
    }

    fn before_detail(&self, _args: &ChecksRunArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &ChecksRunArgs,
        result: &ToolResult<ChecksRunOutput>,
    ) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(output) => output_text(output),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: ChecksRunArgs, cx: &ToolContext) -> ToolResult<ChecksRunOutput> {
        let service = CheckService::of(cx)?;
        service.run(cx, args.ids.as_deref()).await
    }

    fn content(&self, output: &ChecksRunOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(output_text(output))]
    }
}

/// What the model reads of a run of checks: the conclusion, then each check's line, its
/// annotations, and the tail of a failing check's output.
pub fn output_text(output: &ChecksRunOutput) -> String {
    let mut text = format!("{} — {}\n", output.summary, output.conclusion.as_str());
    for run in &output.runs {
        text.push('\n');
        text.push_str(&run_text(run));
    }
    text
}

fn run_text(run: &CheckRun) -> String {
    let mark = match run.conclusion {
        CheckConclusion::Success => "passed",
        CheckConclusion::Failure => "FAILED",
        CheckConclusion::Neutral => "neutral",
    };
    let mut facts = Vec::new();
    if run.status != CheckStatus::Completed {
        facts.push(run.status.as_str().to_string());
    }
    if let Some(code) = run.exit_code {
        facts.push(format!("exit code {code}"));
    }
    facts.push(format!("{:.1} s", run.duration_ms as f64 / 1000.0));
    if run.cached {
        facts.push("cached: nothing it reads changed".to_string());
    }
    let mut text = format!(
        "[{mark}] {}: {} ({})\n",
        run.id,
        run.summary,
        facts.join(", ")
    );
    for annotation in &run.annotations {
        let place = match (annotation.line, annotation.column) {
            (Some(line), Some(column)) => format!("{}:{line}:{column}", annotation.path),
            (Some(line), None) => format!("{}:{line}", annotation.path),
            _ => annotation.path.clone(),
        };
        text.push_str(&format!(
            "  {} {place}: {}\n",
            annotation.level.as_str(),
            annotation.message
        ));
    }
    if run.omitted_annotations > 0 {
        text.push_str(&format!(
            "  … and {} more annotations\n",
            run.omitted_annotations
        ));
    }
    if run.conclusion == CheckConclusion::Failure && !run.output.trim().is_empty() {
        let lines: Vec<&str> = run.output.trim_end().lines().collect();
        let tail = &lines[lines.len().saturating_sub(FAILING_OUTPUT_LINES)..];
        text.push_str(&format!(
            "  output ({} of {} lines, the last):\n",
            tail.len(),
            lines.len()
        ));
        for line in tail {
            text.push_str("  | ");
            text.push_str(line);
            text.push('\n');
        }
        if let Some(spill) = &run.spill {
            text.push_str(&format!(
                "  the whole output ({} bytes) is in {}\n",
                spill.total_bytes, spill.path
            ));
        }
    }
    text
}
