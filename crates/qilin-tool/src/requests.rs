//! Requests: a call waiting for a person — an approval the review policy asks for, or the
//! `question` tool's questions.
//!
//! Opening a request records `request.opened`; the call then waits until a host answers it with
//! [`Requests::resolve`] (the terminal, a web client) or the call is cancelled. Exactly one
//! `request.resolved` follows, whichever comes first; an answer arriving after the request
//! ended is refused with the reason, never applied.
//!
//! A child session's requests are relayed ([`Requests::relay_to`]): each also opens a mirror
//! in its parent's session naming the child, answerable there. The child's own request decides:
//! an answer to the mirror resolves it, an answer to it closes the mirror the same way, and the
//! later of two answers is refused — exactly one wins.

use crate::{EventLog, Session};
use parking_lot::Mutex;
use qilin_protocol::{
    Answer, EventBody, RequestAsk, RequestOpenedEvent, RequestResolution, RequestResolvedEvent,
    SessionGrant, check_answers,
};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{OnceLock, Weak};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// A host's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestReply {
    /// Allow the call (an approval).
    Approve,
    /// Allow the call, and from now on every call the grant covers without asking (an
    /// approval). The grant must cover the call asked about.
    ApproveForSession(SessionGrant),
    /// Refuse the call (an approval); the reason is told to the model.
    Deny {
        /// What the person said, if anything.
        reason: Option<String>,
    },
    /// The answers to the questions (a question).
    Answer(Vec<Answer>),
    /// Dismiss the questions without answering (a question).
    Dismiss,
}

/// How a request ended, for the waiting call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestOutcome {
    /// A person answered.
    Replied(RequestReply),
    /// The call was cancelled before anyone answered.
    Cancelled,
    /// No one can answer requests in this session (an unattended run).
    Unattended,
}

/// Why an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No request of this session has this id.
    #[error("no request `{0}` in this session")]
    Unknown(String),
    /// The request ended before this answer arrived.
    #[error("request `{request_id}` has already ended ({ended}), by {resolved_by}")]
    Ended {
        /// The request.
        request_id: String,
        /// How it ended (`approved`, `denied`, `answered`, `dismissed`, `cancelled`).
        ended: &'static str,
        /// Who ended it.
        resolved_by: String,
    },
    /// The answers do not fit the questions (a missing answer, a choice not offered).
    #[error("the answers to request `{request_id}` do not fit its questions: {problem}")]
    InvalidAnswers {
        /// The request.
        request_id: String,
        /// What does not fit.
        problem: String,
    },
    /// A grant for the session that does not cover the call asked about (another tool, or a
    /// command prefix the command does not start with).
    #[error(
        "the grant does not cover the call request `{request_id}` asks about; grant its tool, or a prefix of its command"
    )]
    GrantMismatch {
        /// The request.
        request_id: String,
    },
    /// The answer does not fit the request (answers to an approval, a decision on questions).
    #[error("request `{request_id}` is {expected}; this answer does not fit it")]
    Mismatch {
        /// The request.
        request_id: String,
        /// What the request needs (`an approval` or `a question`).
        expected: &'static str,
    },
}

/// The requests of one session: the open ones, and how the ended ones ended.
pub struct Requests {
    attended: bool,
    /// Set while a turn no person watches runs (a scheduled run) in an attended session: its
    /// requests end at once as unattended.
    unattended_turn: std::sync::atomic::AtomicBool,
    /// For a child session: where its requests surface too.
    relay: OnceLock<RequestRelay>,
    state: Mutex<RequestState>,
}

/// Where a child session's requests surface besides its own log: a mirror request in another
/// session (its parent's, or the top-level session above it), naming the child and sitting on
/// the call that started it.
#[derive(Debug, Clone)]
pub struct RequestRelay {
    /// The session the mirrors open in.
    pub parent: Weak<Session>,
    /// The child session whose requests are mirrored.
    pub child: Weak<Session>,
    /// The child's session id.
    pub child_session_id: String,
    /// The child's name, or its agent when it has none.
    pub child_name: String,
    /// The parent's call that started the child (its `agent` call): the mirrors sit on it.
    pub call_id: String,
    /// The `run_code` call that made that call, for a call made from code.
    pub parent_call_id: Option<String>,
}

