//! Followers of the database stores: a follower reads what is stored after its cursor, then
//! sleeps until a commit wakes it.
//!
//! [`LiveMap`] holds, for each session someone follows, a watch of its committed head and a
//! short ring of its latest events, as the JSON the append stored. The writer publishes after
//! each commit (the ring first, then the head); a follower whose cursor the ring reaches takes
//! the new events from memory, any other follower (one that lags, or events another process
//! committed) reads them from the database. Either way it takes exactly the events after its
//! cursor, in order: it never skips ahead and never repeats. Followers get the stored JSON as
//! is ([`EventJson`]); a typed follower decodes it.

use crate::plan::decode;
use crate::{CommitObserver, EventJson, StoreError};
use async_trait::async_trait;
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use parking_lot::{Mutex, RwLock};
use qilin_protocol::Event;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use tokio::sync::watch;

/// The most recent events kept in memory per followed session.
const RING_EVENTS: usize = 512;

/// The most events a follower reads from the database at once: a client resuming a long
/// session reads it in few queries.
pub(crate) const PAGE_EVENTS: usize = 2048;

/// Where a follower reads stored events.
#[async_trait]
pub(crate) trait EventSource: Send + Sync + 'static {
    /// Up to `limit` events of `session` after `after`, in order, as stored; `None` when the
    /// session no longer exists.
    async fn events_after(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Option<Vec<EventJson>>, StoreError>;
}

/// What a follower watches: the committed head, whether to look at the database whatever the
/// head says, and whether to stop.
#[derive(Debug, Clone, Copy, Default)]
struct Watched {
    head: u64,
    /// Moves when announcements may have been missed: every follower reads the database.
    recheck: u64,
    closed: bool,
}

/// One followed session.
struct LiveSession {
    watched: watch::Sender<Watched>,
    ring: Mutex<VecDeque<EventJson>>,
}

/// The followed sessions of one store, and who hears of every commit.
#[derive(Default)]
pub(crate) struct LiveMap {
    sessions: Mutex<HashMap<String, Arc<LiveSession>>>,
    observers: RwLock<Vec<CommitObserver>>,
}

impl LiveSession {
    /// Puts the committed `events` ending at `head` in the ring, then moves the head.
    fn append(&self, head: u64, events: Vec<EventJson>) {
        {
            let mut ring = self.ring.lock();
            let continues = match (ring.back(), events.first()) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(back), Some(first)) => back.seq + 1 == first.seq,
            };
            if !continues {
                ring.clear();
            }
            if events.last().is_some_and(|last| last.seq == head) {
                ring.extend(events);
                let excess = ring.len().saturating_sub(RING_EVENTS);
                ring.drain(..excess);
            }
        }
        self.watched.send_modify(|watched| {
            watched.head = watched.head.max(head);
        });
    }
}

impl LiveMap {
    /// Adds `observer`, called with the session and its new head after each commit.
    pub(crate) fn observe(&self, observer: CommitObserver) {
        self.observers.write().push(observer);
    }

    /// Tells the followers of `session` that its head reached `head`, handing them the
    /// committed events that end there, which `events` gives only when someone follows the
    /// session (an empty list: they read them from the database). The observers hear of the
    /// commit first.
    pub(crate) fn publish(
        &self,
        session: &str,
        head: u64,
        events: impl FnOnce() -> Vec<EventJson>,
    ) {
        for observer in self.observers.read().iter() {
            observer(session, head);
        }
        if let Some(live) = self.followed(session) {
            live.append(head, events());
        }
    }

    /// Tells the followers of `session` that another process committed up to `head`: they
    /// read the events from the database. (Only a store several processes share hears of
    /// other processes' commits.)
    #[cfg(feature = "postgres")]
    pub(crate) fn announce(&self, session: &str, head: u64) {
        if let Some(live) = self.followed(session) {
            live.watched.send_if_modified(|watched| {
                let moved = head > watched.head;
                watched.head = watched.head.max(head);
                moved
            });
        }
    }

    /// Ends the followers of a deleted session.
    pub(crate) fn deleted(&self, session: &str) {
        if let Some(live) = self.sessions.lock().remove(session) {
            live.watched.send_modify(|watched| watched.closed = true);
        }
    }

    /// Wakes every follower to look at the database, after announcements may have been missed.
    #[cfg(feature = "postgres")]
    pub(crate) fn wake_all(&self) {
        for live in self.sessions.lock().values() {
            live.watched.send_modify(|watched| watched.recheck += 1);
        }
    }

    /// Ends every follower: the store is closing.
    pub(crate) fn close_all(&self) {
        for (_, live) in self.sessions.lock().drain() {
            live.watched.send_modify(|watched| watched.closed = true);
        }
    }

    /// The entry of `session` while someone follows it; an entry nobody follows is dropped.
    fn followed(&self, session: &str) -> Option<Arc<LiveSession>> {
        let mut sessions = self.sessions.lock();
        let live = sessions.get(session)?;
        if live.watched.receiver_count() == 0 {
            sessions.remove(session);
            return None;
        }
        Some(Arc::clone(live))
    }

