//! The call journal of a code-mode run: what each nested call of the run returned, so that
//! after a restart the run can be executed again from its start with every journaled result
//! handed back in order, no tool running twice.
//!
//! The journal is the session's log: each nested call of a run is recorded as a `tool.start`
//! (tool, canonical arguments) and a `tool.result` (status, error code, content, output)
//! whose `parentCallId` is the run's call. [`CallJournal::from_events`] reads a run's journal
//! back from the log, keyed by the outer call's id; a host that resumes a run puts it in the
//! session's [`Journals`] service, and the run of that call takes it (see
//! [`crate::CodeMode::run`]). See docs/journal.md for what replay promises.

use parking_lot::Mutex;
use qilin_protocol::{CallStatus, ContentBlock, ErrorCode, Event, EventBody, RequestResolution};
use qilin_tool::{CallOutcome, Session, ToolError, whole_logged_output};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// One nested call of a run as the log holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct JournaledCall {
    /// The call's id (`RUN.N`, `N` counting the run's calls from 1).
    pub call_id: String,
    /// The tool called.
    pub tool: String,
    /// The arguments in canonical form (as `tool.start` records them).
    pub arguments: Value,
    /// What the call returned; `None` when the log holds no usable result (the process ended
    /// while the call ran, or its whole output was not kept).
    pub result: Option<JournaledResult>,
    /// The call was waiting for a person's answer when the log ends (its request was never
    /// answered, or was cancelled): without a result, it certainly did not run.
    pub awaiting_answer: bool,
}

/// What a journaled call returned, as the code received it.
#[derive(Debug, Clone, PartialEq)]
pub struct JournaledResult {
    /// How the call ended.
    pub status: CallStatus,
    /// Why it failed, when it did.
    pub error_code: Option<ErrorCode>,
    /// What the model would read of it (the text a `text=True` call returns).
    pub content: Vec<ContentBlock>,
    /// The tool's whole structured output, when it has one.
    pub output: Option<Value>,
}

impl JournaledResult {
    /// The outcome the call had, as the execution layer gave it to the run.
    pub(crate) fn outcome(&self, call_id: &str) -> CallOutcome {
        let error = self
            .error_code
            .map(|code| ToolError::new(code, first_text(&self.content).unwrap_or_default()));
        CallOutcome {
            call_id: call_id.to_string(),
            status: self.status,
            error,
            content: self.content.clone(),
            output: self.output.clone(),
            duration: Duration::ZERO,
        }
    }
}

/// The first text block of `content`: a failed call's message.
pub(crate) fn first_text(content: &[ContentBlock]) -> Option<String> {
    content.iter().find_map(|block| match block {
        ContentBlock::Text { text } => Some(text.clone()),
        _ => None,
    })
}

/// The journal of one run: its nested calls by their number.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallJournal {
    run_call_id: String,
    calls: BTreeMap<usize, JournaledCall>,
}

impl CallJournal {
    /// The journal of the run of call `run_call_id`, read from `events` (the session's log);
    /// a cut output is read back whole from where `session` saved it.
    pub fn from_events<'a>(
        run_call_id: &str,
        events: impl IntoIterator<Item = &'a Event>,
        session: &Session,
    ) -> Self {
        let mut calls = BTreeMap::new();
        let mut requests: HashMap<String, String> = HashMap::new();
        for event in events {
            match &event.body {
                EventBody::ToolStart(start)
                    if start.parent_call_id.as_deref() == Some(run_call_id) =>
                {
                    let Some(index) = call_index(run_call_id, &start.call_id) else {
                        continue;
                    };
                    calls.insert(
                        index,
                        JournaledCall {
                            call_id: start.call_id.clone(),
                            tool: start.tool_name.clone(),
                            arguments: start.arguments.clone(),
                            result: None,
                            awaiting_answer: false,
                        },
                    );
                }
                EventBody::RequestOpened(opened)
                    if opened.parent_call_id.as_deref() == Some(run_call_id) =>
                {
                    if let Some(call) = call_index(run_call_id, &opened.call_id)
                        .and_then(|index| calls.get_mut(&index))
                    {
                        call.awaiting_answer = true;
                        requests.insert(opened.request_id.clone(), opened.call_id.clone());
                    }
                }
                EventBody::RequestResolved(resolved) => {
                    let Some(call) = requests
                        .remove(&resolved.request_id)
                        .and_then(|call_id| call_index(run_call_id, &call_id))
                        .and_then(|index| calls.get_mut(&index))
                    else {
                        continue;
                    };
                    call.awaiting_answer = resolved.resolution == RequestResolution::Cancelled;
                }
                EventBody::ToolResult(result)
                    if result.parent_call_id.as_deref() == Some(run_call_id) =>
                {
                    let Some(call) = call_index(run_call_id, &result.call_id)
                        .and_then(|index| calls.get_mut(&index))
                    else {
                        continue;
                    };
                    let output = match &result.output {
                        Some(logged) => {
                            match whole_logged_output(
                                logged,
                                &session.logged_output_path(&result.call_id),
                            ) {
                                Some(whole) => Some(whole),
                                // The log cut it and the whole is lost: not replayable.
                                None => continue,
                            }
                        }
                        None => None,
                    };
                    call.result = Some(JournaledResult {
                        status: result.status,
                        error_code: result.error_code,
                        content: result.content.clone(),
                        output,
                    });
                }
                _ => {}
            }
        }
        CallJournal {
            run_call_id: run_call_id.to_string(),
            calls,
        }
    }

    /// The run's call id.
    pub fn run_call_id(&self) -> &str {
        &self.run_call_id
    }

    /// The journaled calls, in the order the run made them.
    pub fn calls(&self) -> impl Iterator<Item = &JournaledCall> {
        self.calls.values()
    }

    /// The journaled calls with their numbers (from 1), in order.
    pub(crate) fn numbered(&self) -> impl Iterator<Item = (usize, &JournaledCall)> {
        self.calls.iter().map(|(index, call)| (*index, call))
    }

    /// How many calls the journal holds.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether the journal holds no call.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The run's call number `index` (from 1).
    pub(crate) fn get(&self, index: usize) -> Option<&JournaledCall> {
        self.calls.get(&index)
    }
}

/// The number `N` of a nested call `RUN.N` of run `run_call_id`.
fn call_index(run_call_id: &str, call_id: &str) -> Option<usize> {
    call_id
        .strip_prefix(run_call_id)?
        .strip_prefix('.')?
        .parse()
        .ok()
}

/// The journals of runs waiting to be replayed, by the run's call id: a session service. A
/// host resuming a session puts here the journal of each run the last process left
/// unfinished; the next run of that call takes it and replays it.
#[derive(Debug, Default)]
pub struct Journals {
    waiting: Mutex<HashMap<String, CallJournal>>,
}

impl Journals {
    /// Keeps `journal` for the next run of its call.
    pub fn insert(&self, journal: CallJournal) {
        self.lock()
            .insert(journal.run_call_id().to_string(), journal);
    }

    /// Takes the journal of the run of call `run_call_id`, if one waits.
    pub fn take(&self, run_call_id: &str) -> Option<CallJournal> {
        self.lock().remove(run_call_id)
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<String, CallJournal>> {
        self.waiting.lock()
    }
}
