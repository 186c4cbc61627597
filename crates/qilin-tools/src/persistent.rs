//! Persistent shells: one shell process per session and name, kept between calls so its
//! working directory, environment, functions and options carry over.
//!
//! Each call writes its command to a script file in a private folder of its own, which the
//! sandbox cannot write ([`CallScript`]), and sends the shell one line that runs the script in the shell itself, with stdin closed, then
//! prints an end marker holding a random nonce, the script's exit status and the working
//! directory. The call's output is exactly what came before the marker. A task reads the
//! shell's output as it comes, calls or not, so a process left writing never blocks; output
//! that arrives between calls is handed to the next call as earlier output, apart from its
//! own (the newest 1 MiB of it, the rest counted). While a call reads, nothing is dropped: a
//! flood waits for the call, so its output and its marker always arrive.
//!
//! An interrupt or a timeout ends the command, not the shell: the processes the shell
//! started since the command began get SIGINT (and bash returns from the script, as Ctrl-C
//! stops a command line), then SIGKILL; only when the marker still does not come is the shell
//! itself ended, and the next call starts a fresh one, saying so.

use crate::output_capture::{DEFAULT_OUTPUT_CAP, OutputCapture};
use crate::proc_tree::{ProcessId, ProcessTable, signal_all};
use crate::process_group::GroupGuard;
use crate::shell_kind::{Marker, MarkerScanner, MarkerSeen, ShellKind};
use crate::utf8_chunks::Utf8Chunks;
use nix::sys::signal::Signal;
use parking_lot::Mutex;
use qilin_sandbox::{CommandIo, Sandbox, SandboxMode, SandboxedCommand};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long an interrupted command gets to stop on SIGINT before its processes are killed.
const SIGINT_GRACE: Duration = Duration::from_millis(500);
/// How long an interrupted command gets in all before the shell itself is ended.
const STOP_LIMIT: Duration = Duration::from_millis(1500);
/// How often the processes of an interrupted command are looked for again.
const STOP_ROUND: Duration = Duration::from_millis(100);
/// How long output may keep arriving after the shell exited.
const EXIT_DRAIN: Duration = Duration::from_millis(300);

/// A shell kept for a session under a name.
pub struct PersistentShell {
    kind: ShellKind,
    name: String,
    live: tokio::sync::Mutex<Option<LiveShell>>,
    /// The running shell's process group, reachable without waiting for a call to end.
    group: Mutex<Option<GroupGuard>>,
    /// What a listing shows.
    summary: Mutex<ShellSummary>,
    /// How the last shell ended during a call, told to the call that starts the next.
    ended: Mutex<Option<String>>,
}

/// What a listing shows of a persistent shell.
#[derive(Debug, Clone, Default)]
pub struct ShellSummary {
    /// The last command it was given.
    pub last_command: String,
    /// Whether a shell process is running.
    pub running: bool,
    /// Whether a command is running in it now.
    pub busy: bool,
    /// Calls run in it.
    pub calls: u64,
}

/// Why a call ran in a fresh shell in place of an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetReason {
    /// The call asked for it (`reset: true`).
    Asked,
    /// The earlier shell had ended; the text says how.
    Ended(String),
}

/// How one call in a persistent shell went.
#[derive(Debug)]
pub struct PersistentRun {
    /// The command's output, capped with the spill notice when long.
    pub output: String,
    /// Bytes of output in all.
    pub total_bytes: u64,
    /// The file holding the whole output, when it was cut.
    pub spill_path: Option<String>,
    /// The command's exit status, when its marker came.
    pub exit_code: Option<i32>,
    /// The shell's working directory after the command, when its marker came.
    pub cwd: Option<String>,
    /// The call's timeout ran out.
    pub timed_out: bool,
    /// The call was cancelled.
    pub interrupted: bool,
    /// Why the call ran in a fresh shell in place of an earlier one.
    pub reset: Option<ResetReason>,
    /// The call started the shell process (its first call, or after a reset).
    pub new_shell: bool,
    /// How the shell ended during this call (it ran `exit`, or could not be stopped).
    pub shell_ended: Option<String>,
    /// Output written between the previous call and this one by processes still running in
    /// the shell.
    pub earlier_output: Option<String>,
    /// Wall time of the call.
    pub duration: Duration,
}

