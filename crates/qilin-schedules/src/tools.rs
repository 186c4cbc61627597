//! The three tools: each checks its arguments, asks the [`crate::ScheduleService`], records the
//! change in the session's log, and presents the call.

use crate::ScheduleService;
use qilin_protocol::schedules::{
    CatchUp, CreateSchedule, ScheduleListOutput, ScheduleOutput, ScheduleRecord, ScheduleTarget,
};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;

/// Schedule a prompt to run later in this session or in a new one: on a five-field cron in a
/// time zone, every so often, or once at a time. The server runs it even while no one watches:
/// the run's approvals and questions are refused, so write a prompt that needs no answer.
/// Returns the schedule with its next three fire times.
#[derive(qilin_tool::Tool)]
#[tool(name = "schedule_create")]
pub struct ScheduleCreate;

/// Arguments of `schedule_create`: exactly one of `cron`, `every` and `at`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleCreateArgs {
    /// What each run asks, written to be done without a person (it cannot ask one).
    pub prompt: String,
    /// A five-field cron expression: minute hour day-of-month month day-of-week, like
    /// `0 9 * * 1-5` (09:00 on weekdays).
    #[serde(default)]
    pub cron: Option<String>,
    /// An interval: "90s", "15m", "2h", "1d" or a number of seconds; at least one minute.
    #[serde(default)]
    pub every: Option<String>,
    /// A single time, RFC 3339 like `2030-01-31T09:00:00+01:00`, in the future.
    #[serde(default)]
    pub at: Option<String>,
    /// The IANA time zone the cron is read in, like `Europe/Paris`; UTC when omitted.
    #[serde(default)]
    pub timezone: Option<String>,
    /// The agent a `new_session` run uses (a built-in agent's name or an agent file); this
    /// session's when omitted.
    #[serde(default)]
    pub agent: Option<String>,
    /// Where each run happens: `this_session` (after its running turn; the default) or
    /// `new_session`.
    #[serde(default)]
    pub target: Option<ScheduleTarget>,
    /// Fires missed while no server ran: `once` (one late run for all; the default) or `skip`.
    #[serde(default)]
    pub catch_up: Option<CatchUp>,
    /// After this time (RFC 3339) the schedule fires no more.
    #[serde(default)]
    pub expires: Option<String>,
}

impl Tool for ScheduleCreate {
    type Args = ScheduleCreateArgs;
    type Output = ScheduleOutput;

    fn prompt_hint(&self) -> &str {
        "Use schedule_create when the user asks for something to happen later or regularly \
         (every morning, in an hour, every 15 minutes). Tell the user the next fire times it \
         returns."
    }

    fn present(&self, args: &ScheduleCreateArgs) -> CallPresentation {
        let when = args
            .cron
            .as_deref()
            .or(args.every.as_deref())
            .or(args.at.as_deref())
            .unwrap_or("");
        CallPresentation::new("Schedule a task", when)
    }

    fn before_detail(&self, args: &ScheduleCreateArgs) -> Option<Detail> {
        Some(Detail::Text {
            text: args.prompt.clone(),
        })
    }

    fn detail(
        &self,
        _args: &ScheduleCreateArgs,
        result: &ToolResult<ScheduleOutput>,
    ) -> Option<Detail> {
        Some(Detail::Text {
            text: match result {
                Ok(output) => record_text(&output.schedule),
                Err(error) => error.message.clone(),
            },
        })
    }

    async fn call(&self, args: ScheduleCreateArgs, cx: &ToolContext) -> ToolResult<ScheduleOutput> {
        let service = ScheduleService::of(cx)?;
        let request = CreateSchedule {
            prompt: args.prompt,
            cron: args.cron,
            every: args.every,
            at: args.at,
            timezone: args.timezone,
            agent: args.agent,
            target: args.target,
            catch_up: args.catch_up,
            expires: args.expires,
        };
        let schedule = service.create(&request).await?;
        cx.session().events().emit(crate::created_event(&schedule));
        Ok(ScheduleOutput { schedule })
    }

