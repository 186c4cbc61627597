//! A call's live output: the one place `tool.progress` events are made, bounded and coalesced.
//!
//! Whatever a call prints and for however long, its progress events carry at most
//! [`LIVE_MAX_BYTES`] of text (see [`qilin_protocol::live`]): the start of the output, sent as
//! it comes but gathered into few events (one when [`COALESCE_BYTES`] are waiting, or
//! [`COALESCE_INTERVAL`] after the previous event); past the start, at most once every
//! [`GLIMPSE_INTERVAL`] a glimpse of the latest output; when the call ends, the last part of
//! what was not shown yet. Output left out between two events is counted in the later event's
//! `omittedBytes`. The store, every follower of the log and every tree folded from it hold
//! no more of a call's live output than that; the call's result holds the whole of it.

use crate::EventLog;
use parking_lot::{Mutex, MutexGuard};
#[cfg(doc)]
use qilin_protocol::LIVE_MAX_BYTES;
use qilin_protocol::live::{ceil_char_boundary, floor_char_boundary};
use qilin_protocol::{
    EventBody, LIVE_GLIMPSE_BUDGET, LIVE_GLIMPSE_BYTES, LIVE_HEAD_BYTES, LIVE_TAIL_BYTES,
    ToolProgressEvent,
};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The start of an output waiting this many bytes is sent at once.
pub const COALESCE_BYTES: usize = 64 * 1024;

/// The longest the start of an output waits to be sent with what follows it.
pub const COALESCE_INTERVAL: Duration = Duration::from_millis(50);

/// The shortest time between two glimpses of the latest output, past the start.
pub const GLIMPSE_INTERVAL: Duration = Duration::from_secs(1);

/// The live output of one call: what it printed, and what of it was sent as progress events.
pub(crate) struct LiveOutput {
    call_id: String,
    parent_call_id: Option<String>,
    state: Mutex<LiveState>,
    /// Told when an event falls due, so the call's dispatch wakes to send it.
    due: Notify,
}

struct LiveState {
    /// Bytes of text received.
    received: u64,
    /// Bytes of output the events sent so far account for (shown, or counted as left out).
    sent: u64,
    /// Bytes the start may still take; 0 once output went past it.
    head_room: usize,
    /// Text of the start received and not sent yet.
    pending: String,
    /// The latest output past the start, ending at `received`: at least its last
    /// [`LIVE_TAIL_BYTES`] (all of it when shorter), at most twice that.
    recent: String,
    /// Bytes the glimpses may still carry.
    glimpse_room: usize,
    /// When the last event was sent.
    last_sent: Option<Instant>,
    /// When the next event falls due, if one waits.
    due_at: Option<Instant>,
    /// The call ended: its last event was sent, and later output is dropped.
    finished: bool,
}

impl LiveOutput {
    /// The live output of call `call_id` (made from `parent_call_id`'s code, if given).
    pub(crate) fn new(call_id: String, parent_call_id: Option<String>) -> Self {
        LiveOutput {
            call_id,
            parent_call_id,
            state: Mutex::new(LiveState {
                received: 0,
                sent: 0,
                head_room: LIVE_HEAD_BYTES,
                pending: String::new(),
                recent: String::new(),
                glimpse_room: LIVE_GLIMPSE_BUDGET,
                last_sent: None,
                due_at: None,
                finished: false,
            }),
            due: Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, LiveState> {
        self.state.lock()
    }

    /// Takes more output of the call, sending what is due to `events`.
    pub(crate) fn push(&self, events: &EventLog, text: &str) {
        self.push_at(events, text, Instant::now());
    }

    /// [`LiveOutput::push`] at the time `now`.
    fn push_at(&self, events: &EventLog, text: &str, now: Instant) {
        let mut state = self.state();
        if state.finished || text.is_empty() {
            return;
        }
        state.received = state.received.saturating_add(text.len() as u64);
        let mut rest = text;
        if state.head_room > 0 {
            let fits = floor_char_boundary(text, state.head_room);
            state.pending.push_str(&text[..fits]);
            state.head_room -= fits;
            rest = &text[fits..];
            if !rest.is_empty() {
                state.head_room = 0;
            }
        }
        if !rest.is_empty() {
            state.recent.push_str(rest);
            if state.recent.len() > 2 * LIVE_TAIL_BYTES {
                let cut = ceil_char_boundary(&state.recent, state.recent.len() - LIVE_TAIL_BYTES);
                state.recent.drain(..cut);
            }
        }
        self.send_due(&mut state, events, now);
    }

    /// Resolves when an event falls due (the dispatch then calls [`LiveOutput::send_waiting`]).
    pub(crate) async fn due(&self) {
        loop {
            let due_at = self.state().due_at;
            match due_at {
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => return,
                        () = self.due.notified() => {}
                    }
                }
                None => self.due.notified().await,
            }
        }
    }

