//! `terminal_start`, `terminal_send` and `terminal_kill`: drive interactive programs (a REPL,
//! a debugger, a prompt that asks a question) in a terminal kept for the session; and
//! `terminal_list`, which lists them with the session's persistent shells.

use crate::jobs::{JobState, JobStatus};
use crate::output_capture::{DEFAULT_OUTPUT_CAP, OutputCapture};
use crate::shells::ShellTable;
use crate::terminals::{Terminal, TerminalRead, TerminalTable, key_bytes};
use crate::workspace_path;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_sandbox::Sandbox;
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// Milliseconds of quiet that end a wait for output when the call does not say.
pub const DEFAULT_SETTLE_MS: u64 = 300;
/// The longest quiet a call may ask for, in milliseconds.
pub const MAX_SETTLE_MS: u64 = 10_000;
/// Seconds a call waits for output at most when it does not say.
pub const DEFAULT_WAIT_SECS: u64 = 10;
/// The longest a call may wait for output, in seconds.
pub const MAX_WAIT_SECS: u64 = 600;

/// Start an interactive program in a terminal.
///
/// The command runs with `bash -c` in the workspace root, in a terminal (40 rows, 120
/// columns) kept for the session, inside the session's sandbox. The call returns the
/// terminal's id and what the program printed once it went quiet; type into it with
/// `terminal_send`, end it with `terminal_kill`.
#[derive(qilin_tool::Tool)]
#[tool(name = "terminal_start")]
pub struct TerminalStart;

/// Arguments of `terminal_start`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalStartArgs {
    /// The command line to run in the terminal (e.g. `python3`, `psql mydb`, `gdb ./app`).
    pub command: String,
    /// A regular expression (Rust syntax) to wait for in the output, e.g. `>>> $` for a
    /// Python prompt; without it, the call returns once the output has been quiet for
    /// `settle_ms`.
    pub wait_for: Option<String>,
    /// Milliseconds without output after which the program is taken to be waiting (default
    /// 300, at most 10000).
    #[schemars(range(max = 10000))]
    pub settle_ms: Option<u64>,
    /// Seconds to wait for output at most (default 10, at most 600); the program keeps
    /// running after.
    #[schemars(range(min = 1, max = 600))]
    pub timeout_secs: Option<u64>,
}

/// Type text and keys into a terminal, and read what the program printed.
///
/// Writes `text`, then each of `keys`, to a terminal `terminal_start` opened, and returns
/// the output written since the previous look once the program went quiet (or `wait_for`
/// appeared). With neither `text` nor `keys` it only reads.
#[derive(qilin_tool::Tool)]
#[tool(name = "terminal_send")]
pub struct TerminalSend;

/// Arguments of `terminal_send`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalSendArgs {
    /// The terminal's id, as `terminal_start` returned it (e.g. `term-1`).
    pub terminal_id: String,
    /// Text to type, as is (end a line with the `Enter` key, or with `\r`).
    pub text: Option<String>,
    /// Keys to press after the text, in order: `Enter`, `Tab`, `Escape`, `Backspace`,
    /// `Delete`, `Up`, `Down`, `Left`, `Right`, `Home`, `End`, `PageUp`, `PageDown`,
    /// `Space`, or `Ctrl-A` to `Ctrl-Z` (`Ctrl-C` interrupts the program, `Ctrl-D` ends its
    /// input).
    pub keys: Option<Vec<String>>,
    /// A regular expression (Rust syntax) to wait for in the new output, e.g. `>>> $`;
    /// without it, the call returns once the output has been quiet for `settle_ms`.
    pub wait_for: Option<String>,
    /// Milliseconds without output after which the program is taken to be waiting (default
    /// 300, at most 10000).
    #[schemars(range(max = 10000))]
    pub settle_ms: Option<u64>,
    /// Seconds to wait for output at most (default 10, at most 600).
    #[schemars(range(min = 1, max = 600))]
    pub timeout_secs: Option<u64>,
}

/// End the program in a terminal.
///
/// Kills the program of a terminal `terminal_start` opened, and everything it started;
/// returns its last output and final status.
#[derive(qilin_tool::Tool)]
#[tool(name = "terminal_kill")]
pub struct TerminalKill;

