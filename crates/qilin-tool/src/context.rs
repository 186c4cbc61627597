use crate::{EventLog, Executor};
use qilin_protocol::{EventBody, ToolProgressEvent};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Host services a tool may need beyond its arguments (a todo store, a question answerer,
/// a job table), looked up by type.
#[derive(Default, Clone)]
pub struct Services {
    by_type: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl Services {
    /// Adds (or replaces) the service of type `T`.
    pub fn insert<T: Any + Send + Sync>(&mut self, service: Arc<T>) {
        self.by_type.insert(TypeId::of::<T>(), service);
    }

    /// The service of type `T`, when the host provided one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.by_type
            .get(&TypeId::of::<T>())
            .and_then(|service| Arc::clone(service).downcast::<T>().ok())
    }
}

/// One conversation's shared state: its workspace, its data folder and its event log.
pub struct Session {
    id: String,
    workspace: PathBuf,
    data_dir: PathBuf,
    events: EventLog,
    services: Services,
}

impl Session {
    /// A session working in `workspace` and keeping its files (spilled outputs) in `data_dir`.
    pub fn new(
        id: impl Into<String>,
        workspace: impl Into<PathBuf>,
        data_dir: impl Into<PathBuf>,
    ) -> Self {
        Session {
            id: id.into(),
            workspace: workspace.into(),
            data_dir: data_dir.into(),
            events: EventLog::new(),
            services: Services::default(),
        }
    }

    /// The same session with host services attached.
    pub fn with_services(mut self, services: Services) -> Self {
        self.services = services;
        self
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The folder tools work in.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The folder the session keeps its own files in.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Where the whole of one too-long output of call `call_id` is kept; `label` tells apart
    /// several outputs of one call (empty for the call's own result).
    pub fn spill_path(&self, call_id: &str, label: &str) -> PathBuf {
        let mut name: String = call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if !label.is_empty() {
            name.push('-');
            name.push_str(label);
        }
        self.data_dir.join("spill").join(format!("{name}.txt"))
    }

    /// The session's event log.
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The host services.
    pub fn services(&self) -> &Services {
        &self.services
    }
}

/// What a running call can see of the runtime: its identity, its deadline and cancellation,
/// the session, and the executor for calls it makes itself (code mode).
#[derive(Clone)]
pub struct ToolContext {
    pub(crate) call_id: String,
    pub(crate) parent_call_id: Option<String>,
    pub(crate) cancel: CancellationToken,
    pub(crate) deadline: Option<Instant>,
    pub(crate) executor: Executor,
}

impl ToolContext {
    /// The id of this call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The `run_code` call this call was made from, for a code-mode call.
    pub fn parent_call_id(&self) -> Option<&str> {
        self.parent_call_id.as_deref()
    }

    /// Cancelled when the user interrupts; long-running tools stop promptly on it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// When the execution layer will end the call with `TIMEOUT`, if it has a deadline.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The session this call belongs to.
    pub fn session(&self) -> &Session {
        self.executor.session()
    }

    /// The folder tools work in.
    pub fn workspace(&self) -> &Path {
        self.session().workspace()
    }

    /// Where the whole of one of this call's too-long outputs is kept (see
    /// [`Session::spill_path`]).
    pub fn spill_path(&self, label: &str) -> PathBuf {
        self.session().spill_path(&self.call_id, label)
    }

    /// The host service of type `T`, when provided.
    pub fn service<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.session().services().get::<T>()
    }

    /// The executor, for a tool that dispatches calls of its own (code mode).
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Reports live output of this call as a `tool.progress` event.
    pub fn progress(&self, text: impl Into<String>) {
        self.session()
            .events()
            .emit(EventBody::ToolProgress(ToolProgressEvent {
                call_id: self.call_id.clone(),
                parent_call_id: self.parent_call_id.clone(),
                text: text.into(),
            }));
    }
}
