//! The tool calls one run makes: numbered under the `run_code` call, dispatched through the
//! execution layer with caller `Code`, synchronous ones awaited in place and `call_async`
//! ones run concurrently (bounded) until the code awaits them. A run replaying its journal
//! after a restart takes each journaled call's result from the journal instead of running the
//! tool again (see [`crate::journal`]).

use crate::convert::json_to_monty;
use crate::error::CodeError;
use crate::journal::{CallJournal, first_text};
use crate::run::RunObserver;
use crate::sdk::tool_exception;
use monty_types::{MontyException, MontyObject};
use qilin_protocol::{CallStatus, CallerKind, ContentBlock, ErrorCode, EventBody, ToolResultEvent};
use qilin_tool::{CallOutcome, Caller, Executor, ToolCall, ToolContext, ToolEffect, ToolError};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// What a tool call gives back to the code: a value or the exception to raise.
pub(crate) type CallResult = Result<MontyObject, MontyException>;

/// The tool calls of one run.
pub(crate) struct ToolCalls {
    executor: Executor,
    parent_call_id: String,
    cancel: CancellationToken,
    calls_cancel: CancellationToken,
    limit: usize,
    made: usize,
    permits: Arc<Semaphore>,
    running: JoinSet<(u32, CallResult)>,
    finished: HashMap<u32, CallResult>,
    /// The journal being replayed, when the run resumes one.
    journal: Option<CallJournal>,
    /// The journaled calls without a result that ran again (their tool is read-only, or they
    /// were waiting for a person's answer).
    ran_again: BTreeSet<usize>,
    /// Told of each call the run dispatches and of its end.
    observer: Option<Arc<dyn RunObserver>>,
}

/// How a call the code makes is answered.
enum Next {
    /// By running it.
    Dispatch(ToolCall),
    /// By its journaled outcome, the tool not running again.
    Replayed(CallOutcome),
}

impl ToolCalls {
    /// The calls of the run `cx` is running, at most `limit`, `concurrency` at a time; the
    /// run is interrupted when `cancel` is cancelled, and `observer` told of each call it
    /// dispatches. With `journal`, the calls it holds are answered from it, in order.
    pub(crate) fn new(
        cx: &ToolContext,
        cancel: CancellationToken,
        observer: Option<Arc<dyn RunObserver>>,
        limit: usize,
        concurrency: usize,
        journal: Option<CallJournal>,
    ) -> Self {
        ToolCalls {
            executor: cx.executor().clone(),
            parent_call_id: cx.call_id().to_string(),
            calls_cancel: cancel.child_token(),
            cancel,
            limit,
            made: 0,
            permits: Arc::new(Semaphore::new(concurrency)),
            running: JoinSet::new(),
            finished: HashMap::new(),
            journal,
            ran_again: BTreeSet::new(),
            observer,
        }
    }

    /// How many calls the code made.
    pub(crate) fn made(&self) -> usize {
        self.made
    }

