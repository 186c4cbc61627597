//! The language servers of one workspace: one per language, started lazily on the first
//! request for it, restarted after a crash with back-off, and shared by every session of the
//! workspace in this process ([`LspWorkspace::shared`]); they are killed when the last session
//! lets go of the workspace.

use crate::config::{ConfigError, ServerSpec, language_id, workspace_servers};
use crate::convert::{self, Lines};
use crate::sandbox::{ServerSandbox, launch};
use crate::server::{CallError, Server};
use crate::uri::{path_to_uri, to_utf16};
use lsp_types::request::{
    CallHierarchyIncomingCalls, CallHierarchyOutgoingCalls, CallHierarchyPrepare,
    DocumentSymbolRequest, GotoDefinition, GotoImplementation, HoverRequest, References,
    WorkspaceSymbolRequest,
};
use lsp_types::{
    PartialResultParams, Position, TextDocumentIdentifier, TextDocumentPositionParams, Uri,
    WorkDoneProgressParams,
};
use parking_lot::Mutex;
use qilin_backoff::Backoff;
use qilin_protocol::lsp::{
    LspEmpty, LspEmptyReason, LspItem, LspOperation, LspOutput, LspServerState, LspServerStatus,
    LspStatusResponse,
};
use qilin_sandbox::SandboxHelper;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, LazyLock, Weak};
use std::time::{Duration, Instant};

/// How a workspace runs its servers.
#[derive(Debug, Clone)]
pub struct LspOptions {
    /// Where server commands are looked up, and the servers' `PATH`; the process's `PATH`
    /// when `None`.
    pub search_path: Option<OsString>,
    /// The longest a request waits for its answer.
    pub request_timeout: Duration,
    /// The longest a server may take to start (answer `initialize`).
    pub start_timeout: Duration,
    /// The longest a diagnostics read waits for the server to publish them for the file's
    /// current version.
    pub diagnostics_wait: Duration,
    /// The longest a request waits for the server to finish the work it reports in progress
    /// (loading a project, indexing) before it is asked anyway.
    pub index_wait: Duration,
    /// Whether servers run inside the sandbox, and through which helper.
    pub sandbox: ServerSandbox,
}

impl Default for LspOptions {
    fn default() -> Self {
        LspOptions {
            search_path: None,
            request_timeout: Duration::from_secs(30),
            start_timeout: Duration::from_secs(60),
            diagnostics_wait: Duration::from_secs(5),
            index_wait: Duration::from_secs(20),
            sandbox: ServerSandbox::Confined(SandboxHelper::new(
                "qilin",
                [OsString::from("sandbox-exec")],
            )),
        }
    }
}

/// A request of the `lsp` tool.
#[derive(Debug, Clone)]
pub struct LspQuery {
    /// What to ask.
    pub operation: LspOperation,
    /// The file, workspace-relative or absolute inside the workspace.
    pub path: Option<String>,
    /// The line, from 1.
    pub line: Option<u32>,
    /// The character, from 1, in Unicode scalar values.
    pub character: Option<u32>,
    /// The workspace-symbol query.
    pub query: Option<String>,
}

/// Why a request was refused before any server was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LspError {
    /// The arguments are wrong: a missing position, a path outside the workspace, ….
    #[error("{0}")]
    InvalidArguments(String),
    /// The workspace's `.qilin/lsp.yaml` cannot be used.
    #[error("{0}")]
    Config(#[from] ConfigError),
}

/// How long a server may take, after its first file is opened, to begin reporting the work
/// it starts for it (loading the project).
const OPEN_GRACE: Duration = Duration::from_secs(3);

/// The most items an answer carries; the rest is spilled.
pub const MAX_ITEMS: usize = 100;

/// The wait before restarting a server that crashed `crashes` times in a row: none after the
/// first crash, then 1 s doubling up to a minute.
fn restart_delay(crashes: u32) -> Duration {
    match crashes {
        0 | 1 => Duration::ZERO,
        n => Backoff::new(Duration::from_secs(1), Duration::from_secs(60)).delay(n - 1),
    }
}

