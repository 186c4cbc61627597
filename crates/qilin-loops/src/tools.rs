//! The three tools: each checks its arguments, asks the [`crate::Loops`] service, and presents
//! the call.

use crate::LoopService;
use qilin_protocol::loops::{
    LoopBudget, LoopOutput, LoopRecord, LoopStatusOutput, LoopUntil, StartLoop,
};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;

/// Start a loop: the same prompt run again and again, each iteration a fresh child session
/// with no memory of the others (only the workspace carries the work over), until the loop is
/// done. After each iteration the runtime runs `until.checks` and stops once they all pass; with
/// no check declared, it stops when the iteration's final answer holds
/// `<promise>TEXT</promise>` with `until.promise` as TEXT. It also stops at `max_iterations`,
/// when a budget is spent, when three iterations in a row change no file and fail the same
/// way, or on `loop_stop`. Returns `{loop}` at once; the loop runs in the background and
/// records a report per iteration (files changed, checks, tokens, duration, outcome). With
/// `fresh_context: false` the iterations are turns of one child session instead, compacted
/// before each iteration after the first: each reads a summary of the ones before.
#[derive(qilin_tool::Tool)]
#[tool(name = "loop_start")]
pub struct LoopStart;

/// When the loop is done.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopUntilArgs {
    /// The ids of declared checks that must all pass after an iteration (the loop's best
    /// stopping rule).
    #[serde(default)]
    pub checks: Option<Vec<String>>,
    /// The text an iteration writes as `<promise>TEXT</promise>` in its final answer when the
    /// work is done; it ends the loop only when no check is named.
    #[serde(default)]
    pub promise: Option<String>,
}

/// What the loop may spend over all its iterations.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopBudgetArgs {
    /// The most tokens (input and output) its iterations may use.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub tokens: Option<u64>,
    /// The most US dollars it may cost. Refused: usage counts tokens only, and prices are
    /// known only to the terminal's display, never to the runtime running the loop.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// The most seconds of wall time from its start.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub duration_secs: Option<u64>,
}

/// Arguments of `loop_start`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopStartArgs {
    /// The prompt every iteration gets, whole: the task and how to tell it is done, since
    /// each iteration starts with no memory of the last.
    pub prompt: String,
    /// When the loop is done: `checks` that must pass, a `promise` the model may write, or
    /// both (the checks then decide).
    #[serde(default)]
    pub until: LoopUntilArgs,
    /// The most iterations to run, 1 to 100.
    #[schemars(range(min = 1, max = 100))]
    pub max_iterations: u32,
    /// `true` (the default): each iteration runs in a fresh child session that knows nothing
    /// of the others. `false`: every iteration is the next turn of one child session of the
    /// loop, compacted before each iteration after the first, so it reads a summary of the
    /// earlier iterations instead of their whole history.
    #[serde(default)]
    pub fresh_context: Option<bool>,
    /// What the loop may spend: `tokens`, `duration_secs`.
    #[serde(default)]
    pub budget: Option<LoopBudgetArgs>,
}

impl Tool for LoopStart {
    type Args = LoopStartArgs;
    type Output = LoopOutput;

    fn prompt_hint(&self) -> &str {
        "Use loop_start for work a fresh attempt repeated many times finishes (make a test suite \
         pass, fix every lint): write a whole prompt, name the checks that prove it done, and \
         bound it with max_iterations. Follow it with loop_status; do not do the work yourself \
         meanwhile."
    }

    fn present(&self, args: &LoopStartArgs) -> CallPresentation {
        CallPresentation::new("Start a loop", one_line(&args.prompt, 80))
    }

    fn before_detail(&self, args: &LoopStartArgs) -> Option<Detail> {
        Some(Detail::Text {
            text: args.prompt.clone(),
        })
    }

    fn detail(&self, _args: &LoopStartArgs, result: &ToolResult<LoopOutput>) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(output) => record_text(&output.record),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: LoopStartArgs, cx: &ToolContext) -> ToolResult<LoopOutput> {
        let loops = LoopService::of(cx)?;
        let checks = args.until.checks.unwrap_or_default();
        if let Some(blank) = checks.iter().find(|id| id.trim().is_empty()) {
            return Err(ToolError::invalid_arguments(format!(
                "`until.checks` holds an empty id ({blank:?}); give the ids of declared checks"
            )));
        }
        let start = StartLoop {
            prompt: args.prompt,
            until: LoopUntil {
                checks,
                promise: args.until.promise,
            },
            max_iterations: args.max_iterations,
            fresh_context: args.fresh_context,
            budget: args.budget.map(|budget| LoopBudget {
                tokens: budget.tokens,
                cost_usd: budget.cost_usd,
                duration_secs: budget.duration_secs,
            }),
        };
        let record = loops.start(Some(cx.call_id()), start)?;
        Ok(LoopOutput { record })
    }

    fn content(&self, output: &LoopOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{}\nThe loop runs in the background; loop_status shows its reports, loop_stop \
             stops it.",
            record_text(&output.record)
        ))]
    }
}

