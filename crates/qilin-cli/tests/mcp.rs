//! MCP servers' tools in `qilin run`: a real MCP server process (the `qilin-mcp-test-server`
//! fixture, on `rmcp`, over stdio), the scripted model, code mode in worker processes. The
//! same tools reach the model directly and from `run_code` through one execution layer.

use qilin_protocol::{CallStatus, CallerKind, Event, EventBody, ToolResultEvent};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

const SERVER: &str = env!("CARGO_BIN_EXE_qilin-mcp-test-server");

fn qilin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the qilin binary runs")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn events_of(stdout: &[u8]) -> Vec<Event> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
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

/// A workspace with an agent using the test server (its `echo` also mounted directly) and a
/// scripted model answering with `script` (the turns, as YAML).
fn workspace(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Compute with the arith server's tools.\ncode_mode: true\n\
             mcp_servers:\n  arith:\n    command: {SERVER}\n    direct: [echo]\n"
        ),
    );
    write(&dir.path().join("script.yaml"), script);
    dir
}

fn run(dir: &Path, prompt: &str) -> (Output, Vec<Event>) {
    let agent = dir.join("calc.agent");
    let model = format!("scripted:{}", dir.join("script.yaml").display());
    let output = qilin(&[
        "run",
        "--workspace",
        dir.to_str().unwrap(),
        "--agent",
        agent.to_str().unwrap(),
        "--model",
        &model,
        "--json",
        prompt,
    ]);
    let events = events_of(&output.stdout);
    (output, events)
}