/// One language's server and what became of it.
struct Slot {
    spec: ServerSpec,
    state: Mutex<SlotState>,
    /// Held while the server starts, so concurrent callers start it once.
    starting: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct SlotState {
    server: Option<Arc<Server>>,
    /// Crashes since the last answered request.
    crashes: u32,
    crashed_at: Option<Instant>,
    restarts: u32,
    last_error: Option<String>,
    /// Whether a start is under way.
    launching: bool,
}

impl SlotState {
    /// Notes that the running server died, once.
    fn note_death(&mut self) {
        if let Some(server) = &self.server
            && server.is_dead()
        {
            self.last_error = Some(format!(
                "`{}` crashed: {}",
                server.command,
                server.death().unwrap_or_default()
            ));
            self.server = None;
            self.crashes += 1;
            self.crashed_at = Some(Instant::now());
        }
    }
}

/// The language servers of one workspace.
pub struct LspWorkspace {
    root: PathBuf,
    options: LspOptions,
    slots: Result<Vec<Slot>, ConfigError>,
}

/// A workspace root and whether its servers run confined.
type LiveKey = (PathBuf, bool);

/// The live servers of each workspace root, confined and not: a session whose sandbox is on
/// never shares the unconfined servers of one whose sandbox is off.
static LIVE: LazyLock<Mutex<HashMap<LiveKey, Weak<LspWorkspace>>>> = LazyLock::new(Mutex::default);

/// The workspace root as the servers see it: canonical when it can be.
fn canonical(root: &Path) -> PathBuf {
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

impl LspWorkspace {
    /// The servers of `root`, configured from its `.qilin/lsp.yaml` (a file that cannot be used
    /// makes every request fail, saying why); none is started yet.
    pub fn new(root: &Path, options: LspOptions) -> Self {
        let root = canonical(root);
        let slots = workspace_servers(&root).map(|specs| {
            specs
                .into_iter()
                .map(|spec| Slot {
                    spec,
                    state: Mutex::default(),
                    starting: tokio::sync::Mutex::new(()),
                })
                .collect()
        });
        LspWorkspace {
            root,
            options,
            slots,
        }
    }

    /// The servers of `root` shared by this process's sessions: the live ones when a session
    /// holds them and they are confined as `options` asks (sandboxed or not), else new ones
    /// with `options`.
    pub fn shared(root: &Path, options: LspOptions) -> Arc<LspWorkspace> {
        let root = canonical(root);
        let key = (root.clone(), options.sandbox.is_confined());
        let mut live = LIVE.lock();
        live.retain(|_, workspace| workspace.strong_count() > 0);
        if let Some(workspace) = live.get(&key).and_then(Weak::upgrade) {
            return workspace;
        }
        let workspace = Arc::new(LspWorkspace::new(&root, options));
        live.insert(key, Arc::downgrade(&workspace));
        workspace
    }

    /// The servers of `root` when a session of this process holds them: the sandboxed ones
    /// when both kinds are live.
    pub fn live(root: &Path) -> Option<Arc<LspWorkspace>> {
        let root = canonical(root);
        let live = LIVE.lock();
        [true, false]
            .into_iter()
            .find_map(|confined| live.get(&(root.clone(), confined)).and_then(Weak::upgrade))
    }

    /// The workspace root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Starts every installed server that is not running (as a first request for its
    /// language would), one after another.
    pub async fn start_all(&self) {
        let Ok(slots) = self.slots() else { return };
        for slot in slots {
            if slot
                .spec
                .resolve(self.options.search_path.as_ref())
                .is_some()
            {
                let _ = self.server(slot).await;
            }
        }
    }

    /// Where each server stands.
    pub fn status(&self) -> Result<LspStatusResponse, ConfigError> {
        let slots = self.slots.as_ref().map_err(Clone::clone)?;
        let servers = slots
            .iter()
            .map(|slot| {
                let mut state = slot.state.lock();
                state.note_death();
                let installed = slot
                    .spec
                    .resolve(self.options.search_path.as_ref())
                    .is_some();
                let (server_state, pid, progress) = match &state.server {
                    Some(server) if !server.is_initialized() => {
                        (LspServerState::Starting, server.pid, None)
                    }
                    Some(server) => match server.progress() {
                        Some(progress) => (LspServerState::Indexing, server.pid, Some(progress)),
                        None => (LspServerState::Ready, server.pid, None),
                    },
                    None if state.launching => (LspServerState::Starting, None, None),
                    None if !installed => (LspServerState::NotInstalled, None, None),
                    None if state.crashes > 0 => (LspServerState::Crashed, None, None),
                    None => (LspServerState::Stopped, None, None),
                };
                LspServerStatus {
                    language: slot.spec.language.clone(),
                    server: slot.spec.display_command(self.options.search_path.as_ref()),
                    state: server_state,
                    pid,
                    restarts: state.restarts,
                    sandboxed: state
                        .server
                        .as_ref()
                        .map_or(self.options.sandbox.is_confined(), |server| server.confined),
                    network: slot.spec.network || !self.options.sandbox.is_confined(),
                    progress,
                    last_error: state.last_error.clone(),
                    hint: (!installed).then(|| slot.spec.hint.clone()).flatten(),
                }
            })
            .collect();
        Ok(LspStatusResponse {
            workspace: self.root.display().to_string(),
            servers,
        })
    }

    /// Resolves `path` inside the workspace: `(absolute, workspace-relative)`; a path outside
    /// it, or one that does not name a file, is refused.
    pub fn resolve(&self, path: &str) -> Result<(PathBuf, String), LspError> {
        let given = Path::new(path);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root.join(given)
        };
        let mut normal = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        let outside = || {
            LspError::InvalidArguments(format!(
                "`{path}` is outside the workspace {}; give a path relative to the workspace root \
                 or an absolute path inside it",
                self.root.display()
            ))
        };
        if !normal.starts_with(&self.root) {
            return Err(outside());
        }
        let real = normal.canonicalize().map_err(|_| {
            LspError::InvalidArguments(format!(
                "`{path}` does not exist; give a file inside the workspace"
            ))
        })?;
        if !real.starts_with(&self.root) {
            return Err(outside());
        }
        if !real.is_file() {
            return Err(LspError::InvalidArguments(format!(
                "`{path}` is not a file; give a source file inside the workspace"
            )));
        }
        let relative = real
            .strip_prefix(&self.root)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok((real, relative))
    }

    fn slots(&self) -> Result<&[Slot], LspError> {
        self.slots
            .as_deref()
            .map_err(|err| LspError::Config(err.clone()))
    }

    fn slot_for(&self, relative: &str) -> Result<Option<&Slot>, LspError> {
        Ok(self
            .slots()?
            .iter()
            .find(|slot| slot.spec.serves(Path::new(relative))))
    }

    /// The running server of `slot`, starting (or restarting) it when needed.
    async fn server(&self, slot: &Slot) -> Result<Arc<Server>, LspEmpty> {
        let Some((program, command, args)) = slot.spec.resolve(self.options.search_path.as_ref())
        else {
            let names: Vec<String> = slot
                .spec
                .candidates
                .iter()
                .map(|(p, _)| format!("`{p}`"))
                .collect();
            let missing = match names.as_slice() {
                [one] => format!("{one} is not on PATH"),
                many => format!("neither {} is on PATH", many.join(" nor ")),
            };
            return Err(LspEmpty {
                reason: LspEmptyReason::NoServer,
                message: format!(
                    "the {} language server is not installed: {missing}",
                    slot.spec.language
                ),
                hint: slot.spec.hint.clone(),
            });
        };
        let _starting = slot.starting.lock().await;
        {
            let mut state = slot.state.lock();
            state.note_death();
            if let Some(server) = &state.server {
                return Ok(Arc::clone(server));
            }
            if let Some(at) = state.crashed_at {
                let wait = restart_delay(state.crashes);
                let elapsed = at.elapsed();
                if elapsed < wait {
                    return Err(LspEmpty {
                        reason: LspEmptyReason::Crashed,
                        message: format!(
                            "`{command}` crashed {} times in a row ({}); it is restarted on a request after {} s",
                            state.crashes,
                            state.last_error.clone().unwrap_or_default(),
                            (wait - elapsed).as_secs().max(1)
                        ),
                        hint: None,
                    });
                }
                state.restarts += 1;
            }
            state.launching = true;
        }
        let started = async {
            let sandbox = self.options.sandbox.clone();
            let root = self.root.clone();
            let network = slot.spec.network;
            let search_path = self.options.search_path.clone();
            let prepared = tokio::task::spawn_blocking(move || {
                launch(
                    &sandbox,
                    &program,
                    &args,
                    &root,
                    network,
                    search_path.as_ref(),
                )
            })
            .await
            .map_err(|err| CallError::Crashed(format!("its start was abandoned: {err}")))?
            .map_err(CallError::Crashed)?;
            let server = Server::spawn(prepared, &command, &self.root)
                .map_err(|err| CallError::Crashed(format!("it could not be started: {err}")))?;
            server
                .initialize(
                    slot.spec.initialization_options.clone(),
                    self.options.start_timeout,
                )
                .await?;
            Ok::<_, CallError>(server)
        }
        .await;
        let mut state = slot.state.lock();
        state.launching = false;
        match started {
            Ok(server) => {
                state.server = Some(Arc::clone(&server));
                Ok(server)
            }
            Err(err) => {
                let empty = match err {
                    CallError::TimedOut => LspEmpty {
                        reason: LspEmptyReason::TimedOut,
                        message: format!(
                            "`{command}` did not finish starting within {} s",
                            self.options.start_timeout.as_secs()
                        ),
                        hint: None,
                    },
                    CallError::Crashed(why) | CallError::Server(why) => LspEmpty {
                        reason: LspEmptyReason::Crashed,
                        message: format!("`{command}` failed to start: {why}"),
                        hint: None,
                    },
                };
                state.last_error = Some(empty.message.clone());
                state.crashes += 1;
                state.crashed_at = Some(Instant::now());
                Err(empty)
            }
        }
    }

    /// The server for the file at `relative`, when one is known and runs: `(slot, server)`.
    async fn server_for<'a>(
        &'a self,
        relative: &str,
    ) -> Result<Result<(&'a Slot, Arc<Server>), LspEmpty>, LspError> {
        let Some(slot) = self.slot_for(relative)? else {
            return Ok(Err(LspEmpty {
                reason: LspEmptyReason::NoServer,
                message: format!("no language server is known for `{relative}`"),
                hint: Some(format!(
                    "configure one in {} (`servers:` → a language with `command` and `patterns`)",
                    crate::LSP_WORKSPACE_FILE
                )),
            }));
        };
        Ok(self.server(slot).await.map(|server| (slot, server)))
    }

