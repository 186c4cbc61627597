//! Terminals for interactive programs: a command started in a pseudo-terminal, inside the
//! session's sandbox, whose screen output Qilin reads and whose keys it types. The
//! [`TerminalTable`] service holds a session's terminals and ends them with the session.
//!
//! A task per terminal reads everything the program writes, as it comes: the text renderer
//! turns it into plain lines for the model, and the raw bytes (colours and all) are kept for
//! the client. Both are bounded while nobody reads them.

use crate::jobs::{JobState, JobStatus, exit_status};
use crate::process_group::GroupGuard;
use crate::pty;
use crate::render::TextRenderer;
use parking_lot::Mutex;
use qilin_sandbox::{CommandIo, Sandbox, SandboxedCommand};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

/// The most terminals one session may keep open at once.
pub const MAX_TERMINALS: usize = 8;
/// Rows of every terminal.
pub const TERMINAL_ROWS: u16 = 40;
/// Columns of every terminal.
pub const TERMINAL_COLUMNS: u16 = 120;
/// Unread text kept for the model at most, in bytes; older unread text is dropped.
const MAX_UNREAD_TEXT: usize = 1024 * 1024;
/// Unread raw output kept for the client at most, in bytes.
const MAX_UNREAD_RAW: usize = 256 * 1024;

/// A session's terminals. A host service: put one in the session's
/// [`qilin_tool::Services`] ([`crate::session_services`] does); without it the terminal tools
/// are refused. [`TerminalTable::end_all`], and dropping the table, end every terminal's
/// program and everything it started.
#[derive(Default)]
pub struct TerminalTable {
    next_id: AtomicU64,
    terminals: Mutex<BTreeMap<String, Arc<Terminal>>>,
}

/// One terminal and the program running in it.
pub struct Terminal {
    id: String,
    command: String,
    started: Instant,
    primary: pty::PtyPrimary,
    screen: Mutex<Screen>,
    output_arrived: Notify,
    group: Mutex<GroupGuard>,
    status: watch::Receiver<JobStatus>,
}

/// What the program wrote that nobody has read yet.
#[derive(Default)]
struct Screen {
    renderer: TextRenderer,
    raw: Vec<u8>,
    dropped_raw: u64,
    /// When the last output came.
    last_output: Option<Instant>,
}

/// What a read of a terminal found.
#[derive(Debug, Clone)]
pub struct TerminalRead {
    /// The text written since the previous read, escape sequences removed and each line as
    /// it ended up; the line being written (a prompt) last.
    pub text: String,
    /// The same output as the program wrote it, escape sequences kept (its tail when long).
    pub raw: String,
    /// The program's status.
    pub status: JobStatus,
}

/// Why a terminal operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    /// No terminal has that id.
    #[error("no terminal has the id `{id}`; {}", known_terminals(.known))]
    Unknown {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        known: Vec<String>,
    },
    /// The session has as many terminals open as it may.
    #[error(
        "this session already has {MAX_TERMINALS} terminals open ({0}); end one with \
         terminal_kill first"
    )]
    Full(String),
    /// The terminal or its program could not be started.
    #[error("the terminal could not be started: {0}")]
    Start(#[from] std::io::Error),
}

fn known_terminals(known: &[String]) -> String {
    if known.is_empty() {
        "no terminal has been started in this session".to_string()
    } else {
        format!("the terminals are: {}", known.join(", "))
    }
}

