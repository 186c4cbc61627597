//! Renders events as lines: assistant text (streamed as it arrives, its Markdown rendered when
//! a block completes), one line per finished call with its status glyph, presentation and
//! elapsed time, details (shell output head and tail, diffs with counts), code-mode calls
//! indented under their `run_code`, a summary of each turn — and, on a terminal, a live region
//! at the bottom: the text of the block being written, a "thinking…" line while the model has
//! not answered, and a spinner for each running call. Every live line is cut to the measured
//! width of the terminal, so redrawing it never leaves a line behind.

use super::markdown;
use super::sanitize::{sanitized, visible};
use super::style::{SPINNER, Style};
use super::text::{truncate, width, wrap};
use crate::config::{Price, dollars};
use qilin_protocol::agents::ChildRecord;
use qilin_protocol::goals::{GoalRecord, GoalStatus, PauseCause};
use qilin_protocol::loops::{IterationStatus, LoopStopReason};
use qilin_protocol::review::{AutoReviewRecord, ReviewFallback, ReviewVerdict};
use qilin_protocol::workflows::{WorkflowRun, WorkflowStep, WorkflowStepKind};
use qilin_protocol::{
    CallPresentation, CallStatus, ContentBlock, Detail, Event, EventBody, FinishReason,
    ToolPreparingEvent, ToolProgressEvent, ToolResultEvent, ToolStartEvent, Usage,
};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

const DETAIL_LINES: usize = 6;
const DIFF_LINES: usize = 30;
/// The columns assumed when a terminal does not say its size.
const FALLBACK_COLUMNS: usize = 80;
/// The rows assumed when a terminal does not say its size.
const FALLBACK_ROWS: usize = 24;

struct Running {
    call_id: String,
    depth: usize,
    presentation: CallPresentation,
    started: Instant,
    last_output: String,
}

/// A child (subagent) running, shown by a live line: a background one until its
/// `agent.finished`, a foreground one until its `agent` call's result.
struct LiveChild {
    session_id: String,
    /// The parent's `agent` call that started it.
    call_id: String,
    background: bool,
    /// `agent NAME · description`.
    label: String,
    started: Instant,
    /// The calls running in the child's own session (id and tool), oldest first, from its
    /// events fed with [`TerminalRenderer::handle_child`].
    calls: Vec<(String, String)>,
    /// A teammate between turns: alive, waiting for a message to start its next turn.
    idle: bool,
    /// Cancelled when the line goes, so whatever follows the child's events stops.
    gone: CancellationToken,
}

impl Drop for LiveChild {
    fn drop(&mut self) {
        self.gone.cancel();
    }
}

impl LiveChild {
    /// The tool of the child's latest running call, if one runs.
    fn current_call(&self) -> Option<&str> {
        self.calls.last().map(|(_, tool)| tool.as_str())
    }
}

/// What the model is doing before its first visible output of a step.
struct Waiting {
    since: Instant,
    /// The last line of reasoning the model streamed, if it streams any.
    reasoning: String,
    /// Reasoning was streamed in this step.
    reasoned: bool,
}

/// A terminal's size in columns and rows: measured on every draw, or fixed (tests).
#[derive(Debug, Clone)]
pub enum Size {
    /// Ask the terminal (standard output) each time.
    Measured,
    /// Always these columns and rows.
    #[cfg(test)]
    Fixed {
        /// Columns.
        columns: usize,
        /// Rows.
        rows: usize,
    },
    /// Columns the test changes as it goes (a resize), and fixed rows.
    #[cfg(test)]
    Changing {
        /// Columns now.
        columns: std::sync::Arc<std::sync::atomic::AtomicUsize>,
        /// Rows.
        rows: usize,
    },
}

impl Size {
    fn get(&self) -> (usize, usize) {
        match self {
            #[cfg(test)]
            Size::Fixed { columns, rows } => ((*columns).max(10), (*rows).max(3)),
            #[cfg(test)]
            Size::Changing { columns, rows } => (
                columns.load(std::sync::atomic::Ordering::SeqCst).max(10),
                (*rows).max(3),
            ),
            Size::Measured => match crossterm::terminal::size() {
                Ok((columns, rows)) if columns > 0 && rows > 0 => {
                    (usize::from(columns).max(10), usize::from(rows).max(3))
                }
                _ => (FALLBACK_COLUMNS, FALLBACK_ROWS),
            },
        }
    }
}

/// What the turn has used so far, for its summary line.
#[derive(Default)]
struct TurnTally {
    started: Option<String>,
    steps: u32,
    usage: Usage,
    /// What its steps cost, when the model's price is known.
    cost: f64,
    /// The tokens of the children (subagents) that ended in the turn.
    children: Usage,
    /// How many children ended in the turn.
    child_count: u32,
}

/// The line a child (subagent) leaves when it ends: its agent, description, status, steps,
/// tokens and time.
fn child_line(record: &ChildRecord) -> String {
    let who = match &record.name {
        Some(name) => format!("{} {name}", record.agent),
        None => record.agent.clone(),
    };
    let usage = Usage {
        input_tokens: record.usage.input_tokens,
        output_tokens: record.usage.output_tokens,
        cache_read_tokens: record.usage.cache_read_tokens,
        cache_write_tokens: record.usage.cache_write_tokens,
    };
    format!(
        "agent {who} · {} — {} · {} step{} · {} · {:.1}s",
        record.description,
        record.status.as_str(),
        record.steps,
        if record.steps == 1 { "" } else { "s" },
        usage_summary(&usage),
        record.duration_ms as f64 / 1000.0
    )
}

/// A goal on one line: `goal · paused (stalled) — objective · 1200 of 50000 tokens, 30 s, 2
/// turns`.
pub(crate) fn goal_line(goal: &GoalRecord) -> String {
    let status = match (goal.status, goal.paused_because) {
        (GoalStatus::Paused, Some(PauseCause::User)) => "paused (by the user)",
        (GoalStatus::Paused, Some(PauseCause::Stalled)) => "paused (stalled)",
        (GoalStatus::Paused, Some(PauseCause::Restart)) => "paused (after a restart)",
        (status, _) => status.as_str(),
    };
    let of = |used: u64, bound: Option<u64>| match bound {
        Some(bound) => format!("{used} of {bound}"),
        None => used.to_string(),
    };
    format!(
        "goal · {status} — {} · {} tokens, {} s, {} turns",
        truncate(&goal.objective.replace('\n', " "), 80),
        of(goal.usage.tokens, goal.budget.tokens),
        of(goal.usage.seconds, goal.budget.seconds),
        of(
            u64::from(goal.usage.turns),
            goal.budget.turns.map(u64::from)
        ),
    )
}

/// A workflow run's first line: `⚙ workflow review (run wf1) — description`.
fn workflow_started_line(run: &WorkflowRun) -> String {
    match &run.description {
        Some(description) => format!(
            "⚙ workflow {} (run {}) — {}",
            run.workflow,
            run.run_id,
            truncate(&description.replace('\n', " "), 80)
        ),
        None => format!("⚙ workflow {} (run {})", run.workflow, run.run_id),
    }
}

/// A workflow step's line: a call when it ends (`  ✓ 2 agent · review the parser`), a
/// report section when added; a call that only started draws nothing (its card shows it).
fn workflow_step_line(step: &WorkflowStep) -> Option<String> {
    match step.kind {
        WorkflowStepKind::Call => {
            let status = step.status.as_deref().unwrap_or("running");
            let mark = match status {
                "running" => return None,
                "ok" => "✓",
                "interrupted" => "⏹",
                _ => "✗",
            };
            let tool = step.tool.as_deref().unwrap_or("call");
            let label = if step.title == tool {
                tool.to_string()
            } else {
                format!("{tool} · {}", truncate(&step.title.replace('\n', " "), 60))
            };
            let replayed = if step.replayed { " (replayed)" } else { "" };
            Some(format!(
                "  {mark} step {} {label} {status}{replayed}",
                step.index
            ))
        }
        WorkflowStepKind::Report => Some(format!(
            "  § step {} report: {}",
            step.index,
            truncate(&step.title.replace('\n', " "), 80)
        )),
    }
}

/// A workflow run's last line: `⚙ workflow review completed · 4 steps · 1.2s`, with the error
/// when it did not complete.
fn workflow_finished_line(run: &WorkflowRun) -> String {
    let steps = run.steps.len();
    let mut line = format!(
        "⚙ workflow {} {} · {} step{} · {:.1}s",
        run.workflow,
        run.status.as_str(),
        steps,
        if steps == 1 { "" } else { "s" },
        run.duration_ms.unwrap_or(0) as f64 / 1000.0
    );
    if let Some(error) = &run.error {
        line.push_str(&format!(" — {}", truncate(&error.replace('\n', " "), 100)));
    }
    line
}

/// What the session's turns shown here have used, for `/cost`.
#[derive(Default)]
struct SessionTally {
    usage: Usage,
    /// The cost of the steps whose model's price was known.
    cost: f64,
    /// Steps of a model without a price, left out of `cost`.
    unpriced_steps: u32,
}

impl SessionTally {
    /// Counts one model request's `usage`, priced by `price` when the model has one; returns
    /// its cost.
    fn add(&mut self, usage: &Usage, price: Option<Price>) -> f64 {
        add_usage(&mut self.usage, usage);
        match price {
            Some(price) => {
                let cost = price.cost(usage);
                self.cost += cost;
                cost
            }
            None => {
                self.unpriced_steps += 1;
                0.0
            }
        }
    }
}

