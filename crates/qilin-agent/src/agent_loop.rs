//! The agent loop: prompt → stream the model → dispatch each call as its arguments end →
//! results back to the model → repeat until the model stops, the step limit, or an interrupt.

use futures_util::StreamExt;
use qilin_model::{Message, ModelEvent, ModelProvider, ModelRequest, ToolCall, ToolCallResult};
use qilin_protocol::{CallStatus, ErrorCode, EventBody, FinishReason, ToolPreparingEvent, Usage};
use qilin_tool::{CallOutcome, Caller, DirectDefinition, Executor, ToolError};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

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

/// An agent: a model, a prompt, and an executor for its tool calls.
pub struct Agent {
    provider: Arc<dyn ModelProvider>,
    prompt: AgentPrompt,
    executor: Executor,
    settings: LoopSettings,
    turns: AtomicU32,
}

/// A call the model is making in the current step.
struct StepCall {
    id: String,
    name: String,
    arguments: String,
    running: Option<JoinHandle<CallOutcome>>,
}

impl Agent {
    /// An agent answering with `provider`, showing it `prompt`, running calls on `executor`.
    pub fn new(
        provider: Arc<dyn ModelProvider>,
        prompt: AgentPrompt,
        executor: Executor,
        settings: LoopSettings,
    ) -> Self {
        Agent {
            provider,
            prompt,
            executor,
            settings,
            turns: AtomicU32::new(0),
        }
    }

    /// The executor (and through it the session and its event log).
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Runs one turn: appends the prompt and everything the turn produced to `history`.
    ///
    /// Cancelling `cancel` interrupts the turn: the model stream is dropped, running calls
    /// end `interrupted`, and every call the model named gets a result, so `history` stays a
    /// valid conversation and the event log stays consistent.
    pub async fn run_turn(
        &self,
        history: &mut Vec<Message>,
        prompt: &str,
        cancel: CancellationToken,
    ) -> TurnSummary {
        let turn_id = format!("turn-{}", self.turns.fetch_add(1, Ordering::Relaxed) + 1);
        self.emit(EventBody::TurnStarted {
            turn_id: turn_id.clone(),
            prompt: prompt.to_string(),
            client_turn_id: None,
        });
        history.push(Message::user(prompt));
        let mut summary = TurnSummary {
            reason: FinishReason::MaxSteps,
            steps: 0,
            usage: Usage::default(),
            final_text: String::new(),
            error: None,
        };
        for step in 1..=self.settings.max_steps {
            summary.steps = step;
            match self.run_step(&turn_id, step, history, &cancel).await {
                StepEnd::Calls { text, usage } => {
                    add_usage(&mut summary.usage, usage);
                    summary.final_text = text;
                }
                StepEnd::Answer { text, usage } => {
                    add_usage(&mut summary.usage, usage);
                    summary.final_text = text;
                    summary.reason = FinishReason::Completed;
                    break;
                }
                StepEnd::Interrupted { text } => {
                    summary.final_text = text;
                    summary.reason = FinishReason::Interrupted;
                    break;
                }
                StepEnd::Failed { message } => {
                    summary.reason = FinishReason::Error;
                    summary.error = Some(message);
                    break;
                }
            }
        }
        self.emit(EventBody::TurnFinished {
            turn_id,
            reason: summary.reason,
            message: summary.error.clone(),
        });
        summary
    }

