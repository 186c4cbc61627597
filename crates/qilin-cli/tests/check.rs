//! `qilin check`, run as a user runs it: the real binary on the example workspace and on
//! small workspaces with one problem each.

use std::path::Path;
use std::process::{Command, Output};

fn write(root: &Path, path: &str, content: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("a parent folder")).expect("mkdir");
    std::fs::write(full, content).expect("write");
}

fn qilin(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("qilin runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8")
}

#[test]
fn the_example_workspace_passes() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workspace");
    let output = qilin(&examples, &["check"]);
    assert!(output.status.success(), "{}", stdout(&output));
    assert!(
        stdout(&output).starts_with("ok: checked "),
        "{}",
        stdout(&output)
    );
}

#[test]
fn an_error_exits_1_with_compiler_style_text_or_json() {
    let ws = tempfile::tempdir().expect("a temp dir");
    write(
        ws.path(),
        "helper.agent",
        "name: helper\ninstructions: Help.\ntools: [gerp]\n",
    );
    let output = qilin(ws.path(), &["check"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.starts_with("error[Q401]: `tools` names `gerp`, but no tool has that name\n  --> "),
        "{text}"
    );
    assert!(
        text.contains("helper.agent:3:1\n  = help: did you mean `grep`?\n"),
        "{text}"
    );

    let output = qilin(ws.path(), &["check", "--json", "helper.agent"]);
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(json[0]["code"], "Q401");
    assert_eq!(json[0]["rule"], "agent-unknown-tool");
    assert_eq!(json[0]["line"], 3);
}

#[test]
fn warnings_pass_unless_denied() {
    let ws = tempfile::tempdir().expect("a temp dir");
    write(
        ws.path(),
        "helper.agent",
        "name: helper\ninstructions: Help.\ntools: [grep]\ncolour: blue\n",
    );
    let output = qilin(ws.path(), &["check", "helper.agent"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(
        stdout(&output).starts_with("warning[Q406]"),
        "{}",
        stdout(&output)
    );
    for denied in [&["--deny", "warnings"][..], &["--strict"]] {
        let args: Vec<&str> = ["check"]
            .into_iter()
            .chain(denied.iter().copied())
            .chain(["helper.agent"])
            .collect();
        let output = qilin(ws.path(), &args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(
            stdout(&output).starts_with("error[Q406]"),
            "{}",
            stdout(&output)
        );
    }
}

#[test]
fn a_missing_path_is_a_clear_error() {
    let ws = tempfile::tempdir().expect("a temp dir");
    let output = qilin(ws.path(), &["check", "nowhere"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    assert!(stderr.contains("`nowhere` does not exist"), "{stderr}");
}

/// `qilin check` in `dir` with the system temp folder (where the built-in skills are written)
/// at `temp`.
fn qilin_with_temp(dir: &Path, temp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", temp)
        .output()
        .expect("qilin runs")
}

#[test]
fn a_folder_without_qilin_has_its_code_reached_tools_covered_by_the_builtin_skills() {
    let ws = tempfile::tempdir().expect("a temp dir");
    let temp = tempfile::tempdir().expect("a temp dir");
    let output = qilin_with_temp(ws.path(), temp.path(), &["check"]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert!(!text.contains("Q111"), "{text}");
    assert!(
        text.starts_with("ok: checked ") && text.contains(" 13 skills "),
        "the built-in skills are checked like any other: {text}"
    );
}

#[test]
fn an_agent_may_preload_the_builtin_skill() {
    let ws = tempfile::tempdir().expect("a temp dir");
    let temp = tempfile::tempdir().expect("a temp dir");
    write(
        ws.path(),
        "analyst.agent",
        "name: analyst\ninstructions: Answer questions about the CSV files.\ncode_mode: true\nskills:\n  preload:\n    - name: table-query\n",
    );
    let output = qilin_with_temp(ws.path(), temp.path(), &["check", "analyst.agent"]);
    assert!(output.status.success(), "{}", stdout(&output));
    let output = qilin_with_temp(ws.path(), temp.path(), &["check"]);
    assert!(output.status.success(), "{}", stdout(&output));
}
