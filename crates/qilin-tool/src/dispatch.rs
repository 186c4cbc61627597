//! The execution layer: one `dispatch` for calls from both entries.
//!
//! In order: look the tool up among those the entry may call (the tools offered to the model,
//! or the agent's code-mode set) → refuse a direct call of a code-mode-only tool → validate the
//! arguments → put path arguments in canonical, workspace-relative form (see
//! `path_arguments`) → record `tool.start` → review: the policy's deny rules, then a person's
//! grant for exactly this call, then the rest of the policy — asking a person (the call waits,
//! and an interrupt ends the wait) or the reviewer model (`tool.reviewed`, see `auto_review`)
//! when it says so → take a slot among the session's running calls →
//! run under the deadline (counted from here) and cancellation, letting an interrupted tool
//! hand back what it had so far (a panic is a failed call) → cap the output → record
//! `tool.result`. Every refusal is a `tool.result` with its error code and a message the model
//! can act on, and every `tool.start` gets exactly one `tool.result` — a call whose future is
//! dropped half-way records `interrupted` as it goes.

use crate::auto_review::{
    AutoReview, Judgement, REVIEW_MESSAGE_BYTES, ReviewedCall, recent_messages,
};
use crate::context::CallClock;
use crate::live::LiveOutput;
use crate::path_arguments::canonical_paths;
use crate::registry::{PreparedCall, Ran, RegisteredTool, RunResult};
use crate::{AllowAll, OutputCap, RequestOutcome, RequestReply, WaitingCall, closest_names};
use crate::{
    ReviewDecision, ReviewRequest, Reviewer, Session, ToolContext, ToolError, ToolRegistry,
};
use futures_util::FutureExt;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use qilin_protocol::review::{AutoReviewRecord, ReviewFallback, ReviewVerdict, ToolReviewedEvent};
use qilin_protocol::{
    CallPresentation, CallStatus, CallerKind, ContentBlock, Detail, ErrorCode, EventBody,
    RequestAsk, ToolResultEvent, ToolStartEvent, Usage,
};
use serde_json::Value;
use std::any::Any;
use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// The name of the tool that runs code; code can never call it.
pub const RUN_CODE: &str = "run_code";

/// Which entry a call came through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The model called the tool from its tools list.
    Direct,
    /// Python called it through `sdk.tool.call` inside the `run_code` call `parent_call_id`.
    Code {
        /// The `run_code` call that made this call.
        parent_call_id: String,
    },
}

impl Caller {
    fn kind(&self) -> CallerKind {
        match self {
            Caller::Direct => CallerKind::Direct,
            Caller::Code { .. } => CallerKind::Code,
        }
    }

    fn parent_call_id(&self) -> Option<String> {
        match self {
            Caller::Direct => None,
            Caller::Code { parent_call_id } => Some(parent_call_id.clone()),
        }
    }
}

/// A call to dispatch: its id, the tool's wire name and the arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id, kept through every phase.
    pub call_id: String,
    /// The tool's wire name.
    pub name: String,
    /// The arguments as the model (or the code) sent them.
    pub arguments: Value,
}

/// Limits the execution layer applies to every call.
#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// The longest a call may run, counted from its approval and not while it waits for a
    /// person, before it ends with `TIMEOUT`; `None` for no limit.
    pub timeout: Option<Duration>,
    /// How much of an output the model sees.
    pub output_cap: OutputCap,
    /// The most direct calls of the session running at once; more wait for a slot. Calls made
    /// from code are bounded by code mode's own concurrency instead (a slot held by `run_code`
    /// must not starve its own calls).
    pub max_running_calls: usize,
    /// How long an interrupted or timed-out tool may take to stop and hand back what it had.
    pub stop_grace: Duration,
}

/// The direct calls of a session that may run at once, by default.
pub const DEFAULT_MAX_RUNNING_CALLS: usize = 8;

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            timeout: None,
            output_cap: OutputCap::default(),
            max_running_calls: DEFAULT_MAX_RUNNING_CALLS,
            stop_grace: Duration::from_secs(2),
        }
    }
}

/// Which tools each entry may call. A direct call runs only if its tool was offered to the
/// model; a call from code only if its tool is in the agent's code-mode set; `run_code` is never
/// callable from code.
#[derive(Debug, Clone, Default)]
pub struct Mounts {
    direct: Option<BTreeSet<String>>,
    code: Option<BTreeSet<String>>,
}

impl Mounts {
    /// Every registered tool from both entries (code-mode-only tools still only from code):
    /// for tests and embedders that have no agent.
    pub fn all() -> Self {
        Mounts::default()
    }

