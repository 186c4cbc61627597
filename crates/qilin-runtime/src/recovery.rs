//! Closing what a process left open: when a session's log shows calls without results,
//! requests without answers, or a step or turn without its end — because the process running
//! it was killed — the runtime appends the missing ends, as interrupted, so every `tool.start`
//! has its `tool.result` and no client shows a card running forever.

use qilin_protocol::{
    CallStatus, ContentBlock, ErrorCode, Event, EventBody, FinishReason, RequestOpenedEvent,
    RequestResolution, RequestResolvedEvent, ToolResultEvent, ToolStartEvent, Usage,
};

/// What a log leaves open, in the order it was opened.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Dangling {
    calls: Vec<ToolStartEvent>,
    requests: Vec<RequestOpenedEvent>,
    step: Option<(String, u32)>,
    turn: Option<String>,
}

impl Dangling {
    /// What `events` leave open.
    pub fn of<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut open = Dangling::default();
        for event in events {
            match &event.body {
                EventBody::TurnStarted { turn_id, .. } => open.turn = Some(turn_id.clone()),
                EventBody::TurnFinished { .. } => {
                    open.turn = None;
                    open.step = None;
                }
                EventBody::StepStarted { turn_id, step } => {
                    open.step = Some((turn_id.clone(), *step));
                }
                EventBody::StepFinished { .. } => open.step = None,
                EventBody::ToolStart(start) => open.calls.push(start.clone()),
                EventBody::ToolResult(result) => {
                    open.calls.retain(|call| call.call_id != result.call_id);
                }
                EventBody::RequestOpened(opened) => open.requests.push(opened.clone()),
                EventBody::RequestResolved(resolved) => open
                    .requests
                    .retain(|request| request.request_id != resolved.request_id),
                _ => {}
            }
        }
        open
    }

    /// True when nothing is open.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
            && self.requests.is_empty()
            && self.step.is_none()
            && self.turn.is_none()
    }

    /// The events that close everything open, in order: requests cancelled, calls
    /// interrupted (a code-mode call before the `run_code` that made it), the step, the turn.
    pub fn closing_events(&self) -> Vec<EventBody> {
        let mut closing = Vec::new();
        for request in &self.requests {
            closing.push(EventBody::RequestResolved(RequestResolvedEvent {
                request_id: request.request_id.clone(),
                call_id: request.call_id.clone(),
                parent_call_id: request.parent_call_id.clone(),
                resolution: RequestResolution::Cancelled,
                resolved_by: "runtime".to_string(),
            }));
        }
        for call in self.calls.iter().rev() {
            closing.push(EventBody::ToolResult(ToolResultEvent {
                call_id: call.call_id.clone(),
                tool_name: call.tool_name.clone(),
                caller: call.caller,
                parent_call_id: call.parent_call_id.clone(),
                status: CallStatus::Interrupted,
                error_code: Some(ErrorCode::Interrupted),
                content: vec![ContentBlock::text(
                    "The call was interrupted: the process running the session ended before \
                     the call finished. Its work may be incomplete.",
                )],
                output: None,
                detail: None,
                duration_ms: 0,
            }));
        }
        if let Some((turn_id, step)) = &self.step {
            closing.push(EventBody::StepFinished {
                turn_id: turn_id.clone(),
                step: *step,
                usage: Usage::default(),
                stop_reason: None,
            });
        }
        if let Some(turn_id) = &self.turn {
            closing.push(EventBody::TurnFinished {
                turn_id: turn_id.clone(),
                reason: FinishReason::Interrupted,
                message: Some("the process running the turn ended before the turn did".to_string()),
            });
        }
        closing
    }
}