    /// True once the run was interrupted.
    pub(crate) fn interrupted(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Numbers the next call and says how it is answered: run, or (replaying a journal)
    /// its journaled outcome. A call unlike the journal's at its position, or a journaled
    /// call with no result whose tool may change something, ends the run.
    fn next_call(&mut self, name: String, arguments: Value) -> Result<Next, CodeError> {
        if self.made >= self.limit {
            return Err(CodeError::ToolCalls { limit: self.limit });
        }
        self.made += 1;
        let call = ToolCall {
            call_id: format!("{}.{}", self.parent_call_id, self.made),
            name,
            arguments,
        };
        let Some(journaled) = self.journal.as_ref().and_then(|j| j.get(self.made)) else {
            return Ok(self.dispatching(call));
        };
        let canonical = self
            .executor
            .canonical_arguments(&call.name, call.arguments.clone());
        if journaled.tool != call.name
            || (journaled.arguments != canonical && journaled.arguments != call.arguments)
        {
            return Err(CodeError::Diverged {
                call_id: call.call_id,
                journaled: describe_call(&journaled.tool, &journaled.arguments),
                asked: describe_call(&call.name, &canonical),
            });
        }
        match &journaled.result {
            Some(result) => {
                if let Some(observer) = &self.observer {
                    observer.call_replayed(
                        &call.call_id,
                        &call.name,
                        &call.arguments,
                        result.status,
                    );
                }
                Ok(Next::Replayed(result.outcome(&call.call_id)))
            }
            // It certainly did not run (it waited for a person), or running it again
            // changes nothing.
            None if journaled.awaiting_answer || self.read_only(&call.name) => {
                self.ran_again.insert(self.made);
                Ok(self.dispatching(call))
            }
            None => Err(CodeError::UnknownOutcome {
                call_id: call.call_id,
                tool: call.name,
                arguments: journaled.arguments.to_string(),
            }),
        }
    }

    /// A call about to run, the observer told of it.
    fn dispatching(&self, call: ToolCall) -> Next {
        if let Some(observer) = &self.observer {
            observer.call_started(&call.call_id, &call.name, &call.arguments);
        }
        Next::Dispatch(call)
    }

    /// Whether `tool` declares it changes nothing.
    fn read_only(&self, tool: &str) -> bool {
        self.executor
            .registry()
            .get(tool)
            .is_some_and(|tool| tool.effect() == Some(ToolEffect::ReadOnly))
    }

    /// The first journaled call the code has not made (replaying, the code ended early).
    pub(crate) fn unmade_journaled_call(&self) -> Option<CodeError> {
        let journal = self.journal.as_ref()?;
        let (_, unmade) = journal.numbered().find(|(index, _)| *index > self.made)?;
        Some(CodeError::Diverged {
            call_id: unmade.call_id.clone(),
            journaled: describe_call(&unmade.tool, &unmade.arguments),
            asked: "nothing: it ended before making that call".to_string(),
        })
    }

    fn caller(&self) -> Caller {
        Caller::Code {
            parent_call_id: self.parent_call_id.clone(),
        }
    }

    /// Runs a call and waits for it; with `text`, its result is the text the model would
    /// read of it rather than its output.
    pub(crate) async fn call(
        &mut self,
        name: String,
        arguments: Value,
        text: bool,
    ) -> Result<CallResult, CodeError> {
        let outcome = match self.next_call(name, arguments)? {
            Next::Replayed(outcome) => outcome,
            Next::Dispatch(call) => {
                let outcome = self
                    .executor
                    .dispatch_cancellable(call, self.caller(), self.calls_cancel.clone())
                    .await;
                if let Some(observer) = &self.observer {
                    observer.call_ended(&outcome.call_id, outcome.status);
                }
                outcome
            }
        };
        if outcome.status == CallStatus::Interrupted && self.cancel.is_cancelled() {
            return Err(CodeError::Interrupted);
        }
        Ok(match text {
            true => as_text(outcome),
            false => to_python(outcome),
        })
    }

    /// Starts a call whose result the code will await as future `future_id`.
    pub(crate) fn start(
        &mut self,
        future_id: u32,
        name: String,
        arguments: Value,
    ) -> Result<(), CodeError> {
        let call = match self.next_call(name, arguments)? {
            Next::Replayed(outcome) => {
                self.finished.insert(future_id, to_python(outcome));
                return Ok(());
            }
            Next::Dispatch(call) => call,
        };
        let executor = self.executor.clone();
        let caller = self.caller();
        let cancel = self.calls_cancel.clone();
        let permits = Arc::clone(&self.permits);
        let observer = self.observer.clone();
        self.running.spawn(async move {
            // The semaphore is never closed, so a permit always comes.
            let _permit = permits.acquire_owned().await.ok();
            let outcome = executor.dispatch_cancellable(call, caller, cancel).await;
            if let Some(observer) = &observer {
                observer.call_ended(&outcome.call_id, outcome.status);
            }
            (future_id, to_python(outcome))
        });
        Ok(())
    }

    /// Ends the calls still running when the run ends (an exception, a limit, an interrupt):
    /// each is cancelled and finishes as interrupted with what it had, so every call the code
    /// started has its result before the run's own.
    ///
    /// Replaying, the journaled calls left without a result and not run again get theirs
    /// (interrupted, their outcome unknown), so that their `tool.start` is closed.
    pub(crate) async fn finish(&mut self) {
        self.close_unknown_outcomes();
        if self.running.is_empty() {
            return;
        }
        self.calls_cancel.cancel();
        while self.running.join_next().await.is_some() {}
    }

    fn close_unknown_outcomes(&mut self) {
        let Some(journal) = self.journal.take() else {
            return;
        };
        let events = self.executor.session().events();
        let open = journal
            .numbered()
            .filter(|(index, call)| call.result.is_none() && !self.ran_again.contains(index));
        for (_, call) in open {
            events.emit(EventBody::ToolResult(ToolResultEvent {
                call_id: call.call_id.clone(),
                tool_name: call.tool.clone(),
                caller: CallerKind::Code,
                parent_call_id: Some(self.parent_call_id.clone()),
                status: CallStatus::Interrupted,
                error_code: Some(ErrorCode::Interrupted),
                content: vec![ContentBlock::text(
                    "The process running the code ended while this call ran; whether it took \
                     effect is unknown, and it was not run again.",
                )],
                user_reason: None,
                output: None,
                detail: None,
                duration_ms: 0,
            }));
        }
    }

    /// Waits until at least one of `pending` has finished and returns every finished one.
    pub(crate) async fn resolve(
        &mut self,
        pending: &[u32],
    ) -> Result<Vec<(u32, CallResult)>, CodeError> {
        loop {
            let ready: Vec<u32> = pending
                .iter()
                .copied()
                .filter(|id| self.finished.contains_key(id))
                .collect();
            if !ready.is_empty() {
                return Ok(ready
                    .into_iter()
                    .filter_map(|id| self.finished.remove(&id).map(|result| (id, result)))
                    .collect());
            }
            let joined = tokio::select! {
                joined = self.running.join_next() => joined,
                () = self.cancel.cancelled() => return Err(CodeError::Interrupted),
            };
            match joined {
                Some(Ok((id, result))) => {
                    self.finished.insert(id, result);
                    while let Some(Ok((id, result))) = self.running.try_join_next() {
                        self.finished.insert(id, result);
                    }
                }
                Some(Err(err)) => {
                    return Err(CodeError::Sandbox(format!(
                        "a tool call task failed: {err}"
                    )));
                }
                None => {
                    return Err(CodeError::Sandbox(format!(
                        "the code awaits calls {pending:?} that were never started"
                    )));
                }
            }
        }
    }
}

/// The text of a call's content (what a direct call gives the model), or its error.
fn as_text(outcome: CallOutcome) -> CallResult {
    if outcome.status != CallStatus::Ok {
        return to_python(outcome);
    }
    let text: Vec<&str> = outcome
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    Ok(MontyObject::String(text.join("\n")))
}

/// The value or exception a call gives the code. A failed call's message is the first text
/// of its content (what the log keeps), so that a replayed call raises exactly what it raised.
fn to_python(outcome: CallOutcome) -> CallResult {
    match (outcome.status, outcome.output, outcome.error) {
        (CallStatus::Ok, Some(output), _) => Ok(json_to_monty(&output)),
        (_, _, Some(error)) => {
            let message = first_text(&outcome.content).unwrap_or(error.message);
            Err(tool_exception(&ToolError::new(error.code, message)))
        }
        (status, _, None) => Err(tool_exception(&ToolError::new(
            ErrorCode::ToolFailed,
            format!("the call ended with status {status:?} and no output"),
        ))),
    }
}

/// A call as an error message names it: the tool and its arguments.
fn describe_call(tool: &str, arguments: &Value) -> String {
    format!("`{tool}` with {arguments}")
}