    /// Direct calls of exactly `direct` (the tools list offered to the model) and calls from
    /// code of exactly `code`.
    pub fn new(
        direct: impl IntoIterator<Item = impl Into<String>>,
        code: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Mounts {
            direct: Some(direct.into_iter().map(Into::into).collect()),
            code: Some(code.into_iter().map(Into::into).collect()),
        }
    }

    fn allows(&self, caller: &Caller, tool: &RegisteredTool) -> bool {
        match caller {
            Caller::Direct => self
                .direct
                .as_ref()
                .is_none_or(|direct| direct.contains(tool.name())),
            Caller::Code { .. } => {
                tool.name() != RUN_CODE
                    && self
                        .code
                        .as_ref()
                        .is_none_or(|code| code.contains(tool.name()))
            }
        }
    }

    /// The names `caller` may call, among `registry`'s tools.
    fn callable<'r>(&self, caller: &Caller, registry: &'r ToolRegistry) -> Vec<&'r str> {
        registry
            .list()
            .filter(|tool| self.allows(caller, tool))
            .filter(|tool| !(tool.code_mode_only() && *caller == Caller::Direct))
            .map(RegisteredTool::name)
            .collect()
    }
}

/// How a dispatched call ended, for the caller (the agent loop or code mode).
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The call's id.
    pub call_id: String,
    /// How it ended.
    pub status: CallStatus,
    /// The error, unless the call succeeded.
    pub error: Option<ToolError>,
    /// What the model sees: the capped output, or the error message.
    pub content: Vec<ContentBlock>,
    /// The tool's structured output, when it succeeded.
    pub output: Option<Value>,
    /// Wall time from dispatch to result.
    pub duration: Duration,
}

/// Dispatches calls through the execution layer for one session. Cheap to clone.
#[derive(Clone)]
pub struct Executor {
    inner: Arc<ExecutorInner>,
}

struct ExecutorInner {
    registry: Arc<ToolRegistry>,
    reviewer: Arc<dyn Reviewer>,
    session: Arc<Session>,
    mounts: Mounts,
    running: Arc<Semaphore>,
    config: ExecConfig,
}

impl Executor {
    /// An executor over `registry` for `session` that allows every call and uses default limits.
    pub fn new(registry: Arc<ToolRegistry>, session: Arc<Session>) -> Self {
        Self::with_policy(registry, session, Arc::new(AllowAll), ExecConfig::default())
    }

    /// An executor with a reviewer and limits of its own, every tool mounted.
    pub fn with_policy(
        registry: Arc<ToolRegistry>,
        session: Arc<Session>,
        reviewer: Arc<dyn Reviewer>,
        config: ExecConfig,
    ) -> Self {
        Self::with_mounts(registry, session, reviewer, config, Mounts::all())
    }

    /// An executor that runs only the tools `mounts` allows each entry.
    pub fn with_mounts(
        registry: Arc<ToolRegistry>,
        session: Arc<Session>,
        reviewer: Arc<dyn Reviewer>,
        config: ExecConfig,
        mounts: Mounts,
    ) -> Self {
        Executor {
            inner: Arc::new(ExecutorInner {
                registry,
                reviewer,
                session,
                mounts,
                running: Arc::new(Semaphore::new(config.max_running_calls.max(1))),
                config,
            }),
        }
    }

    /// The tools this executor can run.
    pub fn registry(&self) -> &ToolRegistry {
        &self.inner.registry
    }

    /// The session the calls belong to.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// The session the calls belong to, shared.
    pub fn session_arc(&self) -> &Arc<Session> {
        &self.inner.session
    }

    /// A context for work the runtime does itself outside any model call (a loop running its
    /// checks after an iteration): tools run with it see this executor's session, sandbox and
    /// services, have no deadline, stop when `cancel` is cancelled, and their live output is
    /// dropped (no call of the log would carry it).
    pub fn detached_context(
        &self,
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        cancel: CancellationToken,
    ) -> ToolContext {
        let call_id = call_id.into();
        let live = LiveOutput::new(call_id.clone(), None);
        live.finish(self.session().events());
        ToolContext {
            call_id,
            parent_call_id: None,
            tool_name: tool_name.into(),
            cancel,
            clock: Arc::new(CallClock::start(None)),
            executor: self.clone(),
            live: Arc::new(live),
        }
    }

    /// Dispatches one call that nobody will cancel.
    pub async fn dispatch(&self, call: ToolCall, caller: Caller) -> CallOutcome {
        self.dispatch_cancellable(call, caller, CancellationToken::new())
            .await
    }

    /// Dispatches one call; cancelling `cancel` ends it with `INTERRUPTED`.
    pub async fn dispatch_cancellable(
        &self,
        call: ToolCall,
        caller: Caller,
        cancel: CancellationToken,
    ) -> CallOutcome {
        let span = tracing::debug_span!(
            "call",
            call = %call.call_id,
            tool = %call.name,
            parent = caller.parent_call_id().as_deref().unwrap_or(""),
        );
        let outcome = self
            .dispatch_in(call, caller, cancel)
            .instrument(span)
            .await;
        if let Some(error) = &outcome.error {
            tracing::debug!(call = %outcome.call_id, code = %error.code, "call ended without success");
        }
        outcome
    }

