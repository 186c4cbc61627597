//! `bash`: run a shell command in the workspace, in the foreground or as a background job.

use crate::jobs::{DRAIN_GRACE, JobReceipt, JobTable, exit_status};
use crate::output_capture::{DEFAULT_OUTPUT_CAP, OutputCapture};
use crate::persistent::{PersistentRun, ResetReason, RunContext};
use crate::process_group::spawn_program;
use crate::shell_kind::ShellKind;
use crate::shells::{DEFAULT_SHELL, ShellTable};
use crate::utf8_chunks::Utf8Chunks;
use crate::workspace_path;
use qilin_protocol::{CallPresentation, ContentBlock, Detail, ErrorCode};
use qilin_sandbox::Sandbox;
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

/// Seconds a foreground command may run when the call does not say.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest timeout a call may ask for, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 600;

/// Run a shell command in the workspace.
///
/// The command runs with `bash -c` in the workspace root, stdin closed; the result is its
/// combined stdout and stderr, exit code and duration. With `persistent: true` (or a `shell`
/// name) it runs in a shell kept for the session, so `cd`, variables and functions carry over
/// to the next call. With `background: true` the command starts as a background job and the
/// call returns at once with the job's id.
#[derive(qilin_tool::Tool)]
#[tool(name = "bash")]
pub struct Bash;

/// Arguments of `bash`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line, run with `bash -c` in the workspace root. May span several lines.
    pub command: String,
    /// Seconds to wait before the whole process group is killed (default 120, at most 600);
    /// in a persistent shell the command is interrupted and the shell kept. Ignored for a
    /// background job.
    #[schemars(range(min = 1, max = 600))]
    pub timeout_secs: Option<u64>,
    /// Start the command as a background job and return at once with its job id; read its
    /// output with `job_output` and stop it with `job_kill`. Default false.
    pub background: Option<bool>,
    /// Run the command in the session's persistent shell, kept between calls: the working
    /// directory, exported variables, functions and shell options of earlier calls carry
    /// over. Default false: a fresh `bash -c` in the workspace root.
    pub persistent: Option<bool>,
    /// The name of the persistent shell to run in (letters, digits, `-`, `_`; implies
    /// `persistent`); calls with the same name share one shell. Default `default`.
    pub shell: Option<String>,
    /// Start the persistent shell afresh (in the workspace root, with the initial
    /// environment) before running the command; implies `persistent`. Default false.
    pub reset: Option<bool>,
}

/// What `bash` returns: a finished command, or the receipt of a started background job.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BashOutput {
    /// The command ran in the foreground and ended (on its own or by its timeout).
    Finished(CommandResult),
    /// The command was started in the background.
    Started(JobReceipt),
    /// The command ran in a persistent shell and its call ended.
    Persistent(ShellResult),
}

/// A command run in a persistent shell.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShellResult {
    /// The shell's name.
    pub shell: String,
    /// The command's combined stdout and stderr; when long, its head and tail with a notice
    /// naming the file that holds all of it.
    pub output: String,
    /// The command's exit status; absent when the command did not finish (a timeout, or the
    /// shell ended).
    pub exit_code: Option<i32>,
    /// The shell's working directory after the command, relative to the workspace when inside
    /// it.
    pub cwd: Option<String>,
    /// True when the timeout ran out and the command was interrupted.
    pub timed_out: bool,
    /// Why the command ran in a fresh shell, when it did (`reset` asked for it, or the earlier
    /// shell had ended).
    pub reset: Option<String>,
    /// True when this call started the shell process: its first call in this session (or
    /// this process, for a resumed session), or after a reset. Nothing of earlier calls is
    /// in it.
    pub new_shell: bool,
    /// How the shell ended during this call (the command ran `exit`, or could not be
    /// stopped); the next call starts a fresh one.
    pub shell_ended: Option<String>,
    /// Output written since the previous call by processes left running in the shell.
    pub earlier_output: Option<String>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Bytes of output the command wrote in all.
    pub total_bytes: u64,
    /// The file holding the whole output, when `output` was cut.
    pub spill_path: Option<String>,
}

