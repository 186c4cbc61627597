//! Paths that cannot be tricked: links out of the workspace (dangling ones included), folders
//! swapped for links while a tool works, FIFOs, Qilin's own files, and review rules that see
//! the canonical path whatever its spelling.

mod common;

use common::{harness, harness_reviewed, harness_with, symlink};
use qilin_protocol::{CallStatus, ErrorCode};
use qilin_tool::{PolicyConfig, RulePolicy};
use qilin_tools::FileAccess;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[tokio::test]
async fn a_dangling_link_out_of_the_workspace_is_not_written_through() {
    let h = harness();
    let elsewhere = tempfile::tempdir().unwrap();
    symlink(elsewhere.path(), &h.path("outdir"));
    symlink(std::path::Path::new("outdir/new.txt"), &h.path("note.md"));
    symlink(&elsewhere.path().join("gone"), &h.path("folder-out"));
    symlink(std::path::Path::new("missing-inside"), &h.path("folder-in"));
    for (tool, arguments) in [
        ("write", json!({"path": "note.md", "content": "x"})),
        (
            "str_replace_editor",
            json!({"command": "create", "path": "note.md", "file_text": "x"}),
        ),
        (
            "write",
            json!({"path": "folder-out/new.txt", "content": "x"}),
        ),
        (
            "write",
            json!({"path": "folder-in/new.txt", "content": "x"}),
        ),
    ] {
        let message = h.err(tool, arguments, ErrorCode::InvalidArguments).await;
        assert!(
            message.contains("symlink") || message.contains("dangling"),
            "{message}"
        );
    }
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    assert!(!h.path("missing-inside").exists());
}

/// A folder swapped for a link to a folder outside, again and again, while `read` reads a file
/// inside it: no read may ever return the outside file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_never_leads_a_read_outside() {
    let h = harness();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("file.txt"), "SECRET\n").unwrap();
    h.write("real/file.txt", "inside\n");
    let (real, swapped, link) = (h.path("real"), h.path("dir"), h.path("link"));
    std::fs::rename(&real, &swapped).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let target = outside.path().to_path_buf();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // `dir` is the real folder, then a link out, then the real folder again.
                let _ = std::fs::rename(&swapped, &real);
                let _ = std::os::unix::fs::symlink(&target, &link);
                let _ = std::fs::rename(&link, &swapped);
                let _ = std::fs::remove_file(&swapped);
                let _ = std::fs::rename(&real, &swapped);
            }
        })
    };
    let mut inside_reads = 0;
    for _ in 0..600 {
        let outcome = h.call("read", json!({"path": "dir/file.txt"})).await;
        if let Some(output) = &outcome.output {
            assert_eq!(output["text"], "inside\n", "a read escaped the workspace");
            inside_reads += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(inside_reads > 0, "no read succeeded at all");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_is_refused_by_the_file_tools_without_blocking() {
    let h = harness();
    let status = std::process::Command::new("mkfifo")
        .arg(h.path("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    for (tool, arguments) in [
        ("read", json!({"path": "pipe"})),
        ("read_image", json!({"path": "pipe"})),
        (
            "edit",
            json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
        ),
        ("write", json!({"path": "pipe", "content": "x"})),
        ("table_query", json!({"path": "pipe", "aggregate": "count"})),
    ] {
        // A hang guard, not a speed assertion: a FIFO with no writer blocks an open forever.
        let call = tokio::time::timeout(Duration::from_secs(20), h.call_from_code(tool, arguments));
        let outcome = call.await.expect("the call blocked on the FIFO");
        let error = outcome.error.expect("a FIFO is refused");
        assert!(
            error.message.contains("not a regular file"),
            "{tool}: {}",
            error.message
        );
    }
}

#[tokio::test]
async fn qilin_files_are_not_written_unless_the_agent_allows_it() {
    let h = harness();
    h.write(".qilin/skills/tidy/SKILL.md", "---\nname: tidy\n---\n");
    h.write("coder.agent", "name: coder\n");
    h.write(".qilin/sessions/s1/spill/call-1.txt", "the whole output\n");
    std::fs::create_dir(h.path("agents")).unwrap();
    symlink(std::path::Path::new("../.qilin"), &h.path("agents/state"));
    for (tool, arguments) in [
        (
            "write",
            json!({"path": ".qilin/skills/evil/SKILL.md", "content": "x"}),
        ),
        (
            "write",
            json!({"path": "agents/state/skills/evil/SKILL.md", "content": "x"}),
        ),
        (
            "edit",
            json!({"path": "coder.agent", "old_string": "coder", "new_string": "x"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "insert", "path": "./coder.agent", "new_str": "x", "insert_line": 0}),
        ),
        (
            "write",
            json!({"path": "agents/new.agent", "content": "name: x\n"}),
        ),
    ] {
        let message = h.err(tool, arguments, ErrorCode::InvalidArguments).await;
        assert!(message.contains("Qilin's own files"), "{message}");
    }
    assert!(!h.path(".qilin/skills/evil").exists());
    assert_eq!(h.read("coder.agent"), "name: coder\n");
    let (output, _) = h
        .ok(
            "read",
            json!({"path": ".qilin/sessions/s1/spill/call-1.txt"}),
        )
        .await;
    assert_eq!(output["text"], "the whole output\n");

    let mut services = qilin_tools::session_services();
    services.insert(Arc::new(FileAccess {
        write_qilin_files: true,
    }));
    let allowed = harness_with(services);
    allowed.write("coder.agent", "name: coder\n");
    allowed
        .ok(
            "edit",
            json!({"path": "coder.agent", "old_string": "coder", "new_string": "helper"}),
        )
        .await;
    assert_eq!(allowed.read("coder.agent"), "name: helper\n");
}

#[tokio::test]
async fn review_rules_see_the_canonical_path_of_every_spelling() {
    let policy: PolicyConfig = serde_json::from_value(json!({
        "rules": [
            {"tool": "read", "when": {"path": "^secrets/"}, "decision": "deny", "reason": "secrets stay private"},
            {"tool": "write", "when": {"path": "^reports/"}, "decision": "allow"},
            {"tool": "write", "decision": "deny", "reason": "writes go under reports/"}
        ]
    }))
    .unwrap();
    let h = harness_reviewed(
        qilin_tools::session_services(),
        Arc::new(RulePolicy::new(policy).unwrap()),
    );
    h.write("secrets/key", "k\n");
    h.write("src/app.py", "print(1)\n");
    std::fs::create_dir(h.path("reports")).unwrap();
    symlink(std::path::Path::new("secrets"), &h.path("public"));
    let absolute = h.path("secrets/key").display().to_string();
    for path in [
        "secrets/key",
        "./secrets/key",
        "src/../secrets/key",
        absolute.as_str(),
        "public/key",
    ] {
        let outcome = h.call("read", json!({"path": path})).await;
        assert_eq!(outcome.status, CallStatus::Denied, "read {path}");
    }
    let outcome = h
        .call(
            "write",
            json!({"path": "reports/../src/app.py", "content": "x"}),
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Denied);
    assert_eq!(h.read("src/app.py"), "print(1)\n");
    h.ok(
        "write",
        json!({"path": "./reports/summary.md", "content": "ok\n"}),
    )
    .await;
    assert_eq!(h.read("reports/summary.md"), "ok\n");
}
