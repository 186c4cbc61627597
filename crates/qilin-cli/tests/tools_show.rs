//! `qilin tools list` and `qilin tools show NAME --json` for every built-in tool, run on the
//! real binary: what a model receives, pinned by snapshots.

use std::process::Command;

const BUILTINS: &[&str] = &[
    "bash",
    "edit",
    "glob",
    "grep",
    "job_kill",
    "job_output",
    "question",
    "read",
    "read_image",
    "run_code",
    "session_events",
    "session_search",
    "session_trajectory",
    "skill",
    "str_replace_editor",
    "table_query",
    "terminal_kill",
    "terminal_list",
    "terminal_send",
    "terminal_start",
    "todo_write",
    "web_fetch",
    "write",
];

fn qilin(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .output()
        .expect("the qilin binary runs");
    assert!(
        output.status.success(),
        "qilin {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("qilin prints UTF-8")
}

#[test]
fn tools_list_shows_every_builtin() {
    let listing = qilin(&["tools", "list"]);
    for name in BUILTINS {
        assert!(
            listing
                .lines()
                .any(|line| line.starts_with(&format!("{name} "))),
            "`{name}` is missing from:\n{listing}"
        );
    }
    insta::assert_snapshot!("tools_list", listing);
}

#[test]
fn tools_show_prints_each_builtin_as_a_model_receives_it() {
    for name in BUILTINS {
        let shown = qilin(&["tools", "show", name, "--json"]);
        let definition: serde_json::Value =
            serde_json::from_str(&shown).expect("`tools show --json` prints JSON");
        assert_eq!(definition["name"], *name);
        insta::assert_snapshot!(format!("tools_show_{name}"), shown);
    }
}
