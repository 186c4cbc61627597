//! One running language server: its process (started through the sandbox helper, or in a
//! process group of its own when the sandbox is off), JSON-RPC over its stdin and stdout with
//! `Content-Length` framing, the documents opened on it, the diagnostics it published and the
//! progress it reports.

use crate::sandbox::ServerLaunch;
use crate::uri::{path_to_uri, uri_to_path};
use lsp_types::notification::Notification;
use lsp_types::request::Request;
use lsp_types::{Diagnostic, Uri};
use parking_lot::Mutex;
use qilin_sandbox::Sandbox;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe::Sender as PipeSender;
use tokio::sync::{oneshot, watch};

/// Why a request to a server got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallError {
    /// The server exited (or closed its output) before answering.
    Crashed(String),
    /// It did not answer within the time allowed.
    TimedOut,
    /// It answered with an error.
    Server(String),
}

type Reply = Result<Value, CallError>;

/// What a server published for one document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Published {
    /// The document version the server said they are for, when it said.
    pub version: Option<i32>,
    /// How many times it published for the document (to tell a fresh publish from an old one).
    pub count: u64,
    /// The diagnostics.
    pub diagnostics: Vec<Diagnostic>,
}

/// What syncing a file did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Synced {
    /// The document's version on the server.
    pub version: i32,
    /// Whether its text was sent (opened, or changed).
    pub changed: bool,
    /// Whether it is the first document opened on the server (which may start loading the
    /// project).
    pub first_document: bool,
}

/// A document open on the server.
struct OpenDocument {
    version: i32,
    text: String,
}

/// The state the reader task and the callers share.
struct Shared {
    pending: Mutex<HashMap<i64, oneshot::Sender<Reply>>>,
    /// Active progress: token → its latest title and message.
    progress: Mutex<HashMap<String, String>>,
    diagnostics: Mutex<HashMap<String, Published>>,
    /// Bumped on every publish and progress change, so waiters wake.
    published: watch::Sender<u64>,
    /// Why it died, once it did.
    death: Mutex<Option<String>>,
    dead: AtomicBool,
}

impl Shared {
    fn die(&self, why: String) {
        if self.dead.swap(true, Ordering::SeqCst) {
            return;
        }
        *self.death.lock() = Some(why.clone());
        for (_, waiter) in self.pending.lock().drain() {
            let _ = waiter.send(Err(CallError::Crashed(why.clone())));
        }
        self.published.send_modify(|n| *n += 1);
    }
}

/// A running language server.
pub(crate) struct Server {
    /// Its command's name, e.g. `pyright-langserver`.
    pub command: String,
    /// Its process id (and process group id); the sandbox helper's when it runs confined.
    pub pid: Option<u32>,
    /// Whether it runs inside the sandbox.
    pub confined: bool,
    /// Its sandbox, whose private temp folder (its caches) lives as long as it does.
    _sandbox: Sandbox,
    root: PathBuf,
    writer: tokio::sync::Mutex<PipeSender>,
    next_id: AtomicI64,
    shared: Arc<Shared>,
    documents: tokio::sync::Mutex<HashMap<PathBuf, OpenDocument>>,
    /// Whether `initialize` was answered.
    initialized: AtomicBool,
    capabilities: Mutex<Value>,
}