#[derive(Default)]
struct RequestState {
    next: u64,
    open: HashMap<String, OpenRequest>,
    ended: HashMap<String, EndedRequest>,
    grants: Vec<SessionGrant>,
}

/// How a request ended, and who ended it.
struct EndedRequest {
    resolution: RequestResolution,
    resolved_by: String,
}

struct OpenRequest {
    opened: RequestOpenedEvent,
    reply: Reply,
}

/// Who an answer goes to.
enum Reply {
    /// The call waiting in this session.
    Call(oneshot::Sender<RequestReply>),
    /// A mirror of a child's request: the answer resolves the child's own request.
    Child {
        /// The child session.
        child: Weak<Session>,
        /// Its own request.
        request_id: String,
    },
}

/// The call a request belongs to.
#[derive(Debug, Clone, Copy)]
pub struct WaitingCall<'a> {
    /// The waiting call's id.
    pub call_id: &'a str,
    /// The `run_code` call that made it, for a code-mode call.
    pub parent_call_id: Option<&'a str>,
    /// The waiting call's tool.
    pub tool_name: &'a str,
}

impl Requests {
    /// Requests that a host answers (the terminal, a server's clients).
    pub fn attended() -> Self {
        Requests {
            attended: true,
            unattended_turn: std::sync::atomic::AtomicBool::new(false),
            relay: OnceLock::new(),
            state: Mutex::default(),
        }
    }

    /// No one answers here: every request ends at once as [`RequestOutcome::Unattended`],
    /// with no events.
    pub fn unattended() -> Self {
        Requests {
            attended: false,
            unattended_turn: std::sync::atomic::AtomicBool::new(false),
            relay: OnceLock::new(),
            state: Mutex::default(),
        }
    }

