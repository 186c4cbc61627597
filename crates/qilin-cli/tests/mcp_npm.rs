//! `qilin run` against real MCP servers from the npm registry (`server-filesystem` and
//! `server-everything`, installed in `tests/mcp-servers` by `npm ci`, which `.ci/run` and
//! `scripts/test` do), over stdio and streamable HTTP, with the scripted model; and
//! `qilin mcp serve` driven by the official TypeScript SDK's client
//! (`tests/mcp-servers/serve-client.mjs`).

use qilin_protocol::{CallStatus, Event, EventBody, ToolResultEvent};
use serde_json::json;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The installed servers' folder; a clear failure when they are not installed.
fn servers() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp-servers/node_modules/@modelcontextprotocol")
        .canonicalize()
        .unwrap_or_default();
    assert!(
        dir.join("server-everything/dist/index.js").is_file()
            && dir.join("server-filesystem/dist/index.js").is_file(),
        "the MCP servers from npm are not installed: run `npm ci --prefix tests/mcp-servers`"
    );
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs `agent` (YAML) in a fresh workspace holding `notes.md`, answered by `script`.
fn run(agent: &str, script: &str) -> (Output, Vec<Event>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(&dir.path().join("notes.md"), "first line\nsecond line\n");
    write(&dir.path().join("a.agent"), agent);
    write(&dir.path().join("script.yaml"), script);
    let model = format!("scripted:{}", dir.path().join("script.yaml").display());
    let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["run", "--agent"])
        .arg(dir.path().join("a.agent"))
        .current_dir(dir.path())
        .args(["--model", &model, "--json", "go"])
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    (output, events)
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

#[test]
fn the_filesystem_and_everything_servers_are_called_from_run_code_over_stdio() {
    let servers = servers();
    let agent = format!(
        "name: a\ninstructions: Hi.\ncode_mode: true\nmcp_servers:\n  files:\n    command: node\n    args: [{fs}, \".\"]\n  every:\n    command: node\n    args: [{every}, stdio]\n",
        fs = servers.join("server-filesystem/dist/index.js").display(),
        every = servers.join("server-everything/dist/index.js").display(),
    );
    let script = r#"turns:
  - calls:
      - tool: run_code
        args:
          code: |
            text = sdk.tool.call("files__read_text_file", {"path": "notes.md"})
            listing = sdk.tool.call("files__list_directory", {"path": "."})
            try:
                sdk.tool.call("files__read_text_file", {"path": "missing.md"})
                missing = None
            except ToolError as e:
                missing = sdk.tool.error(e)["code"]
            s = sdk.tool.call("every__get-sum", {"a": 2, "b": 3})
            weather = sdk.tool.call("every__get-structured-content", {"location": "New York"})
            {"text": text["content"], "listed": "[FILE] notes.md" in listing["content"],
             "missing": missing, "sum": s, "structured": sorted(weather.keys())}
  - say: "Done."
"#;
    let (output, events) = run(&agent, script);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = results(&events);
    let run_code = results.iter().find(|r| r.tool_name == "run_code").unwrap();
    assert_eq!(run_code.status, CallStatus::Ok, "{:?}", run_code.content);
    assert_eq!(
        run_code.output.as_ref().unwrap()["value"],
        json!({
            "text": "first line\nsecond line\n",
            "listed": true,
            "missing": "TOOL_FAILED",
            "sum": "The sum of 2 and 3 is 5.",
            "structured": ["conditions", "humidity", "temperature"]
        })
    );
    let nested: Vec<&str> = results
        .iter()
        .filter(|r| r.parent_call_id.as_deref() == Some(run_code.call_id.as_str()))
        .map(|r| r.tool_name.as_str())
        .collect();
    assert_eq!(
        nested,
        [
            "files__read_text_file",
            "files__list_directory",
            "files__read_text_file",
            "every__get-sum",
            "every__get-structured-content"
        ]
    );
}

/// The everything server over streamable HTTP on a free port; ended when dropped.
struct HttpEverything {
    child: std::process::Child,
    port: u16,
}