/// Draws a session's events on a terminal (or any writer).
pub struct TerminalRenderer {
    style: Style,
    size: Size,
    out: Box<dyn Write + Send>,
    /// Where a turn's ending and summary go when the output is not a terminal (standard
    /// error, so a piped answer holds only the answer); `out` when unset.
    notices: Option<Box<dyn Write + Send>>,
    running: Vec<Running>,
    /// The background children running, oldest first.
    children: Vec<LiveChild>,
    /// The goal's id and status as last shown (a line is drawn when either changes).
    goal: Option<(String, GoalStatus)>,
    /// The reviewer's judgement of calls not yet ended, by call id: shown under the call.
    reviews: HashMap<String, AutoReviewRecord>,
    depth: HashMap<String, usize>,
    presentations: HashMap<String, CallPresentation>,
    headed: HashSet<String>,
    /// Assistant text not written above the live region yet.
    text: String,
    /// A text block was written since the last call line (the next one gets a blank line).
    after_text_block: bool,
    waiting: Option<Waiting>,
    tally: TurnTally,
    total: SessionTally,
    /// The price of the session's model, when the configuration gives it.
    price: Option<Price>,
    /// The display widths of the live lines on screen, and the columns they were drawn at.
    live: Vec<usize>,
    live_columns: usize,
    frame: usize,
}

impl TerminalRenderer {
    /// A renderer writing to `out` in `style`, measuring the terminal on every draw.
    pub fn new(style: Style, out: Box<dyn Write + Send>) -> Self {
        Self::with_size(style, Size::Measured, out)
    }

    /// A renderer for a terminal of `size`.
    pub(crate) fn with_size(style: Style, size: Size, out: Box<dyn Write + Send>) -> Self {
        TerminalRenderer {
            style,
            size,
            out,
            notices: None,
            running: Vec::new(),
            children: Vec::new(),
            goal: None,
            reviews: HashMap::new(),
            depth: HashMap::new(),
            presentations: HashMap::new(),
            headed: HashSet::new(),
            text: String::new(),
            after_text_block: false,
            waiting: None,
            tally: TurnTally::default(),
            total: SessionTally::default(),
            price: None,
            live: Vec::new(),
            live_columns: 0,
            frame: 0,
        }
    }

    /// Starts counting a new session's tokens and cost; `price` is its model's, if known.
    pub fn start_session(&mut self, price: Option<Price>) {
        self.total = SessionTally::default();
        self.price = price;
    }

    /// The tokens and cost of the session's turns shown so far: `/cost`. The cost is left
    /// out when no step had a price, and said to be partial when some had none.
    pub fn session_summary(&self) -> String {
        let total = &self.total;
        let mut summary = format!("this session: {}", usage_summary(&total.usage));
        let priced = self.price.is_some() || total.cost > 0.0;
        if priced {
            summary.push_str(&format!(" · {}", dollars(total.cost)));
            if total.unpriced_steps > 0 {
                summary.push_str(&format!(
                    " (without {} step{} of a model with no price)",
                    total.unpriced_steps,
                    if total.unpriced_steps == 1 { "" } else { "s" }
                ));
            }
        }
        summary
    }

    /// Whether the session's model has a price (its turns show their cost).
    pub fn priced(&self) -> bool {
        self.price.is_some()
    }

    /// Sends a turn's ending and summary to `notices` when the output is not a terminal.
    pub fn with_notices(mut self, notices: Box<dyn Write + Send>) -> Self {
        self.notices = Some(notices);
        self
    }

    /// The style lines are drawn in.
    pub fn style(&self) -> Style {
        self.style
    }

    /// The columns a line may take: the terminal's when live, unlimited when piped.
    pub fn columns(&self) -> Option<usize> {
        self.style.live.then(|| self.size.get().0)
    }

    /// Renders one event; every string from the model or a tool in it is made visible first
    /// (control and escape sequences shown, never executed).
    pub fn handle(&mut self, event: &Event) {
        let event = sanitized(event);
        match &event.body {
            EventBody::SessionStarted(_)
            | EventBody::RequestResolved(_)
            | EventBody::AgentDelivered(_)
            | EventBody::AgentMessage(_)
            | EventBody::TaskCreated(_)
            | EventBody::TaskUpdated(_) => {}
            EventBody::AgentStarted(started) => {
                let who = match &started.name {
                    Some(name) => format!("{} {name}", started.agent),
                    None => started.agent.clone(),
                };
                self.children.push(LiveChild {
                    session_id: started.child_session_id.clone(),
                    call_id: started.call_id.clone(),
                    background: started.background,
                    label: format!("agent {who} · {}", started.description),
                    started: Instant::now(),
                    calls: Vec::new(),
                    idle: false,
                    gone: CancellationToken::new(),
                });
                self.redraw();
            }
            EventBody::AgentFinished(finished) => {
                self.children
                    .retain(|child| child.session_id != finished.child_session_id);
                self.count_child(&finished.record);
                let line = self.style.dim(&child_line(&finished.record));
                self.flush_text();
                self.after_text_block = false;
                self.permanent(vec![line]);
            }
            EventBody::GoalCreated(created) => self.show_goal(&created.goal, None),
            EventBody::GoalUpdated(updated) => self.show_goal(&updated.goal, Some(&updated.reason)),
            EventBody::LoopStarted(started) => self.show_line(format!(
                "↻ loop {} started: up to {} iterations",
                started.record.loop_id, started.record.max_iterations
            )),
            EventBody::LoopIteration(iteration) => {
                if iteration.iteration.status != IterationStatus::Running {
                    self.show_line(format!(
                        "↻ loop {} {}",
                        iteration.loop_id,
                        iteration.iteration.one_line()
                    ));
                }
            }
            EventBody::LoopFinished(finished) => self.show_line(format!(
                "↻ loop {} finished: {}",
                finished.record.loop_id,
                finished
                    .record
                    .stop_reason
                    .map(LoopStopReason::as_str)
                    .unwrap_or("stopped")
            )),
            EventBody::ScheduleCreated(created) => self.show_line(format!(
                "⏲ schedule {}: {}",
                created.schedule.id, created.schedule.description
            )),
            EventBody::ScheduleDeleted(deleted) => {
                self.show_line(format!("⏲ schedule {} deleted", deleted.schedule_id))
            }
            EventBody::ScheduleFired(fired) => self.show_line(format!(
                "⏲ schedule {} fired (run for {})",
                fired.schedule_id, fired.run.fire_time
            )),
            EventBody::ScheduleFinished(finished) => self.show_line(format!(
                "⏲ schedule {} run ended: {}",
                finished.schedule_id,
                finished.run.outcome.as_str()
            )),
            EventBody::ToolReviewed(reviewed) => {
                self.reviews
                    .insert(reviewed.call_id.clone(), reviewed.review.clone());
            }
            EventBody::ReviewGranted(granted) => {
                if granted.grant.used_by.is_none() {
                    self.show_line(format!(
                        "✓ you allowed {} once (call {})",
                        granted.grant.tool_name, granted.grant.call_id
                    ));
                }
            }
            EventBody::WorkflowStarted(started) => {
                self.show_line(workflow_started_line(&started.run))
            }
            EventBody::WorkflowStep(step) => {
                if let Some(line) = workflow_step_line(&step.step) {
                    self.show_line(line);
                }
            }
            EventBody::WorkflowFinished(finished) => {
                self.show_line(workflow_finished_line(&finished.run))
            }
            EventBody::ReviewCircuitOpen(open) => {
                let line = self.style.yellow(&format!("⏸ {}", open.message));
                self.flush_text();
                self.after_text_block = false;
                self.permanent(vec![line]);
            }
            // `/compact` says what it did; the summary's tokens count in `/cost`.
            EventBody::ContextCompacted(compacted) => {
                self.total.add(&compacted.usage, self.price);
            }
            EventBody::TurnStarted { .. } => self.start_turn(&event.time),
            EventBody::StepStarted { .. } => self.start_step(),
            EventBody::StepReasoningDelta { text, .. } => self.add_reasoning(text),
            EventBody::StepReasoningEnd { .. } => {}
            EventBody::RequestOpened(_) => self.flush_text(),
            EventBody::StepTextDelta { text, .. } => self.add_text(text),
            EventBody::StepFinished { usage, .. } => self.finish_step(usage),
            EventBody::ToolPreparing(preparing) => self.prepare_call(preparing),
            EventBody::ToolStart(start) => self.start_call(start),
            EventBody::ToolProgress(progress) => self.show_progress(progress),
            EventBody::ToolResult(result) => self.finish_call(result),
            EventBody::TurnFinished {
                reason, message, ..
            } => self.finish_turn(*reason, message.as_deref(), &event.time),
        }
    }

    /// Shows one dim line of the session's own record: a schedule's, a loop's or a workflow
    /// run's event, a grant used once.
    fn show_line(&mut self, line: String) {
        let line = self.style.dim(&line);
        self.flush_text();
        self.after_text_block = false;
        self.permanent(vec![line]);
    }

    /// A goal's line, when it is new or its status changed (a turn's accounting alone draws
    /// nothing: the turn's summary shows its tokens).
    fn show_goal(&mut self, goal: &GoalRecord, reason: Option<&str>) {
        let seen = Some((goal.id.clone(), goal.status));
        if self.goal == seen {
            return;
        }
        self.goal = seen;
        let line = match reason {
            Some(reason) => format!("{} · {reason}", goal_line(goal)),
            None => goal_line(goal),
        };
        let line = self.style.dim(&line);
        self.flush_text();
        self.after_text_block = false;
        self.permanent(vec![line]);
    }

    /// A turn started at `time`: its tally starts afresh.
    fn start_turn(&mut self, time: &str) {
        self.tally = TurnTally {
            started: Some(time.to_string()),
            ..TurnTally::default()
        };
    }

    /// The model is asked: the live region waits for its answer.
    fn start_step(&mut self) {
        self.waiting = Some(Waiting {
            since: Instant::now(),
            reasoning: String::new(),
            reasoned: false,
        });
        self.redraw();
    }