/// A foreground command that ended.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CommandResult {
    /// Combined stdout and stderr; when long, its head and tail with a notice naming the file
    /// that holds all of it.
    pub output: String,
    /// The shell's exit code; absent when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it (`SIGKILL` after a timeout), when one did.
    pub signal: Option<String>,
    /// True when the timeout ran out and the process group was killed.
    pub timed_out: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Bytes of output the command wrote in all.
    pub total_bytes: u64,
    /// The file holding the whole output, when `output` was cut.
    pub spill_path: Option<String>,
}

impl Tool for Bash {
    type Args = BashArgs;
    type Output = BashOutput;

    fn prompt_hint(&self) -> &str {
        "Use bash for builds, tests, git and other programs. Each call is a fresh `bash -c` in \
         the workspace root: `cd` and exported variables do not carry over, so chain steps with \
         `&&` — or pass `persistent: true` to run in a shell kept for the session, where the \
         working directory, exports, functions and an activated virtualenv stay for the next \
         persistent call (`shell` names another such shell, `reset: true` starts it afresh; a \
         timeout interrupts the command and keeps the shell). Stdin is closed, so never run interactive commands (pass `-y`, `--no-edit`, \
         `--yes`, or pipe input). A non-zero exit is reported with its output, not as a \
         failure of the tool. Output over about 24 KB is cut to its head and tail and saved \
         whole to a file named at the end; read that file for the middle. Processes left \
         running when the command ends are killed: start servers and watchers with \
         `background: true`, then poll them with `job_output` and stop them with `job_kill`. \
         Commands normally run in a sandbox: they may write only in the workspace and \
         `$TMPDIR` (never in `.git`, `.qilin`, `*.agent` files or the files agent files name, \
         and a `.git` a command creates is moved aside), have no network unless the \
         agent allows it, and see few environment variables; `Permission denied` or \
         `Read-only file system` there comes from the sandbox, so say what you need rather \
         than working around it. Prefer the read, grep, glob, edit and write tools over cat, \
         grep, find, sed and echo redirections."
    }

    fn present(&self, args: &BashArgs) -> CallPresentation {
        let first_line = args.command.lines().next().unwrap_or_default();
        let action = if args.background == Some(true) {
            "Start job"
        } else if is_persistent(args) {
            "Run in shell"
        } else {
            "Run command"
        };
        match args.shell.as_deref() {
            Some(name) if is_persistent(args) => {
                CallPresentation::new(action, format!("[{name}] {first_line}"))
            }
            _ => CallPresentation::new(action, first_line),
        }
    }

    fn before_detail(&self, args: &BashArgs) -> Option<Detail> {
        Some(Detail::Code {
            language: "bash".into(),
            code: args.command.clone(),
        })
    }

    fn detail(&self, args: &BashArgs, result: &ToolResult<BashOutput>) -> Option<Detail> {
        output_detail(&args.command, result)
    }

    async fn call(&self, args: BashArgs, cx: &ToolContext) -> ToolResult<BashOutput> {
        if is_persistent(&args) {
            return run_persistent(ShellKind::Bash, &args, cx)
                .await
                .map(BashOutput::Persistent);
        }
        if args.command.trim().is_empty() {
            return Err(ToolError::invalid_arguments(
                "`command` is empty; give the shell command to run, e.g. `cargo test`",
            ));
        }
        let root = workspace_path::root(cx.workspace())?;
        if args.background == Some(true) {
            let jobs = cx.service::<JobTable>().ok_or_else(|| {
                ToolError::failed(
                    "background jobs are not available in this runtime (it has no job table); \
                     run the command in the foreground with a timeout instead",
                )
            })?;
            let sandbox = sandbox(cx)?;
            crate::git_guard::before_command(cx, &root.absolute).await;
            let receipt = jobs
                .start(
                    &args.command,
                    &root.absolute,
                    &root.relative,
                    cx.session().data_dir(),
                    &sandbox,
                )
                .map_err(|err| ToolError::failed(err.to_string()))?;
            return Ok(BashOutput::Started(receipt));
        }
        run_foreground(
            ShellKind::Bash,
            &args.command,
            call_timeout(args.timeout_secs)?,
            cx,
        )
        .await
        .map(BashOutput::Finished)
    }

