//! Language servers run inside the sandbox: a small real server (`sandbox/probe_server.py`,
//! configured in the workspace's `.qilin/lsp.yaml`) tries to write into the workspace and to
//! connect to a listener on 127.0.0.1; the sandbox refuses both unless the server is given
//! `network: true`, and its private cache folder stays writable.

use qilin_lsp::{LspOptions, LspQuery, LspWorkspace, ServerSandbox};
use qilin_protocol::lsp::{LspOperation, LspServerState, LspServerStatus};
use qilin_sandbox::{Sandbox, SandboxError, SandboxHelper, SandboxMode, SandboxSettings};
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn helper() -> SandboxHelper {
    SandboxHelper::new(
        env!("CARGO_BIN_EXE_qilin-lsp-sandbox-exec"),
        Vec::<String>::new(),
    )
}

/// Whether this machine can confine a command; when it cannot, the test says so and passes
/// (what is confined cannot be checked there).
fn machine_can_sandbox() -> bool {
    let settings = SandboxSettings {
        mode: SandboxMode::ReadOnly,
        ..SandboxSettings::default()
    };
    match Sandbox::start(settings, helper()) {
        Ok(_) => true,
        Err(SandboxError::Unsupported { missing, .. }) => {
            eprintln!(
                "note: this machine cannot sandbox commands ({}); nothing to check",
                missing.join("; ")
            );
            false
        }
        Err(err) => panic!("{err}"),
    }
}

