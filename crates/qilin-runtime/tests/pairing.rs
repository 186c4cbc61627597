//! Every `tool.start` gets exactly one `tool.result`, however the call ends.

mod support;

use futures_util::StreamExt;
use qilin_protocol::{CallStatus, EventBody, FinishReason, ToolResultEvent};
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

/// The results of `tool`'s calls, in order.
fn results<'a>(events: &'a [qilin_protocol::Event], tool: &str) -> Vec<&'a ToolResultEvent> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) if r.tool_name == tool => Some(r),
            _ => None,
        })
        .collect()
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
    let run = results(&events, "run_code")[0];
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
    let mut live = session.subscribe_from(0);
    let turn = session.submit("go", None).unwrap();
    // Interrupt once the nested command has printed, so there is output to keep.
    let printed = async {
        while let Some(event) = live.next().await {
            if let EventBody::ToolProgress(progress) = event.unwrap().body
                && progress.text.contains("started")
            {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), printed)
        .await
        .expect("the nested command prints");
    assert!(session.interrupt());
    let summary = turn.finished().await;
    assert_eq!(summary.reason, FinishReason::Interrupted);
    let events = stored(&session).await;
    assert_consistent(&events);
    let bash = results(&events, "bash")[0];
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
    let run = results(&events, "run_code")
        .into_iter()
        .find(|r| r.parent_call_id.is_none())
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

#[tokio::test]
async fn a_code_only_agent_lists_run_code_alone_and_reads_skills_from_code() {
    // `code_tools` leaves `skill` out: a code-only agent reads its skills from code anyway.
    let f = fixture(
        "name: coded\ninstructions: Work in code.\ntools: []\ncode_mode: true\ncode_tools: [table_query]\n",
    );
    let script = run_code(
        r#"guide = sdk.skill("table-query")
print(guide.splitlines()[0])
print("Files in skill" in guide)
try:
    sdk.skill("no-such-skill")
except ToolError as e:
    print("missing:", sdk.tool.error(e)["code"])
try:
    sdk.skill(3)
except TypeError as e:
    print("wrong:", e)
"#,
    );
    let session = f.session(&script, false).await;
    let prompt = session.prompt();
    let listed: Vec<&str> = prompt.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(listed, ["run_code"]);
    assert!(
        prompt
            .system
            .contains("read it in run_code: `print(sdk.skill(\"NAME\"))`"),
        "{}",
        prompt.system
    );
    assert!(
        prompt.system.contains("- table-query: "),
        "{}",
        prompt.system
    );
    session.submit("go", None).unwrap().finished().await;
    let events = stored(&session).await;
    assert_consistent(&events);
    let skill_reads = results(&events, "skill");
    assert_eq!(
        skill_reads.len(),
        2,
        "a read and a failed read, each a nested call"
    );
    assert!(skill_reads.iter().all(|r| r.parent_call_id.is_some()));
    assert_eq!(skill_reads[0].status, CallStatus::Ok);
    let run = results(&events, "run_code")[0];
    let printed = format!("{:?}", run.content);
    assert!(
        printed.contains("# Aggregating CSV files with `table_query`"),
        "{printed}"
    );
    assert!(printed.contains("missing: INVALID_ARGUMENTS"), "{printed}");
    assert!(
        printed.contains("wrong: sdk.skill(name, file=None): name must be a str"),
        "{printed}"
    );
}

#[tokio::test]
async fn an_agent_with_a_direct_tool_reads_skills_with_the_skill_tool() {
    let f = fixture("name: mixed\ninstructions: Work.\ntools: [read]\ncode_mode: true\n");
    let session = f.session("turns:\n  - say: done\n", false).await;
    let prompt = session.prompt();
    let listed: Vec<&str> = prompt.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(listed, ["read", "skill", "run_code"]);
    assert!(prompt.system.contains("read it with the `skill` tool"));
    let run_code = prompt.tools.iter().find(|t| t.name == "run_code").unwrap();
    assert!(run_code.description.contains("Use it to do in one step"));
    assert!(run_code.parameters.get("description").is_none());
}