/// Arguments of `terminal_kill`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalKillArgs {
    /// The terminal's id, as `terminal_start` returned it (e.g. `term-1`).
    pub terminal_id: String,
}

/// A terminal's new output and its program's status.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TerminalReport {
    /// The terminal's id.
    pub terminal_id: String,
    /// The command it runs.
    pub command: String,
    /// `running`, `exited` or `killed`.
    pub state: JobState,
    /// The exit code, once the program exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<String>,
    /// The text written since the previous look, escape sequences removed and each line as
    /// it ended up, the line being written (a prompt) last; when long, its head and tail with
    /// a notice naming the file that holds all of it.
    pub output: String,
    /// Whether `wait_for` appeared, when the call gave one.
    pub matched: Option<bool>,
    /// The same output as the program wrote it, escape sequences kept (its tail when long),
    /// for a client that draws a terminal; read `output` instead.
    pub raw: String,
}

fn terminal_table(cx: &ToolContext) -> ToolResult<Arc<TerminalTable>> {
    cx.service::<TerminalTable>().ok_or_else(|| {
        ToolError::failed(
            "terminals are not available in this runtime (it has no terminal table); run the \
             program non-interactively with bash instead",
        )
    })
}

fn find_terminal(cx: &ToolContext, id: &str) -> ToolResult<Arc<Terminal>> {
    terminal_table(cx)?
        .get(id)
        .map_err(|err| ToolError::invalid_arguments(err.to_string()))
}

/// The wait a call asked for, checked.
struct Wait {
    settle: Duration,
    limit: Duration,
    pattern: Option<regex::Regex>,
}

fn wait(
    wait_for: Option<&str>,
    settle_ms: Option<u64>,
    timeout_secs: Option<u64>,
) -> ToolResult<Wait> {
    let settle_ms = settle_ms.unwrap_or(DEFAULT_SETTLE_MS);
    if settle_ms > MAX_SETTLE_MS {
        return Err(ToolError::invalid_arguments(format!(
            "`settle_ms` is {settle_ms}; it must be at most {MAX_SETTLE_MS}"
        )));
    }
    let timeout_secs = timeout_secs.unwrap_or(DEFAULT_WAIT_SECS);
    if !(1..=MAX_WAIT_SECS).contains(&timeout_secs) {
        return Err(ToolError::invalid_arguments(format!(
            "`timeout_secs` is {timeout_secs}; it must be between 1 and {MAX_WAIT_SECS}"
        )));
    }
    let pattern = wait_for
        .map(|pattern| {
            regex::RegexBuilder::new(pattern)
                .multi_line(true)
                .build()
                .map_err(|err| {
                    ToolError::invalid_arguments(format!(
                        "`wait_for` is not a valid regular expression: {err}"
                    ))
                })
        })
        .transpose()?;
    Ok(Wait {
        settle: Duration::from_millis(settle_ms),
        limit: Duration::from_secs(timeout_secs),
        pattern,
    })
}

/// Waits as asked, then reads the terminal into a report.
async fn settle_and_report(terminal: &Terminal, wait: &Wait, cx: &ToolContext) -> TerminalReport {
    let progress = |text: String| cx.progress(text);
    let matched = terminal
        .settle(
            wait.settle,
            wait.limit,
            wait.pattern.as_ref(),
            cx.cancellation(),
            &progress,
        )
        .await;
    let matched = wait.pattern.as_ref().map(|_| matched);
    report(terminal, terminal.read(), matched, cx)
}

fn report(
    terminal: &Terminal,
    read: TerminalRead,
    matched: Option<bool>,
    cx: &ToolContext,
) -> TerminalReport {
    let mut capture = OutputCapture::new(DEFAULT_OUTPUT_CAP, cx.spill_path(terminal.id()));
    capture.push(read.text.as_bytes());
    let JobStatus {
        state,
        exit_code,
        signal,
        ..
    } = read.status;
    TerminalReport {
        terminal_id: terminal.id().to_string(),
        command: terminal.command().to_string(),
        state,
        exit_code,
        signal,
        output: capture.finish().text,
        matched,
        raw: read.raw,
    }
}

