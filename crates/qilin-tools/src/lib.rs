//! Qilin's built-in tools: `bash` (with `job_output` and `job_kill` for background jobs, and
//! persistent shells; `pwsh`, its PowerShell twin, where PowerShell is installed),
//! `terminal_start`, `terminal_send`, `terminal_kill` and `terminal_list` (interactive
//! programs in a terminal),
//! `read`, `read_image`, `write`, `edit`, `str_replace_editor`, `grep`, `glob`, `web_fetch`,
//! `todo_write`, `question`, and the code-mode-only `table_query` (aggregates a CSV file).
//!
//! Every path a file tool takes is resolved once beneath the workspace handle (no link leads
//! out, no check-then-use window), the protected set (`.git`, `.qilin/`, `*.agent` and the files
//! agent files name, [`qilin_sandbox::Protection`]) is not written
//! unless the session's [`FileAccess`] allows it, and writes are atomic.
//! Host services the tools look up in the session's [`qilin_tool::Services`]:
//!
//! | service | used by | when absent |
//! |---|---|---|
//! | [`Sandbox`] | `bash` (foreground and background) | `bash` refuses to run, saying the runtime set up no sandbox |
//! | [`JobTable`] | `bash` with `background: true`, `job_output`, `job_kill` | the call fails saying background jobs are not available |
//! | [`TerminalTable`] | `terminal_start`, `terminal_send`, `terminal_kill` | the call fails saying terminals are not available |
//! | [`ShellTable`] | `bash` with `persistent: true` (or `shell`, `reset`) | the call fails saying persistent shells are not available |
//! | [`TodoStore`] | `todo_write` | the call fails saying the todo list is not available |
//! | [`EditHistory`] | `str_replace_editor` | `undo_edit` fails; other commands keep no history |
//! | [`WebFetchConfig`] | `web_fetch` | the defaults: public addresses only, 5 MiB, 30 s |
//! | [`FileAccess`] | `write`, `edit`, `str_replace_editor` | nothing of the protected set is written |
//! | [`GitGuard`] | `bash`, `job_output`, `terminal_start` | a `.git` a command creates stays in place |
//!
//! [`session_services`] gives a session a fresh [`JobTable`], [`TodoStore`] and
//! [`EditHistory`]; the host adds the [`Sandbox`] its settings ask for
//! ([`Sandbox::start`]). [`JobTable::end_all`] ends a session's background jobs; dropping the
//! session does too.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod address_guard;
mod bash;
mod diff;
mod edit;
mod edit_diagnostics;
mod file_access;
mod git_guard;
mod glob;
mod grep;
mod grep_search;
mod job_tools;
mod jobs;
mod output_capture;
mod persistent;
mod proc_tree;
mod process_group;
mod pty;
mod pwsh;
mod question;
mod read;
mod read_image;
mod render;
mod shell_kind;
mod shells;
mod stop_flag;
mod str_replace_editor;
mod table_number;
mod table_query;
mod table_scan;
mod terminal_tools;
mod terminals;
mod text_file;
mod todo;
mod utf8_chunks;
mod web_fetch;
mod workspace_path;
mod write;

