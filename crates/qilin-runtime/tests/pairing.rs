//! Every `tool.start` gets exactly one `tool.result`, however the call ends.

mod support;

use qilin_protocol::{CallStatus, EventBody, FinishReason};
use std::time::Duration;
use support::{assert_consistent, fixture, stored};

const CODER: &str = "\
name: coder
instructions: Work in code.
tools: [read]
code_mode: true
skills:
  available: []
";

fn run_code(code: &str) -> String {
    let mut script = String::from(
        "turns:\n  - calls:\n      - tool: run_code\n        args:\n          code: |\n",
    );
    for line in code.lines() {
        script.push_str("            ");
        script.push_str(line);
        script.push('\n');
    }
    script.push_str("  - say: done\n");
    script
}

fn statuses(events: &[qilin_protocol::Event]) -> Vec<(String, CallStatus)> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some((r.tool_name.clone(), r.status)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_failed_gather_ends_the_call_still_running() {
    let f = fixture(CODER);
    let script = run_code(
        "import asyncio\n\
         await asyncio.gather(\n\
             sdk.tool.call_async(\"bash\", {\"command\": \"sleep 1\"}),\n\
             sdk.tool.call_async(\"read\", {\"path\": \"missing.txt\"}),\n\
         )\n",
    );
    let session = f.session(&script, false).await;
    let summary = session.submit("go", None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let events = stored(&session).await;
    assert_consistent(&events);
    let ended = statuses(&events);
    assert!(
        ended.contains(&("read".into(), CallStatus::Error)),
        "{ended:?}"
    );
    assert!(
        ended.iter().any(|(tool, _)| tool == "bash"),
        "the bash call ends too: {ended:?}"
    );
    assert_eq!(
        ended.last().unwrap(),
        &("run_code".into(), CallStatus::Error)
    );
}

#[tokio::test]
async fn a_run_cut_by_its_deadline_ends_its_nested_calls_first() {
    let f = fixture(CODER);
    let script = run_code(
        "import asyncio\n\
         await asyncio.gather(\n\
             sdk.tool.call_async(\"bash\", {\"command\": \"sleep 30\"}),\n\
             sdk.tool.call_async(\"bash\", {\"command\": \"sleep 30\"}),\n\
         )\n",
    );
    let session = f
        .runtime
        .session(f.workspace())
        .agent_file(f.agent())
        .no_sandbox(true)
        .model(support::scripted(&script))
        .call_timeout(Some(Duration::from_millis(800)))
        .build()
        .await
        .unwrap();
    let started = std::time::Instant::now();
    session.submit("go", None).unwrap().finished().await;
    assert!(started.elapsed() < Duration::from_secs(20));
    let events = stored(&session).await;
    assert_consistent(&events);
    let ended = statuses(&events);
    let run = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult(r) if r.tool_name == "run_code" => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        run.error_code,
        Some(qilin_protocol::ErrorCode::Timeout),
        "{ended:?}"
    );
    assert_eq!(
        ended.iter().filter(|(tool, _)| tool == "bash").count(),
        2,
        "{ended:?}"
    );
}

#[tokio::test]
async fn an_interrupt_ends_nested_calls_with_what_they_had() {
    let f = fixture(CODER);
    let script = run_code("sdk.tool.call(\"bash\", {\"command\": \"echo started; sleep 30\"})\n");
    let session = f.session(&script, false).await;
    let turn = session.submit("go", None).unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(session.interrupt());
    let summary = turn.finished().await;
    assert_eq!(summary.reason, FinishReason::Interrupted);
    let events = stored(&session).await;
    assert_consistent(&events);
    let bash = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult(r) if r.tool_name == "bash" => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(bash.status, CallStatus::Interrupted);
    let shown = format!("{:?}", bash.content);
    assert!(
        shown.contains("started"),
        "the output so far is kept: {shown}"
    );
}

#[tokio::test]
async fn run_code_cannot_call_run_code_nor_tools_outside_its_set() {
    let f = fixture(
        "name: narrow\ninstructions: Work.\ntools: [read]\ncode_mode: true\ncode_tools: [read]\nskills:\n  available: []\n",
    );
    let script = run_code(
        r#"out = []
for name, args in [("run_code", {"code": "1"}), ("bash", {"command": "true"}), ("read", {"path": "notes.txt"})]:
    try:
        sdk.tool.call(name, args)
        out.append(name + ": ran")
    except ToolError as e:
        out.append(name + ": " + sdk.tool.error(e)["code"])
print(out)
"#,
    );
    let session = f.session(&script, false).await;
    session.submit("go", None).unwrap().finished().await;
    let events = stored(&session).await;
    assert_consistent(&events);
    let run = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult(r) if r.tool_name == "run_code" && r.parent_call_id.is_none() => {
                Some(r)
            }
            _ => None,
        })
        .unwrap();
    let printed = format!("{:?}", run.content);
    assert!(
        printed.contains("run_code: UNKNOWN_TOOL")
            && printed.contains("bash: UNKNOWN_TOOL")
            && printed.contains("read: ran"),
        "{printed}"
    );
}

#[tokio::test]
async fn only_the_mounted_tools_run_when_called_directly() {
    let f = fixture("name: reader\ninstructions: Read.\ntools: [read]\nskills:\n  available: []\n");
    let script = "turns:\n  - calls:\n      - tool: bash\n        args: {command: \"touch made-by-bash\"}\n      - tool: run_code\n        args: {code: \"1\"}\n      - tool: skill\n        args: {name: anything}\n  - say: done\n";
    let session = f.session(script, false).await;
    session.submit("go", None).unwrap().finished().await;
    let events = stored(&session).await;
    assert_consistent(&events);
    for result in events.iter().filter_map(|e| match &e.body {
        EventBody::ToolResult(r) => Some(r),
        _ => None,
    }) {
        assert_eq!(
            result.error_code,
            Some(qilin_protocol::ErrorCode::UnknownTool),
            "{} ran: {:?}",
            result.tool_name,
            result.content
        );
        let message = format!("{:?}", result.content);
        assert!(
            message.contains("The tools you can call: read"),
            "{message}"
        );
    }
    assert!(!f.workspace().join("made-by-bash").exists());
}
