//! `qilin serve`: sessions over HTTP for the web client and for scripts (`qilin-server`).
//!
//! Listens on 127.0.0.1 on a free port, with a new random token printed as the URL to open
//! (the token in the fragment, which never reaches a server log) and written, with the port,
//! to a file only the user can read. `--demo` runs the offline demo as a live session.

use crate::commands::demo::{DEMO_PROMPT, demo_model, unpack_example_workspace};
use crate::commands::{sandbox_helper, worker_sandbox};
use anyhow::{Context, Result, bail};
use clap::Args;
use qilin_runtime::{DEFAULT_RUN_TOKENS, LeaseTiming, Runtime, SchedulerSettings, SessionHost};
use qilin_server::{
    Access, ConnectionLimits, CreateSession, DEFAULT_MAX_BODY, ServerConfig, ServerState,
    SessionDefaults, StreamOptions,
};
use qilin_skill::{declared_mcp_servers, workspace_mcp_servers};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The shortest token accepted from `--token`.
const MIN_TOKEN_CHARS: usize = 32;

/// `qilin serve`'s arguments.
#[derive(Args)]
pub struct ServeArgs {
    /// The folder new sessions work in, whose `.qilin/qilin.db` keeps them (unless
    /// `--database` says otherwise); the current folder when omitted. With `--demo`: a folder
    /// the demo may create (a temporary one, removed afterwards, when omitted).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// The `.agent` file new sessions run unless a client names another.
    #[arg(long)]
    pub agent: Option<PathBuf>,
    /// The model new sessions use unless a client names another: `openai:NAME`,
    /// `anthropic:NAME` or `scripted:FILE`; the agent file's `model` when omitted.
    #[arg(long)]
    pub model: Option<String>,
    /// Where to listen: `127.0.0.1` on a free port by default (`ADDRESS[:PORT]`). An address
    /// other than loopback needs `--token`.
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
    /// The session store: `sqlite:PATH`, a file path, or `postgres://USER:PASSWORD@HOST/DB`
    /// (for several server processes; `?schema=NAME` picks the schema, `qilin` by default);
    /// `WORKSPACE/.qilin/qilin.db` when omitted.
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
    /// The token clients must send, instead of a new random one (at least 32 characters).
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    /// Serve the offline demo: the example workspace with a scripted agent, as a live session
    /// whose turn starts when its page opens.
    #[arg(long)]
    pub demo: bool,
    /// Run bash commands without the sandbox (as the agent file's `sandbox: {mode: off}`).
    #[arg(long)]
    pub no_sandbox: bool,
    /// A folder, besides the workspace, under which a client may put a session's workspace,
    /// agent file and scripted model (repeatable); anything a client names elsewhere is
    /// refused.
    #[arg(long = "allow-root", value_name = "DIR")]
    pub allow_roots: Vec<PathBuf>,
    /// Trust the MCP servers the workspace's `.qilin/mcp.yaml` declares, without asking
    /// (remembered until the file changes). Without it a terminal asks at start; sessions
    /// using servers not trusted are refused.
    #[arg(long)]
    pub trust: bool,
    /// How often the scheduler looks for due scheduled tasks: a duration like `500ms`, `1s`
    /// or `5s`.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub schedule_tick: Duration,
    /// How long a scheduled run may take before it is interrupted, ending `out_of_budget`: a
    /// duration like `90s`, `30m` or `2h`.
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    pub run_budget: Duration,
    /// How many tokens a scheduled run may spend (input and output of its steps together)
    /// before it is stopped, ending `out_of_budget`.
    #[arg(long, value_name = "TOKENS", default_value_t = DEFAULT_RUN_TOKENS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub run_tokens: u64,
}