fn report_content(report: &TerminalReport) -> Vec<ContentBlock> {
    let state = match (report.state, report.exit_code, &report.signal) {
        (JobState::Running, _, _) => "running".to_string(),
        (_, Some(code), _) => format!("exited with code {code}"),
        (_, None, Some(signal)) => format!("killed by {signal}"),
        _ => "ended".to_string(),
    };
    let output = if report.output.is_empty() {
        "(no new output)".to_string()
    } else {
        report.output.clone()
    };
    let mut text = format!(
        "{} ({}): {state}\n{output}",
        report.terminal_id, report.command
    );
    if report.matched == Some(false) {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[`wait_for` did not appear before the wait ended]");
    }
    vec![ContentBlock::text(text)]
}

fn report_detail(command: &str, result: &ToolResult<TerminalReport>) -> Option<Detail> {
    match result {
        // A program still running has no exit to show: its text alone.
        Ok(report) if report.state == JobState::Running => Some(Detail::Text {
            text: report.output.clone(),
        }),
        Ok(report) => Some(Detail::Shell {
            command: command.to_string(),
            output: report.output.clone(),
            exit_code: report.exit_code,
        }),
        Err(error) => Some(Detail::Text {
            text: error.message.clone(),
        }),
    }
}

/// `text` and `keys` as one line a person reads: `print(1)` ⏎, `Ctrl-C`.
fn describe_input(args: &TerminalSendArgs) -> String {
    let mut parts = Vec::new();
    if let Some(text) = &args.text {
        parts.push(format!("{text:?}"));
    }
    for key in args.keys.iter().flatten() {
        parts.push(key.clone());
    }
    if parts.is_empty() {
        "(read only)".to_string()
    } else {
        parts.join(" ")
    }
}

impl Tool for TerminalStart {
    type Args = TerminalStartArgs;
    type Output = TerminalReport;

    fn prompt_hint(&self) -> &str {
        "Use terminal_start only for programs that need a person at the keyboard: a REPL, a \
         debugger, a database shell, a command that asks questions. Everything else belongs \
         in bash. Pass `wait_for` with the program's prompt (e.g. `>>> $`) so the call returns \
         as soon as it is ready. The terminal stays open between calls and runs in the same \
         sandbox as bash; end it with terminal_kill when done."
    }

    fn present(&self, args: &TerminalStartArgs) -> CallPresentation {
        CallPresentation::new(
            "Open terminal",
            args.command.lines().next().unwrap_or_default(),
        )
    }

    fn before_detail(&self, args: &TerminalStartArgs) -> Option<Detail> {
        Some(Detail::Code {
            language: "bash".into(),
            code: args.command.clone(),
        })
    }

    fn detail(
        &self,
        args: &TerminalStartArgs,
        result: &ToolResult<TerminalReport>,
    ) -> Option<Detail> {
        report_detail(&args.command, result)
    }

    async fn call(&self, args: TerminalStartArgs, cx: &ToolContext) -> ToolResult<TerminalReport> {
        if args.command.trim().is_empty() {
            return Err(ToolError::invalid_arguments(
                "`command` is empty; give the program to start, e.g. `python3`",
            ));
        }
        let wait = wait(args.wait_for.as_deref(), args.settle_ms, args.timeout_secs)?;
        let terminals = terminal_table(cx)?;
        let sandbox = cx.service::<Sandbox>().ok_or_else(|| {
            ToolError::failed(
                "terminals are not available in this runtime: it set up no sandbox for \
                 commands",
            )
        })?;
        let root = workspace_path::root(cx.workspace())?;
        crate::git_guard::before_command(cx, &root.absolute).await;
        let terminal = terminals
            .start(&args.command, &root.absolute, &sandbox)
            .map_err(|err| ToolError::failed(err.to_string()))?;
        Ok(settle_and_report(&terminal, &wait, cx).await)
    }

    fn content(&self, output: &TerminalReport) -> Vec<ContentBlock> {
        report_content(output)
    }
}

impl Tool for TerminalSend {
    type Args = TerminalSendArgs;
    type Output = TerminalReport;

