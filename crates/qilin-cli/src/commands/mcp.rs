//! `qilin mcp list|tools|skill`: what the declared MCP servers offer, and the skill Qilin
//! generates for each; `qilin mcp serve`: Qilin's own tools served over MCP on stdio.

use crate::render::visible;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use futures_util::future::BoxFuture;
use qilin_mcp::{
    McpClient, STUBS_FILE, ServedSession, ServedTools, ServerSnapshot, describe, generate_skill,
    serve_stdio, tool_wire_name,
};
use qilin_runtime::{ModelChoice, Runtime, SessionHandle, TOOLS_AGENT};
use qilin_skill::{
    MCP_WORKSPACE_FILE, McpServer, McpTransport, SKILL_FILE, declared_mcp_servers,
    workspace_mcp_servers,
};
use qilin_tool::ToolEffect;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Which servers: those an agent file uses, else those of a workspace's `.qilin/mcp.yaml`.
#[derive(Args, Clone)]
pub struct ServerSources {
    /// The agent file whose `mcp_servers` to use.
    #[arg(long, value_name = "FILE")]
    pub agent: Option<PathBuf>,
    /// The workspace whose `.qilin/mcp.yaml` to use (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Trust the servers the workspace's `.qilin/mcp.yaml` declares, without asking
    /// (remembered until the file changes); without it a terminal asks, and no terminal
    /// refuses to start them.
    #[arg(long)]
    pub trust: bool,
}

impl ServerSources {
    fn servers(&self) -> Result<Vec<McpServer>> {
        if let Some(agent) = &self.agent {
            return declared_mcp_servers(agent).map_err(|errors| {
                anyhow::anyhow!(
                    "{}",
                    errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            });
        }
        let workspace = match &self.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()?,
        };
        let (servers, diagnostics) = workspace_mcp_servers(&workspace);
        for diagnostic in &diagnostics {
            eprintln!("{diagnostic}");
        }
        if diagnostics.iter().any(|d| d.is_error()) {
            bail!("the MCP servers file has errors");
        }
        Ok(servers)
    }

    /// Server `name`, once trusted when a workspace's file declares it.
    fn trusted_server(&self, name: &str) -> Result<McpServer> {
        let server = self.server(name)?;
        crate::trust::ensure_trusted(std::slice::from_ref(&server), self.trust)?;
        Ok(server)
    }

    fn server(&self, name: &str) -> Result<McpServer> {
        let servers = self.servers()?;
        let known: Vec<String> = servers.iter().map(|s| format!("`{}`", s.name)).collect();
        servers
            .into_iter()
            .find(|server| server.name == name)
            .with_context(|| {
                if known.is_empty() {
                    format!("no MCP server `{name}`: none is declared here (give --agent FILE or --workspace DIR)")
                } else {
                    format!("no MCP server `{name}`; the servers declared are {}", known.join(", "))
                }
            })
    }
}

/// The `mcp` subcommands.
#[derive(Subcommand)]
pub enum McpCommand {
    /// Every declared server: how it is reached and what it offers, or why it cannot be used.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sources: ServerSources,
    },
    /// One server's tools, by their names in Qilin, with how each is mounted.
    Tools {
        /// The server's name.
        server: String,
        /// Print the tools as the server lists them, in JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sources: ServerSources,
    },
    /// The skill Qilin generates for a server: its SKILL.md (and, with --stubs, its Python
    /// stubs).
    Skill {
        /// The server's name.
        server: String,
        /// Print the Python stubs (`reference/stubs.pyi`) instead.
        #[arg(long)]
        stubs: bool,
        #[command(flatten)]
        sources: ServerSources,
    },
    /// Serve Qilin's tools over MCP on stdin and stdout: an agent's directly mounted tools
    /// (and `run_code` when its code mode is on), each call through Qilin's execution layer
    /// and review policy.
    Serve(ServeArgs),
    /// Trust the MCP servers a workspace's `.qilin/mcp.yaml` declares, as the file is now: they
    /// start without asking until it changes. Read the file first: each server runs with your
    /// rights, outside the sandbox.
    Trust {
        /// The workspace (default: the current folder).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
}

/// The arguments of `qilin mcp serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// The workspace the tools work in (default: the agent file's, else the current folder).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The agent file whose tools to serve (default: every dual-active built-in tool, with
    /// code mode).
    #[arg(long, value_name = "FILE")]
    pub agent: Option<PathBuf>,
}

/// Runs an `mcp` subcommand.
pub fn run(command: McpCommand) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        match command {
            McpCommand::List { json, sources } => {
                list(&sources.servers()?, sources.trust, json).await
            }
            McpCommand::Tools {
                server,
                json,
                sources,
            } => tools(sources.trusted_server(&server)?, json).await,
            McpCommand::Skill {
                server,
                stubs,
                sources,
            } => skill(sources.trusted_server(&server)?, stubs).await,
            McpCommand::Serve(args) => serve(args).await,
            McpCommand::Trust { workspace } => trust(workspace),
        }
    })
}

/// Connects to `server`, lists what it offers, and closes the connection.
async fn snapshot(server: McpServer) -> Result<ServerSnapshot> {
    let client = McpClient::connect(server).await?;
    let listed = client.list().await;
    client.close().await;
    Ok(listed?)
}

fn reached(server: &McpServer) -> String {
    match &server.transport {
        McpTransport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        McpTransport::Http { url, .. } => url.clone(),
    }
}