/// A session, in this process, of the workspace's `calc.agent` answered by `script`, with
/// `call_timeout` as each call's time limit.
async fn session(
    dir: &Path,
    script: &str,
    call_timeout: Option<std::time::Duration>,
) -> qilin_runtime::SessionHandle {
    use qilin_model::{Script, ScriptedProvider};
    use qilin_runtime::{CodeSandbox, ModelChoice, Runtime};
    use qilin_store::{EventStore, MemoryStore};
    use std::sync::Arc;

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
async fn stored(handle: &qilin_runtime::SessionHandle) -> Vec<Event> {
    use futures_util::StreamExt as _;
    handle.flush().await.unwrap();
    let head = handle.committed_head();
    handle
        .subscribe_from(0)
        .take(head as usize)
        .map(Result::unwrap)
        .collect()
        .await
}

#[test]
fn mcp_tools_are_called_directly_and_from_run_code_through_one_execution_layer() {
    let dir = workspace(
        r#"turns:
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
"#,
    );
    let (output, events) = run(dir.path(), "add 2 and 3");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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

#[test]
fn a_tool_that_is_not_mounted_directly_is_refused_to_the_model() {
    let dir = workspace(
        r#"turns:
  - calls:
      - tool: arith__add
        args: {a: 1, b: 2}
  - say: "It is code-mode-only."
"#,
    );
    let (output, events) = run(dir.path(), "add");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let add = results(&events)
        .into_iter()
        .find(|r| r.tool_name == "arith__add")
        .expect("the refused call has its result");
    assert_eq!(add.status, CallStatus::Error);
    let text = format!("{:?}", add.content);
    assert!(text.contains("run_code"), "{text}");
}

#[test]
fn a_server_killed_mid_call_fails_that_call_and_is_started_again_for_the_next() {
    let dir = workspace(
        r#"turns:
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
"#,
    );
    let (output, events) = run(dir.path(), "crash it");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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

#[test]
fn a_server_that_cannot_start_is_named_and_the_session_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("calc.agent"),
        "name: calc\ninstructions: Hi.\ncode_mode: true\nmcp_servers:\n  gone:\n    command: ./no-such-server\n",
    );
    write(
        &dir.path().join("script.yaml"),
        "turns:\n  - say: \"Hello.\"\n",
    );
    let (output, events) = run(dir.path(), "hello");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("MCP server `gone` could not be started"),
        "{stderr}"
    );
    assert!(!events.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qilin_mcp_serve_is_listed_and_called_by_the_official_sdks_client() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(&dir.path().join("notes.md"), "first line\nsecond line\n");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_qilin"));
    command.args(["mcp", "serve", "--workspace", dir.path().to_str().unwrap()]);
    let transport = TokioChildProcess::new(command).unwrap();
    let client = ().serve(transport).await.expect("the MCP handshake");

    let info = client.peer_info().expect("the server's info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("qilin")
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert!(
        names.contains(&"read") && names.contains(&"run_code"),
        "{names:?}"
    );

    let arguments = |value: serde_json::Value| value.as_object().cloned();
    let mut read = CallToolRequestParams::new("read");
    read.arguments = arguments(json!({"path": "notes.md"}));
    let result = client.call_tool(read).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(format!("{:?}", result.content).contains("second line"));

    let mut code = CallToolRequestParams::new("run_code");
    code.arguments = arguments(json!({
        "code": "r = sdk.tool.call(\"read\", {\"path\": \"notes.md\"})\nprint('read it')\n1 + 1"
    }));
    let result = client.call_tool(code).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = format!("{:?}", result.content);
    assert!(text.contains("read it"), "{text}");

    let mut wrong = CallToolRequestParams::new("read");
    wrong.arguments = arguments(json!({"no_such_argument": 1}));
    let result = client.call_tool(wrong).await.unwrap();
    assert_eq!(result.is_error, Some(true), "bad arguments fail the call");

    client.cancel().await.unwrap();
}

/// `qilin` with its answers about trusted workspaces kept in `data` (its `XDG_DATA_HOME`).
fn qilin_in(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", data)
        .output()
        .expect("the qilin binary runs")
}

/// A workspace's `.qilin/mcp.yaml` declaring `arith` (the test server, started through `sh`
/// so that a start leaves the file `started` behind) and `gone` (a program that does not
/// exist); returns the path of `started`.
fn declare_servers(dir: &Path) -> std::path::PathBuf {
    let started = dir.join("started");
    write(
        &dir.join(".qilin/mcp.yaml"),
        &format!(
            "mcp_servers:\n  arith:\n    command: sh\n    args: [-c, 'touch {} && exec {SERVER}']\n    direct: [echo]\n  gone:\n    command: ./no-such-server\n",
            started.display()
        ),
    );
    started
}

#[test]
fn qilin_mcp_lists_servers_their_tools_and_the_generated_skill() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    declare_servers(dir.path());
    let workspace = dir.path().to_str().unwrap();

    let list = qilin_in(
        data.path(),
        &["mcp", "list", "--workspace", workspace, "--trust"],
    );
    let text = String::from_utf8_lossy(&list.stdout);
    assert_eq!(
        list.status.code(),
        Some(1),
        "a server is unavailable: {text}"
    );
    assert!(text.contains("arith  8 tool(s)"), "{text}");
    assert!(
        text.contains("gone  unavailable") && text.contains("could not be run"),
        "{text}"
    );

    let tools = qilin_in(
        data.path(),
        &["mcp", "tools", "arith", "--workspace", workspace],
    );
    let text = String::from_utf8_lossy(&tools.stdout);
    assert!(text.contains("arith__add  [code only, ReadOnly]"), "{text}");
    assert!(
        text.contains("arith__echo  [direct + code, ReadOnly]"),
        "{text}"
    );

    let skill = qilin_in(
        data.path(),
        &["mcp", "skill", "arith", "--workspace", workspace],
    );
    let text = String::from_utf8_lossy(&skill.stdout);
    assert!(text.starts_with("---\nname: mcp-arith\n"), "{text}");
    assert!(
        text.contains("Arithmetic and small utilities for Qilin's tests."),
        "the server's instructions: {text}"
    );
    assert!(
        text.contains("- `sum` (number): a + b."),
        "the result shape: {text}"
    );

    let unknown = qilin_in(
        data.path(),
        &["mcp", "tools", "nope", "--workspace", workspace],
    );
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("no MCP server `nope`; the servers declared are `arith`, `gone`"),
        "{stderr}"
    );
}

