//! Workflows: `.qilin/workflows/NAME.py` run by `workflow_run` on code mode, scripted — a
//! parallel step of three `agent` calls with a report, a failing step, `workflow_stop` of a
//! background run mid-call, and arguments checked against the front matter.

mod support;

use qilin_protocol::workflows::{
    WorkflowRun, WorkflowRunOutput, WorkflowStatus, WorkflowStatusOutput, WorkflowStepKind,
};
use qilin_protocol::{CallStatus, ErrorCode, Event, EventBody, ToolResultEvent};
use qilin_runtime::SessionHandle;
use support::*;

/// The lead: the workflow tools, agents, read and bash, code mode on.
const LEAD: &str = "name: lead\ninstructions: Run workflows.\n\
                    tools: [workflow_run, workflow_status, workflow_stop, agent, read, bash]\n\
                    code_mode: true\n";

/// Writes `.qilin/workflows/NAME.py`.
fn workflow(f: &Fixture, name: &str, text: &str) {
    let dir = f.workspace().join(".qilin").join("workflows");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.py")), text).unwrap();
}

/// Writes `NAME.agent` in the workspace, answering from its own script `NAME.yaml`.
fn child_agent(f: &Fixture, name: &str, script: &str) {
    let script_path = f.workspace().join(format!("{name}.yaml"));
    std::fs::write(&script_path, script).unwrap();
    std::fs::write(
        f.workspace().join(format!("{name}.agent")),
        format!(
            "name: {name}\ninstructions: Work.\ntools: [read]\nmodel: scripted:{}\n",
            script_path.display()
        ),
    )
    .unwrap();
}

/// Runs a turn to completion and returns the log, checked by [`assert_consistent`] (which lets
/// a background run's calls end after its `workflow_run` call returned).
async fn run(handle: &SessionHandle, prompt: &str) -> Vec<Event> {
    let summary = handle.submit(prompt, None).unwrap().finished().await;
    assert_eq!(
        summary.reason,
        qilin_protocol::FinishReason::Completed,
        "{summary:?}"
    );
    let events = stored(handle).await;
    assert_consistent(&events);
    events
}

/// The results of `tool`'s calls in `events`, in order.
fn results<'a>(events: &'a [Event], tool: &str) -> Vec<&'a ToolResultEvent> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == tool => Some(result),
            _ => None,
        })
        .collect()
}

fn run_of(result: &ToolResultEvent) -> WorkflowRun {
    assert_eq!(result.status, CallStatus::Ok, "{:?}", result.content);
    let output: WorkflowRunOutput =
        serde_json::from_value(result.output.clone().expect("an output")).unwrap();
    output.run
}

/// The `workflow.finished` runs of `events`.
fn finished(events: &[Event]) -> Vec<WorkflowRun> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::WorkflowFinished(finished) => Some(finished.run.clone()),
            _ => None,
        })
        .collect()
}

const FAN_OUT: &str = r#""""
description: Ask three workers about a topic and report what they said.
args:
  topic:
    type: string
    description: What to ask about.
  count:
    type: integer
    default: 3
limits:
  max_calls: 10
  timeout_secs: 60