    /// Whether a host answers requests in this session now (not while a turn no person
    /// watches runs). A relayed child's are answered when its parent's are.
    pub fn is_attended(&self) -> bool {
        if self
            .unattended_turn
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return false;
        }
        match self.relay.get() {
            Some(relay) => relay
                .parent
                .upgrade()
                .is_some_and(|parent| parent.requests().is_attended()),
            None => self.attended,
        }
    }

    /// Makes this (a child session's) requests surface in `relay`'s parent too, and follow
    /// its parent's attendance: answered there when a person watches the parent, ended at once
    /// as unattended when none does. Set once; later calls are ignored.
    pub fn relay_to(&self, relay: RequestRelay) {
        let _ = self.relay.set(relay);
    }

    /// Where this session's requests are relayed, for a child session.
    pub fn relay(&self) -> Option<&RequestRelay> {
        self.relay.get()
    }

    /// Marks the turn starting now as one no person watches (`true`), or its end (`false`):
    /// meanwhile every request ends at once as [`RequestOutcome::Unattended`], even in an
    /// attended session.
    pub fn set_unattended_turn(&self, unattended: bool) {
        self.unattended_turn
            .store(unattended, std::sync::atomic::Ordering::SeqCst);
    }

    fn state(&self) -> parking_lot::MutexGuard<'_, RequestState> {
        self.state.lock()
    }

    /// Opens a request for `call`, records `request.opened`, and waits for an answer or for
    /// `cancel`. If the returned future is dropped first, the request ends as cancelled.
    pub async fn ask(
        &self,
        events: &EventLog,
        call: WaitingCall<'_>,
        ask: RequestAsk,
        cancel: &CancellationToken,
    ) -> RequestOutcome {
        if !self.is_attended() {
            return RequestOutcome::Unattended;
        }
        let (reply, replied) = oneshot::channel();
        let (request_id, opened) = {
            let mut state = self.state();
            state.next += 1;
            let request_id = format!("req-{}", state.next);
            let opened = RequestOpenedEvent {
                request_id: request_id.clone(),
                call_id: call.call_id.to_string(),
                parent_call_id: call.parent_call_id.map(str::to_string),
                tool_name: call.tool_name.to_string(),
                ask,
                child_session_id: None,
                child_name: None,
            };
            // Emitted under the lock, so that no answer can be recorded before the opening.
            events.emit(EventBody::RequestOpened(opened.clone()));
            state.open.insert(
                request_id.clone(),
                OpenRequest {
                    opened: opened.clone(),
                    reply: Reply::Call(reply),
                },
            );
            (request_id, opened)
        };
        let mirror = self.relay.get().and_then(|relay| {
            let parent = relay.parent.upgrade()?;
            let mirror_id =
                parent
                    .requests()
                    .open_mirror(parent.events(), relay, &request_id, &opened);
            Some((relay.parent.clone(), mirror_id))
        });
        let guard = CancelOnDrop {
            requests: self,
            events,
            request_id: &request_id,
            mirror,
        };
        let outcome = tokio::select! {
            biased;
            answered = replied => match answered {
                Ok(reply) => RequestOutcome::Replied(reply),
                Err(_) => RequestOutcome::Cancelled,
            },
            () = cancel.cancelled() => RequestOutcome::Cancelled,
        };
        drop(guard);
        outcome
    }

    /// Answers the open request `request_id` on behalf of `resolved_by`; records
    /// `request.resolved` and wakes the waiting call. Gives the `request.resolved` recorded, so
    /// a host reports the resolution as the log keeps it. Refused when the request is unknown,
    /// has ended, or the answer does not fit it.
    pub fn resolve(
        &self,
        events: &EventLog,
        request_id: &str,
        reply: RequestReply,
        resolved_by: &str,
    ) -> Result<RequestResolvedEvent, ResolveError> {
        let mut state = self.state();
        let Some(open) = state.open.get(request_id) else {
            return Err(match state.ended.get(request_id) {
                Some(ended) => ResolveError::Ended {
                    request_id: request_id.to_string(),
                    ended: ended_as(&ended.resolution),
                    resolved_by: ended.resolved_by.clone(),
                },
                None => ResolveError::Unknown(request_id.to_string()),
            });
        };
        let resolution = match (&open.opened.ask, &reply) {
            (RequestAsk::Approval { .. }, RequestReply::Approve) => RequestResolution::Approved,
            (RequestAsk::Approval { arguments, .. }, RequestReply::ApproveForSession(grant)) => {
                if !grant_covers(grant, &open.opened.tool_name, arguments) {
                    return Err(ResolveError::GrantMismatch {
                        request_id: request_id.to_string(),
                    });
                }
                RequestResolution::ApprovedForSession {
                    grant: grant.clone(),
                }
            }
            (RequestAsk::Approval { .. }, RequestReply::Deny { reason }) => {
                RequestResolution::Denied {
                    reason: reason.clone(),
                }
            }
            (RequestAsk::Question { questions }, RequestReply::Answer(answers)) => {
                check_answers(questions, answers).map_err(|problem| {
                    ResolveError::InvalidAnswers {
                        request_id: request_id.to_string(),
                        problem,
                    }
                })?;
                RequestResolution::Answered {
                    answers: answers.clone(),
                }
            }
            (RequestAsk::Question { .. }, RequestReply::Dismiss) => RequestResolution::Dismissed,
            (RequestAsk::Approval { .. }, _) => {
                return Err(ResolveError::Mismatch {
                    request_id: request_id.to_string(),
                    expected: "an approval",
                });
            }
            (RequestAsk::Question { .. }, _) => {
                return Err(ResolveError::Mismatch {
                    request_id: request_id.to_string(),
                    expected: "a question",
                });
            }
        };
        // A mirror: the child's own request decides (the child keeps any grant). When its
        // own clients answered first, the mirror ends as they did and this answer is refused.
        let mirrored = match &open.reply {
            Reply::Child { child, request_id } => Some((child.clone(), request_id.clone())),
            Reply::Call(_) => None,
        };
        if let Some((child, child_request)) = mirrored {
            let forwarded = match child.upgrade() {
                Some(child) => child
                    .requests()
                    .resolve(child.events(), &child_request, reply, resolved_by)
                    .map_err(|err| (err, child.requests().ended_with(&child_request))),
                None => Err((
                    ResolveError::Ended {
                        request_id: request_id.to_string(),
                        ended: "cancelled",
                        resolved_by: "runtime".to_string(),
                    },
                    None,
                )),
            };
            let (resolution, resolved_by, refused) = match forwarded {
                Ok(resolved) => (resolved.resolution, resolved.resolved_by, None),
                Err((err, ended)) => {
                    let ended = ended.unwrap_or(EndedRequest {
                        resolution: RequestResolution::Cancelled,
                        resolved_by: "runtime".to_string(),
                    });
                    let refused = match err {
                        ResolveError::Ended { .. } | ResolveError::Unknown(_) => {
                            ResolveError::Ended {
                                request_id: request_id.to_string(),
                                ended: ended_as(&ended.resolution),
                                resolved_by: ended.resolved_by.clone(),
                            }
                        }
                        // The child's request is still open: the answer did not fit it.
                        other => return Err(other),
                    };
                    (ended.resolution, ended.resolved_by, Some(refused))
                }
            };
            let Some(open) = state.open.remove(request_id) else {
                return Err(ResolveError::Unknown(request_id.to_string()));
            };
            let recorded = end(&mut state, events, open, resolution, &resolved_by, None);
            return match refused {
                Some(refused) => Err(refused),
                None => Ok(recorded),
            };
        }
        // Found open above, under the same lock.
        let Some(open) = state.open.remove(request_id) else {
            return Err(ResolveError::Unknown(request_id.to_string()));
        };
        let granted = match &resolution {
            RequestResolution::ApprovedForSession { grant } => Some(grant.clone()),
            _ => None,
        };
        let recorded = end(
            &mut state,
            events,
            open,
            resolution,
            resolved_by,
            Some(reply),
        );
        if let Some(grant) = granted {
            // The approvals still waiting that the new grant covers are answered by it.
            let covered: Vec<String> = state
                .open
                .iter()
                .filter(|(_, open)| matches!(open.reply, Reply::Call(_)))
                .filter(|(_, open)| match &open.opened.ask {
                    RequestAsk::Approval { arguments, .. } => {
                        grant_covers(&grant, &open.opened.tool_name, arguments)
                    }
                    RequestAsk::Question { .. } => false,
                })
                .map(|(id, _)| id.clone())
                .collect();
            for id in covered {
                if let Some(open) = state.open.remove(&id) {
                    end(
                        &mut state,
                        events,
                        open,
                        RequestResolution::Approved,
                        resolved_by,
                        Some(RequestReply::Approve),
                    );
                }
            }
            state.grants.push(grant);
        }
        Ok(recorded)
    }

    /// Whether a grant given earlier in the session allows a call of `tool` with `arguments`
    /// without asking.
    pub fn granted(&self, tool: &str, arguments: &Value) -> bool {
        self.state()
            .grants
            .iter()
            .any(|grant| grant_covers(grant, tool, arguments))
    }

    /// The grants given in the session so far, in the order given.
    pub fn grants(&self) -> Vec<SessionGrant> {
        self.state().grants.clone()
    }

    /// Gives again the grants a resumed session's log records.
    pub fn restore_grants(&self, grants: impl IntoIterator<Item = SessionGrant>) {
        let mut state = self.state();
        for grant in grants {
            if !state.grants.contains(&grant) {
                state.grants.push(grant);
            }
        }
    }

    /// The requests waiting for an answer now, in the order opened.
    pub fn open(&self) -> Vec<RequestOpenedEvent> {
        let mut open: Vec<RequestOpenedEvent> = self
            .state()
            .open
            .values()
            .map(|open| open.opened.clone())
            .collect();
        open.sort_by_key(|opened| request_number(&opened.request_id));
        open
    }

    /// How request `request_id` ended and who ended it, once it has.
    fn ended_with(&self, request_id: &str) -> Option<EndedRequest> {
        self.state()
            .ended
            .get(request_id)
            .map(|ended| EndedRequest {
                resolution: ended.resolution.clone(),
                resolved_by: ended.resolved_by.clone(),
            })
    }

    /// Opens in this (the parent's) session the mirror of a child's request `child_opened`
    /// (its own id `child_request`), recording `request.opened` naming the child on the call
    /// that started it. Gives the mirror's id.
    fn open_mirror(
        &self,
        events: &EventLog,
        relay: &RequestRelay,
        child_request: &str,
        child_opened: &RequestOpenedEvent,
    ) -> String {
        let mut state = self.state();
        state.next += 1;
        let request_id = format!("req-{}", state.next);
        let opened = RequestOpenedEvent {
            request_id: request_id.clone(),
            call_id: relay.call_id.clone(),
            parent_call_id: relay.parent_call_id.clone(),
            tool_name: child_opened.tool_name.clone(),
            ask: child_opened.ask.clone(),
            child_session_id: Some(relay.child_session_id.clone()),
            child_name: Some(relay.child_name.clone()),
        };
        events.emit(EventBody::RequestOpened(opened.clone()));
        state.open.insert(
            request_id.clone(),
            OpenRequest {
                opened,
                reply: Reply::Child {
                    child: relay.child.clone(),
                    request_id: child_request.to_string(),
                },
            },
        );
        request_id
    }

    /// Ends mirror `request_id` as its child's request ended, if it is still open.
    fn close_mirror(
        &self,
        events: &EventLog,
        request_id: &str,
        resolution: RequestResolution,
        resolved_by: &str,
    ) {
        let mut state = self.state();
        if let Some(open) = state.open.remove(request_id) {
            end(&mut state, events, open, resolution, resolved_by, None);
        }
    }

    /// Continues the numbering of a resumed session after its highest request id.
    pub fn continue_after(&self, opened: impl IntoIterator<Item = impl AsRef<str>>) {
        let mut state = self.state();
        for id in opened {
            state.next = state.next.max(request_number(id.as_ref()));
        }
    }
}

