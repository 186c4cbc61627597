//! Closing what a process left open: when a session's log shows calls without results,
//! requests without answers, or a step or turn without its end — because the process running
//! it was killed, or the turn's task panicked — the runtime appends the missing ends, as
//! interrupted, so every `tool.start` has its `tool.result` and no client shows a card running
//! forever.
//!
//! A turn left open while a `run_code` or a foreground `workflow_run` ran is the exception:
//! its run can be replayed from the call journal (see `qilin_codemode::CallJournal`), so
//! [`Dangling::open_run`] names it and [`Dangling::closing_events_resuming`] closes all but
//! the run, its nested calls, the step and the turn, which continue in the process resuming
//! the session. A background workflow run left running is replayed too: its nested calls are
//! kept open the same way, though its `workflow_run` call has long returned.

use qilin_protocol::{
    CallStatus, CallerKind, ContentBlock, ErrorCode, Event, EventBody, FinishReason,
    RequestOpenedEvent, RequestResolution, RequestResolvedEvent, ToolResultEvent, ToolStartEvent,
    Usage,
};
use qilin_tool::RUN_CODE;

/// The tool running workflows, whose runs are replayed like `run_code`'s.
const WORKFLOW_RUN: &str = "workflow_run";

/// What a log leaves open, in the order it was opened.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Dangling {
    calls: Vec<ToolStartEvent>,
    requests: Vec<RequestOpenedEvent>,
    step: Option<(String, u32)>,
    turn: Option<String>,
    /// The open turn's prompt.
    prompt: String,
}