/// A cloned repository's `.qilin/mcp.yaml` runs nothing when looked at: `qilin mcp list` and
/// `qilin mcp tools` without a terminal and without `--trust` show its servers as declared and
/// start none, saying how to trust them. Once trusted (`qilin mcp trust`), they start without
/// asking, until the file changes.
#[test]
fn a_repositorys_servers_start_only_once_its_file_is_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let started = declare_servers(dir.path());
    let workspace = dir.path().to_str().unwrap();

    let list = qilin_in(data.path(), &["mcp", "list", "--workspace", workspace]);
    let text = String::from_utf8_lossy(&list.stdout);
    let stderr = String::from_utf8_lossy(&list.stderr);
    assert_eq!(list.status.code(), Some(1), "{text}{stderr}");
    assert!(
        text.contains("arith  unavailable")
            && text.contains("not started: its file is not trusted"),
        "{text}"
    );
    assert!(
        stderr.contains("declares MCP servers that would run on this machine")
            && stderr.contains(&format!(
                "qilin mcp trust --workspace {}",
                dir.path().canonicalize().unwrap().display()
            ))
            && stderr.contains("--trust"),
        "{stderr}"
    );
    let tools = qilin_in(
        data.path(),
        &["mcp", "tools", "arith", "--workspace", workspace],
    );
    assert!(!tools.status.success());
    assert!(
        String::from_utf8_lossy(&tools.stderr).contains("are not trusted yet"),
        "{}",
        String::from_utf8_lossy(&tools.stderr)
    );
    assert!(
        !started.exists(),
        "nothing the repository declares was started"
    );

    let trust = qilin_in(data.path(), &["mcp", "trust", "--workspace", workspace]);
    let text = String::from_utf8_lossy(&trust.stdout);
    assert!(trust.status.success(), "{text}");
    assert!(
        text.contains("Trusted the MCP servers of") && text.contains("arith: sh -c"),
        "{text}"
    );
    assert!(!started.exists(), "trusting starts nothing");
    let tools = qilin_in(
        data.path(),
        &["mcp", "tools", "arith", "--workspace", workspace],
    );
    assert!(
        String::from_utf8_lossy(&tools.stdout).contains("arith__add"),
        "{}",
        String::from_utf8_lossy(&tools.stderr)
    );
    assert!(started.exists());

    // A changed file is asked about again.
    std::fs::remove_file(&started).unwrap();
    let yaml = dir.path().join(".qilin/mcp.yaml");
    let changed = format!("{}# changed\n", std::fs::read_to_string(&yaml).unwrap());
    std::fs::write(&yaml, changed).unwrap();
    let tools = qilin_in(
        data.path(),
        &["mcp", "tools", "arith", "--workspace", workspace],
    );
    let stderr = String::from_utf8_lossy(&tools.stderr);
    assert!(!tools.status.success(), "{stderr}");
    assert!(
        stderr.contains("it changed since its servers were trusted"),
        "{stderr}"
    );
    assert!(!started.exists());
}

