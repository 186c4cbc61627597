//! The `qilin` command and MCP: `qilin mcp list|tools|skill|trust|serve`, and what `qilin run`
//! and `qilin check` say about an agent's servers, against a real MCP server process (the
//! `qilin-mcp-test-server` fixture of the qilin-mcp package, where the behaviour of MCP
//! servers' tools in sessions is tested) and the scripted model.

use qilin_protocol::{Event, EventBody};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, OnceLock};

/// The path of the MCP test server. It is a binary of the qilin-mcp package, which cargo builds
/// for the workspace's tests but names only to that package's, so it is asked of cargo here
/// (once per test process) with the very build `cargo nextest run --workspace` made: a no-op
/// then, and from a fresh clone `cargo nextest run -p qilin-cli` still works.
fn server() -> &'static str {
    static SERVER: OnceLock<String> = OnceLock::new();
    SERVER.get_or_init(|| {
        let built = Command::new(env!("CARGO"))
            .args([
                "test",
                "--no-run",
                "--workspace",
                "--locked",
                "--message-format=json-render-diagnostics",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stderr(Stdio::inherit())
            .output()
            .expect("cargo runs");
        assert!(
            built.status.success(),
            "cargo could not build the MCP test server"
        );
        String::from_utf8_lossy(&built.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .find(|message| {
                // The binary itself, not its unit tests' harness.
                message["reason"] == "compiler-artifact"
                    && message["target"]["name"] == "qilin-mcp-test-server"
                    && message["profile"]["test"] == false
            })
            .and_then(|artifact| artifact["executable"].as_str().map(str::to_string))
            .expect("cargo names the test server's executable")
    })
}

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

/// A workspace with an agent using the test server (its `echo` also mounted directly) and a
/// scripted model answering with `script` (the turns, as YAML).
fn workspace(script: &str) -> tempfile::TempDir {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Compute with the arith server's tools.\ncode_mode: true\n\
             mcp_servers:\n  arith:\n    command: {server}\n    direct: [echo]\n"
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
    let server = server();
    let started = dir.join("started");
    write(
        &dir.join(".qilin/mcp.yaml"),
        &format!(
            "mcp_servers:\n  arith:\n    command: sh\n    args: [-c, 'touch {} && exec {server}']\n    direct: [echo]\n  gone:\n    command: ./no-such-server\n",
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

    let server = server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    let marker = dir.path().join("failed-once");
    let agent = dir.path().join("calc.agent");
    write(
        &agent,
        &format!(
            "name: calc\ninstructions: Compute.\ncode_mode: true\nmcp_servers:\n  flaky:\n    command: {server}\n    env: {{FAIL_FIRST_START: {}}}\n    direct: [add]\n",
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

/// `qilin run` with a server that never lists its tools starts anyway, once the listing's
/// deadline has passed, and says why the server's tools are missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qilin_run_starts_past_a_server_that_never_lists_its_tools() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(
        &dir.path().join("calc.agent"),
        &format!(
            "name: calc\ninstructions: Talk.\ncode_mode: true\nmcp_servers:\n  hostile:\n    command: {server}\n    args: [--hostile, never-lists]\n    startup_timeout_ms: 1000\n"
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