    async fn dispatch_in(
        &self,
        call: ToolCall,
        caller: Caller,
        cancel: CancellationToken,
    ) -> CallOutcome {
        let mut record = CallRecord::new(self, call.call_id, call.name, caller);
        let tool = match self.admit(&record) {
            Ok(tool) => tool,
            Err((code, message)) => return record.refuse(call.arguments, code, message),
        };
        let arguments = normalize_arguments(call.arguments);
        if let Some(message) = validation_message(tool, &arguments) {
            return record.refuse(arguments, ErrorCode::InvalidArguments, message);
        }
        let arguments =
            canonical_paths(arguments, tool.path_arguments(), self.session().workspace());
        let prepared = match tool.prepare(arguments.clone()) {
            Ok(prepared) => prepared,
            Err(err) => {
                let message = format!(
                    "Invalid arguments for `{}`: {err}.\nThe parameter schema is: {}",
                    tool.name(),
                    tool.parameters()
                );
                return record.refuse(arguments, ErrorCode::InvalidArguments, message);
            }
        };
        let shown = catch_panic(|| (prepared.presentation(), prepared.before_detail()));
        let (presentation, before_detail) = match shown {
            Ok(shown) => shown,
            Err(panic) => {
                let message = format!(
                    "The tool `{}` failed while presenting the call: {panic}",
                    record.tool_name
                );
                return record.refuse(arguments, ErrorCode::ToolFailed, message);
            }
        };
        record.start(
            arguments.clone(),
            presentation.clone(),
            before_detail.clone(),
        );

        let review = self.inner.reviewer.review(ReviewRequest {
            tool: &record.tool_name,
            arguments: &arguments,
            caller: &record.caller,
            effect: tool.effect(),
        });
        let mut decision = tokio::select! {
            biased;
            () = cancel.cancelled() => return record.finish(Ended::Failed(interrupted_error()), None),
            decision = review => decision,
        };
        // A deny rule decides alone; otherwise a person's grant for exactly this call comes
        // before the reviewer, and the rest of the policy after.
        let auto = self.session().services().get::<AutoReview>();
        if matches!(
            decision,
            ReviewDecision::Ask { .. } | ReviewDecision::Auto { .. }
        ) && let Some(auto) = &auto
            && auto
                .use_grant(
                    self.session().events(),
                    &record.call_id,
                    &record.tool_name,
                    &arguments,
                )
                .is_some()
        {
            decision = ReviewDecision::Allow;
        }
        // An `ask` nobody can answer goes to the reviewer model, when there is one.
        if let ReviewDecision::Ask { reason } = &decision
            && auto.is_some()
            && !self.session().requests().is_attended()
            && !self
                .session()
                .requests()
                .granted(&record.tool_name, &arguments)
        {
            decision = ReviewDecision::Auto {
                reason: reason.clone(),
            };
        }
        // The message the model reads, and the reason the person watching is shown.
        let denial = match decision {
            ReviewDecision::Allow => None,
            ReviewDecision::Deny { reason } => Some((
                denied_error(&format!(
                    "The call was denied by the agent's review policy: {reason}."
                )),
                Some(reason),
            )),
            ReviewDecision::Auto { reason } => match &auto {
                Some(auto) => {
                    let call = ReviewedCall {
                        call_id: &record.call_id,
                        tool: &record.tool_name,
                        arguments: &arguments,
                        caller: &record.caller,
                        effect: tool.effect(),
                        policy_reason: &reason,
                        user_messages: recent_messages(
                            &self.session().prompts(),
                            REVIEW_MESSAGE_BYTES,
                        ),
                    };
                    let judged = tokio::select! {
                        biased;
                        () = cancel.cancelled() => None,
                        judged = judge_call(auto, call) => Some(judged),
                    };
                    let Some(judged) = judged else {
                        return record.finish(Ended::Failed(interrupted_error()), None);
                    };
                    match self.after_review(&record, auto, judged) {
                        AfterReview::Run => None,
                        AfterReview::Refuse(error, user_reason) => Some((error, Some(user_reason))),
                        AfterReview::AskPerson(why) => {
                            let reason = format!("{why}; {reason}");
                            let ask = RequestAsk::Approval {
                                reason: reason.clone(),
                                presentation,
                                arguments: arguments.clone(),
                                detail: before_detail,
                            };
                            match self.approval(&record, ask, &reason, &cancel).await {
                                Ok(denial) => denial,
                                Err(ended) => return record.finish(ended, None),
                            }
                        }
                    }
                }
                // No reviewer model here (a parent's policy said `auto`): a person decides.
                None => {
                    let ask = RequestAsk::Approval {
                        reason: reason.clone(),
                        presentation,
                        arguments: arguments.clone(),
                        detail: before_detail,
                    };
                    match self.approval(&record, ask, &reason, &cancel).await {
                        Ok(denial) => denial,
                        Err(ended) => return record.finish(ended, None),
                    }
                }
            },
            ReviewDecision::Ask { .. }
                if self
                    .session()
                    .requests()
                    .granted(&record.tool_name, &arguments) =>
            {
                None
            }
            ReviewDecision::Ask { reason } => {
                let ask = RequestAsk::Approval {
                    reason: reason.clone(),
                    presentation,
                    arguments: arguments.clone(),
                    detail: before_detail,
                };
                match self.approval(&record, ask, &reason, &cancel).await {
                    Ok(denial) => denial,
                    Err(ended) => return record.finish(ended, None),
                }
            }
        };
        if let Some((error, user_reason)) = denial {
            let detail = prepared.error_detail(&error);
            record.user_reason = user_reason;
            return record.finish(Ended::Failed(error), detail);
        }

        let _slot = match record.caller {
            Caller::Direct => {
                let slots = Arc::clone(&self.inner.running);
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => return record.finish(Ended::Failed(interrupted_error()), None),
                    slot = slots.acquire_owned() => slot.ok(),
                }
            }
            Caller::Code { .. } => None,
        };
        let (ended, detail) = self.run(&*prepared, &record, cancel).await;
        record.finish(ended, detail)
    }

    /// The tool of `record`'s call, when its entry may call it; else the refusal. A direct
    /// call of a code-mode-only tool that code may call is told how to call it.
    fn admit(&self, record: &CallRecord<'_>) -> Result<&RegisteredTool, (ErrorCode, String)> {
        let registry = &self.inner.registry;
        let mounts = &self.inner.mounts;
        let name = record.tool_name.as_str();
        if let Some(tool) = registry.get(name) {
            let from_code = Caller::Code {
                parent_call_id: String::new(),
            };
            match (&record.caller, tool.code_mode_only()) {
                (Caller::Direct, true) if mounts.allows(&from_code, tool) => {
                    return Err((ErrorCode::CodeModeOnly, code_mode_only_message(name)));
                }
                (Caller::Direct, true) => {}
                (caller, _) if mounts.allows(caller, tool) => return Ok(tool),
                _ => {}
            }
        }
        let callable = mounts.callable(&record.caller, registry);
        Err((
            ErrorCode::UnknownTool,
            unavailable_message(name, &record.caller, &callable),
        ))
    }

    /// Asks a person to approve `record`'s call: `Ok(None)` when they allow it, `Ok(Some)`
    /// with the denial (the model's message, the person's reason) when they refuse it or no
    /// one can answer, `Err` when the wait was cancelled.
    async fn approval(
        &self,
        record: &CallRecord<'_>,
        ask: RequestAsk,
        reason: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<(ToolError, Option<String>)>, Ended> {
        match self.ask(record, ask, cancel).await {
            RequestOutcome::Replied(RequestReply::Approve | RequestReply::ApproveForSession(_)) => {
                Ok(None)
            }
            RequestOutcome::Replied(RequestReply::Deny { reason: said }) => {
                Ok(Some(match said.as_deref().map(str::trim) {
                    Some(said) if !said.is_empty() => (
                        denied_error(&format!("The user declined this call, saying: {said}")),
                        Some(said.to_string()),
                    ),
                    _ => (
                        denied_error(&format!("The user declined this call ({reason}).")),
                        None,
                    ),
                }))
            }
            RequestOutcome::Replied(_) | RequestOutcome::Cancelled => {
                Err(Ended::Failed(interrupted_error()))
            }
            RequestOutcome::Unattended => Ok(Some((
                denied_error(&format!(
                    "The call needs the user's approval ({reason}), and no one can approve it here."
                )),
                None,
            ))),
        }
    }

    /// Records the reviewer's judgement of `record`'s call (`tool.reviewed`), counts it for the
    /// circuit breaker (pausing the turn when it opens), and says what happens next.
    fn after_review(
        &self,
        record: &CallRecord<'_>,
        auto: &AutoReview,
        judged: Judged,
    ) -> AfterReview {
        let session = self.session();
        let attended = session.requests().is_attended();
        let fallback = match attended {
            true => ReviewFallback::AskedPerson,
            false => ReviewFallback::UnattendedPolicy,
        };
        let reviewer = auto.judge().model().to_string();
        let latency_ms = u64::try_from(judged.latency.as_millis()).unwrap_or(u64::MAX);
        let (review, next) = match judged.outcome {
            Some(Judgement::Verdict {
                allow,
                risk,
                user_reason,
                model_message,
                usage,
            }) => {
                let review = AutoReviewRecord {
                    reviewer: reviewer.clone(),
                    verdict: if allow {
                        ReviewVerdict::Allow
                    } else {
                        ReviewVerdict::Deny
                    },
                    risk: Some(risk),
                    user_reason: user_reason.clone(),
                    latency_ms,
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                    fallback: None,
                };
                let next = match allow {
                    true => AfterReview::Run,
                    false => AfterReview::Refuse(
                        denied_error(&format!(
                            "The call was denied by the reviewer ({reviewer}): {model_message}"
                        )),
                        user_reason,
                    ),
                };
                (review, next)
            }
            Some(Judgement::Failed { problem, usage }) => unjudged(Unjudged {
                reviewer,
                attended,
                fallback,
                latency_ms,
                usage,
                verdict: ReviewVerdict::Failed,
                code: ErrorCode::AutoReviewFailed,
                what: format!("failed ({problem})"),
                ask_what: format!("could not judge this call ({problem})"),
                user_reason: format!("the reviewer failed: {problem}"),
            }),
            None => {
                let limit = auto.timeout().as_secs_f64();
                unjudged(Unjudged {
                    reviewer,
                    attended,
                    fallback,
                    latency_ms,
                    usage: Usage::default(),
                    verdict: ReviewVerdict::TimedOut,
                    code: ErrorCode::AutoReviewTimeout,
                    what: format!("did not answer within {limit} s"),
                    ask_what: format!("did not answer within {limit} s"),
                    user_reason: format!("the reviewer did not answer within {limit} s"),
                })
            }
        };
        let verdict = review.verdict;
        session
            .events()
            .emit(EventBody::ToolReviewed(ToolReviewedEvent {
                call_id: record.call_id.clone(),
                parent_call_id: record.caller.parent_call_id(),
                review,
            }));
        let turn = session.current_turn().unwrap_or_default();
        if let Some(open) = auto.count(&turn, verdict) {
            let message = auto.record_open(session.events(), &turn, &open);
            session.stop_turn(message);
        }
        next
    }

    /// Opens an approval request for `record`'s call and waits for it.
    async fn ask(
        &self,
        record: &CallRecord<'_>,
        ask: RequestAsk,
        cancel: &CancellationToken,
    ) -> RequestOutcome {
        let session = self.session();
        let parent = record.caller.parent_call_id();
        session
            .requests()
            .ask(
                session.events(),
                WaitingCall {
                    call_id: &record.call_id,
                    parent_call_id: parent.as_deref(),
                    tool_name: &record.tool_name,
                },
                ask,
                cancel,
            )
            .await
    }

    /// Records a call that cannot be dispatched — its argument text is not JSON, or the turn
    /// ended before its arguments were complete — as a `tool.start` and a `tool.result`
    /// carrying `error`, so that the log and the model see it like any refused call.
    pub fn reject(&self, call: ToolCall, caller: Caller, error: ToolError) -> CallOutcome {
        let mut record = CallRecord::new(self, call.call_id, call.name, caller);
        record.refuse(call.arguments, error.code, error.message)
    }

    async fn run(
        &self,
        prepared: &dyn PreparedCall,
        record: &CallRecord<'_>,
        cancel: CancellationToken,
    ) -> (Ended, Option<Detail>) {
        let call_cancel = cancel.child_token();
        let clock = Arc::new(CallClock::start(self.inner.config.timeout));
        let live = Arc::new(LiveOutput::new(
            record.call_id.clone(),
            record.caller.parent_call_id(),
        ));
        // Whichever way the run ends (even dropped half-way), the live output's end is sent
        // before the call's result.
        let _live_ends = LiveEnds {
            live: Arc::clone(&live),
            session: self.session(),
        };
        let cx = ToolContext {
            call_id: record.call_id.clone(),
            parent_call_id: record.caller.parent_call_id(),
            tool_name: record.tool_name.clone(),
            cancel: call_cancel.clone(),
            clock: Arc::clone(&clock),
            executor: self.clone(),
            live: Arc::clone(&live),
        };
        let running = match catch_panic(|| prepared.run(cx)) {
            Ok(running) => running,
            Err(panic) => {
                return (Ended::Failed(panic_error(&record.tool_name, &panic)), None);
            }
        };
        let mut running = AssertUnwindSafe(running).catch_unwind();
        let stopped = loop {
            tokio::select! {
                biased;
                finished = &mut running => return ran(finished, &record.tool_name),
                () = call_cancel.cancelled() => break interrupted_error(),
                () = clock.expired() => {
                    let limit = clock.limit().unwrap_or_default();
                    break ToolError::new(
                        ErrorCode::Timeout,
                        format!(
                            "The call did not finish within its {} s limit and was stopped. \
                             Narrow the request or split the work into smaller calls.",
                            limit.as_secs_f64()
                        ),
                    );
                }
                () = live.due() => live.send_waiting(self.session().events()),
            }
        };
        // Stop the tool, and give it a moment to hand back what it had produced.
        call_cancel.cancel();
        let wrapped_up = tokio::time::timeout(self.inner.config.stop_grace, running).await;
        let (partial, detail) = match wrapped_up {
            Ok(Ok(Ok(ran))) => {
                let detail = ran.detail.clone();
                (Some(Partial::Ran(ran)), detail)
            }
            Ok(Ok(Err((said, detail)))) => (Some(Partial::Said(said)), detail),
            Ok(Err(_)) | Err(_) => (None, None),
        };
        let detail = detail.or_else(|| prepared.error_detail(&stopped));
        (
            Ended::Stopped {
                error: stopped,
                partial,
            },
            detail,
        )
    }
}

