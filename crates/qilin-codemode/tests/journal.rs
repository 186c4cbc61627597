//! The call journal: a run cut short (its log ends part-way, as when the process running it
//! is killed) is run again with the journal of its log, and every journaled call's result
//! comes from the journal, its tool not running again.

mod support;

use qilin_codemode::{CallJournal, CodeLimits, CodeMode, Journals};
use qilin_protocol::{
    CallPresentation, CallStatus, Detail, ErrorCode, Event, EventBody, ToolResultEvent,
    ToolStartEvent,
};
use qilin_tool::{
    CallOutcome, Caller, Executor, Services, Session, Tool, ToolCall, ToolContext, ToolRegistry,
    ToolResult,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The labels each counting tool was called with, in order: their side effects.
#[derive(Default)]
struct Ledger(Mutex<Vec<String>>);

impl Ledger {
    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct MarkArgs {
    /// What to write down.
    label: String,
}

/// Writes the label down (a side effect), and says how many are written.
#[derive(qilin_tool::Tool)]
#[tool(name = "mark")]
struct Mark(Arc<Ledger>);

impl Tool for Mark {
    type Args = MarkArgs;
    type Output = usize;
    fn prompt_hint(&self) -> &str {
        "For tests."
    }
    fn present(&self, args: &MarkArgs) -> CallPresentation {
        CallPresentation::new("Mark", &args.label)
    }
    fn before_detail(&self, _: &MarkArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &MarkArgs, _: &ToolResult<usize>) -> Option<Detail> {
        None
    }
    async fn call(&self, args: MarkArgs, _: &ToolContext) -> ToolResult<usize> {
        let mut ledger = self.0.0.lock().unwrap();
        ledger.push(args.label);
        Ok(ledger.len())
    }
}

/// Reads how many labels are written; changes nothing.
#[derive(qilin_tool::Tool)]
#[tool(name = "peek", read_only)]
struct Peek(Arc<Ledger>);

impl Tool for Peek {
    type Args = MarkArgs;
    type Output = usize;
    fn prompt_hint(&self) -> &str {
        "For tests."
    }
    fn present(&self, args: &MarkArgs) -> CallPresentation {
        CallPresentation::new("Peek", &args.label)
    }
    fn before_detail(&self, _: &MarkArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &MarkArgs, _: &ToolResult<usize>) -> Option<Detail> {
        None
    }
    async fn call(&self, args: MarkArgs, _: &ToolContext) -> ToolResult<usize> {
        let mut ledger = self.0.0.lock().unwrap();
        ledger.push(format!("peek {}", args.label));
        Ok(ledger.len())
    }
}

/// One process's view of a session kept in `dir`: its tools count their side effects in
/// `ledger`, and `journals` holds what a host resuming it would replay.
struct Process {
    executor: Executor,
    ledger: Arc<Ledger>,
    journals: Arc<Journals>,
}

impl Process {
    fn new(dir: &Path) -> Self {
        let ledger = Arc::new(Ledger::default());
        let mut registry =
            support::registry(CodeMode::in_process(CodeLimits::default()), Arc::default());
        registry = {
            let mut more = ToolRegistry::new();
            more.register(Mark(Arc::clone(&ledger))).unwrap();
            more.register(Peek(Arc::clone(&ledger))).unwrap();
            registry.extend(&more).unwrap();
            registry
        };
        let journals = Arc::new(Journals::default());
        let mut services = Services::default();
        services.insert(Arc::clone(&journals));
        let session = Session::new("s1", dir, dir.join("data")).with_services(services);
        Process {
            executor: Executor::new(Arc::new(registry), Arc::new(session)),
            ledger,
            journals,
        }
    }

    /// Runs `code` as the `run_code` call `rc1`, returning its outcome and every event.
    async fn run(&self, code: &str) -> (CallOutcome, Vec<Event>) {
        let mut events = self.executor.session().events().subscribe();
        let outcome = self
            .executor
            .dispatch(
                ToolCall {
                    call_id: "rc1".into(),
                    name: "run_code".into(),
                    arguments: json!({ "code": code }),
                },
                Caller::Direct,
            )
            .await;
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        (outcome, seen)
    }

    /// Journals the run `rc1` of `log`, as a host resuming the session would.
    fn resume_from(&self, log: &[Event]) -> CallJournal {
        let journal = CallJournal::from_events("rc1", log, self.executor.session());
        self.journals.insert(journal.clone());
        journal
    }
}

const FIVE_MARKS: &str = r#"
seen = []
for i in range(1, 6):
    seen.append(sdk.tool.call("mark", {"label": f"call {i}"}))
print("marked", seen)
seen
"#;

/// The log up to (and with) the event `keep` finds last.
fn cut_after(log: &[Event], keep: impl Fn(&EventBody) -> bool) -> Vec<Event> {
    let end = log.iter().rposition(|event| keep(&event.body)).unwrap();
    log[..=end].to_vec()
}

fn result_of<'e>(body: &'e EventBody, call_id: &str) -> Option<&'e ToolResultEvent> {
    match body {
        EventBody::ToolResult(result) if result.call_id == call_id => Some(result),
        _ => None,
    }
}