    fn content(&self, output: &ScheduleOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(record_text(&output.schedule))]
    }
}

/// This session's schedules, newest first: each with its timing in words, next fire times,
/// status and last run.
#[derive(qilin_tool::Tool)]
#[tool(name = "schedule_list", read_only)]
pub struct ScheduleList;

/// Arguments of `schedule_list` (none).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleListArgs {}

impl Tool for ScheduleList {
    type Args = ScheduleListArgs;
    type Output = ScheduleListOutput;

    fn prompt_hint(&self) -> &str {
        "Use schedule_list to see this session's scheduled tasks before creating or deleting one."
    }

    fn present(&self, _args: &ScheduleListArgs) -> CallPresentation {
        CallPresentation::new("List the schedules", "")
    }

    fn before_detail(&self, _args: &ScheduleListArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &ScheduleListArgs,
        result: &ToolResult<ScheduleListOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(
        &self,
        _args: ScheduleListArgs,
        cx: &ToolContext,
    ) -> ToolResult<ScheduleListOutput> {
        let service = ScheduleService::of(cx)?;
        Ok(ScheduleListOutput {
            schedules: service.list().await?,
        })
    }

    fn content(&self, output: &ScheduleListOutput) -> Vec<ContentBlock> {
        let text = match output.schedules.as_slice() {
            [] => "This session has no schedule.".to_string(),
            schedules => schedules
                .iter()
                .map(record_text)
                .collect::<Vec<_>>()
                .join("\n\n"),
        };
        vec![ContentBlock::text(text)]
    }
}

/// Delete one of this session's schedules: it fires no more (a run under way finishes).
#[derive(qilin_tool::Tool)]
#[tool(name = "schedule_delete")]
pub struct ScheduleDelete;

/// Arguments of `schedule_delete`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleDeleteArgs {
    /// The schedule's id, as `schedule_list` gives it.
    pub id: String,
}

impl Tool for ScheduleDelete {
    type Args = ScheduleDeleteArgs;
    type Output = ScheduleOutput;

    fn prompt_hint(&self) -> &str {
        "Use schedule_delete when the user no longer wants a scheduled task."
    }

    fn present(&self, args: &ScheduleDeleteArgs) -> CallPresentation {
        CallPresentation::new("Delete a schedule", args.id.clone())
    }

    fn before_detail(&self, _args: &ScheduleDeleteArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &ScheduleDeleteArgs,
        result: &ToolResult<ScheduleOutput>,
    ) -> Option<Detail> {
        result.as_ref().err().map(|error| Detail::Text {
            text: error.message.clone(),
        })
    }

    async fn call(&self, args: ScheduleDeleteArgs, cx: &ToolContext) -> ToolResult<ScheduleOutput> {
        let service = ScheduleService::of(cx)?;
        let schedule = service.delete(&args.id).await?;
        cx.session().events().emit(crate::deleted_event(&schedule));
        Ok(ScheduleOutput { schedule })
    }

    fn content(&self, output: &ScheduleOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "Deleted schedule {}: it fires no more.",
            output.schedule.id
        ))]
    }
}

/// A schedule for the model: its id, timing, status, next fires and last run.
fn record_text(schedule: &ScheduleRecord) -> String {
    let mut text = format!(
        "Schedule {} ({}): {}\nPrompt: {}",
        schedule.id,
        schedule.status.as_str(),
        schedule.description,
        schedule.prompt
    );
    if !schedule.next_fires.is_empty() {
        text.push_str(&format!(
            "\nNext fires (UTC): {}",
            schedule.next_fires.join(", ")
        ));
    }
    if let Some(run) = &schedule.last_run {
        text.push_str(&format!(
            "\nLast run: for {}, {}{}",
            run.fire_time,
            run.outcome.as_str(),
            run.message
                .as_deref()
                .map(|message| format!(" ({message})"))
                .unwrap_or_default()
        ));
    }
    text
}