/// A duration given on the command line: a whole number with a unit, `ms`, `s`, `m` or `h`
/// (`500ms`, `1s`, `30m`, `2h`), more than zero.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let expected = "expected a whole number with a unit (ms, s, m or h), like 500ms, 1s, 30m or 2h";
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("`{text}` has no unit: {expected}"))?;
    let (digits, unit) = text.split_at(split);
    let count: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` does not start with a number: {expected}"))?;
    let duration = match unit {
        "ms" => Duration::from_millis(count),
        "s" => Duration::from_secs(count),
        "m" => Duration::from_secs(count.saturating_mul(60)),
        "h" => Duration::from_secs(count.saturating_mul(3600)),
        _ => return Err(format!("`{text}` has an unknown unit `{unit}`: {expected}")),
    };
    match duration.is_zero() {
        true => Err(format!("`{text}` is zero: expected more than nothing")),
        false => Ok(duration),
    }
}

/// Runs `qilin serve`.
pub fn run(args: ServeArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(serve(args))
}

/// Where to listen, and whether it is beyond this machine.
fn bind_address(bind: Option<&str>) -> Result<SocketAddr> {
    let Some(bind) = bind else {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
    };
    if let Ok(address) = bind.parse::<SocketAddr>() {
        return Ok(address);
    }
    if let Ok(ip) = bind
        .trim_matches(|c| c == '[' || c == ']')
        .parse::<IpAddr>()
    {
        return Ok(SocketAddr::new(ip, 0));
    }
    if let Some(port) = bind.strip_prefix("localhost:") {
        let port = port
            .parse::<u16>()
            .with_context(|| format!("--bind {bind}: `{port}` is not a port"))?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if bind == "localhost" {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
    }
    bail!(
        "--bind {bind}: expected an address with an optional port (127.0.0.1:8080, [::1], 0.0.0.0:8080)"
    )
}

async fn serve(args: ServeArgs) -> Result<ExitCode> {
    let bind = bind_address(args.bind.as_deref())?;
    if !bind.ip().is_loopback() && args.token.is_none() {
        bail!(
            "--bind {bind} would let other machines reach this server; pass --token T (a secret \
             of at least {MIN_TOKEN_CHARS} characters that clients must send) to do that"
        );
    }
    let token = match &args.token {
        Some(token) if token.chars().count() < MIN_TOKEN_CHARS || token.trim() != token => bail!(
            "--token is too short or has surrounding spaces: give at least {MIN_TOKEN_CHARS} characters"
        ),
        Some(token) => token.clone(),
        None => Access::random_token().context("cannot draw a random token")?,
    };
    if !bind.ip().is_loopback() {
        eprintln!(
            "warning: listening on {bind}: other machines can reach this server; only the token \
             keeps them out, and the connection is not encrypted"
        );
    }

    let temporary = tempfile::tempdir().context("cannot create a temporary folder")?;
    let workspace = match (&args.workspace, args.demo) {
        (Some(dir), true) => {
            anyhow::ensure!(
                !dir.exists(),
                "{} already exists; give --demo a folder it may create",
                dir.display()
            );
            unpack_example_workspace(dir)?;
            dir.clone()
        }
        (None, true) => {
            let dir = temporary.path().join("workspace");
            unpack_example_workspace(&dir)?;
            dir
        }
        (Some(dir), false) => dir.clone(),
        (None, false) => std::env::current_dir().context("cannot read the current folder")?,
    };
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
    let agent = match (&args.agent, args.demo) {
        (Some(agent), _) => Some(
            agent
                .canonicalize()
                .with_context(|| format!("the agent file {} does not exist", agent.display()))?,
        ),
        (None, true) => Some(workspace.join("demo.agent")),
        (None, false) => None,
    };

    let allowed_roots = args
        .allow_roots
        .iter()
        .map(|root| {
            root.canonicalize()
                .with_context(|| format!("--allow-root {}: no such folder", root.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let store = qilin_store::open_database(args.database.as_deref(), &workspace)
        .await
        .context("cannot open the session store")?;
    // The workspace's own MCP servers (and the default agent's) are trusted now or never
    // started: asked about on a terminal, trusted with `--trust`, else each session using them
    // is refused, saying how to trust them.
    let mut declared = workspace_mcp_servers(&workspace).0;
    if let Some(agent) = &agent {
        declared.extend(declared_mcp_servers(agent).unwrap_or_default());
    }
    if let Err(err) = crate::trust::ensure_trusted(&declared, args.trust) {
        eprintln!("note: {err:#}. Until then, sessions using these servers are refused.");
    }
    let runtime = crate::trust::trusting(
        Runtime::new(store, worker_sandbox()?).with_sandbox_helper(sandbox_helper()?),
    );
    let owner = owner_name()?;
    let no_sandbox = args.no_sandbox;
    let sessions = SessionHost::new(runtime, owner, LeaseTiming::default(), move |builder| {
        builder.attended(true).no_sandbox(no_sandbox)
    });
    let defaults = SessionDefaults {
        workspace: workspace.clone(),
        agent_file: agent,
        model: args.model.clone(),
        no_sandbox,
        allowed_roots,
    };
    let closed = sessions
        .recover_abandoned()
        .await
        .context("cannot close what stopped servers left open")?;
    if closed > 0 {
        eprintln!(
            "Closed {closed} event(s) left open by a server that stopped without closing its sessions."
        );
    }
    let _abandoned = sessions.watch_abandoned();
    // Scheduled tasks: the due fires of the store's schedules, claimed and run here.
    let _schedules = sessions.watch_schedules(SchedulerSettings {
        tick: args.schedule_tick,
        run_budget: args.run_budget,
        run_tokens: args.run_tokens,
        ..SchedulerSettings::default()
    });

    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("cannot listen on {bind}"))?;
    let bound = listener
        .local_addr()
        .context("cannot read the bound address")?;
    let state = ServerState::new(ServerConfig {
        host: sessions.clone(),
        defaults,
        access: Access::new(token.clone(), bound),
        stream: StreamOptions::default(),
        max_body: DEFAULT_MAX_BODY,
        connections: ConnectionLimits::default(),
    });
    // With PostgreSQL, commands for sessions other server processes run are relayed to them.
    state
        .connect_relay()
        .await
        .map_err(|err| anyhow::anyhow!(err.body.message))
        .context("cannot start relaying commands between server processes")?;

    let mut page = String::from("/");
    if args.demo {
        let demo = CreateSession::default();
        let model = demo_model(&workspace, false)?;
        let handle = state
            .create_session(&demo, Some(model))
            .await
            .map_err(|err| anyhow::anyhow!(err.body.message))?;
        state.set_demo(handle.id(), DEMO_PROMPT);
        page = format!("/sessions/{}", handle.id());
    }

    let host = match bound.ip() {
        ip if ip.is_unspecified() || ip.is_loopback() => format!("127.0.0.1:{}", bound.port()),
        _ => bound.to_string(),
    };
    let url = format!("http://{host}{page}#token={token}");
    let token_file = write_token_file(&host, bound.port(), &token)?;
    let mut banner = format!("Qilin is serving {}\n", workspace.display());
    if args.demo {
        banner.push_str("The demo's turn starts when its page opens.\n");
    }
    banner.push_str(&format!(
        "\n  {url}\n\nScripts: Authorization: Bearer TOKEN (in {}). Ctrl-C stops the server.\n",
        token_file.display()
    ));
    // A closed standard output (`qilin serve | head -1`) must not stop the server: the banner
    // is written once and a failure to write it is ignored.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(banner.as_bytes())
        .and_then(|()| stdout.flush());
    drop(stdout);

    // Ctrl-C, SIGTERM (a service manager, `kill`) or SIGHUP: a stop that ends every session,
    // so their sandboxes' temp folders go with them.
    let stop = async {
        crate::ending::stop_requested().await;
        let _ = writeln!(
            std::io::stderr(),
            "Stopping: interrupting running turns and storing their events…"
        );
    };
    qilin_server::serve_hosted(listener, state, sessions, stop).await;
    let _ = std::fs::remove_file(&token_file);
    drop(temporary);
    Ok(ExitCode::SUCCESS)
}

/// This process's name among the server processes sharing a store: host, process id and a
/// random part.
fn owner_name() -> Result<String> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_string())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "host".to_string());
    let random = Access::random_token().context("cannot draw a random name")?;
    Ok(format!("{host}:{}:{}", std::process::id(), &random[..8]))
}

/// The folder of the token files: Qilin's private runtime folder (`$XDG_RUNTIME_DIR/qilin`,
/// else `~/.qilin/run`), which every sandboxed command sees empty, and whose servers' ports it
/// cannot connect to.
fn token_folder() -> Result<PathBuf> {
    qilin_sandbox::private_runtime_dir()
        .context("neither XDG_RUNTIME_DIR nor HOME is set: nowhere to write the token file")
}

/// Writes the URL, port and token to `serve-PORT.json`, readable by the user alone.
fn write_token_file(host: &str, port: u16, token: &str) -> Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    let folder = token_folder()?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let path = folder.join(qilin_sandbox::token_file_name(port));
    let _ = std::fs::remove_file(&path);
    let contents = serde_json::json!({
        "url": format!("http://{host}/"),
        "port": port,
        "token": token,
        "pid": std::process::id(),
    });
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot write the token file {}", path.display()))?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot restrict {}", path.display()))?;
    writeln!(file, "{contents}").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod duration_tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_take_a_unit_and_refuse_nothing() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        let no_unit = parse_duration("90").unwrap_err();
        assert!(no_unit.contains("has no unit"), "{no_unit}");
        let bad_unit = parse_duration("3d").unwrap_err();
        assert!(bad_unit.contains("unknown unit `d`"), "{bad_unit}");
        assert!(parse_duration("0s").unwrap_err().contains("is zero"));
        assert!(
            parse_duration("s")
                .unwrap_err()
                .contains("start with a number")
        );
    }
}