/// `qilin run` with an agent using a repository's servers refuses without a terminal or
/// `--trust`, starting nothing; with `--trust` it trusts them (remembered) and runs.
#[test]
fn qilin_run_starts_a_repositorys_servers_only_once_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let started = declare_servers(dir.path());
    write(
        &dir.path().join("calc.agent"),
        "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers: [arith]\n",
    );
    write(
        &dir.path().join("script.yaml"),
        "turns:\n  - say: \"Hello.\"\n",
    );
    let model = format!("scripted:{}", dir.path().join("script.yaml").display());
    let agent = dir.path().join("calc.agent");
    let args = |trust: bool| {
        let mut args = vec![
            "run",
            "--workspace",
            dir.path().to_str().unwrap(),
            "--agent",
            agent.to_str().unwrap(),
            "--model",
            &model,
            "--json",
        ];
        if trust {
            args.push("--trust");
        }
        args.push("hello");
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let run = |trust: bool| {
        let args = args(trust);
        qilin_in(
            data.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    };

    let refused = run(false);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("are not trusted yet") && stderr.contains("arith: sh -c"),
        "{stderr}"
    );
    assert!(!started.exists(), "nothing was started");

    let trusted = run(true);
    let stderr = String::from_utf8_lossy(&trusted.stderr);
    assert!(trusted.status.success(), "{stderr}");
    assert!(stderr.contains("Trusted the MCP servers of"), "{stderr}");
    assert!(started.exists());
    let again = run(false);
    assert!(
        again.status.success(),
        "remembered: {}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// The test server serving streamable HTTP on 127.0.0.1; ended when dropped.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start() -> HttpServer {
        use std::io::BufRead as _;
        let mut child = Command::new(SERVER)
            .arg("--http")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        HttpServer {
            child,
            url: url.trim().to_string(),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_streamable_http_server_is_called_from_run_code_with_a_token_from_the_environment() {
    let server = HttpServer::start();
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers:\n  remote:\n    url: {}\n    headers:\n      Authorization: \"Bearer ${{QILIN_TEST_MCP_TOKEN}}\"\n",
            server.url
        ),
    );
    write(
        &dir.path().join("script.yaml"),
        r#"turns:
  - calls:
      - tool: run_code
        args:
          code: |
            s = sdk.tool.call("remote__add", {"a": 1.5, "b": 2})
            who = sdk.tool.call("remote__auth", {})
            {"sum": s["sum"], "auth": who}
  - say: "Done."
"#,
    );
    let agent = dir.path().join("calc.agent");
    let model = format!("scripted:{}", dir.path().join("script.yaml").display());
    let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["run", "--agent", agent.to_str().unwrap(), "--model", &model])
        .current_dir(dir.path())
        .args(["--json", "add"])
        .env("QILIN_TEST_MCP_TOKEN", "s3cret")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events_of(&output.stdout);
    let run_code = results(&events)
        .into_iter()
        .find(|r| r.tool_name == "run_code")
        .unwrap();
    assert_eq!(run_code.status, CallStatus::Ok, "{:?}", run_code.content);
    assert_eq!(
        run_code.output.as_ref().unwrap()["value"],
        json!({"sum": 3.5, "auth": "Bearer s3cret"})
    );

    // Without the variable, the declaration names what is missing.
    let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["run", "--agent", agent.to_str().unwrap(), "--model", &model])
        .current_dir(dir.path())
        .args(["--json", "add"])
        .env_remove("QILIN_TEST_MCP_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("needs the environment variable `QILIN_TEST_MCP_TOKEN`"),
        "{stderr}"
    );
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
    let dir = workspace(script);
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
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Compute.\nmcp_servers:\n  arith:\n    command: {SERVER}\n    direct: [pid, sleep]\n"
        ),
    );
    let handle = session(
        dir.path(),
        script,
        Some(std::time::Duration::from_millis(700)),
    )
    .await;
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
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    let marker = dir.path().join("failed-once");
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers:\n  flaky:\n    command: {SERVER}\n    env: {{FAIL_FIRST_START: {}}}\n",
            marker.display()
        ),
    );
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
    tokio::time::sleep(qilin_mcp::retry_delay(1) + std::time::Duration::from_millis(200)).await;
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

#[test]
fn qilin_check_lints_the_skills_generated_from_the_servers_last_listing() {
    let dir = workspace("turns:\n  - say: \"Hello.\"\n");
    let (output, _) = run(dir.path(), "hello");
    assert_eq!(output.status.code(), Some(0));
    assert!(
        dir.path().join(".qilin/mcp/arith.json").is_file(),
        "the session kept the server's listing"
    );
    let check = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .arg("check")
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{text}");
    let listed = qilin(&[
        "skills",
        "list",
        "--workspace",
        dir.path().to_str().unwrap(),
    ]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains("MCP server `arith` (qilin-mcp-test-server), 8 tools: add, echo"),
        "{listed}"
    );
    // The server's 8 tools are checked with the built-ins, and its skill with the others.
    assert!(text.starts_with("ok: checked "), "{text}");
    let counted = |what: &str| -> usize {
        let at = text.find(what).unwrap();
        text[..at]
            .split_whitespace()
            .last()
            .unwrap()
            .parse()
            .unwrap()
    };
    let plain = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(plain.path().join(".qilin")).unwrap();
    let without = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .arg("check")
        .arg(plain.path())
        .output()
        .unwrap();
    let without = String::from_utf8_lossy(&without.stdout).to_string();
    let counted_without = |what: &str| -> usize {
        let at = without.find(what).unwrap();
        without[..at]
            .split_whitespace()
            .last()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        counted(" tools"),
        counted_without(" tools") + 8,
        "{text} / {without}"
    );
    assert_eq!(
        counted(" skill"),
        counted_without(" skill") + 1,
        "{text} / {without}"
    );
}

#[test]
fn review_rules_match_the_effect_the_server_declares() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers:\n  arith:\n    command: {SERVER}\n\
             review:\n  default: allow\n  rules:\n    - tool: \"arith__*\"\n      effect: additive\n      decision: deny\n      reason: no changes today\n"
        ),
    );
    write(
        &dir.path().join("script.yaml"),
        r#"turns:
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
"#,
    );
    let (output, events) = run(dir.path(), "try");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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

