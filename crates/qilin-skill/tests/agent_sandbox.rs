//! The `sandbox:` section of `.agent` files: its defaults, its values and its mistakes.

mod common;

use common::{discover_workspace, registry_with};
use qilin_sandbox::{SandboxMode, SandboxSettings};
use qilin_skill::{AgentError, AgentFile, Loaded};

fn load(text: &str) -> Result<Loaded<AgentFile>, AgentError> {
    let dir = tempfile::tempdir().unwrap();
    let discovery = discover_workspace(dir.path());
    let path = dir.path().join("test.agent");
    std::fs::write(&path, text).unwrap();
    AgentFile::load(&path, &discovery.skills, &registry_with(&discovery))
}

#[test]
fn without_a_section_bash_runs_in_the_default_sandbox() {
    let agent = load("name: a\ninstructions: hi\n").unwrap().value;
    assert_eq!(agent.sandbox, SandboxSettings::default());
    assert_eq!(agent.sandbox.mode, SandboxMode::WorkspaceWrite);
    assert!(!agent.sandbox.network);
}

#[test]
fn the_section_sets_the_mode_the_network_and_the_variables_passed() {
    let loaded = load(
        "name: a\ninstructions: hi\nsandbox:\n  mode: read-only\n  network: true\n  env: [NPM_TOKEN, GITHUB_TOKEN]\n",
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let sandbox = loaded.value.sandbox;
    assert_eq!(sandbox.mode, SandboxMode::ReadOnly);
    assert!(sandbox.network);
    assert_eq!(sandbox.env, ["NPM_TOKEN", "GITHUB_TOKEN"]);
    let off = load("name: a\ninstructions: hi\nsandbox: {mode: off}\n").unwrap();
    assert_eq!(off.value.sandbox.mode, SandboxMode::Off);
}

#[test]
fn sandbox_mistakes_name_their_line() {
    let err = load("name: a\ninstructions: hi\nsandbox:\n  mode: strict\n").unwrap_err();
    let [error] = err.diagnostics.as_slice() else {
        panic!("{err}")
    };
    assert_eq!(error.line, Some(4));
    assert!(error.message.contains("workspace-write"), "{error}");

    let err = load("name: a\ninstructions: hi\nsandbox:\n  env: [OK, 'not a name']\n").unwrap_err();
    let [error] = err.diagnostics.as_slice() else {
        panic!("{err}")
    };
    assert_eq!(error.line, Some(4));
    assert!(error.message.contains("`not a name`"), "{error}");

    let loaded = load("name: a\ninstructions: hi\nsandbox:\n  netwrok: true\n").unwrap();
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert_eq!(loaded.warnings[0].line, Some(4));
    assert!(
        loaded.warnings[0]
            .message
            .contains("did you mean `network`?"),
        "{}",
        loaded.warnings[0].message
    );
}

#[test]
fn the_section_sets_the_limits_and_the_unix_sockets_allowed() {
    let loaded = load(
        "name: a\ninstructions: hi\nsandbox:\n  unix_sockets: [/run/docker.sock, '$XDG_RUNTIME_DIR/podman/podman.sock']\n  limits:\n    processes: 64\n    memory_mb: 512\n    shm_mb: 32\n",
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let sandbox = loaded.value.sandbox;
    assert_eq!(
        sandbox.unix_sockets,
        ["/run/docker.sock", "$XDG_RUNTIME_DIR/podman/podman.sock"]
    );
    assert_eq!(
        (
            sandbox.limits.processes,
            sandbox.limits.memory_mb,
            sandbox.limits.shm_mb
        ),
        (64, 512, 32)
    );
}

#[test]
fn a_wrong_limit_or_socket_names_its_line_and_what_is_expected() {
    let err = load(
        "name: a\ninstructions: hi\nsandbox:\n  unix_sockets: [docker.sock]\n  limits:\n    processes: 0\n    memmory_mb: 1\n",
    )
    .unwrap_err();
    let lines: Vec<Option<usize>> = err.diagnostics.iter().map(|d| d.line).collect();
    assert_eq!(lines, [Some(4), Some(6), Some(7)], "{err}");
    assert!(
        err.diagnostics[0].message.contains("not an absolute path"),
        "{err}"
    );
    assert!(err.diagnostics[1].message.contains("from 1 to"), "{err}");
    assert!(
        err.diagnostics[2]
            .message
            .contains("did you mean `memory_mb`?"),
        "{err}"
    );
}