/// Whether `grant` allows a call of `tool` with `arguments`: the same tool and, for a command
/// prefix, a `command` argument that is the prefix or starts with it and a space, and that
/// holds no operator chaining, substituting or redirecting another command (`;`, `&`, `|`,
/// `<`, `>`, `` ` ``, `$(`, a line break), so `git status; rm -rf x` is never covered by
/// `git status`.
pub fn grant_covers(grant: &SessionGrant, tool: &str, arguments: &Value) -> bool {
    if grant.tool != tool {
        return false;
    }
    let Some(prefix) = grant.command_prefix.as_deref() else {
        return true;
    };
    let Some(command) = arguments.get("command").and_then(Value::as_str) else {
        return false;
    };
    let command = command.trim();
    let prefix = prefix.trim();
    if prefix.is_empty() || command.contains(['\n', '\r', ';', '&', '|', '<', '>', '`']) {
        return false;
    }
    if command.contains("$(") {
        return false;
    }
    command == prefix
        || command
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with([' ', '\t']))
}

fn request_number(request_id: &str) -> u64 {
    request_id
        .strip_prefix("req-")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// How a request that ended with `resolution` is named in [`ResolveError::Ended`]: `approved`
/// (for the call or the session), `denied`, `answered`, `dismissed` or `cancelled`.
pub fn ended_as(resolution: &RequestResolution) -> &'static str {
    match resolution {
        RequestResolution::Approved | RequestResolution::ApprovedForSession { .. } => "approved",
        RequestResolution::Denied { .. } => "denied",
        RequestResolution::Answered { .. } => "answered",
        RequestResolution::Dismissed => "dismissed",
        RequestResolution::Cancelled => "cancelled",
    }
}

