//! [`MemoryStore`]: the store that keeps everything in memory, for tests and hosts that keep
//! nothing after they exit.

use crate::lease::LeaseTable;
use crate::schedules::ClaimedFire;
use crate::schedules::memory::ScheduleTable;
use crate::search::{PreparedSearch, log_documents, scan_match};
use crate::{
    CommitObserver, Cursor, EventJson, EventStore, Lease, NewSession, SearchHit, SearchPage,
    SearchQuery, SessionInfo, SessionPage, SessionQuery, SessionStatus, StoreError, page_limit,
    title_from_prompt,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use parking_lot::Mutex;
use qilin_protocol::schedules::{ScheduleRecord, ScheduleRun};
use qilin_protocol::{Event, EventBody, RequestOpenedEvent};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Sessions and events in memory; every follower wakes on a commit and reads what is new.
#[derive(Default)]
pub struct MemoryStore {
    sessions: Mutex<HashMap<String, Arc<MemorySession>>>,
    leases: LeaseTable,
    observers: Mutex<Vec<CommitObserver>>,
    schedules: ScheduleTable,
}

struct MemorySession {
    state: Mutex<SessionState>,
    head: watch::Sender<u64>,
}

struct SessionState {
    info: SessionInfo,
    renamed: bool,
    deleted: bool,
    events: Vec<Event>,
    open_requests: Vec<RequestOpenedEvent>,
    /// Loops and workflow runs started and not finished.
    running_runs: u64,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn get(&self, id: &str) -> Result<Arc<MemorySession>, StoreError> {
        self.sessions
            .lock()
            .get(id)
            .cloned()
            .ok_or_else(|| StoreError::UnknownSession(id.to_string()))
    }
}

/// Updates the rows an event derives: title, status, turns, activity, open requests.
fn derive(state: &mut SessionState, event: &Event) {
    state.info.head_seq = event.seq;
    state.info.last_activity.clone_from(&event.time);
    match &event.body {
        EventBody::TurnStarted { prompt, .. } => {
            state.info.status = SessionStatus::Running;
            state.info.turns += 1;
            if state.info.title.is_none() && !state.renamed {
                state.info.title = Some(title_from_prompt(prompt));
            }
        }
        EventBody::TurnFinished { .. } => state.info.status = SessionStatus::Idle,
        EventBody::LoopStarted(_) | EventBody::WorkflowStarted(_) => state.running_runs += 1,
        EventBody::LoopFinished(_) | EventBody::WorkflowFinished(_) => {
            state.running_runs = state.running_runs.saturating_sub(1);
        }
        EventBody::RequestOpened(opened) => state.open_requests.push(opened.clone()),
        EventBody::RequestResolved(resolved) => state
            .open_requests
            .retain(|open| open.request_id != resolved.request_id),
        _ => {}
    }
}

#[async_trait]
impl EventStore for MemoryStore {
    async fn create_session(&self, session: NewSession) -> Result<SessionInfo, StoreError> {
        let mut sessions = self.sessions.lock();
        if sessions.contains_key(&session.id) {
            return Err(StoreError::DuplicateSession(session.id));
        }
        let info = crate::created_session(session.clone());
        sessions.insert(
            session.id,
            Arc::new(MemorySession {
                state: Mutex::new(SessionState {
                    info: info.clone(),
                    renamed: false,
                    deleted: false,
                    events: Vec::new(),
                    open_requests: Vec::new(),
                    running_runs: 0,
                }),
                head: watch::Sender::new(0),
            }),
        );
        Ok(info)
    }

    async fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError> {
        Ok(self
            .sessions
            .lock()
            .get(id)
            .map(|session| session.state.lock().info.clone()))
    }

    async fn list_sessions(&self, query: &SessionQuery) -> Result<SessionPage, StoreError> {
        let mut all: Vec<SessionInfo> = self
            .sessions
            .lock()
            .values()
            .map(|session| session.state.lock().info.clone())
            .filter(|info| {
                query
                    .workspace
                    .as_ref()
                    .is_none_or(|workspace| &info.workspace == workspace)
            })
            .filter(|info| query.parent.admits(info.parent_session_id.as_deref()))
            .filter(|info| {
                query.title_contains.as_ref().is_none_or(|text| {
                    info.title
                        .as_deref()
                        .is_some_and(|title| title.to_lowercase().contains(&text.to_lowercase()))
                })
            })
            .collect();
        if let Some(cursor) = query.after.as_deref().map(Cursor::parse).transpose()? {
            all.retain(|info| {
                (&info.last_activity, &info.id) < (&cursor.last_activity, &cursor.id)
            });
        }
        all.sort_by(|a, b| (&b.last_activity, &b.id).cmp(&(&a.last_activity, &a.id)));
        Ok(crate::session_page(all, page_limit(query)))
    }

    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError> {
        let search = PreparedSearch::new(query)?;
        let sessions: Vec<Arc<MemorySession>> = self.sessions.lock().values().cloned().collect();
        let mut hits = Vec::new();
        for session in sessions {
            let (info, events) = {
                let state = session.state.lock();
                (state.info.clone(), state.events.clone())
            };
            let wanted = (search.sessions.is_empty() || search.sessions.contains(&info.id))
                && search
                    .workspace
                    .as_ref()
                    .is_none_or(|w| *w == info.workspace)
                && search.agent.as_ref().is_none_or(|a| *a == info.agent);
            if !wanted {
                continue;
            }
            for (doc, turn, call) in log_documents(&info.id, &events)? {
                let tool = call.as_ref().map(|call| call.tool.clone());
                let status = call.as_ref().and_then(|call| call.status);
                let kept = search
                    .tool
                    .as_ref()
                    .is_none_or(|t| Some(t) == tool.as_ref())
                    && search.status.is_none_or(|s| Some(s) == status)
                    && search.after.as_ref().is_none_or(|after| doc.time >= *after)
                    && search
                        .before
                        .as_ref()
                        .is_none_or(|before| doc.time < *before);
                if !kept {
                    continue;
                }
                if let Some((score, snippet)) = scan_match(&search, &doc.body) {
                    hits.push(SearchHit {
                        session: info.id.clone(),
                        title: info.title.clone().unwrap_or_default(),
                        seq: u64::try_from(doc.seq).unwrap_or(0),
                        turn,
                        call_id: doc.call_id,
                        tool,
                        field: doc.field,
                        snippet,
                        time: doc.time,
                        score,
                    });
                }
            }
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| (&a.session, a.seq).cmp(&(&b.session, b.seq)))
        });
        let more = hits.len() > search.offset.saturating_add(search.limit);
        let hits = hits
            .into_iter()
            .skip(search.offset)
            .take(search.limit)
            .collect();
        Ok(SearchPage {
            hits,
            next: more.then(|| search.next_cursor()),
        })
    }

    async fn rename_session(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let session = self.get(id)?;
        let mut state = session.state.lock();
        state.info.title = Some(title.to_string());
        state.renamed = true;
        Ok(())
    }

    async fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        let removed = self
            .sessions
            .lock()
            .remove(id)
            .ok_or_else(|| StoreError::UnknownSession(id.to_string()))?;
        removed.state.lock().deleted = true;
        removed.head.send_modify(|_| {});
        self.leases.forget(id);
        self.schedules.forget_session(id);
        Ok(())
    }

    async fn append(&self, session: &str, events: &[Event]) -> Result<u64, StoreError> {
        let stored = self.get(session)?;
        let head = {
            let mut state = stored.state.lock();
            for (expected, event) in (state.info.head_seq + 1..).zip(events) {
                if event.seq != expected {
                    return Err(StoreError::SeqConflict {
                        session: session.to_string(),
                        expected,
                        got: event.seq,
                    });
                }
            }
            for event in events {
                derive(&mut state, event);
                state.events.push(event.clone());
            }
            state.info.head_seq
        };
        for observer in self.observers.lock().iter() {
            observer(session, head);
        }
        stored.head.send_replace(head);
        Ok(head)
    }

    async fn read(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Event>, StoreError> {
        let stored = self.get(session)?;
        let state = stored.state.lock();
        let start = usize::try_from(after)
            .unwrap_or(usize::MAX)
            .min(state.events.len());
        Ok(state.events[start..].iter().take(limit).cloned().collect())
    }

    async fn read_json(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventJson>, StoreError> {
        self.read(session, after, limit)
            .await?
            .iter()
            .map(|event| EventJson::encode(session, event))
            .collect()
    }

    fn follow_json(
        &self,
        session: &str,
        after: u64,
    ) -> BoxStream<'static, Result<EventJson, StoreError>> {
        let name = session.to_string();
        self.follow(session, after)
            .map(move |next| next.and_then(|event| EventJson::encode(&name, &event)))
            .boxed()
    }

    fn observe_commits(&self, observer: CommitObserver) {
        self.observers.lock().push(observer);
    }

    fn follow(&self, session: &str, after: u64) -> BoxStream<'static, Result<Event, StoreError>> {
        match self.get(session) {
            Ok(stored) => {
                let follower = Follower {
                    head: stored.head.subscribe(),
                    stored,
                    cursor: after,
                    pending: VecDeque::new(),
                };
                stream::unfold(follower, Follower::next).boxed()
            }
            Err(err) => stream::once(std::future::ready(Err(err))).boxed(),
        }
    }

    async fn open_requests(&self, session: &str) -> Result<Vec<RequestOpenedEvent>, StoreError> {
        Ok(self.get(session)?.state.lock().open_requests.clone())
    }

    async fn running_sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let mut running: Vec<SessionInfo> = self
            .sessions
            .lock()
            .values()
            .map(|session| session.state.lock().info.clone())
            .filter(|info| info.status == SessionStatus::Running)
            .collect();
        running.sort_by(|a, b| (&b.last_activity, &b.id).cmp(&(&a.last_activity, &a.id)));
        Ok(running)
    }

    async fn sessions_with_running_loops_or_workflows(
        &self,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        let mut found: Vec<SessionInfo> = self
            .sessions
            .lock()
            .values()
            .filter_map(|session| {
                let state = session.state.lock();
                (state.running_runs > 0).then(|| state.info.clone())
            })
            .collect();
        found.sort_by(|a, b| (&b.last_activity, &b.id).cmp(&(&a.last_activity, &a.id)));
        Ok(found)
    }

    async fn acquire_lease(
        &self,
        session: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError> {
        self.get(session)?;
        Ok(self.leases.acquire(session, owner, ttl))
    }

    async fn release_lease(&self, session: &str, owner: &str) -> Result<(), StoreError> {
        self.leases.release(session, owner);
        Ok(())
    }

    async fn create_schedule(
        &self,
        schedule: &ScheduleRecord,
        first_fire: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.get(&schedule.session_id)?;
        self.schedules.create(schedule, first_fire)
    }

    async fn schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError> {
        self.schedules.get(id)
    }

    async fn list_schedules(
        &self,
        session: Option<&str>,
    ) -> Result<Vec<ScheduleRecord>, StoreError> {
        self.schedules.list(session)
    }

    async fn delete_schedule(&self, id: &str) -> Result<Option<ScheduleRecord>, StoreError> {
        self.schedules.delete(id)
    }

    async fn claim_due(
        &self,
        now: DateTime<Utc>,
        owner: &str,
        grace: chrono::Duration,
        lease: Duration,
    ) -> Result<Vec<ClaimedFire>, StoreError> {
        self.schedules.claim(now, owner, grace, |session| {
            self.leases.acquire(session, owner, lease) == Lease::Acquired
        })
    }

    async fn update_run(
        &self,
        id: &str,
        run_number: u32,
        run: &ScheduleRun,
    ) -> Result<(), StoreError> {
        self.schedules.update_run(id, run_number, run)
    }

    async fn interrupt_abandoned_runs(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        claimed_before: DateTime<Utc>,
    ) -> Result<Vec<(String, ScheduleRun)>, StoreError> {
        Ok(self
            .schedules
            .interrupt_abandoned(owner, now, claimed_before, |session, holder| {
                self.leases.holds(session, holder)
            }))
    }
}

/// A follower: reads what is stored after its cursor, then waits for the head to move.
struct Follower {
    stored: Arc<MemorySession>,
    cursor: u64,
    pending: VecDeque<Event>,
    head: watch::Receiver<u64>,
}

impl Follower {
    async fn next(mut self) -> Option<(Result<Event, StoreError>, Follower)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                self.cursor = event.seq;
                return Some((Ok(event), self));
            }
            self.head.borrow_and_update();
            {
                let state = self.stored.state.lock();
                if state.deleted {
                    return None;
                }
                let start = usize::try_from(self.cursor)
                    .unwrap_or(usize::MAX)
                    .min(state.events.len());
                self.pending.extend(state.events[start..].iter().cloned());
            }
            if self.pending.is_empty() {
                self.head.changed().await.ok()?;
            }
        }
    }
}