    /// Sends what is due now.
    pub(crate) fn send_waiting(&self, events: &EventLog) {
        let mut state = self.state();
        state.due_at = None;
        if !state.finished {
            self.send_due(&mut state, events, Instant::now());
        }
    }

    /// The call ended: sends the start still waiting and the last part of what was not shown
    /// yet; later output is dropped.
    pub(crate) fn finish(&self, events: &EventLog) {
        let mut state = self.state();
        if state.finished {
            return;
        }
        state.finished = true;
        state.due_at = None;
        if !state.pending.is_empty() {
            self.send_start(&mut state, events, Instant::now());
        }
        let unsent = state.received - state.sent;
        if unsent > 0 {
            let most = usize::try_from(unsent).map_or(LIVE_TAIL_BYTES, |n| n.min(LIVE_TAIL_BYTES));
            self.send_latest(&mut state, events, most, Instant::now());
        }
    }

    /// Sends the start when it is due, then a glimpse of the latest output when one is due,
    /// and notes when the next falls due otherwise.
    fn send_due(&self, state: &mut LiveState, events: &EventLog, now: Instant) {
        if !state.pending.is_empty() {
            let waited_enough = state
                .last_sent
                .is_none_or(|last| now >= last + COALESCE_INTERVAL);
            let start_complete = state.head_room == 0;
            if waited_enough || start_complete || state.pending.len() >= COALESCE_BYTES {
                self.send_start(state, events, now);
            } else {
                return self.wake_at(state, state.last_sent.map(|last| last + COALESCE_INTERVAL));
            }
        }
        let unsent = state.received - state.sent;
        if unsent == 0 || state.glimpse_room == 0 {
            return;
        }
        let due_at = state.last_sent.map(|last| last + GLIMPSE_INTERVAL);
        if due_at.is_some_and(|at| now < at) {
            return self.wake_at(state, due_at);
        }
        let most = usize::try_from(unsent)
            .unwrap_or(usize::MAX)
            .min(LIVE_GLIMPSE_BYTES)
            .min(state.glimpse_room);
        let shown = self.send_latest(state, events, most, now);
        state.glimpse_room = state.glimpse_room.saturating_sub(shown);
    }

    fn wake_at(&self, state: &mut LiveState, at: Option<Instant>) {
        if state.due_at.is_none() {
            state.due_at = at;
            self.due.notify_one();
        }
    }

    fn send_start(&self, state: &mut LiveState, events: &EventLog, now: Instant) {
        let text = std::mem::take(&mut state.pending);
        state.sent += text.len() as u64;
        state.last_sent = Some(now);
        self.emit(events, text, None);
    }

    /// Sends at most the last `most` bytes of the output not sent yet, counting the rest as
    /// left out; returns the bytes sent.
    fn send_latest(
        &self,
        state: &mut LiveState,
        events: &EventLog,
        most: usize,
        now: Instant,
    ) -> usize {
        let unsent = state.received - state.sent;
        let most = most.min(state.recent.len());
        let start = ceil_char_boundary(&state.recent, state.recent.len() - most);
        let text = state.recent[start..].to_string();
        let omitted = unsent.saturating_sub(text.len() as u64);
        state.sent = state.received;
        state.last_sent = Some(now);
        let shown = text.len();
        self.emit(events, text, (omitted > 0).then_some(omitted));
        shown
    }

