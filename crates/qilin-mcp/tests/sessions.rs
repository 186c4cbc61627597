//! MCP servers' tools in sessions: a real MCP server process (this crate's
//! `qilin-mcp-test-server` fixture, on `rmcp`, over stdio — or the same server over streamable
//! HTTP in this process), the scripted model, code mode. The same tools reach the model
//! directly and from `run_code` through one execution layer.

#[path = "../src/bin/qilin-mcp-test-server/arith.rs"]
mod arith;

use futures_util::StreamExt as _;
use qilin_model::{Script, ScriptedProvider};
use qilin_protocol::{CallStatus, CallerKind, Event, EventBody, FinishReason, ToolResultEvent};
use qilin_runtime::{CodeSandbox, ModelChoice, Runtime, SessionHandle};
use qilin_store::{EventStore, MemoryStore};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const SERVER: &str = env!("CARGO_BIN_EXE_qilin-mcp-test-server");

/// The longest a test waits on something that must not hang, before it calls it hung.
const PATIENCE: Duration = Duration::from_secs(60);

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn results(events: &[Event]) -> Vec<&ToolResultEvent> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// A workspace whose `calc.agent` is `agent` (YAML).
fn workspace_with(agent: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(&dir.path().join("calc.agent"), agent);
    dir
}

/// A workspace with an agent using the test server in code mode, its `echo` also mounted
/// directly.
fn workspace() -> tempfile::TempDir {
    workspace_with(&format!(
        "name: calc\ninstructions: Compute with the arith server's tools.\ncode_mode: true\n\
         mcp_servers:\n  arith:\n    command: {SERVER}\n    direct: [echo]\n"
    ))
}

/// A session, in this process, of the workspace's `calc.agent` answered by `script`, with
/// `call_timeout` as each call's time limit.
async fn session(dir: &Path, script: &str, call_timeout: Option<Duration>) -> SessionHandle {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let script = Script::parse(script, Path::new("script.yaml")).unwrap();
    Runtime::new(store, CodeSandbox::InProcess)
        .session(dir)
        .agent_file(dir.join("calc.agent"))
        .no_sandbox(true)
        .call_timeout(call_timeout)
        .model(ModelChoice::Provider {
            provider: Arc::new(ScriptedProvider::new(script)),
            model: "scripted".into(),
            label: "scripted:script.yaml".into(),
        })
        .build()
        .await
        .unwrap()
}

/// Every event of the session, once stored.
async fn stored(handle: &SessionHandle) -> Vec<Event> {
    handle.flush().await.unwrap();
    let head = handle.committed_head();
    handle
        .subscribe_from(0)
        .take(head as usize)
        .map(Result::unwrap)
        .collect()
        .await
}