#[test]
fn a_long_mcp_result_is_capped_for_the_model_and_spilled_whole() {
    let dir = workspace(
        r#"turns:
  - calls:
      - tool: run_code
        args:
          code: |
            out = sdk.tool.call("arith__echo", {"text": "x" * 40000})
            len(out)
  - say: "Done."
"#,
    );
    let (output, events) = run(dir.path(), "long");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    use futures_util::StreamExt as _;

    let script = r#"turns:
  - calls:
      - tool: arith__sleep
        args: {ms: 60000}
  - say: "Never reached."
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    let log = dir.path().join("cancel.log");
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Compute.\nmcp_servers:\n  arith:\n    command: {SERVER}\n    direct: [sleep]\n    env:\n      CANCEL_LOG: {}\n",
            log.display()
        ),
    );
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
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(handle.interrupt());
    let summary = turn.finished().await;
    assert_eq!(
        summary.reason,
        qilin_protocol::FinishReason::Interrupted,
        "{summary:?}"
    );
    let mut noted = String::new();
    for _ in 0..50 {
        noted = std::fs::read_to_string(&log).unwrap_or_default();
        if !noted.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
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

/// An MCP client that counts the `notifications/tools/list_changed` it hears.
#[derive(Clone, Default)]
struct ListWatcher {
    changed: Arc<tokio::sync::Notify>,
}

impl rmcp::ClientHandler for ListWatcher {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.changed.notify_one();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qilin_mcp_serve_adds_a_server_that_comes_up_late_and_tells_the_host() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    let marker = dir.path().join("failed-once");
    let agent = dir.path().join("calc.agent");
    write(
        &agent,
        &format!(
            "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers:\n  flaky:\n    command: {SERVER}\n    env: {{FAIL_FIRST_START: {}}}\n    direct: [add]\n",
            marker.display()
        ),
    );
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_qilin"));
    command.args(["mcp", "serve", "--agent", agent.to_str().unwrap()]);
    command.stderr(std::process::Stdio::null());
    let watcher = ListWatcher::default();
    let changed = Arc::clone(&watcher.changed);
    let client = watcher
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .expect("the MCP handshake");
    assert!(marker.exists(), "the server's first start failed");
    let names = |tools: &[rmcp::model::Tool]| -> Vec<String> {
        tools.iter().map(|tool| tool.name.to_string()).collect()
    };
    let before = names(&client.list_all_tools().await.unwrap());
    assert!(
        before.contains(&"run_code".to_string()) && !before.contains(&"flaky__add".to_string()),
        "{before:?}"
    );

    // Past the wait after its failed start, the server is tried again and comes up.
    tokio::time::timeout(std::time::Duration::from_secs(20), changed.notified())
        .await
        .expect("the host is told the tool list changed");
    let after = names(&client.list_all_tools().await.unwrap());
    assert!(after.contains(&"flaky__add".to_string()), "{after:?}");
    let mut add = CallToolRequestParams::new("flaky__add");
    add.arguments = json!({"a": 20, "b": 22}).as_object().cloned();
    let result = client.call_tool(add).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(format!("{result:?}").contains("42"), "{result:?}");
    client.cancel().await.unwrap();
}

/// The longest a test waits on something that must not hang, before it calls it hung.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// The fixture as a hostile server (`--hostile MODE`), with a startup timeout of `startup_ms`.
fn hostile(mode: &str, startup_ms: u64, workspace: &Path) -> qilin_skill::McpServer {
    qilin_skill::McpServer {
        name: "hostile".to_string(),
        transport: qilin_skill::McpTransport::Stdio {
            command: SERVER.to_string(),
            args: vec!["--hostile".to_string(), mode.to_string()],
            env: Default::default(),
            cwd: workspace.to_path_buf(),
        },
        direct: Vec::new(),
        startup_timeout: std::time::Duration::from_millis(startup_ms),
        declared_in: workspace.join("a.agent"),
        workspace: workspace.to_path_buf(),
    }
}

/// A server that completes the handshake and then never answers `tools/list` fails its listing
/// at its startup timeout (the listing is part of starting), and is stopped and left alone a
/// while, so nothing that lists it hangs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_lists_its_tools_fails_the_listing_at_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let client = qilin_mcp::McpClient::connect(hostile("never-lists", 1500, dir.path()))
        .await
        .expect("the handshake completes");
    let listed = tokio::time::timeout(PATIENCE, client.list())
        .await
        .expect("the listing ends");
    let error = listed.unwrap_err().to_string();
    assert!(
        error.contains("did not list its tools within 1500 ms")
            && error.contains("startup_timeout_ms")
            && error.contains("started again in 1 s"),
        "{error}"
    );
    let down = client.ensure_started().await.unwrap_err();
    assert!(
        matches!(down, qilin_mcp::McpError::Down { .. }),
        "stopped and left alone: {down:?}"
    );
    client.close().await;
}