/// What a call needs from its context.
pub(crate) struct RunContext<'a> {
    /// The sandbox the shell runs in.
    pub sandbox: &'a Sandbox,
    /// The workspace root, where a new shell starts.
    pub workspace: &'a Path,
    /// Where a long output is spilled.
    pub spill_path: PathBuf,
    /// Where long earlier output is spilled.
    pub earlier_spill_path: PathBuf,
    /// Cancelled when the call is interrupted.
    pub cancel: &'a CancellationToken,
    /// Receives live output.
    pub progress: &'a (dyn Fn(String) + Send + Sync),
}

/// Why a persistent shell could not run a command.
#[derive(Debug, thiserror::Error)]
pub enum PersistentError {
    /// The shell could not be started.
    #[error("the persistent {kind} shell `{name}` could not be started: {source}")]
    Start {
        /// `bash` or `pwsh`.
        kind: &'static str,
        /// The shell's name.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// The command could not be handed to the shell.
    #[error("the command could not be handed to the persistent shell `{name}`: {source}")]
    Send {
        /// The shell's name.
        name: String,
        /// Why.
        source: std::io::Error,
    },
}

/// A running shell process.
struct LiveShell {
    child: Child,
    input: pipe::Sender,
    output: Arc<ShellOutput>,
    /// Whether the shell runs under the sandbox helper (its process is then a grandchild).
    confined: bool,
    /// The shell's own process id, once found.
    shell_pid: Option<i32>,
    /// Output read past the last marker.
    pending: Vec<u8>,
    /// A command whose call ended before its marker came.
    in_flight: Option<InFlight>,
}

struct InFlight {
    marker: Marker,
    before: BTreeSet<ProcessId>,
}

/// How reading a command's output ended.
enum Ending {
    Marker(MarkerSeen),
    Exited(String),
    Stuck,
}

/// How reading a command's output ended, and whether its time limit or an interruption cut
/// it short.
struct Reading {
    ending: Ending,
    timed_out: bool,
    interrupted: bool,
}

/// A call's output: captured for its result, and sent on live as text.
struct CallOutput<'a> {
    capture: OutputCapture,
    live_text: Utf8Chunks,
    progress: &'a (dyn Fn(String) + Send + Sync),
}

impl CallOutput<'_> {
    /// Keeps `bytes` and sends on their text.
    fn take(&mut self, bytes: &[u8]) {
        self.capture.push(bytes);
        let text = self.live_text.push(bytes);
        if !text.is_empty() {
            (self.progress)(text);
        }
    }
}

