//! Workspace trust on the terminal: before a command starts the MCP servers a workspace's
//! `.qilin/mcp.yaml` declares (a cloned repository's own file), the user trusts that file —
//! with `--trust`, or by answering yes when asked on a terminal; without either the command
//! refuses, saying how to trust. The answer is remembered per workspace in the user's data
//! folder ([`trust_file`]) until the file changes.

use crate::render::visible;
use anyhow::{Context, Result, bail};
use qilin_mcp::{McpError, TrustFile, UntrustedServers, check_trust};
use qilin_skill::{MCP_WORKSPACE_FILE, McpServer};
use std::io::{BufRead, IsTerminal, Write};

/// Where the answers are kept: `qilin/trusted-workspaces.json` in the platform's data folder
/// (`$XDG_DATA_HOME`, else `~/.local/share`, on Linux), outside every workspace.
pub fn trust_file() -> Result<TrustFile> {
    let data = dirs::data_dir().context(
        "cannot find your data folder, where trusted workspaces are kept: set XDG_DATA_HOME or HOME",
    )?;
    Ok(TrustFile::new(
        data.join("qilin").join("trusted-workspaces.json"),
    ))
}

/// `runtime` starting the servers of the workspaces the user trusted (none when the data
/// folder cannot be found: then a session using a workspace's servers is refused, saying so).
pub fn trusting(runtime: qilin_runtime::Runtime) -> qilin_runtime::Runtime {
    match trust_file() {
        Ok(file) => runtime.with_trust_file(file),
        Err(_) => runtime,
    }
}

/// Whether the user can be asked: standard input and error are a terminal.
fn can_ask() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Settles an untrusted workspace: trusts it when `trust` (the user's `--trust`) or when the
/// user answers yes on a terminal; otherwise fails, saying how to trust it.
pub fn settle(untrusted: &UntrustedServers, trust: bool) -> Result<()> {
    let file = trust_file()?;
    let declared = untrusted.workspace.join(MCP_WORKSPACE_FILE);
    if trust {
        file.trust(&untrusted.workspace)?;
        eprintln!(
            "Trusted the MCP servers of {} (remembered in {} until the file changes).",
            visible(&declared.display().to_string()),
            file.path().display()
        );
        return Ok(());
    }
    if !can_ask() {
        bail!(
            "{} by answering yes on a terminal, with `qilin mcp trust --workspace {}`, or with \
             `--trust`",
            visible(&untrusted.to_string()),
            visible(&untrusted.workspace.display().to_string())
        );
    }
    if ask(untrusted)? {
        file.trust(&untrusted.workspace)?;
        return Ok(());
    }
    bail!(
        "the MCP servers of {} are not trusted, and none was started",
        visible(&declared.display().to_string())
    )
}

/// Asks on the terminal whether to trust `untrusted`'s file; true for yes.
fn ask(untrusted: &UntrustedServers) -> Result<bool> {
    let declared = untrusted.workspace.join(MCP_WORKSPACE_FILE);
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "{} declares MCP servers that Qilin would start on this machine, with your rights and \
         outside the sandbox:",
        visible(&declared.display().to_string())
    )?;
    for server in &untrusted.servers {
        writeln!(err, "  {}", visible(server))?;
    }
    if untrusted.changed {
        writeln!(err, "The file changed since you trusted it.")?;
    }
    write!(
        err,
        "Trust them (remembered for this workspace until the file changes)? [y/N] "
    )?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Makes sure every workspace declaring some of `servers` is trusted, settling each that is not
/// ([`settle`]): trusted with `trust`, asked on a terminal, or refused.
pub fn ensure_trusted(servers: &[McpServer], trust: bool) -> Result<()> {
    let file = trust_file()?;
    // Each round trusts one more workspace; there are no more than servers.
    for _ in 0..=servers.len() {
        match check_trust(Some(&file), servers) {
            Ok(()) => return Ok(()),
            Err(McpError::Untrusted(untrusted)) => settle(&untrusted, trust)?,
            Err(other) => return Err(other.into()),
        }
    }
    bail!("the MCP servers' files changed while they were being trusted; run the command again")
}