    /// Reasoning streamed: the live region shows its last non-empty line.
    fn add_reasoning(&mut self, text: &str) {
        if let Some(waiting) = &mut self.waiting {
            waiting.reasoned = true;
            waiting.reasoning.push_str(text);
            if let Some(last) = waiting
                .reasoning
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
            {
                waiting.reasoning = last.trim().to_string();
            }
            self.redraw();
        }
    }

    /// Answer text streamed: its complete lines are written above the live region.
    fn add_text(&mut self, text: &str) {
        self.end_waiting();
        self.text.push_str(text);
        self.write_complete_text();
    }

    /// A step ended: its text is written whole, its tokens and cost counted.
    fn finish_step(&mut self, usage: &Usage) {
        self.end_waiting();
        self.flush_text();
        self.tally.steps += 1;
        add_usage(&mut self.tally.usage, usage);
        self.tally.cost += self.total.add(usage, self.price);
        self.redraw();
    }

    /// A call's arguments streamed: the call is shown as preparing, named as the runtime
    /// presents its arguments so far (the raw tool name until it does).
    fn prepare_call(&mut self, preparing: &ToolPreparingEvent) {
        self.end_waiting();
        self.flush_text();
        let index = match self
            .running
            .iter()
            .position(|r| r.call_id == preparing.call_id)
        {
            Some(index) => index,
            None => {
                self.running.push(Running {
                    call_id: preparing.call_id.clone(),
                    depth: 0,
                    presentation: CallPresentation::new(&preparing.tool_name, "preparing…"),
                    started: Instant::now(),
                    last_output: String::new(),
                });
                self.running.len() - 1
            }
        };
        if let Some(presentation) = &preparing.presentation {
            self.running[index].presentation = presentation.clone();
        }
        self.redraw();
    }

    /// A call started: it runs in the live region, under its parent's heading when it has one.
    fn start_call(&mut self, start: &ToolStartEvent) {
        self.end_waiting();
        self.flush_text();
        let depth = match &start.parent_call_id {
            Some(parent) => {
                self.head_parent(parent);
                self.depth.get(parent).map_or(0, |d| d + 1)
            }
            None => 0,
        };
        self.depth.insert(start.call_id.clone(), depth);
        self.presentations
            .insert(start.call_id.clone(), start.presentation.clone());
        match self.running.iter_mut().find(|r| r.call_id == start.call_id) {
            Some(running) => {
                running.presentation = start.presentation.clone();
                running.depth = depth;
            }
            None => self.running.push(Running {
                call_id: start.call_id.clone(),
                depth,
                presentation: start.presentation.clone(),
                started: Instant::now(),
                last_output: String::new(),
            }),
        }
        self.redraw();
    }

    /// A running call printed: the live region shows its last non-empty line.
    fn show_progress(&mut self, progress: &ToolProgressEvent) {
        if let Some(running) = self
            .running
            .iter_mut()
            .find(|r| r.call_id == progress.call_id)
            && let Some(line) = progress.text.lines().rev().find(|l| !l.trim().is_empty())
        {
            running.last_output = line.trim().to_string();
            self.redraw();
        }
    }

    /// A token cancelled when the live line of child session `id` goes (the child ended, or
    /// its foreground call returned); `None` when it has none. Whatever feeds the line with
    /// [`TerminalRenderer::handle_child`] stops on it — a teammate's line lives across its
    /// turns, with nothing to read while it is idle.
    pub fn child_line_gone(&self, id: &str) -> Option<CancellationToken> {
        self.children
            .iter()
            .find(|child| child.session_id == id)
            .map(|child| child.gone.clone())
    }

    /// Renders one event of the running child session `id` on its live line: the tool of the
    /// call it runs now, or that it is idle (a teammate between turns). Its other events stay
    /// in its own session.
    pub fn handle_child(&mut self, id: &str, event: &Event) {
        let Some(child) = self
            .children
            .iter_mut()
            .find(|child| child.session_id == id)
        else {
            return;
        };
        match &event.body {
            EventBody::ToolStart(start) => {
                let tool = visible(&start.tool_name).into_owned();
                child.calls.push((start.call_id.clone(), tool));
            }
            EventBody::ToolResult(result) => {
                child.calls.retain(|(call, _)| call != &result.call_id);
            }
            EventBody::TurnStarted { .. } => {
                // A teammate woken by a message: its line times the new turn.
                if child.idle {
                    child.started = Instant::now();
                }
                child.idle = false;
            }
            EventBody::TurnFinished { .. } => {
                child.calls.clear();
                child.idle = true;
            }
            _ => return,
        }
        self.redraw();
    }

    /// A call ended: it leaves the live region and its result is written above it.
    fn finish_call(&mut self, result: &ToolResultEvent) {
        self.running.retain(|r| r.call_id != result.call_id);
        // A foreground child's line goes with its call (its result line sums it up).
        self.children
            .retain(|child| child.background || child.call_id != result.call_id);
        let lines = self.result_lines(result);
        self.reviews.remove(&result.call_id);
        // A foreground child's tokens come back with its call.
        if result.tool_name == "agent"
            && let Some(record) = result
                .output
                .clone()
                .and_then(|output| serde_json::from_value::<ChildRecord>(output).ok())
            && record.status.ended()
        {
            self.count_child(&record);
        }
        self.after_text_block = false;
        self.permanent(lines);
    }

    /// Counts the tokens of a child that ended into the turn and the session, priced as the
    /// session's own model (a child's own model may differ; its session's log has its steps).
    fn count_child(&mut self, record: &ChildRecord) {
        let usage = Usage {
            input_tokens: record.usage.input_tokens,
            output_tokens: record.usage.output_tokens,
            cache_read_tokens: record.usage.cache_read_tokens,
            cache_write_tokens: record.usage.cache_write_tokens,
        };
        add_usage(&mut self.tally.children, &usage);
        self.tally.child_count += 1;
        add_usage(&mut self.total.usage, &usage);
        if let Some(price) = self.price {
            let cost = price.cost(&usage);
            self.total.cost += cost;
            self.tally.cost += cost;
        }
    }

    /// A turn ended at `time`: how it ended (unless it completed) and its summary, written
    /// above the live region — or to the notices when the output is not a terminal.
    fn finish_turn(&mut self, reason: FinishReason, message: Option<&str>, time: &str) {
        self.waiting = None;
        self.flush_text();
        let mut lines: Vec<String> = self.ending_line(reason, message).into_iter().collect();
        lines.push(self.style.dim(&self.turn_summary(time)));
        self.after_text_block = false;
        match (&mut self.notices, self.style.live) {
            (Some(notices), false) => {
                let _ = self.out.flush();
                for line in lines {
                    let _ = writeln!(notices, "{line}");
                }
                let _ = notices.flush();
            }
            _ => self.permanent(lines),
        }
    }

    /// The line saying how a turn ended, with the `message` it ended with; none for a turn
    /// that completed.
    fn ending_line(&self, reason: FinishReason, message: Option<&str>) -> Option<String> {
        match reason {
            FinishReason::Completed => None,
            FinishReason::MaxSteps => Some(self.style.yellow(&format!(
                "■ stopped: the agent reached its step limit{} (raise `limits.max_steps` \
                 in the agent file)",
                message.map(|m| format!(" ({m})")).unwrap_or_default()
            ))),
            FinishReason::Interrupted => Some(self.style.yellow("■ interrupted")),
            FinishReason::MaxTokens => Some(self.style.yellow(&format!(
                "■ stopped: the answer reached the model's token limit{}",
                message.map(|m| format!(" ({m})")).unwrap_or_default()
            ))),
            FinishReason::Refused => Some(self.style.yellow(&format!(
                "■ the model refused{}",
                message.map(|m| format!(": {m}")).unwrap_or_default()
            ))),
            FinishReason::Error => Some(self.style.red(&format!(
                "✗ the turn failed: {}",
                message.unwrap_or("unknown error")
            ))),
        }
    }

    /// Advances the spinners and clocks (call it every ~80 ms while a turn runs).
    pub fn tick(&mut self) {
        self.frame = self.frame.wrapping_add(1);
        if !self.running.is_empty() || self.waiting.is_some() {
            self.redraw();
        }
    }

    /// Clears the live region and writes what is left, before the program prints anything
    /// else or exits.
    pub fn finish(&mut self) {
        self.waiting = None;
        self.flush_text();
        self.clear_live();
        let _ = self.out.flush();
    }

    /// Clears the live region so that something else (a question) can use the terminal;
    /// the next event or tick draws it again.
    pub fn suspend(&mut self) {
        self.clear_live();
        let _ = self.out.flush();
    }

    fn end_waiting(&mut self) {
        if let Some(waiting) = self.waiting.take()
            && waiting.reasoned
        {
            let seconds = waiting.since.elapsed().as_secs_f64();
            let line = self.style.dim(&format!("∴ thought for {seconds:.1}s"));
            self.permanent(vec![line]);
        }
    }

    /// `12.3s · 2 steps · 1,200 tokens in (800 cached) · 310 out`, and `· $0.0123` when the
    /// model's price is known.
    fn turn_summary(&self, finished: &str) -> String {
        let seconds = self
            .tally
            .started
            .as_deref()
            .and_then(|started| {
                let started = chrono::DateTime::parse_from_rfc3339(started).ok()?;
                let finished = chrono::DateTime::parse_from_rfc3339(finished).ok()?;
                Some((finished - started).num_milliseconds().max(0) as f64 / 1000.0)
            })
            .unwrap_or(0.0);
        let steps = self.tally.steps;
        let mut summary = format!(
            "{seconds:.1}s · {steps} step{} · {}",
            if steps == 1 { "" } else { "s" },
            usage_summary(&self.tally.usage)
        );
        if self.tally.child_count > 0 {
            summary.push_str(&format!(
                " · {} agent{}: {}",
                self.tally.child_count,
                if self.tally.child_count == 1 { "" } else { "s" },
                usage_summary(&self.tally.children)
            ));
        }
        if self.price.is_some() {
            summary.push_str(&format!(" · {}", dollars(self.tally.cost)));
        }
        summary
    }