/// Reads the command's output (from what was read past the last marker on) until its
/// marker comes, the shell exits, `timeout` passes or `cancel` interrupts the call.
async fn read_to_end(
    shell: &mut LiveShell,
    scanner: &mut MarkerScanner,
    output: &mut CallOutput<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Reading {
    let pending = std::mem::take(&mut shell.pending);
    let (chunk, mut seen) = scanner.push(&pending);
    output.take(&chunk);
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let mut interrupted = false;
    let mut buf = vec![0u8; 16 * 1024];
    let ending = loop {
        if let Some(seen) = seen.take() {
            break Ending::Marker(seen);
        }
        tokio::select! {
            read = shell.output.read(&mut buf) => match read {
                Ok(n) if n > 0 => {
                    let (chunk, found) = scanner.push(&buf[..n]);
                    output.take(&chunk);
                    seen = found;
                }
                _ => break shell.exited().await,
            },
            status = shell.child.wait() => {
                break Ending::Exited(exit_description(status));
            }
            () = tokio::time::sleep_until(deadline) => {
                timed_out = true;
                break Ending::Stuck;
            }
            () = cancel.cancelled() => {
                interrupted = true;
                break Ending::Stuck;
            }
        }
    };
    Reading {
        ending,
        timed_out,
        interrupted,
    }
}

impl PersistentShell {
    /// A shell of `kind` named `name`, started on its first call.
    pub fn new(kind: ShellKind, name: &str) -> PersistentShell {
        PersistentShell {
            kind,
            name: name.to_string(),
            live: tokio::sync::Mutex::new(None),
            group: Mutex::new(None),
            summary: Mutex::new(ShellSummary::default()),
            ended: Mutex::new(None),
        }
    }

    /// The shell's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Which shell program it is.
    pub fn kind(&self) -> ShellKind {
        self.kind
    }

    /// What a listing shows of it.
    pub fn summary(&self) -> ShellSummary {
        self.summary.lock().clone()
    }

    /// Ends the shell process and everything it started, at once, even while a call runs;
    /// returns whether one was running.
    pub fn end(&self) -> bool {
        let mut group = self.group.lock();
        let running = group.is_some();
        if let Some(mut group) = group.take() {
            group.kill();
        }
        self.summary.lock().running = false;
        running
    }

    /// Runs `command` in the shell (started first when needed, or afresh with `reset`),
    /// waiting at most `timeout` before interrupting it.
    pub(crate) async fn run(
        &self,
        command: &str,
        timeout: Duration,
        reset: bool,
        cx: RunContext<'_>,
    ) -> Result<PersistentRun, PersistentError> {
        let started = Instant::now();
        let mut live = self.live.lock().await;
        let mut earlier = OutputCapture::new(DEFAULT_OUTPUT_CAP / 4, cx.earlier_spill_path);
        let reset_reason = self.make_ready(&mut live, reset, &mut earlier).await;
        let new_shell = live.is_none();
        let shell = match live.take() {
            Some(shell) => live.insert(shell),
            None => live.insert(self.start(cx.sandbox, cx.workspace)?),
        };
        let _reading = shell.output.reading();
        self.note_call_started(command);
        shell.take_available(&mut earlier);
        let before = shell.children_now();
        let marker = Marker::new();
        let script = match self.send(shell, command, &marker).await {
            Ok(script) => script,
            Err(source) => {
                self.end();
                *live = None;
                self.summary.lock().busy = false;
                return Err(PersistentError::Send {
                    name: self.name.clone(),
                    source,
                });
            }
        };
        shell.in_flight = Some(InFlight {
            marker: marker.clone(),
            before: before.clone(),
        });

        let mut output = CallOutput {
            capture: OutputCapture::new(DEFAULT_OUTPUT_CAP, cx.spill_path),
            live_text: Utf8Chunks::default(),
            progress: cx.progress,
        };
        let mut scanner = MarkerScanner::new(marker.clone());
        let read = read_to_end(shell, &mut scanner, &mut output, timeout, cx.cancel).await;
        let in_flight = InFlight { marker, before };
        let ending = self
            .settle(shell, read.ending, &mut scanner, &in_flight, &mut output)
            .await;
        output.take(scanner.held());
        // The shell read the whole script when it began sourcing it.
        drop(script);
        let (exit_code, cwd, shell_ended) = self.conclude(&mut live, ending);
        self.summary.lock().busy = false;
        let total_bytes = output.capture.total_bytes();
        let captured = output.capture.finish();
        let earlier = earlier.finish().text;
        Ok(PersistentRun {
            output: captured.text,
            total_bytes,
            spill_path: captured.spill_path,
            exit_code,
            cwd,
            timed_out: read.timed_out,
            interrupted: read.interrupted,
            reset: reset_reason,
            new_shell,
            shell_ended,
            earlier_output: (!earlier.is_empty()).then_some(earlier),
            duration: started.elapsed(),
        })
    }

    /// Makes `live` ready for a call: the shell is ended when `reset` asks, when it ended
    /// since the last call, or when an earlier interrupted command (whose output goes to
    /// `earlier`) cannot be stopped, and `live` is then left empty. Says why a new shell
    /// starts, if one does for a reason the call should tell.
    async fn make_ready(
        &self,
        live: &mut Option<LiveShell>,
        reset: bool,
        earlier: &mut OutputCapture,
    ) -> Option<ResetReason> {
        let mut reset_reason = None;
        let ended_before = self.ended.lock().take();
        if reset && (live.is_some() || ended_before.is_some()) {
            reset_reason = Some(ResetReason::Asked);
            self.end();
            *live = None;
        } else if let Some(how) = ended_before {
            reset_reason = Some(ResetReason::Ended(how));
        }
        if let Some(shell) = live.as_mut() {
            // Ended from outside ([`PersistentShell::end`]) since the last call: it is dying or
            // dead, so its end is waited for rather than looked at too early.
            let ended_outside = self.group.lock().is_none();
            let ended = if ended_outside {
                Some(shell.wait_ended().await)
            } else {
                shell.ended()
            };
            if let Some(ended) = ended {
                reset_reason = Some(ResetReason::Ended(ended));
            } else if let Some(in_flight) = shell.in_flight.take() {
                // A call ended before its command did: stop that command now.
                let _reading = shell.output.reading();
                let mut scanner = MarkerScanner::new(in_flight.marker.clone());
                match self
                    .finish_interrupted(shell, &mut scanner, &in_flight, earlier)
                    .await
                {
                    Ending::Marker(seen) => shell.pending = seen.rest,
                    Ending::Exited(how) => reset_reason = Some(ResetReason::Ended(how)),
                    Ending::Stuck => {
                        reset_reason = Some(ResetReason::Ended(
                            "an earlier interrupted command could not be stopped, so the \
                             shell was ended"
                                .into(),
                        ))
                    }
                }
            }
            if reset_reason.is_some() {
                self.end();
                *live = None;
            }
        }
        reset_reason
    }

    /// Notes in the shell's summary that it runs `command`.
    fn note_call_started(&self, command: &str) {
        let mut summary = self.summary.lock();
        summary.last_command = command.to_string();
        summary.running = true;
        summary.busy = true;
        summary.calls += 1;
    }

    /// Writes `command` to its script and sends the shell the line that runs it and then
    /// prints `marker`; the script, kept until the shell has read it.
    async fn send(
        &self,
        shell: &mut LiveShell,
        command: &str,
        marker: &Marker,
    ) -> std::io::Result<CallScript> {
        let script = CallScript::write(&self.kind.script_name(&self.name), command)?;
        let line = self.kind.driver(&script.path(), marker);
        shell.input.write_all(line.as_bytes()).await?;
        Ok(script)
    }

    /// After the reading ended: a command still running is stopped (its further output
    /// kept), and a shell that exited has what it wrote before exiting read, marker included.
    async fn settle(
        &self,
        shell: &mut LiveShell,
        ending: Ending,
        scanner: &mut MarkerScanner,
        in_flight: &InFlight,
        output: &mut CallOutput<'_>,
    ) -> Ending {
        match ending {
            Ending::Stuck => {
                let mut rest = OutputCapture::new(DEFAULT_OUTPUT_CAP, PathBuf::new());
                let ending = self
                    .finish_interrupted(shell, scanner, in_flight, &mut rest)
                    .await;
                output.take(rest.finish().text.as_bytes());
                ending
            }
            Ending::Exited(how) => {
                let drain_until = Instant::now() + EXIT_DRAIN;
                let mut buf = vec![0u8; 16 * 1024];
                while let Ok(Ok(n)) =
                    tokio::time::timeout_at(drain_until, shell.output.read(&mut buf)).await
                {
                    if n == 0 {
                        break;
                    }
                    let (chunk, found) = scanner.push(&buf[..n]);
                    output.take(&chunk);
                    if found.is_some() {
                        break;
                    }
                }
                Ending::Exited(how)
            }
            marker => marker,
        }
    }

    /// What the call's `ending` says: the command's exit status and working directory when
    /// its marker came; otherwise the shell is ended (`live` left empty) and how it ended is
    /// kept for the next call.
    fn conclude(
        &self,
        live: &mut Option<LiveShell>,
        ending: Ending,
    ) -> (Option<i32>, Option<String>, Option<String>) {
        let how = match ending {
            Ending::Marker(seen) => {
                if let Some(shell) = live.as_mut() {
                    shell.in_flight = None;
                    shell.pending = seen.rest;
                }
                return (seen.status, Some(seen.cwd), None);
            }
            Ending::Exited(how) => how,
            Ending::Stuck => "the command did not stop on SIGINT and SIGKILL of its processes, so \
                              the shell was ended"
                .to_string(),
        };
        self.end();
        *live = None;
        *self.ended.lock() = Some(how.clone());
        (None, None, Some(how))
    }

    /// Starts the shell process in `workspace`.
    fn start(&self, sandbox: &Sandbox, workspace: &Path) -> Result<LiveShell, PersistentError> {
        let failed = |source: std::io::Error| PersistentError::Start {
            kind: self.kind.tool_name(),
            name: self.name.clone(),
            source,
        };
        let (reader, writer) = std::io::pipe().map_err(failed)?;
        let SandboxedCommand {
            command,
            lifeline,
            input,
        } = sandbox
            .program(self.kind.persistent(), workspace, CommandIo::Input)
            .map_err(failed)?;
        let input = input.ok_or_else(|| failed(std::io::Error::other("no input pipe")))?;
        let mut command = Command::from(command);
        command
            .stdout(std::process::Stdio::from(
                writer.try_clone().map_err(failed)?,
            ))
            .stderr(std::process::Stdio::from(writer))
            .kill_on_drop(true);
        let child = command.spawn().map_err(failed)?;
        drop(command);
        let pid = child
            .id()
            .ok_or_else(|| failed(std::io::Error::other("the shell exited at once")))?;
        *self.group.lock() = Some(GroupGuard::new(pid as i32, lifeline));
        let confined = sandbox.settings().mode != SandboxMode::Off;
        Ok(LiveShell {
            child,
            input: pipe::Sender::from_owned_fd(input.into()).map_err(failed)?,
            output: ShellOutput::read_from(
                pipe::Receiver::from_owned_fd(reader.into()).map_err(failed)?,
            ),
            confined,
            shell_pid: (!confined).then_some(pid as i32),
            pending: Vec::new(),
            in_flight: None,
        })
    }

    /// Stops an interrupted command: SIGINT to the processes the shell started since it
    /// began (and, for bash, to the shell, whose trap returns from the script), SIGKILL to
    /// them after a grace, reading the output until the marker comes or the limit passes.
    async fn finish_interrupted(
        &self,
        shell: &mut LiveShell,
        scanner: &mut MarkerScanner,
        in_flight: &InFlight,
        sink: &mut OutputCapture,
    ) -> Ending {
        let began = Instant::now();
        let mut buf = vec![0u8; 16 * 1024];
        let mut next_round = began;
        let mut sigint_sent = false;
        loop {
            let now = Instant::now();
            if now >= began + STOP_LIMIT {
                return Ending::Stuck;
            }
            if now >= next_round {
                let table = ProcessTable::read();
                let shell_pid = shell.shell_pid(&table);
                if let Some(shell_pid) = shell_pid {
                    let started = table.started_since(shell_pid, &in_flight.before);
                    let past_grace = now >= began + SIGINT_GRACE;
                    if !sigint_sent || past_grace {
                        let signal = if past_grace {
                            Signal::SIGKILL
                        } else {
                            Signal::SIGINT
                        };
                        // The shell first: its trap returns from the script once the
                        // command it waits for ends, where a command that died first would
                        // let it go on to the next line. Once more after the grace in case
                        // the first came before the script began.
                        let again = past_grace && next_round < began + SIGINT_GRACE + STOP_ROUND;
                        if self.kind == ShellKind::Bash && (!sigint_sent || again) {
                            signal_all(&[shell_pid], Signal::SIGINT);
                        }
                        signal_all(&started, signal);
                        sigint_sent = true;
                    }
                }
                next_round = now + STOP_ROUND;
            }
            tokio::select! {
                read = shell.output.read(&mut buf) => match read {
                    Ok(n) if n > 0 => {
                        let (chunk, found) = scanner.push(&buf[..n]);
                        sink.push(&chunk);
                        if let Some(seen) = found {
                            return Ending::Marker(seen);
                        }
                    }
                    _ => return shell.exited().await,
                },
                status = shell.child.wait() => return Ending::Exited(exit_description(status)),
                () = tokio::time::sleep_until(next_round) => {}
            }
        }
    }
}

impl LiveShell {
    /// How the shell ended, if it has.
    fn ended(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(exit_description(Ok(status))),
            Ok(None) => None,
            Err(err) => Some(format!("its status could not be read: {err}")),
        }
    }

    /// How the shell ended, once it has, after it was killed (given the time an interrupted
    /// command gets).
    async fn wait_ended(&mut self) -> String {
        match tokio::time::timeout(STOP_LIMIT, self.child.wait()).await {
            Ok(status) => exit_description(status),
            Err(_) => "the shell was ended and did not exit".into(),
        }
    }

    /// Waits for the shell to end once its output closed.
    async fn exited(&mut self) -> Ending {
        match tokio::time::timeout(EXIT_DRAIN, self.child.wait()).await {
            Ok(status) => Ending::Exited(exit_description(status)),
            Err(_) => Ending::Exited("its output closed".into()),
        }
    }

    /// The shell's own process id: the child itself, or, under the sandbox helper, the
    /// first process its process 1 started.
    fn shell_pid(&mut self, table: &ProcessTable) -> Option<i32> {
        if self.shell_pid.is_none() && self.confined {
            let helper = self.child.id()? as i32;
            let init = table.children(helper).first()?.pid;
            self.shell_pid = table.children(init).first().map(|shell| shell.pid);
        }
        self.shell_pid
    }

    /// The shell's children now, so a later interrupt ends only what comes after.
    fn children_now(&mut self) -> BTreeSet<ProcessId> {
        let table = ProcessTable::read();
        match self.shell_pid(&table) {
            Some(pid) => table.children(pid).into_iter().collect(),
            None => BTreeSet::new(),
        }
    }

    /// Moves the output waiting in the pipe (and past the last marker) into `sink`.
    fn take_available(&mut self, sink: &mut OutputCapture) {
        let dropped = self.output.take_dropped();
        if dropped > 0 {
            sink.push(
                format!("[{dropped} bytes written while no call was reading were not kept]\n")
                    .as_bytes(),
            );
        }
        sink.push(&std::mem::take(&mut self.pending));
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = self.output.try_read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.push(&buf[..n]);
        }
    }
}

