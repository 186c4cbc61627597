//! The agent loop: prompt → stream the model → dispatch each call as its arguments end →
//! results back to the model → repeat until the model stops, the step limit, or an interrupt.
//!
//! The loop keeps no history of its own: the messages it sends are folded from the session's
//! event log ([`HistoryFold`]), so a session rebuilt from a stored log continues exactly.

use crate::HistoryFold;
use futures_util::StreamExt;
use parking_lot::Mutex;
use qilin_model::{
    Message, ModelEvent, ModelProvider, ModelRequest, Reasoning, ReasoningSetting, StopReason,
};
use qilin_protocol::{
    CallPresentation, ErrorCode, Event, EventBody, FinishReason, ToolPreparingEvent, Usage,
};
use qilin_tool::{
    CallOutcome, Caller, DirectDefinition, Executor, ToolEffect, ToolError, ToolRegistry,
};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// What the model sees of the agent: the assembled system prompt and tools list. Both stay
/// byte-identical through a conversation so the provider's prompt cache keeps working.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentPrompt {
    /// The system prompt.
    pub system: String,
    /// The tools list.
    pub tools: Vec<DirectDefinition>,
}

/// Settings of the loop.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    /// The model name the provider receives.
    pub model: String,
    /// The most model steps in one turn.
    pub max_steps: u32,
    /// The most tokens one answer may have; the provider's default when `None`.
    pub max_tokens: Option<u32>,
    /// How much the model reasons before answering, where it can; its default when `None`.
    pub reasoning: Option<ReasoningSetting>,
}

/// A turn a previous process left open in the middle of a step, to continue.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenTurn {
    /// The turn's id.
    pub turn_id: String,
    /// Its prompt.
    pub prompt: String,
    /// The step left open.
    pub step: u32,
    /// The step's calls to dispatch again, with their recorded ids and arguments.
    pub calls: Vec<qilin_tool::ToolCall>,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnSummary {
    /// Why it ended.
    pub reason: FinishReason,
    /// Model steps taken.
    pub steps: u32,
    /// Tokens used, summed over the steps.
    pub usage: Usage,
    /// The text of the last step (the final answer when the turn completed).
    pub final_text: String,
    /// The error message of a turn that ended in error.
    pub error: Option<String>,
}

/// An agent: a model, a prompt, an executor for its tool calls, and the history folded from
/// its session's events.
pub struct Agent {
    pub(crate) provider: Arc<dyn ModelProvider>,
    /// The prompt and the executor of its tools; replaced between turns when the tools
    /// change (an MCP server's tool list), read once per step.
    mounted: parking_lot::RwLock<Arc<Mounted>>,
    pub(crate) settings: LoopSettings,
    history: Mutex<History>,
}

/// What the model is shown and what runs its calls.
struct Mounted {
    prompt: AgentPrompt,
    executor: Executor,
}

/// The fold of the session's log, and the events not folded yet.
pub(crate) struct History {
    fold: HistoryFold,
    unread: mpsc::UnboundedReceiver<Event>,
}

impl History {
    /// Folds every event recorded so far.
    pub(crate) fn catch_up(&mut self) -> &HistoryFold {
        while let Ok(event) = self.unread.try_recv() {
            self.fold.apply(&event);
        }
        &self.fold
    }
}

/// A call the model is making in the current step.
struct StepCall {
    id: String,
    name: String,
    arguments: String,
    /// The model finished the call's arguments.
    ended: bool,
    running: Option<JoinHandle<CallOutcome>>,
    /// When the streaming arguments were last presented, and what that gave.
    presented: Option<(Instant, Option<CallPresentation>)>,
}

/// Arguments up to this many bytes are presented again at every piece that streams in.
const SHORT_ARGUMENTS: usize = 4096;
/// How often, at most, a call whose arguments are longer is presented again as they stream.
const PRESENT_LONG_ARGUMENTS_EVERY: Duration = Duration::from_millis(200);