    /// Runs one `lsp` tool request.
    pub async fn run(&self, query: &LspQuery) -> Result<LspOutput, LspError> {
        let operation = query.operation;
        let mut output = LspOutput {
            operation,
            language: None,
            server: None,
            path: None,
            line: query.line,
            character: query.character,
            query: query.query.clone(),
            items: Vec::new(),
            hover: None,
            empty: None,
            total: 0,
            truncated: false,
            spill: None,
        };
        if operation.needs_position() && (query.line.is_none() || query.character.is_none()) {
            return Err(LspError::InvalidArguments(format!(
                "`{}` needs `path`, `line` and `character` (1-based, as `read` shows lines)",
                operation.as_str()
            )));
        }
        if query.line == Some(0) || query.character == Some(0) {
            return Err(LspError::InvalidArguments(
                "`line` and `character` count from 1".to_string(),
            ));
        }
        if operation == LspOperation::WorkspaceSymbols {
            let Some(text) = &query.query else {
                return Err(LspError::InvalidArguments(
                    "`workspace_symbols` needs `query`: the name (or part of it) to look for"
                        .to_string(),
                ));
            };
            return self
                .workspace_symbols(output, query.path.as_deref(), text)
                .await;
        }
        let Some(path) = &query.path else {
            return Err(LspError::InvalidArguments(format!(
                "`{}` needs `path`: a file inside the workspace",
                operation.as_str()
            )));
        };
        let (absolute, relative) = self.resolve(path)?;
        output.path = Some(relative.clone());
        let text = std::fs::read_to_string(&absolute).map_err(|err| {
            LspError::InvalidArguments(format!("`{relative}` cannot be read as text: {err}"))
        })?;
        if let (Some(line), true) = (query.line, operation.needs_position()) {
            let count = text.lines().count().max(1) as u32;
            if line > count {
                return Err(LspError::InvalidArguments(format!(
                    "`{relative}` has {count} lines; `line` {line} is past its end"
                )));
            }
        }
        let (slot, server) = match self.server_for(&relative).await? {
            Ok(found) => found,
            Err(empty) => {
                output.language = self.slot_for(&relative)?.map(|s| s.spec.language.clone());
                output.empty = Some(empty);
                return Ok(output);
            }
        };
        output.language = Some(slot.spec.language.clone());
        output.server = Some(server.command.clone());
        if let Some(capability) = capability(operation)
            && !server.offers(capability)
        {
            output.empty = Some(LspEmpty {
                reason: LspEmptyReason::NotFound,
                message: format!(
                    "`{}` does not offer `{}` for {}",
                    server.command,
                    operation.as_str(),
                    slot.spec.language
                ),
                hint: Some("use grep, or another operation".to_string()),
            });
            return Ok(output);
        }
        let answer = self.ask(slot, &server, query, &absolute, &text).await;
        self.finish(slot, &server, output, answer)
    }

