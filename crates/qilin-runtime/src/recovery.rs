//! Closing what a process left open: when a session's log shows calls without results,
//! requests without answers, or a step or turn without its end — because the process running
//! it was killed, or the turn's task panicked — the runtime appends the missing ends, as
//! interrupted, so every `tool.start` has its `tool.result` and no client shows a card running
//! forever.

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
            open.apply(event);
        }
        open
    }

    /// Folds one more event.
    pub fn apply(&mut self, event: &Event) {
        match &event.body {
            EventBody::TurnStarted { turn_id, .. } => self.turn = Some(turn_id.clone()),
            EventBody::TurnFinished { .. } => {
                self.turn = None;
                self.step = None;
            }
            EventBody::StepStarted { turn_id, step } => {
                self.step = Some((turn_id.clone(), *step));
            }
            EventBody::StepFinished { .. } => self.step = None,
            EventBody::ToolStart(start) => self.calls.push(start.clone()),
            EventBody::ToolResult(result) => {
                self.calls.retain(|call| call.call_id != result.call_id);
            }
            EventBody::RequestOpened(opened) => self.requests.push(opened.clone()),
            EventBody::RequestResolved(resolved) => self
                .requests
                .retain(|request| request.request_id != resolved.request_id),
            _ => {}
        }
    }

    /// Whether calls or requests are open (a step or a turn aside).
    pub fn calls_or_requests_open(&self) -> bool {
        !self.calls.is_empty() || !self.requests.is_empty()
    }

    /// The turn started and not finished, if one is.
    pub fn open_turn(&self) -> Option<&str> {
        self.turn.as_deref()
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
        self.closing_events_because(&Closing {
            call_message: "The call was interrupted: the process running the session ended \
                           before the call finished. Its work may be incomplete.",
            turn_reason: FinishReason::Interrupted,
            turn_message: "the process running the turn ended before the turn did",
        })
    }

    /// The events that close everything open, as [`Dangling::closing_events`], saying why as
    /// `closing` does.
    pub fn closing_events_because(&self, closing: &Closing<'_>) -> Vec<EventBody> {
        let mut events = Vec::new();
        for request in &self.requests {
            events.push(EventBody::RequestResolved(RequestResolvedEvent {
                request_id: request.request_id.clone(),
                call_id: request.call_id.clone(),
                parent_call_id: request.parent_call_id.clone(),
                resolution: RequestResolution::Cancelled,
                resolved_by: "runtime".to_string(),
            }));
        }
        for call in self.calls.iter().rev() {
            events.push(EventBody::ToolResult(ToolResultEvent {
                call_id: call.call_id.clone(),
                tool_name: call.tool_name.clone(),
                caller: call.caller,
                parent_call_id: call.parent_call_id.clone(),
                status: CallStatus::Interrupted,
                error_code: Some(ErrorCode::Interrupted),
                content: vec![ContentBlock::text(closing.call_message)],
                user_reason: None,
                output: None,
                detail: None,
                duration_ms: 0,
            }));
        }
        if let Some((turn_id, step)) = &self.step {
            events.push(EventBody::StepFinished {
                turn_id: turn_id.clone(),
                step: *step,
                usage: Usage::default(),
                stop_reason: None,
            });
        }
        if let Some(turn_id) = &self.turn {
            events.push(EventBody::TurnFinished {
                turn_id: turn_id.clone(),
                reason: closing.turn_reason,
                message: Some(closing.turn_message.to_string()),
            });
        }
        events
    }
}

/// Why what is open gets closed, as the closing events say it.
#[derive(Debug, Clone, Copy)]
pub struct Closing<'a> {
    /// The content of each interrupted call's result.
    pub call_message: &'a str,
    /// How the open turn ended.
    pub turn_reason: FinishReason,
    /// The open turn's message.
    pub turn_message: &'a str,
}