    fn prompt_hint(&self) -> &str {
        "Use terminal_send to type into a terminal terminal_start opened: `text` is typed as \
         is, then `keys` are pressed (`Enter` to submit a line, `Ctrl-C` to interrupt, arrows, \
         `Tab`). It returns only the output written since the previous look; send nothing to \
         just read. Pass `wait_for` with the prompt you expect back."
    }

    fn present(&self, args: &TerminalSendArgs) -> CallPresentation {
        CallPresentation::new(
            "Type in terminal",
            format!("{}: {}", args.terminal_id, describe_input(args)),
        )
    }

    fn before_detail(&self, args: &TerminalSendArgs) -> Option<Detail> {
        Some(Detail::Text {
            text: describe_input(args),
        })
    }

    fn detail(
        &self,
        args: &TerminalSendArgs,
        result: &ToolResult<TerminalReport>,
    ) -> Option<Detail> {
        report_detail(&describe_input(args), result)
    }

    async fn call(&self, args: TerminalSendArgs, cx: &ToolContext) -> ToolResult<TerminalReport> {
        let mut input = args.text.clone().unwrap_or_default().into_bytes();
        for key in args.keys.iter().flatten() {
            let bytes = key_bytes(key).ok_or_else(|| {
                ToolError::invalid_arguments(format!(
                    "`{key}` is not a key; use Enter, Tab, Escape, Backspace, Delete, Up, \
                     Down, Left, Right, Home, End, PageUp, PageDown, Space, or Ctrl-A to Ctrl-Z"
                ))
            })?;
            input.extend(bytes);
        }
        let wait = wait(args.wait_for.as_deref(), args.settle_ms, args.timeout_secs)?;
        let terminal = find_terminal(cx, &args.terminal_id)?;
        if !input.is_empty() {
            if terminal.status().state != JobState::Running {
                let read = terminal.read();
                let ended = report(&terminal, read, None, cx);
                return Err(ToolError::failed(format!(
                    "the program in {} has ended, so nothing was typed; its last output:\n{}",
                    ended.terminal_id, ended.output
                )));
            }
            terminal.send(&input).await.map_err(|err| {
                ToolError::failed(format!(
                    "the input could not be typed into {}: {err}",
                    terminal.id()
                ))
            })?;
        }
        Ok(settle_and_report(&terminal, &wait, cx).await)
    }

    fn content(&self, output: &TerminalReport) -> Vec<ContentBlock> {
        report_content(output)
    }
}

impl Tool for TerminalKill {
    type Args = TerminalKillArgs;
    type Output = TerminalReport;

    fn prompt_hint(&self) -> &str {
        "Use terminal_kill to end a terminal's program once you are done with it. Ending one \
         that already exited is harmless and reports how it ended."
    }

    fn present(&self, args: &TerminalKillArgs) -> CallPresentation {
        CallPresentation::new("Close terminal", &args.terminal_id)
    }

    fn before_detail(&self, _args: &TerminalKillArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        args: &TerminalKillArgs,
        result: &ToolResult<TerminalReport>,
    ) -> Option<Detail> {
        report_detail(&args.terminal_id, result)
    }

    async fn call(&self, args: TerminalKillArgs, cx: &ToolContext) -> ToolResult<TerminalReport> {
        let terminal = find_terminal(cx, &args.terminal_id)?;
        terminal.kill();
        let wait = Wait {
            settle: Duration::from_millis(50),
            limit: Duration::from_secs(3),
            pattern: None,
        };
        let mut report = settle_and_report(&terminal, &wait, cx).await;
        // The status arrives once the process is reaped, a moment after the kill.
        for _ in 0..60 {
            if report.state != JobState::Running {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            let status = terminal.status();
            report.state = status.state;
            report.exit_code = status.exit_code;
            report.signal = status.signal;
        }
        Ok(report)
    }

    fn content(&self, output: &TerminalReport) -> Vec<ContentBlock> {
        report_content(output)
    }
}

/// List the session's terminals and persistent shells.
///
/// Every terminal `terminal_start` opened, with its command and whether its program still
/// runs, and every persistent shell `bash` (or `pwsh`) keeps, with its last command.
#[derive(qilin_tool::Tool)]
#[tool(name = "terminal_list", read_only)]
pub struct TerminalList;

/// Arguments of `terminal_list` (none).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalListArgs {}

/// The session's terminals and persistent shells.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TerminalListing {
    /// Every terminal started in the session, oldest first.
    pub terminals: Vec<TerminalEntry>,
    /// Every persistent shell made in the session, by program and name.
    pub shells: Vec<ShellEntry>,
}