    /// Asks `server` the question of `query` about the file at `absolute` (whose text is
    /// `text`, synchronised first).
    async fn ask(
        &self,
        slot: &Slot,
        server: &Server,
        query: &LspQuery,
        absolute: &Path,
        text: &str,
    ) -> Result<(Vec<LspItem>, Option<String>), CallError> {
        let language = language_id(&slot.spec.language, absolute);
        let before = server.published(absolute).map_or(0, |p| p.count);
        let synced = server.sync(absolute, &language, text).await?;
        let (version, changed) = (synced.version, synced.changed);
        server
            .settle(synced.first_document, OPEN_GRACE, self.options.index_wait)
            .await;
        let uri_text = path_to_uri(absolute);
        let uri: Uri = uri_text
            .parse()
            .map_err(|err| CallError::Server(format!("the file has no valid URI: {err}")))?;
        let document = TextDocumentIdentifier { uri: uri.clone() };
        let position = match (query.line, query.character) {
            (Some(line), Some(character)) => {
                let line_text = text.lines().nth(line as usize - 1).unwrap_or("");
                Position {
                    line: line - 1,
                    character: to_utf16(line_text, character),
                }
            }
            _ => Position::default(),
        };
        let at = TextDocumentPositionParams {
            text_document: document.clone(),
            position,
        };
        let timeout = self.options.request_timeout;
        let mut lines = Lines::new(&self.root);
        let work = WorkDoneProgressParams::default();
        let partial = PartialResultParams::default();
        let items = match query.operation {
            LspOperation::Definition => convert::definitions(
                &mut lines,
                server
                    .request::<GotoDefinition>(
                        lsp_types::GotoDefinitionParams {
                            text_document_position_params: at,
                            work_done_progress_params: work,
                            partial_result_params: partial,
                        },
                        timeout,
                    )
                    .await?,
            ),
            LspOperation::Implementation => convert::definitions(
                &mut lines,
                server
                    .request::<GotoImplementation>(
                        lsp_types::GotoDefinitionParams {
                            text_document_position_params: at,
                            work_done_progress_params: work,
                            partial_result_params: partial,
                        },
                        timeout,
                    )
                    .await?,
            ),
            LspOperation::References => convert::locations(
                &mut lines,
                server
                    .request::<References>(
                        lsp_types::ReferenceParams {
                            text_document_position: at,
                            work_done_progress_params: work,
                            partial_result_params: partial,
                            context: lsp_types::ReferenceContext {
                                include_declaration: true,
                            },
                        },
                        timeout,
                    )
                    .await?,
            ),
            LspOperation::Hover => {
                let hover = server
                    .request::<HoverRequest>(
                        lsp_types::HoverParams {
                            text_document_position_params: at,
                            work_done_progress_params: work,
                        },
                        timeout,
                    )
                    .await?;
                return Ok((Vec::new(), hover.and_then(|h| convert::hover(h.contents))));
            }
            LspOperation::DocumentSymbols => convert::document_symbols(
                &mut lines,
                &uri_text,
                server
                    .request::<DocumentSymbolRequest>(
                        lsp_types::DocumentSymbolParams {
                            text_document: document,
                            work_done_progress_params: work,
                            partial_result_params: partial,
                        },
                        timeout,
                    )
                    .await?,
            ),
            LspOperation::IncomingCalls | LspOperation::OutgoingCalls => {
                let prepared = server
                    .request::<CallHierarchyPrepare>(
                        lsp_types::CallHierarchyPrepareParams {
                            text_document_position_params: at,
                            work_done_progress_params: work.clone(),
                        },
                        timeout,
                    )
                    .await?
                    .unwrap_or_default();
                let mut items = Vec::new();
                for item in prepared {
                    if query.operation == LspOperation::IncomingCalls {
                        let calls = server
                            .request::<CallHierarchyIncomingCalls>(
                                lsp_types::CallHierarchyIncomingCallsParams {
                                    item,
                                    work_done_progress_params: work.clone(),
                                    partial_result_params: partial.clone(),
                                },
                                timeout,
                            )
                            .await?
                            .unwrap_or_default();
                        for call in calls {
                            // Where the caller calls: the line shows the call.
                            for range in &call.from_ranges {
                                items.push(convert::call_item(&mut lines, &call.from, *range));
                            }
                        }
                    } else {
                        let calls = server
                            .request::<CallHierarchyOutgoingCalls>(
                                lsp_types::CallHierarchyOutgoingCallsParams {
                                    item,
                                    work_done_progress_params: work.clone(),
                                    partial_result_params: partial.clone(),
                                },
                                timeout,
                            )
                            .await?
                            .unwrap_or_default();
                        for call in calls {
                            // The callee, where it is defined.
                            items.push(convert::call_item(
                                &mut lines,
                                &call.to,
                                call.to.selection_range,
                            ));
                        }
                    }
                }
                items
            }
            LspOperation::Diagnostics => {
                let published = match (changed, server.published(absolute)) {
                    (false, Some(published)) => Some(published),
                    _ => {
                        server
                            .fresh_diagnostics(
                                absolute,
                                version,
                                before,
                                self.options.diagnostics_wait,
                            )
                            .await
                            .0
                    }
                };
                let lines = &mut lines.with_text(absolute, text);
                published
                    .map(|p| {
                        p.diagnostics
                            .iter()
                            .map(|d| convert::diagnostic(lines, &uri_text, d))
                            .collect()
                    })
                    .unwrap_or_default()
            }
            LspOperation::WorkspaceSymbols => Vec::new(),
        };
        Ok((items, None))
    }