    fn content(&self, output: &BashOutput) -> Vec<ContentBlock> {
        vec![ContentBlock::text(output_text(output))]
    }
}

enum Ending {
    Exited(std::io::Result<std::process::ExitStatus>),
    TimedOut,
    Cancelled,
}

/// The session's sandbox; a runtime that set up none gets a clear refusal, never an
/// unconfined shell.
fn sandbox(cx: &ToolContext) -> ToolResult<Arc<Sandbox>> {
    cx.service::<Sandbox>().ok_or_else(|| {
        ToolError::failed(
            "bash is not available in this runtime: it set up no sandbox for commands (the \
             host must give the session a `qilin_sandbox::Sandbox`, in `off` mode to run \
             commands unconfined)",
        )
    })
}

/// A call's `timeout_secs`, checked, or the default.
pub(crate) fn call_timeout(timeout_secs: Option<u64>) -> ToolResult<Duration> {
    let timeout_secs = timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if !(1..=MAX_TIMEOUT_SECS).contains(&timeout_secs) {
        return Err(ToolError::invalid_arguments(format!(
            "`timeout_secs` is {timeout_secs}; it must be between 1 and {MAX_TIMEOUT_SECS}"
        )));
    }
    Ok(Duration::from_secs(timeout_secs))
}

/// Runs `command` once with the shell of `kind`, in the workspace root, in the session's
/// sandbox.
pub(crate) async fn run_foreground(
    kind: ShellKind,
    command: &str,
    timeout: Duration,
    cx: &ToolContext,
) -> ToolResult<CommandResult> {
    let tool = kind.tool_name();
    let run = CommandRun {
        kind,
        command,
        timeout,
        output_cap: DEFAULT_OUTPUT_CAP,
        spill_path: cx.spill_path(tool),
        keep_bytes: 0,
        live: true,
    };
    match run_command(run, cx).await {
        Ok(ran) => Ok(ran.result),
        Err(CommandFailure::Unavailable(error)) => Err(error),
        Err(CommandFailure::NotStarted(err)) => Err(ToolError::failed(format!(
            "`{tool}` could not be started: {err}; is {tool} installed?"
        ))),
        Err(CommandFailure::Status(err)) => Err(ToolError::failed(format!(
            "the command's exit status could not be read: {err}"
        ))),
        Err(CommandFailure::Interrupted(output)) => Err(ToolError::new(
            ErrorCode::Interrupted,
            format!(
                "The command was interrupted and its process group killed. Output so far:\n{output}"
            ),
        )),
    }
}

/// One command for [`run_command`] to run: what, for how long, and how its output is kept.
#[derive(Debug, Clone)]
pub struct CommandRun<'a> {
    /// The shell that runs it (`bash -c`, or PowerShell).
    pub kind: ShellKind,
    /// The command line.
    pub command: &'a str,
    /// How long it may run before its process group is killed.
    pub timeout: Duration,
    /// The most bytes of output in [`CommandResult::output`] (head and tail).
    pub output_cap: usize,
    /// Where the whole output is saved when it is longer than `output_cap`.
    pub spill_path: std::path::PathBuf,
    /// How many bytes from the start of the output to keep whole in [`CommandOutcome::kept`], for a
    /// caller that reads the output itself (0 for none).
    pub keep_bytes: usize,
    /// Whether the output is reported live as the call's progress.
    pub live: bool,
}

/// A command [`run_command`] ran to its end or its timeout.
#[derive(Debug, Clone)]
pub struct CommandOutcome {
    /// Its result, as `bash` returns it.
    pub result: CommandResult,
    /// The first [`CommandRun::keep_bytes`] bytes of its output, whole.
    pub kept: Vec<u8>,
}