/// Records how a request ended and wakes its call (with `reply`, or none when cancelled).
/// Gives the `request.resolved` recorded.
fn end(
    state: &mut RequestState,
    events: &EventLog,
    open: OpenRequest,
    resolution: RequestResolution,
    resolved_by: &str,
    reply: Option<RequestReply>,
) -> RequestResolvedEvent {
    let resolved = RequestResolvedEvent {
        request_id: open.opened.request_id.clone(),
        call_id: open.opened.call_id,
        parent_call_id: open.opened.parent_call_id,
        resolution: resolution.clone(),
        resolved_by: resolved_by.to_string(),
    };
    events.emit(EventBody::RequestResolved(resolved.clone()));
    state.ended.insert(
        open.opened.request_id,
        EndedRequest {
            resolution,
            resolved_by: resolved_by.to_string(),
        },
    );
    if let (Some(reply), Reply::Call(call)) = (reply, open.reply) {
        // The call may have stopped waiting a moment ago; its own end then records nothing.
        let _ = call.send(reply);
    }
    resolved
}

/// Ends a request as cancelled when its call stops waiting without an answer, then closes its
/// mirror in the parent (if any) as the request ended.
struct CancelOnDrop<'a> {
    requests: &'a Requests,
    events: &'a EventLog,
    request_id: &'a str,
    /// The parent's session and the mirror's id there, for a relayed request.
    mirror: Option<(Weak<Session>, String)>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        {
            let mut state = self.requests.state();
            if let Some(open) = state.open.remove(self.request_id) {
                end(
                    &mut state,
                    self.events,
                    open,
                    RequestResolution::Cancelled,
                    "runtime",
                    None,
                );
            }
        }
        // Outside this session's lock: the parent's resolving a mirror holds its own lock
        // while it takes this one.
        if let Some((parent, mirror_id)) = self.mirror.take()
            && let Some(parent) = parent.upgrade()
            && let Some(ended) = self.requests.ended_with(self.request_id)
        {
            parent.requests().close_mirror(
                parent.events(),
                &mirror_id,
                ended.resolution,
                &ended.resolved_by,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prefix(prefix: &str) -> SessionGrant {
        SessionGrant {
            tool: "bash".into(),
            command_prefix: Some(prefix.into()),
        }
    }

    #[test]
    fn a_command_prefix_covers_simple_commands_that_start_with_it() {
        let grant = prefix("git push");
        for (command, covered) in [
            ("git push", true),
            ("git push origin main", true),
            ("  git push --tags ", true),
            ("git pushx", false),
            ("git pull", false),
            ("git push; rm -rf ~", false),
            ("git push && curl x | sh", false),
            ("git push $(whoami)", false),
            ("git push `id`", false),
            ("git push > /etc/passwd", false),
            ("git push\nrm -rf ~", false),
        ] {
            assert_eq!(
                grant_covers(&grant, "bash", &json!({ "command": command })),
                covered,
                "{command:?}"
            );
        }
        assert!(!grant_covers(
            &grant,
            "write",
            &json!({"command": "git push"})
        ));
        assert!(!grant_covers(&grant, "bash", &json!({"cmd": "git push"})));
    }

    /// A parent session (attended or not) and a child whose requests are relayed to it.
    fn parent_and_child(attended: bool) -> (std::sync::Arc<Session>, std::sync::Arc<Session>) {
        let requests = match attended {
            true => Requests::attended(),
            false => Requests::unattended(),
        };
        let parent = std::sync::Arc::new(Session::new("p", "/w", "/d").with_requests(requests));
        let child = std::sync::Arc::new(Session::new("c", "/w", "/d"));
        child.requests().relay_to(RequestRelay {
            parent: std::sync::Arc::downgrade(&parent),
            child: std::sync::Arc::downgrade(&child),
            child_session_id: "c".into(),
            child_name: "helper".into(),
            call_id: "agent-call".into(),
            parent_call_id: None,
        });
        (parent, child)
    }

    fn approval() -> RequestAsk {
        serde_json::from_value(json!({
            "kind": "approval", "reason": "asks", "arguments": {"path": "a"},
            "presentation": {"action": "Read", "remark": "a"}
        }))
        .unwrap()
    }

    async fn ask_in(child: std::sync::Arc<Session>) -> RequestOutcome {
        let call = WaitingCall {
            call_id: "read-1",
            parent_call_id: None,
            tool_name: "read",
        };
        child
            .requests()
            .ask(child.events(), call, approval(), &CancellationToken::new())
            .await
    }

    async fn mirror_of(parent: &Session) -> RequestOpenedEvent {
        for _ in 0..200 {
            if let Some(open) = parent.requests().open().pop() {
                return open;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        panic!("no mirror opened in the parent");
    }

    #[tokio::test]
    async fn a_childs_request_is_answered_once_from_its_parent_or_from_itself() {
        let (parent, child) = parent_and_child(true);
        assert!(child.requests().is_attended(), "attended as its parent is");
        // Answered in the parent: the child's own request is resolved by it.
        let waiting = tokio::spawn(ask_in(std::sync::Arc::clone(&child)));
        let mirror = mirror_of(&parent).await;
        assert_eq!(mirror.call_id, "agent-call");
        assert_eq!(mirror.tool_name, "read");
        assert_eq!(mirror.child_session_id.as_deref(), Some("c"));
        assert_eq!(mirror.child_name.as_deref(), Some("helper"));
        let own = child.requests().open().pop().unwrap().request_id;
        let resolved = parent.requests().resolve(
            parent.events(),
            &mirror.request_id,
            RequestReply::Approve,
            "web:a",
        );
        assert_eq!(resolved.unwrap().resolution, RequestResolution::Approved);
        assert_eq!(
            waiting.await.unwrap(),
            RequestOutcome::Replied(RequestReply::Approve)
        );
        let late = child.requests().resolve(
            child.events(),
            &own,
            RequestReply::Deny { reason: None },
            "web:b",
        );
        assert!(
            matches!(&late, Err(ResolveError::Ended { ended: "approved", resolved_by, .. }) if resolved_by == "web:a"),
            "{late:?}"
        );
        // Answered in the child: the parent's mirror closes as it was answered.
        let waiting = tokio::spawn(ask_in(std::sync::Arc::clone(&child)));
        let mirror = mirror_of(&parent).await;
        let own = child.requests().open().pop().unwrap().request_id;
        child
            .requests()
            .resolve(
                child.events(),
                &own,
                RequestReply::Deny { reason: None },
                "terminal",
            )
            .unwrap();
        assert!(matches!(
            waiting.await.unwrap(),
            RequestOutcome::Replied(RequestReply::Deny { .. })
        ));
        assert!(parent.requests().open().is_empty(), "the mirror closed");
        let late = parent.requests().resolve(
            parent.events(),
            &mirror.request_id,
            RequestReply::Approve,
            "web:a",
        );
        assert!(
            matches!(&late, Err(ResolveError::Ended { ended: "denied", resolved_by, .. }) if resolved_by == "terminal"),
            "{late:?}"
        );
        // A cancelled call closes its mirror too.
        let waiting = tokio::spawn(ask_in(std::sync::Arc::clone(&child)));
        mirror_of(&parent).await;
        waiting.abort();
        let _ = waiting.await;
        assert!(parent.requests().open().is_empty(), "the mirror closed");
    }

    #[tokio::test]
    async fn an_unattended_parents_child_is_unattended() {
        let (parent, child) = parent_and_child(false);
        assert!(!child.requests().is_attended());
        assert_eq!(ask_in(child).await, RequestOutcome::Unattended);
        assert!(parent.requests().open().is_empty());
    }

    #[test]
    fn a_tool_grant_covers_every_call_of_the_tool() {
        let grant = SessionGrant {
            tool: "web_fetch".into(),
            command_prefix: None,
        };
        assert!(grant_covers(&grant, "web_fetch", &json!({"url": "x"})));
        assert!(!grant_covers(&grant, "bash", &json!({"command": "x"})));
    }
}