/// A turn left open while code-mode runs (`run_code`, `workflow_run`) of its last step ran:
/// it can be continued by replaying them.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenRun {
    /// The open turn.
    pub turn_id: String,
    /// Its prompt.
    pub prompt: String,
    /// The open step.
    pub step: u32,
    /// The `run_code` and `workflow_run` calls of the step left without a result, in order.
    pub runs: Vec<ToolStartEvent>,
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
            EventBody::TurnStarted {
                turn_id, prompt, ..
            } => {
                self.turn = Some(turn_id.clone());
                self.prompt = prompt.clone();
            }
            EventBody::TurnFinished { .. } => {
                self.turn = None;
                self.step = None;
            }
            EventBody::StepStarted { turn_id, step } => {
                self.step = Some((turn_id.clone(), *step));
            }
            EventBody::StepFinished { .. } => self.step = None,
            // A call started again under its id (a run continued after a restart dispatches
            // its call anew) is still one open call.
            EventBody::ToolStart(start)
                if !self.calls.iter().any(|call| call.call_id == start.call_id) =>
            {
                self.calls.push(start.clone());
            }
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

    /// The turn left open while `run_code` or `workflow_run` calls of its open step ran, when
    /// there is one: what a resuming process continues.
    pub fn open_run(&self) -> Option<OpenRun> {
        let turn_id = self.turn.clone()?;
        let (step_turn, step) = self.step.as_ref()?;
        if *step_turn != turn_id {
            return None;
        }
        let runs: Vec<ToolStartEvent> = self
            .calls
            .iter()
            .filter(|call| {
                call.caller == CallerKind::Direct
                    && (call.tool_name == RUN_CODE || call.tool_name == WORKFLOW_RUN)
            })
            .cloned()
            .collect();
        (!runs.is_empty()).then(|| OpenRun {
            turn_id,
            prompt: self.prompt.clone(),
            step: *step,
            runs,
        })
    }

    /// The events that close what is open, but for `run` (when there is one) and the nested
    /// calls of `background` (the `workflow_run` calls of background runs being resumed): the
    /// step, the turn, the runs' calls and their nested calls stay open for the process
    /// continuing them. Without `run`, the step and the turn are closed. Every open request
    /// is cancelled (a call replayed asks again).
    pub fn closing_events_resuming(
        &self,
        run: Option<&OpenRun>,
        background: &[String],
    ) -> Vec<EventBody> {
        let kept: Vec<&str> = run
            .map(|run| run.runs.iter().map(|call| call.call_id.as_str()).collect())
            .unwrap_or_default();
        let keep = |call: &ToolStartEvent| {
            kept.contains(&call.call_id.as_str())
                || call.parent_call_id.as_deref().is_some_and(|parent| {
                    kept.contains(&parent) || background.iter().any(|b| b == parent)
                })
        };
        let closing = Dangling {
            calls: self.calls.iter().filter(|c| !keep(c)).cloned().collect(),
            requests: self.requests.clone(),
            step: if run.is_some() {
                None
            } else {
                self.step.clone()
            },
            turn: if run.is_some() {
                None
            } else {
                self.turn.clone()
            },
            prompt: String::new(),
        };
        closing.closing_events()
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

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::{CallPresentation, RequestAsk};
    use serde_json::json;

    fn event(seq: u64, body: EventBody) -> Event {
        Event {
            seq,
            time: "2026-01-01T00:00:00Z".into(),
            body,
        }
    }

    fn start(call_id: &str, tool: &str, parent: Option<&str>) -> EventBody {
        EventBody::ToolStart(ToolStartEvent {
            call_id: call_id.into(),
            tool_name: tool.into(),
            caller: if parent.is_some() {
                CallerKind::Code
            } else {
                CallerKind::Direct
            },
            parent_call_id: parent.map(str::to_string),
            arguments: json!({}),
            presentation: CallPresentation::new(tool, ""),
            before_detail: None,
        })
    }

    /// A turn whose step ran `run_code` (its first nested call waiting on an approval) beside
    /// a `glob`, when the process died.
    fn killed_while_code_ran() -> Vec<Event> {
        vec![
            event(
                1,
                EventBody::TurnStarted {
                    turn_id: "turn-1".into(),
                    prompt: "go".into(),
                    client_turn_id: None,
                },
            ),
            event(
                2,
                EventBody::StepStarted {
                    turn_id: "turn-1".into(),
                    step: 1,
                },
            ),
            event(3, start("c1", "run_code", None)),
            event(4, start("c2", "glob", None)),
            event(5, start("c1.1", "bash", Some("c1"))),
            event(
                6,
                EventBody::RequestOpened(RequestOpenedEvent {
                    request_id: "r1".into(),
                    call_id: "c1.1".into(),
                    parent_call_id: Some("c1".into()),
                    tool_name: "bash".into(),
                    ask: RequestAsk::Approval {
                        reason: "ask".into(),
                        presentation: CallPresentation::new("bash", ""),
                        arguments: json!({}),
                        detail: None,
                    },
                    child_session_id: None,
                    child_name: None,
                }),
            ),
        ]
    }

    #[test]
    fn a_turn_left_open_while_code_ran_keeps_its_run_its_step_and_itself_open() {
        let dangling = Dangling::of(&killed_while_code_ran());
        let run = dangling.open_run().expect("the run can be continued");
        assert_eq!((run.turn_id.as_str(), run.step), ("turn-1", 1));
        assert_eq!(run.prompt, "go");
        let runs: Vec<&str> = run.runs.iter().map(|r| r.call_id.as_str()).collect();
        assert_eq!(runs, ["c1"]);
        let closing = dangling.closing_events_resuming(Some(&run), &[]);
        let closed: Vec<&str> = closing
            .iter()
            .map(|body| match body {
                EventBody::RequestResolved(resolved) => resolved.request_id.as_str(),
                EventBody::ToolResult(result) => result.call_id.as_str(),
                other => other.kind(),
            })
            .collect();
        assert_eq!(closed, ["r1", "c2"], "the request and the other call only");
    }

    #[test]
    fn a_run_continued_and_cut_again_is_one_open_run_closed_once() {
        // A process continued the run (its call started again under its id, as the glob's)
        // and died too: the next one continues it once, and closes the glob once.
        let mut events = killed_while_code_ran();
        events.push(event(7, start("c1", "run_code", None)));
        events.push(event(8, start("c2", "glob", None)));
        let dangling = Dangling::of(&events);
        let run = dangling.open_run().expect("the run can be continued");
        let runs: Vec<&str> = run.runs.iter().map(|r| r.call_id.as_str()).collect();
        assert_eq!(runs, ["c1"], "one run, continued once");
        let closing = dangling.closing_events();
        let results: Vec<&str> = closing
            .iter()
            .filter_map(|body| match body {
                EventBody::ToolResult(result) => Some(result.call_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(results.len(), 3, "one result per call: {results:?}");
        assert_eq!(
            results.iter().filter(|id| **id == "c2").count(),
            1,
            "{results:?}"
        );
    }

    #[test]
    fn a_foreground_workflow_run_is_continued_like_run_code() {
        let mut events = killed_while_code_ran();
        for event in &mut events {
            if let EventBody::ToolStart(start) = &mut event.body
                && start.call_id == "c1"
            {
                start.tool_name = "workflow_run".into();
            }
        }
        let run = Dangling::of(&events).open_run().expect("continued");
        assert_eq!(run.runs[0].tool_name, "workflow_run");
    }

    #[test]
    fn the_calls_of_a_background_run_stay_open_while_the_rest_is_closed() {
        // c1 started a background run and returned; its call c1.1 ran when the process died,
        // beside the turn's own glob.
        let mut events = killed_while_code_ran();
        events.insert(
            3,
            event(
                4,
                EventBody::ToolResult(ToolResultEvent {
                    call_id: "c1".into(),
                    tool_name: "workflow_run".into(),
                    caller: CallerKind::Direct,
                    parent_call_id: None,
                    status: CallStatus::Ok,
                    error_code: None,
                    content: Vec::new(),
                    user_reason: None,
                    output: None,
                    detail: None,
                    duration_ms: 1,
                }),
            ),
        );
        let dangling = Dangling::of(&events);
        assert!(dangling.open_run().is_none());
        let closing = dangling.closing_events_resuming(None, &["c1".to_string()]);
        let closed: Vec<&str> = closing
            .iter()
            .map(|body| match body {
                EventBody::RequestResolved(resolved) => resolved.request_id.as_str(),
                EventBody::ToolResult(result) => result.call_id.as_str(),
                other => other.kind(),
            })
            .collect();
        assert_eq!(closed, ["r1", "c2", "step.finished", "turn.finished"]);
    }

    #[test]
    fn a_turn_without_a_running_run_is_closed_as_before() {
        let mut events = killed_while_code_ran();
        events.retain(|e| !matches!(&e.body, EventBody::ToolStart(s) if s.tool_name == "run_code"));
        assert!(Dangling::of(&events).open_run().is_none());
        let mut finished = killed_while_code_ran();
        finished.push(event(
            7,
            EventBody::StepFinished {
                turn_id: "turn-1".into(),
                step: 1,
                usage: Usage::default(),
                stop_reason: None,
            },
        ));
        assert!(Dangling::of(&finished).open_run().is_none(), "no open step");
    }
}
