//! `str_replace_editor`: every command, its errors, and undo.

mod common;

use common::{harness, harness_with};
use qilin_protocol::ErrorCode;
use qilin_tool::Services;
use serde_json::json;

#[tokio::test]
async fn view_shows_numbered_lines_a_range_and_folder_listings() {
    let h = harness();
    h.write("src/a.py", "one\ntwo\nthree\nfour\n");
    h.write("src/deep/er/hidden.txt", "x");
    h.write(".secret", "x");
    let (_, text) = h
        .ok(
            "str_replace_editor",
            json!({"command": "view", "path": "src/a.py"}),
        )
        .await;
    assert_eq!(
        text,
        "Here is `src/a.py` with line numbers:\n     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n"
    );
    let (_, text) = h
        .ok(
            "str_replace_editor",
            json!({"command": "view", "path": "src/a.py", "view_range": [2, -1]}),
        )
        .await;
    assert!(
        text.ends_with("     2\ttwo\n     3\tthree\n     4\tfour\n"),
        "{text}"
    );
    let message = h
        .err(
            "str_replace_editor",
            json!({"command": "view", "path": "src/a.py", "view_range": [3, 9]}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("has 4 lines"), "{message}");
    let (_, text) = h
        .ok(
            "str_replace_editor",
            json!({"command": "view", "path": "."}),
        )
        .await;
    assert!(text.contains("\nsrc/\nsrc/a.py\nsrc/deep/\n"), "{text}");
    assert!(
        !text.contains("hidden.txt") && !text.contains(".secret"),
        "{text}"
    );
}

#[tokio::test]
async fn create_str_replace_insert_and_undo_each_step() {
    let h = harness();
    let (output, text) = h
        .ok(
            "str_replace_editor",
            json!({"command": "create", "path": "app/main.py", "file_text": "def main():\n    pass\n"}),
        )
        .await;
    assert!(text.starts_with("Created `app/main.py`"), "{text}");
    assert_eq!(output["added"], 2);
    h.ok(
        "str_replace_editor",
        json!({"command": "str_replace", "path": "app/main.py", "old_str": "    pass", "new_str": "    print('hi')"}),
    )
    .await;
    assert_eq!(h.read("app/main.py"), "def main():\n    print('hi')\n");
    let (output, text) = h
        .ok(
            "str_replace_editor",
            json!({"command": "insert", "path": "app/main.py", "insert_line": 0, "new_str": "import sys"}),
        )
        .await;
    assert_eq!(
        h.read("app/main.py"),
        "import sys\ndef main():\n    print('hi')\n"
    );
    assert!(text.contains("     1\timport sys\n"), "{text}");
    assert_eq!(output["added"], 1);
    assert!(output["diff"].as_str().unwrap().contains("\n+import sys\n"));
    h.ok(
        "str_replace_editor",
        json!({"command": "undo_edit", "path": "app/main.py"}),
    )
    .await;
    assert_eq!(h.read("app/main.py"), "def main():\n    print('hi')\n");
    h.ok(
        "str_replace_editor",
        json!({"command": "undo_edit", "path": "app/main.py"}),
    )
    .await;
    assert_eq!(h.read("app/main.py"), "def main():\n    pass\n");
    let (_, text) = h
        .ok(
            "str_replace_editor",
            json!({"command": "undo_edit", "path": "app/main.py"}),
        )
        .await;
    assert!(text.contains("Removed `app/main.py`"));
    assert!(!h.path("app/main.py").exists());
    let message = h
        .err(
            "str_replace_editor",
            json!({"command": "undo_edit", "path": "app/main.py"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("no edit of `app/main.py` to undo"));
}

#[tokio::test]
async fn errors_name_the_missing_argument_the_count_and_the_lines() {
    let h = harness();
    h.write("t.txt", "a\nb\na\n");
    let message = h
        .err(
            "str_replace_editor",
            json!({"command": "str_replace", "path": "t.txt", "old_str": "a", "new_str": "c"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`old_str` occurs 2 times") && message.contains("lines 1, 3"),
        "{message}"
    );
    let message = h
        .err(
            "str_replace_editor",
            json!({"command": "create", "path": "n.txt"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert_eq!(message, "`create` needs the argument `file_text`");
    let message = h
        .err(
            "str_replace_editor",
            json!({"command": "insert", "path": "t.txt", "insert_line": 9, "new_str": "x"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`insert_line` is 9") && message.contains("has 3 lines"),
        "{message}"
    );
    let message = h
        .err(
            "str_replace_editor",
            json!({"command": "rename", "path": "t.txt"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("command"), "{message}");
}

#[tokio::test]
async fn without_an_edit_history_undo_is_refused_but_edits_work() {
    let h = harness_with(Services::default());
    h.ok(
        "str_replace_editor",
        json!({"command": "create", "path": "f.txt", "file_text": "x\n"}),
    )
    .await;
    let message = h
        .err(
            "str_replace_editor",
            json!({"command": "undo_edit", "path": "f.txt"}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(message.contains("keeps no edit history"));
}