/// Unread output kept at most, in bytes. Between calls older unread output is dropped (and
/// counted) so a process left writing in the shell never blocks on a full pipe; while a call
/// reads, the reading waits for the call instead, so no byte of its output and never its
/// end marker is lost, however fast the output comes.
const MAX_UNREAD_OUTPUT: usize = 1024 * 1024;

/// The shell's stdout and stderr, read as they come by a task of their own into a bounded
/// buffer, whether or not a call is running.
struct ShellOutput {
    state: Mutex<UnreadOutput>,
    arrived: tokio::sync::Notify,
    /// Told when unread output was taken, or a call stopped reading.
    taken: tokio::sync::Notify,
}

#[derive(Default)]
struct UnreadOutput {
    bytes: std::collections::VecDeque<u8>,
    dropped: u64,
    closed: bool,
    /// A call is reading: a full buffer waits for it rather than dropping output.
    call_reading: bool,
}

/// Marks a call as reading a shell's output until dropped.
struct CallReading(Arc<ShellOutput>);

impl Drop for CallReading {
    fn drop(&mut self) {
        self.0.state.lock().call_reading = false;
        self.0.taken.notify_waiters();
    }
}

impl ShellOutput {
    /// Starts reading `pipe` until its end.
    fn read_from(mut pipe: pipe::Receiver) -> Arc<ShellOutput> {
        let output = Arc::new(ShellOutput {
            state: Mutex::new(UnreadOutput::default()),
            arrived: tokio::sync::Notify::new(),
            taken: tokio::sync::Notify::new(),
        });
        let reader = Arc::clone(&output);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                reader.room_for_a_call().await;
                let read = pipe.read(&mut buf).await;
                let mut state = reader.state.lock();
                match read {
                    Ok(n) if n > 0 => {
                        state.bytes.extend(&buf[..n]);
                        let excess = state.bytes.len().saturating_sub(MAX_UNREAD_OUTPUT);
                        if excess > 0 && !state.call_reading {
                            state.bytes.drain(..excess);
                            state.dropped += excess as u64;
                        }
                    }
                    _ => state.closed = true,
                }
                let closed = state.closed;
                drop(state);
                reader.arrived.notify_waiters();
                if closed {
                    break;
                }
            }
        });
        output
    }

    /// Marks a call as reading until the mark is dropped: meanwhile no output is dropped.
    fn reading(self: &Arc<Self>) -> CallReading {
        self.state.lock().call_reading = true;
        CallReading(Arc::clone(self))
    }

    /// Returns once the buffer may take more output: at once between calls, and while a call
    /// reads, once the buffer is below its bound.
    async fn room_for_a_call(&self) {
        loop {
            let taken = self.taken.notified();
            tokio::pin!(taken);
            taken.as_mut().enable();
            {
                let state = self.state.lock();
                if !state.call_reading || state.bytes.len() < MAX_UNREAD_OUTPUT {
                    return;
                }
            }
            taken.await;
        }
    }

    /// Moves unread output into `buf` without waiting: `Ok(0)` at the end of the output,
    /// `WouldBlock` when nothing is unread yet.
    fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut state = self.state.lock();
        if state.bytes.is_empty() {
            return if state.closed {
                Ok(0)
            } else {
                Err(std::io::ErrorKind::WouldBlock.into())
            };
        }
        let n = buf.len().min(state.bytes.len());
        for (slot, byte) in buf.iter_mut().zip(state.bytes.drain(..n)) {
            *slot = byte;
        }
        drop(state);
        self.taken.notify_waiters();
        Ok(n)
    }

    /// Waits for output and moves it into `buf`; `Ok(0)` at the end of the output.
    async fn read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let arrived = self.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            match self.try_read(buf) {
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => arrived.await,
                done => return done,
            }
        }
    }

    /// Bytes dropped unread since the last time this was asked.
    fn take_dropped(&self) -> u64 {
        std::mem::take(&mut self.state.lock().dropped)
    }
}

