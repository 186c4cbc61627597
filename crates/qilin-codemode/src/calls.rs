//! The tool calls one run makes: numbered under the `run_code` call, dispatched through the
//! execution layer with caller `Code`, synchronous ones awaited in place and `call_async`
//! ones run concurrently (bounded) until the code awaits them.

use crate::convert::json_to_monty;
use crate::error::CodeError;
use crate::run::RunObserver;
use crate::sdk::tool_exception;
use monty_types::{MontyException, MontyObject};
use qilin_protocol::{CallStatus, ContentBlock, ErrorCode};
use qilin_tool::{CallOutcome, Caller, Executor, ToolCall, ToolContext, ToolError};
use serde_json::Value;
use std::collections::HashMap;
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
    observer: Option<Arc<dyn RunObserver>>,
}

impl ToolCalls {
    /// The calls of the run `cx` is running, at most `limit`, `concurrency` at a time; the
    /// run is interrupted when `cancel` is cancelled, and `observer` told of each call.
    pub(crate) fn new(
        cx: &ToolContext,
        cancel: CancellationToken,
        observer: Option<Arc<dyn RunObserver>>,
        limit: usize,
        concurrency: usize,
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

    fn next_call(&mut self, name: String, arguments: Value) -> Result<ToolCall, CodeError> {
        if self.made >= self.limit {
            return Err(CodeError::ToolCalls { limit: self.limit });
        }
        self.made += 1;
        let call_id = format!("{}.{}", self.parent_call_id, self.made);
        if let Some(observer) = &self.observer {
            observer.call_started(&call_id, &name, &arguments);
        }
        Ok(ToolCall {
            call_id,
            name,
            arguments,
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
        let call = self.next_call(name, arguments)?;
        let outcome = self
            .executor
            .dispatch_cancellable(call, self.caller(), self.calls_cancel.clone())
            .await;
        if let Some(observer) = &self.observer {
            observer.call_ended(&outcome.call_id, outcome.status);
        }
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
        let call = self.next_call(name, arguments)?;
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
    pub(crate) async fn finish(&mut self) {
        if self.running.is_empty() {
            return;
        }
        self.calls_cancel.cancel();
        while self.running.join_next().await.is_some() {}
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

fn to_python(outcome: CallOutcome) -> CallResult {
    match (outcome.status, outcome.output, outcome.error) {
        (CallStatus::Ok, Some(output), _) => Ok(json_to_monty(&output)),
        (_, _, Some(error)) => Err(tool_exception(&error)),
        (status, _, None) => Err(tool_exception(&ToolError::new(
            ErrorCode::ToolFailed,
            format!("the call ended with status {status:?} and no output"),
        ))),
    }
}
