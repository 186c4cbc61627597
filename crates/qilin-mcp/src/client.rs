//! One connection to an MCP server: started (a command, or an HTTP endpoint), listed, called,
//! watched for `notifications/tools/list_changed`, and started again after it crashed or hung.
//! A server that fails to start is tried again later, waiting longer after each failure
//! ([`RESTART_BACKOFF`]), so a server down when the session starts joins it once it comes up.

use crate::stdio::{MAX_MESSAGE_BYTES, OVERSIZED};
use crate::{McpError, ServerSnapshot};
use parking_lot::Mutex;
use qilin_backoff::Backoff;
use qilin_skill::{McpServer, McpTransport};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, Implementation, PaginatedRequestParams,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The variables a stdio server inherits from Qilin's environment; anything else (API keys
/// among it) it receives only when its declaration's `env` passes it.
pub const INHERITED_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
    "TZ",
];

/// The lines of a server's stderr kept to explain its failures.
const STDERR_LINES: usize = 20;

/// The most pages of a server's `tools/list` Qilin reads; a server offering more (one paging
/// forever) fails its listing.
pub const MAX_TOOL_PAGES: usize = 100;

/// How long a server that failed to start (or to list its tools) `n` times in a row is left
/// alone before it is tried again: 1 s, then twice as long after each further failure, up to
/// 5 min.
pub const RESTART_BACKOFF: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(300));

/// Receives the server's notifications.
#[derive(Clone)]
struct Watcher {
    tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            Default::default(),
            Implementation::new("qilin", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A running connection.
struct Connection {
    service: RunningService<RoleClient, Watcher>,
    process_id: Option<u32>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Becomes true when the process's stderr reaches its end (the process is gone).
    stderr_ended: tokio::sync::watch::Receiver<bool>,
}

impl Connection {
    fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }

    fn stderr_tail(&self) -> String {
        tail(&self.stderr)
    }

    /// Waits, briefly, for a dying process's last words on stderr to be read.
    async fn last_words(&self) {
        let mut ended = self.stderr_ended.clone();
        let _ =
            tokio::time::timeout(Duration::from_millis(500), ended.wait_for(|ended| *ended)).await;
    }
}

fn tail(stderr: &Mutex<VecDeque<String>>) -> String {
    let lines = stderr.lock();
    if lines.is_empty() {
        String::new()
    } else {
        format!(
            "; its last words on stderr: {}",
            lines.iter().cloned().collect::<Vec<_>>().join(" | ")
        )
    }
}

enum State {
    Running(Arc<Connection>),
    /// Not running: not started yet, stopped (it crashed or hung), or failed to start.
    Down(Down),
    Closed,
}

/// Why a server is not running, and when it may be started again.
struct Down {
    /// What went wrong (or that it was not started yet).
    reason: String,
    /// How many attempts to start it failed in a row (0: the next use starts it at once).
    failures: u32,
    /// When the last attempt failed.
    since: Instant,
}

impl Down {
    fn new(reason: String) -> Down {
        Down {
            reason,
            failures: 0,
            since: Instant::now(),
        }
    }

