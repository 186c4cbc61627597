//! The keys pressed while a turn runs: Esc interrupts it, and what is typed meanwhile is kept
//! as a draft for the next prompt.
//!
//! While a turn runs the terminal only stops waiting for whole lines and stops echoing (ICANON
//! and ECHO off); everything else stays as it is — output still turns a newline into a return
//! and a newline (OPOST), and Ctrl-C still sends its signal (ISIG). A thread polls standard
//! input with a short timeout; an ESC followed by nothing within a moment is the Esc key, one
//! followed by more bytes is a key's escape sequence (an arrow) and is dropped. The terminal's
//! own settings come back when the turn ends, when a request is asked on the terminal
//! ([`Keys::pause`]), and before the process exits or panics ([`restore_terminal`]).

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::termios::{
    LocalModes, OptionalActions, SpecialCodeIndex, Termios, tcgetattr, tcsetattr,
};
use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the thread looks whether it should stop or pause.
const POLL_EVERY: Duration = Duration::from_millis(40);
/// How long an ESC waits for the rest of an escape sequence before it counts as the Esc key.
const SEQUENCE_WAIT: Duration = Duration::from_millis(30);
const ESC: u8 = 0x1b;

/// The terminal's settings before a turn changed them, for [`restore_terminal`].
static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

/// Puts the terminal's own settings back if a turn changed them (before an exit or on a panic).
pub fn restore_terminal() {
    let saved = SAVED.lock().ok().and_then(|mut saved| saved.take());
    if let Some(original) = saved {
        let _ = tcsetattr(std::io::stdin().as_fd(), OptionalActions::Now, &original);
    }
}

/// What the thread and the others share.
#[derive(Default)]
struct State {
    /// Requests on the terminal now asking: the thread leaves the terminal alone.
    pauses: usize,
    /// The turn ended: the thread restores the terminal and ends.
    stop: bool,
    /// The terminal is in the turn's mode now.
    applied: bool,
    /// What was typed during the turn.
    typed: Draft,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The keys of a conversation's turns; clones share the running turn's watch.
#[derive(Clone, Default)]
pub struct Keys {
    shared: Arc<Mutex<Option<Arc<Shared>>>>,
}

/// A turn's watch of the keys; [`TurnKeys::finish`] ends it and gives what was typed.
pub struct TurnKeys {
    keys: Keys,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// While held, the terminal is the terminal's own (a request asks on it).
pub struct Paused {
    shared: Option<Arc<Shared>>,
}

impl Keys {
    /// Starts watching the keys for a turn: `on_escape` runs for each Esc. `None` when
    /// standard input is not a terminal or its settings cannot be changed.
    pub fn watch_turn(&self, on_escape: impl Fn() + Send + 'static) -> Option<TurnKeys> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let original = tcgetattr(stdin.as_fd()).ok()?;
        let mut turn_mode = original.clone();
        turn_mode.local_modes &= !(LocalModes::ICANON | LocalModes::ECHO);
        turn_mode.special_codes[SpecialCodeIndex::VMIN] = 1;
        turn_mode.special_codes[SpecialCodeIndex::VTIME] = 0;
        if let Ok(mut saved) = SAVED.lock() {
            *saved = Some(original.clone());
        }
        let shared = Arc::new(Shared::default());
        // Known before the thread starts, so that a request asked from now on pauses it.
        if let Ok(mut current) = self.shared.lock() {
            *current = Some(Arc::clone(&shared));
        }
        let mut turn = TurnKeys {
            keys: self.clone(),
            shared: Arc::clone(&shared),
            thread: None,
        };
        let thread = std::thread::Builder::new()
            .name("qilin-keys".into())
            .spawn(move || watch(&shared, &original, &turn_mode, &on_escape))
            .ok()?;
        turn.thread = Some(thread);
        Some(turn)
    }