    fn emit(&self, events: &EventLog, text: String, omitted_bytes: Option<u64>) {
        events.emit(EventBody::ToolProgress(ToolProgressEvent {
            call_id: self.call_id.clone(),
            parent_call_id: self.parent_call_id.clone(),
            omitted_bytes,
            text,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::{Event, LIVE_MAX_BYTES, LiveView};

    fn progress(events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<(String, u64)> {
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            if let EventBody::ToolProgress(p) = event.body {
                seen.push((p.text, p.omitted_bytes.unwrap_or(0)));
            }
        }
        seen
    }

    #[test]
    fn a_flood_is_sent_as_its_start_a_few_glimpses_and_its_end_within_the_bound() {
        let log = EventLog::new();
        let mut events = log.subscribe();
        let live = LiveOutput::new("c1".into(), None);
        let chunk = "y\n".repeat(8 * 1024);
        let mut total = 0u64;
        let start = Instant::now();
        // 30 s of a command printing 1.6 MB a second.
        for n in 0..3_000 {
            live.push_at(&log, &chunk, start + Duration::from_millis(10 * n));
            total += chunk.len() as u64;
        }
        live.finish(&log);
        let sent = progress(&mut events);
        let text_bytes: usize = sent.iter().map(|(text, _)| text.len()).sum();
        assert!(text_bytes <= LIVE_MAX_BYTES, "{text_bytes} bytes sent live");
        let accounted: u64 = sent
            .iter()
            .map(|(text, omitted)| text.len() as u64 + omitted)
            .sum();
        assert_eq!(accounted, total, "every byte is shown or counted");
        // The start arrives whole, the end is the output's last bytes.
        let mut view = LiveView::default();
        for (text, omitted) in &sent {
            view.push(text, *omitted);
        }
        assert_eq!(view.head, chunk.repeat(LIVE_HEAD_BYTES / chunk.len()));
        assert_eq!(view.tail.len(), LIVE_TAIL_BYTES);
        assert!(view.tail.ends_with("y\ny\n"));
        // 30 s of output at most one glimpse a second: a few dozen events, not thousands.
        assert!(sent.len() < 50, "{} events", sent.len());
    }

    #[tokio::test]
    async fn small_writes_are_gathered_and_none_is_lost() {
        let log = EventLog::new();
        let mut events = log.subscribe();
        let live = LiveOutput::new("c1".into(), None);
        let start = Instant::now();
        live.push_at(&log, "first\n", start);
        for n in 0..100 {
            let at = start + COALESCE_INTERVAL * n / 200;
            live.push_at(&log, &format!("line {n}\n"), at);
        }
        // The first write went at once; the rest wait for the interval.
        assert_eq!(progress(&mut events), vec![("first\n".to_string(), 0)]);
        live.due().await;
        live.send_waiting(&log);
        let gathered = progress(&mut events);
        assert_eq!(gathered.len(), 1);
        let expected: String = (0..100).map(|n| format!("line {n}\n")).collect();
        assert_eq!(gathered[0].0, expected);
        live.push(&log, "last\n");
        live.finish(&log);
        live.push(&log, "after the end\n");
        assert_eq!(progress(&mut events), vec![("last\n".to_string(), 0)]);
    }

    #[test]
    fn slow_output_past_the_start_is_shown_whole_a_glimpse_at_a_time() {
        let log = EventLog::new();
        let mut events = log.subscribe();
        let live = LiveOutput::new("c1".into(), None);
        let start = Instant::now();
        live.push_at(&log, &"s".repeat(LIVE_HEAD_BYTES), start);
        for n in 1..=5 {
            live.push_at(&log, &format!("step {n}\n"), start + GLIMPSE_INTERVAL * n);
        }
        live.finish(&log);
        let sent = progress(&mut events);
        assert!(sent.iter().all(|(_, omitted)| *omitted == 0), "{sent:?}");
        let shown: String = sent.iter().skip(1).map(|(text, _)| text.as_str()).collect();
        assert_eq!(
            shown,
            (1..=5).map(|n| format!("step {n}\n")).collect::<String>()
        );
    }
}