impl TerminalTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts `bash -c command` in a new terminal in `cwd`, through `sandbox`.
    pub fn start(
        &self,
        command: &str,
        cwd: &Path,
        sandbox: &Sandbox,
    ) -> Result<Arc<Terminal>, TerminalError> {
        {
            let terminals = self.terminals.lock();
            let open: Vec<String> = terminals
                .values()
                .filter(|terminal| terminal.status().state == JobState::Running)
                .map(|terminal| terminal.id.clone())
                .collect();
            if open.len() >= MAX_TERMINALS {
                return Err(TerminalError::Full(open.join(", ")));
            }
        }
        let id = format!("term-{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let pair = pty::open(TERMINAL_ROWS, TERMINAL_COLUMNS)?;
        let program: Vec<OsString> = vec!["bash".into(), "-c".into(), command.into()];
        let SandboxedCommand {
            command: spawn,
            lifeline,
            ..
        } = sandbox.program(program, cwd, CommandIo::Terminal(pair.secondary))?;
        let mut spawn = tokio::process::Command::from(spawn);
        spawn.kill_on_drop(true);
        spawn.env("TERM", "xterm-256color");
        let mut child = spawn.spawn()?;
        // The only copies of the terminal's program side left are the program's own.
        drop(spawn);
        let pid = child
            .id()
            .ok_or_else(|| std::io::Error::other("the program exited at once"))?;
        let (status_tx, status_rx) = watch::channel(JobStatus {
            state: JobState::Running,
            exit_code: None,
            signal: None,
            ran_for: None,
        });
        let terminal = Arc::new(Terminal {
            id: id.clone(),
            command: command.to_string(),
            started: Instant::now(),
            primary: pair.primary,
            screen: Mutex::new(Screen::default()),
            output_arrived: Notify::new(),
            group: Mutex::new(GroupGuard::new(pid as i32, lifeline)),
            status: status_rx,
        });
        // The reader holds the terminal weakly, so a session that drops it frees it.
        let reader = Arc::downgrade(&terminal);
        terminal.primary.read_in_thread(move |bytes| {
            if let Some(terminal) = reader.upgrade() {
                terminal.take_output(bytes);
            }
        })?;
        let waiter = Arc::clone(&terminal);
        tokio::spawn(async move {
            let exit = child.wait().await;
            let ran_for = Some(waiter.started.elapsed());
            let status = match exit {
                Ok(status) => exit_status(status, ran_for),
                Err(_) => JobStatus {
                    state: JobState::Exited,
                    exit_code: None,
                    signal: None,
                    ran_for,
                },
            };
            waiter.group.lock().kill();
            let _ = status_tx.send(status);
            waiter.output_arrived.notify_waiters();
        });
        self.terminals.lock().insert(id, Arc::clone(&terminal));
        Ok(terminal)
    }

    /// The terminal with this id.
    pub fn get(&self, id: &str) -> Result<Arc<Terminal>, TerminalError> {
        let terminals = self.terminals.lock();
        terminals
            .get(id)
            .cloned()
            .ok_or_else(|| TerminalError::Unknown {
                id: id.to_string(),
                known: terminals.keys().cloned().collect(),
            })
    }

    /// Every terminal started in the session.
    pub fn list(&self) -> Vec<Arc<Terminal>> {
        self.terminals.lock().values().cloned().collect()
    }

    /// Ends every terminal's program and everything it started, as a session does when it
    /// ends; returns how many were running.
    pub fn end_all(&self) -> usize {
        let terminals = self.terminals.lock();
        let mut ended = 0;
        for terminal in terminals.values() {
            if terminal.status().state == JobState::Running {
                ended += 1;
            }
            terminal.group.lock().kill();
        }
        ended
    }
}

impl Drop for TerminalTable {
    fn drop(&mut self) {
        self.end_all();
    }
}

impl Terminal {
    /// The terminal's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The command it runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The program's current status.
    pub fn status(&self) -> JobStatus {
        let mut status = self.status.borrow().clone();
        if status.state == JobState::Running {
            status.ran_for = Some(self.started.elapsed());
        }
        status
    }

    /// Types `bytes` into the terminal.
    pub async fn send(&self, bytes: &[u8]) -> std::io::Result<()> {
        self.primary.write_all(bytes).await
    }

    /// Waits for the program's answer: until `wait_for` holds of the unread text (when
    /// given), or else until no output came for `settle`; at most until `limit` passes or
    /// the program ends. New text is passed to `progress` as it comes. Returns whether
    /// `wait_for` held.
    pub async fn settle(
        &self,
        settle: Duration,
        limit: Duration,
        wait_for: Option<&regex::Regex>,
        cancel: &tokio_util::sync::CancellationToken,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> bool {
        let started = Instant::now();
        let deadline = started + limit;
        let mut shown = String::new();
        loop {
            let notified = self.output_arrived.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let (matched, last_output) = {
                let screen = self.screen.lock();
                let unread = screen.renderer.peek();
                let matched = wait_for.map(|pattern| pattern.is_match(&unread));
                // Live output: what was added since last shown (text redrawn in place is
                // left to the result).
                if let Some(added) = unread.strip_prefix(shown.as_str()) {
                    if !added.is_empty() {
                        progress(added.to_string());
                    }
                    shown = unread;
                }
                (matched, screen.last_output)
            };
            if matched == Some(true) {
                return true;
            }
            let ended = self.status().state != JobState::Running;
            if ended {
                // What it wrote last may still be in the terminal: a moment to read it.
                tokio::time::sleep(Duration::from_millis(50)).await;
                return matched.unwrap_or(false);
            }
            let quiet_since = last_output.map_or(started, |last| last.max(started));
            let quiet_until = quiet_since + settle;
            let wake = if wait_for.is_some() {
                deadline
            } else {
                quiet_until.min(deadline)
            };
            if Instant::now() >= wake {
                return matched.unwrap_or(false);
            }
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep_until(wake) => {}
                () = cancel.cancelled() => return matched.unwrap_or(false),
            }
        }
    }

