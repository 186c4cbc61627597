//! `qilin lsp status` while `qilin serve` runs: it shows the language servers the server runs
//! (found through the server's token file, asked at `GET /api/lsp`) and says so; with
//! `--local`, or when no server of the workspace runs, it shows its own view and says that.

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::{Served, scripted_serve, started};

const AGENT: &str = "\
name: navigator
instructions: Find the definition.
tools: [lsp]
skills:
  available: []
";

/// A turn that asks pyright where `area_of` is defined, then an answer.
const SCRIPT: &str = "\
turns:
  - calls:
      - tool: lsp
        args: {operation: definition, path: app.py, line: 12, character: 11}
  - say: Found it.
";

/// pyright from `tests/lsp-servers`.
fn pyright() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/lsp-servers/node_modules/.bin/pyright-langserver");
    assert!(
        bin.exists(),
        "the test language servers are not installed: run `npm ci --prefix tests/lsp-servers --no-audit --no-fund`"
    );
    bin
}

/// The workspace: the agent, its script, the Python fixture, and pyright named by its path.
fn workspace_in(dir: &Path) -> PathBuf {
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(workspace.join(".qilin")).unwrap();
    std::fs::write(workspace.join("navigator.agent"), AGENT).unwrap();
    std::fs::write(workspace.join("navigator.yaml"), SCRIPT).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../qilin-lsp/tests/fixtures/python");
    for name in ["app.py", "shapes.py", "pyrightconfig.json"] {
        std::fs::copy(fixture.join(name), workspace.join(name)).unwrap();
    }
    std::fs::write(
        workspace.join(".qilin/lsp.yaml"),
        format!(
            "servers:\n  python:\n    command: {}\n    args: [--stdio]\n",
            pyright().display()
        ),
    )
    .unwrap();
    workspace.canonicalize().unwrap()
}

/// `qilin serve` on `workspace`, its token file in `dir/run`; with the sandbox unless
/// `sandboxed` is false (`--no-sandbox`).
fn serve(dir: &Path, workspace: &Path, sandboxed: bool) -> Served {
    let mut command = scripted_serve(dir, workspace, "navigator");
    if !sandboxed {
        command.arg("--no-sandbox");
    }
    started(command)
}

/// `qilin lsp status ARGS` for `workspace`, with the token files of `dir/run`: its stdout
/// and stderr.
fn status(dir: &Path, workspace: &Path, args: &[&str]) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["lsp", "status", "--workspace"])
        .arg(workspace)
        .args(args)
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn python_row(table: &str) -> &str {
    table
        .lines()
        .find(|line| line.starts_with("python "))
        .unwrap_or_else(|| panic!("no python row: {table}"))
}

/// Starts a session of the served agent whose turn's `lsp` call starts pyright, and waits
/// until the server's `GET /api/lsp` says pyright is ready: its status there.
async fn start_pyright(served: &Served) -> Value {
    let client = reqwest::Client::new();
    let session = served.create_session(&client).await;
    served
        .start_turn(&client, &session, "Where is area_of defined?")
        .await;
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (code, api) = served
            .send(client.get(format!("{}/api/lsp", served.base)))
            .await;
        assert_eq!(code, 200, "{api}");
        let python = api["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["language"] == "python")
            .cloned()
            .unwrap();
        if python["state"] == "ready" {
            return python;
        }
        assert!(Instant::now() < deadline, "pyright never got ready: {api}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_the_servers_a_running_serve_runs_and_says_which_view_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace_in(dir.path());

    // No server runs: this process's view, saying why.
    let (table, _) = status(dir.path(), &workspace, &[]);
    assert!(
        table.contains("this process's view: no running `qilin serve` of this workspace"),
        "{table}"
    );
    assert!(python_row(&table).contains(" stopped "), "{table}");

    let served = serve(dir.path(), &workspace, false);
    let api = start_pyright(&served).await;
    let pid = api["pid"].as_u64().unwrap();
    assert_eq!(api["sandboxed"], false, "{api}");

    // Another process sees the server's servers, and says whose they are.
    let (table, _) = status(dir.path(), &workspace, &[]);
    assert!(
        table.contains(&format!("as the running `qilin serve` at {}", served.base)),
        "{table}"
    );
    let row = python_row(&table);
    assert!(row.contains(" ready "), "{table}");
    assert!(row.contains(&format!(" {pid} ")), "{table}");
    // `--no-sandbox`: the server's language servers run unconfined, and the table says so.
    assert!(row.contains(" OFF "), "{table}");

    let (json_out, note) = status(dir.path(), &workspace, &["--json"]);
    let parsed: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(parsed["workspace"], workspace.display().to_string());
    assert!(note.contains("as the running `qilin serve`"), "{note}");

    // `--start --no-sandbox`: started here, unconfined, and the table says so.
    let (table, _) = status(dir.path(), &workspace, &["--start", "--no-sandbox"]);
    assert!(
        table.contains("this process's view: the servers were started here"),
        "{table}"
    );
    let row = python_row(&table);
    assert!(row.contains(" ready ") && row.contains(" OFF "), "{table}");

    // `--local`: this process's own view, where nothing runs.
    let (table, _) = status(dir.path(), &workspace, &["--local"]);
    assert!(table.contains("this process's view: `--local`"), "{table}");
    let row = python_row(&table);
    assert!(row.contains(" stopped "), "{table}");
    assert!(!row.contains(&format!(" {pid} ")), "{table}");
}

/// Under a sandboxed `qilin serve`, a session's language server runs through `qilin
/// sandbox-exec`, and both the API and `qilin lsp status` say it is sandboxed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_serve_runs_its_language_servers_sandboxed() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace_in(dir.path());
    let served = serve(dir.path(), &workspace, true);
    let api = start_pyright(&served).await;
    assert_eq!(
        (&api["sandboxed"], &api["network"]),
        (&json!(true), &json!(false)),
        "{api}"
    );
    let pid = api["pid"].as_u64().unwrap();
    // The process the status names is the sandbox helper, which runs the server.
    let command_line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let command_line = String::from_utf8_lossy(&command_line).replace('\0', " ");
    assert!(
        command_line.contains("sandbox-exec run --mode read-only"),
        "{command_line}"
    );
    assert!(
        command_line.contains("pyright-langserver"),
        "{command_line}"
    );

    let (table, _) = status(dir.path(), &workspace, &[]);
    let row = python_row(&table);
    assert!(row.contains(" ready "), "{table}");
    assert!(row.contains(" read-only "), "{table}");
}
