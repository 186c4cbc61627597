//! The runs of one session: each run's state as its events record it, the token that stops it,
//! and the observer that turns the script's calls and report sections into steps.

use qilin_codemode::RunObserver;
use qilin_protocol::workflows::{
    WorkflowFinishedEvent, WorkflowRun, WorkflowStartedEvent, WorkflowStatus, WorkflowStep,
    WorkflowStepEvent, WorkflowStepKind,
};
use qilin_protocol::{CallStatus, EventBody};
use qilin_tool::{Session, now};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The workflow runs of one session, as a host service (`qilin_tool::Services`) the workflow
/// tools look up.
#[derive(Default)]
pub struct WorkflowRuns {
    runs: Mutex<Vec<Arc<RunHandle>>>,
}

impl WorkflowRuns {
    fn table(&self) -> std::sync::MutexGuard<'_, Vec<Arc<RunHandle>>> {
        self.runs
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Records a new run of `run` (its id is given here) in `session`'s log, and returns its
    /// handle. `stop` is the token the run's code is interrupted by.
    pub(crate) fn start(
        &self,
        session: Arc<Session>,
        mut run: WorkflowRun,
        stop: CancellationToken,
    ) -> Arc<RunHandle> {
        let mut table = self.table();
        run.run_id = format!("wf{}", table.len() + 1);
        session
            .events()
            .emit(EventBody::WorkflowStarted(WorkflowStartedEvent {
                run: run.clone(),
            }));
        let (state, _) = watch::channel(run);
        let handle = Arc::new(RunHandle {
            session,
            state,
            stop,
            stopped: AtomicBool::new(false),
            started: Instant::now(),
            steps: Mutex::new(HashMap::new()),
        });
        table.push(Arc::clone(&handle));
        handle
    }

    /// The run `id`, or why there is none (naming the runs there are).
    pub(crate) fn get(&self, id: &str) -> Result<Arc<RunHandle>, String> {
        let table = self.table();
        table
            .iter()
            .find(|run| run.state.borrow().run_id == id.trim())
            .cloned()
            .ok_or_else(|| {
                let ids: Vec<String> = table
                    .iter()
                    .map(|run| run.state.borrow().run_id.clone())
                    .collect();
                match ids.is_empty() {
                    true => format!("there is no workflow run `{id}`: this session started none"),
                    false => format!(
                        "there is no workflow run `{id}`; this session's runs are {}",
                        ids.join(", ")
                    ),
                }
            })
    }

    /// Interrupts every run still going (the session is interrupted or closed): each ends
    /// `interrupted`, its running calls `interrupted`.
    pub fn interrupt_all(&self) {
        for run in self.table().iter() {
            if !run.state.borrow().status.finished() {
                run.stop.cancel();
            }
        }
    }

    /// Every run of the session as it stands, oldest first.
    pub(crate) fn all(&self) -> Vec<WorkflowRun> {
        self.table()
            .iter()
            .map(|run| run.state.borrow().clone())
            .collect()
    }
}

/// One run: its state (watched, so a stop can wait for its end), the token that stops it, and
/// which step each of its calls is.
pub(crate) struct RunHandle {
    session: Arc<Session>,
    state: watch::Sender<WorkflowRun>,
    stop: CancellationToken,
    stopped: AtomicBool,
    started: Instant,
    /// The step index of each call, by call id.
    steps: Mutex<HashMap<String, u32>>,
}

impl RunHandle {
    /// The run as it stands.
    pub(crate) fn snapshot(&self) -> WorkflowRun {
        self.state.borrow().clone()
    }

    /// The run's id.
    pub(crate) fn id(&self) -> String {
        self.state.borrow().run_id.clone()
    }