fn start_of<'e>(body: &'e EventBody, call_id: &str) -> Option<&'e ToolStartEvent> {
    match body {
        EventBody::ToolStart(start) if start.call_id == call_id => Some(start),
        _ => None,
    }
}

fn nested_starts(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolStart(start) if start.parent_call_id.is_some() => {
                Some(start.call_id.clone())
            }
            _ => None,
        })
        .collect()
}

fn error_of(outcome: &CallOutcome) -> String {
    outcome
        .error
        .as_ref()
        .expect("the run failed")
        .message
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cut_after_its_third_call_completes_without_repeating_the_first_three() {
    let dir = tempfile::tempdir().unwrap();
    let first = Process::new(dir.path());
    let (whole, log) = first.run(FIVE_MARKS).await;
    assert_eq!(whole.status, CallStatus::Ok, "{:?}", whole.error);
    // The process died right after the third call's result was recorded.
    let log = cut_after(&log, |body| result_of(body, "rc1.3").is_some());
    assert_eq!(first.ledger.entries().len(), 5);

    let second = Process::new(dir.path());
    // The side effects of calls 1–3 happened before the restart.
    second
        .ledger
        .0
        .lock()
        .unwrap()
        .extend(["call 1", "call 2", "call 3"].map(String::from));
    let journal = second.resume_from(&log);
    assert_eq!(journal.len(), 3);
    let (replayed, events) = second.run(FIVE_MARKS).await;
    assert_eq!(replayed.status, CallStatus::Ok, "{:?}", replayed.error);
    assert_eq!(
        second.ledger.entries(),
        ["call 1", "call 2", "call 3", "call 4", "call 5"],
        "calls 1–3 were not run again; 4 and 5 ran once"
    );
    let output = replayed.output.unwrap();
    assert_eq!(output["value"], json!([1, 2, 3, 4, 5]));
    assert_eq!(output["printed"], "marked [1, 2, 3, 4, 5]\n");
    assert_eq!(output["tool_calls"], 5);
    // No second card for a replayed call: only calls 4 and 5 were recorded again.
    assert_eq!(nested_starts(&events), ["rc1.4", "rc1.5"]);
    // And a journal that is used is gone: the next run of the same call runs for real.
    assert!(second.journals.take("rc1").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journaled_failure_is_raised_again_with_the_same_message() {
    let dir = tempfile::tempdir().unwrap();
    let code = r#"
try:
    sdk.tool.call("fail", {"message": "the disk is full"})
except ToolError as e:
    print("caught", sdk.tool.error(e))
sdk.tool.call("mark", {"label": "after"})
"#;
    let first = Process::new(dir.path());
    let (whole, log) = first.run(code).await;
    let printed = whole.output.unwrap()["printed"].clone();
    let log = cut_after(&log, |body| result_of(body, "rc1.1").is_some());

    let second = Process::new(dir.path());
    second.resume_from(&log);
    let (replayed, _) = second.run(code).await;
    assert_eq!(replayed.output.unwrap()["printed"], printed);
    assert_eq!(second.ledger.entries(), ["after"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gathered_calls_are_answered_from_the_journal_too() {
    let dir = tempfile::tempdir().unwrap();
    let code = r#"
import asyncio
both = await asyncio.gather(
    sdk.tool.call_async("mark", {"label": "a"}),
    sdk.tool.call_async("mark", {"label": "b"}),
)
last = sdk.tool.call("mark", {"label": "c"})
[sorted(both), last]
"#;
    let first = Process::new(dir.path());
    let (whole, log) = first.run(code).await;
    assert_eq!(whole.status, CallStatus::Ok, "{:?}", whole.error);
    let log = cut_after(&log, |body| {
        result_of(body, "rc1.1").is_some() || result_of(body, "rc1.2").is_some()
    });
    let journaled = CallJournal::from_events("rc1", &log, first.executor.session());
    assert!(journaled.calls().all(|call| call.result.is_some()));

    let second = Process::new(dir.path());
    second
        .ledger
        .0
        .lock()
        .unwrap()
        .extend(["a", "b"].map(String::from));
    second.resume_from(&log);
    let (replayed, events) = second.run(code).await;
    assert_eq!(
        replayed.output.unwrap()["value"],
        json!([[1, 2], 3]),
        "the two gathered calls came from the journal"
    );
    assert_eq!(second.ledger.entries(), ["a", "b", "c"]);
    assert_eq!(nested_starts(&events), ["rc1.3"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_divergent_replay_is_refused_naming_both_calls() {
    let dir = tempfile::tempdir().unwrap();
    let first = Process::new(dir.path());
    let (_, log) = first.run(FIVE_MARKS).await;
    let log = cut_after(&log, |body| result_of(body, "rc1.3").is_some());

    let second = Process::new(dir.path());
    second.resume_from(&log);
    let changed = FIVE_MARKS.replace("f\"call {i}\"", "f\"mark {i}\"");
    let (refused, events) = second.run(&changed).await;
    assert_eq!(refused.status, CallStatus::Error);
    let message = error_of(&refused);
    assert!(message.contains("at call rc1.1"), "{message}");
    assert!(
        message.contains(r#"`mark` with {"label":"mark 1"}"#),
        "names what the code asked: {message}"
    );
    assert!(
        message.contains(r#"`mark` with {"label":"call 1"}"#),
        "names what the journal holds: {message}"
    );
    assert!(second.ledger.entries().is_empty(), "nothing ran");
    assert!(nested_starts(&events).is_empty());

    // Another tool at the same position is a divergence as well.
    second.resume_from(&log);
    let (refused, _) = second
        .run("sdk.tool.call('echo', {'text': 'call 1'})")
        .await;
    let message = error_of(&refused);
    assert!(message.contains("`echo` with"), "{message}");
    assert!(message.contains("`mark` with"), "{message}");

    // So is code that ends before making every journaled call.
    second.resume_from(&log);
    let (refused, _) = second
        .run("sdk.tool.call('mark', {'label': 'call 1'})\n'done'")
        .await;
    let message = error_of(&refused);
    assert!(message.contains("at call rc1.2"), "{message}");
    assert!(
        message.contains("ended before making that call"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_may_change_something_without_a_journaled_result_ends_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let first = Process::new(dir.path());
    let (_, log) = first.run(FIVE_MARKS).await;
    // The process died while the fourth call ran: its start is logged, its result is not.
    let log = cut_after(&log, |body| start_of(body, "rc1.4").is_some());

    let second = Process::new(dir.path());
    let journal = second.resume_from(&log);
    assert_eq!(journal.len(), 4);
    assert!(journal.calls().last().unwrap().result.is_none());
    let (refused, events) = second.run(FIVE_MARKS).await;
    assert_eq!(refused.status, CallStatus::Error);
    assert_eq!(refused.error.as_ref().unwrap().code, ErrorCode::ToolFailed);
    let message = error_of(&refused);
    assert!(message.contains("call rc1.4"), "{message}");
    assert!(
        message.contains(r#"`mark` with {"label":"call 4"}"#),
        "{message}"
    );
    assert!(message.contains("is unknown"), "{message}");
    assert!(second.ledger.entries().is_empty(), "nothing ran again");
    // The call left open by the dead process gets its result, so its card ends.
    let closed = events
        .iter()
        .find_map(|event| result_of(&event.body, "rc1.4"))
        .expect("the open call is closed");
    assert_eq!(closed.status, CallStatus::Interrupted);
    assert!(nested_starts(&events).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_call_without_a_journaled_result_runs_again_under_its_own_id() {
    let dir = tempfile::tempdir().unwrap();
    let code = r#"
a = sdk.tool.call("mark", {"label": "one"})
b = sdk.tool.call("peek", {"label": "count"})
c = sdk.tool.call("mark", {"label": "two"})
[a, b, c]
"#;
    let first = Process::new(dir.path());
    let (_, log) = first.run(code).await;
    let log = cut_after(&log, |body| start_of(body, "rc1.2").is_some());

    let second = Process::new(dir.path());
    second.ledger.0.lock().unwrap().push("one".into());
    second.resume_from(&log);
    let (replayed, events) = second.run(code).await;
    assert_eq!(replayed.status, CallStatus::Ok, "{:?}", replayed.error);
    assert_eq!(replayed.output.unwrap()["value"], json!([1, 2, 3]));
    assert_eq!(second.ledger.entries(), ["one", "peek count", "two"]);
    // The read-only call ran again as the same call: one card, updated.
    assert_eq!(nested_starts(&events), ["rc1.2", "rc1.3"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_the_log_cut_is_replayed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let code = r#"
big = sdk.tool.call("echo", {"text": "x", "times": 50000})
sdk.tool.call("mark", {"label": "after"})
[big["length"], len(big["text"])]
"#;
    let first = Process::new(dir.path());
    let (whole, log) = first.run(code).await;
    assert_eq!(whole.output.unwrap()["value"], json!([50000, 50000]));
    let logged = log
        .iter()
        .find_map(|event| result_of(&event.body, "rc1.1"))
        .and_then(|result| result.output.clone())
        .unwrap();
    assert!(
        logged["text"].as_str().unwrap().len() < 50000,
        "the log keeps the text cut"
    );
    let log = cut_after(&log, |body| result_of(body, "rc1.1").is_some());

    let second = Process::new(dir.path());
    let journal = second.resume_from(&log);
    let replayed_output: &Value = journal
        .calls()
        .next()
        .unwrap()
        .result
        .as_ref()
        .unwrap()
        .output
        .as_ref()
        .unwrap();
    assert_eq!(replayed_output["text"].as_str().unwrap().len(), 50000);
    let (replayed, _) = second.run(code).await;
    assert_eq!(replayed.output.unwrap()["value"], json!([50000, 50000]));

    // Without the saved whole, the cut output is no result: `echo` is not read-only.
    std::fs::remove_file(second.executor.session().logged_output_path("rc1.1")).unwrap();
    let journal = CallJournal::from_events("rc1", &log, second.executor.session());
    assert!(journal.calls().next().unwrap().result.is_none());
}