    /// On a terminal, writes the text blocks that are complete (ended by a blank line outside
    /// a code block) as rendered Markdown; piped, writes every complete line as it came.
    fn write_complete_text(&mut self) {
        if !self.style.live {
            if let Some(end) = self.text.rfind('\n') {
                let complete: String = self.text.drain(..=end).collect();
                let lines = complete.lines().map(str::to_string).collect();
                self.permanent(lines);
            }
            return;
        }
        match complete_blocks_end(&self.text) {
            Some(end) => {
                let complete: String = self.text.drain(..end).collect();
                self.write_block(&complete);
            }
            None => self.redraw(),
        }
    }

    fn flush_text(&mut self) {
        if self.text.trim().is_empty() {
            self.text.clear();
            return;
        }
        let rest = std::mem::take(&mut self.text);
        if self.style.live {
            self.write_block(&rest);
        } else {
            self.permanent(rest.lines().map(str::to_string).collect());
        }
    }

    fn write_block(&mut self, markdown: &str) {
        let (columns, _) = self.size.get();
        let rendered = markdown::render(markdown, &self.style, columns.saturating_sub(1));
        if rendered.is_empty() {
            return;
        }
        let mut lines = Vec::with_capacity(rendered.len() + 1);
        if self.after_text_block {
            lines.push(String::new());
        }
        lines.extend(rendered);
        self.after_text_block = true;
        self.permanent(lines);
    }

    /// A call whose code made a call gets a header line above its nested calls.
    fn head_parent(&mut self, parent: &str) {
        if self.headed.contains(parent) {
            return;
        }
        let Some(presentation) = self.presentations.get(parent).cloned() else {
            return;
        };
        self.headed.insert(parent.to_string());
        let depth = self.depth.get(parent).copied().unwrap_or(0);
        let line = format!(
            "{}{} {}",
            indent(depth),
            self.style.cyan("▸"),
            self.describe(&presentation)
        );
        self.after_text_block = false;
        self.permanent(vec![line]);
    }

    fn result_lines(&self, result: &ToolResultEvent) -> Vec<String> {
        let depth = self.depth.get(&result.call_id).copied().unwrap_or(0);
        let presentation = self
            .presentations
            .get(&result.call_id)
            .cloned()
            .unwrap_or_else(|| CallPresentation::new(&result.tool_name, ""));
        let failed_command = matches!(
            result.detail,
            Some(Detail::Shell { exit_code, .. }) if exit_code != Some(0)
        );
        let glyph = if failed_command {
            self.style.red("✗")
        } else {
            self.style.status_glyph(result.status)
        };
        // A language-server call says what it found on its line.
        let found = match (result.tool_name.as_str(), &result.output) {
            ("lsp", Some(output)) => {
                serde_json::from_value::<qilin_protocol::lsp::LspOutput>(output.clone())
                    .map(|output| format!(" → {}", qilin_lsp::result_summary(&output)))
                    .unwrap_or_default()
            }
            _ => String::new(),
        };
        let mut lines = vec![format!(
            "{}{glyph} {}{found}  {}",
            indent(depth),
            self.describe(&presentation),
            self.style.dim(&elapsed(result.duration_ms))
        )];
        let pad = indent(depth + 1);
        let detail_lines = match &result.detail {
            Some(detail) => self.detail_lines(detail, result.status),
            None if result.status != CallStatus::Ok => self
                .wrapped_lines(&error_text(&result.content), depth + 1)
                .into_iter()
                .map(|l| self.style.red(&l))
                .collect(),
            None => Vec::new(),
        };
        lines.extend(detail_lines.into_iter().map(|l| format!("{pad}{l}")));
        if let Some(review) = self.reviews.get(&result.call_id) {
            let line = review_line(review);
            lines.push(format!(
                "{pad}{}",
                match review.verdict {
                    ReviewVerdict::Allow => self.style.dim(&line),
                    _ => self.style.yellow(&line),
                }
            ));
        }
        lines
    }

    /// The lines showing `detail` under its call line (or in an approval's preview).
    pub(crate) fn detail_lines(&self, detail: &Detail, status: CallStatus) -> Vec<String> {
        match detail {
            Detail::Shell {
                output, exit_code, ..
            } => {
                let mut lines: Vec<String> = self
                    .head_and_tail(output, 5)
                    .into_iter()
                    .map(|l| self.style.dim(&l))
                    .collect();
                match exit_code {
                    Some(0) => {}
                    Some(code) => lines.push(self.style.red(&format!("exit code {code}"))),
                    None if status == CallStatus::Ok => {}
                    None => lines.push(self.style.red("killed by a signal")),
                }
                lines
            }
            Detail::Diff {
                path,
                diff,
                added,
                removed,
            } => {
                let mut lines = vec![format!(
                    "{} {} {}",
                    self.style.green(&format!("+{added}")),
                    self.style.red(&format!("−{removed}")),
                    path
                )];
                let body: Vec<&str> = diff
                    .lines()
                    .filter(|l| !l.starts_with("+++") && !l.starts_with("---"))
                    .collect();
                for line in body.iter().take(DIFF_LINES) {
                    let line = self.clip(line);
                    lines.push(match line.chars().next() {
                        Some('+') => self.style.green(&line),
                        Some('-') => self.style.red(&line),
                        Some('@') => self.style.cyan(&line),
                        _ => self.style.dim(&line),
                    });
                }
                if body.len() > DIFF_LINES {
                    lines.push(
                        self.style
                            .dim(&format!("… {} more lines", body.len() - DIFF_LINES)),
                    );
                }
                lines
            }
            Detail::Text { text } | Detail::Markdown { markdown: text } => {
                let paint = |l: &str| {
                    if status == CallStatus::Ok {
                        self.style.dim(l)
                    } else {
                        self.style.red(l)
                    }
                };
                let lines = match status {
                    CallStatus::Ok => self.first_lines(text),
                    _ => self.wrapped_lines(text, 1),
                };
                lines.into_iter().map(|l| paint(&l)).collect()
            }
            Detail::Code { .. } => Vec::new(),
            Detail::Json { value } => vec![self.style.dim(&self.clip(&value.to_string()))],
        }
    }

    /// The call's action in bold and its remark's first line.
    pub(crate) fn describe(&self, presentation: &CallPresentation) -> String {
        let remark = presentation.remark.lines().next().unwrap_or_default();
        if remark.is_empty() {
            self.style.bold(&presentation.action)
        } else {
            format!("{} {}", self.style.bold(&presentation.action), remark)
        }
    }

    /// A detail line cut to the terminal's width (less an indent's margin); whole when piped.
    fn clip(&self, line: &str) -> String {
        match self.columns() {
            Some(columns) => truncate(line, columns.saturating_sub(4).max(10)),
            None => line.to_string(),
        }
    }

    /// A message's first lines, wrapped (not cut) to the terminal's width under an indent of
    /// `depth`.
    fn wrapped_lines(&self, text: &str, depth: usize) -> Vec<String> {
        let all: Vec<&str> = text.lines().collect();
        let mut lines = Vec::new();
        for line in all.iter().take(DETAIL_LINES) {
            match self.columns() {
                Some(columns) => {
                    lines.extend(wrap(line, columns.saturating_sub(depth * 2 + 1), ""))
                }
                None => lines.push(line.to_string()),
            }
        }
        if all.len() > DETAIL_LINES {
            lines.push(format!("… {} more lines", all.len() - DETAIL_LINES));
        }
        lines
    }

    fn first_lines(&self, text: &str) -> Vec<String> {
        let all: Vec<&str> = text.lines().collect();
        let mut lines: Vec<String> = all
            .iter()
            .take(DETAIL_LINES)
            .map(|l| self.clip(l))
            .collect();
        if all.len() > DETAIL_LINES {
            lines.push(format!("… {} more lines", all.len() - DETAIL_LINES));
        }
        lines
    }

    /// The first and last `keep` lines of an output, with a count of what is between.
    fn head_and_tail(&self, output: &str, keep: usize) -> Vec<String> {
        let all: Vec<&str> = output.lines().collect();
        if all.len() <= keep * 2 + 1 {
            return all.iter().map(|l| self.clip(l)).collect();
        }
        let mut lines: Vec<String> = all[..keep].iter().map(|l| self.clip(l)).collect();
        lines.push(format!("… {} lines …", all.len() - keep * 2));
        lines.extend(all[all.len() - keep..].iter().map(|l| self.clip(l)));
        lines
    }

    /// Writes lines above the live region, then draws the live region again.
    fn permanent(&mut self, lines: Vec<String>) {
        if lines.is_empty() {
            return;
        }
        self.clear_live();
        for line in lines {
            let _ = writeln!(self.out, "{line}");
        }
        self.draw_live();
    }

    fn redraw(&mut self) {
        self.clear_live();
        self.draw_live();
    }

    /// Moves up over the live lines and erases down. A line drawn at more columns than the
    /// terminal has now takes as many rows as it wraps to (a terminal reflows on a resize).
    fn clear_live(&mut self) {
        if self.live.is_empty() {
            return;
        }
        let (columns, _) = self.size.get();
        let rows: usize = if columns >= self.live_columns {
            self.live.len()
        } else {
            self.live.iter().map(|w| w.div_ceil(columns).max(1)).sum()
        };
        let _ = write!(self.out, "\r");
        if rows > 0 {
            let _ = write!(self.out, "\x1b[{rows}A");
        }
        let _ = write!(self.out, "\x1b[J");
        self.live.clear();
    }