/// The Python interpreter itself (not a shim that may need to write under `$HOME`).
fn python() -> PathBuf {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// A workspace whose `.qilin/lsp.yaml` runs the probe server for `*.probe` files, told to
/// connect to `port`, with `network` when given.
fn workspace(port: u16, network: Option<bool>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox/probe_server.py");
    let network = network
        .map(|on| format!("    network: {on}\n"))
        .unwrap_or_default();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    std::fs::write(
        dir.path().join(".qilin/lsp.yaml"),
        format!(
            "servers:\n  probe:\n    command: {}\n    args: ['{}', '{port}']\n    patterns: ['*.probe']\n{network}",
            python().display(),
            script.display()
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("main.probe"), "hello\n").unwrap();
    dir
}

fn options(sandbox: ServerSandbox) -> LspOptions {
    LspOptions {
        request_timeout: Duration::from_secs(30),
        start_timeout: Duration::from_secs(30),
        sandbox,
        ..LspOptions::default()
    }
}

/// Asks the probe server for a hover (which makes it try) and returns what it reports.
async fn probe(ws: &LspWorkspace) -> String {
    let output = ws
        .run(&LspQuery {
            operation: LspOperation::Hover,
            path: Some("main.probe".into()),
            line: Some(1),
            character: Some(1),
            query: None,
        })
        .await
        .unwrap();
    match output.hover {
        Some(report) => report,
        None => panic!("the probe server gave no report: {output:#?}"),
    }
}

fn probe_status(ws: &LspWorkspace) -> LspServerStatus {
    ws.status()
        .unwrap()
        .servers
        .into_iter()
        .find(|s| s.language == "probe")
        .unwrap()
}

/// A listener on 127.0.0.1 and whether a connection reached it (with the server's greeting).
fn listener() -> TcpListener {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    listener
}

fn greeting(listener: &TcpListener) -> Option<String> {
    let (mut conn, _) = listener.accept().ok()?;
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut text = String::new();
    conn.read_to_string(&mut text).unwrap();
    Some(text)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_server_cannot_write_the_workspace_nor_reach_the_network() {
    if !machine_can_sandbox() {
        return;
    }
    let listener = listener();
    let port = listener.local_addr().unwrap().port();
    let dir = workspace(port, None);
    let ws = LspWorkspace::new(dir.path(), options(ServerSandbox::Confined(helper())));
    let before = probe_status(&ws);
    assert!(before.sandboxed && !before.network, "{before:?}");

    let report = probe(&ws).await;
    assert!(
        report.contains("workspace write: refused"),
        "the server wrote into the workspace: {report}"
    );
    assert!(
        !dir.path().join("written-by-server.txt").exists(),
        "{report}"
    );
    assert!(
        report.contains("connect: refused"),
        "the server reached 127.0.0.1:{port}: {report}"
    );
    assert_eq!(greeting(&listener), None, "{report}");
    // Its caches go to a private folder it may write.
    assert!(report.contains("cache write: ok"), "{report}");

    let running = probe_status(&ws);
    assert_eq!(running.state, LspServerState::Ready);
    assert!(running.sandboxed && !running.network, "{running:?}");
    assert!(running.pid.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn network_true_lets_a_sandboxed_server_connect_but_not_write() {
    if !machine_can_sandbox() {
        return;
    }
    let listener = listener();
    let port = listener.local_addr().unwrap().port();
    let dir = workspace(port, Some(true));
    let ws = LspWorkspace::new(dir.path(), options(ServerSandbox::Confined(helper())));

    let report = probe(&ws).await;
    assert!(report.contains("connect: ok"), "{report}");
    assert_eq!(
        greeting(&listener).as_deref(),
        Some("hello from the language server\n"),
        "{report}"
    );
    assert!(report.contains("workspace write: refused"), "{report}");
    assert!(!dir.path().join("written-by-server.txt").exists());
    let status = probe_status(&ws);
    assert!(status.sandboxed && status.network, "{status:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_sandbox_off_a_server_runs_unconfined_and_status_says_so() {
    let listener = listener();
    let port = listener.local_addr().unwrap().port();
    let dir = workspace(port, Some(false));
    let ws = LspWorkspace::new(dir.path(), options(ServerSandbox::Off));
    let before = probe_status(&ws);
    assert!(!before.sandboxed && before.network, "{before:?}");

    let report = probe(&ws).await;
    assert!(report.contains("workspace write: ok"), "{report}");
    assert!(dir.path().join("written-by-server.txt").exists());
    assert!(report.contains("connect: ok"), "{report}");
    assert!(greeting(&listener).is_some(), "{report}");
    let running = probe_status(&ws);
    assert!(!running.sandboxed, "{running:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_network_value_is_named_in_every_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".qilin")).unwrap();
    std::fs::write(
        dir.path().join(".qilin/lsp.yaml"),
        "servers:\n  python:\n    command: pyright-langserver\n    network: 1\n",
    )
    .unwrap();
    let ws = LspWorkspace::new(dir.path(), options(ServerSandbox::Off));
    let err = ws.status().unwrap_err().to_string();
    assert!(err.contains("lsp.yaml:4:"), "{err}");
    assert!(err.contains("`servers.python.network` is `1`"), "{err}");
    assert!(err.contains("expected `true`"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_share_servers_only_with_sessions_confined_alike() {
    let dir = tempfile::tempdir().unwrap();
    let confined = || options(ServerSandbox::Confined(helper()));
    let first = LspWorkspace::shared(dir.path(), confined());
    let second = LspWorkspace::shared(dir.path(), confined());
    assert!(std::sync::Arc::ptr_eq(&first, &second));
    let unconfined = LspWorkspace::shared(dir.path(), options(ServerSandbox::Off));
    assert!(
        !std::sync::Arc::ptr_eq(&first, &unconfined),
        "a sandboxed session shares unconfined servers"
    );
    // The status route shows the sandboxed ones while both live, then the others.
    let shown = LspWorkspace::live(dir.path()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&shown, &first));
    drop((first, second, shown));
    let shown = LspWorkspace::live(dir.path()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&shown, &unconfined));
    drop((shown, unconfined));
    assert!(LspWorkspace::live(dir.path()).is_none());
}

/// On a kernel without user namespaces (a user namespace whose limit on further ones is 0),
/// a server asked to run sandboxed is not started unconfined: the answer and the status say
/// why and how to opt out.
#[tokio::test(flavor = "multi_thread")]
async fn where_the_sandbox_is_unavailable_a_confined_server_is_refused_with_the_way_out() {
    let limited = SandboxHelper::new(
        "unshare",
        [
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_qilin-lsp-sandbox-exec"),
        ],
    );
    let probe = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "true"])
        .status();
    if !probe.is_ok_and(|status| status.success()) {
        eprintln!("note: `unshare --user` is not possible here; nothing to check");
        return;
    }
    let listener = listener();
    let dir = workspace(listener.local_addr().unwrap().port(), None);
    let ws = LspWorkspace::new(dir.path(), options(ServerSandbox::Confined(limited)));
    let output = ws
        .run(&LspQuery {
            operation: LspOperation::Hover,
            path: Some("main.probe".into()),
            line: Some(1),
            character: Some(1),
            query: None,
        })
        .await
        .unwrap();
    let empty = output.empty.expect("no answer without a sandbox");
    assert_eq!(empty.reason, qilin_protocol::lsp::LspEmptyReason::Crashed);
    assert!(
        empty.message.contains("this machine cannot provide"),
        "{}",
        empty.message
    );
    assert!(
        empty.message.contains("user namespaces are not available"),
        "{}",
        empty.message
    );
    assert!(
        empty.message.contains("`sandbox: {mode: off}`"),
        "{}",
        empty.message
    );
    assert!(!dir.path().join("written-by-server.txt").exists());
    let status = probe_status(&ws);
    assert_eq!(status.state, LspServerState::Crashed);
    assert!(status.sandboxed && status.pid.is_none(), "{status:?}");
    assert!(
        status
            .last_error
            .as_deref()
            .is_some_and(|error| error.contains("`sandbox: {mode: off}`") && !error.contains("--")),
        "{status:?}"
    );
}