/// Why [`run_command`] has no result.
#[derive(Debug)]
pub enum CommandFailure {
    /// No command can run: the session has no sandbox, or its workspace cannot be opened
    /// (the error says which).
    Unavailable(ToolError),
    /// The shell could not be started.
    NotStarted(std::io::Error),
    /// The shell's exit status could not be read.
    Status(std::io::Error),
    /// The call was cancelled; the process group was killed. Holds the output so far.
    Interrupted(String),
}

/// Runs one command in the workspace root, in the session's sandbox, in its own process group,
/// as `bash` does in the foreground: the group is killed at the timeout or when the call is
/// cancelled, a `.git` the command creates is moved aside, and the output is capped and
/// spilled. For tools that run commands of their own (checks).
pub async fn run_command(
    run: CommandRun<'_>,
    cx: &ToolContext,
) -> Result<CommandOutcome, CommandFailure> {
    let started = Instant::now();
    let sandbox = sandbox(cx).map_err(CommandFailure::Unavailable)?;
    let sandbox = sandbox.as_ref();
    let root = workspace_path::root(cx.workspace())
        .map_err(|err| CommandFailure::Unavailable(err.into()))?;
    crate::git_guard::before_command(cx, &root.absolute).await;
    let mut process = spawn_program(run.kind.one_off(run.command), &root.absolute, sandbox)
        .map_err(CommandFailure::NotStarted)?;
    let mut capture = OutputCapture::new(run.output_cap, run.spill_path.clone());
    let mut kept = Vec::new();
    let mut live = Utf8Chunks::default();
    // Every byte read is kept and shown live, also what is read after the command exited.
    let mut take = |bytes: &[u8], capture: &mut OutputCapture| {
        capture.push(bytes);
        let room = run.keep_bytes.saturating_sub(kept.len());
        kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        if run.live {
            let text = live.push(bytes);
            if !text.is_empty() {
                cx.progress(text);
            }
        }
    };
    let mut buf = vec![0u8; 16 * 1024];
    let mut open = true;
    let deadline = tokio::time::sleep(run.timeout);
    tokio::pin!(deadline);
    let ending = loop {
        tokio::select! {
            read = process.output.read(&mut buf), if open => match read {
                Ok(0) | Err(_) => open = false,
                Ok(n) => take(&buf[..n], &mut capture),
            },
            exit = process.child.wait() => break Ending::Exited(exit),
            () = &mut deadline => break Ending::TimedOut,
            () = cx.cancellation().cancelled() => break Ending::Cancelled,
        }
    };
    if !matches!(ending, Ending::Exited(_)) {
        process.group.kill();
    }
    let drain_until = Instant::now() + DRAIN_GRACE;
    while open {
        match tokio::time::timeout_at(drain_until, process.output.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => take(&buf[..n], &mut capture),
            _ => open = false,
        }
    }
    process.group.kill();
    let quarantined = crate::git_guard::after_command(cx, &root.absolute).await;
    let duration_ms = started.elapsed().as_millis() as u64;
    let (exit_code, signal, timed_out) = match ending {
        Ending::Exited(Ok(status)) => {
            let status = exit_status(status, None);
            (status.exit_code, status.signal, false)
        }
        Ending::Exited(Err(err)) => return Err(CommandFailure::Status(err)),
        Ending::TimedOut => {
            let _ = process.child.wait().await;
            (None, Some("SIGKILL".to_string()), true)
        }
        Ending::Cancelled => {
            let output = capture.finish();
            return Err(CommandFailure::Interrupted(
                output.text + &quarantined.unwrap_or_default(),
            ));
        }
    };
    let total_bytes = capture.total_bytes();
    let captured = capture.finish();
    Ok(CommandOutcome {
        result: CommandResult {
            output: captured.text + &quarantined.unwrap_or_default(),
            exit_code,
            signal,
            timed_out,
            duration_ms,
            total_bytes,
            spill_path: captured.spill_path,
        },
        kept,
    })
}

