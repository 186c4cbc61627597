//! A workspace with an agent file, a runtime over an in-memory store, and checks every log
//! must pass.

#![allow(dead_code)]

use futures_util::StreamExt;
use qilin_model::{Script, ScriptedProvider};
use qilin_protocol::{Event, EventBody};
use qilin_runtime::{CodeSandbox, ModelChoice, Runtime, SessionHandle};
use qilin_store::{EventStore, MemoryStore};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub store: Arc<MemoryStore>,
    pub runtime: Runtime,
}

/// A workspace holding `agent.agent` with `agent_yaml`, and `notes.txt`.
pub fn fixture(agent_yaml: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    std::fs::write(dir.path().join("agent.agent"), agent_yaml).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "first line\nsecond line\n").unwrap();
    let store = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        Arc::clone(&store) as Arc<dyn EventStore>,
        CodeSandbox::InProcess,
    );
    Fixture {
        dir,
        store,
        runtime,
    }
}

impl Fixture {
    pub fn workspace(&self) -> &Path {
        self.dir.path()
    }

    pub fn agent(&self) -> std::path::PathBuf {
        self.dir.path().join("agent.agent")
    }

    /// A builder of a session of the agent in the workspace. Bash runs unconfined: the sandbox
    /// needs the `qilin` binary as its helper, and has tests of its own.
    pub fn builder(&self) -> qilin_runtime::SessionBuilder {
        self.runtime
            .session(self.workspace())
            .agent_file(self.agent())
            .no_sandbox(true)
    }

    /// A session of the agent answering from `script` (scripted YAML).
    pub async fn session(&self, script: &str, attended: bool) -> SessionHandle {
        self.runtime
            .session(self.workspace())
            .no_sandbox(true)
            .agent_file(self.agent())
            .model(scripted(script))
            .attended(attended)
            .build()
            .await
            .unwrap()
    }
}

pub fn scripted(script: &str) -> ModelChoice {
    let script = Script::parse(script, Path::new("test.yaml")).unwrap();
    ModelChoice::Provider {
        provider: Arc::new(ScriptedProvider::new(script)),
        model: "scripted".into(),
        label: "scripted:test.yaml".into(),
    }
}

/// Every event of the session in the store, once the handle has flushed.
pub async fn stored(handle: &SessionHandle) -> Vec<Event> {
    handle.flush().await.unwrap();
    let mut events = handle.subscribe_from(0);
    let head = handle.committed_head();
    let mut all = Vec::new();
    while all.len() < head as usize {
        let next = tokio::time::timeout(Duration::from_secs(5), events.next())
            .await
            .expect("the stored events arrive")
            .unwrap()
            .unwrap();
        all.push(next);
    }
    all
}

/// Checks a log: `seq` gapless from 1; every `tool.start` has exactly one `tool.result`, after
/// it; a code-mode call ends before the call that made it — but for the calls of a background
/// workflow run, which end after its `workflow_run` call returned (that call's output says
/// `background: true`), and not before it started; every request opened is resolved once;
/// every turn started finishes.
pub fn assert_consistent(events: &[Event]) {
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event.seq, index as u64 + 1, "gapless seq");
    }
    let mut started: HashMap<&str, usize> = HashMap::new();
    let mut background: Vec<&str> = Vec::new();
    let mut ended: HashMap<&str, usize> = HashMap::new();
    let mut parents: HashMap<&str, &str> = HashMap::new();
    let mut opened = HashMap::new();
    let mut resolved = HashMap::new();
    let mut turns = 0i32;
    for (index, event) in events.iter().enumerate() {
        match &event.body {
            EventBody::ToolStart(start) => {
                assert!(
                    started.insert(&start.call_id, index).is_none(),
                    "{} started twice",
                    start.call_id
                );
                if let Some(parent) = &start.parent_call_id {
                    parents.insert(&start.call_id, parent);
                }
            }
            EventBody::ToolResult(result) => {
                assert!(
                    started.contains_key(result.call_id.as_str()),
                    "{} ended without a start",
                    result.call_id
                );
                assert!(
                    ended.insert(&result.call_id, index).is_none(),
                    "{} ended twice",
                    result.call_id
                );
                let returned_at_once = result.tool_name == "workflow_run"
                    && result
                        .output
                        .as_ref()
                        .and_then(|output| output.pointer("/run/background"))
                        == Some(&serde_json::Value::Bool(true));
                if returned_at_once {
                    background.push(&result.call_id);
                }
            }
            EventBody::RequestOpened(open) => {
                opened.insert(open.request_id.clone(), index);
            }
            EventBody::RequestResolved(done) => {
                assert!(opened.contains_key(&done.request_id), "resolved unopened");
                assert!(
                    resolved.insert(done.request_id.clone(), index).is_none(),
                    "resolved twice"
                );
            }
            EventBody::TurnStarted { .. } => turns += 1,
            EventBody::TurnFinished { .. } => turns -= 1,
            _ => {}
        }
    }
    for call in started.keys() {
        assert!(
            ended.contains_key(call),
            "{call} has no result: {events:#?}"
        );
    }
    for (child, parent) in &parents {
        assert!(
            started.get(parent).is_some_and(|at| *at < started[child]),
            "{child} started before its parent {parent}"
        );
        assert!(
            ended[child] < ended[parent] || background.contains(parent),
            "{child} ended after its parent {parent}, which is not a background workflow run"
        );
    }
    assert_eq!(opened.len(), resolved.len(), "every request is resolved");
    assert_eq!(turns, 0, "every turn finished");
}