    /// How long to wait still before the next attempt (zero when it may be made now).
    fn wait(&self) -> Duration {
        if self.failures == 0 {
            return Duration::ZERO;
        }
        (self.since + RESTART_BACKOFF.delay(self.failures))
            .saturating_duration_since(Instant::now())
    }
}

/// What a failed start says: the reason alone when the error carries one.
fn reason_of(error: &McpError) -> String {
    match error {
        McpError::Start { reason, .. } | McpError::Request { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

/// A connection to one declared MCP server, shared by the session's calls.
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<Inner>,
}

struct Inner {
    server: McpServer,
    state: tokio::sync::Mutex<State>,
    tools_changed: Arc<AtomicBool>,
    starts: AtomicU32,
    /// Listings that failed in a row (the server hung on `tools/list`, or paged forever): it
    /// is left alone longer after each, as after failed starts.
    listing_failures: AtomicU32,
}

impl McpClient {
    /// Starts (or reaches) the server and completes the MCP handshake, within its startup
    /// timeout.
    pub async fn connect(server: McpServer) -> Result<McpClient, McpError> {
        let client = McpClient::new(server);
        client.ensure_started().await?;
        Ok(client)
    }

    /// A client of `server`, not started yet: [`McpClient::ensure_started`] or its first use
    /// starts it.
    pub fn new(server: McpServer) -> McpClient {
        McpClient {
            inner: Arc::new(Inner {
                server,
                state: tokio::sync::Mutex::new(State::Down(Down::new(
                    "not started yet".to_string(),
                ))),
                tools_changed: Arc::new(AtomicBool::new(false)),
                starts: AtomicU32::new(0),
                listing_failures: AtomicU32::new(0),
            }),
        }
    }

    /// Starts the server unless it runs, or failed to start too recently: after a failed
    /// start it is left alone for [`RESTART_BACKOFF`] (1 s, 2 s, 4 s… up to 5 min), and until then
    /// this (and every call) fails at once with [`McpError::Down`]. When a server that was
    /// down comes up, its tool list counts as changed ([`McpClient::take_tools_changed`]).
    pub async fn ensure_started(&self) -> Result<(), McpError> {
        self.running().await.map(drop)
    }

    /// The declaration this client follows.
    pub fn server(&self) -> &McpServer {
        &self.inner.server
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.server.name
    }

    /// How many times the server was started (1 after connecting, more after restarts).
    pub fn starts(&self) -> u32 {
        self.inner.starts.load(Ordering::SeqCst)
    }

    /// The process id of a running stdio server.
    pub async fn process_id(&self) -> Option<u32> {
        match &*self.inner.state.lock().await {
            State::Running(connection) => connection.process_id,
            _ => None,
        }
    }

    /// True once since the server last said its tool list changed (or it was restarted).
    pub fn take_tools_changed(&self) -> bool {
        self.inner.tools_changed.swap(false, Ordering::SeqCst)
    }

    /// The running connection, starting the server when it is down.
    async fn running(&self) -> Result<Arc<Connection>, McpError> {
        let mut state = self.inner.state.lock().await;
        match &*state {
            State::Running(connection) if !connection.service.is_closed() => {
                return Ok(Arc::clone(connection));
            }
            State::Closed => {
                return Err(McpError::Request {
                    server: self.name().to_string(),
                    reason: "the session closed its connection".to_string(),
                });
            }
            _ => {}
        }
        let (down_because, failures) = match &*state {
            State::Down(down) => {
                let wait = down.wait();
                if !wait.is_zero() {
                    return Err(McpError::Down {
                        server: self.name().to_string(),
                        reason: down.reason.clone(),
                        retry_in_secs: wait.as_secs_f64().ceil() as u64,
                    });
                }
                (down.reason.clone(), down.failures)
            }
            _ => ("its connection closed".to_string(), 0),
        };
        let watcher = Watcher {
            tools_changed: Arc::clone(&self.inner.tools_changed),
        };
        match start(&self.inner.server, watcher).await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                if self.inner.starts.fetch_add(1, Ordering::SeqCst) > 0 || failures > 0 {
                    // A restarted server may offer other tools; one that failed to start
                    // offers its tools only now.
                    self.inner.tools_changed.store(true, Ordering::SeqCst);
                    tracing::info!(server = %self.name(), after = %down_because, "MCP server started again");
                }
                *state = State::Running(Arc::clone(&connection));
                Ok(connection)
            }
            Err(error) => {
                let failures = failures + 1;
                tracing::warn!(
                    server = %self.name(),
                    error = %error,
                    retry_in_secs = RESTART_BACKOFF.delay(failures).as_secs(),
                    "MCP server could not be started"
                );
                *state = State::Down(Down {
                    reason: reason_of(&error),
                    failures,
                    since: Instant::now(),
                });
                Err(error)
            }
        }
    }

    /// Marks the server down (it crashed or hung), ending its process; the next use starts it
    /// again.
    async fn stop(&self, why: String) {
        let mut state = self.inner.state.lock().await;
        if let State::Running(_) = &*state {
            tracing::warn!(server = %self.name(), reason = %why, "MCP server stopped");
            *state = State::Down(Down::new(why));
        }
    }

    /// Takes a running server that failed its listing for hung: it is stopped, and left alone
    /// for [`RESTART_BACKOFF`] of the listings failed in a row before it is started again, so a
    /// server that never lists does not hold up every turn. Returns the error to report.
    async fn listing_failed(&self, connection: &Arc<Connection>, why: String) -> McpError {
        let failures = self.inner.listing_failures.fetch_add(1, Ordering::SeqCst) + 1;
        let why = format!("{why}{}", connection.stderr_tail());
        let mut state = self.inner.state.lock().await;
        if let State::Running(running) = &*state
            && Arc::ptr_eq(running, connection)
        {
            tracing::warn!(server = %self.name(), reason = %why, "MCP server stopped");
            *state = State::Down(Down {
                reason: why.clone(),
                failures,
                since: Instant::now(),
            });
        }
        McpError::Request {
            server: self.name().to_string(),
            reason: format!(
                "{why}; it was stopped, and is started again in {} s",
                RESTART_BACKOFF.delay(failures).as_secs()
            ),
        }
    }

    /// What the server offers now: its identity, instructions and every tool. The listing,
    /// every page of it, must end within the server's startup timeout (listing its tools is
    /// part of starting it) and within [`MAX_TOOL_PAGES`] pages; a server that does neither is
    /// stopped and started again later.
    pub async fn list(&self) -> Result<ServerSnapshot, McpError> {
        let connection = self.running().await?;
        let peer = connection.peer();
        let limit = self.inner.server.startup_timeout;
        let deadline = Instant::now() + limit;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for page in 1.. {
            if page > MAX_TOOL_PAGES {
                return Err(self
                    .listing_failed(
                        &connection,
                        format!(
                            "it offered more than {MAX_TOOL_PAGES} pages of tools (Qilin reads at \
                             most {MAX_TOOL_PAGES}; a server that pages forever never ends its list)"
                        ),
                    )
                    .await);
            }
            let params = cursor
                .take()
                .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
            let listed = tokio::time::timeout_at(deadline, peer.list_tools(params)).await;
            let listed = match listed {
                Ok(listed) => listed,
                Err(_late) => {
                    return Err(self
                        .listing_failed(
                            &connection,
                            format!(
                                "it did not list its tools within {} ms (page {page} unanswered; \
                                 listing counts toward the server's `startup_timeout_ms`)",
                                limit.as_millis()
                            ),
                        )
                        .await);
                }
            };
            let listed = listed.map_err(|err| McpError::Request {
                server: self.name().to_string(),
                reason: format!(
                    "listing its tools failed: {}{}",
                    service_error(&err),
                    connection.stderr_tail()
                ),
            })?;
            tools.extend(listed.tools);
            match listed.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        self.inner.listing_failures.store(0, Ordering::SeqCst);
        let info = peer.peer_info();
        let implementation = info.as_ref().and_then(|info| info.server_info.clone());
        Ok(ServerSnapshot {
            server: self.name().to_string(),
            server_name: implementation.as_ref().map(|i| i.name.clone()),
            title: implementation.as_ref().and_then(|i| i.title.clone()),
            version: implementation.as_ref().map(|i| i.version.clone()),
            instructions: info.as_ref().and_then(|info| info.instructions.clone()),
            tools,
        })
    }

    /// Calls tool `tool` (its own name) with `arguments`. Cancelling `cancel` drops the
    /// request, which sends the server `notifications/cancelled`; when the call's `deadline`
    /// has passed by then, the server is taken for hung and started again for the next call.
    /// A server that dies during the call fails it, saying so, and is started again next time.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
        deadline: Option<Instant>,
    ) -> Result<CallToolResult, McpError> {
        let connection = self.running().await?;
        let peer = connection.peer();
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(arguments);
        let answered = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            answer = peer.call_tool(params) => Some(answer),
        };
        match answered {
            Some(Ok(result)) => Ok(result),
            Some(Err(err)) => {
                let closed = connection.service.is_closed() || peer.is_transport_closed();
                // Give a dying process a moment to be seen as closed.
                let closed = closed || {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    connection.service.is_closed() || peer.is_transport_closed()
                };
                if closed {
                    connection.last_words().await;
                    let why = format!(
                        "it stopped during a call of `{tool}` ({err}){}",
                        connection.stderr_tail()
                    );
                    self.stop(why.clone()).await;
                    Err(McpError::Request {
                        server: self.name().to_string(),
                        reason: format!(
                            "{why}. The call failed; the server is started again for the next call"
                        ),
                    })
                } else {
                    Err(McpError::Request {
                        server: self.name().to_string(),
                        reason: format!("the call of `{tool}` failed: {}", service_error(&err)),
                    })
                }
            }
            None => {
                let timed_out = deadline.is_some_and(|d| Instant::now() >= d);
                if timed_out {
                    self.stop(format!(
                        "it did not answer a call of `{tool}` within the call's time limit"
                    ))
                    .await;
                }
                Err(McpError::Request {
                    server: self.name().to_string(),
                    reason: format!("the call of `{tool}` was cancelled"),
                })
            }
        }
    }

