//! Goals: a scripted model driven over continuation turns until its check passes, a `complete`
//! refused while a check fails, budgets spent (turns and tokens), a stall, a pause during a
//! turn, a restart of the session, and the goal folded from the log.

mod support;

use qilin_protocol::goals::{
    GoalActor, GoalBudget, GoalRecord, GoalStatus, GoalUpdateOutput, PauseCause,
};
use qilin_protocol::{CallStatus, Event, EventBody, FinishReason};
use qilin_runtime::{GoalError, NewGoal, SessionHandle};
use qilin_store::EventStore;
use std::time::Duration;
use support::*;

/// The goal tools, write and bash, with one check that passes once `done.txt` exists.
const WORKER: &str = "name: worker\ninstructions: Work toward the goal.\n\
                      tools: [goal_get, goal_create, goal_update, write, bash]\n\
                      checks:\n  - id: done-file\n    description: done.txt exists.\n    \
                      command: test -f done.txt\n";

/// The same tools with no check declared.
const UNCHECKED: &str = "name: unchecked\ninstructions: Work toward the goal.\n\
                         tools: [goal_get, goal_create, goal_update, write, bash]\n";

/// The prompts of the turns in `events`, in order.
fn prompts(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::TurnStarted { prompt, .. } => Some(prompt.as_str()),
            _ => None,
        })
        .collect()
}

/// Every goal event's record with who made the change, in order.
fn goal_changes(events: &[Event]) -> Vec<(GoalRecord, GoalActor)> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::GoalCreated(created) => Some((created.goal.clone(), created.by)),
            EventBody::GoalUpdated(updated) => Some((updated.goal.clone(), updated.by)),
            _ => None,
        })
        .collect()
}

/// The outputs of the `goal_update` calls in `events`, in order.
fn updates(events: &[Event]) -> Vec<GoalUpdateOutput> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == "goal_update" => {
                assert_eq!(result.status, CallStatus::Ok, "{:?}", result.content);
                Some(serde_json::from_value(result.output.clone().unwrap()).unwrap())
            }
            _ => None,
        })
        .collect()
}

/// Submits `prompt` and waits until the session is idle: its turn and every continuation turn
/// the goal starts after it have ended.
async fn run_until_idle(handle: &SessionHandle, prompt: &str) -> Vec<Event> {
    handle.submit(prompt, None).unwrap();
    let idle = tokio::time::timeout(Duration::from_secs(60), handle.wait_idle()).await;
    assert!(idle.is_ok(), "the goal's turns never stopped");
    let events = stored(handle).await;
    assert_consistent(&events);
    events
}

