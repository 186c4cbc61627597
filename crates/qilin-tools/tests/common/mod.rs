//! A session over a temporary workspace with every built-in tool, dispatched through the real
//! execution layer.

#![allow(dead_code)]

use qilin_protocol::{CallStatus, ContentBlock, ErrorCode, Event};
use qilin_sandbox::{Sandbox, SandboxError, SandboxHelper, SandboxMode, SandboxSettings};
use qilin_tool::{
    AllowAll, CallOutcome, Caller, ExecConfig, Executor, Requests, Reviewer, Services, Session,
    ToolCall, ToolRegistry,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

pub struct Harness {
    pub executor: Executor,
    pub events: UnboundedReceiver<Event>,
    pub workspace: tempfile::TempDir,
    pub data: tempfile::TempDir,
    next_call: AtomicUsize,
}

/// A session with the default sandbox (`workspace-write`, no network) where this machine can
/// confine commands; where it cannot, with the sandbox off (and a note saying so), so the
/// tools' own behaviour is still tested.
pub fn harness() -> Harness {
    let sandbox = match Sandbox::start(SandboxSettings::default(), sandbox_helper()) {
        Ok(sandbox) => sandbox,
        Err(SandboxError::Unsupported { missing, .. }) => {
            eprintln!(
                "note: this machine cannot sandbox bash ({}); running unconfined",
                missing.join("; ")
            );
            Sandbox::start(
                SandboxSettings {
                    mode: SandboxMode::Off,
                    ..SandboxSettings::default()
                },
                sandbox_helper(),
            )
            .unwrap()
        }
        Err(err) => panic!("{err}"),
    };
    harness_with_sandbox(sandbox)
}

/// A session with `sandbox` beside the default services.
pub fn harness_with_sandbox(sandbox: Sandbox) -> Harness {
    let mut services = qilin_tools::session_services();
    services.insert(Arc::new(sandbox));
    harness_with(services)
}

/// The sandbox helper built with these tests.
pub fn sandbox_helper() -> SandboxHelper {
    SandboxHelper::new(
        env!("CARGO_BIN_EXE_qilin-sandbox-exec"),
        Vec::<String>::new(),
    )
}

pub fn harness_with(services: Services) -> Harness {
    harness_with_all(services, Arc::new(AllowAll), Requests::unattended())
}

/// A harness whose requests (approvals, questions) someone answers through the session.
pub fn harness_attended() -> Harness {
    harness_with_all(
        qilin_tools::session_services(),
        Arc::new(AllowAll),
        Requests::attended(),
    )
}

/// A harness whose calls pass `reviewer`.
pub fn harness_reviewed(services: Services, reviewer: Arc<dyn Reviewer>) -> Harness {
    harness_with_all(services, reviewer, Requests::unattended())
}

/// A session in `workspace` (made beforehand, so that services can name paths in it).
pub fn harness_in(workspace: tempfile::TempDir, services: Services) -> Harness {
    harness_in_with_all(
        workspace,
        services,
        Arc::new(AllowAll),
        Requests::unattended(),
    )
}

fn harness_with_all(
    services: Services,
    reviewer: Arc<dyn Reviewer>,
    requests: Requests,
) -> Harness {
    harness_in_with_all(tempfile::tempdir().unwrap(), services, reviewer, requests)
}

fn harness_in_with_all(
    workspace: tempfile::TempDir,
    services: Services,
    reviewer: Arc<dyn Reviewer>,
    requests: Requests,
) -> Harness {
    let mut registry = ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry).unwrap();
    let data = tempfile::tempdir().unwrap();
    let session = Arc::new(
        Session::new("s1", workspace.path(), data.path())
            .with_services(services)
            .with_requests(requests),
    );
    let events = session.events().subscribe();
    Harness {
        executor: Executor::with_policy(
            Arc::new(registry),
            session,
            reviewer,
            ExecConfig::default(),
        ),
        events,
        workspace,
        data,
        next_call: AtomicUsize::new(1),
    }
}

impl Harness {
    pub fn path(&self, relative: &str) -> PathBuf {
        self.workspace.path().join(relative)
    }

    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    fn next_id(&self) -> String {
        format!("call-{}", self.next_call.fetch_add(1, Ordering::Relaxed))
    }

    pub async fn call(&self, name: &str, arguments: Value) -> CallOutcome {
        let call = ToolCall {
            call_id: self.next_id(),
            name: name.into(),
            arguments,
        };
        self.executor.dispatch(call, Caller::Direct).await
    }

    /// Calls the tool as Python inside `run_code` would (a code-mode-only tool too).
    pub async fn call_from_code(&self, name: &str, arguments: Value) -> CallOutcome {
        let call = ToolCall {
            call_id: self.next_id(),
            name: name.into(),
            arguments,
        };
        let caller = Caller::Code {
            parent_call_id: "run-1".into(),
        };
        self.executor.dispatch(call, caller).await
    }

    pub async fn call_cancellable(
        &self,
        name: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> CallOutcome {
        let call = ToolCall {
            call_id: self.next_id(),
            name: name.into(),
            arguments,
        };
        self.executor
            .dispatch_cancellable(call, Caller::Direct, cancel)
            .await
    }

    /// Calls the tool and expects success; returns the structured output.
    pub async fn ok(&self, name: &str, arguments: Value) -> (Value, String) {
        let outcome = self.call(name, arguments).await;
        assert_eq!(
            outcome.status,
            CallStatus::Ok,
            "{name} failed: {:?}",
            outcome.error
        );
        let text = text(&outcome.content);
        (outcome.output.unwrap(), text)
    }

    /// Calls the tool and expects an error with `code`; returns the message.
    pub async fn err(&self, name: &str, arguments: Value, code: ErrorCode) -> String {
        let outcome = self.call(name, arguments).await;
        let error = outcome
            .error
            .unwrap_or_else(|| panic!("{name} succeeded: {}", text(&outcome.content)));
        assert_eq!(error.code, code, "{}", error.message);
        error.message
    }

    pub fn drain(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            out.push(event);
        }
        out
    }
}

/// Every text block of an outcome, joined.
pub fn text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Makes `link` a symlink to `target`.
pub fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// A process name unique to this test process and `label`, for `exec -a NAME`: a test finds
/// its processes by name, since a sandboxed command sees process ids of its own namespace.
pub fn process_name(label: &str) -> String {
    format!("qilin-test-{}-{label}", std::process::id())
}

/// A shell snippet that runs `sleep 300` under the process name `name`.
pub fn named_sleep(name: &str) -> String {
    format!("(exec -a {name} sleep 300)")
}

/// The live (not zombie) processes whose first argument is `name`.
pub fn processes_named(name: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            first == name.as_bytes() && !stat.contains(") Z ")
        })
        .collect()
}

/// Waits up to 10 s for `done` to hold, checking every 20 ms; whether it did.
pub async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if done() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    done()
}

/// Whether a process named `name` starts within 10 s.
pub async fn appears(name: &str) -> bool {
    eventually(|| !processes_named(name).is_empty()).await
}

/// Whether every process named `name` is gone within 10 s.
pub async fn gone(name: &str) -> bool {
    eventually(|| processes_named(name).is_empty()).await
}