/// Sends the end of a call's live output when dropped: when its run ends, before its result.
struct LiveEnds<'s> {
    live: Arc<LiveOutput>,
    session: &'s Session,
}

impl Drop for LiveEnds<'_> {
    fn drop(&mut self) {
        self.live.finish(self.session.events());
    }
}

/// How a run ended: the tool's own result, or stopped by an interrupt or the deadline with
/// whatever the tool handed back while stopping.
enum Ended {
    Ran(Ran),
    Failed(ToolError),
    Stopped {
        error: ToolError,
        partial: Option<Partial>,
    },
}

/// What a stopped tool handed back: an output, or an error saying what it had done.
enum Partial {
    Ran(Ran),
    Said(ToolError),
}

/// The ending of a tool future that ran to completion (or panicked).
fn ran(finished: Result<RunResult, Box<dyn Any + Send>>, tool: &str) -> (Ended, Option<Detail>) {
    match finished {
        Ok(Ok(ran)) => {
            let detail = ran.detail.clone();
            (Ended::Ran(ran), detail)
        }
        Ok(Err((error, detail))) => (Ended::Failed(error), detail),
        Err(panic) => (
            Ended::Failed(panic_error(tool, &panic_text(panic.as_ref()))),
            None,
        ),
    }
}

fn interrupted_error() -> ToolError {
    ToolError::new(
        ErrorCode::Interrupted,
        "The call was interrupted before it finished; its work may be incomplete.",
    )
}