    /// Turns an answer (or its failure) into the output: sorted, capped, and saying why it is
    /// empty.
    fn finish(
        &self,
        slot: &Slot,
        server: &Server,
        mut output: LspOutput,
        answer: Result<(Vec<LspItem>, Option<String>), CallError>,
    ) -> Result<LspOutput, LspError> {
        match answer {
            Ok((mut items, hover)) => {
                slot.state.lock().crashes = 0;
                convert::sort(&mut items);
                items.dedup();
                output.total = items.len() as u32;
                output.items = items;
                output.hover = hover;
                if output.items.is_empty() && output.hover.is_none() {
                    output.empty = Some(match server.progress() {
                        Some(progress) => LspEmpty {
                            reason: LspEmptyReason::Starting,
                            message: format!(
                                "`{}` is still indexing ({progress}); nothing was found yet",
                                server.command
                            ),
                            hint: Some("ask again in a moment".to_string()),
                        },
                        None => LspEmpty {
                            reason: LspEmptyReason::NotFound,
                            message: format!("`{}` found nothing there", server.command),
                            hint: not_found_hint(output.operation),
                        },
                    });
                }
            }
            Err(CallError::Crashed(why)) => {
                slot.state.lock().note_death();
                output.empty = Some(LspEmpty {
                    reason: LspEmptyReason::Crashed,
                    message: format!("`{}` crashed during the request: {why}", server.command),
                    hint: Some("ask again: the next request restarts it".to_string()),
                });
            }
            Err(CallError::TimedOut) => {
                let progress = server
                    .progress()
                    .map(|p| format!(" (it reports: {p})"))
                    .unwrap_or_default();
                output.empty = Some(LspEmpty {
                    reason: LspEmptyReason::TimedOut,
                    message: format!(
                        "`{}` did not answer within {} s{progress}",
                        server.command,
                        self.options.request_timeout.as_secs()
                    ),
                    hint: Some("ask again in a moment, or narrow the request".to_string()),
                });
            }
            Err(CallError::Server(message)) => {
                output.empty = Some(LspEmpty {
                    reason: LspEmptyReason::NotFound,
                    message: format!("`{}` answered with an error: {message}", server.command),
                    hint: None,
                });
            }
        }
        Ok(output)
    }

