//! Subagents: children started with `agent`, scripted like their parents — a foreground child,
//! background children gathered from code, `agent_stop` mid-tool, the depth and running
//! bounds, a result delivered exactly once, a message to a running child.

mod support;

use qilin_model::{Message, ModelProvider, ModelRequest, ModelStream, Script, ScriptedProvider};
use qilin_protocol::agents::{AgentWaitOutput, ChildRecord, ChildStatus};
use qilin_protocol::{CallStatus, Event, EventBody, ToolResultEvent};
use qilin_runtime::ModelChoice;
use qilin_runtime::{ChildLimits, SessionHandle};
use qilin_store::{EventStore, ParentFilter, SessionQuery};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use support::*;

/// A model that answers the conversation beginning with `prompt` from one script and every
/// other from another: a parent and the child it starts, with one model between them.
struct ByFirstPrompt {
    prompt: &'static str,
    matching: ScriptedProvider,
    others: ScriptedProvider,
}

impl ModelProvider for ByFirstPrompt {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        match request.messages.first() {
            Some(Message::User { text }) if text == self.prompt => self.matching.stream(request),
            _ => self.others.stream(request),
        }
    }
}

fn script_provider(script: &str) -> ScriptedProvider {
    ScriptedProvider::new(Script::parse(script, Path::new("test.yaml")).unwrap())
}

/// The lead: every subagent tool, read and bash, code mode on.
const LEAD: &str = "name: lead\ninstructions: Delegate.\n\
                    tools: [agent, agent_wait, agent_send, agent_stop, agent_list, read, bash]\n\
                    code_mode: true\n";

/// Writes `NAME.agent` in the workspace, answering from its own script `NAME.yaml`.
fn child_agent(f: &Fixture, name: &str, tools: &str, script: &str) {
    let script_path = f.workspace().join(format!("{name}.yaml"));
    std::fs::write(&script_path, script).unwrap();
    std::fs::write(
        f.workspace().join(format!("{name}.agent")),
        format!(
            "name: {name}\ninstructions: Work.\ntools: [{tools}]\nmodel: scripted:{}\n",
            script_path.display()
        ),
    )
    .unwrap();
}