/// A review that ended without a verdict (the reviewer failed or timed out), as recorded and
/// acted on: `what` finishes "the reviewer (…) " for the model, `ask_what` for the person asked.
struct Unjudged {
    reviewer: String,
    attended: bool,
    fallback: ReviewFallback,
    latency_ms: u64,
    usage: Usage,
    verdict: ReviewVerdict,
    code: ErrorCode,
    what: String,
    ask_what: String,
    user_reason: String,
}

/// The record and the next step of a review without a verdict: an attended session asks the
/// person; an unattended one refuses the call with a message the model can act on.
fn unjudged(review: Unjudged) -> (AutoReviewRecord, AfterReview) {
    let Unjudged {
        reviewer,
        attended,
        fallback,
        latency_ms,
        usage,
        verdict,
        code,
        what,
        ask_what,
        user_reason,
    } = review;
    let next = match attended {
        true => AfterReview::AskPerson(format!("the reviewer ({reviewer}) {ask_what}")),
        false => AfterReview::Refuse(
            ToolError::new(
                code,
                format!(
                    "The call was not run: the reviewer ({reviewer}) that judges calls like this \
                     one {what}, and no one can approve it here. Choose another approach, or \
                     finish with what you have and say what needs a person's approval."
                ),
            ),
            user_reason.clone(),
        ),
    };
    let record = AutoReviewRecord {
        reviewer,
        verdict,
        risk: None,
        user_reason,
        latency_ms,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        fallback: Some(fallback),
    };
    (record, next)
}