impl Drop for Server {
    fn drop(&mut self) {
        // The whole process group: a server's own helpers (a type checker's workers) too. A
        // confined server's group is its sandbox helper's, whose end ends the server's PID
        // namespace and everything in it.
        if let Some(pid) = self.pid
            && let Ok(pid) = i32::try_from(pid)
        {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

impl Server {
    /// Starts the server `launch` prepared (its stdout piped here, its stderr dropped), for
    /// the workspace `root`.
    pub fn spawn(launch: ServerLaunch, command: &str, root: &Path) -> std::io::Result<Arc<Server>> {
        let ServerLaunch {
            command: mut cmd,
            input,
            sandbox,
            confined,
        } = launch;
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        // The child has its own copy of the command's descriptors (the read end of `input`).
        drop(cmd);
        let stdin = tokio::net::unix::pipe::Sender::from_owned_fd(input.into())?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("the server's stdout was not piped"))?;
        let (published, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            pending: Mutex::default(),
            progress: Mutex::default(),
            diagnostics: Mutex::default(),
            published,
            death: Mutex::default(),
            dead: AtomicBool::new(false),
        });
        let server = Arc::new(Server {
            command: command.to_string(),
            pid: child.id(),
            confined,
            _sandbox: sandbox,
            root: root.to_path_buf(),
            writer: tokio::sync::Mutex::new(stdin),
            next_id: AtomicI64::new(1),
            shared: Arc::clone(&shared),
            documents: tokio::sync::Mutex::default(),
            initialized: AtomicBool::new(false),
            capabilities: Mutex::new(Value::Null),
        });
        let reader_shared = Arc::clone(&shared);
        let replies = Arc::downgrade(&server);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            loop {
                match read_message(&mut reader).await {
                    Ok(Some(message)) => handle(&reader_shared, &replies, message).await,
                    Ok(None) => break,
                    Err(err) => {
                        reader_shared.die(format!("its output could not be read: {err}"));
                        break;
                    }
                }
            }
            reader_shared.die("it closed its output".to_string());
        });
        let waiter_shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let status = child.wait().await;
            let why = match status {
                Ok(status) => format!("it exited ({status})"),
                Err(err) => format!("it could not be waited for: {err}"),
            };
            waiter_shared.die(why);
        });
        Ok(server)
    }

    /// Whether the process is gone.
    pub fn is_dead(&self) -> bool {
        self.shared.dead.load(Ordering::SeqCst)
    }

    /// Why it died, when it did.
    pub fn death(&self) -> Option<String> {
        self.shared.death.lock().clone()
    }

    /// Whether `initialize` was answered.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::SeqCst)
    }

    /// Its latest progress message while it reports work in progress.
    pub fn progress(&self) -> Option<String> {
        let progress = self.shared.progress.lock();
        let mut messages: Vec<&String> = progress.values().collect();
        messages.sort();
        messages.first().map(|m| (*m).clone())
    }

    /// Waits until the server reports no work in progress, at most `limit`. With `opened`
    /// (its first file was just opened, which may start loading the project), it first gives
    /// the server `grace` to say something: progress to wait for, or anything else (the
    /// file's diagnostics) that shows it took the file in.
    pub async fn settle(&self, opened: bool, grace: Duration, limit: Duration) {
        let mut changes = self.shared.published.subscribe();
        let start = tokio::time::Instant::now();
        if opened && self.progress().is_none() {
            // Whatever it says first — progress, or the file's diagnostics when it reports no
            // progress — ends the grace.
            let until = start + grace;
            if tokio::time::timeout_at(until, changes.changed())
                .await
                .is_err()
            {
                return;
            }
        }
        let until = start + limit;
        while self.progress().is_some() && !self.is_dead() {
            if tokio::time::timeout_at(until, changes.changed())
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// Sends `initialize` with the workspace root and `options`, then `initialized`.
    pub async fn initialize(
        &self,
        options: Option<Value>,
        timeout: Duration,
    ) -> Result<(), CallError> {
        let root_uri = path_to_uri(&self.root);
        let name = self.root.file_name().map_or_else(
            || "workspace".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        // A confined server lives in a PID namespace of its own, where Qilin's process id names
        // no process (or another one): a server watching it would exit at once. Its sandbox
        // ends it with Qilin instead.
        let process_id = (!self.confined).then(std::process::id);
        let params = json!({
            "processId": process_id,
            "clientInfo": {"name": "qilin"},
            "rootUri": root_uri,
            "rootPath": self.root.display().to_string(),
            "workspaceFolders": [{"uri": root_uri, "name": name}],
            "initializationOptions": options,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "window": {"workDoneProgress": true},
                "workspace": {
                    "configuration": true,
                    "workspaceFolders": true,
                    "symbol": {"dynamicRegistration": false}
                },
                "textDocument": {
                    "synchronization": {"dynamicRegistration": false, "didSave": false},
                    "definition": {"linkSupport": true},
                    "implementation": {"linkSupport": true},
                    "references": {},
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                    "callHierarchy": {},
                    "publishDiagnostics": {"versionSupport": true, "relatedInformation": false}
                }
            }
        });
        let reply = self
            .raw_request(lsp_types::request::Initialize::METHOD, params, timeout)
            .await?;
        *self.capabilities.lock() = reply.get("capabilities").cloned().unwrap_or(Value::Null);
        self.notify::<lsp_types::notification::Initialized>(lsp_types::InitializedParams {})
            .await?;
        self.initialized.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Whether the server said it offers `capability` (a key of its capabilities, e.g.
    /// `callHierarchyProvider`); `true` when it said nothing about it.
    pub fn offers(&self, capability: &str) -> bool {
        match self.capabilities.lock().get(capability) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(on)) => *on,
            Some(_) => true,
        }
    }

    /// Sends request `R` and waits for its result.
    pub async fn request<R: Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, CallError> {
        let params = serde_json::to_value(params)
            .map_err(|err| CallError::Server(format!("the request could not be encoded: {err}")))?;
        let reply = self.raw_request(R::METHOD, params, timeout).await?;
        serde_json::from_value(reply).map_err(|err| {
            CallError::Server(format!(
                "its answer to `{}` could not be read: {err}",
                R::METHOD
            ))
        })
    }

    async fn raw_request(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        if self.is_dead() {
            return Err(CallError::Crashed(self.death().unwrap_or_default()));
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.shared.pending.lock().insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(err) = self.send(&message).await {
            self.shared.pending.lock().remove(&id);
            return Err(err);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(CallError::Crashed(self.death().unwrap_or_default())),
            Err(_) => {
                self.shared.pending.lock().remove(&id);
                let cancel =
                    json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}});
                let _ = self.send(&cancel).await;
                Err(CallError::TimedOut)
            }
        }
    }

    /// Sends notification `N`.
    pub async fn notify<N: Notification>(&self, params: N::Params) -> Result<(), CallError> {
        let message = json!({"jsonrpc": "2.0", "method": N::METHOD, "params": params});
        self.send(&message).await
    }

    async fn send(&self, message: &Value) -> Result<(), CallError> {
        let body = message.to_string();
        let mut writer = self.writer.lock().await;
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let written = async {
            writer.write_all(frame.as_bytes()).await?;
            writer.flush().await
        }
        .await;
        written.map_err(|err| {
            self.shared
                .die(format!("its input could not be written: {err}"));
            CallError::Crashed(self.death().unwrap_or_default())
        })
    }

    /// Makes the server see `path` as `text` (its current content on disk): opens it the first
    /// time, sends the whole new text when it changed.
    pub async fn sync(
        &self,
        path: &Path,
        language_id: &str,
        text: &str,
    ) -> Result<Synced, CallError> {
        let mut documents = self.documents.lock().await;
        let first = documents.is_empty();
        let uri = uri_of(path)?;
        match documents.get_mut(path) {
            Some(open) if open.text == text => Ok(Synced {
                version: open.version,
                changed: false,
                first_document: false,
            }),
            Some(open) => {
                open.version += 1;
                open.text = text.to_string();
                let version = open.version;
                self.notify::<lsp_types::notification::DidChangeTextDocument>(
                    lsp_types::DidChangeTextDocumentParams {
                        text_document: lsp_types::VersionedTextDocumentIdentifier { uri, version },
                        content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text: text.to_string(),
                        }],
                    },
                )
                .await?;
                Ok(Synced {
                    version,
                    changed: true,
                    first_document: false,
                })
            }
            None => {
                self.notify::<lsp_types::notification::DidOpenTextDocument>(
                    lsp_types::DidOpenTextDocumentParams {
                        text_document: lsp_types::TextDocumentItem {
                            uri,
                            language_id: language_id.to_string(),
                            version: 1,
                            text: text.to_string(),
                        },
                    },
                )
                .await?;
                documents.insert(
                    path.to_path_buf(),
                    OpenDocument {
                        version: 1,
                        text: text.to_string(),
                    },
                );
                Ok(Synced {
                    version: 1,
                    changed: true,
                    first_document: first,
                })
            }
        }
    }

    /// The diagnostics last published for `path`.
    pub fn published(&self, path: &Path) -> Option<Published> {
        self.shared
            .diagnostics
            .lock()
            .get(&document_key(path))
            .cloned()
    }

    /// Waits up to `limit` for diagnostics of `path` published after `since` publishes of it
    /// (and for `version` when the server names versions); the latest published when none
    /// arrives, with `false`.
    pub async fn fresh_diagnostics(
        &self,
        path: &Path,
        version: i32,
        since: u64,
        limit: Duration,
    ) -> (Option<Published>, bool) {
        let mut changes = self.shared.published.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let current = self.published(path);
            if let Some(published) = &current {
                let fresh = match published.version {
                    Some(v) => v >= version && published.count > since,
                    None => published.count > since,
                };
                if fresh {
                    return (current, true);
                }
            }
            if self.is_dead() {
                return (current, false);
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => continue,
                _ => return (self.published(path), false),
            }
        }
    }
}