/// One terminal of a [`TerminalListing`].
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TerminalEntry {
    /// Its id, for `terminal_send` and `terminal_kill`.
    pub terminal_id: String,
    /// The command it runs.
    pub command: String,
    /// `running`, `exited` or `killed`.
    pub state: JobState,
    /// The exit code, once the program exited.
    pub exit_code: Option<i32>,
}

/// One persistent shell of a [`TerminalListing`].
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShellEntry {
    /// `bash` or `pwsh`: the tool that runs in it.
    pub tool: String,
    /// Its name, for the tool's `shell` argument.
    pub shell: String,
    /// Whether a shell process is running (the next call starts one when not).
    pub running: bool,
    /// Whether a command is running in it now.
    pub busy: bool,
    /// The last command it was given.
    pub last_command: String,
    /// Calls run in it.
    pub calls: u64,
}

impl Tool for TerminalList {
    type Args = TerminalListArgs;
    type Output = TerminalListing;

    fn prompt_hint(&self) -> &str {
        "Use terminal_list to see which terminals and persistent shells this session has open, \
         for example before starting another or to find one to close with terminal_kill."
    }

    fn present(&self, _args: &TerminalListArgs) -> CallPresentation {
        CallPresentation::new("List terminals", "")
    }

    fn before_detail(&self, _args: &TerminalListArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &TerminalListArgs,
        result: &ToolResult<TerminalListing>,
    ) -> Option<Detail> {
        match result {
            Ok(listing) => Some(Detail::Text {
                text: listing_text(listing),
            }),
            Err(error) => Some(Detail::Text {
                text: error.message.clone(),
            }),
        }
    }

    async fn call(&self, _args: TerminalListArgs, cx: &ToolContext) -> ToolResult<TerminalListing> {
        let terminals = cx
            .service::<TerminalTable>()
            .map(|table| table.list())
            .unwrap_or_default()
            .into_iter()
            .map(|terminal| {
                let status = terminal.status();
                TerminalEntry {
                    terminal_id: terminal.id().to_string(),
                    command: terminal.command().to_string(),
                    state: status.state,
                    exit_code: status.exit_code,
                }
            })
            .collect();
        let shells = cx
            .service::<ShellTable>()
            .map(|table| table.list())
            .unwrap_or_default()
            .into_iter()
            .map(|listing| ShellEntry {
                tool: listing.kind.tool_name().to_string(),
                shell: listing.name,
                running: listing.summary.running,
                busy: listing.summary.busy,
                last_command: listing.summary.last_command,
                calls: listing.summary.calls,
            })
            .collect();
        Ok(TerminalListing { terminals, shells })
    }

    fn content(&self, output: &TerminalListing) -> Vec<ContentBlock> {
        vec![ContentBlock::text(listing_text(output))]
    }
}

fn listing_text(listing: &TerminalListing) -> String {
    let mut text = String::new();
    if listing.terminals.is_empty() {
        text.push_str("No terminals.\n");
    }
    for terminal in &listing.terminals {
        let state = match (terminal.state, terminal.exit_code) {
            (JobState::Running, _) => "running".to_string(),
            (_, Some(code)) => format!("exited with code {code}"),
            _ => "ended".to_string(),
        };
        text.push_str(&format!(
            "{} ({}): {state}\n",
            terminal.terminal_id, terminal.command
        ));
    }
    if listing.shells.is_empty() {
        text.push_str("No persistent shells.\n");
    }
    for shell in &listing.shells {
        let state = match (shell.running, shell.busy) {
            (true, true) => "running a command",
            (true, false) => "idle",
            (false, _) => "not running (the next call starts it)",
        };
        text.push_str(&format!(
            "{} shell `{}`: {state}, {} calls, last: {}\n",
            shell.tool,
            shell.shell,
            shell.calls,
            shell.last_command.lines().next().unwrap_or_default()
        ));
    }
    text
}