    /// Takes what the program wrote since the previous read.
    pub fn read(&self) -> TerminalRead {
        let mut screen = self.screen.lock();
        let mut text = screen.renderer.take();
        let raw_bytes = std::mem::take(&mut screen.raw);
        let dropped = std::mem::take(&mut screen.dropped_raw);
        let mut raw = String::from_utf8_lossy(&raw_bytes).into_owned();
        if dropped > 0 {
            raw.insert_str(0, &format!("[{dropped} earlier bytes not kept]\r\n"));
        }
        let dropped_text = screen.renderer.take_dropped();
        if dropped_text > 0 {
            text.insert_str(
                0,
                &format!("[{dropped_text} bytes of earlier unread output were dropped]\n"),
            );
        }
        drop(screen);
        TerminalRead {
            text,
            raw,
            status: self.status(),
        }
    }

    /// Ends the program and everything it started.
    pub fn kill(&self) {
        self.group.lock().kill();
    }

    fn take_output(&self, bytes: &[u8]) {
        let mut screen = self.screen.lock();
        screen.renderer.push(bytes);
        screen.renderer.bound_pending(MAX_UNREAD_TEXT);
        screen.raw.extend_from_slice(bytes);
        if screen.raw.len() > MAX_UNREAD_RAW {
            let cut = screen.raw.len() - MAX_UNREAD_RAW / 2;
            screen.raw.drain(..cut);
            screen.dropped_raw += cut as u64;
        }
        screen.last_output = Some(Instant::now());
        drop(screen);
        self.output_arrived.notify_waiters();
    }
}

/// The bytes a named key sends, as a terminal in its usual mode sends them: `Enter`, `Tab`,
/// `Escape`, `Backspace`, `Delete`, `Up`, `Down`, `Left`, `Right`, `Home`, `End`, `PageUp`,
/// `PageDown`, `Space`, and `Ctrl-A` to `Ctrl-Z` (`Ctrl-C` interrupts, `Ctrl-D` ends input).
pub fn key_bytes(key: &str) -> Option<Vec<u8>> {
    let fixed: &[u8] = match key.to_ascii_lowercase().as_str() {
        "enter" | "return" => b"\r",
        "tab" => b"\t",
        "escape" | "esc" => b"\x1b",
        "backspace" => b"\x7f",
        "delete" => b"\x1b[3~",
        "up" => b"\x1b[A",
        "down" => b"\x1b[B",
        "right" => b"\x1b[C",
        "left" => b"\x1b[D",
        "home" => b"\x1b[H",
        "end" => b"\x1b[F",
        "pageup" => b"\x1b[5~",
        "pagedown" => b"\x1b[6~",
        "space" => b" ",
        other => {
            let letter = other
                .strip_prefix("ctrl-")
                .or_else(|| other.strip_prefix("ctrl+"))?;
            let mut chars = letter.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return None;
            };
            if !c.is_ascii_lowercase() {
                return None;
            }
            return Some(vec![c as u8 & 0x1f]);
        }
    };
    Some(fixed.to_vec())
}

#[cfg(test)]
mod tests {
    use super::key_bytes;

    #[test]
    fn keys_have_the_bytes_a_terminal_sends() {
        assert_eq!(key_bytes("Enter"), Some(b"\r".to_vec()));
        assert_eq!(key_bytes("Ctrl-C"), Some(vec![3]));
        assert_eq!(key_bytes("ctrl+d"), Some(vec![4]));
        assert_eq!(key_bytes("Up"), Some(b"\x1b[A".to_vec()));
        assert_eq!(key_bytes("Ctrl-1"), None);
        assert_eq!(key_bytes("Hyper"), None);
    }
}