/// One turn of `prompt` in a session of the workspace's `calc.agent` answered by `script`,
/// which must complete; the session's events.
async fn run(dir: &Path, script: &str, prompt: &str) -> Vec<Event> {
    let handle = session(dir, script, None).await;
    let summary = handle.submit(prompt, None).unwrap().finished().await;
    assert_eq!(summary.reason, FinishReason::Completed, "{summary:?}");
    let events = stored(&handle).await;
    handle.close().await.unwrap();
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_are_called_directly_and_from_run_code_through_one_execution_layer() {
    let dir = workspace();
    let script = r#"turns:
  - say: "First directly, then from code."
    calls:
      - tool: arith__echo
        args: {text: "direct"}
  - calls:
      - tool: run_code
        args:
          code: |
            s = sdk.tool.call("arith__add", {"a": 2, "b": 3})
            e = sdk.tool.call("arith__echo", {"text": "hi"})
            try:
                sdk.tool.call("arith__fail", {"message": "no luck"})
                caught = None
            except ToolError as err:
                caught = sdk.tool.error(err)["message"]
            try:
                sdk.tool.call("arith__add", {"a": "two"})
                invalid = None
            except ToolError as err:
                invalid = sdk.tool.error(err)["code"]
            {"sum": s["sum"], "echo": e, "caught": caught, "invalid": invalid}
  - say: "Done."
"#;
    let events = run(dir.path(), script, "add 2 and 3").await;
    let results = results(&events);

    let direct = results
        .iter()
        .find(|r| r.tool_name == "arith__echo" && r.caller == CallerKind::Direct)
        .expect("the direct call of the mounted tool");
    assert_eq!(direct.status, CallStatus::Ok, "{:?}", direct.content);
    assert_eq!(direct.output, Some(json!("Echo: direct")));

    let run_code = results.iter().find(|r| r.tool_name == "run_code").unwrap();
    assert_eq!(run_code.status, CallStatus::Ok, "{:?}", run_code.content);
    assert_eq!(
        run_code.output.as_ref().unwrap()["value"],
        json!({"sum": 5.0, "echo": "Echo: hi", "caught": "no luck", "invalid": "INVALID_ARGUMENTS"})
    );
    let nested: Vec<(&str, CallStatus)> = results
        .iter()
        .filter(|r| r.parent_call_id.as_deref() == Some(run_code.call_id.as_str()))
        .map(|r| (r.tool_name.as_str(), r.status))
        .collect();
    assert_eq!(
        nested,
        [
            ("arith__add", CallStatus::Ok),
            ("arith__echo", CallStatus::Ok),
            ("arith__fail", CallStatus::Error),
            ("arith__add", CallStatus::Error)
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_is_not_mounted_directly_is_refused_to_the_model() {
    let dir = workspace();
    let script = r#"turns:
  - calls:
      - tool: arith__add
        args: {a: 1, b: 2}
  - say: "It is code-mode-only."
"#;
    let events = run(dir.path(), script, "add").await;
    let add = results(&events)
        .into_iter()
        .find(|r| r.tool_name == "arith__add")
        .expect("the refused call has its result");
    assert_eq!(add.status, CallStatus::Error);
    let text = format!("{:?}", add.content);
    assert!(text.contains("run_code"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_call_fails_that_call_and_is_started_again_for_the_next() {
    let dir = workspace();
    let script = r#"turns:
  - calls:
      - tool: run_code
        args:
          code: |
            try:
                sdk.tool.call("arith__crash", {})
                first = "no error"
            except ToolError as err:
                first = sdk.tool.error(err)["message"]
            again = sdk.tool.call("arith__add", {"a": 20, "b": 22})
            {"first": first, "again": again["sum"]}
  - say: "Recovered."
"#;
    let events = run(dir.path(), script, "crash it").await;
    let run_code = results(&events)
        .into_iter()
        .find(|r| r.tool_name == "run_code")
        .unwrap();
    assert_eq!(run_code.status, CallStatus::Ok, "{:?}", run_code.content);
    let value = &run_code.output.as_ref().unwrap()["value"];
    assert_eq!(value["again"], json!(42.0));
    let first = value["first"].as_str().unwrap();
    assert!(
        first.contains("MCP server `arith`") && first.contains("stopped during a call of `crash`"),
        "{first}"
    );
    assert!(
        first.contains("crashing on purpose"),
        "its stderr is quoted: {first}"
    );
}

/// The test server serving streamable HTTP on 127.0.0.1 from this process; its URL.
async fn serve_http() -> String {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpService, session::local::LocalSessionManager,
    };
    let service = StreamableHttpService::new(
        || Ok(arith::TestServer::default()),
        LocalSessionManager::default().into(),
        Default::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_is_called_from_run_code_with_a_token_from_the_environment() {
    let url = serve_http().await;
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    // PATH is set wherever tests run; this process cannot set a variable of its own.
    let agent = |variable: &str| {
        format!(
            "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers:\n  remote:\n    url: {url}\n    headers:\n      Authorization: \"Bearer ${{{variable}}}\"\n"
        )
    };
    let script = r#"turns:
  - calls:
      - tool: run_code
        args:
          code: |
            s = sdk.tool.call("remote__add", {"a": 1.5, "b": 2})
            who = sdk.tool.call("remote__auth", {})
            {"sum": s["sum"], "auth": who}
  - say: "Done."
"#;
    let dir = workspace_with(&agent("PATH"));
    let events = run(dir.path(), script, "add").await;
    let run_code = results(&events)
        .into_iter()
        .find(|r| r.tool_name == "run_code")
        .unwrap();
    assert_eq!(run_code.status, CallStatus::Ok, "{:?}", run_code.content);
    let path = std::env::var("PATH").unwrap();
    assert_eq!(
        run_code.output.as_ref().unwrap()["value"],
        json!({"sum": 3.5, "auth": format!("Bearer {path}")})
    );

    // Without the variable, the declaration names what is missing.
    let dir = workspace_with(&agent("QILIN_TEST_SURELY_UNSET"));
    let handle = session(dir.path(), "turns:\n  - say: \"Hello.\"\n", None).await;
    let notes = handle.notes().join("\n");
    assert!(
        notes.contains("needs the environment variable `QILIN_TEST_SURELY_UNSET`"),
        "{notes}"
    );
    handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_that_changes_reaches_the_model_at_the_next_turn() {
    let script = r#"turns:
  - calls:
      - tool: run_code
        args:
          code: |
            try:
                sdk.tool.call("arith__extra", {})
                before = "callable"
            except ToolError as err:
                before = sdk.tool.error(err)["code"]
            sdk.tool.call("arith__grow", {})
            before
  - say: "Grown."
  - calls:
      - tool: run_code
        args:
          code: |
            guide = sdk.tool.call("skill", {"name": "mcp-arith"})
            {"more": sdk.tool.call("arith__extra", {}), "taught": "arith__extra" in str(guide)}
  - say: "Done."
"#;
    let dir = workspace();
    let handle = session(dir.path(), script, None).await;
    let first_prompt = handle.prompt();
    let first = handle.submit("grow it", None).unwrap().finished().await;
    assert_eq!(first.final_text, "Grown.", "{first:?}");
    assert_eq!(
        handle.prompt(),
        first_prompt,
        "the prompt stays as it was until the next turn"
    );
    let second = handle.submit("use it", None).unwrap().finished().await;
    assert_eq!(second.final_text, "Done.", "{second:?}");
    assert_ne!(
        handle.prompt(),
        first_prompt,
        "the catalog describes the skill again"
    );
    let events = stored(&handle).await;
    let runs: Vec<&ToolResultEvent> = results(&events)
        .into_iter()
        .filter(|r| r.tool_name == "run_code")
        .collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        runs[0].output.as_ref().unwrap()["value"],
        json!("UNKNOWN_TOOL"),
        "{:?}",
        runs[0].content
    );
    assert_eq!(
        runs[1].output.as_ref().unwrap()["value"],
        json!({"more": "more", "taught": true}),
        "{:?}",
        runs[1].content
    );
    handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_past_the_call_limit_fails_the_call_and_is_started_again() {
    let script = r#"turns:
  - calls:
      - tool: arith__pid
        args: {}
  - calls:
      - tool: arith__sleep
        args: {ms: 60000}
  - calls:
      - tool: arith__pid
        args: {}
  - say: "Done."
"#;
    let dir = workspace_with(&format!(
        "name: calc\ninstructions: Compute.\nmcp_servers:\n  arith:\n    command: {SERVER}\n    direct: [pid, sleep]\n"
    ));
    let handle = session(dir.path(), script, Some(Duration::from_millis(700))).await;
    let summary = handle.submit("go", None).unwrap().finished().await;
    assert_eq!(summary.final_text, "Done.", "{summary:?}");
    let events = stored(&handle).await;
    let results = results(&events);
    let pids: Vec<&serde_json::Value> = results
        .iter()
        .filter(|r| r.tool_name == "arith__pid")
        .map(|r| r.output.as_ref().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    assert_ne!(
        pids[0], pids[1],
        "a new server process answers after the hang"
    );
    let sleep = results
        .iter()
        .find(|r| r.tool_name == "arith__sleep")
        .unwrap();
    assert_eq!(sleep.status, CallStatus::Error, "{:?}", sleep.content);
    assert_eq!(
        sleep.error_code,
        Some(qilin_protocol::ErrorCode::Timeout),
        "{:?}",
        sleep.content
    );
    handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_down_when_the_session_starts_is_tried_again_and_its_tools_join_between_turns() {
    let script = r#"turns:
  - say: "Not yet."
  - calls:
      - tool: run_code
        args:
          code: |
            guide = sdk.tool.call("skill", {"name": "mcp-flaky"})
            s = sdk.tool.call("flaky__add", {"a": 20, "b": 22})
            {"sum": s["sum"], "taught": "flaky__add" in str(guide)}
  - say: "Done."
"#;
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("failed-once");
    let dir = workspace_with(&format!(
        "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers:\n  flaky:\n    command: {SERVER}\n    env: {{FAIL_FIRST_START: {}}}\n",
        marker.display()
    ));
    let handle = session(dir.path(), script, None).await;
    assert!(marker.exists(), "the server's first start failed");
    let notes = handle.notes().join("\n");
    assert!(
        notes.contains("MCP server `flaky` could not be started")
            && notes.contains("failing my first start on purpose")
            && notes.contains("tried again"),
        "{notes}"
    );
    assert!(
        !handle.prompt().system.contains("mcp-flaky"),
        "a server that never started offers no skill yet"
    );

    let first = handle.submit("add", None).unwrap().finished().await;
    assert_eq!(first.final_text, "Not yet.", "{first:?}");
    // Past the wait after one failed start, the next turn tries the server again.
    tokio::time::sleep(qilin_mcp::RESTART_BACKOFF.delay(1) + Duration::from_millis(200)).await;
    let second = handle.submit("add now", None).unwrap().finished().await;
    assert_eq!(second.final_text, "Done.", "{second:?}");
    assert!(
        handle.prompt().system.contains("mcp-flaky"),
        "its skill joined the catalog between turns"
    );
    let events = stored(&handle).await;
    let run_code = results(&events)
        .into_iter()
        .find(|r| r.tool_name == "run_code")
        .unwrap();
    assert_eq!(
        run_code.output.as_ref().unwrap()["value"],
        json!({"sum": 42.0, "taught": true}),
        "{:?}",
        run_code.content
    );
    handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_rules_match_the_effect_the_server_declares() {
    let dir = workspace_with(&format!(
        "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers:\n  arith:\n    command: {SERVER}\n\
         review:\n  default: allow\n  rules:\n    - tool: \"arith__*\"\n      effect: additive\n      decision: deny\n      reason: no changes today\n"
    ));
    let script = r#"turns:
  - calls:
      - tool: run_code
        args:
          code: |
            try:
                sdk.tool.call("arith__grow", {})
                grown = "ran"
            except ToolError as err:
                grown = sdk.tool.error(err)["code"]
            {"grow": grown, "sum": sdk.tool.call("arith__add", {"a": 1, "b": 1})["sum"]}
  - say: "Done."
"#;
    let events = run(dir.path(), script, "try").await;
    let run_code = results(&events)
        .into_iter()
        .find(|r| r.tool_name == "run_code")
        .unwrap();
    assert_eq!(
        run_code.output.as_ref().unwrap()["value"],
        json!({"grow": "AUTO_REVIEW_DENIED", "sum": 2.0}),
        "{:?}",
        run_code.content
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_mcp_result_is_capped_for_the_model_and_spilled_whole() {
    let dir = workspace();
    let script = r#"turns:
  - calls:
      - tool: run_code
        args:
          code: |
            out = sdk.tool.call("arith__echo", {"text": "x" * 40000})
            len(out)
  - say: "Done."
"#;
    let events = run(dir.path(), script, "long").await;
    let results = results(&events);
    let run_code = results.iter().find(|r| r.tool_name == "run_code").unwrap();
    assert_eq!(
        run_code.output.as_ref().unwrap()["value"],
        json!(40_006),
        "the code receives the whole result"
    );
    let echo = results
        .iter()
        .find(|r| r.tool_name == "arith__echo")
        .unwrap();
    let text = match &echo.content[..] {
        [qilin_protocol::ContentBlock::Text { text }] => text,
        other => panic!("{other:?}"),
    };
    assert!(text.len() < 31_000, "capped: {} bytes", text.len());
    let notice = qilin_protocol::parse_spill_notice(text).expect("a spill notice");
    assert_eq!(notice.total_bytes, 40_006);
    let spilled = std::fs::read_to_string(dir.path().join(&notice.path))
        .or_else(|_| std::fs::read_to_string(&notice.path))
        .unwrap();
    assert_eq!(spilled.len(), 40_006);
    assert!(spilled.starts_with("Echo: xxx"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_a_call_sends_the_server_its_cancellation() {
    let script = r#"turns:
  - calls:
      - tool: arith__sleep
        args: {ms: 60000}
  - say: "Never reached."
"#;
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("cancel.log");
    let dir = workspace_with(&format!(
        "name: calc\ninstructions: Compute.\nmcp_servers:\n  arith:\n    command: {SERVER}\n    direct: [sleep]\n    env:\n      CANCEL_LOG: {}\n",
        log.display()
    ));
    let handle = session(dir.path(), script, None).await;
    let mut live = handle.subscribe_from(0);
    let turn = handle.submit("sleep", None).unwrap();
    // Interrupt once the call is running on the server.
    while let Some(event) = live.next().await {
        if matches!(&event.unwrap().body, EventBody::ToolStart(start) if start.tool_name == "arith__sleep")
        {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(handle.interrupt());
    let summary = turn.finished().await;
    assert_eq!(summary.reason, FinishReason::Interrupted, "{summary:?}");
    let mut noted = String::new();
    for _ in 0..50 {
        noted = std::fs::read_to_string(&log).unwrap_or_default();
        if !noted.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(noted, "sleep of 60000 ms cancelled\n");
    let events = stored(&handle).await;
    let sleep = results(&events)
        .into_iter()
        .find(|r| r.tool_name == "arith__sleep")
        .unwrap();
    assert_eq!(sleep.status, CallStatus::Interrupted, "{:?}", sleep.content);
    handle.close().await.unwrap();
}

/// A session whose server says its tool list changed and then never lists again is not
/// wedged: the next turn starts once the listing's deadline has passed, with the tools of the
/// server's last listing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_after_its_tool_list_changed_does_not_wedge_the_session() {
    let script = "turns:\n  - say: \"First.\"\n  - say: \"Second.\"\n";
    let dir = workspace_with(&format!(
        "name: calc\ninstructions: Talk.\ncode_mode: true\nmcp_servers:\n  hostile:\n    command: {SERVER}\n    args: [--hostile, lists-once]\n    startup_timeout_ms: 1000\n"
    ));
    let handle = session(dir.path(), script, None).await;
    assert!(
        handle.prompt().system.contains("mcp-hostile"),
        "listed once"
    );
    let first = tokio::time::timeout(PATIENCE, handle.submit("one", None).unwrap().finished())
        .await
        .expect("the turn after the list changed starts and ends");
    assert_eq!(first.final_text, "First.", "{first:?}");
    let second = tokio::time::timeout(PATIENCE, handle.submit("two", None).unwrap().finished())
        .await
        .expect("the next turn too");
    assert_eq!(second.final_text, "Second.", "{second:?}");
    assert!(
        handle.prompt().system.contains("mcp-hostile"),
        "its skill, from its last listing, stays"
    );
    handle.close().await.unwrap();
}