#[derive(Serialize)]
struct ServerLine {
    name: String,
    reached: String,
    declared_in: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

async fn list(servers: &[McpServer], trust: bool, json: bool) -> Result<ExitCode> {
    // Servers of a workspace file not trusted are shown as declared, never started.
    let refused = crate::trust::ensure_trusted(servers, trust).err();
    let trust_file = crate::trust::trust_file().ok();
    let untrusted: Vec<bool> = servers
        .iter()
        .map(|server| {
            refused.is_some()
                && qilin_mcp::check_trust(trust_file.as_ref(), std::slice::from_ref(server))
                    .is_err()
        })
        .collect();
    let listed = futures_util::future::join_all(servers.iter().cloned().zip(untrusted).map(
        |(server, untrusted)| async move {
            let line = |tools, error| ServerLine {
                name: server.name.clone(),
                reached: reached(&server),
                declared_in: server.declared_in.display().to_string(),
                tools,
                error,
            };
            if untrusted {
                return line(
                    None,
                    Some("not started: its file is not trusted".to_string()),
                );
            }
            match snapshot(server.clone()).await {
                Ok(snapshot) => line(Some(snapshot.tools.len()), None),
                Err(err) => line(None, Some(format!("{err:#}"))),
            }
        },
    ))
    .await;
    if let Some(refused) = &refused {
        eprintln!("{}", visible(&format!("{refused:#}")));
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
    } else if listed.is_empty() {
        println!("no MCP servers declared");
    } else {
        for line in &listed {
            match (&line.tools, &line.error) {
                (Some(count), _) => println!(
                    "{}  {} tool(s)  {}",
                    line.name,
                    count,
                    visible(&line.reached)
                ),
                (None, Some(error)) => println!(
                    "{}  unavailable  {}\n    {}",
                    line.name,
                    visible(&line.reached),
                    visible(error)
                ),
                (None, None) => {}
            }
        }
    }
    let failed = listed.iter().any(|line| line.error.is_some());
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

async fn tools(server: McpServer, json: bool) -> Result<ExitCode> {
    let direct = server.direct.clone();
    let snapshot = snapshot(server).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&snapshot.tools)?);
        return Ok(ExitCode::SUCCESS);
    }
    for tool in &snapshot.tools {
        let annotations = tool.annotations.as_ref();
        let effect = ToolEffect::from_hints(
            annotations.and_then(|a| a.read_only_hint),
            annotations.and_then(|a| a.destructive_hint),
        );
        let mode = if direct.iter().any(|name| name == tool.name.as_ref()) {
            "direct + code"
        } else {
            "code only"
        };
        let description = tool.description.as_deref().unwrap_or_default();
        let first = description.lines().next().unwrap_or_default();
        println!(
            "{}  [{mode}, {effect:?}]  {first}",
            tool_wire_name(&snapshot.server, &tool.name)
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn skill(server: McpServer, stubs: bool) -> Result<ExitCode> {
    let snapshot = snapshot(server).await?;
    let generated = generate_skill(&snapshot);
    let file = if stubs { STUBS_FILE } else { SKILL_FILE };
    print!("{}", generated.files.get(file).cloned().unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: ServeArgs) -> Result<ExitCode> {
    let workspace = match (&args.workspace, &args.agent) {
        (Some(dir), _) => dir.clone(),
        (None, Some(agent)) => qilin_runtime::workspace_of(agent),
        (None, None) => std::env::current_dir()?,
    };
    let store = super::open_store(&workspace)?;
    let runtime = crate::trust::trusting(
        Runtime::new(store, super::worker_sandbox()?).with_sandbox_helper(super::sandbox_helper()?),
    );
    // Without an agent file, the built-in one mounting every dual-active tool, with code mode.
    let builder = runtime.session(&workspace).model(ModelChoice::none());
    let builder = match &args.agent {
        Some(agent) => builder.agent_file(agent),
        None => builder.builtin_agent(TOOLS_AGENT),
    };
    let handle = builder.build().await.map_err(super::runtime_error)?;
    for note in handle.notes() {
        eprintln!("note: {note}");
    }
    let served = serve_stdio(Arc::new(Served(handle.clone()))).await;
    handle.close().await?;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// A session served over MCP: its tools as they are now; its MCP servers brought up to date
/// on request (one down at the start joins when it comes up).
struct Served(SessionHandle);

impl ServedSession for Served {
    fn served(&self) -> ServedTools {
        let prompt = self.0.prompt();
        ServedTools {
            executor: self.0.executor(),
            tools: prompt.tools,
            instructions: prompt.system,
        }
    }

    fn refresh(&self) -> BoxFuture<'_, bool> {
        Box::pin(async {
            match self.0.refresh_tools().await {
                Ok(changed) => changed,
                Err(err) => {
                    eprintln!("note: the MCP servers' tools could not be made again: {err}");
                    false
                }
            }
        })
    }
}

/// `qilin mcp trust`: trusts the workspace's `.qilin/mcp.yaml` as it is now, listing its
/// servers.
fn trust(workspace: Option<PathBuf>) -> Result<ExitCode> {
    let workspace = match workspace {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    let (servers, diagnostics) = workspace_mcp_servers(&workspace);
    for diagnostic in &diagnostics {
        eprintln!("{diagnostic}");
    }
    if diagnostics.iter().any(|d| d.is_error()) {
        bail!("the MCP servers file has errors; nothing was trusted");
    }
    let file = workspace.join(MCP_WORKSPACE_FILE);
    if servers.is_empty() {
        println!(
            "{} declares no MCP servers; nothing to trust",
            file.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let trusted = crate::trust::trust_file()?;
    trusted.trust(&workspace)?;
    println!(
        "Trusted the MCP servers of {} until it changes (remembered in {}):",
        visible(&file.display().to_string()),
        trusted.path().display()
    );
    for server in &servers {
        println!("  {}", visible(&describe(server)));
    }
    Ok(ExitCode::SUCCESS)
}