    /// The live region: the text block being written (its last lines, as many as fit), the
    /// "thinking…" line, a spinner line per running call — each cut to one row.
    /// A running child's live line after its spinner: `agent NAME · description · TOOL  3.2s
    /// in the background` (its current call's tool, when one runs).
    fn child_status(&self, child: &LiveChild) -> String {
        if child.idle {
            return format!(
                "{}  {}",
                child.label,
                self.style.dim("idle, waiting for a message")
            );
        }
        let seconds = child.started.elapsed().as_secs_f64();
        let current = match child.current_call() {
            Some(tool) => format!(" · {}", self.style.cyan(tool)),
            None => String::new(),
        };
        let when = match child.background {
            true => format!("{seconds:.1}s in the background"),
            false => format!("{seconds:.1}s"),
        };
        format!("{}{current}  {}", child.label, self.style.dim(&when))
    }

    fn live_lines(&self, columns: usize, rows: usize) -> Vec<String> {
        let frame = SPINNER[self.frame % SPINNER.len()];
        let line_columns = columns.saturating_sub(1);
        let mut lines = Vec::new();
        if let Some(waiting) = &self.waiting {
            let seconds = waiting.since.elapsed().as_secs_f64();
            let mut line = format!(
                "{} {}",
                self.style.cyan(frame),
                self.style.dim(&format!("thinking… {seconds:.1}s"))
            );
            if !waiting.reasoning.is_empty() {
                line.push_str("  ");
                line.push_str(&self.style.dim(&waiting.reasoning));
            }
            lines.push(line);
        }
        for running in &self.running {
            let seconds = running.started.elapsed().as_secs_f64();
            let mut line = format!(
                "{}{} {}  {}",
                indent(running.depth),
                self.style.cyan(frame),
                self.describe(&running.presentation),
                self.style.dim(&format!("{seconds:.1}s"))
            );
            if !running.last_output.is_empty() {
                line.push_str("  ");
                line.push_str(&self.style.dim(&running.last_output));
            }
            lines.push(line);
        }
        for child in &self.children {
            let mark = match child.idle {
                true => self.style.dim("·"),
                false => self.style.cyan(frame),
            };
            lines.push(format!("{mark} {}", self.child_status(child)));
        }
        // The text being written gets the rows the spinners leave, keeping one for the cursor.
        let room = rows.saturating_sub(lines.len() + 1);
        if room > 0 && !self.text.trim().is_empty() {
            let mut text_lines: Vec<String> = Vec::new();
            for line in self.text.trim_end_matches('\n').split('\n') {
                text_lines.extend(wrap(line, line_columns, ""));
            }
            let skip = text_lines.len().saturating_sub(room);
            let mut shown: Vec<String> = text_lines.split_off(skip);
            if self.after_text_block {
                shown.insert(0, String::new());
                if shown.len() > room {
                    shown.remove(0);
                }
            }
            shown.extend(lines);
            lines = shown;
        }
        lines
            .into_iter()
            .map(|line| truncate(&line, line_columns))
            .collect()
    }

    fn draw_live(&mut self) {
        if !self.style.live {
            let _ = self.out.flush();
            return;
        }
        let (columns, rows) = self.size.get();
        let lines = self.live_lines(columns, rows);
        for line in &lines {
            let _ = writeln!(self.out, "{line}");
        }
        self.live = lines.iter().map(|l| width(l)).collect();
        self.live_columns = columns;
        let _ = self.out.flush();
    }
}

/// Where the complete blocks of `text` end: after its last blank line outside a fenced code
/// block, or `None` when no block is complete yet.
fn complete_blocks_end(text: &str) -> Option<usize> {
    let mut fenced = false;
    let mut end = None;
    let mut offset = 0;
    let mut previous_blank = false;
    let mut saw_content = false;
    for line in text.split_inclusive('\n') {
        let complete = line.ends_with('\n');
        let trimmed = line.trim();
        if !complete {
            break;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
        }
        offset += line.len();
        let blank = trimmed.is_empty();
        if blank && !fenced && saw_content && !previous_blank {
            end = Some(offset);
        }
        saw_content |= !blank;
        previous_blank = blank;
    }
    end
}

/// `1,200 tokens in (800 cached) · 310 out`.
fn usage_summary(usage: &Usage) -> String {
    let mut summary = format!("{} tokens in", thousands(usage.input_tokens));
    if usage.cache_read_tokens > 0 {
        summary.push_str(&format!(" ({} cached)", thousands(usage.cache_read_tokens)));
    }
    summary.push_str(&format!(" · {} out", thousands(usage.output_tokens)));
    summary
}