    /// Starts following `session`.
    fn subscribe(&self, session: &str) -> (Arc<LiveSession>, watch::Receiver<Watched>) {
        let mut sessions = self.sessions.lock();
        let live = sessions.entry(session.to_string()).or_insert_with(|| {
            Arc::new(LiveSession {
                watched: watch::Sender::new(Watched::default()),
                ring: Mutex::new(VecDeque::new()),
            })
        });
        (Arc::clone(live), live.watched.subscribe())
    }
}

/// Every event of `session` after `after`, stored then live, decoded, from `source`, woken by
/// `live`.
pub(crate) fn follow<S: EventSource>(
    source: Arc<S>,
    live: &LiveMap,
    session: &str,
    after: u64,
) -> BoxStream<'static, Result<Event, StoreError>> {
    let name = session.to_string();
    follow_json(source, live, session, after)
        .map(move |next| next.and_then(|event| decode(&name, &event.json)))
        .boxed()
}

/// Every event of `session` after `after`, stored then live, as stored, from `source`, woken
/// by `live`.
pub(crate) fn follow_json<S: EventSource>(
    source: Arc<S>,
    live: &LiveMap,
    session: &str,
    after: u64,
) -> BoxStream<'static, Result<EventJson, StoreError>> {
    let (entry, watched) = live.subscribe(session);
    let follower = Follower {
        source,
        entry,
        watched,
        session: session.to_string(),
        cursor: after,
        pending: VecDeque::new(),
        read_needed: true,
        recheck: 0,
        found: false,
        failed: false,
    };
    stream::unfold(follower, Follower::next).boxed()
}

/// A follower's state between two events.
struct Follower<S> {
    source: Arc<S>,
    entry: Arc<LiveSession>,
    watched: watch::Receiver<Watched>,
    session: String,
    cursor: u64,
    pending: VecDeque<EventJson>,
    /// Whether the database may hold events after the cursor that no head announced: at the
    /// start, after a full page, after a recheck.
    read_needed: bool,
    /// The recheck count last seen.
    recheck: u64,
    /// Whether the session was found: a follower of an unknown session gets an error.
    found: bool,
    failed: bool,
}

impl<S: EventSource> Follower<S> {
    async fn next(mut self) -> Option<(Result<EventJson, StoreError>, Self)> {
        if self.failed {
            return None;
        }
        loop {
            if let Some(event) = self.pending.pop_front() {
                self.cursor = event.seq;
                return Some((Ok(event), self));
            }
            // Marked seen before looking, so a commit after the look wakes the wait below.
            let watched = *self.watched.borrow_and_update();
            if watched.closed {
                return None;
            }
            if watched.recheck != self.recheck {
                self.recheck = watched.recheck;
                self.read_needed = true;
            }
            if self.take_from_ring() {
                self.found = true;
                continue;
            }
            if !self.read_needed && watched.head <= self.cursor {
                self.watched.changed().await.ok()?;
                continue;
            }
            let read = self
                .source
                .events_after(&self.session, self.cursor, PAGE_EVENTS)
                .await;
            self.read_needed = read
                .as_ref()
                .is_ok_and(|events| events.as_ref().is_some_and(|e| e.len() == PAGE_EVENTS));
            match read {
                Ok(None) if self.found => return None,
                Ok(None) => {
                    self.failed = true;
                    let unknown = StoreError::UnknownSession(self.session.clone());
                    return Some((Err(unknown), self));
                }
                Ok(Some(events)) if !events.is_empty() => {
                    self.found = true;
                    if let Err(err) = self.check_continues(&events) {
                        self.failed = true;
                        return Some((Err(err), self));
                    }
                    self.pending.extend(events);
                    continue;
                }
                Ok(Some(_)) => self.found = true,
                Err(err) => {
                    self.failed = true;
                    return Some((Err(err), self));
                }
            }
            self.watched.changed().await.ok()?;
        }
    }

    /// Takes the events after the cursor from the ring, when the ring reaches back to it.
    fn take_from_ring(&mut self) -> bool {
        let ring = self.entry.ring.lock();
        match (ring.front(), ring.back()) {
            (Some(front), Some(back))
                if front.seq <= self.cursor.saturating_add(1) && back.seq > self.cursor =>
            {
                let skip = usize::try_from(self.cursor + 1 - front.seq).unwrap_or(usize::MAX);
                self.pending.extend(ring.iter().skip(skip).cloned());
                true
            }
            _ => false,
        }
    }

    /// Checks that events read from the database continue the cursor without a gap.
    fn check_continues(&self, events: &[EventJson]) -> Result<(), StoreError> {
        for (expected, event) in (self.cursor.saturating_add(1)..).zip(events) {
            if event.seq != expected {
                return Err(StoreError::Corrupt {
                    session: self.session.clone(),
                    message: format!("event {expected} is missing (found {})", event.seq),
                });
            }
        }
        Ok(())
    }
}