/// A server whose `tools/list` always offers another page is read up to the bound of pages,
/// then fails its listing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_pages_forever_fails_the_listing_after_the_last_page_read() {
    let dir = tempfile::tempdir().unwrap();
    let client = qilin_mcp::McpClient::connect(hostile("pages-forever", 30_000, dir.path()))
        .await
        .expect("the handshake completes");
    let listed = tokio::time::timeout(PATIENCE, client.list())
        .await
        .expect("the listing ends");
    let error = listed.unwrap_err().to_string();
    assert!(
        error.contains(&format!(
            "more than {} pages of tools",
            qilin_mcp::MAX_TOOL_PAGES
        )),
        "{error}"
    );
    client.close().await;
}

/// An answer over the limit of one message (which the line codec drops) fails its call at
/// once, naming the limit, whether its `id` comes before the result or after it; the
/// connection stays usable for the next call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_message_limit_fails_its_call_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let client = qilin_mcp::McpClient::connect(hostile("huge-answers", 30_000, dir.path()))
        .await
        .expect("the handshake completes");
    let cancel = tokio_util::sync::CancellationToken::new();
    for tool in ["big_id_first", "big_id_last"] {
        // No deadline: before, such a call waited for the call's time limit (20 minutes).
        let called = tokio::time::timeout(
            PATIENCE,
            client.call(tool, serde_json::Map::new(), &cancel, None),
        )
        .await
        .expect("the call ends without waiting for its time limit");
        let error = called.unwrap_err().to_string();
        assert!(
            error.contains("the call of `")
                && error.contains(
                    "larger than the 16 MiB Qilin takes from an MCP server in one message"
                ),
            "{tool}: {error}"
        );
    }
    let small = client
        .call("small", serde_json::Map::new(), &cancel, None)
        .await
        .expect("the connection goes on");
    assert!(format!("{small:?}").contains("small answered"), "{small:?}");
    client.close().await;
}

/// A session whose server says its tool list changed and then never lists again is not
/// wedged: the next turn starts once the listing's deadline has passed, with the tools of the
/// server's last listing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_after_its_tool_list_changed_does_not_wedge_the_session() {
    let script = "turns:\n  - say: \"First.\"\n  - say: \"Second.\"\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Talk.\ncode_mode: true\nmcp_servers:\n  hostile:\n    command: {SERVER}\n    args: [--hostile, lists-once]\n    startup_timeout_ms: 1000\n"
        ),
    );
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

/// `qilin run` with a server that never lists its tools starts anyway, once the listing's
/// deadline has passed, and says why the server's tools are missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qilin_run_starts_past_a_server_that_never_lists_its_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Talk.\ncode_mode: true\nmcp_servers:\n  hostile:\n    command: {SERVER}\n    args: [--hostile, never-lists]\n    startup_timeout_ms: 1000\n"
        ),
    );
    write(
        &dir.path().join("script.yaml"),
        "turns:\n  - say: \"Hello.\"\n",
    );
    let model = format!("scripted:{}", dir.path().join("script.yaml").display());
    let running = tokio::process::Command::new(env!("CARGO_BIN_EXE_qilin"))
        .arg("run")
        .arg("--workspace")
        .arg(dir.path())
        .arg("--agent")
        .arg(dir.path().join("calc.agent"))
        .args(["--model", &model, "--json", "hello"])
        .env("NO_COLOR", "1")
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(PATIENCE, running)
        .await
        .expect("qilin run starts and ends")
        .unwrap();
    let events = events_of(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("did not list its tools within 1000 ms"),
        "{stderr}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.body, EventBody::TurnFinished { .. })),
        "{events:?}"
    );
}