async fn lead(f: &Fixture, script: &str, limits: ChildLimits) -> SessionHandle {
    f.builder()
        .model(scripted(script))
        .child_limits(limits)
        .build()
        .await
        .unwrap()
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

fn record(result: &ToolResultEvent) -> ChildRecord {
    serde_json::from_value(result.output.clone().expect("an output")).unwrap()
}

fn waited(result: &ToolResultEvent) -> AgentWaitOutput {
    serde_json::from_value(result.output.clone().expect("an output")).unwrap()
}

/// A child's stored log, once its turn has finished and been stored.
async fn child_log(f: &Fixture, id: &str) -> Vec<Event> {
    for _ in 0..200 {
        let events = f.store.read(id, 0, 100_000).await.unwrap();
        if events
            .iter()
            .any(|event| matches!(event.body, EventBody::TurnFinished { .. }))
        {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the child {id} never finished its turn");
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_child_answers_in_its_own_session_linked_to_the_call() {
    let f = fixture(LEAD);
    // The built-in `explore` agent names no model, so it gets the lead's: one provider that
    // plays the child's script for the conversation that began with the child's prompt.
    let lead_script = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: explore, prompt: "What does notes.txt say?", description: "Read the notes"}
  - say: "The child read it."
"#;
    let child_script = r#"
turns:
  - calls:
      - tool: read
        args: {path: notes.txt}
  - say: "It has two lines: first line, second line."
"#;
    let provider = ByFirstPrompt {
        prompt: "What does notes.txt say?",
        matching: script_provider(child_script),
        others: script_provider(lead_script),
    };
    let lead = f
        .builder()
        .model(ModelChoice::Provider {
            provider: Arc::new(provider),
            model: "scripted".into(),
            label: "scripted:lead-and-child".into(),
        })
        .build()
        .await
        .unwrap();
    let events = run(&lead, "Ask a child.").await;

    let agent = results(&events, "agent");
    assert_eq!(agent.len(), 1);
    assert_eq!(agent[0].status, CallStatus::Ok, "{:?}", agent[0].content);
    let child = record(agent[0]);
    assert_eq!(child.status, ChildStatus::Completed);
    assert_eq!(
        child.answer.as_deref(),
        Some("It has two lines: first line, second line.")
    );
    let log = child_log(&f, &child.session_id).await;
    assert_eq!((child.steps, child.background), (2, false), "{log:#?}");

    // agent.started sits in the lead's log between the call's start and result.
    let started = events
        .iter()
        .position(|e| matches!(&e.body, EventBody::AgentStarted(s) if s.child_session_id == child.session_id))
        .expect("agent.started");
    let EventBody::AgentStarted(link) = &events[started].body else {
        unreachable!()
    };
    assert_eq!(link.call_id, agent[0].call_id);
    assert_eq!((link.agent.as_str(), link.background), ("explore", false));
    let tree = qilin_agent::ConversationTree::from_events(&events);
    let node = tree.call(&agent[0].call_id).unwrap();
    assert_eq!(
        node.child.as_ref().map(|c| c.session_id.as_str()),
        Some(child.session_id.as_str())
    );

    // The child: its own session, linked, its own context (the prompt alone), its read call.
    let log = child_log(&f, &child.session_id).await;
    assert_consistent(&log);
    let EventBody::SessionStarted(start) = &log[0].body else {
        panic!("{:?}", log[0])
    };
    assert_eq!(start.parent_session_id.as_deref(), Some(lead.id()));
    assert_eq!(
        start.parent_call_id.as_deref(),
        Some(agent[0].call_id.as_str())
    );
    assert_eq!(start.agent.name, "explore");
    let prompts: Vec<&str> = log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::TurnStarted { prompt, .. } => Some(prompt.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(prompts, ["What does notes.txt say?"]);
    assert_eq!(results(&log, "read")[0].status, CallStatus::Ok);
    let info = f.store.session(&child.session_id).await.unwrap().unwrap();
    assert_eq!(info.parent_session_id.as_deref(), Some(lead.id()));
    // Listings: the child under its parent, not among the top-level sessions.
    let top = f
        .store
        .list_sessions(&SessionQuery {
            limit: 50,
            parent: ParentFilter::TopLevel,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(top.sessions.iter().all(|s| s.id != child.session_id));
    // The explore agent mounts no tool its parent lacks: grep and glob are not the lead's.
    let tools: Vec<String> = log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolStart(s) => Some(s.tool_name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, ["read"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_background_children_gathered_from_code_each_nest_under_run_code() {
    let f = fixture(LEAD);
    child_agent(&f, "worker", "read", "turns:\n  - say: worker done\n");
    let script = r#"
turns:
  - calls:
      - tool: run_code
        args:
          code: |
            import asyncio
            started = await asyncio.gather(*[sdk.tool.call_async("agent", {"agent": "worker", "prompt": f"task {i}", "description": f"task {i}", "background": True}) for i in range(3)])
            print(sorted(r["status"] for r in started))
  - calls:
      - tool: agent_wait
        args: {}
  - say: "All three are done."
"#;
    let lead = lead(&f, script, ChildLimits::default()).await;
    let events = run(&lead, "Fan out.").await;

    let run_code = results(&events, "run_code");
    assert_eq!(
        run_code[0].status,
        CallStatus::Ok,
        "{:?}",
        run_code[0].content
    );
    let nested = results(&events, "agent");
    assert_eq!(nested.len(), 3);
    let mut children = Vec::new();
    for call in &nested {
        assert_eq!(
            call.parent_call_id.as_deref(),
            Some(run_code[0].call_id.as_str())
        );
        let started = record(call);
        assert_eq!(started.status, ChildStatus::Running);
        let link = events
            .iter()
            .find_map(|e| match &e.body {
                EventBody::AgentStarted(s) if s.call_id == call.call_id => Some(s.clone()),
                _ => None,
            })
            .expect("agent.started of the nested call");
        assert_eq!(
            link.parent_call_id.as_deref(),
            Some(run_code[0].call_id.as_str())
        );
        assert_eq!(link.child_session_id, started.session_id);
        let log = child_log(&f, &started.session_id).await;
        let EventBody::SessionStarted(start) = &log[0].body else {
            panic!()
        };
        assert_eq!(start.parent_call_id.as_deref(), Some(call.call_id.as_str()));
        children.push(started.session_id);
    }
    children.sort();
    children.dedup();
    assert_eq!(children.len(), 3, "three child sessions");
    let tree = qilin_agent::ConversationTree::from_events(&events);
    let code = tree.call(&run_code[0].call_id).unwrap();
    assert_eq!(code.sub_calls.len(), 3);
    assert!(code.sub_calls.iter().all(|call| call.child.is_some()));

    let wait = waited(results(&events, "agent_wait")[0]);
    let mut finished: Vec<String> = wait.finished.iter().map(|r| r.session_id.clone()).collect();
    finished.sort();
    assert_eq!(finished, children);
    assert!(
        wait.finished
            .iter()
            .all(|r| r.status == ChildStatus::Completed
                && r.answer.as_deref() == Some("worker done"))
    );
    assert!(wait.running.is_empty() && !wait.timed_out);
    let ended = events
        .iter()
        .filter(|e| matches!(e.body, EventBody::AgentFinished(_)))
        .count();
    assert_eq!(ended, 3, "agent.finished once per background child");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_stop_interrupts_a_child_mid_tool() {
    let f = fixture(LEAD);
    child_agent(
        &f,
        "sleeper",
        "bash",
        "turns:\n  - calls:\n      - tool: bash\n        args: {command: \"sleep 30\"}\n  - say: woke\n",
    );
    let script = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: sleeper, prompt: "Sleep.", description: "Sleep a while", name: sleepy, background: true}
  - calls:
      - tool: agent_wait
        args: {ids: [sleepy], timeout_ms: 1500}
  - calls:
      - tool: agent_stop
        args: {id: sleepy}
  - say: "Stopped it."
"#;
    let lead = lead(&f, script, ChildLimits::default()).await;
    let events = run(&lead, "Start and stop.").await;

    let wait = waited(results(&events, "agent_wait")[0]);
    assert!(wait.timed_out && wait.finished.is_empty(), "{wait:?}");
    assert_eq!(wait.running.len(), 1);
    let stop = results(&events, "agent_stop");
    assert_eq!(stop[0].status, CallStatus::Ok, "{:?}", stop[0].content);
    let stopped = record(stop[0]);
    assert_eq!(stopped.status, ChildStatus::Interrupted);
    assert_eq!(stopped.error.as_deref(), Some("stopped by agent_stop"));
    assert_eq!(stopped.name.as_deref(), Some("sleepy"));

    let log = child_log(&f, &stopped.session_id).await;
    assert_consistent(&log);
    let bash = results(&log, "bash");
    assert_eq!(bash.len(), 1);
    assert_eq!(bash[0].status, CallStatus::Interrupted, "{:?}", bash[0]);
    assert!(bash[0].duration_ms < 20_000, "the sleep was cut short");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_running_bound_refuses_a_background_start_with_a_clear_error() {
    let f = fixture(LEAD);
    child_agent(
        &f,
        "sleeper",
        "bash",
        "turns:\n  - calls:\n      - tool: bash\n        args: {command: \"sleep 30\"}\n  - say: woke\n",
    );
    let script = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: sleeper, prompt: "Sleep.", description: "First", background: true}
  - calls:
      - tool: agent
        args: {agent: sleeper, prompt: "Sleep.", description: "Second", background: true}
  - calls:
      - tool: agent_list
        args: {}
  - calls:
      - tool: agent_stop
        args: {id: "First"}
  - say: "One at a time."
"#;
    let limits = ChildLimits {
        max_running: 1,
        ..ChildLimits::default()
    };
    let lead = lead(&f, script, limits).await;
    let first_id = {
        let events = run(&lead, "Two at once.").await;
        let agent = results(&events, "agent");
        assert_eq!(agent[0].status, CallStatus::Ok);
        assert_eq!(agent[1].status, CallStatus::Error);
        let text = format!("{:?}", agent[1].content);
        assert!(
            text.contains("already runs 1 agents") && text.contains("running children"),
            "{text}"
        );
        let listed: qilin_protocol::agents::AgentListOutput =
            serde_json::from_value(results(&events, "agent_list")[0].output.clone().unwrap())
                .unwrap();
        assert_eq!(listed.children.len(), 1, "the refused start left no child");
        let stop = results(&events, "agent_stop");
        // `First` is a description, not a name or id: the error lists the children.
        assert_eq!(stop[0].status, CallStatus::Error);
        let text = format!("{:?}", stop[0].content);
        assert!(text.contains("no child `First`"), "{text}");
        record(agent[0]).session_id
    };
    assert!(lead.interrupt() || lead.running_turn().is_none());
    // Interrupting the lead interrupts its running child.
    let log = child_log(&f, &first_id).await;
    assert_eq!(results(&log, "bash")[0].status, CallStatus::Interrupted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_depth_bound_refuses_a_grandchild_with_a_clear_error() {
    let f = fixture(LEAD);
    child_agent(
        &f,
        "nester",
        "agent",
        "turns:\n  - calls:\n      - tool: agent\n        args: {agent: explore, prompt: deeper, description: deeper}\n  - say: could not go deeper\n",
    );
    let script = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: nester, prompt: "Go deeper.", description: "Nest"}
  - say: "Done."
"#;
    let limits = ChildLimits {
        max_depth: 1,
        ..ChildLimits::default()
    };
    let lead = lead(&f, script, limits).await;
    let events = run(&lead, "Nest.").await;
    let child = record(results(&events, "agent")[0]);
    assert_eq!(child.answer.as_deref(), Some("could not go deeper"));
    let log = child_log(&f, &child.session_id).await;
    let refused = results(&log, "agent");
    assert_eq!(refused[0].status, CallStatus::Error);
    let text = format!("{:?}", refused[0].content);
    assert!(
        text.contains("depth 1") && text.contains("1 deep at most"),
        "{text}"
    );
    assert!(
        !log.iter()
            .any(|e| matches!(e.body, EventBody::AgentStarted(_))),
        "no grandchild was made"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_result_is_delivered_exactly_once() {
    let f = fixture(LEAD);
    child_agent(&f, "worker", "read", "turns:\n  - say: worker done\n");
    let script = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: worker, prompt: "Work.", description: "Work", background: true}
  - calls:
      - tool: agent_wait
        args: {}
  - calls:
      - tool: agent_wait
        args: {timeout_ms: 0}
  - say: "Collected."
"#;
    let lead = lead(&f, script, ChildLimits::default()).await;
    let events = run(&lead, "Once.").await;
    let waits = results(&events, "agent_wait");
    let first = waited(waits[0]);
    let second = waited(waits[1]);
    assert_eq!(first.finished.len(), 1);
    assert_eq!(first.finished[0].answer.as_deref(), Some("worker done"));
    assert!(second.finished.is_empty(), "{second:?}");
    let count = |kind: &str| events.iter().filter(|e| e.body.kind() == kind).count();
    assert_eq!((count("agent.finished"), count("agent.delivered")), (1, 1));
    // The lead's model was told of the end between its steps.
    let history = qilin_agent::HistoryFold::from_events(&events);
    let told = history
        .messages()
        .iter()
        .filter(|m| format!("{m:?}").contains("Call agent_wait to collect its result"))
        .count();
    assert_eq!(told, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_receives_a_message_mid_turn_answers_it_and_waits_idle_for_the_next() {
    let f = fixture(LEAD);
    child_agent(
        &f,
        "listener",
        "bash",
        "turns:\n  - calls:\n      - tool: bash\n        args: {command: \"sleep 2\"}\n  - say: got the message\n  - say: the docs too\n",
    );
    let script = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: listener, prompt: "Wait for news.", description: "Listen", name: ear, background: true}
  - calls:
      - tool: bash
        args: {command: "sleep 0.5"}
  - calls:
      - tool: agent_send
        args: {to: ear, message: "Also count the tests."}
  - calls:
      - tool: agent_wait
        args: {ids: [ear]}
  - calls:
      - tool: agent_send
        args: {to: ear, message: "And the docs?"}
  - calls:
      - tool: agent_wait
        args: {ids: [ear]}
  - calls:
      - tool: agent_list
        args: {}
  - say: "It heard."
"#;
    let lead = lead(&f, script, ChildLimits::default()).await;
    let events = run(&lead, "Tell it.").await;
    let sent = results(&events, "agent_send");
    assert_eq!(sent[0].status, CallStatus::Ok, "{:?}", sent[0].content);
    let output = sent[0].output.clone().unwrap();
    assert_eq!(output["to"], "ear");
    assert_eq!(
        output["delivered"], "queued",
        "the teammate was mid-step (its sleep)"
    );
    assert_eq!(
        sent[1].output.clone().unwrap()["delivered"],
        "now",
        "an idle teammate takes the message at once: it starts a turn"
    );
    let wait = waited(results(&events, "agent_wait")[0]);
    assert!(
        wait.finished.is_empty(),
        "a teammate does not end: {wait:?}"
    );
    assert!(wait.running.is_empty(), "{wait:?}");
    let listed: qilin_protocol::agents::AgentListOutput =
        serde_json::from_value(results(&events, "agent_list")[0].output.clone().unwrap()).unwrap();
    let ear = &listed.children[0];
    assert_eq!(ear.status, ChildStatus::Idle, "{ear:?}");
    assert_eq!(ear.answer.as_deref(), Some("the docs too"));
    assert_eq!(ear.steps, 3, "its two turns' steps, summed");
    // Each answer reached the lead as a message from the teammate, in order.
    let answers: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::AgentMessage(m) if m.from_name.as_deref() == Some("ear") => {
                Some(m.text.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(answers, ["got the message", "the docs too"]);

    let log = stored_log(&f, &ear.session_id, 2).await;
    let message = log
        .iter()
        .position(|e| matches!(&e.body, EventBody::AgentMessage(m) if m.text == "Also count the tests." && m.from_session_id == lead.id()))
        .expect("agent.message in the teammate's log");
    // The message follows the step it arrived in: the model's second request has it last.
    let steps_done = qilin_agent::HistoryFold::from_events(
        log.iter()
            .take_while(|e| !matches!(&e.body, EventBody::StepStarted { step: 2, .. })),
    );
    let last = steps_done.messages().last().unwrap();
    assert!(
        format!("{last:?}").contains("Also count the tests."),
        "{last:?}"
    );
    assert!(message > 0);
    // The second message woke it: a turn without a prompt, whose input is the message.
    let woken = log
        .iter()
        .filter(|e| matches!(&e.body, EventBody::TurnStarted { prompt, .. } if prompt.is_empty()))
        .count();
    assert_eq!(woken, 1);
    let history = qilin_agent::HistoryFold::from_events(&log);
    let user_texts: Vec<String> = history
        .messages()
        .iter()
        .filter_map(|m| match m {
            Message::User { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(user_texts.len(), 3, "{user_texts:?}");
    assert!(user_texts[2].contains("And the docs?"), "{user_texts:?}");
}

/// A session's stored log once `turns` of its turns have finished and been stored.
async fn stored_log(f: &Fixture, id: &str, turns: usize) -> Vec<Event> {
    for _ in 0..200 {
        let events = f.store.read(id, 0, 100_000).await.unwrap();
        let finished = events
            .iter()
            .filter(|event| matches!(event.body, EventBody::TurnFinished { .. }))
            .count();
        if finished >= turns {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the session {id} never finished {turns} turns");
}

/// A lead with the task tools besides the subagent ones.
const TEAM_LEAD: &str = "name: lead\ninstructions: Lead the team.\n\
                         tools: [agent, agent_wait, agent_send, agent_stop, agent_list, \
                         task_create, task_update, task_list, read, bash]\n";

fn tasks_of(result: &ToolResultEvent) -> Vec<qilin_protocol::tasks::TaskRecord> {
    let output: qilin_protocol::tasks::TaskListOutput =
        serde_json::from_value(result.output.clone().expect("an output")).unwrap();
    output.tasks
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_teammates_share_one_task_list_rebuilt_from_the_leads_log_after_a_restart() {
    use qilin_protocol::tasks::TaskStatus;
    let f = fixture(TEAM_LEAD);
    child_agent(
        &f,
        "alpha",
        "task_update, task_list, agent_send",
        r#"
turns:
  - calls:
      - tool: task_update
        args: {id: "1", status: in_progress, assignee: a}
  - calls:
      - tool: task_update
        args: {id: "1", status: completed, note: "parser written"}
  - calls:
      - tool: agent_send
        args: {to: b, message: "The parser is in."}
  - say: "parser done"
"#,
    );
    child_agent(
        &f,
        "beta",
        "task_update, task_list, agent_send",
        r#"
turns:
  - say: "waiting for the parser"
  - calls:
      - tool: task_update
        args: {id: "2", status: in_progress, assignee: b}
  - calls:
      - tool: task_update
        args: {id: "2", status: completed, note: "12 tests pass"}
  - calls:
      - tool: agent_send
        args: {to: lead, message: "Tests written and passing."}
  - say: "tests done"
"#,
    );
    let script = r#"
turns:
  - calls:
      - tool: task_create
        args: {title: "Write the parser"}
      - tool: task_create
        args: {title: "Test the parser", blockedBy: ["1"]}
  - calls:
      - tool: task_update
        args: {id: "2", status: in_progress}
      - tool: task_update
        args: {id: "9", status: completed}
      - tool: task_create
        args: {title: "Nobody's", assignee: nobody}
      - tool: task_create
        args: {title: "Waits for nothing", blockedBy: ["7"]}
  - calls:
      - tool: agent
        args: {agent: beta, prompt: "Test the parser once it is written (task 2).", description: "Tests", name: b, background: true}
      - tool: agent
        args: {agent: alpha, prompt: "Write the parser (task 1).", description: "Parser", name: a, background: true}
  - calls:
      - tool: bash
        args: {command: "sleep 1.5"}
  - calls:
      - tool: agent_wait
        args: {ids: [a, b], timeout_ms: 20000}
  - calls:
      - tool: task_list
        args: {}
  - say: "The team is done."
"#;
    let lead = lead(&f, script, ChildLimits::default()).await;
    let events = run(&lead, "Build the parser with a team.").await;

    let updates = results(&events, "task_update");
    let creates = results(&events, "task_create");
    let refused = |result: &ToolResultEvent| format!("{:?}", result.content);
    assert_eq!(creates[0].status, CallStatus::Ok, "{}", refused(creates[0]));
    assert_eq!(updates[0].status, CallStatus::Error);
    assert!(
        refused(updates[0]).contains("waits for task 1 (pending)"),
        "{}",
        refused(updates[0])
    );
    assert!(
        refused(updates[1]).contains("no task `9`"),
        "{}",
        refused(updates[1])
    );
    assert!(
        refused(creates[2]).contains("no teammate `nobody`"),
        "{}",
        refused(creates[2])
    );
    assert!(
        refused(creates[3]).contains("task `7`, which does not exist"),
        "{}",
        refused(creates[3])
    );

    let tasks = tasks_of(results(&events, "task_list")[0]);
    assert_eq!(tasks.len(), 2, "{tasks:?}");
    assert_eq!(tasks[0].status, TaskStatus::Completed);
    assert_eq!(tasks[0].assignee.as_deref(), Some("a"));
    assert_eq!(tasks[0].notes[0].by, "a");
    assert_eq!(tasks[0].notes[0].text, "parser written");
    assert_eq!(tasks[1].status, TaskStatus::Completed);
    assert_eq!(tasks[1].assignee.as_deref(), Some("b"));
    assert_eq!(tasks[1].blocked_by, ["1"]);
    assert_eq!(tasks[1].notes[0].text, "12 tests pass");
    // Every change, whoever made it, is an event of the lead's log.
    let by: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::TaskCreated(c) => Some(("created".to_string(), c.by.clone())),
            EventBody::TaskUpdated(u) => Some((u.task.status.as_str().to_string(), u.by.clone())),
            _ => None,
        })
        .collect();
    let by: Vec<(&str, &str)> = by.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(
        by,
        [
            ("created", "lead"),
            ("created", "lead"),
            ("in_progress", "a"),
            ("completed", "a"),
            ("in_progress", "b"),
            ("completed", "b"),
        ]
    );
    // A teammate wrote to the lead by name.
    assert!(events.iter().any(|e| matches!(&e.body,
        EventBody::AgentMessage(m) if m.text == "Tests written and passing." && m.from_name.as_deref() == Some("b"))));

    // Restarted, the lead rebuilds the list from its log.
    let id = lead.id().to_string();
    lead.close().await.unwrap();
    drop(lead);
    let resumed = f
        .runtime
        .resume(&id)
        .await
        .unwrap()
        .model(scripted(
            "turns:
  - calls:
      - tool: task_list
        args: {}
  - say: listed
",
        ))
        .no_sandbox(true)
        .build()
        .await
        .unwrap();
    let after = run(&resumed, "What is left?").await;
    let lists = results(&after, "task_list");
    assert_eq!(tasks_of(lists[lists.len() - 1]), tasks);
}

/// The lead of the resume tests: a background child in its first turn, collected in its second.
const START_THEN_COLLECT: &str = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: worker, prompt: "Work.", description: "Work", background: true}
  - say: "Started it."
  - calls:
      - tool: agent_wait
        args: {}
  - calls:
      - tool: agent_wait
        args: {timeout_ms: 0}
  - say: "Collected."
"#;

/// Closes `lead` after its first turn, resumes it from the store in a new handle and runs the
/// second turn: what a parent closed (or its process restarted) while its child ran goes
/// through.
async fn resumed_and_collected(
    f: &Fixture,
    lead: SessionHandle,
    before_resume: impl AsyncFnOnce(&str),
) -> Vec<Event> {
    run(&lead, "Start it.").await;
    let id = lead.id().to_string();
    lead.close().await.unwrap();
    drop(lead);
    before_resume(&id).await;
    let resumed = f
        .runtime
        .resume(&id)
        .await
        .unwrap()
        .model(scripted(START_THEN_COLLECT))
        .no_sandbox(true)
        .build()
        .await
        .unwrap();
    run(&resumed, "Collect it.").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_parent_takes_back_a_child_that_ended_unrecorded_and_delivers_it_once() {
    let f = fixture(LEAD);
    // Slow enough that the lead is closed before the child ends: its end is in its own log
    // only.
    child_agent(
        &f,
        "worker",
        "read",
        "chunk_delay_ms: 100\nturns:\n  - say: worker done after a while\n",
    );
    let lead = lead(&f, START_THEN_COLLECT, ChildLimits::default()).await;
    let events = resumed_and_collected(&f, lead, async |id: &str| {
        let started = f.store.read(id, 0, 10_000).await.unwrap();
        assert!(
            !started.iter().any(|e| e.body.kind() == "agent.finished"),
            "the lead was closed before its child ended"
        );
        let child = started
            .iter()
            .find_map(|e| match &e.body {
                EventBody::AgentStarted(started) => Some(started.child_session_id.clone()),
                _ => None,
            })
            .unwrap();
        child_log(&f, &child).await;
    })
    .await;
    let waits = results(&events, "agent_wait");
    let first = waited(waits[0]);
    assert_eq!(first.finished.len(), 1, "{first:?}");
    assert_eq!(first.finished[0].status, ChildStatus::Completed);
    assert_eq!(
        first.finished[0].answer.as_deref(),
        Some("worker done after a while")
    );
    assert!(waited(waits[1]).finished.is_empty(), "handed over once");
    let count = |kind: &str| events.iter().filter(|e| e.body.kind() == kind).count();
    assert_eq!((count("agent.finished"), count("agent.delivered")), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_parent_follows_a_child_still_running_and_waits_for_it() {
    let f = fixture(LEAD);
    child_agent(
        &f,
        "worker",
        "bash",
        "turns:\n  - calls:\n      - tool: bash\n        args: {command: \"sleep 1.5\"}\n  - say: slept\n",
    );
    let lead = lead(&f, START_THEN_COLLECT, ChildLimits::default()).await;
    let runtime = f.runtime.clone();
    let events = resumed_and_collected(&f, lead, async |id: &str| {
        let started = f.store.read(id, 0, 10_000).await.unwrap();
        let child = started
            .iter()
            .find_map(|e| match &e.body {
                EventBody::AgentStarted(started) => Some(started.child_session_id.clone()),
                _ => None,
            })
            .unwrap();
        let live = runtime.live_session(&child).expect("the child runs on");
        assert!(live.running_turn().is_some());
        // Never run twice: the running child is not resumed from its log.
        let again = runtime.resume(&child).await;
        assert!(
            matches!(&again, Err(err) if err.to_string().contains("runs in this process")),
            "{}",
            again.err().map(|err| err.to_string()).unwrap_or_default()
        );
    })
    .await;
    let first = waited(results(&events, "agent_wait")[0]);
    assert_eq!(first.finished.len(), 1, "{first:?}");
    assert_eq!(first.finished[0].answer.as_deref(), Some("slept"));
    let count = |kind: &str| events.iter().filter(|e| e.body.kind() == kind).count();
    assert_eq!((count("agent.finished"), count("agent.delivered")), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_lead_wakes_its_idle_teammate_from_the_store() {
    let f = fixture(LEAD);
    child_agent(
        &f,
        "listener",
        "read",
        "turns:\n  - say: listening\n  - say: heard you after the restart\n",
    );
    // One script for both processes: the resumed lead goes on after the answers its log has.
    let script = r#"
turns:
  - calls:
      - tool: agent
        args: {agent: listener, prompt: "Wait for news.", description: "Listen", name: ear, background: true}
  - calls:
      - tool: agent_wait
        args: {ids: [ear], timeout_ms: 20000}
  - say: "It listens."
  - calls:
      - tool: agent_send
        args: {to: ear, message: "Are you there?"}
  - calls:
      - tool: agent_wait
        args: {ids: [ear], timeout_ms: 20000}
  - calls:
      - tool: agent_list
        args: {}
  - say: "It answered."
"#;
    let lead = lead(&f, script, ChildLimits::default()).await;
    let events = run(&lead, "Start it.").await;
    let ear = record(results(&events, "agent")[0]).session_id;
    stored_log(&f, &ear, 1).await;
    let id = lead.id().to_string();
    lead.close().await.unwrap();
    drop(lead);
    assert!(
        f.runtime.live_session(&ear).is_none(),
        "the teammate's session went with its lead: it must come back from the store"
    );
    let resumed = f
        .runtime
        .resume(&id)
        .await
        .unwrap()
        .model(scripted(script))
        .no_sandbox(true)
        .build()
        .await
        .unwrap();
    let events = run(&resumed, "Wake it.").await;
    let sent = results(&events, "agent_send")[0];
    assert_eq!(sent.status, CallStatus::Ok, "{:?}", sent.content);
    assert_eq!(sent.output.clone().unwrap()["delivered"], "now");
    let listed: qilin_protocol::agents::AgentListOutput =
        serde_json::from_value(results(&events, "agent_list")[0].output.clone().unwrap()).unwrap();
    assert_eq!(listed.children[0].status, ChildStatus::Idle, "{listed:?}");
    assert_eq!(
        listed.children[0].answer.as_deref(),
        Some("heard you after the restart")
    );
    assert!(events.iter().any(|e| matches!(&e.body,
        EventBody::AgentMessage(m) if m.text == "heard you after the restart" && m.from_name.as_deref() == Some("ear"))));
    // The teammate's own log: one session, two turns, the message read once in the second.
    let log = stored_log(&f, &ear, 2).await;
    assert_consistent(&log);
    let started = log
        .iter()
        .filter(|e| matches!(e.body, EventBody::SessionStarted(_)))
        .count();
    assert_eq!(started, 1, "resumed, not started again");
    let history = qilin_agent::HistoryFold::from_events(&log);
    let heard = history
        .messages()
        .iter()
        .filter(|m| format!("{m:?}").contains("Are you there?"))
        .count();
    assert_eq!(heard, 1, "{:?}", history.messages());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grandchilds_approval_surfaces_in_the_top_session_and_is_answered_there() {
    let f = fixture(LEAD);
    child_agent(
        &f,
        "middle",
        "agent",
        "turns:\n  - calls:\n      - tool: agent\n        args: {agent: asker, prompt: \"Read the notes.\", description: \"Read the notes\"}\n  - say: middle done\n",
    );
    let asker_script = f.workspace().join("asker.yaml");
    std::fs::write(
        &asker_script,
        "turns:\n  - calls:\n      - tool: read\n        args: {path: notes.txt}\n  - say: read it\n",
    )
    .unwrap();
    std::fs::write(
        f.workspace().join("asker.agent"),
        format!(
            "name: asker\ninstructions: Read.\ntools: [read]\nmodel: scripted:{}\n\
             review:\n  rules:\n    - tool: read\n      decision: ask\n      reason: reading needs a yes\n",
            asker_script.display()
        ),
    )
    .unwrap();
    let script = "turns:\n  - calls:\n      - tool: agent\n        args: {agent: middle, prompt: \"Delegate the reading.\", description: \"Delegate\"}\n  - say: all done\n";
    let lead = f
        .builder()
        .model(scripted(script))
        .attended(true)
        .build()
        .await
        .unwrap();
    let turn = lead.submit("Go.", None).unwrap();

    // The grandchild's approval opens a request of the top session, the lead's.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let opened = loop {
        if let Some(open) = lead.open_requests().into_iter().next() {
            break open;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no request reached the lead"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(opened.tool_name, "read");
    assert_eq!(opened.child_name.as_deref(), Some("asker"));
    lead.resolve(
        &opened.request_id,
        qilin_tool::RequestReply::Approve,
        "test",
    )
    .unwrap();
    let summary = turn.finished().await;
    assert_eq!(
        summary.reason,
        qilin_protocol::FinishReason::Completed,
        "{summary:?}"
    );

    let events = stored(&lead).await;
    assert_consistent(&events);
    let agent = results(&events, "agent");
    assert_eq!(agent.len(), 1);
    assert_eq!(opened.call_id, agent[0].call_id, "on the lead's agent call");
    let middle = record(agent[0]);
    assert_eq!(middle.status, ChildStatus::Completed);
    let middle_log = child_log(&f, &middle.session_id).await;
    let grandchild = record(results(&middle_log, "agent")[0]);
    assert_eq!(grandchild.status, ChildStatus::Completed);
    assert_eq!(grandchild.answer.as_deref(), Some("read it"));
    assert_eq!(
        opened.child_session_id.as_deref(),
        Some(grandchild.session_id.as_str()),
        "the request names the grandchild, the session that asked"
    );
    // The lead's log records the answer given there, once.
    let resolved: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::RequestResolved(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(resolved.len(), 1, "{resolved:?}");
    assert_eq!(resolved[0].request_id, opened.request_id);
    assert_eq!(resolved[0].resolved_by, "test");
    assert_eq!(
        resolved[0].resolution,
        qilin_protocol::RequestResolution::Approved
    );
    // The answer resolved the grandchild's own request, and its read ran.
    let grand_log = child_log(&f, &grandchild.session_id).await;
    assert_consistent(&grand_log);
    let read = results(&grand_log, "read");
    assert_eq!(read[0].status, CallStatus::Ok, "{:?}", read[0].content);
    assert!(grand_log.iter().any(|e| matches!(
        &e.body,
        EventBody::RequestResolved(r)
            if r.resolution == qilin_protocol::RequestResolution::Approved
    )));
}