pub use bash::{
    Bash, BashArgs, BashOutput, CommandFailure, CommandOutcome, CommandResult, CommandRun,
    DEFAULT_TIMEOUT_SECS, MAX_TIMEOUT_SECS, ShellResult, run_command,
};
pub use edit::{Edit, EditArgs, EditOutput};
pub use file_access::FileAccess;
pub use git_guard::{GitGuard, QUARANTINE, Quarantined, quarantine_note};
pub use glob::{Glob, GlobArgs, GlobOutput};
pub use grep::{Grep, GrepArgs, GrepFile, GrepLine, GrepMode, GrepOutput};
pub use job_tools::{JobKill, JobKillArgs, JobOutput, JobOutputArgs, JobReport};
pub use jobs::{Job, JobError, JobReceipt, JobState, JobStatus, JobTable};
pub use output_capture::DEFAULT_OUTPUT_CAP;
pub use persistent::{PersistentShell, ShellSummary};
pub use pwsh::{Pwsh, PwshArgs};
pub use qilin_sandbox::{Sandbox, SandboxHelper, SandboxMode, SandboxSettings};
pub use question::{Answer, AnsweredQuestion, AskQuestion, Question, QuestionArgs, QuestionOutput};
pub use read::{Read, ReadArgs, ReadOutput, language_of};
pub use read_image::{ImageOutput, ReadImage, ReadImageArgs};
pub use shell_kind::ShellKind;
pub use shells::{
    DEFAULT_SHELL, MAX_SHELL_NAME, MAX_SHELLS, ShellListing, ShellTable, ShellTableError,
};
pub use str_replace_editor::{
    EditHistory, EditorCommand, StrReplaceEditor, StrReplaceEditorArgs, StrReplaceEditorOutput,
};
pub use table_query::{
    Aggregate, DEFAULT_ROW_LIMIT, Filter, FilterOp, FilterValue, MAX_GROUPS, MAX_ROW_LIMIT,
    MAX_TABLE_BYTES, OrderBy, Scalar, TableQuery, TableQueryArgs, TableQueryOutput, TableRow,
};
pub use terminal_tools::{
    ShellEntry, TerminalEntry, TerminalKill, TerminalKillArgs, TerminalList, TerminalListArgs,
    TerminalListing, TerminalReport, TerminalSend, TerminalSendArgs, TerminalStart,
    TerminalStartArgs,
};
pub use terminals::{
    MAX_TERMINALS, TERMINAL_COLUMNS, TERMINAL_ROWS, Terminal, TerminalError, TerminalRead,
    TerminalTable, key_bytes,
};
pub use todo::{TodoItem, TodoList, TodoStatus, TodoStore, TodoWrite, TodoWriteArgs};
pub use web_fetch::{WebFetch, WebFetchArgs, WebFetchConfig, WebFetchOutput};
pub use write::{Write, WriteAction, WriteArgs, WriteOutput};

use qilin_tool::{RegistryError, Services, ToolRegistry};
use std::sync::Arc;

/// Registers every built-in tool; `pwsh` only where PowerShell is on `PATH`.
pub fn register_builtins(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry.register(Bash)?;
    if powershell_on_path() {
        registry.register(Pwsh)?;
    }
    registry.register(JobOutput)?;
    registry.register(JobKill)?;
    registry.register(TerminalStart)?;
    registry.register(TerminalSend)?;
    registry.register(TerminalKill)?;
    registry.register(TerminalList)?;
    registry.register(Read)?;
    registry.register(ReadImage)?;
    registry.register(Write)?;
    registry.register(Edit)?;
    registry.register(StrReplaceEditor)?;
    registry.register(Grep)?;
    registry.register(Glob)?;
    registry.register(WebFetch)?;
    registry.register(TodoWrite)?;
    registry.register(AskQuestion)?;
    registry.register(TableQuery)?;
    Ok(())
}

/// Whether PowerShell (`pwsh`) is an executable on `PATH` now: [`register_builtins`] registers
/// the `pwsh` tool exactly then.
pub fn powershell_on_path() -> bool {
    shell_kind::on_path("pwsh")
}

/// Fresh per-session services for the built-in tools: a [`JobTable`], a [`ShellTable`], a
/// [`TerminalTable`], a [`GitGuard`], a [`TodoStore`] and an [`EditHistory`]. The host adds a [`WebFetchConfig`] as it needs; `question` asks
/// through the session's requests ([`qilin_tool::Requests`]).
pub fn session_services() -> Services {
    let mut services = Services::default();
    services.insert(Arc::new(JobTable::new()));
    services.insert(Arc::new(ShellTable::new()));
    services.insert(Arc::new(TerminalTable::new()));
    services.insert(Arc::new(GitGuard::new()));
    services.insert(Arc::new(TodoStore::new()));
    services.insert(Arc::new(EditHistory::new()));
    services
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_tool::ToolEffect;

    #[test]
    fn only_the_tools_that_change_nothing_declare_it() {
        let mut registry = ToolRegistry::new();
        register_builtins(&mut registry).unwrap();
        let mut read_only: Vec<&str> = registry
            .names()
            .filter(|name| registry.get(name).unwrap().effect() == Some(ToolEffect::ReadOnly))
            .collect();
        read_only.sort_unstable();
        assert_eq!(
            read_only,
            [
                "glob",
                "grep",
                "read",
                "read_image",
                "table_query",
                "terminal_list",
                "web_fetch"
            ]
        );
    }
}