impl HttpEverything {
    fn start(servers: &Path) -> HttpEverything {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("node")
            .arg(servers.join("server-everything/dist/index.js"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs");
        let stderr = child.stderr.take().unwrap();
        let mut lines = std::io::BufReader::new(stderr).lines();
        for line in lines.by_ref() {
            if line.unwrap().contains("listening on port") {
                break;
            }
        }
        // Keep reading its stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        HttpEverything { child, port }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_everything_server_is_called_over_streamable_http() {
    let servers = servers();
    let server = HttpEverything::start(&servers);
    let agent = format!(
        "name: a\ninstructions: Hi.\ncode_mode: true\nmcp_servers:\n  every:\n    url: http://127.0.0.1:{}/mcp\n    direct: [echo]\n",
        server.port
    );
    let script = r#"turns:
  - calls:
      - tool: every__echo
        args: {message: "direct"}
  - calls:
      - tool: run_code
        args:
          code: |
            s = sdk.tool.call("every__get-sum", {"a": 40, "b": 2})
            try:
                sdk.tool.call("every__get-sum", {"a": "forty"})
                invalid = None
            except ToolError as e:
                invalid = sdk.tool.error(e)["code"]
            {"sum": s, "invalid": invalid}
  - say: "Done."
"#;
    let (output, events) = run(&agent, script);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = results(&events);
    let echo = results
        .iter()
        .find(|r| r.tool_name == "every__echo")
        .unwrap();
    assert_eq!(echo.status, CallStatus::Ok, "{:?}", echo.content);
    assert_eq!(echo.output, Some(json!("Echo: direct")));
    let run_code = results.iter().find(|r| r.tool_name == "run_code").unwrap();
    assert_eq!(
        run_code.output.as_ref().unwrap()["value"],
        json!({"sum": "The sum of 40 and 2 is 42.", "invalid": "INVALID_ARGUMENTS"}),
        "{:?}",
        run_code.content
    );
}

#[test]
fn qilin_mcp_serve_is_driven_by_the_official_typescript_sdks_client() {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers/serve-client.mjs");
    assert!(
        servers().join("sdk/package.json").is_file(),
        "the MCP SDK from npm is not installed: run `npm ci --prefix tests/mcp-servers`"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    write(&dir.path().join("notes.md"), "first line\nsecond line\n");
    let output = Command::new("node")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_qilin"))
        .arg(dir.path())
        .output()
        .expect("node runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let seen: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));

    assert_eq!(seen["server"], "qilin");
    assert!(
        seen["instructions"]
            .as_str()
            .is_some_and(|text| text.contains("<available-skills>")),
        "the host's model is given the session's prompt: {}",
        seen["instructions"]
    );
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|name| name.as_str())
        .collect();
    for expected in ["read", "write", "skill", "run_code"] {
        assert!(tools.contains(&expected), "{expected} in {tools:?}");
    }
    assert_eq!(seen["described"], true, "every tool has a description");

    let read = &seen["read"];
    assert_eq!(read["isError"], false, "{read}");
    assert!(
        read["text"].as_str().unwrap().contains("second line"),
        "{read}"
    );
    assert_eq!(read["structured"]["total_lines"], 2, "{read}");

    let code = &seen["code"];
    assert_eq!(code["isError"], false, "{code}");
    assert_eq!(code["structured"]["value"]["lines"], 2, "{code}");
    assert!(
        code["structured"]["value"]["missing"].is_string(),
        "the failed call raised a ToolError the code caught: {code}"
    );
    assert_eq!(code["structured"]["tool_calls"], 2, "{code}");
    assert_eq!(code["structured"]["printed"], "read from code\n", "{code}");

    let invalid = &seen["invalid"];
    assert_eq!(invalid["isError"], true, "{invalid}");
    assert!(
        invalid["text"]
            .as_str()
            .unwrap()
            .contains("no_such_argument"),
        "{invalid}"
    );
    let refused = &seen["refused"];
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["text"].as_str().unwrap().contains("`.qilin/`"),
        "{refused}"
    );
    assert!(
        !dir.path().join(".qilin/planted.md").exists(),
        "the refused write changed nothing"
    );
    let unknown = &seen["unknown"];
    assert_eq!(unknown["isError"], true, "{unknown}");
    assert!(
        unknown["text"].as_str().unwrap().contains("no_such_tool"),
        "{unknown}"
    );
}