fn denied_error(said: &str) -> ToolError {
    ToolError::new(
        ErrorCode::AutoReviewDenied,
        format!("{said} Do not retry the same call; choose another approach or ask the user."),
    )
}

/// What follows a review.
enum AfterReview {
    /// The call runs.
    Run,
    /// The call is refused: the error the model reads, and the reason the person is shown.
    Refuse(ToolError, String),
    /// The reviewer could not judge: a person is asked, told why.
    AskPerson(String),
}

/// A review's outcome (`None` when it ran out of time) and how long it took.
struct Judged {
    outcome: Option<Judgement>,
    latency: Duration,
}

/// Asks the reviewer model about `call`, within its time limit.
async fn judge_call(auto: &AutoReview, call: ReviewedCall<'_>) -> Judged {
    let started = Instant::now();
    let outcome = tokio::time::timeout(auto.timeout(), auto.judge().judge(call))
        .await
        .ok();
    Judged {
        outcome,
        latency: started.elapsed(),
    }
}

/// The events of one call, so that every `tool.start` gets exactly one `tool.result`: a
/// record dropped between the two (its future was dropped) records the call as interrupted.
struct CallRecord<'e> {
    executor: &'e Executor,
    call_id: String,
    tool_name: String,
    caller: Caller,
    started: Instant,
    open: bool,
    /// The reason a denied call's person is shown, recorded with its result.
    user_reason: Option<String>,
}