    /// `workspace_symbols`: asks the server of `path`'s language, else every server whose
    /// language has files in the workspace (opening one of them so the server sees the
    /// project).
    async fn workspace_symbols(
        &self,
        mut output: LspOutput,
        path: Option<&str>,
        text: &str,
    ) -> Result<LspOutput, LspError> {
        let targets: Vec<(PathBuf, String)> = match path {
            Some(path) => vec![self.resolve(path)?],
            None => self.sample_files()?,
        };
        if targets.is_empty() {
            output.empty = Some(LspEmpty {
                reason: LspEmptyReason::NoServer,
                message: "no file of a language with a known server was found in the workspace"
                    .to_string(),
                hint: Some("give `path`: a file of the language to search".to_string()),
            });
            return Ok(output);
        }
        let mut items = Vec::new();
        let mut empties = Vec::new();
        let mut servers = Vec::new();
        for (absolute, relative) in targets {
            let (slot, server) = match self.server_for(&relative).await? {
                Ok(found) => found,
                Err(empty) => {
                    empties.push(empty);
                    continue;
                }
            };
            output.language = Some(slot.spec.language.clone());
            servers.push(server.command.clone());
            let content = std::fs::read_to_string(&absolute).unwrap_or_default();
            let language = language_id(&slot.spec.language, &absolute);
            let answer = async {
                let synced = server.sync(&absolute, &language, &content).await?;
                server
                    .settle(synced.first_document, OPEN_GRACE, self.options.index_wait)
                    .await;
                let mut lines = Lines::new(&self.root);
                let response = server
                    .request::<WorkspaceSymbolRequest>(
                        lsp_types::WorkspaceSymbolParams {
                            partial_result_params: PartialResultParams::default(),
                            work_done_progress_params: WorkDoneProgressParams::default(),
                            query: text.to_string(),
                        },
                        self.options.request_timeout,
                    )
                    .await?;
                Ok((convert::workspace_symbols(&mut lines, response), None))
            }
            .await;
            let part = self.finish(slot, &server, output.clone(), answer)?;
            items.extend(part.items);
            empties.extend(part.empty);
        }
        if servers.len() > 1 {
            output.language = None;
        }
        output.server = (!servers.is_empty()).then(|| servers.join(", "));
        convert::sort(&mut items);
        items.dedup();
        output.total = items.len() as u32;
        output.items = items;
        if output.items.is_empty() {
            // The most telling reason: a crash or timeout before "nothing found".
            empties.sort_by_key(|e| match e.reason {
                LspEmptyReason::Crashed => 0,
                LspEmptyReason::TimedOut => 1,
                LspEmptyReason::Starting => 2,
                LspEmptyReason::NotFound => 3,
                LspEmptyReason::NoServer => 4,
            });
            output.empty = empties.into_iter().next();
        }
        Ok(output)
    }