    async fn run_step(
        &self,
        turn_id: &str,
        step: u32,
        history: &mut Vec<Message>,
        cancel: &CancellationToken,
    ) -> StepEnd {
        self.emit(EventBody::StepStarted {
            turn_id: turn_id.to_string(),
            step,
        });
        let request = ModelRequest {
            model: self.settings.model.clone(),
            system: self.prompt.system.clone(),
            tools: self.prompt.tools.clone(),
            messages: history.clone(),
            max_tokens: self.settings.max_tokens,
            reasoning: None,
        };
        let mut stream = self.provider.stream(request);
        let mut text = String::new();
        let mut calls: Vec<StepCall> = Vec::new();
        let mut usage = Usage::default();
        let mut failure: Option<String> = None;
        let mut stop_reason = None;
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
                    self.emit(preparing(&id, &name, String::new()));
                    calls.push(StepCall {
                        id,
                        name,
                        arguments: String::new(),
                        running: None,
                    });
                }
                Some(Ok(ModelEvent::ToolCallDelta {
                    id,
                    arguments_delta,
                })) => {
                    if let Some(call) = calls.iter_mut().find(|c| c.id == id) {
                        call.arguments.push_str(&arguments_delta);
                        self.emit(preparing(&call.id, &call.name, arguments_delta));
                    }
                }
                Some(Ok(ModelEvent::ToolCallEnd { id })) => {
                    if let Some(call) = calls.iter_mut().find(|c| c.id == id && c.running.is_none())
                    {
                        call.running = Some(self.start_call(call, cancel));
                    }
                }
                Some(Ok(ModelEvent::Usage(reported))) => usage = reported,
                Some(Ok(ModelEvent::Finished {
                    stop_reason: reason,
                })) => {
                    stop_reason = Some(wire_stop_reason(&reason));
                }
                Some(Ok(ModelEvent::ReasoningDelta(_) | ModelEvent::ReasoningBlock(_))) => {}
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
        let results = self
            .collect_results(&mut calls, interrupted || failure.is_some())
            .await;
        self.emit(EventBody::StepFinished {
            turn_id: turn_id.to_string(),
            step,
            usage,
            stop_reason,
        });
        let made_calls = !calls.is_empty();
        if made_calls || !text.is_empty() {
            let tool_calls = calls
                .into_iter()
                .map(|call| ToolCall {
                    id: call.id,
                    name: call.name,
                    arguments: call.arguments,
                })
                .collect();
            history.push(Message::assistant(text.clone(), tool_calls));
        }
        if made_calls {
            history.push(Message::tool_results(results));
        }
        match (failure, interrupted, made_calls) {
            (Some(message), _, _) => StepEnd::Failed { message },
            (None, true, _) => StepEnd::Interrupted { text },
            (None, false, true) => StepEnd::Calls { text, usage },
            (None, false, false) => StepEnd::Answer { text, usage },
        }
    }

    /// Dispatches a call whose arguments are complete; argument text that is not a JSON value
    /// is told to the model as an `INVALID_ARGUMENTS` result and the loop goes on.
    fn start_call(&self, call: &StepCall, cancel: &CancellationToken) -> JoinHandle<CallOutcome> {
        let text = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let tool_call = qilin_tool::ToolCall {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: Value::Null,
        };
        match serde_json::from_str::<Value>(text) {
            Ok(arguments) => {
                let executor = self.executor.clone();
                let cancel = cancel.clone();
                let tool_call = qilin_tool::ToolCall {
                    arguments,
                    ..tool_call
                };
                tokio::spawn(async move {
                    executor
                        .dispatch_cancellable(tool_call, Caller::Direct, cancel)
                        .await
                })
            }
            Err(err) => {
                let error = ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "The arguments of `{}` are not valid JSON ({err}). Send one JSON object \
                         matching the tool's parameter schema.",
                        call.name
                    ),
                );
                let outcome = self.executor.reject(
                    qilin_tool::ToolCall {
                        arguments: Value::String(call.arguments.clone()),
                        ..tool_call
                    },
                    Caller::Direct,
                    error,
                );
                tokio::spawn(std::future::ready(outcome))
            }
        }
    }

    /// Waits for every call of the step, in the model's order (calls already running finish
    /// even when the model's stream failed). A call whose arguments never ended is recorded as
    /// interrupted.
    async fn collect_results(
        &self,
        calls: &mut [StepCall],
        ended_early: bool,
    ) -> Vec<ToolCallResult> {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls.iter_mut() {
            let outcome = match call.running.take() {
                Some(handle) => match handle.await {
                    Ok(outcome) => outcome,
                    Err(join_error) => self.executor.reject(
                        qilin_tool::ToolCall {
                            call_id: call.id.clone(),
                            name: call.name.clone(),
                            arguments: Value::String(call.arguments.clone()),
                        },
                        Caller::Direct,
                        ToolError::failed(format!(
                            "the call's task ended abnormally: {join_error}"
                        )),
                    ),
                },
                None => {
                    let reason = if ended_early {
                        "The turn ended before the arguments of this call were complete; it did not run."
                    } else {
                        "The model never finished the arguments of this call; it did not run."
                    };
                    self.executor.reject(
                        qilin_tool::ToolCall {
                            call_id: call.id.clone(),
                            name: call.name.clone(),
                            arguments: Value::String(call.arguments.clone()),
                        },
                        Caller::Direct,
                        ToolError::new(ErrorCode::Interrupted, reason),
                    )
                }
            };
            let is_error = outcome.status != CallStatus::Ok;
            results.push(ToolCallResult {
                call_id: call.id.clone(),
                content: outcome.content,
                is_error,
            });
        }
        results
    }

    fn emit(&self, body: EventBody) {
        self.executor.session().events().emit(body);
    }
}

enum StepEnd {
    Calls { text: String, usage: Usage },
    Answer { text: String, usage: Usage },
    Interrupted { text: String },
    Failed { message: String },
}

fn preparing(call_id: &str, tool_name: &str, delta: String) -> EventBody {
    EventBody::ToolPreparing(ToolPreparingEvent {
        call_id: call_id.to_string(),
        tool_name: tool_name.to_string(),
        arguments_delta: delta,
    })
}

fn add_usage(total: &mut Usage, step: Usage) {
    total.input_tokens += step.input_tokens;
    total.output_tokens += step.output_tokens;
    total.cache_read_tokens += step.cache_read_tokens;
}

fn wire_stop_reason(reason: &qilin_model::StopReason) -> qilin_protocol::StopReason {
    match reason {
        qilin_model::StopReason::EndTurn => qilin_protocol::StopReason::EndTurn,
        qilin_model::StopReason::ToolUse => qilin_protocol::StopReason::ToolUse,
        qilin_model::StopReason::MaxTokens => qilin_protocol::StopReason::MaxTokens,
        qilin_model::StopReason::Refusal => qilin_protocol::StopReason::Refusal,
        qilin_model::StopReason::ContentFilter => qilin_protocol::StopReason::ContentFilter,
        qilin_model::StopReason::Other(_) => qilin_protocol::StopReason::Other,
    }
}
