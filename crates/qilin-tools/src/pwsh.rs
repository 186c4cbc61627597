//! `pwsh`: the `bash` tool's twin for PowerShell 7, registered only where `pwsh` is installed.

use crate::bash::{
    BashArgs, BashOutput, call_timeout, is_persistent, output_detail, output_text, run_foreground,
    run_persistent,
};
use crate::shell_kind::ShellKind;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;

/// Run a PowerShell command in the workspace.
///
/// The command runs with `pwsh -NoProfile -NonInteractive -Command` in the workspace root,
/// in the session's sandbox, stdin closed; the result is its output, exit code and
/// duration. With `persistent: true` (or a `shell` name) it runs in a PowerShell kept for
/// the session, so the location, variables and functions carry over to the next call.
#[derive(qilin_tool::Tool)]
#[tool(name = "pwsh")]
pub struct Pwsh;

/// Arguments of `pwsh`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PwshArgs {
    /// The PowerShell command, run in the workspace root. May span several lines.
    pub command: String,
    /// Seconds to wait before the command is stopped (default 120, at most 600).
    #[schemars(range(min = 1, max = 600))]
    pub timeout_secs: Option<u64>,
    /// Run the command in the session's persistent PowerShell, kept between calls: the
    /// location, variables and functions of earlier calls carry over. Default false.
    pub persistent: Option<bool>,
    /// The name of the persistent PowerShell to run in (letters, digits, `-`, `_`; implies
    /// `persistent`). Default `default`.
    pub shell: Option<String>,
    /// Start the persistent PowerShell afresh before running the command; implies
    /// `persistent`. Default false.
    pub reset: Option<bool>,
}

impl PwshArgs {
    fn as_shell_call(&self) -> BashArgs {
        BashArgs {
            command: self.command.clone(),
            timeout_secs: self.timeout_secs,
            background: None,
            persistent: self.persistent,
            shell: self.shell.clone(),
            reset: self.reset,
        }
    }
}

impl Tool for Pwsh {
    type Args = PwshArgs;
    type Output = BashOutput;

    fn prompt_hint(&self) -> &str {
        "Use pwsh for PowerShell scripts and cmdlets. Each call is a fresh PowerShell in the \
         workspace root unless `persistent: true`, which keeps one PowerShell for the session \
         (`Set-Location`, variables and functions stay; `reset: true` starts it afresh). It \
         runs in the same sandbox as bash: write only in the workspace and `$env:TMPDIR`."
    }

    fn present(&self, args: &PwshArgs) -> CallPresentation {
        let first_line = args.command.lines().next().unwrap_or_default();
        let action = if is_persistent(&args.as_shell_call()) {
            "Run in PowerShell"
        } else {
            "Run PowerShell"
        };
        CallPresentation::new(action, first_line)
    }

    fn before_detail(&self, args: &PwshArgs) -> Option<Detail> {
        Some(Detail::Code {
            language: ShellKind::Pwsh.language().into(),
            code: args.command.clone(),
        })
    }

    fn detail(&self, args: &PwshArgs, result: &ToolResult<BashOutput>) -> Option<Detail> {
        output_detail(&args.command, result)
    }

    async fn call(&self, args: PwshArgs, cx: &ToolContext) -> ToolResult<BashOutput> {
        let call = args.as_shell_call();
        if is_persistent(&call) {
            return run_persistent(ShellKind::Pwsh, &call, cx)
                .await
                .map(BashOutput::Persistent);
        }
        if args.command.trim().is_empty() {
            return Err(ToolError::invalid_arguments(
                "`command` is empty; give the PowerShell command to run, e.g. `Get-ChildItem`",
            ));
        }
        run_foreground(
            ShellKind::Pwsh,
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