    /// One file per language with a known server, found near the top of the workspace.
    fn sample_files(&self) -> Result<Vec<(PathBuf, String)>, LspError> {
        let slots = self.slots()?;
        let mut found: Vec<Option<(PathBuf, String)>> = vec![None; slots.len()];
        let walk = ignore::WalkBuilder::new(&self.root)
            .max_depth(Some(4))
            .build();
        for entry in walk.flatten().take(5000) {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(relative) = entry.path().strip_prefix(&self.root) else {
                continue;
            };
            if let Some(index) = slots.iter().position(|s| s.spec.serves(relative))
                && found[index].is_none()
            {
                found[index] = Some((
                    entry.path().to_path_buf(),
                    relative.to_string_lossy().into_owned(),
                ));
            }
        }
        Ok(found.into_iter().flatten().collect())
    }

    /// The running server for the file at `absolute` and its language, starting it when
    /// needed; `None` when no server is known or installed for it, or it cannot start.
    pub(crate) async fn server_for_file(&self, absolute: &Path) -> Option<(String, Arc<Server>)> {
        let relative = absolute
            .strip_prefix(&self.root)
            .ok()?
            .to_string_lossy()
            .into_owned();
        let slot = self.slot_for(&relative).ok()??;
        slot.spec.resolve(self.options.search_path.as_ref())?;
        let server = self.server(slot).await.ok()?;
        Some((slot.spec.language.clone(), server))
    }

