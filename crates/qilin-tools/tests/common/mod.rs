//! A session over a temporary workspace with every built-in tool, dispatched through the real
//! execution layer.

#![allow(dead_code)]

use qilin_protocol::{CallStatus, ContentBlock, ErrorCode, Event};
use qilin_tool::{
    AllowAll, CallOutcome, Caller, ExecConfig, Executor, Reviewer, Services, Session, ToolCall,
    ToolRegistry,
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

pub fn harness() -> Harness {
    harness_with(qilin_tools::session_services())
}

pub fn harness_with(services: Services) -> Harness {
    harness_reviewed(services, Arc::new(AllowAll))
}

/// A harness whose calls pass `reviewer`.
pub fn harness_reviewed(services: Services, reviewer: Arc<dyn Reviewer>) -> Harness {
    let mut registry = ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry).unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let session =
        Arc::new(Session::new("s1", workspace.path(), data.path()).with_services(services));
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
