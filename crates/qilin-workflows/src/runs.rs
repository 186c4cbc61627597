//! The runs of one session: each run's state as its events record it, the token that stops it,
//! and the observer that turns the script's calls and report sections into steps.

use parking_lot::Mutex;
use qilin_codemode::RunObserver;
use qilin_protocol::workflows::{
    WorkflowFinishedEvent, WorkflowRun, WorkflowStartedEvent, WorkflowStatus, WorkflowStep,
    WorkflowStepEvent, WorkflowStepKind,
};
use qilin_protocol::{CallStatus, Event, EventBody};
use qilin_tool::{Session, now};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The workflow runs of one session, as a host service (`qilin_tool::Services`) the workflow
/// tools look up. A resumed session rebuilds it from its log ([`WorkflowRuns::from_events`]):
/// the runs of earlier processes keep their ids and records, and the next run is numbered
/// after them.
#[derive(Default)]
pub struct WorkflowRuns {
    runs: Mutex<Vec<Entry>>,
}

/// One run of the session.
enum Entry {
    /// A run this process started or resumed.
    Live(Arc<RunHandle>),
    /// A run as an earlier process's log left it: ended, or (still `running`) waiting to be
    /// resumed from its journal.
    Recorded(Box<WorkflowRun>),
}

impl Entry {
    fn run(&self) -> WorkflowRun {
        match self {
            Entry::Live(handle) => handle.snapshot(),
            Entry::Recorded(run) => (**run).clone(),
        }
    }

    fn run_id(&self) -> String {
        match self {
            Entry::Live(handle) => handle.id(),
            Entry::Recorded(run) => run.run_id.clone(),
        }
    }

    /// A recorded run left `running`: its process ended before it did.
    fn waiting(&self) -> Option<&WorkflowRun> {
        match self {
            Entry::Recorded(run) if !run.status.finished() => Some(run.as_ref()),
            _ => None,
        }
    }
}

/// A run looked up by id.
pub(crate) enum FoundRun {
    /// A run of this process.
    Live(Arc<RunHandle>),
    /// A run an earlier process recorded.
    Recorded(Box<WorkflowRun>),
}