fn uri_of(path: &Path) -> Result<Uri, CallError> {
    path_to_uri(path)
        .parse()
        .map_err(|err| CallError::Server(format!("`{}` has no valid URI: {err}", path.display())))
}

/// Reads one framed message; `None` at the end of the stream.
async fn read_message<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Option<Value>> {
    let mut length: Option<usize> = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let line = line.trim_end();
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
    let length = length.unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidData, err))
}

/// Handles one message from the server: a reply, a request to the client, or a notification.
async fn handle(shared: &Shared, server: &std::sync::Weak<Server>, message: Value) {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").cloned();
    match (method, id) {
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let Some(waiter) = shared.pending.lock().remove(&id) else {
                return;
            };
            let reply = match message.get("error") {
                Some(error) => Err(CallError::Server(
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("an error without a message")
                        .to_string(),
                )),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = waiter.send(reply);
        }
        (Some(method), Some(id)) => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let result = match method {
                "workspace/configuration" => Ok(Value::Array(
                    params
                        .get("items")
                        .and_then(Value::as_array)
                        .map(|items| items.iter().map(|_| Value::Null).collect())
                        .unwrap_or_default(),
                )),
                "window/workDoneProgress/create" => {
                    if let Some(token) = params.get("token") {
                        shared
                            .progress
                            .lock()
                            .insert(token_key(token), "starting".to_string());
                    }
                    Ok(Value::Null)
                }
                "client/registerCapability"
                | "client/unregisterCapability"
                | "window/showMessageRequest"
                | "workspace/diagnostic/refresh"
                | "workspace/semanticTokens/refresh"
                | "workspace/inlayHint/refresh"
                | "workspace/codeLens/refresh" => Ok(Value::Null),
                "workspace/workspaceFolders" => match server.upgrade() {
                    Some(server) => Ok(json!([{
                        "uri": path_to_uri(&server.root),
                        "name": server.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
                    }])),
                    None => Ok(Value::Null),
                },
                _ => Err(
                    json!({"code": -32601, "message": format!("`{method}` is not supported by this client")}),
                ),
            };
            let reply = match result {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            if let Some(server) = server.upgrade() {
                let _ = server.send(&reply).await;
            }
        }
        (Some(method), None) => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            match method {
                "textDocument/publishDiagnostics" => {
                    if let Ok(params) =
                        serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(params)
                    {
                        let mut diagnostics = shared.diagnostics.lock();
                        let key = match uri_to_path(params.uri.as_str()) {
                            Some(path) => document_key(&path),
                            None => params.uri.as_str().to_string(),
                        };
                        let entry = diagnostics.entry(key).or_default();
                        entry.version = params.version;
                        entry.count += 1;
                        entry.diagnostics = params.diagnostics;
                    }
                    shared.published.send_modify(|n| *n += 1);
                }
                "$/progress" => {
                    let token = params.get("token").map(token_key).unwrap_or_default();
                    let value = params.get("value").cloned().unwrap_or(Value::Null);
                    match serde_json::from_value::<lsp_types::WorkDoneProgress>(value) {
                        Ok(lsp_types::WorkDoneProgress::Begin(begin)) => {
                            let text = match begin.message {
                                Some(message) => format!("{}: {message}", begin.title),
                                None => begin.title,
                            };
                            shared.progress.lock().insert(token, text);
                            shared.published.send_modify(|n| *n += 1);
                        }
                        Ok(lsp_types::WorkDoneProgress::Report(report)) => {
                            let mut progress = shared.progress.lock();
                            let entry = progress.entry(token).or_default();
                            if let Some(message) = report.message {
                                let title = entry.split(':').next().unwrap_or("").to_string();
                                *entry = if title.is_empty() {
                                    message
                                } else {
                                    format!("{title}: {message}")
                                };
                            }
                        }
                        Ok(lsp_types::WorkDoneProgress::End(_)) => {
                            shared.progress.lock().remove(&token);
                            shared.published.send_modify(|n| *n += 1);
                        }
                        Err(_) => {}
                    }
                }
                _ => {}
            }
        }
        (None, None) => {}
    }
}

/// How diagnostics are filed: by the file's path, whatever escapes the server's URI used.
fn document_key(path: &Path) -> String {
    path.display().to_string()
}

fn token_key(token: &Value) -> String {
    match token {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_are_read_by_their_length() {
        let body = r#"{"jsonrpc":"2.0","id":1,"result":null}"#;
        let text = format!(
            "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{body}Content-Length: 2\r\n\r\n{{}}",
            body.len()
        );
        let mut reader = BufReader::new(text.as_bytes());
        let first = read_message(&mut reader).await.unwrap().unwrap();
        assert_eq!(first["id"], 1);
        let second = read_message(&mut reader).await.unwrap().unwrap();
        assert_eq!(second, json!({}));
        assert!(read_message(&mut reader).await.unwrap().is_none());
    }
}
