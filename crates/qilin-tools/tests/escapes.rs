//! Every tool that takes a path refuses to leave the workspace: by `..`, by an absolute path
//! and by a symlink; nothing outside is read or changed.

mod common;

use common::{harness, symlink};
use qilin_protocol::ErrorCode;
use serde_json::{Value, json};

/// The calls to try for one hostile path.
fn calls(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read", json!({"path": path})),
        ("read_image", json!({"path": path})),
        ("write", json!({"path": path, "content": "pwned"})),
        (
            "edit",
            json!({"path": path, "old_string": "secret", "new_string": "pwned"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "view", "path": path}),
        ),
        (
            "str_replace_editor",
            json!({"command": "create", "path": path, "file_text": "pwned"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "str_replace", "path": path, "old_str": "secret", "new_str": "pwned"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "insert", "path": path, "insert_line": 0, "new_str": "pwned"}),
        ),
        ("grep", json!({"pattern": "secret", "path": path})),
        ("glob", json!({"pattern": "*", "path": path})),
    ]
}

async fn assert_all_refused(path: &str, secret: &std::path::Path) {
    let h = harness();
    if let Some(link) = path.strip_prefix("link/") {
        symlink(secret.parent().unwrap(), &h.path("link"));
        assert_eq!(link, secret.file_name().unwrap().to_str().unwrap());
    }
    for (tool, arguments) in calls(path) {
        let message = h
            .err(tool, arguments.clone(), ErrorCode::InvalidArguments)
            .await;
        assert!(
            message.contains(&format!("`{path}`")),
            "{tool} {arguments}: {message}"
        );
        assert!(
            message.contains("outside the workspace") || message.contains("through a symlink"),
            "{tool}: {message}"
        );
    }
    assert_eq!(std::fs::read_to_string(secret).unwrap(), "secret\n");
}

#[tokio::test]
async fn dot_dot_escapes_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "secret\n").unwrap();
    let h = harness();
    let relative = format!(
        "../{}/secret.txt",
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    // The two temp folders share a parent, so this `..` path names the secret file.
    assert!(h.workspace.path().join(&relative).exists());
    drop(h);
    assert_all_refused(&relative, &secret).await;
    assert_all_refused("sub/../../x", &secret).await;
}

#[tokio::test]
async fn absolute_paths_outside_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "secret\n").unwrap();
    assert_all_refused(secret.to_str().unwrap(), &secret).await;
}

#[tokio::test]
async fn symlinks_leading_out_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "secret\n").unwrap();
    assert_all_refused("link/secret.txt", &secret).await;
}

#[tokio::test]
async fn an_absolute_path_inside_and_a_symlink_inside_are_fine() {
    let h = harness();
    h.write("real/file.txt", "hello\n");
    symlink(&h.path("real"), &h.path("alias"));
    let absolute = h.path("real/file.txt");
    let (output, _) = h
        .ok("read", json!({"path": absolute.to_str().unwrap()}))
        .await;
    assert_eq!(output["path"], "real/file.txt");
    let (output, _) = h.ok("read", json!({"path": "alias/file.txt"})).await;
    assert_eq!(output["text"], "hello\n");
}