fn add_usage(total: &mut Usage, usage: &Usage) {
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.cache_read_tokens += usage.cache_read_tokens;
    total.cache_write_tokens += usage.cache_write_tokens;
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn indent(depth: usize) -> String {
    "  ".repeat(depth)
}

fn elapsed(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

fn error_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The line a reviewed call shows under it: the reviewer's verdict, its risk and its reason.
fn review_line(review: &AutoReviewRecord) -> String {
    let risk = review
        .risk
        .map(|risk| format!(" ({})", risk.as_str()))
        .unwrap_or_default();
    let fallback = match review.fallback {
        Some(ReviewFallback::AskedPerson) => ", asked you",
        Some(ReviewFallback::UnattendedPolicy) => ", refused (nobody attends)",
        None => "",
    };
    match review.verdict {
        ReviewVerdict::Allow => format!(
            "reviewed by {}: allow{risk} — {}",
            review.reviewer, review.user_reason
        ),
        ReviewVerdict::Deny => format!(
            "denied by {}{risk}: {}",
            review.reviewer, review.user_reason
        ),
        ReviewVerdict::Failed => format!("review failed: {}{fallback}", review.user_reason),
        ReviewVerdict::TimedOut => format!("review timed out: {}{fallback}", review.user_reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn render(log: &str) -> String {
        let captured = Captured::default();
        let mut renderer = TerminalRenderer::new(Style::plain(), Box::new(captured.clone()));
        for line in log.lines().filter(|l| !l.trim().is_empty()) {
            let event: Event = serde_json::from_str(line).unwrap();
            renderer.handle(&event);
        }
        renderer.finish();
        let bytes = captured.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn an_lsp_call_says_what_it_found_on_its_line() {
        let log = r#"
{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}
{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"lsp","caller":"direct","arguments":{},"presentation":{"action":"LSP","remark":"definition src/app.py:12:5"}}
{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1","toolName":"lsp","caller":"direct","status":"ok","content":[],"output":{"operation":"definition","path":"src/app.py","line":12,"character":5,"items":[{"uri":"file:///w/src/m.py","path":"src/m.py","line":3,"character":5}],"total":1,"truncated":false},"durationMs":30}
{"seq":4,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c2","toolName":"lsp","caller":"direct","arguments":{},"presentation":{"action":"LSP","remark":"hover src/app.py:1:1"}}
{"seq":5,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c2","toolName":"lsp","caller":"direct","status":"ok","content":[],"output":{"operation":"hover","empty":{"reason":"no_server","message":"none"},"total":0,"truncated":false},"durationMs":2}
{"seq":6,"time":"2026-11-30T12:00:00.000Z","type":"turn.finished","turnId":"t1","reason":"completed"}
"#;
        let screen = render(log);
        assert!(
            screen.contains("✓ LSP definition src/app.py:12:5 → 1 location  30ms"),
            "{screen}"
        );
        assert!(
            screen.contains("✓ LSP hover src/app.py:1:1 → empty: no_server  2ms"),
            "{screen}"
        );
    }

    #[test]
    fn a_code_mode_turn_reads_as_a_nested_list() {
        let log = r#"
{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}
{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"step.text.delta","turnId":"t1","step":1,"text":"Let me look.\n"}
{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"run_code","caller":"direct","arguments":{},"presentation":{"action":"Run code","remark":"for f in files:"}}
{"seq":4,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1.1","toolName":"grep","caller":"code","parentCallId":"c1","arguments":{},"presentation":{"action":"Search","remark":"TODO"}}
{"seq":5,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1.1","toolName":"grep","caller":"code","parentCallId":"c1","status":"ok","content":[],"durationMs":4}
{"seq":6,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1.2","toolName":"read","caller":"code","parentCallId":"c1","arguments":{},"presentation":{"action":"Read","remark":"missing.rs"}}
{"seq":7,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1.2","toolName":"read","caller":"code","parentCallId":"c1","status":"error","errorCode":"TOOL_FAILED","content":[{"type":"text","text":"missing.rs does not exist"}],"durationMs":1}
{"seq":8,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1","toolName":"run_code","caller":"direct","status":"ok","content":[],"durationMs":1500}
{"seq":9,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c2","toolName":"bash","caller":"direct","arguments":{},"presentation":{"action":"Run command","remark":"cargo test"}}
{"seq":10,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c2","toolName":"bash","caller":"direct","status":"ok","content":[],"detail":{"type":"shell","command":"cargo test","output":"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n","exitCode":101},"durationMs":20}
{"seq":11,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c3","toolName":"edit","caller":"direct","arguments":{},"presentation":{"action":"Edit","remark":"src/a.rs"}}
{"seq":12,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c3","toolName":"edit","caller":"direct","status":"ok","content":[],"detail":{"type":"diff","path":"src/a.rs","diff":"--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-old\n+new\n","added":1,"removed":1},"durationMs":2}
{"seq":13,"time":"2026-11-30T12:00:00.000Z","type":"step.text.delta","turnId":"t1","step":2,"text":"Done"}
{"seq":14,"time":"2026-11-30T12:00:00.000Z","type":"turn.finished","turnId":"t1","reason":"completed"}
"#;
        let expected = "\
Let me look.
▸ Run code for f in files:
  ✓ Search TODO  4ms
  ✗ Read missing.rs  1ms
    missing.rs does not exist
✓ Run code for f in files:  1.5s
✗ Run command cargo test  20ms
  1
  2
  3
  4
  5
  … 2 lines …
  8
  9
  10
  11
  12
  exit code 101
✓ Edit src/a.rs  2ms
  +1 −1 src/a.rs
  @@ -1 +1 @@
  -old
  +new
Done
0.0s · 0 steps · 0 tokens in · 0 out
";
        assert_eq!(render(log), expected);
    }

    #[test]
    fn an_interrupted_turn_says_so() {
        let log = r#"
{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}
{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"bash","caller":"direct","arguments":{},"presentation":{"action":"Run command","remark":"sleep 100"}}
{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1","toolName":"bash","caller":"direct","status":"interrupted","errorCode":"INTERRUPTED","content":[{"type":"text","text":"The call was interrupted"}],"durationMs":300}
{"seq":4,"time":"2026-11-30T12:00:00.000Z","type":"turn.finished","turnId":"t1","reason":"interrupted"}
"#;
        assert_eq!(
            render(log),
            "■ Run command sleep 100  300ms\n  The call was interrupted\n■ interrupted\n\
             0.0s · 0 steps · 0 tokens in · 0 out\n"
        );
    }

    #[test]
    fn a_priced_model_s_turns_show_their_cost_and_the_session_adds_them_up() {
        let mut renderer = TerminalRenderer::new(Style::plain(), Box::new(Captured::default()));
        renderer.start_session(Some(Price {
            input: 2.0,
            output: 8.0,
            cached_input: Some(0.5),
        }));
        let step = r#"{"seq":2,"time":"2026-11-30T12:00:01.000Z","type":"step.finished","turnId":"t1","step":1,"usage":{"inputTokens":12034,"outputTokens":310,"cacheReadTokens":8000}}"#;
        let finished = r#"{"seq":3,"time":"2026-11-30T12:00:02.500Z","type":"turn.finished","turnId":"t1","reason":"completed"}"#;
        let started = r#"{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}"#;
        for line in [started, step] {
            renderer.handle(&serde_json::from_str(line).unwrap());
        }
        // 4,034 fresh input tokens at 2.0, 8,000 cached at 0.5, 310 out at 8.0 per million.
        assert_eq!(
            renderer.turn_summary("2026-11-30T12:00:02.500Z"),
            "2.5s · 1 step · 12,034 tokens in (8,000 cached) · 310 out · $0.0145"
        );
        renderer.handle(&serde_json::from_str(finished).unwrap());
        for line in [started, step, finished] {
            renderer.handle(&serde_json::from_str(line).unwrap());
        }
        assert_eq!(
            renderer.session_summary(),
            "this session: 24,068 tokens in (16,000 cached) · 620 out · $0.0291"
        );
        // A model without a price: tokens only, and the session's cost says what it leaves out.
        renderer.price = None;
        renderer.handle(&serde_json::from_str(step).unwrap());
        assert!(
            renderer
                .session_summary()
                .ends_with("· $0.0291 (without 1 step of a model with no price)"),
            "{}",
            renderer.session_summary()
        );
        renderer.start_session(None);
        assert_eq!(
            renderer.session_summary(),
            "this session: 0 tokens in · 0 out"
        );
    }

    #[test]
    fn a_running_background_child_has_a_live_line_until_it_ends() {
        let mut renderer = TerminalRenderer::new(Style::plain(), Box::new(Captured::default()));
        let started = r#"{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"agent.started","callId":"c1","childSessionId":"k2","agent":"general","description":"Run tests","name":"tester","background":true}"#;
        renderer.handle(&serde_json::from_str(started).unwrap());
        let live = renderer.live_lines(100, 10);
        assert_eq!(live.len(), 1, "{live:?}");
        assert!(
            live[0].contains("agent general tester · Run tests")
                && live[0].contains("s in the background"),
            "{live:?}"
        );
        let finished = r#"{"seq":2,"time":"2026-11-30T12:00:02.000Z","type":"agent.finished","childSessionId":"k2","record":{"sessionId":"k2","agent":"general","description":"Run tests","name":"tester","background":true,"status":"completed","steps":1,"usage":{"inputTokens":1,"outputTokens":1},"durationMs":2000}}"#;
        renderer.handle(&serde_json::from_str(finished).unwrap());
        assert!(renderer.live_lines(100, 10).is_empty());
    }

    #[test]
    fn a_teammate_s_line_says_idle_between_turns_and_follows_its_next_turn() {
        let mut renderer = TerminalRenderer::new(Style::plain(), Box::new(Captured::default()));
        let event = |line: &str| -> Event { serde_json::from_str(line).unwrap() };
        renderer.handle(&event(
            r#"{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"agent.started","callId":"c1","childSessionId":"k2","agent":"general","description":"Review","name":"reviewer","background":true}"#,
        ));
        let gone = renderer.child_line_gone("k2").expect("a live line");
        assert!(renderer.child_line_gone("k9").is_none());
        let line = |renderer: &TerminalRenderer| renderer.live_lines(200, 10).join("\n");
        let turn_started = r#"{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}"#;
        let turn_finished = r#"{"seq":3,"time":"2026-11-30T12:00:01.000Z","type":"turn.finished","turnId":"t1","reason":"completed"}"#;
        let tool_start = |call: &str, tool: &str| {
            format!(
                r#"{{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"{call}","toolName":"{tool}","caller":"direct","arguments":{{}},"presentation":{{"action":"Run","remark":"x"}}}}"#
            )
        };
        renderer.handle_child("k2", &event(turn_started));
        renderer.handle_child("k2", &event(&tool_start("x1", "grep")));
        assert!(
            line(&renderer).contains("Review · grep  "),
            "{}",
            line(&renderer)
        );
        // Its turn ends: the line stays, saying it waits, with no spinner and no call.
        renderer.handle_child("k2", &event(turn_finished));
        let idle = line(&renderer);
        assert!(
            idle.starts_with("· agent general reviewer · Review  idle, waiting for a message"),
            "{idle}"
        );
        assert!(!idle.contains("grep"), "{idle}");
        // A message wakes it: the next turn's calls show on the same line again.
        renderer.handle_child("k2", &event(turn_started));
        renderer.handle_child("k2", &event(&tool_start("x2", "bash")));
        let woken = line(&renderer);
        assert!(
            woken.contains("Review · bash  ") && woken.ends_with("s in the background"),
            "{woken}"
        );
        assert!(!woken.contains("idle"), "{woken}");
        assert!(!gone.is_cancelled());
        // It ends: the line goes, and whatever followed it is told to stop.
        renderer.handle(&event(
            r#"{"seq":2,"time":"2026-11-30T12:00:09.000Z","type":"agent.finished","childSessionId":"k2","record":{"sessionId":"k2","agent":"general","description":"Review","name":"reviewer","background":true,"status":"interrupted","steps":2,"usage":{"inputTokens":1,"outputTokens":1},"durationMs":9000}}"#,
        ));
        assert!(gone.is_cancelled());
        assert!(renderer.live_lines(200, 10).is_empty());
    }

    #[test]
    fn a_running_child_shows_its_current_call_and_a_foreground_one_goes_with_its_call() {
        let mut renderer = TerminalRenderer::new(Style::plain(), Box::new(Captured::default()));
        let feed = |renderer: &mut TerminalRenderer, line: &str| {
            renderer.handle(&serde_json::from_str(line).unwrap());
        };
        feed(
            &mut renderer,
            r#"{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"agent","caller":"direct","arguments":{},"presentation":{"action":"Run agent explore","remark":"Find it"}}"#,
        );
        feed(
            &mut renderer,
            r#"{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"agent.started","callId":"c1","childSessionId":"k1","agent":"explore","description":"Find it","background":false}"#,
        );
        feed(
            &mut renderer,
            r#"{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"agent.started","callId":"c2","childSessionId":"k2","agent":"general","description":"Run tests","name":"tester","background":true}"#,
        );
        let child_line = |renderer: &TerminalRenderer, label: &str| {
            renderer
                .live_lines(200, 20)
                .into_iter()
                .find(|line| line.contains(label))
        };
        let found = child_line(&renderer, "agent explore · Find it").expect("a live line");
        assert!(found.ends_with('s'), "elapsed, no call yet: {found:?}");
        assert!(!found.contains("background"), "{found:?}");
        // The child's own events: its running call's tool shows on its line while it runs.
        let child_event = |line: &str| -> Event { serde_json::from_str(line).unwrap() };
        renderer.handle_child(
            "k1",
            &child_event(
                r#"{"seq":5,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"x1","toolName":"grep","caller":"direct","arguments":{},"presentation":{"action":"Search","remark":"x"}}"#,
            ),
        );
        renderer.handle_child(
            "k2",
            &child_event(
                r#"{"seq":5,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"y1","toolName":"bash","caller":"direct","arguments":{},"presentation":{"action":"Run","remark":"x"}}"#,
            ),
        );
        let found = child_line(&renderer, "agent explore · Find it").unwrap();
        assert!(found.contains("Find it · grep  "), "{found:?}");
        let found = child_line(&renderer, "agent general tester · Run tests").unwrap();
        assert!(
            found.contains("Run tests · bash  ") && found.ends_with("s in the background"),
            "{found:?}"
        );
        renderer.handle_child(
            "k1",
            &child_event(
                r#"{"seq":6,"time":"2026-11-30T12:00:01.000Z","type":"tool.result","callId":"x1","toolName":"grep","caller":"direct","status":"ok","content":[],"durationMs":5}"#,
            ),
        );
        let found = child_line(&renderer, "agent explore · Find it").unwrap();
        assert!(!found.contains("grep"), "the call ended: {found:?}");
        assert!(renderer.child_line_gone("k1").is_some());
        // The foreground child's line goes with its call's result; the background one stays.
        feed(
            &mut renderer,
            r#"{"seq":7,"time":"2026-11-30T12:00:01.000Z","type":"tool.result","callId":"c1","toolName":"agent","caller":"direct","status":"ok","content":[{"type":"text","text":"found"}],"output":{"sessionId":"k1","agent":"explore","description":"Find it","background":false,"status":"completed","answer":"found","steps":2,"usage":{"inputTokens":1000,"outputTokens":100},"durationMs":900},"durationMs":900}"#,
        );
        assert!(renderer.child_line_gone("k1").is_none());
        assert!(child_line(&renderer, "agent explore").is_none());
        assert!(renderer.child_line_gone("k2").is_some());
        // Events of a child no longer shown are ignored.
        renderer.handle_child(
            "k1",
            &child_event(
                r#"{"seq":8,"time":"2026-11-30T12:00:01.000Z","type":"tool.start","callId":"x2","toolName":"read","caller":"direct","arguments":{},"presentation":{"action":"Read","remark":"x"}}"#,
            ),
        );
        assert!(renderer.child_line_gone("k1").is_none());
    }

    #[test]
    fn children_leave_a_summary_line_and_add_their_tokens_to_the_turn_and_cost() {
        let captured = Captured::default();
        let mut renderer = TerminalRenderer::new(Style::plain(), Box::new(captured.clone()));
        renderer.start_session(Some(Price {
            input: 2.0,
            output: 8.0,
            cached_input: None,
        }));
        let log = r#"
{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}
{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"step.started","turnId":"t1","step":1}
{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"agent","caller":"direct","arguments":{},"presentation":{"action":"Run agent explore","remark":"Find it"}}
{"seq":4,"time":"2026-11-30T12:00:00.000Z","type":"agent.started","callId":"c1","childSessionId":"k1","agent":"explore","description":"Find it","background":false}
{"seq":5,"time":"2026-11-30T12:00:01.000Z","type":"tool.result","callId":"c1","toolName":"agent","caller":"direct","status":"ok","content":[{"type":"text","text":"found"}],"output":{"sessionId":"k1","agent":"explore","description":"Find it","background":false,"status":"completed","answer":"found","steps":2,"usage":{"inputTokens":1000,"outputTokens":100},"durationMs":900},"durationMs":900}
{"seq":6,"time":"2026-11-30T12:00:01.000Z","type":"step.finished","turnId":"t1","step":1,"usage":{"inputTokens":500,"outputTokens":50,"cacheReadTokens":0}}
{"seq":7,"time":"2026-11-30T12:00:02.000Z","type":"agent.finished","childSessionId":"k2","record":{"sessionId":"k2","agent":"general","description":"Run tests","name":"tester","background":true,"status":"completed","answer":"ok","steps":3,"usage":{"inputTokens":2000,"outputTokens":200},"durationMs":4200}}
{"seq":8,"time":"2026-11-30T12:00:02.000Z","type":"turn.finished","turnId":"t1","reason":"completed"}
"#;
        for line in log.lines().filter(|line| !line.trim().is_empty()) {
            renderer.handle(&serde_json::from_str(line).unwrap());
        }
        let shown = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert!(
            renderer.children.is_empty(),
            "the ended child's live line is gone"
        );
        assert!(
            shown.contains(
                "agent general tester · Run tests — completed · 3 steps · 2,000 tokens in · 200 out · 4.2s"
            ),
            "{shown}"
        );
        // The turn: its own 500 + 50, its two children's 3,000 + 300; the cost of all of it.
        assert!(
            shown.contains(
                "2.0s · 1 step · 500 tokens in · 50 out · 2 agents: 3,000 tokens in · 300 out · $0.0098"
            ),
            "{shown}"
        );
        assert_eq!(
            renderer.session_summary(),
            "this session: 3,500 tokens in · 350 out · $0.0098"
        );
    }

    #[test]
    fn a_goal_gets_a_line_when_set_and_when_its_status_changes() {
        let goal = |status: &str, extra: &str, turns: u32| {
            format!(
                r#"{{"id":"goal-1","objective":"Every test passes","status":"{status}",{extra}"budget":{{"tokens":50000}},"usage":{{"tokens":1200,"seconds":30,"turns":{turns}}},"checks":[],"createdAt":"2026-11-30T12:00:00.000Z","updatedAt":"2026-11-30T12:00:00.000Z"}}"#
            )
        };
        let log = [
            format!(
                r#"{{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"goal.created","by":"user","goal":{}}}"#,
                goal("active", "", 0)
            ),
            format!(
                r#"{{"seq":2,"time":"2026-11-30T12:00:01.000Z","type":"goal.updated","by":"runtime","reason":"turn 1 of the goal ended","goal":{}}}"#,
                goal("active", "", 1)
            ),
            format!(
                r#"{{"seq":3,"time":"2026-11-30T12:00:02.000Z","type":"goal.updated","by":"runtime","reason":"paused: 3 turns changed nothing","goal":{}}}"#,
                goal("paused", r#""pausedBecause":"stalled","#, 4)
            ),
        ]
        .join("\n");
        let shown = render(&log);
        assert_eq!(
            shown,
            "goal · active — Every test passes · 1200 of 50000 tokens, 30 s, 0 turns\n\
             goal · paused (stalled) — Every test passes · 1200 of 50000 tokens, 30 s, 4 turns · \
             paused: 3 turns changed nothing\n",
            "a turn's accounting alone draws no line"
        );
    }

    #[test]
    fn escape_sequences_from_the_model_and_tools_are_shown_not_executed() {
        let log = r#"
{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}
{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"step.text.delta","turnId":"t1","step":1,"text":"Done\u001b]52;c;cm0gLXJmIH4=\u0007 \u001b[2J\n"}
{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"bash","caller":"direct","arguments":{},"presentation":{"action":"Run command","remark":"echo \u001b]0;pwned\u0007"}}
{"seq":4,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1","toolName":"bash","caller":"direct","status":"ok","content":[],"detail":{"type":"shell","command":"x","output":"ok\r\n\u001b[1A\u001b[Kforged line\r\n","exitCode":0},"durationMs":3}
{"seq":5,"time":"2026-11-30T12:00:00.000Z","type":"turn.finished","turnId":"t1","reason":"completed"}
"#;
        let shown = render(log);
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(!shown.contains('\u{7}'), "{shown:?}");
        assert_eq!(
            shown,
            "Done\\x1b]52;c;cm0gLXJmIH4=\\x07 \\x1b[2J\n\
             ✓ Run command echo \\x1b]0;pwned\\x07  3ms\n\
             \x20 ok\n\
             \x20 \\x1b[1A\\x1b[Kforged line\n\
             0.0s · 0 steps · 0 tokens in · 0 out\n"
        );
    }

    /// A terminal of `columns` × `rows` the renderer draws on, as `vt100` shows it.
    #[derive(Clone)]
    struct Screen(Arc<Mutex<vt100::Parser>>);

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            // A terminal's line discipline turns a line feed into a return and a line feed.
            let bytes: Vec<u8> = buf
                .iter()
                .flat_map(|&b| {
                    if b == b'\n' {
                        vec![b'\r', b'\n']
                    } else {
                        vec![b]
                    }
                })
                .collect();
            self.0.lock().unwrap().process(&bytes);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn event(seq: u64, json: &str) -> Event {
        let mut value: serde_json::Value = serde_json::from_str(json).unwrap();
        value["seq"] = seq.into();
        value["time"] = format!("2026-11-30T12:00:{:02}.000Z", seq.min(59)).into();
        serde_json::from_value(value).unwrap()
    }

    /// The screen's rows as they show, the blank ones at the bottom left out.
    fn rows(parser: &vt100::Parser) -> String {
        let (_, columns) = parser.screen().size();
        let rows: Vec<String> = parser.screen().rows(0, columns.get()).collect();
        rows.join("\n").trim_end().to_string()
    }

    const PARAGRAPH: &str = "The failing test reads the configuration before the fixture \
        writes it, so the first run sees an empty file and every later run passes; moving the \
        write into the setup function makes the order explicit and the test stable again.";

    /// A turn with thinking, a streamed paragraph and list, reasoning, and a long command
    /// with progress, drawn with spinner ticks between every event.
    fn play(columns: usize) -> (String, Vec<String>) {
        play_resizing(columns, &[])
    }

    /// The screen `parser` shows, reflowed to `columns` as most terminals do on a resize: its
    /// logical lines (wrapped rows joined) up to the cursor's, written again at the new width.
    fn reflowed(parser: &vt100::Parser, columns: usize) -> vt100::Parser {
        let screen = parser.screen();
        let (height, width) = screen.size();
        let (cursor_row, _) = screen.cursor_position();
        let rows: Vec<String> = screen.rows(0, width.get()).collect();
        let mut lines = vec![String::new()];
        for (row, text) in rows.iter().enumerate().take(usize::from(cursor_row) + 1) {
            lines.last_mut().unwrap().push_str(text);
            if !screen.row_wrapped(row as u16) {
                lines.push(String::new());
            }
        }
        lines.pop();
        let mut next = vt100::Parser::new(
            height,
            std::num::NonZeroU16::new(columns as u16).unwrap(),
            0,
        );
        next.process(lines.join("\r\n").as_bytes());
        next
    }

    /// [`play`], the terminal resized to each of `resizes` in turn while the long command runs
    /// (its spinner ticking, its line wrapping at the narrower widths).
    fn play_resizing(columns: usize, resizes: &[usize]) -> (String, Vec<String>) {
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZeroU16::new(60).unwrap(),
            std::num::NonZeroU16::new(columns as u16).unwrap(),
            0,
        )));
        let style = Style {
            color: true,
            live: true,
        };
        let now = Arc::new(std::sync::atomic::AtomicUsize::new(columns));
        let size = Size::Changing {
            columns: Arc::clone(&now),
            rows: 60,
        };
        let mut renderer =
            TerminalRenderer::with_size(style, size, Box::new(Screen(Arc::clone(&parser))));
        let mut seq = 0;
        let mut next = |json: &str| {
            seq += 1;
            event(seq, json)
        };
        let mut events = vec![
            next(r#"{"type":"turn.started","turnId":"t1","prompt":"go"}"#),
            next(r#"{"type":"step.started","turnId":"t1","step":1}"#),
            next(
                r#"{"type":"step.reasoning.delta","turnId":"t1","step":1,"text":"The test is flaky; look at the fixture order."}"#,
            ),
        ];
        for word in PARAGRAPH.split_inclusive(' ') {
            let text = serde_json::to_string(word).unwrap();
            events.push(next(&format!(
                r#"{{"type":"step.text.delta","turnId":"t1","step":1,"text":{text}}}"#
            )));
        }
        for text in ["\n\n", "- read the ", "fixture\n", "- run the **tests**\n"] {
            let text = serde_json::to_string(text).unwrap();
            events.push(next(&format!(
                r#"{{"type":"step.text.delta","turnId":"t1","step":1,"text":{text}}}"#
            )));
        }
        let command = format!(
            "cargo test --workspace -- {}",
            "--exact fixture::order ".repeat(8)
        );
        events.push(next(&format!(
            r#"{{"type":"tool.start","callId":"c1","toolName":"bash","caller":"direct","arguments":{{}},"presentation":{{"action":"Run command","remark":"{command}"}}}}"#
        )));
        for n in 0..12 {
            events.push(next(&format!(
                r#"{{"type":"tool.progress","callId":"c1","text":"   Compiling crate-number-{n} v0.1.0 (/work/a/very/long/path/to/the/crate/number/{n})\n"}}"#
            )));
        }
        events.push(next(
            r#"{"type":"tool.result","callId":"c1","toolName":"bash","caller":"direct","status":"ok","content":[],"detail":{"type":"shell","command":"x","output":"test result: ok. 3 passed\n","exitCode":0},"durationMs":3100}"#,
        ));
        events.push(next(
            r#"{"type":"step.finished","turnId":"t1","step":1,"usage":{"inputTokens":12034,"outputTokens":310,"cacheReadTokens":8000}}"#,
        ));
        events.push(next(
            r#"{"type":"turn.finished","turnId":"t1","reason":"completed"}"#,
        ));
        let mut seen = Vec::new();
        let mut resizes = resizes.iter();
        for event in &events {
            let resize_here = matches!(&event.body, EventBody::ToolProgress(p)
                if p.text.contains("number-4 ") || p.text.contains("number-8 "));
            if resize_here && let Some(&columns) = resizes.next() {
                let mut screen = parser.lock().unwrap();
                now.store(columns, std::sync::atomic::Ordering::SeqCst);
                *screen = reflowed(&screen, columns);
            }
            renderer.handle(event);
            for _ in 0..3 {
                renderer.tick();
                seen.push(rows(&parser.lock().unwrap()));
            }
        }
        renderer.finish();
        let screen = rows(&parser.lock().unwrap());
        (screen, seen)
    }

    #[test]
    fn the_live_region_leaves_no_line_behind_at_40_80_and_200_columns() {
        for columns in [40, 80, 200] {
            let (screen, seen) = play(columns);
            for row in screen.lines() {
                assert!(width(row) <= columns, "{columns}: {row:?}");
            }
            assert!(!screen.contains("thinking…"), "{columns}:\n{screen}");
            assert!(
                !SPINNER.iter().any(|frame| screen.contains(frame)),
                "{columns}:\n{screen}"
            );
            assert_eq!(
                screen.matches("Run command").count(),
                1,
                "{columns}:\n{screen}"
            );
            assert_eq!(
                screen.matches("The failing test").count(),
                1,
                "{columns}:\n{screen}"
            );
            assert!(screen.contains("∴ thought for"), "{columns}:\n{screen}");
            assert!(
                screen
                    .replace('\n', "")
                    .contains("12,034 tokens in (8,000 cached) · 310 out"),
                "{columns}:\n{screen}"
            );
            // While it ran: the thinking line before the first word, the words as they came.
            assert!(seen.iter().any(|s| s.contains("thinking…")), "{columns}");
            assert!(
                seen.iter()
                    .any(|s| s.contains("The failing test") && !s.contains("stable again")),
                "{columns}: the paragraph shows before it ends"
            );
            for screen in &seen {
                assert!(
                    screen.matches("Run command").count() <= 1,
                    "{columns}:\n{screen}"
                );
                assert!(
                    screen.matches("thinking…").count() <= 1,
                    "{columns}:\n{screen}"
                );
            }
            insta::assert_snapshot!(format!("live_turn_{columns}_columns"), screen);
        }
    }

    #[test]
    fn a_call_being_written_is_named_as_the_runtime_presents_it() {
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZeroU16::new(20).unwrap(),
            std::num::NonZeroU16::new(80).unwrap(),
            0,
        )));
        let style = Style {
            color: false,
            live: true,
        };
        let size = Size::Fixed {
            columns: 80,
            rows: 20,
        };
        let mut renderer =
            TerminalRenderer::with_size(style, size, Box::new(Screen(Arc::clone(&parser))));
        // What the agent loop sends: each piece of the arguments, and the presentation when
        // it changed.
        let preparing = |seq: u64, delta: &str, presentation: Option<(&str, &str)>| {
            let mut body = serde_json::json!({
                "type": "tool.preparing",
                "callId": "c1",
                "toolName": "grep",
                "argumentsDelta": delta,
            });
            if let Some((action, remark)) = presentation {
                body["presentation"] = serde_json::json!({"action": action, "remark": remark});
            }
            event(seq, &body.to_string())
        };
        renderer.handle(&event(
            1,
            r#"{"type":"turn.started","turnId":"t1","prompt":"go"}"#,
        ));
        renderer.handle(&preparing(2, r#"{"pat"#, Some(("Search", ""))));
        let screen = rows(&parser.lock().unwrap());
        assert!(screen.contains(" Search  "), "{screen}");
        assert!(!screen.contains("grep"), "{screen}");
        renderer.handle(&preparing(3, r#"tern":"TO"#, Some(("Search", "TO"))));
        renderer.handle(&preparing(
            4,
            r#"DO","path":"sr"#,
            Some(("Search", "TODO in sr")),
        ));
        // A piece without a presentation keeps the last one.
        renderer.handle(&preparing(5, r#"c"#, None));
        let screen = rows(&parser.lock().unwrap());
        assert!(screen.contains(" Search TODO in sr  "), "{screen}");
        // Until the runtime presents a call, it keeps its wire name.
        let other = event(
            6,
            r#"{"type":"tool.preparing","callId":"c2","toolName":"glob","argumentsDelta":"{"}"#,
        );
        renderer.handle(&other);
        let screen = rows(&parser.lock().unwrap());
        assert!(screen.contains("glob preparing…"), "{screen}");
    }

    #[test]
    fn widening_and_narrowing_while_a_command_runs_leaves_no_line_behind() {
        for (columns, resizes) in [(80, [200, 40]), (40, [80, 200]), (200, [40, 80])] {
            let (screen, seen) = play_resizing(columns, &resizes);
            let last = resizes[1];
            for row in screen.lines() {
                assert!(width(row) <= last, "{columns}→{resizes:?}: {row:?}");
            }
            for screen in seen.iter().chain([&screen]) {
                assert!(
                    screen.matches("Run command").count() <= 1,
                    "{columns}→{resizes:?}:\n{screen}"
                );
                assert!(
                    screen.matches("thinking…").count() <= 1,
                    "{columns}→{resizes:?}:\n{screen}"
                );
            }
            assert!(
                !SPINNER.iter().any(|frame| screen.contains(frame)),
                "{columns}→{resizes:?}:\n{screen}"
            );
            assert_eq!(
                screen.matches("The failing test").count(),
                1,
                "{columns}→{resizes:?}:\n{screen}"
            );
            assert!(screen.contains("3.1s"), "{columns}→{resizes:?}:\n{screen}");
        }
    }

    #[test]
    fn complete_blocks_end_at_a_blank_line_outside_code() {
        assert_eq!(complete_blocks_end("one\ntwo"), None);
        assert_eq!(complete_blocks_end("one\n\ntwo"), Some(5));
        assert_eq!(complete_blocks_end("```\na\n\nb\n"), None);
        assert_eq!(complete_blocks_end("```\na\n\nb\n```\n\nc"), Some(14));
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn a_reviewed_call_shows_its_verdict_line() {
        use qilin_protocol::review::{ReviewRisk, ReviewVerdict};
        let mut review = AutoReviewRecord {
            reviewer: "openai:judge".into(),
            verdict: ReviewVerdict::Allow,
            risk: Some(ReviewRisk::Low),
            user_reason: "A test run.".into(),
            latency_ms: 3,
            input_tokens: 10,
            output_tokens: 5,
            fallback: None,
        };
        assert_eq!(
            review_line(&review),
            "reviewed by openai:judge: allow (low) — A test run."
        );
        review.verdict = ReviewVerdict::Deny;
        review.risk = Some(ReviewRisk::High);
        review.user_reason = "Pushing publishes work.".into();
        assert_eq!(
            review_line(&review),
            "denied by openai:judge (high): Pushing publishes work."
        );
        review.verdict = ReviewVerdict::TimedOut;
        review.risk = None;
        review.user_reason = "the reviewer did not answer within 90 s".into();
        review.fallback = Some(ReviewFallback::AskedPerson);
        assert_eq!(
            review_line(&review),
            "review timed out: the reviewer did not answer within 90 s, asked you"
        );
    }
}