"""
import asyncio

answers = await asyncio.gather(*[
    sdk.tool.call_async("agent", {"agent": "worker", "prompt": f"{args['topic']} part {i}", "description": f"part {i}"})
    for i in range(args["count"])
])
sdk.report("Answers", "\n".join(f"- {a['answer']}" for a in answers))
len(answers)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parallel_step_of_three_agents_nests_under_the_run_and_writes_a_report() {
    let f = fixture(LEAD);
    child_agent(&f, "worker", "turns:\n  - say: worker done\n");
    workflow(&f, "fan-out", FAN_OUT);
    let script = r#"
turns:
  - calls:
      - tool: workflow_run
        args: {workflow: fan-out, args: {topic: parsers}}
  - say: "The workflow ran."
"#;
    let lead = f.session(script, false).await;
    let events = run(&lead, "Fan out.").await;

    let call = results(&events, "workflow_run")[0];
    let run = run_of(call);
    assert_eq!(run.status, WorkflowStatus::Completed, "{run:?}");
    assert_eq!(run.workflow, "fan-out");
    assert_eq!(
        run.args,
        serde_json::json!({"topic": "parsers", "count": 3})
    );
    assert_eq!(run.result, Some(serde_json::json!(3)));
    assert!(run.duration_ms.is_some() && run.ended_at.is_some());
    let calls: Vec<_> = run
        .steps
        .iter()
        .filter(|step| step.kind == WorkflowStepKind::Call)
        .collect();
    assert_eq!(calls.len(), 3, "{:?}", run.steps);
    let mut titles: Vec<&str> = calls.iter().map(|step| step.title.as_str()).collect();
    titles.sort();
    assert_eq!(titles, ["part 0", "part 1", "part 2"]);
    assert!(
        calls
            .iter()
            .all(|step| step.status.as_deref() == Some("ok")
                && step.tool.as_deref() == Some("agent"))
    );
    let report = run.steps.last().unwrap();
    assert_eq!(report.kind, WorkflowStepKind::Report);
    assert_eq!(report.index, 3);
    assert_eq!(report.title, "Answers");
    assert_eq!(
        report.text.as_deref(),
        Some("- worker done\n- worker done\n- worker done")
    );

    // The nested calls are the workflow_run call's, as under run_code.
    let nested = results(&events, "agent");
    assert_eq!(nested.len(), 3);
    for agent in &nested {
        assert_eq!(agent.parent_call_id.as_deref(), Some(call.call_id.as_str()));
        assert!(
            calls
                .iter()
                .any(|step| step.call_id.as_deref() == Some(&agent.call_id))
        );
    }
    let tree = qilin_agent::ConversationTree::from_events(&events);
    let node = tree.call(&call.call_id).unwrap();
    assert_eq!(node.sub_calls.len(), 3);
    assert!(node.sub_calls.iter().all(|sub| sub.child.is_some()));

    // The log: started, a step event per call start and end and one for the report, finished.
    let started = events
        .iter()
        .filter(|e| matches!(&e.body, EventBody::WorkflowStarted(s) if s.run.run_id == run.run_id))
        .count();
    let steps = events
        .iter()
        .filter(|e| matches!(&e.body, EventBody::WorkflowStep(s) if s.run_id == run.run_id))
        .count();
    assert_eq!((started, steps), (1, 3 * 2 + 1));
    assert_eq!(finished(&events), vec![run.clone()]);
    let finished_at = events
        .iter()
        .position(|e| matches!(&e.body, EventBody::WorkflowFinished(_)))
        .unwrap();
    let result_at = events
        .iter()
        .position(|e| matches!(&e.body, EventBody::ToolResult(r) if r.call_id == call.call_id))
        .unwrap();
    assert!(
        finished_at < result_at,
        "the run ends before its call's result"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_step_fails_the_run_with_its_error() {
    let f = fixture(LEAD);
    workflow(
        &f,
        "read-missing",
        "\"\"\"\ndescription: Read a file that is not there.\n\"\"\"\n\
         notes = sdk.tool.call(\"read\", {\"path\": \"notes.txt\"})\n\
         sdk.report(\"Notes\", \"read\")\n\
         sdk.tool.call(\"read\", {\"path\": \"absent.txt\"})\n\
         sdk.report(\"Never\", \"reached\")\n",
    );
    let script = r#"
turns:
  - calls:
      - tool: workflow_run
        args: {workflow: read-missing}
  - say: "It failed."
"#;
    let lead = f.session(script, false).await;
    let events = run(&lead, "Go.").await;
    let run = run_of(results(&events, "workflow_run")[0]);
    assert_eq!(run.status, WorkflowStatus::Failed, "{run:?}");
    let error = run.error.as_deref().unwrap();
    assert!(error.contains("absent.txt"), "{error}");
    assert!(error.contains("line 6"), "the file's own line: {error}");
    assert!(
        error.contains(".qilin/workflows/read-missing.py"),
        "the traceback names the workflow's file: {error}"
    );
    let statuses: Vec<(WorkflowStepKind, Option<&str>)> = run
        .steps
        .iter()
        .map(|step| (step.kind, step.status.as_deref()))
        .collect();
    assert_eq!(
        statuses,
        [
            (WorkflowStepKind::Call, Some("ok")),
            (WorkflowStepKind::Report, None),
            (WorkflowStepKind::Call, Some("error")),
        ]
    );
    assert_eq!(run.result, None);
    assert_eq!(finished(&events), vec![run]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workflow_stop_ends_a_background_run_and_interrupts_its_running_call() {
    let f = fixture(LEAD);
    workflow(
        &f,
        "slow",
        "\"\"\"\ndescription: Wait a long time.\n\"\"\"\n\
         sdk.tool.call(\"bash\", {\"command\": \"sleep 30\"})\n\
         sdk.report(\"Done\", \"never\")\n",
    );
    let script = r#"
turns:
  - calls:
      - tool: workflow_run
        args: {workflow: slow, background: true}
  - calls:
      - tool: bash
        args: {command: "sleep 1"}
  - calls:
      - tool: workflow_stop
        args: {id: wf1}
  - calls:
      - tool: workflow_status
        args: {}
  - say: "Stopped it."
"#;
    let lead = f.session(script, false).await;
    let started = std::time::Instant::now();
    let events = run(&lead, "Start it, then stop it.").await;
    let ended = |id: &str| {
        events
            .iter()
            .filter(|e| matches!(&e.body, EventBody::ToolResult(r) if r.call_id == id))
            .count()
    };
    for event in &events {
        if let EventBody::ToolStart(start) = &event.body {
            assert_eq!(ended(&start.call_id), 1, "{} ends once", start.call_id);
        }
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(20));

    let begun = run_of(results(&events, "workflow_run")[0]);
    assert_eq!(begun.status, WorkflowStatus::Running);
    assert!(begun.background);
    let stopped = run_of(results(&events, "workflow_stop")[0]);
    assert_eq!(stopped.run_id, "wf1");
    assert_eq!(stopped.status, WorkflowStatus::Stopped, "{stopped:?}");
    assert_eq!(stopped.error.as_deref(), Some("stopped by workflow_stop"));
    assert_eq!(stopped.steps.len(), 1, "the report was never reached");
    assert_eq!(stopped.steps[0].status.as_deref(), Some("interrupted"));
    let sleeper = results(&events, "bash")
        .into_iter()
        .find(|r| r.parent_call_id.is_some())
        .expect("the workflow's bash call");
    assert_eq!(sleeper.status, CallStatus::Interrupted);

    let status = results(&events, "workflow_status")[0];
    let status: WorkflowStatusOutput =
        serde_json::from_value(status.output.clone().unwrap()).unwrap();
    assert_eq!(status.runs, vec![stopped.clone()]);
    assert_eq!(finished(&events), vec![stopped]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_and_names_are_checked_before_a_run_starts() {
    let f = fixture(LEAD);
    child_agent(&f, "worker", "turns:\n  - say: worker done\n");
    workflow(&f, "fan-out", FAN_OUT);
    let script = r#"
turns:
  - calls:
      - tool: workflow_run
        args: {workflow: fan-out, args: {topic: 3}}
      - tool: workflow_run
        args: {workflow: fan-out, args: {subject: x}}
      - tool: workflow_run
        args: {workflow: absent}
  - say: "None ran."
"#;
    let lead = f.session(script, false).await;
    let events = run(&lead, "Go.").await;
    let refused = results(&events, "workflow_run");
    let messages: Vec<String> = refused
        .iter()
        .map(|r| {
            assert_eq!(r.status, CallStatus::Error);
            assert_eq!(r.error_code, Some(ErrorCode::InvalidArguments));
            format!("{:?}", r.content)
        })
        .collect();
    assert!(
        messages[0].contains("must be of type `string`"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].contains("no argument `subject`"),
        "{}",
        messages[1]
    );
    assert!(
        messages[2].contains("the workflows are: fan-out"),
        "{}",
        messages[2]
    );
    assert!(finished(&events).is_empty());
}