    /// Ends the connection (the server's process with it); later uses fail.
    pub async fn close(&self) {
        let previous = std::mem::replace(&mut *self.inner.state.lock().await, State::Closed);
        if let State::Running(connection) = previous
            && let Ok(mut connection) = Arc::try_unwrap(connection)
        {
            let _ = connection
                .service
                .close_with_timeout(Duration::from_secs(2))
                .await;
        }
    }
}

/// What a failed request says: an answer over the limit of one message told as such, any
/// other error as rmcp words it.
fn service_error(err: &ServiceError) -> String {
    if let ServiceError::McpError(data) = err
        && data
            .data
            .as_ref()
            .and_then(|data| data.get("qilin"))
            .is_some_and(|kind| kind == OVERSIZED)
    {
        return data.message.to_string();
    }
    err.to_string()
}

/// `${NAME}` in `value` replaced by the variable from Qilin's environment.
fn expand(value: &str, server: &str, field: &str) -> Result<String, McpError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[at..]);
            return Ok(out);
        };
        let name = &after[..end];
        let found = std::env::var(name).map_err(|_| McpError::MissingVariable {
            server: server.to_string(),
            variable: name.to_string(),
            field: field.to_string(),
        })?;
        out.push_str(&found);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn expanded(
    values: &BTreeMap<String, String>,
    server: &str,
    section: &str,
) -> Result<Vec<(String, String)>, McpError> {
    values
        .iter()
        .map(|(key, value)| {
            Ok((
                key.clone(),
                expand(value, server, &format!("{section}.{key}"))?,
            ))
        })
        .collect()
}