impl<'e> CallRecord<'e> {
    fn new(executor: &'e Executor, call_id: String, tool_name: String, caller: Caller) -> Self {
        CallRecord {
            executor,
            call_id,
            tool_name,
            caller,
            started: Instant::now(),
            open: false,
            user_reason: None,
        }
    }

    fn start(
        &mut self,
        arguments: Value,
        presentation: CallPresentation,
        before_detail: Option<Detail>,
    ) {
        self.open = true;
        self.executor
            .session()
            .events()
            .emit(EventBody::ToolStart(ToolStartEvent {
                call_id: self.call_id.clone(),
                tool_name: self.tool_name.clone(),
                caller: self.caller.kind(),
                parent_call_id: self.caller.parent_call_id(),
                arguments,
                presentation,
                before_detail: self.logged(None, before_detail).1,
            }));
    }

    /// The output and detail as the event log keeps them: long strings cut, the whole output
    /// saved beside the call's spill file.
    fn logged(
        &self,
        output: Option<&Value>,
        detail: Option<Detail>,
    ) -> (Option<Value>, Option<Detail>) {
        let path = self.executor.session().spill_path(&self.call_id, "output");
        let cap = self.executor.inner.config.output_cap;
        cap.for_the_log(output, detail, &path.with_extension("json"))
    }

    /// A call refused before it could be presented by its tool: a generic start, then the error.
    fn refuse(&mut self, arguments: Value, code: ErrorCode, message: String) -> CallOutcome {
        let presentation = CallPresentation::new(self.tool_name.clone(), String::new());
        self.start(arguments, presentation, None);
        self.finish(Ended::Failed(ToolError::new(code, message)), None)
    }

    fn finish(&mut self, ended: Ended, detail: Option<Detail>) -> CallOutcome {
        self.open = false;
        let duration = self.started.elapsed();
        let session = self.executor.session();
        let capped = |ran: Ran| {
            let spill_path = session.spill_path(&self.call_id, "");
            let content = self
                .executor
                .inner
                .config
                .output_cap
                .apply(ran.content, &spill_path);
            (content, ran.output)
        };
        let (status, error, content, output) = match ended {
            Ended::Ran(ran) => {
                let (content, output) = capped(ran);
                (CallStatus::Ok, None, content, Some(output))
            }
            Ended::Failed(error) => {
                let content = vec![ContentBlock::text(error.message.clone())];
                (status_of(&error), Some(error), content, None)
            }
            Ended::Stopped { error, partial } => {
                let mut content = vec![ContentBlock::text(error.message.clone())];
                let output = match partial {
                    Some(Partial::Ran(ran)) => {
                        let (so_far, output) = capped(ran);
                        content.push(ContentBlock::text(
                            "What the call produced before it stopped:",
                        ));
                        content.extend(so_far);
                        Some(output)
                    }
                    // The tool's own account of how it stopped (e.g. the output so far) says
                    // more than the generic message.
                    Some(Partial::Said(said)) if said.code == error.code => {
                        content = vec![ContentBlock::text(said.message)];
                        None
                    }
                    Some(Partial::Said(said)) => {
                        content.push(ContentBlock::text(said.message));
                        None
                    }
                    None => None,
                };
                (status_of(&error), Some(error), content, output)
            }
        };
        self.emit_result(
            status,
            error.as_ref().map(|e| e.code),
            &content,
            &output,
            detail,
            duration,
        );
        CallOutcome {
            call_id: std::mem::take(&mut self.call_id),
            status,
            error,
            content,
            output,
            duration,
        }
    }

    fn emit_result(
        &self,
        status: CallStatus,
        error_code: Option<ErrorCode>,
        content: &[ContentBlock],
        output: &Option<Value>,
        detail: Option<Detail>,
        duration: Duration,
    ) {
        let (logged_output, logged_detail) = self.logged(output.as_ref(), detail);
        self.executor
            .session()
            .events()
            .emit(EventBody::ToolResult(ToolResultEvent {
                call_id: self.call_id.clone(),
                tool_name: self.tool_name.clone(),
                caller: self.caller.kind(),
                parent_call_id: self.caller.parent_call_id(),
                status,
                error_code,
                content: content.to_vec(),
                user_reason: self.user_reason.clone(),
                output: logged_output,
                detail: logged_detail,
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            }));
    }
}