    /// How long diagnostics reads wait.
    pub(crate) fn diagnostics_wait(&self) -> Duration {
        self.options.diagnostics_wait
    }
}

/// The server capability an operation needs (`None`: every server has it).
fn capability(operation: LspOperation) -> Option<&'static str> {
    match operation {
        LspOperation::Definition => Some("definitionProvider"),
        LspOperation::References => Some("referencesProvider"),
        LspOperation::Hover => Some("hoverProvider"),
        LspOperation::DocumentSymbols => Some("documentSymbolProvider"),
        LspOperation::WorkspaceSymbols => Some("workspaceSymbolProvider"),
        LspOperation::Implementation => Some("implementationProvider"),
        LspOperation::IncomingCalls | LspOperation::OutgoingCalls => Some("callHierarchyProvider"),
        LspOperation::Diagnostics => None,
    }
}

fn not_found_hint(operation: LspOperation) -> Option<String> {
    match operation {
        LspOperation::Diagnostics => Some("the file has no diagnostics".to_string()),
        LspOperation::WorkspaceSymbols => {
            Some("try a shorter query or part of the name".to_string())
        }
        _ => Some(
            "check that `line` and `character` point into the symbol's name (1-based, as `read` \
             shows lines)"
                .to_string(),
        ),
    }
}
