//! Loops: a scripted model run again and again, each iteration a fresh child session, with
//! real checks in a temporary workspace — a check passing on the third iteration, the
//! `max_iterations` bound, a stall, `loop_stop` during an iteration, a token budget, the
//! promise, the tools, and a session resumed after its process stopped mid-iteration.

mod support;

use qilin_protocol::checks::CheckConclusion;
use qilin_protocol::loops::{
    IterationStatus, LoopBudget, LoopRecord, LoopStatus, LoopStopReason, LoopUntil, StartLoop,
};
use qilin_protocol::{CallStatus, Event, EventBody, FinishReason};
use qilin_runtime::SessionHandle;
use qilin_store::EventStore;
use std::time::Duration;
use support::*;

/// Bash and the loop tools, with a check that passes once `fixed.txt` exists.
const WORKER: &str = "name: worker\ninstructions: Work on the task.\n\
                      tools: [bash, loop_start, loop_status, loop_stop]\n\
                      checks:\n  - id: fixed\n    description: fixed.txt exists.\n    \
                      command: test -f fixed.txt\n";

/// Every iteration adds a line to `attempts.txt`; the third writes `fixed.txt` too.
const THIRD_TIME_LUCKY: &str = r#"
turns:
  - calls:
      - tool: bash
        args:
          command: "echo try >> attempts.txt; if [ $(wc -l < attempts.txt) -ge 3 ]; then echo ok > fixed.txt; fi"
  - say: I made an attempt.
"#;

/// The attempt of [`THIRD_TIME_LUCKY`], as a bash call of a script.
const ATTEMPT: &str = r#"
  - calls:
      - tool: bash
        args:
          command: "echo try >> attempts.txt; if [ $(wc -l < attempts.txt) -ge 3 ]; then echo ok > fixed.txt; fi""#;

/// The first summary the loop's session is compacted to.
const FIRST_SUMMARY: &str =
    "Summary one: an attempt was added to attempts.txt; fixed.txt is missing.";

/// The second summary.
const SECOND_SUMMARY: &str = "Summary two: two attempts so far; fixed.txt is still missing.";

/// Three iterations as turns of one session, with the compactions' summaries in between: the
/// scripted model plays a summary request with the turn after the last one played, and a
/// conversation starting from a summary from the turn after it.
fn shared_script() -> String {
    format!(
        "turns:{ATTEMPT}\n  - say: I made an attempt.\n  - say: \"{FIRST_SUMMARY}\"\
         {ATTEMPT}\n  - say: I made another attempt.\n  - say: \"{SECOND_SUMMARY}\"\
         {ATTEMPT}\n  - say: The third attempt made it.\n"
    )
}

/// Every iteration only says it has nothing to do.
const IDLE: &str = r#"
turns:
  - say: Nothing I can change.
"#;

fn start(checks: &[&str], promise: Option<&str>, max: u32) -> StartLoop {
    StartLoop {
        prompt: "Make the `fixed` check pass.".into(),
        until: LoopUntil {
            checks: checks.iter().map(|id| id.to_string()).collect(),
            promise: promise.map(str::to_string),
        },
        max_iterations: max,
        fresh_context: None,
        budget: None,
    }
}

