use parking_lot::Mutex;
use qilin_protocol::{Event, EventBody};
use tokio::sync::mpsc;

/// A session's append-only event log: numbers each event and hands it to every subscriber.
///
/// Numbering and delivery happen under one lock, so every subscriber sees the events in
/// `seq` order with no gaps.
pub struct EventLog {
    inner: Mutex<LogState>,
}

struct LogState {
    next_seq: u64,
    subscribers: Vec<mpsc::UnboundedSender<Event>>,
}

impl Default for EventLog {
    fn default() -> Self {
        Self::new()
    }
}

impl EventLog {
    /// An empty log; its first event gets `seq` 1.
    pub fn new() -> Self {
        EventLog {
            inner: Mutex::new(LogState {
                next_seq: 1,
                subscribers: Vec::new(),
            }),
        }
    }

    /// An empty log whose first event gets `seq` `seq + 1`: a resumed session's.
    pub fn continuing_after(seq: u64) -> Self {
        EventLog {
            inner: Mutex::new(LogState {
                next_seq: seq + 1,
                subscribers: Vec::new(),
            }),
        }
    }

    /// The `seq` of the latest event appended; 0 before any.
    pub fn head(&self) -> u64 {
        self.inner.lock().next_seq - 1
    }

    /// Appends an event and returns its sequence number.
    pub fn emit(&self, body: EventBody) -> u64 {
        let mut state = self.inner.lock();
        let seq = state.next_seq;
        state.next_seq += 1;
        let time = now();
        match state.subscribers.len() {
            0 => {}
            1 => {
                if state.subscribers[0]
                    .send(Event { seq, time, body })
                    .is_err()
                {
                    state.subscribers.clear();
                }
            }
            _ => {
                let event = Event { seq, time, body };
                state
                    .subscribers
                    .retain(|subscriber| subscriber.send(event.clone()).is_ok());
            }
        }
        seq
    }

    /// Every event appended from now on, in order.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Event> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.inner.lock().subscribers.push(sender);
        receiver
    }
}

/// The current time as events carry it: RFC 3339 in UTC with milliseconds.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