impl StepCall {
    /// The presentation to send with the arguments streamed so far: the tool's, when it is
    /// due (every piece while the arguments are short, then at most every
    /// [`PRESENT_LONG_ARGUMENTS_EVERY`]) and differs from the last one sent.
    fn presentation_due(&mut self, registry: &ToolRegistry) -> Option<CallPresentation> {
        let due = self.arguments.len() <= SHORT_ARGUMENTS
            || self
                .presented
                .as_ref()
                .is_none_or(|(at, _)| at.elapsed() >= PRESENT_LONG_ARGUMENTS_EVERY);
        if !due {
            return None;
        }
        let now = registry
            .get(&self.name)
            .and_then(|tool| tool.present_partial(&self.arguments));
        let last = self.presented.replace((Instant::now(), now.clone()));
        match last {
            Some((_, sent)) if sent == now => None,
            _ => now,
        }
    }
}

/// Keeps the calls of one step in the model's order where order matters, as a read/write
/// lock taken in turn: calls of read-only tools run side by side, a call that may change
/// something waits for every call dispatched before it, and the calls after it wait for it.
#[derive(Default)]
struct CallOrder {
    /// Cancelled when the last changing call dispatched so far has ended.
    last_change: Option<CancellationToken>,
    /// Cancelled as each read-only call dispatched since that one ends.
    reads_since: Vec<CancellationToken>,
}

impl CallOrder {
    /// Places the next call: the ends it must wait for, and its own end, to be cancelled
    /// (dropped as a guard) when it has ended.
    fn place(&mut self, read_only: bool) -> (Vec<CancellationToken>, CancellationToken) {
        let ended = CancellationToken::new();
        let waits = if read_only {
            self.reads_since.push(ended.clone());
            self.last_change.iter().cloned().collect()
        } else {
            self.last_change
                .replace(ended.clone())
                .into_iter()
                .chain(self.reads_since.drain(..))
                .collect()
        };
        (waits, ended)
    }
}

impl Agent {
    /// An agent answering with `provider`, showing it `prompt`, running calls on `executor`,
    /// starting with an empty history.
    pub fn new(
        provider: Arc<dyn ModelProvider>,
        prompt: AgentPrompt,
        executor: Executor,
        settings: LoopSettings,
    ) -> Self {
        Self::resume(provider, prompt, executor, settings, &[])
    }

    /// An agent continuing a stored session: `events` is the session's log so far (the
    /// executor's session continues after its last `seq`).
    pub fn resume(
        provider: Arc<dyn ModelProvider>,
        prompt: AgentPrompt,
        executor: Executor,
        settings: LoopSettings,
        events: &[Event],
    ) -> Self {
        let unread = executor.session().events().subscribe();
        Agent {
            provider,
            mounted: parking_lot::RwLock::new(Arc::new(Mounted { prompt, executor })),
            settings,
            history: Mutex::new(History {
                fold: HistoryFold::from_events(events),
                unread,
            }),
        }
    }

    /// The id the next turn will have (`turn-N`, numbered through the whole session).
    pub fn next_turn_id(&self) -> String {
        format!("turn-{}", self.lock_history().catch_up().turns() + 1)
    }

    /// The messages the model will receive before the next prompt.
    pub fn history(&self) -> Vec<Message> {
        self.lock_history().catch_up().messages().to_vec()
    }