    /// Gives the terminal back to its own settings until the guard is dropped (a request is
    /// asked on it); returns once the watch has let go of it.
    pub fn pause(&self) -> Paused {
        let shared = self.shared.lock().ok().and_then(|current| current.clone());
        if let Some(shared) = &shared {
            let mut state = shared.lock();
            state.pauses += 1;
            shared.changed.notify_all();
            while state.applied && !state.stop {
                state = shared
                    .changed
                    .wait(state)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
        }
        Paused { shared }
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            let mut state = shared.lock();
            state.pauses = state.pauses.saturating_sub(1);
            shared.changed.notify_all();
        }
    }
}

impl TurnKeys {
    /// Ends the watch, the terminal's settings restored, and returns what was typed meanwhile.
    pub fn finish(mut self) -> String {
        self.stop();
        std::mem::take(&mut self.shared.lock().typed).into_text()
    }

    fn stop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.stop = true;
            self.shared.changed.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Ok(mut current) = self.keys.shared.lock()
            && current
                .as_ref()
                .is_some_and(|shared| Arc::ptr_eq(shared, &self.shared))
        {
            *current = None;
        }
        if let Ok(mut saved) = SAVED.lock() {
            *saved = None;
        }
    }
}

impl Drop for TurnKeys {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The watching thread: the terminal in the turn's mode unless paused, the keys read.
fn watch(shared: &Shared, original: &Termios, turn_mode: &Termios, on_escape: &dyn Fn()) {
    let stdin = std::io::stdin();
    let fd = stdin.as_fd();
    let mut pending: Vec<u8> = Vec::new();
    loop {
        {
            let mut state = shared.lock();
            loop {
                if state.stop || (state.pauses > 0) {
                    if state.applied {
                        let _ = tcsetattr(fd, OptionalActions::Now, original);
                        state.applied = false;
                        shared.changed.notify_all();
                    }
                    if state.stop {
                        return;
                    }
                    state = shared
                        .changed
                        .wait(state)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    continue;
                }
                break;
            }
            if !state.applied {
                if tcsetattr(fd, OptionalActions::Now, turn_mode).is_err() {
                    return;
                }
                state.applied = true;
            }
        }
        let wait = if pending.is_empty() {
            POLL_EVERY
        } else {
            SEQUENCE_WAIT
        };
        let readable = readable_within(fd, wait);
        if readable {
            let mut buffer = [0u8; 256];
            match rustix::io::read(fd, &mut buffer[..]) {
                Err(rustix::io::Errno::INTR) => continue,
                Ok(0) | Err(_) => {
                    // The terminal is gone: nothing more to read.
                    shared.lock().stop = true;
                    continue;
                }
                Ok(read) => pending.extend_from_slice(&buffer[..read]),
            }
        }
        if pending.is_empty() {
            continue;
        }
        // With nothing more come, a trailing ESC is the Esc key itself.
        let (keys, used) = split_keys(&pending, readable);
        pending.drain(..used);
        let mut escaped = false;
        {
            let mut state = shared.lock();
            for key in keys {
                match key {
                    Key::Escape => escaped = true,
                    other => state.typed.apply(other),
                }
            }
        }
        if escaped {
            on_escape();
        }
    }
}

fn readable_within(fd: std::os::fd::BorrowedFd<'_>, wait: Duration) -> bool {
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0)
        && fds[0]
            .revents()
            .intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
}

/// A key read during a turn.
#[derive(Debug, PartialEq, Eq)]
enum Key {
    /// The Esc key alone.
    Escape,
    /// Text typed (UTF-8 bytes, possibly a character's first bytes only).
    Text(Vec<u8>),
    /// Backspace.
    Backspace,
    /// Enter.
    Enter,
    /// Anything else: an arrow's escape sequence, a control key.
    Ignored,
}

/// The keys `bytes` hold and how many bytes they took. An escape sequence cut at the end is
/// left for more bytes when `more_may_come`; otherwise a trailing ESC is the Esc key.
fn split_keys(bytes: &[u8], more_may_come: bool) -> (Vec<Key>, usize) {
    let mut keys = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        match byte {
            ESC => match sequence_length(&bytes[at..]) {
                Some(0) => {
                    keys.push(Key::Escape);
                    at += 1;
                }
                Some(length) => {
                    keys.push(Key::Ignored);
                    at += length;
                }
                None if more_may_come => break,
                None if bytes.len() - at == 1 => {
                    keys.push(Key::Escape);
                    at += 1;
                }
                None => {
                    // A sequence cut short for good: drop what came of it.
                    keys.push(Key::Ignored);
                    at = bytes.len();
                }
            },
            b'\r' | b'\n' => {
                keys.push(Key::Enter);
                at += 1;
            }
            0x7f | 0x08 => {
                keys.push(Key::Backspace);
                at += 1;
            }
            b'\t' => {
                keys.push(Key::Text(vec![b'\t']));
                at += 1;
            }
            0..=0x1f => {
                keys.push(Key::Ignored);
                at += 1;
            }
            _ => {
                let start = at;
                while at < bytes.len() && bytes[at] >= 0x20 && bytes[at] != 0x7f {
                    at += 1;
                }
                keys.push(Key::Text(bytes[start..at].to_vec()));
            }
        }
    }
    (keys, at)
}

