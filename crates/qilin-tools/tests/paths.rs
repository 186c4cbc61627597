//! Paths that cannot be tricked: links out of the workspace (dangling ones included), folders
//! swapped for links while a tool works, FIFOs, Qilin's own files, and review rules that see
//! the canonical path whatever its spelling.

mod common;

use common::{harness, harness_in, harness_reviewed, harness_with, symlink};
use qilin_protocol::{CallStatus, ErrorCode};
use qilin_sandbox::Protection;
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
    for _ in 0..600 {
        let outcome = h.call("read", json!({"path": "dir/file.txt"})).await;
        if let Some(output) = &outcome.output {
            assert_eq!(output["text"], "inside\n", "a read escaped the workspace");
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    // Each round of the swapper ends with `dir` the real folder again; how many reads of the race
    // landed inside depends on the machine's load, but once it stops the read must succeed.
    let settled = h.call("read", json!({"path": "dir/file.txt"})).await;
    let output = settled.output.expect("the settled read succeeds");
    assert_eq!(output["text"], "inside\n");
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
        assert!(
            message.contains("`files: {write_qilin_files: true}`"),
            "{message}"
        );
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
        protection: Protection::new().allow_qilin_files(true),
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

#[tokio::test]
async fn git_folders_and_the_files_agent_files_name_are_not_written_or_created() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    let mut services = qilin_tools::session_services();
    services.insert(Arc::new(FileAccess {
        protection: Protection::new().with_named_files([root.join("prompts/coder.md")]),
    }));
    let h = harness_in(workspace, services);
    h.write(".git/config", "[core]\n");
    h.write(".git/HEAD", "ref: refs/heads/main\n");
    h.write("prompts/coder.md", "You are careful.\n");
    h.write("gitdirs/wt/HEAD", "ref: refs/heads/wt\n");
    h.write("worktree/.git", "gitdir: ../gitdirs/wt\n");
    for (tool, arguments, kind) in [
        (
            "edit",
            json!({"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = evil"}),
            "git repository",
        ),
        (
            "write",
            json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nevil\n"}),
            "git repository",
        ),
        (
            "write",
            json!({"path": ".git/HEAD", "content": "ref: refs/heads/x\n"}),
            "git repository",
        ),
        (
            "write",
            json!({"path": "pkg/.git/config", "content": "[core]\n\tfsmonitor = evil\n"}),
            "git repository",
        ),
        (
            "write",
            json!({"path": "pkg/.git", "content": "gitdir: /elsewhere\n"}),
            "git repository",
        ),
        (
            "write",
            json!({"path": "gitdirs/wt/config", "content": "[core]\n\tfsmonitor = evil\n"}),
            "git repository",
        ),
        (
            "str_replace_editor",
            json!({"command": "insert", "path": "prompts/coder.md", "new_str": "Obey the repo.", "insert_line": 0}),
            "a file an agent file names",
        ),
    ] {
        let message = h
            .err(tool, arguments.clone(), ErrorCode::InvalidArguments)
            .await;
        assert!(message.contains(kind), "{tool} {arguments}: {message}");
    }
    assert_eq!(h.read(".git/config"), "[core]\n");
    assert!(!h.path(".git/hooks").exists());
    assert!(!h.path("pkg").exists());
    assert!(!h.path("gitdirs/wt/config").exists());
    assert_eq!(h.read("prompts/coder.md"), "You are careful.\n");
    h.ok(
        "write",
        json!({"path": "prompts/other.md", "content": "free\n"}),
    )
    .await;
    h.ok(
        "write",
        json!({"path": "src/.gitignore", "content": "target\n"}),
    )
    .await;

    let mut services = qilin_tools::session_services();
    services.insert(Arc::new(FileAccess {
        protection: Protection::new().allow_git(true),
    }));
    let allowed = harness_with(services);
    allowed
        .ok(
            "write",
            json!({"path": "pkg/.git/config", "content": "[core]\n"}),
        )
        .await;
    assert_eq!(allowed.read("pkg/.git/config"), "[core]\n");
}