    pub(crate) fn lock_history(&self) -> parking_lot::MutexGuard<'_, History> {
        self.history.lock()
    }

    fn mounted(&self) -> Arc<Mounted> {
        Arc::clone(&self.mounted.read())
    }

    /// The executor (and through it the session and its event log).
    pub fn executor(&self) -> Executor {
        self.mounted().executor.clone()
    }

    /// The system prompt and tools list every request carries.
    pub fn prompt(&self) -> AgentPrompt {
        self.mounted().prompt.clone()
    }

    /// Replaces the prompt and the executor (whose session must be this agent's), for the
    /// tools that changed since the agent was made; the host calls it between turns, and a
    /// step already asking the model keeps what it had.
    pub fn replace_tools(&self, prompt: AgentPrompt, executor: Executor) {
        *self.mounted.write() = Arc::new(Mounted { prompt, executor });
    }

    /// Runs one turn of `prompt`.
    ///
    /// Cancelling `cancel` interrupts the turn: the model stream is dropped, running calls
    /// end `interrupted`, and every call the model named gets a result, so the history stays a
    /// valid conversation and the event log stays consistent.
    pub async fn run_turn(&self, prompt: &str, cancel: CancellationToken) -> TurnSummary {
        self.run_turn_as(prompt, None, cancel).await
    }

    /// Runs one turn of `prompt`, recording the id its client chose (`clientTurnId`).
    pub async fn run_turn_as(
        &self,
        prompt: &str,
        client_turn_id: Option<String>,
        cancel: CancellationToken,
    ) -> TurnSummary {
        let turn_id = self.next_turn_id();
        let span =
            tracing::info_span!("turn", session = %self.executor().session().id(), turn = %turn_id);
        self.turn(turn_id, prompt, client_turn_id, cancel)
            .instrument(span)
            .await
    }

    async fn turn(
        &self,
        turn_id: String,
        prompt: &str,
        client_turn_id: Option<String>,
        cancel: CancellationToken,
    ) -> TurnSummary {
        self.emit(EventBody::TurnStarted {
            turn_id: turn_id.clone(),
            prompt: prompt.to_string(),
            client_turn_id,
        });
        let session = Arc::clone(self.executor().session_arc());
        session.begin_turn(&turn_id, prompt, cancel.clone());
        self.steps_from(turn_id, 1, cancel).await
    }

    /// Continues a turn a previous process left open in the middle of a step: the step's
    /// calls that were running (`open.calls`, e.g. a `run_code` that replays its journal) are
    /// dispatched again under their own ids, the step is closed, and the turn goes on with
    /// its next step, the model reading the calls' results.
    pub async fn continue_turn(&self, open: OpenTurn, cancel: CancellationToken) -> TurnSummary {
        let span = tracing::info_span!(
            "turn",
            session = %self.executor().session().id(),
            turn = %open.turn_id,
            continued = true,
        );
        async {
            let session = Arc::clone(self.executor().session_arc());
            session.begin_turn(&open.turn_id, &open.prompt, cancel.clone());
            let executor = self.executor();
            let running: Vec<JoinHandle<CallOutcome>> = open
                .calls
                .into_iter()
                .map(|call| {
                    let executor = executor.clone();
                    let cancel = cancel.clone();
                    tokio::spawn(async move {
                        executor
                            .dispatch_cancellable(call, Caller::Direct, cancel)
                            .await
                    })
                })
                .collect();
            for call in running {
                if let Err(join_error) = call.await {
                    tracing::error!(error = %join_error, "a continued call's task ended abnormally");
                }
            }
            self.emit(EventBody::StepFinished {
                turn_id: open.turn_id.clone(),
                step: open.step,
                usage: Usage::default(),
                stop_reason: Some(qilin_protocol::StopReason::ToolUse),
            });
            if cancel.is_cancelled() {
                let summary = TurnSummary {
                    reason: FinishReason::Interrupted,
                    steps: open.step,
                    usage: Usage::default(),
                    final_text: String::new(),
                    error: None,
                };
                session.end_turn();
                self.emit(EventBody::TurnFinished {
                    turn_id: open.turn_id,
                    reason: summary.reason,
                    message: None,
                });
                return summary;
            }
            self.steps_from(open.turn_id, open.step + 1, cancel).await
        }
        .instrument(span)
        .await
    }

    /// Runs the turn's steps from `first` until it ends, and records its end.
    async fn steps_from(
        &self,
        turn_id: String,
        first: u32,
        cancel: CancellationToken,
    ) -> TurnSummary {
        let session = Arc::clone(self.executor().session_arc());
        let mut summary = TurnSummary {
            reason: FinishReason::MaxSteps,
            steps: first.saturating_sub(1),
            usage: Usage::default(),
            final_text: String::new(),
            error: None,
        };
        for step in first..=self.settings.max_steps {
            summary.steps = step;
            let ended = self
                .run_step(&turn_id, step, &cancel)
                .instrument(tracing::info_span!("step", step))
                .await;
            add_usage(&mut summary.usage, ended.usage);
            summary.final_text = ended.text;
            let (reason, message) = match ended.end {
                // Interrupted while its calls ran: the calls have their results, and no
                // further step starts.
                StepEnd::Calls if cancel.is_cancelled() => (FinishReason::Interrupted, None),
                StepEnd::Calls => continue,
                // A message from another agent came while the model answered: it gets a
                // step to reply.
                StepEnd::Answer
                    if step < self.settings.max_steps
                        && self.lock_history().catch_up().awaits_reply() =>
                {
                    continue;
                }
                StepEnd::Answer => (FinishReason::Completed, None),
                StepEnd::Interrupted => (FinishReason::Interrupted, None),
                StepEnd::CutAtLimit => (
                    FinishReason::MaxTokens,
                    Some(
                        "the answer reached the model's token limit and was cut; ask for a \
                         shorter answer or raise the limit"
                            .to_string(),
                    ),
                ),
                StepEnd::Refused(message) => (FinishReason::Refused, Some(message)),
                StepEnd::Failed(message) => (FinishReason::Error, Some(message)),
            };
            summary.reason = reason;
            summary.error = message;
            break;
        }
        if summary.reason == FinishReason::MaxSteps {
            summary.error = Some(format!(
                "the turn took {} steps, the agent's limit (`limits.max_steps` in the agent file)",
                self.settings.max_steps
            ));
        }
        // A turn stopped by the runtime (auto review's circuit breaker) says why.
        if let Some(message) = session.take_stop_message()
            && summary.reason == FinishReason::Interrupted
        {
            summary.error = Some(message);
        }
        session.end_turn();
        self.emit(EventBody::TurnFinished {
            turn_id,
            reason: summary.reason,
            message: summary.error.clone(),
        });
        summary
    }

    async fn run_step(&self, turn_id: &str, step: u32, cancel: &CancellationToken) -> StepOutcome {
        let messages = self.lock_history().catch_up().messages().to_vec();
        self.emit(EventBody::StepStarted {
            turn_id: turn_id.to_string(),
            step,
        });
        let mounted = self.mounted();
        let request = ModelRequest {
            model: self.settings.model.clone(),
            system: mounted.prompt.system.clone(),
            tools: mounted.prompt.tools.clone(),
            messages,
            max_tokens: self.settings.max_tokens,
            reasoning: self.settings.reasoning,
        };
        let mut stream = self.provider.stream(request);
        let mut text = String::new();
        let mut calls: Vec<StepCall> = Vec::new();
        let mut order = CallOrder::default();
        let mut usage = Usage::default();
        let mut failure: Option<String> = None;
        let mut stop_reason: Option<StopReason> = None;
        while stop_reason.is_none() {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                next = stream.next() => next,
            };
            match next {
                Some(Ok(ModelEvent::TextDelta(delta))) => {
                    text.push_str(&delta);
                    self.emit(EventBody::StepTextDelta {
                        turn_id: turn_id.to_string(),
                        step,
                        text: delta,
                    });
                }
                Some(Ok(ModelEvent::ToolCallStart { id, name })) => {
                    self.emit(EventBody::ToolPreparing(ToolPreparingEvent {
                        call_id: id.clone(),
                        tool_name: name.clone(),
                        arguments_delta: String::new(),
                        presentation: None,
                    }));
                    calls.push(StepCall {
                        id,
                        name,
                        arguments: String::new(),
                        ended: false,
                        running: None,
                        presented: None,
                    });
                }
                Some(Ok(ModelEvent::ToolCallDelta {
                    id,
                    arguments_delta,
                })) => {
                    if let Some(call) = calls.iter_mut().find(|c| c.id == id) {
                        call.arguments.push_str(&arguments_delta);
                        let presentation = call.presentation_due(mounted.executor.registry());
                        self.emit(EventBody::ToolPreparing(ToolPreparingEvent {
                            call_id: call.id.clone(),
                            tool_name: call.name.clone(),
                            arguments_delta,
                            presentation,
                        }));
                    }
                }
                Some(Ok(ModelEvent::ToolCallEnd { id })) => {
                    if let Some(call) = calls.iter_mut().find(|c| c.id == id && !c.ended) {
                        call.ended = true;
                        call.running = self.start_call(call, &mut order, cancel);
                    }
                }
                Some(Ok(ModelEvent::Usage(reported))) => usage = reported,
                Some(Ok(ModelEvent::Finished {
                    stop_reason: reason,
                })) => stop_reason = Some(reason),
                Some(Ok(ModelEvent::ReasoningDelta(delta))) => {
                    self.emit(EventBody::StepReasoningDelta {
                        turn_id: turn_id.to_string(),
                        step,
                        text: delta,
                    });
                }
                Some(Ok(ModelEvent::ReasoningBlock(block))) => {
                    let (signature, redacted) = match block {
                        Reasoning::Text { signature, .. } => (signature, None),
                        Reasoning::Redacted { data } => (None, Some(data)),
                    };
                    self.emit(EventBody::StepReasoningEnd {
                        turn_id: turn_id.to_string(),
                        step,
                        signature,
                        redacted,
                    });
                }
                Some(Err(err)) => {
                    failure = Some(format!("the model failed: {err}"));
                    break;
                }
                None => {
                    failure = Some("the model's answer ended without finishing".to_string());
                    break;
                }
            }
        }
        drop(stream);
        let interrupted = cancel.is_cancelled();
        let cut = stop_reason == Some(StopReason::MaxTokens);
        self.collect_results(&mut calls, interrupted || failure.is_some(), cut)
            .await;
        self.emit(EventBody::StepFinished {
            turn_id: turn_id.to_string(),
            step,
            usage,
            stop_reason: stop_reason.as_ref().map(wire_stop_reason),
        });
        let end = match (failure, interrupted, &stop_reason) {
            (Some(message), _, _) => StepEnd::Failed(message),
            (None, true, _) => StepEnd::Interrupted,
            (None, false, _) if !calls.is_empty() => StepEnd::Calls,
            (None, false, Some(StopReason::MaxTokens)) => StepEnd::CutAtLimit,
            (None, false, Some(StopReason::Refusal)) => {
                StepEnd::Refused("the model refused to answer".to_string())
            }
            (None, false, Some(StopReason::ContentFilter)) => {
                StepEnd::Refused("the provider's content filter stopped the answer".to_string())
            }
            (None, false, _) => StepEnd::Answer,
        };
        StepOutcome { end, text, usage }
    }

    /// Dispatches a call whose arguments are complete JSON, once the calls `order` says it
    /// follows have ended. Argument text that is not JSON is judged once the step's stop
    /// reason is known (cut by the token limit, or malformed).
    fn start_call(
        &self,
        call: &StepCall,
        order: &mut CallOrder,
        cancel: &CancellationToken,
    ) -> Option<JoinHandle<CallOutcome>> {
        let arguments = parse_arguments(&call.arguments).ok()?;
        let executor = self.executor();
        let read_only = executor
            .registry()
            .get(&call.name)
            .is_some_and(|tool| tool.effect() == Some(ToolEffect::ReadOnly));
        let (earlier, ended) = order.place(read_only);
        let cancel = cancel.clone();
        let tool_call = qilin_tool::ToolCall {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments,
        };
        let span = tracing::info_span!("call", call = %call.id, tool = %call.name);
        Some(tokio::spawn(
            async move {
                let _ended = ended.drop_guard();
                for call in earlier {
                    call.cancelled().await;
                }
                executor
                    .dispatch_cancellable(tool_call, Caller::Direct, cancel)
                    .await
            }
            .instrument(span),
        ))
    }

    /// Waits for every call of the step, in the model's order (calls already running finish
    /// even when the model's stream failed). A call that never ran gets a result saying why:
    /// its arguments were cut by the token limit (`cut`), were not JSON, or never ended.
    async fn collect_results(&self, calls: &mut [StepCall], ended_early: bool, cut: bool) {
        for call in calls.iter_mut() {
            let refusal = match call.running.take() {
                Some(handle) => match handle.await {
                    Ok(_) => continue,
                    Err(join_error) => {
                        ToolError::failed(format!("the call's task ended abnormally: {join_error}"))
                    }
                },
                None if cut => ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "The arguments of `{}` were cut off by the model's output token limit, \
                         so the call did not run. Send a smaller call (split a large file into \
                         several writes or edits).",
                        call.name
                    ),
                ),
                None if call.ended => match parse_arguments(&call.arguments) {
                    Err(err) => ToolError::new(
                        ErrorCode::InvalidArguments,
                        format!(
                            "The arguments of `{}` are not valid JSON ({err}). Send one JSON \
                             object matching the tool's parameter schema.",
                            call.name
                        ),
                    ),
                    Ok(_) => ToolError::new(
                        ErrorCode::Interrupted,
                        "The turn ended before this call could run.",
                    ),
                },
                None if ended_early => ToolError::new(
                    ErrorCode::Interrupted,
                    "The turn ended before the arguments of this call were complete; it did not run.",
                ),
                None => ToolError::new(
                    ErrorCode::Interrupted,
                    "The model never finished the arguments of this call; it did not run.",
                ),
            };
            self.executor().reject(
                qilin_tool::ToolCall {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: Value::String(call.arguments.clone()),
                },
                Caller::Direct,
                refusal,
            );
        }
    }

    pub(crate) fn emit(&self, body: EventBody) {
        self.mounted().executor.session().events().emit(body);
    }
}