/// The goal the log leaves, folded as every client folds it.
fn folded(events: &[Event]) -> Option<GoalRecord> {
    qilin_agent::ConversationTree::from_events(events).goal
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_continues_turn_after_turn_until_its_check_passes() {
    let f = fixture(WORKER);
    // Turn 1 (the user's) sets the goal; turn 2 (the runtime's) claims completion too early
    // and is refused; turn 3 writes done.txt and completes it.
    let script = r#"
turns:
  - calls:
      - tool: goal_create
        args: {objective: "done.txt exists", max_turns: 10}
  - say: The goal is set.
  - calls:
      - tool: goal_update
        args: {status: complete, reason: "I think it is done"}
  - say: The check failed; I will write the file next.
  - calls:
      - tool: write
        args: {path: done.txt, content: "done\n"}
  - calls:
      - tool: goal_update
        args: {status: complete, reason: "done.txt is written", evidence: "wrote done.txt"}
  - say: The goal is complete.
"#;
    let handle = f.session(script, false).await;
    let events = run_until_idle(&handle, "Make done.txt exist, and keep at it.").await;

    // Three turns: the user's, then two the runtime started with the continuation prompt.
    let prompts = prompts(&events);
    assert_eq!(prompts.len(), 3, "{prompts:#?}");
    assert_eq!(prompts[0], "Make done.txt exist, and keep at it.");
    for prompt in &prompts[1..] {
        assert!(prompt.contains("Objective: done.txt exists"), "{prompt}");
        assert!(prompt.contains("started by the runtime"), "{prompt}");
    }
    assert!(prompts[1].contains("9 turns"), "{}", prompts[1]);
    // The third turn's prompt names the failed check the second turn's `complete` ran.
    assert!(prompts[2].contains("failed: done-file"), "{}", prompts[2]);

    // The early `complete` was refused by the check; the later one accepted.
    let updates = updates(&events);
    assert_eq!(updates.len(), 2);
    assert!(!updates[0].accepted, "{:?}", updates[0]);
    assert!(
        updates[0].message.contains("done-file"),
        "{}",
        updates[0].message
    );
    assert_eq!(updates[0].goal.status, GoalStatus::Active);
    assert!(updates[1].accepted, "{:?}", updates[1]);
    assert_eq!(updates[1].goal.status, GoalStatus::Complete);

    let goal = handle.goal().unwrap();
    assert_eq!(goal.status, GoalStatus::Complete);
    assert_eq!(goal.evidence.as_deref(), Some("wrote done.txt"));
    assert_eq!(goal.usage.turns, 3);
    assert!(goal.usage.tokens > 0);
    let last = goal.last_checks.as_ref().expect("the last run");
    assert_eq!(last.conclusion.as_str(), "success");
    // Folded from the log, the goal is the one the session holds.
    assert_eq!(folded(&events).as_ref(), Some(&goal));
    assert!(std::fs::read_to_string(f.workspace().join("done.txt")).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn complete_is_refused_while_a_check_fails_and_the_goal_stays_active() {
    let f = fixture(WORKER);
    let script = r#"
turns:
  - calls:
      - tool: goal_create
        args: {objective: "done.txt exists", max_turns: 1}
  - calls:
      - tool: goal_update
        args: {status: complete, reason: "Trust me"}
  - say: It was refused.
"#;
    let handle = f.session(script, false).await;
    let events = run_until_idle(&handle, "Set a goal and claim it.").await;
    let updates = updates(&events);
    assert_eq!(updates.len(), 1);
    let refused = &updates[0];
    assert!(!refused.accepted);
    assert!(
        refused.message.contains("1 of 1 checks failed") && refused.message.contains("done-file"),
        "{}",
        refused.message
    );
    let run = refused
        .checks
        .as_ref()
        .expect("the run the refusal rests on");
    assert_eq!(run.conclusion.as_str(), "failure");
    assert_eq!(refused.goal.status, GoalStatus::Active);
    assert_eq!(refused.goal.last_checks.as_ref(), Some(run));
    // The refusal is the runtime's, recorded with the run.
    let changes = goal_changes(&events);
    assert!(
        changes.iter().any(|(goal, by)| *by == GoalActor::Runtime
            && goal.status == GoalStatus::Active
            && goal.last_checks.is_some()),
        "{changes:#?}"
    );
    // Its one turn spent, the goal is budget limited rather than complete.
    assert_eq!(handle.goal().unwrap().status, GoalStatus::BudgetLimited);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_checks_complete_is_taken_on_the_models_word_saying_so() {
    let f = fixture(UNCHECKED);
    let script = r#"
turns:
  - calls:
      - tool: goal_create
        args: {objective: "Say hello"}
  - calls:
      - tool: goal_update
        args: {status: complete, reason: "I said hello"}
  - say: Hello.
"#;
    let handle = f.session(script, false).await;
    let events = run_until_idle(&handle, "Set a goal.").await;
    let updates = updates(&events);
    assert!(updates[0].accepted);
    assert!(
        updates[0].message.contains("no checks are declared"),
        "{}",
        updates[0].message
    );
    assert!(updates[0].checks.is_none());
    assert_eq!(handle.goal().unwrap().status, GoalStatus::Complete);
    assert_eq!(prompts(&events).len(), 1, "no turn follows a complete goal");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turns_budget_spent_limits_the_goal_and_no_turn_follows() {
    let f = fixture(UNCHECKED);
    let script = r#"
turns:
  - calls:
      - tool: goal_create
        args: {objective: "Keep busy", max_turns: 3}
  - say: Turn one.
  - calls:
      - tool: write
        args: {path: a.txt, content: "a"}
  - say: Turn two.
  - calls:
      - tool: write
        args: {path: b.txt, content: "b"}
  - say: Turn three.
  - say: Turn four must never come.
"#;
    let handle = f.session(script, false).await;
    let events = run_until_idle(&handle, "Work.").await;
    assert_eq!(prompts(&events).len(), 3);
    let goal = handle.goal().unwrap();
    assert_eq!(goal.status, GoalStatus::BudgetLimited);
    assert_eq!(goal.usage.turns, 3);
    let (last, by) = goal_changes(&events).pop().unwrap();
    assert_eq!(by, GoalActor::Runtime);
    assert!(
        last.reason
            .as_deref()
            .unwrap()
            .contains("turns budget is spent"),
        "{:?}",
        last.reason
    );
    // Resuming without room is refused; raising the turns resumes it, and it goes on.
    let refused = handle.resume_goal(GoalBudget::default()).unwrap_err();
    assert!(
        matches!(&refused, GoalError::Conflict(m) if m.contains("turns budget")),
        "{refused}"
    );
    let resumed = handle
        .resume_goal(GoalBudget {
            turns: Some(4),
            ..GoalBudget::default()
        })
        .unwrap();
    assert_eq!(resumed.status, GoalStatus::Active);
    tokio::time::timeout(Duration::from_secs(30), handle.wait_idle())
        .await
        .unwrap();
    let events = stored(&handle).await;
    assert_eq!(prompts(&events).len(), 4);
    let goal = handle.goal().unwrap();
    assert_eq!(
        (goal.status, goal.usage.turns),
        (GoalStatus::BudgetLimited, 4)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_budget_spent_limits_the_goal() {
    let f = fixture(UNCHECKED);
    let script = r#"
turns:
  - calls:
      - tool: goal_create
        args: {objective: "Keep busy", token_budget: 50}
  - say: The first turn's request alone is larger than fifty tokens.
  - say: Never said.
"#;
    let handle = f.session(script, false).await;
    let events = run_until_idle(&handle, "Work.").await;
    assert_eq!(prompts(&events).len(), 1, "no continuation past the budget");
    let goal = handle.goal().unwrap();
    assert_eq!(goal.status, GoalStatus::BudgetLimited);
    assert!(goal.usage.tokens >= 50, "{:?}", goal.usage);
    assert!(
        goal.reason
            .as_deref()
            .unwrap()
            .contains("token budget is spent"),
        "{:?}",
        goal.reason
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_continuation_turns_that_change_nothing_pause_the_goal_as_stalled() {
    let f = fixture(UNCHECKED);
    // After the goal is set the script runs out: every later answer is the same text, with
    // no call.
    let script = r#"
turns:
  - calls:
      - tool: goal_create
        args: {objective: "Something the model cannot do"}
  - say: Set.
"#;
    let handle = f.session(script, false).await;
    let events = run_until_idle(&handle, "Work.").await;
    assert_eq!(
        prompts(&events).len(),
        4,
        "the user's turn and three continuations"
    );
    let goal = handle.goal().unwrap();
    assert_eq!(goal.status, GoalStatus::Paused);
    assert_eq!(goal.paused_because, Some(PauseCause::Stalled));
    assert_eq!(goal.usage.turns, 4);
    assert!(goal.reason.as_deref().unwrap().contains("changed nothing"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuation_turns_that_write_are_not_a_stall() {
    let f = fixture(UNCHECKED);
    let script = r#"
turns:
  - calls:
      - tool: goal_create
        args: {objective: "Write files", max_turns: 5}
  - say: Set.
  - calls:
      - tool: write
        args: {path: one.txt, content: "1"}
  - say: Working.
  - calls:
      - tool: write
        args: {path: two.txt, content: "2"}
  - say: Working.
  - calls:
      - tool: write
        args: {path: three.txt, content: "3"}
  - say: Working.
  - calls:
      - tool: write
        args: {path: four.txt, content: "4"}
  - say: Working.
"#;
    let handle = f.session(script, false).await;
    run_until_idle(&handle, "Work.").await;
    let goal = handle.goal().unwrap();
    // The same final text four times, but each turn wrote a file: only the budget stops it.
    assert_eq!(
        (goal.status, goal.usage.turns),
        (GoalStatus::BudgetLimited, 5)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_during_a_turn_interrupts_it_and_starts_no_other() {
    let f = fixture(UNCHECKED);
    let script = r#"
turns:
  - say: Working on it.
    calls:
      - tool: bash
        args: {command: "sleep 30"}
  - say: Never said.
"#;
    let handle = f.session(script, false).await;
    handle
        .set_goal(NewGoal {
            objective: "Wait a long time".into(),
            budget: GoalBudget::default(),
            checks: Vec::new(),
        })
        .unwrap();
    // The goal's first turn started at once; pause it while its bash call runs.
    for _ in 0..400 {
        let running = stored(&handle).await.iter().any(
            |event| matches!(&event.body, EventBody::ToolStart(start) if start.tool_name == "bash"),
        );
        if running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let paused = handle.pause_goal().unwrap();
    assert_eq!(paused.status, GoalStatus::Paused);
    assert_eq!(paused.paused_because, Some(PauseCause::User));
    let summary = tokio::time::timeout(Duration::from_secs(20), handle.wait_idle())
        .await
        .expect("the pause takes effect at once")
        .unwrap();
    assert_eq!(summary.reason, FinishReason::Interrupted);
    let events = stored(&handle).await;
    assert_consistent(&events);
    assert_eq!(prompts(&events).len(), 1);
    let goal = handle.goal().unwrap();
    assert_eq!(goal.status, GoalStatus::Paused);
    assert_eq!(goal.usage.turns, 1, "the interrupted turn counts");
    // Pausing again is refused; clearing settles it.
    assert!(matches!(handle.pause_goal(), Err(GoalError::Conflict(_))));
    assert_eq!(handle.clear_goal().unwrap().status, GoalStatus::Cleared);
    assert_eq!(folded(&events[..]).unwrap().status, GoalStatus::Paused);
    assert_eq!(
        folded(&stored(&handle).await).unwrap().status,
        GoalStatus::Cleared
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_active_when_its_session_closes_comes_back_paused_with_its_usage() {
    let f = fixture(UNCHECKED);
    let script = r#"
turns:
  - say: Working.
    calls:
      - tool: bash
        args: {command: "sleep 30"}
  - say: Resumed and done.
"#;
    let handle = f.session(script, false).await;
    handle
        .set_goal(NewGoal {
            objective: "Outlive the process".into(),
            budget: GoalBudget {
                turns: Some(5),
                ..GoalBudget::default()
            },
            checks: Vec::new(),
        })
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle.close().await.unwrap();
    let events = stored(&handle).await;
    let closed = folded(&events).unwrap();
    assert_eq!(closed.status, GoalStatus::Paused);
    assert_eq!(closed.paused_because, Some(PauseCause::Restart));
    assert_eq!(closed.usage.turns, 1);

    // A new process resumes the session: the goal is as it was, and resumes.
    let resumed = f
        .runtime
        .resume(handle.id())
        .await
        .unwrap()
        .model(scripted(script))
        .no_sandbox(true)
        .build()
        .await
        .unwrap();
    assert_eq!(resumed.goal().as_ref(), Some(&closed));
    let active = resumed.resume_goal(GoalBudget::default()).unwrap();
    assert_eq!(active.status, GoalStatus::Active);
    assert_eq!(active.usage, closed.usage);
    tokio::time::timeout(Duration::from_secs(30), resumed.wait_idle())
        .await
        .unwrap();
    assert!(resumed.goal().unwrap().usage.turns >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goal_create_is_refused_while_a_goal_is_open_and_checks_must_be_declared() {
    let f = fixture(WORKER);
    let handle = f.session("turns:\n  - say: Hi.\n", false).await;
    let unknown = handle
        .set_goal(NewGoal {
            objective: "x".into(),
            budget: GoalBudget::default(),
            checks: vec!["nope".into()],
        })
        .unwrap_err();
    assert!(
        matches!(&unknown, GoalError::Invalid(m) if m.contains("done-file")),
        "{unknown}"
    );
    let first = handle
        .set_goal(NewGoal {
            objective: "First".into(),
            budget: GoalBudget {
                tokens: Some(1),
                ..GoalBudget::default()
            },
            checks: vec!["done-file".into()],
        })
        .unwrap();
    assert_eq!(first.id, "goal-1");
    let again = handle
        .set_goal(NewGoal {
            objective: "Second".into(),
            budget: GoalBudget::default(),
            checks: Vec::new(),
        })
        .unwrap_err();
    assert!(
        matches!(&again, GoalError::Conflict(m) if m.contains("clear")),
        "{again}"
    );
    tokio::time::timeout(Duration::from_secs(30), handle.wait_idle())
        .await
        .unwrap();
    handle.clear_goal().unwrap();
    let second = handle
        .set_goal(NewGoal {
            objective: "Second".into(),
            budget: GoalBudget {
                tokens: Some(1),
                ..GoalBudget::default()
            },
            checks: Vec::new(),
        })
        .unwrap();
    assert_eq!(
        (second.id.as_str(), second.status),
        ("goal-2", GoalStatus::Active)
    );
}

#[test]
fn docs_goals_quotes_the_continuation_prompt_as_it_is() {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/goals.md"),
    )
    .unwrap();
    // The quote's lines, `> ` removed, joined as the constant's words are.
    let quoted: Vec<&str> = docs
        .lines()
        .filter_map(|line| line.strip_prefix('>'))
        .flat_map(str::split_whitespace)
        .collect();
    let prompt: Vec<&str> = qilin_runtime::CONTINUATION_PROMPT
        .split_whitespace()
        .collect();
    assert_eq!(quoted, prompt, "docs/goals.md quotes another prompt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_session_keeps_no_goal() {
    let f = fixture(
        "name: lead\ninstructions: Delegate.\ntools: [agent, goal_get, goal_create, goal_update]\n",
    );
    let child_script = f.workspace().join("helper.yaml");
    std::fs::write(
        &child_script,
        "turns:\n  - calls:\n      - tool: goal_create\n        args: {objective: \"Run forever\"}\n  - say: Refused.\n",
    )
    .unwrap();
    std::fs::write(
        f.workspace().join("helper.agent"),
        format!(
            "name: helper\ninstructions: Help.\ntools: [goal_create]\nmodel: scripted:{}\n",
            child_script.display()
        ),
    )
    .unwrap();
    let lead_script = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: helper, prompt: "Set a goal.", description: "Try a goal"}
  - say: Done.
"#;
    let lead = f.session(lead_script, false).await;
    let events = run_until_idle(&lead, "Ask the helper.").await;
    assert!(lead.goal().is_none());
    let record: qilin_protocol::agents::ChildRecord = events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == "agent" => {
                Some(serde_json::from_value(result.output.clone().unwrap()).unwrap())
            }
            _ => None,
        })
        .expect("the agent call's record");
    // The child's log, once its turn's end is stored.
    let mut child_log = Vec::new();
    for _ in 0..200 {
        child_log = f.store.read(&record.session_id, 0, 10_000).await.unwrap();
        if child_log
            .iter()
            .any(|event| matches!(event.body, EventBody::TurnFinished { .. }))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let refused = child_log
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == "goal_create" => Some(result),
            _ => None,
        })
        .expect("the child's goal_create");
    assert_eq!(refused.status, CallStatus::Error);
    assert!(
        format!("{:?}", refused.content).contains("child session"),
        "{:?}",
        refused.content
    );
    assert!(goal_changes(&child_log).is_empty());
}