impl WorkflowRuns {
    fn table(&self) -> parking_lot::MutexGuard<'_, Vec<Entry>> {
        self.runs.lock()
    }

    /// The runs `events` (a session's log) record, each as its last event leaves it: a run
    /// with `workflow.finished` as it ended, one without as it stood (`running`, its steps so
    /// far), waiting to be resumed or closed.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut runs: Vec<WorkflowRun> = Vec::new();
        for event in events {
            match &event.body {
                EventBody::WorkflowStarted(started) => {
                    match runs.iter_mut().find(|run| run.run_id == started.run.run_id) {
                        Some(run) => *run = started.run.clone(),
                        None => runs.push(started.run.clone()),
                    }
                }
                EventBody::WorkflowStep(step) => {
                    if let Some(run) = runs.iter_mut().find(|run| run.run_id == step.run_id) {
                        put(&mut run.steps, step.step.clone());
                    }
                }
                EventBody::WorkflowFinished(finished) => {
                    match runs
                        .iter_mut()
                        .find(|run| run.run_id == finished.run.run_id)
                    {
                        Some(run) => *run = finished.run.clone(),
                        None => runs.push(finished.run.clone()),
                    }
                }
                _ => {}
            }
        }
        WorkflowRuns {
            runs: Mutex::new(
                runs.into_iter()
                    .map(|run| Entry::Recorded(Box::new(run)))
                    .collect(),
            ),
        }
    }

    /// The `workflow_run` calls of the background runs an earlier process left running: the
    /// runs a resumed session picks up again, each replaying the journal under its call.
    pub fn waiting_background_calls(&self) -> Vec<String> {
        self.table()
            .iter()
            .filter_map(Entry::waiting)
            .filter(|run| run.background)
            .filter_map(|run| run.call_id.clone())
            .collect()
    }

    /// Records as `interrupted` (`workflow.finished` in `session`'s log) every run an earlier
    /// process left running that will not be resumed: a foreground run whose `workflow_run`
    /// call is not among `continued` (the calls of the turn the session continues), a
    /// background run unless `background` (background runs are resumed), and a run whose
    /// start did not name its call. Returns how many it closed.
    pub fn close_unresumable(
        &self,
        session: &Session,
        continued: &[String],
        background: bool,
    ) -> usize {
        let mut table = self.table();
        let mut closed = 0;
        for entry in table.iter_mut() {
            let Entry::Recorded(run) = entry else {
                continue;
            };
            if run.status.finished() {
                continue;
            }
            let resumable = match &run.call_id {
                Some(call_id) => (run.background && background) || continued.contains(call_id),
                None => false,
            };
            if resumable {
                continue;
            }
            run.status = WorkflowStatus::Interrupted;
            run.error = Some(
                "the process running the workflow ended before it did, and its turn was not \
                 continued"
                    .to_string(),
            );
            run.ended_at = Some(now());
            run.duration_ms = since(&run.started_at);
            session
                .events()
                .emit(EventBody::WorkflowFinished(WorkflowFinishedEvent {
                    run: (**run).clone(),
                }));
            closed += 1;
        }
        closed
    }

    /// Records a new run of `run` (its id is given here: the next after the session's runs)
    /// in `session`'s log, and returns its handle. `stop` is the token the run's code is
    /// interrupted by.
    pub(crate) fn start(
        &self,
        session: Arc<Session>,
        mut run: WorkflowRun,
        stop: CancellationToken,
    ) -> Arc<RunHandle> {
        let mut table = self.table();
        run.run_id = next_run_id(table.iter().map(Entry::run_id));
        session
            .events()
            .emit(EventBody::WorkflowStarted(WorkflowStartedEvent {
                run: run.clone(),
            }));
        let handle = Arc::new(RunHandle::new(session, run, stop, Instant::now()));
        table.push(Entry::Live(Arc::clone(&handle)));
        handle
    }

    /// The run an earlier process left running under `workflow_run` call `call_id`, taken up
    /// by this process: it keeps its id, its steps and its start (no second
    /// `workflow.started`), and its code is replayed with the journal of its calls. `None`
    /// when no run waits under that call.
    pub(crate) fn resume(
        &self,
        session: Arc<Session>,
        call_id: &str,
        stop: CancellationToken,
    ) -> Option<Arc<RunHandle>> {
        let mut table = self.table();
        let entry = table.iter_mut().find(|entry| {
            entry
                .waiting()
                .is_some_and(|run| run.call_id.as_deref() == Some(call_id))
        })?;
        let run = entry.run();
        let started = Instant::now()
            .checked_sub(Duration::from_millis(since(&run.started_at).unwrap_or(0)))
            .unwrap_or_else(Instant::now);
        let handle = Arc::new(RunHandle::new(session, run, stop, started));
        *entry = Entry::Live(Arc::clone(&handle));
        Some(handle)
    }

    /// The run of this process started by `workflow_run` call `call_id`, if there is one.
    pub(crate) fn of_call(&self, call_id: &str) -> Option<Arc<RunHandle>> {
        self.table().iter().find_map(|entry| match entry {
            Entry::Live(handle) if handle.snapshot().call_id.as_deref() == Some(call_id) => {
                Some(Arc::clone(handle))
            }
            _ => None,
        })
    }

    /// The run `id`, or why there is none (naming the runs there are).
    pub(crate) fn get(&self, id: &str) -> Result<FoundRun, String> {
        let table = self.table();
        table
            .iter()
            .find(|entry| entry.run_id() == id.trim())
            .map(|entry| match entry {
                Entry::Live(handle) => FoundRun::Live(Arc::clone(handle)),
                Entry::Recorded(run) => FoundRun::Recorded(run.clone()),
            })
            .ok_or_else(|| {
                let ids: Vec<String> = table.iter().map(Entry::run_id).collect();
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
        for entry in self.table().iter() {
            if let Entry::Live(run) = entry
                && !run.state.borrow().status.finished()
            {
                run.stop.cancel();
            }
        }
    }

    /// Whether a run is going in this process (a background one after its turn ended, say):
    /// a host does not close the session under it.
    pub fn any_running(&self) -> bool {
        self.table()
            .iter()
            .any(|entry| matches!(entry, Entry::Live(run) if !run.state.borrow().status.finished()))
    }

    /// Every run of the session as it stands, oldest first.
    pub(crate) fn all(&self) -> Vec<WorkflowRun> {
        self.table().iter().map(Entry::run).collect()
    }
}

/// The id after `ids`: `wfN`, `N` one more than the highest number among them.
fn next_run_id(ids: impl Iterator<Item = String>) -> String {
    let highest = ids
        .filter_map(|id| id.strip_prefix("wf").and_then(|n| n.parse::<u64>().ok()))
        .max()
        .unwrap_or(0);
    format!("wf{}", highest + 1)
}

/// Adds `step` to `steps`, or replaces the step of the same index.
fn put(steps: &mut Vec<WorkflowStep>, step: WorkflowStep) {
    match steps.iter_mut().find(|s| s.index == step.index) {
        Some(existing) => *existing = step,
        None => steps.push(step),
    }
}

/// Milliseconds from `started_at` (RFC 3339) until now; `None` when it cannot be read.
fn since(started_at: &str) -> Option<u64> {
    let started = chrono::DateTime::parse_from_rfc3339(started_at).ok()?;
    let elapsed = chrono::Utc::now().signed_duration_since(started);
    u64::try_from(elapsed.num_milliseconds()).ok()
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
    /// How many report sections the run had when this process took it up (a resumed run's
    /// replayed code adds them again: those are not recorded twice).
    recorded_reports: usize,
    /// How many report sections the code added in this process.
    reports_made: AtomicUsize,
}

impl RunHandle {
    /// The handle of `run`, started at `started`: a new run, or one resumed with the steps
    /// it had recorded.
    fn new(
        session: Arc<Session>,
        run: WorkflowRun,
        stop: CancellationToken,
        started: Instant,
    ) -> Self {
        let steps = run
            .steps
            .iter()
            .filter_map(|step| step.call_id.clone().map(|call_id| (call_id, step.index)))
            .collect();
        let recorded_reports = run
            .steps
            .iter()
            .filter(|step| step.kind == WorkflowStepKind::Report)
            .count();
        let (state, _) = watch::channel(run);
        RunHandle {
            session,
            state,
            stop,
            stopped: AtomicBool::new(false),
            started,
            steps: Mutex::new(steps),
            recorded_reports,
            reports_made: AtomicUsize::new(0),
        }
    }

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
        self.state
            .send_modify(|run| put(&mut run.steps, step.clone()));
        self.session
            .events()
            .emit(EventBody::WorkflowStep(WorkflowStepEvent { run_id, step }));
    }

    fn next_index(&self) -> u32 {
        self.state.borrow().steps.len() as u32
    }

    /// The step recorded for call `call_id`, if there is one.
    fn step_of(&self, call_id: &str) -> Option<WorkflowStep> {
        let index = self.step_map().get(call_id).copied()?;
        self.state
            .borrow()
            .steps
            .iter()
            .find(|step| step.index == index)
            .cloned()
    }

    /// Records a call step (the run's `checks` after the script, say) the runtime made itself.
    /// A call that has a step already (a resumed run dispatching a journaled call again) keeps
    /// its index.
    pub(crate) fn call_step(&self, call_id: &str, tool: &str, title: String) {
        let known = self.step_map().get(call_id).copied();
        let index = known.unwrap_or_else(|| self.next_index());
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

    fn step_map(&self) -> parking_lot::MutexGuard<'_, HashMap<String, u32>> {
        self.steps.lock()
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
        if let Some(mut step) = self.step_of(call_id) {
            step.status = Some(status_name(status).to_string());
            self.put_step(step);
        }
    }

    fn call_replayed(&self, call_id: &str, tool: &str, arguments: &Value, status: CallStatus) {
        let step = match self.step_of(call_id) {
            Some(step) => step,
            // The process ended between the call's result and its step's end.
            None => {
                let index = self.next_index();
                self.step_map().insert(call_id.to_string(), index);
                WorkflowStep {
                    index,
                    kind: WorkflowStepKind::Call,
                    call_id: Some(call_id.to_string()),
                    tool: Some(tool.to_string()),
                    status: None,
                    title: call_title(tool, arguments),
                    text: None,
                    replayed: false,
                    at: now(),
                }
            }
        };
        let status = Some(status_name(status).to_string());
        if step.replayed && step.status == status {
            return;
        }
        self.put_step(WorkflowStep {
            status,
            replayed: true,
            ..step
        });
    }

    fn report(&self, title: String, text: String) {
        // The code replayed after a restart adds the sections it had added before again.
        if self.reports_made.fetch_add(1, Ordering::SeqCst) < self.recorded_reports {
            return;
        }
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
    use super::*;
    use serde_json::json;

    fn event(seq: u64, body: EventBody) -> Event {
        Event {
            seq,
            time: "2026-01-01T00:00:00Z".into(),
            body,
        }
    }

    fn run(id: &str, call_id: &str, background: bool) -> WorkflowRun {
        WorkflowRun {
            run_id: id.into(),
            call_id: Some(call_id.into()),
            workflow: "review".into(),
            description: None,
            args: json!({}),
            status: WorkflowStatus::Running,
            background,
            steps: Vec::new(),
            result: None,
            error: None,
            started_at: "2026-01-01T00:00:00Z".into(),
            ended_at: None,
            duration_ms: None,
        }
    }

    fn call_step(index: u32, call_id: &str, status: &str) -> WorkflowStep {
        WorkflowStep {
            index,
            kind: WorkflowStepKind::Call,
            call_id: Some(call_id.into()),
            tool: Some("bash".into()),
            status: Some(status.into()),
            title: "bash".into(),
            text: None,
            replayed: false,
            at: "2026-01-01T00:00:01Z".into(),
        }
    }

    fn report_step(index: u32, title: &str) -> WorkflowStep {
        WorkflowStep {
            index,
            kind: WorkflowStepKind::Report,
            call_id: None,
            tool: None,
            status: None,
            title: title.into(),
            text: Some("text".into()),
            replayed: false,
            at: "2026-01-01T00:00:02Z".into(),
        }
    }

    fn started(seq: u64, run: WorkflowRun) -> Event {
        event(
            seq,
            EventBody::WorkflowStarted(WorkflowStartedEvent { run }),
        )
    }

    fn stepped(seq: u64, run_id: &str, step: WorkflowStep) -> Event {
        event(
            seq,
            EventBody::WorkflowStep(WorkflowStepEvent {
                run_id: run_id.into(),
                step,
            }),
        )
    }

    /// wf1 completed; wf2 (foreground, under call_3) and wf3 (background, under call_5) were
    /// left running, wf2 after its first call ended, wf3 with a call running and a report.
    fn log() -> Vec<Event> {
        let mut done = run("wf1", "call_1", false);
        done.status = WorkflowStatus::Completed;
        done.steps = vec![call_step(0, "call_1.1", "ok")];
        vec![
            started(1, run("wf1", "call_1", false)),
            stepped(2, "wf1", call_step(0, "call_1.1", "running")),
            event(
                3,
                EventBody::WorkflowFinished(WorkflowFinishedEvent { run: done }),
            ),
            started(4, run("wf2", "call_3", false)),
            stepped(5, "wf2", call_step(0, "call_3.1", "running")),
            stepped(6, "wf2", call_step(0, "call_3.1", "ok")),
            started(7, run("wf3", "call_5", true)),
            stepped(8, "wf3", report_step(0, "Plan")),
            stepped(9, "wf3", call_step(1, "call_5.1", "running")),
        ]
    }

    #[test]
    fn the_runs_are_rebuilt_from_the_log_each_as_its_last_event_left_it() {
        let runs = WorkflowRuns::from_events(&log());
        let all = runs.all();
        let ids: Vec<&str> = all.iter().map(|run| run.run_id.as_str()).collect();
        assert_eq!(ids, ["wf1", "wf2", "wf3"]);
        assert_eq!(all[0].status, WorkflowStatus::Completed);
        assert_eq!(all[1].status, WorkflowStatus::Running);
        assert_eq!(all[1].steps, vec![call_step(0, "call_3.1", "ok")]);
        assert_eq!(all[2].steps.len(), 2);
        assert_eq!(runs.waiting_background_calls(), ["call_5"]);
        assert!(
            matches!(runs.get("wf1"), Ok(FoundRun::Recorded(run)) if run.status == WorkflowStatus::Completed)
        );
        let missing = runs.get("wf9").err().unwrap_or_default();
        assert!(missing.contains("wf1, wf2, wf3"), "{missing}");
    }

    #[test]
    fn the_next_run_is_numbered_after_the_recorded_ones() {
        let runs = WorkflowRuns::from_events(&log());
        let session = Arc::new(Session::new("s", "/tmp", "/tmp"));
        let handle = runs.start(session, run("", "call_9", false), CancellationToken::new());
        assert_eq!(handle.id(), "wf4");
        assert_eq!(
            next_run_id(["wf2".to_string(), "x".to_string()].into_iter()),
            "wf3"
        );
        assert_eq!(next_run_id(std::iter::empty()), "wf1");
    }

    #[test]
    fn a_run_left_running_resumes_under_its_id_without_recording_what_it_recorded_again() {
        let runs = WorkflowRuns::from_events(&log());
        let session = Arc::new(Session::new("s", "/tmp", "/tmp"));
        let mut seen = session.events().subscribe();
        let handle = runs
            .resume(Arc::clone(&session), "call_5", CancellationToken::new())
            .expect("wf3 waits under call_5");
        assert_eq!(handle.id(), "wf3");
        assert!(
            runs.resume(Arc::clone(&session), "call_5", CancellationToken::new())
                .is_none(),
            "taken once"
        );
        assert!(runs.of_call("call_5").is_some());
        assert!(runs.waiting_background_calls().is_empty());
        // The replayed code adds its report again: not recorded twice. Its call, answered
        // from the journal, is marked replayed under its index.
        handle.report("Plan".into(), "text".into());
        handle.call_replayed("call_5.1", "bash", &json!({}), CallStatus::Ok);
        handle.call_started("call_5.2", "bash", &json!({}));
        handle.report("Summary".into(), "text".into());
        let steps = handle.snapshot().steps;
        assert_eq!(steps.len(), 4, "{steps:#?}");
        assert_eq!(steps[1].status.as_deref(), Some("ok"));
        assert!(steps[1].replayed);
        assert_eq!(
            (steps[2].index, steps[2].call_id.as_deref()),
            (2, Some("call_5.2"))
        );
        assert_eq!((steps[3].index, steps[3].title.as_str()), (3, "Summary"));
        let mut kinds = Vec::new();
        while let Ok(event) = seen.try_recv() {
            kinds.push(event.body.kind());
        }
        assert_eq!(kinds, ["workflow.step"; 3], "no second workflow.started");
    }

    #[test]
    fn a_foreground_run_whose_turn_is_not_continued_is_recorded_interrupted() {
        let runs = WorkflowRuns::from_events(&log());
        let session = Session::new("s", "/tmp", "/tmp");
        let mut seen = session.events().subscribe();
        assert_eq!(runs.close_unresumable(&session, &[], true), 1);
        let all = runs.all();
        assert_eq!(all[1].status, WorkflowStatus::Interrupted);
        assert!(all[1].ended_at.is_some());
        assert_eq!(
            all[2].status,
            WorkflowStatus::Running,
            "the background one resumes"
        );
        let closed = seen.try_recv().expect("workflow.finished");
        assert!(matches!(closed.body, EventBody::WorkflowFinished(f) if f.run.run_id == "wf2"));

        let runs = WorkflowRuns::from_events(&log());
        assert_eq!(
            runs.close_unresumable(&session, &["call_3".to_string()], true),
            0
        );
        assert_eq!(
            runs.close_unresumable(&session, &["call_3".to_string()], false),
            1
        );
    }

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
