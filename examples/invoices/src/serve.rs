//! `invoices serve`: the application's sessions over HTTP, with Qilin's server and web client.
//!
//! The server hosts the application's own runtime — the one built with its tools — so every
//! session created over HTTP (or in the web client) can call `create_invoice` and
//! `invoice_totals`. It listens on 127.0.0.1 alone, on a free port, and prints the URL to open
//! with a new random token in its fragment.

use qilin::server::{
    Access, ConnectionLimits, DEFAULT_MAX_BODY, ServerConfig, ServerState, SessionDefaults,
    StreamOptions,
};
use qilin::{LeaseTiming, Runtime, SessionHost};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

/// What new sessions run when a client does not say: the application's workspace, its agent
/// file and the scripted model of its offline run.
pub struct Served {
    /// The folder sessions work in, with the agent file, the skill and the script.
    pub workspace: PathBuf,
    /// The agent file, within the workspace.
    pub agent_file: PathBuf,
    /// The model spec (`scripted:FILE`, the file in the workspace).
    pub model: String,
}

/// Serves the sessions of `runtime` until Ctrl-C or SIGTERM, new ones made as `served` says.
pub async fn serve(
    runtime: Runtime,
    served: Served,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let listener =
        tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
    let bound = listener.local_addr()?;
    let token =
        Access::random_token().map_err(|err| format!("cannot draw a random token: {err}"))?;
    // The sessions' commands run without the bash sandbox, as in the offline run: the agent
    // runs none, and the sandbox's helper is the `qilin` binary, which this one is not.
    let sessions = SessionHost::new(
        runtime,
        format!("invoices:{}", std::process::id()),
        LeaseTiming::default(),
        |builder| builder.attended(true).no_sandbox(true),
    );
    let state = ServerState::new(ServerConfig {
        host: sessions.clone(),
        defaults: SessionDefaults {
            workspace: served.workspace.clone(),
            agent_file: Some(served.agent_file),
            model: Some(served.model),
            no_sandbox: true,
            allowed_roots: Vec::new(),
        },
        access: Access::new(token.clone(), bound),
        stream: StreamOptions::default(),
        max_body: DEFAULT_MAX_BODY,
        connections: ConnectionLimits::default(),
    });

    let banner = format!(
        "Invoices is serving {}\n\n  http://127.0.0.1:{}/#token={token}\n\nScripts: \
         Authorization: Bearer TOKEN. Ctrl-C stops the server.\n",
        served.workspace.display(),
        bound.port()
    );
    // A closed standard output must not stop the server: a failure to write is ignored.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(banner.as_bytes())
        .and_then(|()| stdout.flush());
    drop(stdout);

    qilin::server::serve_hosted(listener, state, sessions, stop_requested()).await;
    Ok(ExitCode::SUCCESS)
}

/// Waits for Ctrl-C or SIGTERM; for Ctrl-C alone where SIGTERM cannot be watched.
async fn stop_requested() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
