//! The `lsp` requests against real language servers (pyright and typescript-language-server
//! from `tests/lsp-servers`, installed by `scripts/test`) on the fixture projects.

use qilin_lsp::{LspError, LspOptions, LspQuery, LspService, LspWorkspace, ServerSandbox};
use qilin_protocol::lsp::{
    LspEmptyReason, LspItem, LspOperation, LspOutput, LspServerState, LspSeverity,
};
use qilin_sandbox::{Sandbox, SandboxError, SandboxHelper, SandboxMode, SandboxSettings};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn servers_bin() -> PathBuf {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lsp-servers/node_modules/.bin");
    assert!(
        bin.join("pyright-langserver").exists() && bin.join("typescript-language-server").exists(),
        "the test language servers are not installed: run `npm ci --prefix tests/lsp-servers --no-audit --no-fund`"
    );
    bin
}

/// The servers' `PATH`: the installed test servers first, then the process's (for `node`).
fn search_path() -> OsString {
    let mut dirs = vec![servers_bin()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The servers run inside the sandbox where this machine can confine them; where it cannot,
/// without it (and a note saying so), so the requests themselves are still tested.
fn server_sandbox() -> ServerSandbox {
    let helper = SandboxHelper::new(
        env!("CARGO_BIN_EXE_qilin-lsp-sandbox-exec"),
        Vec::<String>::new(),
    );
    let settings = SandboxSettings {
        mode: SandboxMode::ReadOnly,
        ..SandboxSettings::default()
    };
    match Sandbox::start(settings, helper.clone()) {
        Ok(_) => ServerSandbox::Confined(helper),
        Err(SandboxError::Unsupported { missing, .. }) => {
            eprintln!(
                "note: this machine cannot sandbox language servers ({}); running them unconfined",
                missing.join("; ")
            );
            ServerSandbox::Off
        }
        Err(err) => panic!("{err}"),
    }
}

fn options() -> LspOptions {
    LspOptions {
        search_path: Some(search_path()),
        request_timeout: Duration::from_secs(60),
        start_timeout: Duration::from_secs(60),
        diagnostics_wait: Duration::from_secs(20),
        index_wait: Duration::from_secs(30),
        sandbox: server_sandbox(),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of the fixture project `name`, and its servers.
fn fixture(name: &str) -> (tempfile::TempDir, Arc<LspWorkspace>) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
        dir.path(),
    );
    let workspace = Arc::new(LspWorkspace::new(dir.path(), options()));
    (dir, workspace)
}

fn at(operation: LspOperation, path: &str, line: u32, character: u32) -> LspQuery {
    LspQuery {
        operation,
        path: Some(path.into()),
        line: Some(line),
        character: Some(character),
        query: None,
    }
}

fn on(operation: LspOperation, path: &str) -> LspQuery {
    LspQuery {
        operation,
        path: Some(path.into()),
        line: None,
        character: None,
        query: None,
    }
}

fn symbols(query: &str, path: Option<&str>) -> LspQuery {
    LspQuery {
        operation: LspOperation::WorkspaceSymbols,
        path: path.map(String::from),
        line: None,
        character: None,
        query: Some(query.into()),
    }
}

/// Runs `query`, asking again (a few times) while the server says it is still starting.
async fn ask(workspace: &LspWorkspace, query: LspQuery) -> LspOutput {
    for _ in 0..20 {
        let output = workspace.run(&query).await.unwrap();
        let starting = output
            .empty
            .as_ref()
            .is_some_and(|e| e.reason == LspEmptyReason::Starting);
        if !starting {
            return output;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("the server was still indexing after 10 s");
}

/// Asks until the answer has items (a server may answer empty while it loads the project).
async fn ask_items(workspace: &LspWorkspace, query: LspQuery) -> LspOutput {
    let mut last = None;
    for _ in 0..20 {
        let output = ask(workspace, query.clone()).await;
        if !output.items.is_empty() || output.hover.is_some() {
            return output;
        }
        last = Some(output);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("no items after 10 s: {last:#?}");
}

fn places(output: &LspOutput) -> Vec<(String, u32)> {
    output
        .items
        .iter()
        .map(|i| (i.path.clone().unwrap_or_else(|| i.uri.clone()), i.line))
        .collect()
}

fn names(items: &[LspItem]) -> Vec<String> {
    items.iter().filter_map(|i| i.name.clone()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn python_navigation_on_pyright() {
    let (_dir, ws) = fixture("python");

    let found = ask_items(&ws, at(LspOperation::Definition, "app.py", 12, 11)).await;
    assert_eq!(found.language.as_deref(), Some("python"));
    assert_eq!(found.server.as_deref(), Some("pyright-langserver"));
    assert_eq!(places(&found), [("shapes.py".to_string(), 33)]);
    let definition = &found.items[0];
    assert_eq!(definition.character, 5);
    assert_eq!(
        definition.text.as_deref(),
        Some("def area_of(shape: Shape) -> float:")
    );
    assert!(definition.uri.starts_with("file:///"), "{}", definition.uri);
    let context: Vec<u32> = definition.context.iter().map(|c| c.line).collect();
    assert_eq!(context, [31, 32, 33, 34, 35]);

    let refs = ask_items(&ws, at(LspOperation::References, "shapes.py", 33, 5)).await;
    let refs = places(&refs);
    for expected in [
        ("app.py", 1),
        ("app.py", 5),
        ("app.py", 12),
        ("shapes.py", 33),
    ] {
        assert!(
            refs.contains(&(expected.0.to_string(), expected.1)),
            "{expected:?} missing from {refs:?}"
        );
    }
    let mut sorted = refs.clone();
    sorted.sort();
    assert_eq!(refs, sorted, "sorted by path then line");

    let hover = ask_items(&ws, at(LspOperation::Hover, "app.py", 12, 11)).await;
    let text = hover.hover.unwrap();
    assert!(text.contains("area_of") && text.contains("float"), "{text}");

    let outline = ask_items(&ws, on(LspOperation::DocumentSymbols, "shapes.py")).await;
    let circle = outline
        .items
        .iter()
        .find(|i| i.name.as_deref() == Some("Circle"))
        .unwrap();
    assert_eq!(
        (circle.kind.as_deref(), circle.depth, circle.line),
        (Some("class"), Some(0), 17)
    );
    assert!(
        outline
            .items
            .iter()
            .any(|i| i.name.as_deref() == Some("area") && i.depth == Some(1) && i.line == 21),
        "{:#?}",
        outline.items
    );

    let search = ask_items(&ws, symbols("Square", None)).await;
    assert!(
        search
            .items
            .iter()
            .any(|i| i.name.as_deref() == Some("Square")
                && i.path.as_deref() == Some("shapes.py")
                && i.line == 25),
        "{:#?}",
        search.items
    );

    let callers = ask_items(&ws, at(LspOperation::IncomingCalls, "shapes.py", 33, 5)).await;
    let mut calling: Vec<(String, u32)> = callers
        .items
        .iter()
        .map(|i| (i.name.clone().unwrap(), i.line))
        .collect();
    calling.sort();
    assert_eq!(
        calling,
        [("describe".to_string(), 5), ("main".to_string(), 12)]
    );

    let callees = ask_items(&ws, at(LspOperation::OutgoingCalls, "app.py", 8, 5)).await;
    let called = names(&callees.items);
    for expected in ["describe", "area_of"] {
        assert!(
            called.iter().any(|n| n == expected),
            "{expected} missing from {called:?}"
        );
    }

    // pyright has no implementation request: the empty result says so.
    let implementation = ask(&ws, at(LspOperation::Implementation, "shapes.py", 11, 9)).await;
    if implementation.items.is_empty() {
        let empty = implementation.empty.unwrap();
        assert_eq!(empty.reason, LspEmptyReason::NotFound);
        assert!(
            empty.message.contains("implementation"),
            "{}",
            empty.message
        );
    } else {
        assert!(places(&implementation).contains(&("shapes.py".to_string(), 21)));
    }

    let clean = ask(&ws, on(LspOperation::Diagnostics, "app.py")).await;
    assert!(clean.items.is_empty(), "{:#?}", clean.items);
    assert_eq!(clean.empty.unwrap().reason, LspEmptyReason::NotFound);

    let nothing = ask(&ws, at(LspOperation::Definition, "app.py", 2, 1)).await;
    assert!(nothing.items.is_empty());
    assert_eq!(nothing.empty.unwrap().reason, LspEmptyReason::NotFound);
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_navigation_on_typescript_language_server() {
    let (_dir, ws) = fixture("typescript");

    let found = ask_items(&ws, at(LspOperation::Definition, "src/app.ts", 11, 15)).await;
    assert_eq!(found.language.as_deref(), Some("typescript"));
    assert_eq!(found.server.as_deref(), Some("typescript-language-server"));
    assert_eq!(places(&found), [("src/shapes.ts".to_string(), 32)]);
    assert_eq!(found.items[0].character, 17);
    assert!(!found.items[0].context.is_empty());

    let refs = places(&ask_items(&ws, at(LspOperation::References, "src/shapes.ts", 32, 17)).await);
    for expected in [
        ("src/app.ts", 1),
        ("src/app.ts", 4),
        ("src/app.ts", 11),
        ("src/shapes.ts", 32),
    ] {
        assert!(
            refs.contains(&(expected.0.to_string(), expected.1)),
            "{expected:?} missing from {refs:?}"
        );
    }

    let hover = ask_items(&ws, at(LspOperation::Hover, "src/app.ts", 11, 15)).await;
    assert!(hover.hover.unwrap().contains("areaOf"));

    let implementations =
        places(&ask_items(&ws, at(LspOperation::Implementation, "src/shapes.ts", 3, 3)).await);
    for expected in [("src/shapes.ts", 10), ("src/shapes.ts", 22)] {
        assert!(
            implementations.contains(&(expected.0.to_string(), expected.1)),
            "{expected:?} missing from {implementations:?}"
        );
    }

    let outline = ask_items(&ws, on(LspOperation::DocumentSymbols, "src/shapes.ts")).await;
    let shape = outline
        .items
        .iter()
        .find(|i| i.name.as_deref() == Some("Shape"))
        .unwrap();
    assert_eq!(
        (shape.kind.as_deref(), shape.depth),
        (Some("interface"), Some(0))
    );
    assert!(
        outline
            .items
            .iter()
            .any(|i| i.name.as_deref() == Some("area") && i.depth == Some(1) && i.line == 10),
        "{:#?}",
        outline.items
    );

    let search = ask_items(&ws, symbols("Circle", Some("src/app.ts"))).await;
    assert!(
        search
            .items
            .iter()
            .any(|i| i.name.as_deref() == Some("Circle")
                && i.path.as_deref() == Some("src/shapes.ts")
                && i.line == 7),
        "{:#?}",
        search.items
    );

    let callers = ask_items(
        &ws,
        at(LspOperation::IncomingCalls, "src/shapes.ts", 32, 17),
    )
    .await;
    let mut calling: Vec<(String, u32)> = callers
        .items
        .iter()
        .map(|i| (i.name.clone().unwrap(), i.line))
        .collect();
    calling.sort();
    assert_eq!(
        calling,
        [("describe".to_string(), 4), ("main".to_string(), 11)]
    );

    let callees = ask_items(&ws, at(LspOperation::OutgoingCalls, "src/app.ts", 7, 17)).await;
    let called = names(&callees.items);
    for expected in ["describe", "areaOf"] {
        assert!(
            called.iter().any(|n| n == expected),
            "{expected} missing from {called:?}"
        );
    }

    std::fs::write(
        _dir.path().join("src/broken.ts"),
        "import { areaOf } from \"./shapes\";\nexport const x: number = areaOf(1, 2);\n",
    )
    .unwrap();
    let broken = ask_items(&ws, on(LspOperation::Diagnostics, "src/broken.ts")).await;
    let errors: Vec<&LspItem> = broken
        .items
        .iter()
        .filter(|i| i.severity == Some(LspSeverity::Error))
        .collect();
    assert!(!errors.is_empty(), "{:#?}", broken.items);
    assert!(
        errors.iter().all(|e| e.line == 2 && e.source.is_some()),
        "{errors:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_server_says_it_is_not_installed_and_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
    let empty_path = tempfile::tempdir().unwrap();
    let ws = LspWorkspace::new(
        dir.path(),
        LspOptions {
            search_path: Some(empty_path.path().as_os_str().to_owned()),
            ..options()
        },
    );
    let output = ws
        .run(&at(LspOperation::Definition, "a.py", 1, 1))
        .await
        .unwrap();
    let empty = output.empty.unwrap();
    assert_eq!(empty.reason, LspEmptyReason::NoServer);
    assert!(empty.message.contains("not installed"), "{}", empty.message);
    assert!(
        empty.message.contains("pyright-langserver"),
        "{}",
        empty.message
    );
    assert!(empty.hint.unwrap().contains("npm install -g pyright"));
    let status = ws.status().unwrap();
    let python = status
        .servers
        .iter()
        .find(|s| s.language == "python")
        .unwrap();
    assert_eq!(python.state, LspServerState::NotInstalled);
    assert!(python.hint.as_deref().unwrap().contains("pyright"));

    std::fs::write(dir.path().join("notes.xyz"), "hello\n").unwrap();
    let unknown = ws
        .run(&on(LspOperation::DocumentSymbols, "notes.xyz"))
        .await
        .unwrap();
    let empty = unknown.empty.unwrap();
    assert_eq!(empty.reason, LspEmptyReason::NoServer);
    assert!(empty.hint.unwrap().contains(".qilin/lsp.yaml"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_outside_the_workspace_is_refused() {
    let (dir, ws) = fixture("python");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("other.py"), "y = 2\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("other.py"), dir.path().join("link.py"))
        .unwrap();
    let absolute = outside.path().join("other.py").display().to_string();
    for path in ["../other.py", absolute.as_str(), "link.py"] {
        let err = ws
            .run(&at(LspOperation::Definition, path, 1, 1))
            .await
            .unwrap_err();
        let LspError::InvalidArguments(message) = err else {
            panic!("{err:?}")
        };
        assert!(
            message.contains("outside the workspace"),
            "{path}: {message}"
        );
    }
    let err = ws
        .run(&at(LspOperation::Definition, "app.py", 0, 1))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("count from 1"), "{err}");
    let err = ws
        .run(&on(LspOperation::Definition, "app.py"))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("needs `path`, `line` and `character`"),
        "{err}"
    );
    // Nothing was started for refused requests.
    assert!(ws.status().unwrap().servers.iter().all(|s| s.pid.is_none()));
}

fn signal_group(pid: u32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
}

fn python_pid(ws: &LspWorkspace) -> Option<u32> {
    ws.status()
        .unwrap()
        .servers
        .into_iter()
        .find(|s| s.language == "python")
        .and_then(|s| s.pid)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_request_is_reported_and_restarted() {
    let (_dir, ws) = fixture("python");
    ask_items(&ws, at(LspOperation::Definition, "app.py", 12, 11)).await;
    let pid = python_pid(&ws).unwrap();

    // Frozen, it cannot answer; killed while the request waits, the call says it crashed.
    signal_group(pid, nix::sys::signal::Signal::SIGSTOP);
    let pending = {
        let ws = Arc::clone(&ws);
        tokio::spawn(async move { ws.run(&at(LspOperation::Hover, "app.py", 12, 11)).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!pending.is_finished(), "the frozen server answered");
    signal_group(pid, nix::sys::signal::Signal::SIGKILL);
    let crashed = pending.await.unwrap().unwrap();
    let empty = crashed.empty.unwrap();
    assert_eq!(empty.reason, LspEmptyReason::Crashed, "{}", empty.message);
    assert!(empty.message.contains("crashed"), "{}", empty.message);
    let status = ws.status().unwrap();
    let python = status
        .servers
        .iter()
        .find(|s| s.language == "python")
        .unwrap();
    assert_eq!(python.state, LspServerState::Crashed);
    assert!(python.last_error.as_deref().unwrap().contains("crashed"));

    // The next call restarts it.
    let again = ask_items(&ws, at(LspOperation::Definition, "app.py", 12, 11)).await;
    assert_eq!(places(&again), [("shapes.py".to_string(), 33)]);
    let restarted = python_pid(&ws).unwrap();
    assert_ne!(restarted, pid);
    let python = ws
        .status()
        .unwrap()
        .servers
        .into_iter()
        .find(|s| s.language == "python")
        .unwrap();
    assert_eq!((python.state, python.restarts), (LspServerState::Ready, 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_stop_when_the_last_session_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/python"),
        dir.path(),
    );
    let first = LspService::new(LspWorkspace::shared(dir.path(), options()), false);
    let second = LspService::new(LspWorkspace::shared(dir.path(), options()), false);
    assert!(
        Arc::ptr_eq(first.workspace(), second.workspace()),
        "one set of servers per workspace"
    );
    ask_items(
        first.workspace(),
        at(LspOperation::Definition, "app.py", 12, 11),
    )
    .await;
    let pid = python_pid(second.workspace()).unwrap();
    drop(first);
    assert!(LspWorkspace::live(dir.path()).is_some());
    drop(second);
    assert!(LspWorkspace::live(dir.path()).is_none());
    let proc = PathBuf::from(format!("/proc/{pid}"));
    for _ in 0..50 {
        if !proc.exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server {pid} still runs after its last session let go");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_reports_the_error_it_introduced_and_the_fix_reports_it_resolved() {
    let (dir, ws) = fixture("python");
    let service = LspService::new(Arc::clone(&ws), true);
    let app = dir.path().join("app.py");
    let original = std::fs::read_to_string(&app).unwrap();

    let baseline = service
        .before_edit(&app)
        .await
        .expect("pyright handles app.py");
    std::fs::write(
        &app,
        original.replace("print(area_of(circle))", "print(area_of(circle, 3))"),
    )
    .unwrap();
    let broken = baseline.after_edit().await;
    assert_eq!(broken.server, "pyright-langserver");
    assert_eq!(broken.note, None);
    assert_eq!(broken.introduced.len(), 1, "{broken:#?}");
    let error = &broken.introduced[0];
    assert_eq!(error.severity, Some(LspSeverity::Error));
    assert_eq!(error.line, 12);
    assert_eq!(error.text.as_deref(), Some("    print(area_of(circle, 3))"));
    assert!(broken.resolved.is_empty());
    assert_eq!(broken.remaining, 1);

    let baseline = service.before_edit(&app).await.unwrap();
    std::fs::write(&app, &original).unwrap();
    let fixed = baseline.after_edit().await;
    assert!(fixed.introduced.is_empty(), "{fixed:#?}");
    assert_eq!(fixed.resolved.len(), 1, "{fixed:#?}");
    assert_eq!(fixed.resolved[0].message, error.message);
    assert_eq!(fixed.remaining, 0);

    // Off unless the agent asks for it.
    let quiet = LspService::new(ws, false);
    assert!(quiet.before_edit(&app).await.is_none());
}