/// The length of the escape sequence at the start of `bytes` (which starts with ESC): `Some(0)`
/// for an ESC followed by another ESC (the first is the Esc key), `None` when it is cut short.
fn sequence_length(bytes: &[u8]) -> Option<usize> {
    match bytes.get(1)? {
        &ESC => Some(0),
        b'[' => {
            // A control sequence: parameters, then a final byte from `@` to `~`.
            let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
            Some(end + 3)
        }
        b'O' => bytes.get(2).map(|_| 3),
        // Alt and a key.
        _ => Some(2),
    }
}

/// What was typed during a turn, for the next prompt.
#[derive(Default)]
struct Draft(Vec<u8>);

impl Draft {
    fn apply(&mut self, key: Key) {
        match key {
            Key::Text(text) => self.0.extend_from_slice(&text),
            Key::Enter => self.0.push(b'\n'),
            Key::Backspace => {
                // A whole character: its continuation bytes, then its first.
                while self.0.last().is_some_and(|b| b & 0xc0 == 0x80) {
                    self.0.pop();
                }
                self.0.pop();
            }
            Key::Escape | Key::Ignored => {}
        }
    }

    fn into_text(self) -> String {
        String::from_utf8_lossy(&self.0)
            .trim_end_matches('\n')
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_escape_is_the_key_and_an_arrow_is_a_sequence() {
        assert_eq!(split_keys(b"\x1b", false), (vec![Key::Escape], 1));
        // More may come: an ESC at the end waits for the rest of its sequence.
        assert_eq!(
            split_keys(b"ab\x1b", true),
            (vec![Key::Text(b"ab".to_vec())], 2)
        );
        assert_eq!(split_keys(b"\x1b[D", true), (vec![Key::Ignored], 3));
        assert_eq!(split_keys(b"\x1b[1;5C", false), (vec![Key::Ignored], 6));
        assert_eq!(split_keys(b"\x1bOA", false), (vec![Key::Ignored], 3));
        assert_eq!(split_keys(b"\x1b[", true), (vec![], 0));
        assert_eq!(split_keys(b"\x1b[", false), (vec![Key::Ignored], 2));
        assert_eq!(
            split_keys(b"\x1b\x1b[A", false),
            (vec![Key::Escape, Key::Ignored], 4)
        );
    }

    #[test]
    fn typed_text_is_kept_with_its_edits() {
        let mut draft = Draft::default();
        let (keys, used) = split_keys("next: é\x7fe\x1b[Dgo\r".as_bytes(), false);
        assert_eq!(used, "next: é\x7fe\x1b[Dgo\r".len());
        for key in keys {
            draft.apply(key);
        }
        assert_eq!(draft.into_text(), "next: ego");
    }
}