/// How a step ended, with its text and the tokens it used.
struct StepOutcome {
    end: StepEnd,
    text: String,
    usage: Usage,
}

enum StepEnd {
    /// The model called tools; their results go back to it.
    Calls,
    /// The model answered.
    Answer,
    /// The user interrupted.
    Interrupted,
    /// The answer reached the token limit.
    CutAtLimit,
    /// The model refused, or a content filter stopped it.
    Refused(String),
    /// The model or the stream failed.
    Failed(String),
}

/// The argument text of a call as JSON; empty text means no arguments.
fn parse_arguments(text: &str) -> Result<Value, serde_json::Error> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    serde_json::from_str(text)
}

fn add_usage(total: &mut Usage, step: Usage) {
    total.input_tokens += step.input_tokens;
    total.output_tokens += step.output_tokens;
    total.cache_read_tokens += step.cache_read_tokens;
    total.cache_write_tokens += step.cache_write_tokens;
}

fn wire_stop_reason(reason: &StopReason) -> qilin_protocol::StopReason {
    match reason {
        StopReason::EndTurn => qilin_protocol::StopReason::EndTurn,
        StopReason::ToolUse => qilin_protocol::StopReason::ToolUse,
        StopReason::MaxTokens => qilin_protocol::StopReason::MaxTokens,
        StopReason::Refusal => qilin_protocol::StopReason::Refusal,
        StopReason::ContentFilter => qilin_protocol::StopReason::ContentFilter,
        StopReason::Other(_) => qilin_protocol::StopReason::Other,
    }
}