/// A command as written: a bare name is looked up on `PATH`; a path with a `/` is relative to
/// the workspace.
fn program(command: &str, workspace: &Path) -> std::path::PathBuf {
    if command.contains('/') {
        workspace.join(command)
    } else {
        std::path::PathBuf::from(command)
    }
}

async fn start(server: &McpServer, watcher: Watcher) -> Result<Connection, McpError> {
    let failed = |reason: String| McpError::Start {
        server: server.name.clone(),
        reason,
    };
    let stderr: Arc<Mutex<VecDeque<String>>> = Arc::default();
    let (stderr_end, stderr_ended) = tokio::sync::watch::channel(false);
    let (service, process_id) = match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(program(command, &server.workspace));
            cmd.args(args).current_dir(cwd).env_clear();
            for name in INHERITED_ENV {
                if let Some(value) = std::env::var_os(name) {
                    cmd.env(name, value);
                }
            }
            cmd.envs(expanded(env, &server.name, "env")?);
            cmd.stderr(Stdio::piped());
            let started = crate::stdio::start(cmd, MAX_MESSAGE_BYTES)
                .map_err(|err| failed(format!("`{command}` could not be run: {err}")))?;
            let (transport, process_id) = (started.transport, started.process_id);
            if let Some(err) = started.stderr {
                let lines = Arc::clone(&stderr);
                tokio::spawn(async move {
                    let mut reader = tokio::io::BufReader::new(err).lines();
                    while let Ok(Some(line)) = reader.next_line().await {
                        let mut kept = lines.lock();
                        if kept.len() == STDERR_LINES {
                            kept.pop_front();
                        }
                        kept.push_back(line.chars().take(300).collect());
                    }
                    stderr_end.send_replace(true);
                });
            }
            let served = tokio::time::timeout(server.startup_timeout, watcher.serve(transport))
                .await
                .map_err(|_| {
                    failed(format!(
                        "it did not complete the MCP handshake within {} ms{}",
                        server.startup_timeout.as_millis(),
                        tail(&stderr)
                    ))
                })?;
            let service = match served {
                Ok(service) => service,
                Err(err) => {
                    // Let the process's last words arrive.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    return Err(failed(format!("{err}{}", tail(&stderr))));
                }
            };
            (service, process_id)
        }
        McpTransport::Http { url, headers } => {
            let mut map = HashMap::new();
            for (name, value) in expanded(headers, &server.name, "headers")? {
                let header = http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|err| failed(format!("header `{name}` is not valid: {err}")))?;
                let value = http::HeaderValue::from_str(&value).map_err(|err| {
                    failed(format!("the value of header `{name}` is not valid: {err}"))
                })?;
                map.insert(header, value);
            }
            let transport = StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(map),
            );
            let service = tokio::time::timeout(server.startup_timeout, watcher.serve(transport))
                .await
                .map_err(|_| {
                    failed(format!(
                        "{url} did not complete the MCP handshake within {} ms",
                        server.startup_timeout.as_millis()
                    ))
                })?
                .map_err(|err| failed(format!("{url}: {err}")))?;
            (service, None)
        }
    };
    Ok(Connection {
        service,
        process_id,
        stderr,
        stderr_ended,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_keeps_failing_to_start_is_tried_again_less_and_less_often() {
        let delays: Vec<u64> = (1..=10)
            .map(|n| RESTART_BACKOFF.delay(n).as_secs())
            .collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]);
        assert_eq!(RESTART_BACKOFF.delay(u32::MAX), Duration::from_secs(300));
    }

    #[tokio::test]
    async fn after_a_failed_start_uses_fail_at_once_until_the_wait_is_over() {
        let workspace = tempfile::tempdir().unwrap();
        let client = McpClient::new(McpServer {
            name: "gone".to_string(),
            transport: McpTransport::Stdio {
                command: "./no-such-server".to_string(),
                args: Vec::new(),
                env: BTreeMap::new(),
                cwd: workspace.path().to_path_buf(),
            },
            direct: Vec::new(),
            startup_timeout: Duration::from_secs(5),
            declared_in: workspace.path().join("a.agent"),
            workspace: workspace.path().to_path_buf(),
        });
        let first = client.ensure_started().await.unwrap_err();
        assert!(matches!(first, McpError::Start { .. }), "{first}");
        let waiting = client.ensure_started().await.unwrap_err();
        assert!(
            matches!(
                waiting,
                McpError::Down {
                    retry_in_secs: 1,
                    ..
                }
            ),
            "{waiting:?}"
        );
        assert_eq!(
            waiting.to_string(),
            "MCP server `gone` could not be started: `./no-such-server` could not be run: No such file or directory (os error 2). It is tried again in 1 s (between turns, or by a call then)"
        );
        let call = client
            .call("any", Map::new(), &CancellationToken::new(), None)
            .await
            .unwrap_err();
        assert!(matches!(call, McpError::Down { .. }), "{call:?}");
        assert!(!client.take_tools_changed());
        assert_eq!(client.starts(), 0);
    }

    #[test]
    fn variables_are_read_from_the_environment_and_a_missing_one_is_named() {
        // PATH is set wherever tests run.
        let path = std::env::var("PATH").unwrap();
        assert_eq!(
            expand("a ${PATH} b", "s", "env.X").unwrap(),
            format!("a {path} b")
        );
        assert_eq!(
            expand("no variables", "s", "env.X").unwrap(),
            "no variables"
        );
        let missing = expand(
            "Bearer ${QILIN_TEST_SURELY_UNSET}",
            "docs",
            "headers.Authorization",
        )
        .unwrap_err();
        assert_eq!(
            missing.to_string(),
            "MCP server `docs` needs the environment variable `QILIN_TEST_SURELY_UNSET` (its `headers.Authorization` reads `${QILIN_TEST_SURELY_UNSET}`), which is not set"
        );
    }
}