/// Whether a call runs in a persistent shell.
pub(crate) fn is_persistent(args: &BashArgs) -> bool {
    args.persistent == Some(true) || args.shell.is_some() || args.reset == Some(true)
}

/// Runs a call in the session's persistent shell of `kind`.
pub(crate) async fn run_persistent(
    kind: ShellKind,
    args: &BashArgs,
    cx: &ToolContext,
) -> ToolResult<ShellResult> {
    let tool = kind.tool_name();
    if args.background == Some(true) {
        return Err(ToolError::invalid_arguments(
            "`background` and a persistent shell (`persistent`, `shell`, `reset`) exclude each \
             other; start a background job in a fresh shell, or run the command in the \
             persistent shell with `&` and read its output on later calls",
        ));
    }
    if args.persistent == Some(false) {
        return Err(ToolError::invalid_arguments(
            "`persistent` is false but `shell` or `reset` names a persistent shell; drop one",
        ));
    }
    let reset = args.reset == Some(true);
    if args.command.trim().is_empty() && !reset {
        return Err(ToolError::invalid_arguments(
            "`command` is empty; give the shell command to run, e.g. `cargo test` (an empty \
             command is allowed only with `reset: true`)",
        ));
    }
    let timeout = call_timeout(args.timeout_secs)?;
    let shells = cx.service::<ShellTable>().ok_or_else(|| {
        ToolError::failed(format!(
            "persistent shells are not available in this runtime (it has no shell table); run \
             `{tool}` without `persistent`, chaining steps with `&&`"
        ))
    })?;
    let name = args.shell.as_deref().unwrap_or(DEFAULT_SHELL);
    let shell = shells
        .shell(kind, name)
        .map_err(|err| ToolError::invalid_arguments(err.to_string()))?;
    let sandbox = sandbox(cx)?;
    let root = workspace_path::root(cx.workspace())?;
    let progress = |text: String| cx.progress(text);
    crate::git_guard::before_command(cx, &root.absolute).await;
    let command = if args.command.trim().is_empty() {
        ":"
    } else {
        args.command.as_str()
    };
    let run = shell
        .run(
            command,
            timeout,
            reset,
            RunContext {
                sandbox: &sandbox,
                workspace: &root.absolute,
                spill_path: cx.spill_path(tool),
                earlier_spill_path: cx.spill_path(&format!("{tool}-earlier")),
                cancel: cx.cancellation(),
                progress: &progress,
            },
        )
        .await
        .map_err(|err| ToolError::failed(err.to_string()))?;
    let mut result = shell_result(name, run, &root.absolute);
    if let Some(note) = crate::git_guard::after_command(cx, &root.absolute).await {
        result.shell.output.push_str(&note);
    }
    if result.interrupted {
        return Err(ToolError::new(
            ErrorCode::Interrupted,
            format!(
                "The command was interrupted{}. Output so far:\n{}",
                match &result.shell.shell_ended {
                    Some(how) => format!(" and the shell `{name}` ended ({how})"),
                    None => format!("; the shell `{name}` is kept"),
                },
                result.shell.output
            ),
        ));
    }
    Ok(result.shell)
}

struct Ran {
    shell: ShellResult,
    interrupted: bool,
}

fn shell_result(name: &str, run: PersistentRun, root: &std::path::Path) -> Ran {
    let cwd = run
        .cwd
        .map(|cwd| match std::path::Path::new(&cwd).strip_prefix(root) {
            Ok(inside) if inside.as_os_str().is_empty() => ".".to_string(),
            Ok(inside) => inside.to_string_lossy().into_owned(),
            Err(_) => cwd,
        });
    let reset = run.reset.map(|reason| match reason {
        ResetReason::Asked => "the call asked for a fresh shell".to_string(),
        ResetReason::Ended(how) => format!("the earlier shell had ended: {how}"),
    });
    Ran {
        interrupted: run.interrupted,
        shell: ShellResult {
            shell: name.to_string(),
            output: run.output,
            exit_code: run.exit_code,
            cwd,
            timed_out: run.timed_out,
            reset,
            new_shell: run.new_shell,
            shell_ended: run.shell_ended,
            earlier_output: run.earlier_output,
            duration_ms: run.duration.as_millis() as u64,
            total_bytes: run.total_bytes,
            spill_path: run.spill_path,
        },
    }
}