    /// Asks the run to stop: its code is interrupted and its running calls end `interrupted`.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.stop.cancel();
    }

    /// The token the run's code is interrupted by.
    pub(crate) fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Whether `workflow_stop` stopped it.
    pub(crate) fn was_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Waits until the run has ended and returns it.
    pub(crate) async fn ended(&self) -> WorkflowRun {
        let mut watching = self.state.subscribe();
        match watching.wait_for(|run| run.status.finished()).await {
            Ok(run) => run.clone(),
            // The sender lives in `self`, so the channel cannot close while this waits.
            Err(_) => self.snapshot(),
        }
    }

    /// Records the run's end: its status, result or error, and `workflow.finished`. A run
    /// already ended is left as it was.
    pub(crate) fn finish(
        &self,
        status: WorkflowStatus,
        result: Option<Value>,
        error: Option<String>,
    ) -> WorkflowRun {
        let mut ended = None;
        self.state.send_if_modified(|run| {
            if run.status.finished() {
                return false;
            }
            run.status = status;
            run.result = result;
            run.error = error;
            run.ended_at = Some(now());
            run.duration_ms = Some(self.started.elapsed().as_millis() as u64);
            ended = Some(run.clone());
            true
        });
        match ended {
            Some(run) => {
                self.session
                    .events()
                    .emit(EventBody::WorkflowFinished(WorkflowFinishedEvent {
                        run: run.clone(),
                    }));
                run
            }
            None => self.snapshot(),
        }
    }

    /// Adds or replaces a step, and records `workflow.step`.
    fn put_step(&self, step: WorkflowStep) {
        let run_id = self.id();
        self.state.send_modify(
            |run| match run.steps.iter_mut().find(|s| s.index == step.index) {
                Some(existing) => *existing = step.clone(),
                None => run.steps.push(step.clone()),
            },
        );
        self.session
            .events()
            .emit(EventBody::WorkflowStep(WorkflowStepEvent { run_id, step }));
    }

    fn next_index(&self) -> u32 {
        self.state.borrow().steps.len() as u32
    }

    /// Records a call step (the run's `checks` after the script, say) the runtime made itself.
    pub(crate) fn call_step(&self, call_id: &str, tool: &str, title: String) {
        let index = self.next_index();
        self.step_map().insert(call_id.to_string(), index);
        self.put_step(WorkflowStep {
            index,
            kind: WorkflowStepKind::Call,
            call_id: Some(call_id.to_string()),
            tool: Some(tool.to_string()),
            status: Some("running".to_string()),
            title,
            text: None,
            replayed: false,
            at: now(),
        });
    }

    fn step_map(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.steps
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// The wire name of a call's status, as a step carries it.
fn status_name(status: CallStatus) -> &'static str {
    match status {
        CallStatus::Ok => "ok",
        CallStatus::Error => "error",
        CallStatus::Denied => "denied",
        CallStatus::Interrupted => "interrupted",
    }
}

/// A call step's label: the call's `description` when it has one (an `agent`'s), else the
/// tool's name.
fn call_title(tool: &str, arguments: &Value) -> String {
    arguments
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|description| !description.is_empty())
        .map_or_else(|| tool.to_string(), str::to_string)
}

impl RunObserver for RunHandle {
    fn call_started(&self, call_id: &str, tool: &str, arguments: &Value) {
        self.call_step(call_id, tool, call_title(tool, arguments));
    }

    fn call_ended(&self, call_id: &str, status: CallStatus) {
        let Some(index) = self.step_map().get(call_id).copied() else {
            return;
        };
        let step = self
            .state
            .borrow()
            .steps
            .iter()
            .find(|step| step.index == index)
            .cloned();
        if let Some(mut step) = step {
            step.status = Some(status_name(status).to_string());
            self.put_step(step);
        }
    }

    fn report(&self, title: String, text: String) {
        self.put_step(WorkflowStep {
            index: self.next_index(),
            kind: WorkflowStepKind::Report,
            call_id: None,
            tool: None,
            status: None,
            title,
            text: Some(text),
            replayed: false,
            at: now(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::call_title;
    use serde_json::json;

    #[test]
    fn a_call_is_labelled_by_its_description_else_its_tool() {
        assert_eq!(
            call_title("agent", &json!({"description": " Read the parser "})),
            "Read the parser"
        );
        assert_eq!(call_title("read", &json!({"path": "a"})), "read");
        assert_eq!(call_title("agent", &json!({"description": ""})), "agent");
    }
}
