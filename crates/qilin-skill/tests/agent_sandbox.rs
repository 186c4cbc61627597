//! The `sandbox:` section of `.agent` files: its defaults, its values and its mistakes.

mod common;

use common::{discover_workspace, registry_with};
use qilin_sandbox::{SandboxMode, SandboxSettings};
use qilin_skill::{Agent, AgentError, Loaded};

fn load(text: &str) -> Result<Loaded<Agent>, AgentError> {
    let dir = tempfile::tempdir().unwrap();
    let discovery = discover_workspace(dir.path());
    let path = dir.path().join("test.agent");
    std::fs::write(&path, text).unwrap();
    Agent::load(&path, &discovery.skills, &registry_with(&discovery))
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