/// What the model reads of a persistent shell's call.
pub(crate) fn persistent_text(done: &ShellResult) -> String {
    let name = &done.shell;
    let mut text = String::new();
    if let Some(reason) = &done.reset {
        text.push_str(&format!(
            "[shell `{name}` was started afresh ({reason}): the working directory, variables \
             and functions of earlier calls are gone]\n"
        ));
    }
    if let Some(earlier) = &done.earlier_output {
        text.push_str(&format!(
            "[output written since the previous call by processes still running in shell \
             `{name}`:]\n{earlier}"
        ));
        if !earlier.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[this command's output:]\n");
    }
    if done.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&done.output);
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let seconds = done.duration_ms as f64 / 1000.0;
    let cwd = done
        .cwd
        .as_deref()
        .map(|cwd| format!(", cwd {cwd}"))
        .unwrap_or_default();
    // A shell started by this call holds nothing of earlier calls: say so.
    let shell = if done.new_shell {
        format!("new shell `{name}`")
    } else {
        format!("shell `{name}`")
    };
    let ending = match (&done.exit_code, &done.shell_ended) {
        (_, Some(how)) => format!(
            "[shell `{name}` ended after {seconds:.1} s ({how}); the next persistent call starts \
             a fresh one]"
        ),
        _ if done.timed_out => format!(
            "[timed out after {seconds:.1} s; the command was interrupted, shell `{name}` is \
             kept{cwd}]"
        ),
        (Some(code), None) => format!("[exit code {code}, {seconds:.1} s, {shell}{cwd}]"),
        (None, None) => format!("[ended, {seconds:.1} s, {shell}{cwd}]"),
    };
    text.push_str(&ending);
    text
}

/// What the model reads of a shell call's output.
pub(crate) fn output_text(output: &BashOutput) -> String {
    match output {
        BashOutput::Finished(done) => {
            let mut text = done.output.clone();
            if text.is_empty() {
                text.push_str("(no output)");
            }
            if !text.ends_with('\n') {
                text.push('\n');
            }
            let seconds = done.duration_ms as f64 / 1000.0;
            let ending = match (&done.exit_code, &done.signal) {
                _ if done.timed_out => {
                    format!("[timed out after {seconds:.1} s; the process group was killed]")
                }
                (Some(code), _) => format!("[exit code {code}, {seconds:.1} s]"),
                (None, Some(signal)) => format!("[killed by {signal}, {seconds:.1} s]"),
                (None, None) => format!("[ended, {seconds:.1} s]"),
            };
            text.push_str(&ending);
            text
        }
        BashOutput::Persistent(done) => persistent_text(done),
        BashOutput::Started(receipt) => format!(
            "Started background job {} (pid {}) in {}: {}\nIts output is logged to {}. \
             Read it with job_output {{\"job_id\": \"{}\"}}; stop it with job_kill.",
            receipt.job_id,
            receipt.pid,
            receipt.cwd,
            receipt.command,
            receipt.log_path,
            receipt.job_id
        ),
    }
}

/// The detail of a shell call's result.
pub(crate) fn output_detail(command: &str, result: &ToolResult<BashOutput>) -> Option<Detail> {
    match result {
        Ok(BashOutput::Finished(done)) => Some(Detail::Shell {
            command: command.to_string(),
            output: done.output.clone(),
            exit_code: done.exit_code,
        }),
        Ok(BashOutput::Started(receipt)) => Some(Detail::Text {
            text: format!("started {} (pid {})", receipt.job_id, receipt.pid),
        }),
        // A reset or a partial output does not describe one process's exit: plain text.
        Ok(BashOutput::Persistent(done)) => Some(Detail::Text {
            text: persistent_text(done),
        }),
        Err(error) => Some(Detail::Text {
            text: error.message.clone(),
        }),
    }
}