/// Waits until loop `id` of `handle` has finished; returns it.
async fn finished(handle: &SessionHandle, id: &str) -> LoopRecord {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let record = handle
            .loops()
            .into_iter()
            .find(|record| record.loop_id == id)
            .unwrap();
        if record.status == LoopStatus::Finished {
            return record;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the loop never finished: {record:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The loop events of `events`, as their `type` tags with the iteration numbers.
fn loop_events(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::LoopStarted(_) => Some("started".to_string()),
            EventBody::LoopIteration(changed) => Some(format!(
                "#{} {}",
                changed.iteration.number,
                changed.iteration.status.as_str()
            )),
            EventBody::LoopFinished(_) => Some("finished".to_string()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_runs_until_its_check_passes_on_the_third_iteration() {
    let f = fixture(WORKER);
    let handle = f.session(THIRD_TIME_LUCKY, false).await;
    let started = handle.start_loop(start(&["fixed"], None, 5)).unwrap();
    assert_eq!(started.status, LoopStatus::Running);
    let record = finished(&handle, &started.loop_id).await;

    assert_eq!(record.stop_reason, Some(LoopStopReason::ChecksPassed));
    assert_eq!(record.iterations.len(), 3, "{record:#?}");
    let mut sessions = Vec::new();
    for (index, iteration) in record.iterations.iter().enumerate() {
        assert_eq!(iteration.number, index as u32 + 1);
        assert_eq!(iteration.status, IterationStatus::Finished);
        assert!(iteration.input_tokens > 0 && iteration.output_tokens > 0);
        assert!(iteration.duration_ms.is_some());
        let check = &iteration.checks[..];
        assert_eq!(check.len(), 1, "{iteration:#?}");
        assert_eq!(check[0].id, "fixed");
        sessions.push(iteration.session_id.clone().unwrap());
    }
    // The workspace is no repository: the changes come from file hashes.
    let files = |n: usize| -> Vec<(String, String)> {
        record.iterations[n]
            .files
            .iter()
            .map(|file| (file.path.clone(), file.change.clone()))
            .collect()
    };
    assert_eq!(files(0), [("attempts.txt".into(), "added".into())]);
    assert_eq!(files(1), [("attempts.txt".into(), "modified".into())]);
    assert_eq!(
        files(2),
        [
            ("attempts.txt".into(), "modified".into()),
            ("fixed.txt".into(), "added".into())
        ]
    );
    let conclusions: Vec<CheckConclusion> = record
        .iterations
        .iter()
        .map(|iteration| iteration.checks[0].conclusion)
        .collect();
    assert_eq!(
        conclusions,
        [
            CheckConclusion::Failure,
            CheckConclusion::Failure,
            CheckConclusion::Success
        ]
    );
    assert!(
        record.iterations[0]
            .outcome
            .as_deref()
            .unwrap()
            .starts_with("check fixed failed"),
        "{:?}",
        record.iterations[0].outcome
    );
    assert!(
        record.iterations[0]
            .outcome
            .as_deref()
            .unwrap()
            .ends_with("going on")
    );
    assert_eq!(
        record.iterations[2].outcome.as_deref(),
        Some("checks passed")
    );

    // Each iteration ran in its own fresh child session, linked to the starting session.
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), 3);
    for id in &sessions {
        let info = f.store.session(id).await.unwrap().unwrap();
        assert_eq!(info.parent_session_id.as_deref(), Some(handle.id()));
        assert_eq!(
            info.parent_call_id.as_deref(),
            Some(started.loop_id.as_str())
        );
    }

    // The log holds the loop: each iteration at its start and with its report, then its end;
    // folded, it is the loop the runtime reports.
    let events = stored(&handle).await;
    assert_eq!(
        loop_events(&events),
        [
            "started",
            "#1 running",
            "#1 finished",
            "#2 running",
            "#2 finished",
            "#3 running",
            "#3 finished",
            "finished"
        ]
    );
    assert_eq!(qilin_loops::fold_loops(&events), vec![record]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_iterations_stops_a_loop_whose_check_keeps_failing() {
    let f = fixture(WORKER);
    let handle = f.session(THIRD_TIME_LUCKY, false).await;
    let started = handle.start_loop(start(&["fixed"], None, 2)).unwrap();
    let record = finished(&handle, &started.loop_id).await;
    assert_eq!(record.stop_reason, Some(LoopStopReason::MaxIterations));
    assert_eq!(record.iterations.len(), 2);
    let outcome = record.iterations[1].outcome.clone().unwrap();
    assert!(
        outcome.ends_with("stopping: 2 of 2 iterations ran"),
        "{outcome}"
    );
    assert!(!f.workspace().join("fixed.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_iterations_that_change_nothing_and_fail_alike_stall_the_loop() {
    let f = fixture(WORKER);
    let handle = f.session(IDLE, false).await;
    let started = handle.start_loop(start(&["fixed"], None, 10)).unwrap();
    let record = finished(&handle, &started.loop_id).await;
    assert_eq!(record.stop_reason, Some(LoopStopReason::Stalled));
    assert_eq!(record.iterations.len(), 3, "{record:#?}");
    assert!(record.iterations.iter().all(|i| i.files.is_empty()));
    let outcome = record.iterations[2].outcome.clone().unwrap();
    assert!(
        outcome.contains("the same failure 3 iterations in a row"),
        "{outcome}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_budget_stops_the_loop() {
    let f = fixture(WORKER);
    let handle = f.session(THIRD_TIME_LUCKY, false).await;
    let mut request = start(&["fixed"], None, 10);
    request.budget = Some(LoopBudget {
        tokens: Some(1),
        ..LoopBudget::default()
    });
    let started = handle.start_loop(request).unwrap();
    let record = finished(&handle, &started.loop_id).await;
    assert_eq!(record.stop_reason, Some(LoopStopReason::Budget));
    assert_eq!(record.iterations.len(), 1, "{record:#?}");
    let outcome = record.iterations[0].outcome.clone().unwrap();
    assert!(outcome.contains("token budget is spent"), "{outcome}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_promise_ends_a_loop_with_no_check() {
    let f = fixture(WORKER);
    let script = "turns:\n  - say: \"All done. <promise>DONE</promise>\"\n";
    let handle = f.session(script, false).await;
    let started = handle.start_loop(start(&[], Some("DONE"), 5)).unwrap();
    let record = finished(&handle, &started.loop_id).await;
    assert_eq!(record.stop_reason, Some(LoopStopReason::PromiseSeen));
    assert_eq!(record.iterations.len(), 1);
    assert!(record.iterations[0].promise_seen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loop_stop_interrupts_the_running_iteration() {
    let f = fixture(WORKER);
    let script = r#"
turns:
  - calls:
      - tool: bash
        args: {command: "touch begun.txt; sleep 30"}
  - say: Slept.
"#;
    let handle = f.session(script, false).await;
    let started = handle.start_loop(start(&["fixed"], None, 5)).unwrap();
    // Wait until the iteration's call runs.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !f.workspace().join("begun.txt").exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the iteration never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let clock = std::time::Instant::now();
    let stopped = handle.stop_loop(&started.loop_id).await.unwrap();
    assert!(
        clock.elapsed() < Duration::from_secs(20),
        "the stop waited for the call"
    );
    assert_eq!(stopped.status, LoopStatus::Finished);
    assert_eq!(stopped.stop_reason, Some(LoopStopReason::Stopped));
    assert_eq!(stopped.iterations.len(), 1);
    let iteration = &stopped.iterations[0];
    assert_eq!(iteration.status, IterationStatus::Interrupted);
    assert_eq!(iteration.outcome.as_deref(), Some("stopped by a person"));
    assert!(iteration.checks.is_empty(), "no check runs after a stop");

    // The child's call ended interrupted.
    let child = iteration.session_id.clone().unwrap();
    let events = f.store.read(&child, 0, usize::MAX).await.unwrap();
    let bash = events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == "bash" => Some(result.status),
            _ => None,
        })
        .unwrap();
    assert_eq!(bash, CallStatus::Interrupted);
    // Stopping it again gives it as it ended.
    assert_eq!(handle.stop_loop(&started.loop_id).await.unwrap(), stopped);
    let unknown = handle.stop_loop("loop-9").await.unwrap_err();
    assert!(unknown.message.contains("loops are: loop-1"), "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_start_follow_and_refuse() {
    let f = fixture(WORKER);
    // The session starts a one-iteration loop and reads it; the iteration (playing the same
    // script from its start) is refused a loop of its own: it is a child session.
    let script = r#"
turns:
  - calls:
      - tool: loop_start
        args: {prompt: "Fix it.", until: {checks: [fixed]}, max_iterations: 1}
      - tool: loop_start
        args: {prompt: "Fix it.", until: {checks: [lint]}, max_iterations: 1}
  - say: Started.
"#;
    let handle = f.session(script, false).await;
    handle.submit("Start a loop.", None).unwrap();
    handle.wait_idle().await;
    let events = stored(&handle).await;
    let results: Vec<_> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) => Some(result.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        results[0].status,
        CallStatus::Ok,
        "{:?}",
        results[0].content
    );
    assert_eq!(results[1].status, CallStatus::Error);
    let refused = serde_json::to_string(&results[1].content).unwrap();
    assert!(refused.contains("declared checks are: fixed"), "{refused}");
    let id = results[0].output.as_ref().unwrap()["loop"]["loopId"]
        .as_str()
        .unwrap()
        .to_string();
    let record = finished(&handle, &id).await;
    assert_eq!(record.stop_reason, Some(LoopStopReason::MaxIterations));
    // The iteration's session is linked to the `loop_start` call, and its own loop_start
    // was refused.
    let child = record.iterations[0].session_id.clone().unwrap();
    let info = f.store.session(&child).await.unwrap().unwrap();
    assert_eq!(
        info.parent_call_id.as_deref(),
        Some(results[0].call_id.as_str())
    );
    let child_events = f.store.read(&child, 0, usize::MAX).await.unwrap();
    let child_refusal = child_events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == "loop_start" => {
                Some(serde_json::to_string(&result.content).unwrap())
            }
            _ => None,
        })
        .unwrap();
    assert!(child_refusal.contains("starts no loop"), "{child_refusal}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_records_the_cut_iteration_and_goes_on() {
    let f = fixture(WORKER);
    let slow = r#"
turns:
  - calls:
      - tool: bash
        args: {command: "touch begun.txt; sleep 30"}
  - say: Slept.
"#;
    let handle = f.session(slow, false).await;
    let started = handle.start_loop(start(&["fixed"], None, 3)).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !f.workspace().join("begun.txt").exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the iteration never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The process "stops": the session closes with its iteration running.
    let id = handle.id().to_string();
    handle.close().await.unwrap();
    drop(handle);
    std::fs::remove_file(f.workspace().join("begun.txt")).unwrap();

    // Resumed (here with a quick model), the loop records the cut iteration interrupted and
    // goes on with the next ones until its check passes.
    let resumed = f
        .runtime
        .resume(&id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(scripted(THIRD_TIME_LUCKY))
        .build()
        .await
        .unwrap();
    let record = finished(&resumed, &started.loop_id).await;
    assert_eq!(record.iterations[0].status, IterationStatus::Interrupted);
    assert!(
        record.iterations[0]
            .outcome
            .as_deref()
            .unwrap()
            .contains("the process running the loop stopped"),
        "{:?}",
        record.iterations[0].outcome
    );
    assert_eq!(record.stop_reason, Some(LoopStopReason::MaxIterations));
    assert_eq!(record.iterations.len(), 3, "{record:#?}");
    assert!(
        record.iterations[1..]
            .iter()
            .all(|iteration| iteration.status == IterationStatus::Finished)
    );
    let events = stored(&resumed).await;
    assert_eq!(
        loop_events(&events)
            .iter()
            .filter(|e| e.starts_with("#1"))
            .count(),
        2,
        "iteration 1 started once and ended once"
    );
}

/// The `context.compacted` summaries of `events` and where each stands among the turns, as
/// `turn` (a turn started) and `compacted: SUMMARY`.
fn turns_and_compactions(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::TurnStarted { .. } => Some("turn".to_string()),
            EventBody::ContextCompacted(compacted) => {
                Some(format!("compacted: {}", compacted.summary))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_fresh_context_the_iterations_are_turns_of_one_session_compacted_between() {
    let f = fixture(WORKER);
    let handle = f.session(&shared_script(), false).await;
    let mut request = start(&["fixed"], None, 5);
    request.fresh_context = Some(false);
    let started = handle.start_loop(request).unwrap();
    assert!(!started.fresh_context);
    let record = finished(&handle, &started.loop_id).await;

    assert_eq!(record.stop_reason, Some(LoopStopReason::ChecksPassed));
    assert!(!record.fresh_context);
    assert_eq!(record.iterations.len(), 3, "{record:#?}");
    let conclusions: Vec<CheckConclusion> = record
        .iterations
        .iter()
        .map(|iteration| iteration.checks[0].conclusion)
        .collect();
    assert_eq!(
        conclusions,
        [
            CheckConclusion::Failure,
            CheckConclusion::Failure,
            CheckConclusion::Success
        ]
    );
    assert!(
        record
            .iterations
            .iter()
            .all(|iteration| iteration.status == IterationStatus::Finished)
    );
    assert_eq!(record.iterations[1].files.len(), 1, "{record:#?}");

    // One child session for every iteration, linked to the starting session and the loop.
    let child = record.iterations[0].session_id.clone().unwrap();
    assert!(
        record
            .iterations
            .iter()
            .all(|iteration| iteration.session_id.as_deref() == Some(child.as_str())),
        "{record:#?}"
    );
    assert_ne!(child, handle.id());
    let info = f.store.session(&child).await.unwrap().unwrap();
    assert_eq!(info.parent_session_id.as_deref(), Some(handle.id()));
    assert_eq!(
        info.parent_call_id.as_deref(),
        Some(started.loop_id.as_str())
    );

    // In the child's log: three turns, a compaction before the second and the third, each
    // with the model's summary; the second summarised a conversation starting from the first.
    let events = f.store.read(&child, 0, usize::MAX).await.unwrap();
    assert_consistent(&events);
    assert_eq!(
        turns_and_compactions(&events),
        [
            "turn".to_string(),
            format!("compacted: {FIRST_SUMMARY}"),
            "turn".to_string(),
            format!("compacted: {SECOND_SUMMARY}"),
            "turn".to_string(),
        ]
    );
    let compactions: Vec<_> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ContextCompacted(compacted) => Some(compacted.clone()),
            _ => None,
        })
        .collect();
    // The compaction before an iteration counts in its tokens.
    for (compacted, iteration) in compactions.iter().zip(&record.iterations[1..]) {
        assert!(compacted.usage.input_tokens > 0, "{compacted:?}");
        assert!(
            iteration.input_tokens > compacted.usage.input_tokens
                && iteration.output_tokens > compacted.usage.output_tokens,
            "{iteration:#?} {compacted:?}"
        );
    }
    // The loop's session was closed when the loop ended: it runs nowhere now.
    assert!(f.runtime.live_session(&child).is_none());

    // The starting session's log folds to the same loop.
    let parent = stored(&handle).await;
    assert_eq!(qilin_loops::fold_loops(&parent), vec![record]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_without_fresh_context_cut_by_a_restart_goes_on_in_the_same_session() {
    let f = fixture(WORKER);
    // A slow answer and no call: the scripts of both processes number their calls from
    // `call_1`, and the loop's session must hold each call once.
    let slow = format!(
        "chunk_delay_ms: 100\nturns:\n  - say: \"{}\"\n",
        "Still thinking about it. ".repeat(40)
    );
    let handle = f.session(&slow, false).await;
    let mut request = start(&["fixed"], None, 3);
    request.fresh_context = Some(false);
    let started = handle.start_loop(request).unwrap();
    // Wait until the iteration's turn streams its answer.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let running = handle.loops()[0].iterations.first().and_then(|first| {
            (first.status == IterationStatus::Running).then(|| first.session_id.clone())
        });
        if let Some(Some(child)) = running
            && let Some(live) = f.runtime.live_session(&child)
            && live.running_turn().is_some()
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the iteration never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The process "stops" mid-iteration: closing the session closes the loop's session too.
    let id = handle.id().to_string();
    handle.close().await.unwrap();
    drop(handle);
    let child = {
        let events = f.store.read(&id, 0, usize::MAX).await.unwrap();
        qilin_loops::fold_loops(&events)[0].iterations[0]
            .session_id
            .clone()
            .unwrap()
    };
    assert!(f.runtime.live_session(&child).is_none());

    // Resumed with a model whose first answer is the summary the compaction asks for, then
    // an attempt that fixes the workspace.
    let script = format!(
        "turns:\n  - say: \"{FIRST_SUMMARY}\"\n  - calls:\n      - tool: bash\n        \
         args: {{command: \"echo ok > fixed.txt\"}}\n  - say: Fixed.\n"
    );
    let resumed = f
        .runtime
        .resume(&id)
        .await
        .unwrap()
        .no_sandbox(true)
        .model(scripted(&script))
        .build()
        .await
        .unwrap();
    let record = finished(&resumed, &started.loop_id).await;
    assert_eq!(record.stop_reason, Some(LoopStopReason::ChecksPassed));
    assert_eq!(record.iterations.len(), 2, "{record:#?}");
    assert_eq!(record.iterations[0].status, IterationStatus::Interrupted);
    assert_eq!(record.iterations[1].status, IterationStatus::Finished);
    assert_eq!(
        record.iterations[1].session_id.as_deref(),
        Some(child.as_str()),
        "the second iteration runs in the loop's session, taken back"
    );

    // The child's log: the cut turn, the compaction of it, then the second iteration's turn.
    let events = f.store.read(&child, 0, usize::MAX).await.unwrap();
    assert_consistent(&events);
    assert_eq!(
        turns_and_compactions(&events),
        [
            "turn".to_string(),
            format!("compacted: {FIRST_SUMMARY}"),
            "turn".to_string(),
        ]
    );
    let cut = events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::TurnFinished { reason, .. } => Some(*reason),
            _ => None,
        })
        .unwrap();
    assert_eq!(cut, FinishReason::Interrupted);
}