/// The session's loops, each with its status, why it stopped, and one report per iteration
/// (files changed, each check's conclusion, tokens, duration, and why the loop went on or
/// stopped). Returns `{loops}`: one loop when `id` is given, else every loop, oldest first.
#[derive(qilin_tool::Tool)]
#[tool(name = "loop_status", read_only)]
pub struct LoopStatus;

/// Arguments of `loop_status`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopStatusArgs {
    /// One loop's id (as `loop_start` returned it); every loop of the session when omitted.
    #[serde(default)]
    pub id: Option<String>,
}

impl Tool for LoopStatus {
    type Args = LoopStatusArgs;
    type Output = LoopStatusOutput;

    fn prompt_hint(&self) -> &str {
        "Use loop_status to follow a loop you started: each iteration's report says what it \
         changed and how the checks ended."
    }

    fn present(&self, args: &LoopStatusArgs) -> CallPresentation {
        match &args.id {
            Some(id) => CallPresentation::new("Read a loop", id.clone()),
            None => CallPresentation::new("List the loops", ""),
        }
    }

    fn before_detail(&self, _args: &LoopStatusArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &LoopStatusArgs,
        result: &ToolResult<LoopStatusOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, args: LoopStatusArgs, cx: &ToolContext) -> ToolResult<LoopStatusOutput> {
        let loops = LoopService::of(cx)?.list();
        let Some(id) = args.id.map(|id| id.trim().to_string()) else {
            return Ok(LoopStatusOutput { loops });
        };
        let known: Vec<String> = loops.iter().map(|record| record.loop_id.clone()).collect();
        match loops.into_iter().find(|record| record.loop_id == id) {
            Some(record) => Ok(LoopStatusOutput {
                loops: vec![record],
            }),
            None => Err(unknown_loop(&id, &known)),
        }
    }

    fn content(&self, output: &LoopStatusOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(match output.loops.is_empty() {
            true => "The session has started no loop.".to_string(),
            false => output
                .loops
                .iter()
                .map(record_text)
                .collect::<Vec<_>>()
                .join("\n\n"),
        })]
    }
}

/// Stop a loop: its running iteration is interrupted (its calls end `interrupted`) and no
/// other starts. Returns `{loop}` as it ended; a loop that ended already is returned as is.
#[derive(qilin_tool::Tool)]
#[tool(name = "loop_stop")]
pub struct LoopStop;

/// Arguments of `loop_stop`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopStopArgs {
    /// The loop's id, as `loop_start` returned it.
    pub id: String,
}

impl Tool for LoopStop {
    type Args = LoopStopArgs;
    type Output = LoopOutput;

    fn prompt_hint(&self) -> &str {
        "Use loop_stop when a loop goes the wrong way or the user asks you to stop it."
    }

    fn present(&self, args: &LoopStopArgs) -> CallPresentation {
        CallPresentation::new("Stop a loop", args.id.clone())
    }

    fn before_detail(&self, _args: &LoopStopArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &LoopStopArgs, result: &ToolResult<LoopOutput>) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(output) => record_text(&output.record),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: LoopStopArgs, cx: &ToolContext) -> ToolResult<LoopOutput> {
        let loops = LoopService::of(cx)?;
        let id = args.id.trim();
        if id.is_empty() {
            return Err(ToolError::invalid_arguments(
                "`id` is empty; give the loop's id, as loop_start returned it",
            ));
        }
        let record = loops.stop(id).await?;
        Ok(LoopOutput { record })
    }

    fn content(&self, output: &LoopOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(record_text(&output.record))]
    }
}

/// The error for a loop id the session does not have, naming those it has.
pub(crate) fn unknown_loop(id: &str, known: &[String]) -> ToolError {
    ToolError::invalid_arguments(match known.is_empty() {
        true => format!("no loop `{id}`: this session has started no loop"),
        false => format!(
            "no loop `{id}`; this session's loops are: {}",
            known.join(", ")
        ),
    })
}

/// The model-facing text of a loop: its line, then one line per iteration.
pub fn record_text(record: &LoopRecord) -> String {
    let state = match (record.status, record.stop_reason) {
        (_, Some(reason)) => format!("finished: {}", reason.as_str()),
        _ => "running".to_string(),
    };
    let mut until = Vec::new();
    if !record.until.checks.is_empty() {
        until.push(format!("checks {}", record.until.checks.join(", ")));
    }
    if let Some(promise) = &record.until.promise {
        until.push(format!("promise {promise:?}"));
    }
    let until = match until.is_empty() {
        true => String::new(),
        false => format!(", until {}", until.join(" or ")),
    };
    let context = match record.fresh_context {
        true => "",
        false => "; one session, compacted between iterations",
    };
    let mut lines = vec![format!(
        "Loop {} ({state}; {} of at most {} iterations{until}{context}; {} tokens): {}",
        record.loop_id,
        record.iterations.len(),
        record.max_iterations,
        record.input_tokens + record.output_tokens,
        one_line(&record.prompt, 100)
    )];
    for iteration in &record.iterations {
        lines.push(format!("  {}", iteration.one_line()));
    }
    lines.join("\n")
}

/// `text` on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