impl Drop for CallRecord<'_> {
    fn drop(&mut self) {
        if self.open {
            let error = ToolError::new(
                ErrorCode::Interrupted,
                "The call was stopped before it finished: the run or turn that made it ended.",
            );
            let content = vec![ContentBlock::text(error.message)];
            self.emit_result(
                CallStatus::Interrupted,
                Some(ErrorCode::Interrupted),
                &content,
                &None,
                None,
                self.started.elapsed(),
            );
        }
    }
}

fn status_of(error: &ToolError) -> CallStatus {
    match error.code {
        ErrorCode::AutoReviewDenied
        | ErrorCode::AutoReviewFailed
        | ErrorCode::AutoReviewTimeout => CallStatus::Denied,
        ErrorCode::Interrupted => CallStatus::Interrupted,
        _ => CallStatus::Error,
    }
}

/// `null` arguments mean none; a `null` property means the same as leaving it out.
fn normalize_arguments(arguments: Value) -> Value {
    match arguments {
        Value::Null => Value::Object(Default::default()),
        Value::Object(mut map) => {
            map.retain(|_, value| !value.is_null());
            Value::Object(map)
        }
        other => other,
    }
}

/// Why `name` cannot be called from this entry, with close names and what can be called.
fn unavailable_message(name: &str, caller: &Caller, callable: &[&str]) -> String {
    let mut message = match caller {
        Caller::Code { .. } if name == RUN_CODE => {
            "`run_code` cannot be called from code: the code already runs inside `run_code`. \
             Call the tools themselves with `sdk.tool.call`."
                .to_string()
        }
        Caller::Code { .. } => format!("Unknown tool `{name}`: code in this agent cannot call it."),
        Caller::Direct => format!("Unknown tool `{name}`: it is not one of your tools."),
    };
    let suggestions = closest_names(name, callable.iter().copied(), 3);
    if !suggestions.is_empty() && name != RUN_CODE {
        let listed: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
        message.push_str(&format!(" Did you mean {}?", listed.join(" or ")));
    }
    if callable.is_empty() {
        message.push_str(" No tools can be called here.");
    } else {
        message.push_str(&format!(
            " The tools you can call: {}.",
            callable.join(", ")
        ));
    }
    message
}

fn code_mode_only_message(name: &str) -> String {
    format!(
        "`{name}` is a code-mode-only tool and cannot be called directly. Call it from Python \
         inside `run_code` with `sdk.tool.call(\"{name}\", {{...}})`; the skill that covers it \
         describes its arguments and output."
    )
}

/// The validation errors of `arguments`, as one message naming each failing path, or `None`.
fn validation_message(tool: &RegisteredTool, arguments: &Value) -> Option<String> {
    let problems: Vec<String> = tool
        .validator
        .iter_errors(arguments)
        .take(8)
        .map(|error| {
            let pointer = error.instance_path().to_string();
            let at = if pointer.is_empty() {
                "the arguments".to_string()
            } else {
                format!("`{}`", pointer.trim_start_matches('/').replace('/', "."))
            };
            let received = describe_value(error.instance());
            match error.kind() {
                ValidationErrorKind::Type {
                    kind: TypeKind::Single(expected),
                } => format!("{at}: expected {expected}, got {received}"),
                ValidationErrorKind::Required { property } => {
                    let property = property
                        .as_str()
                        .map_or_else(|| property.to_string(), str::to_string);
                    if pointer.is_empty() {
                        format!("missing required argument `{property}`")
                    } else {
                        format!("{at}: missing required field `{property}`")
                    }
                }
                ValidationErrorKind::Enum { options } => {
                    format!("{at}: expected one of {options}, got {received}")
                }
                _ => format!("{at}: {error}"),
            }
        })
        .collect();
    if problems.is_empty() {
        return None;
    }
    let mut message = format!("Invalid arguments for `{}`:\n", tool.name());
    for problem in problems {
        message.push_str("- ");
        message.push_str(&problem);
        message.push('\n');
    }
    message.push_str(&format!("The parameter schema is: {}", tool.parameters()));
    Some(message)
}

fn describe_value(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".into(),
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut shown = value.to_string();
    if shown.len() > 60 {
        let mut end = 57;
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        shown.truncate(end);
        shown.push_str("...");
    }
    format!("{kind} {shown}")
}

fn catch_panic<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|panic| panic_text(panic.as_ref()))
}

fn panic_text(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

fn panic_error(tool: &str, panic: &str) -> ToolError {
    ToolError::failed(format!(
        "The tool `{tool}` crashed (panic: {panic}). This is a bug in the tool, not in your \
         arguments; try another approach."
    ))
}