/// One call's command as a script file the shell sources, in a private folder of its own
/// that Qilin creates for the call (mode 0700, outside every folder the sandbox may write) and
/// removes with it. The file is created exclusively, never through a link, relative to the
/// folder's handle: nothing a command planted, in its temp folder or anywhere else, can make
/// Qilin write the next command somewhere else.
struct CallScript {
    folder: tempfile::TempDir,
    name: String,
}

impl CallScript {
    /// Writes `command` as `name` in a new private folder.
    fn write(name: &str, command: &str) -> std::io::Result<CallScript> {
        use std::io::Write;
        let folder = tempfile::Builder::new()
            .prefix("qilin-shell-call-")
            .tempdir()?;
        let handle = std::fs::File::open(folder.path())?;
        let fd = std::os::fd::AsFd::as_fd(&handle);
        let flags = nix::fcntl::OFlag::O_CREAT
            | nix::fcntl::OFlag::O_EXCL
            | nix::fcntl::OFlag::O_NOFOLLOW
            | nix::fcntl::OFlag::O_WRONLY
            | nix::fcntl::OFlag::O_CLOEXEC;
        let mode = nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR;
        let file = nix::fcntl::openat(fd, name, flags, mode).map_err(std::io::Error::from)?;
        let mut file = std::fs::File::from(file);
        file.write_all(command.as_bytes())?;
        Ok(CallScript {
            folder,
            name: name.to_string(),
        })
    }

    /// Where the shell reads it.
    fn path(&self) -> PathBuf {
        self.folder.path().join(&self.name)
    }
}

/// How the shell's exit reads in a result.
fn exit_description(status: std::io::Result<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("the shell exited with status {code}"),
            (None, Some(signal)) => {
                format!(
                    "the shell was killed by {}",
                    crate::jobs::signal_name(signal)
                )
            }
            _ => "the shell ended".to_string(),
        },
        Err(err) => format!("the shell's status could not be read: {err}"),
    }
}
