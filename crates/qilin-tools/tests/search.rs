//! `grep` and `glob` over a small tree with a `.gitignore`.

mod common;

use common::{Harness, harness};
use qilin_protocol::ErrorCode;
use serde_json::json;
use std::time::{Duration, SystemTime};

fn tree() -> Harness {
    let h = harness();
    h.write(".gitignore", "target/\n*.log\n");
    h.write(
        "src/main.rs",
        "fn main() {\n    let answer = compute();\n    println!(\"{answer}\");\n}\n",
    );
    h.write(
        "src/lib.rs",
        "pub fn compute() -> u32 {\n    42\n}\n// TODO: Compute more\n",
    );
    h.write(
        "docs/guide.md",
        "# Guide\nCall compute() to get the answer.\n",
    );
    h.write("target/debug/out.rs", "fn compute() {}\n");
    h.write("run.log", "compute called\n");
    h.write("data.bin", b"compute\0\x01\x02");
    h
}

#[tokio::test]
async fn files_with_matches_is_the_default_and_ignored_and_binary_files_are_skipped() {
    let h = tree();
    let (output, text) = h.ok("grep", json!({"pattern": "compute"})).await;
    assert_eq!(text, "docs/guide.md\nsrc/lib.rs\nsrc/main.rs\n");
    assert_eq!(output["mode"], "files_with_matches");
    assert_eq!(output["total_files"], 3);
    assert_eq!(output["truncated"], false);
}

#[tokio::test]
async fn content_mode_shows_numbered_lines_with_context() {
    let h = tree();
    let (output, text) = h
        .ok(
            "grep",
            json!({"pattern": "compute\\(\\)", "path": "src", "output_mode": "content", "context": 1}),
        )
        .await;
    assert_eq!(
        text,
        "src/lib.rs:1:pub fn compute() -> u32 {\nsrc/lib.rs-2-    42\n\
         src/main.rs-1-fn main() {\nsrc/main.rs:2:    let answer = compute();\nsrc/main.rs-3-    println!(\"{answer}\");\n"
    );
    assert_eq!(output["total_matches"], 2);
    assert_eq!(
        output["files"][1]["lines"][1],
        json!({"line": 2, "text": "    let answer = compute();", "context": false})
    );
}

#[tokio::test]
async fn count_mode_glob_filter_and_case_insensitivity() {
    let h = tree();
    let (_, text) = h
        .ok(
            "grep",
            json!({"pattern": "COMPUTE", "case_insensitive": true, "output_mode": "count", "glob": "*.rs"}),
        )
        .await;
    assert_eq!(text, "src/lib.rs:2\nsrc/main.rs:1\n");
    let (output, text) = h.ok("grep", json!({"pattern": "COMPUTE"})).await;
    assert_eq!(output["total_files"], 0);
    assert_eq!(text, "No matches.");
}

#[tokio::test]
async fn the_head_limit_cuts_and_says_so() {
    let h = harness();
    let body: String = (0..50).map(|i| format!("match {i}\n")).collect();
    h.write("many.txt", body);
    let (output, text) = h
        .ok(
            "grep",
            json!({"pattern": "match", "output_mode": "content", "head_limit": 5}),
        )
        .await;
    assert_eq!(output["truncated"], true);
    assert_eq!(output["files"][0]["lines"].as_array().unwrap().len(), 5);
    assert!(
        text.contains("[results cut: showing 5 of 50 matching lines"),
        "{text}"
    );
}

#[tokio::test]
async fn bad_patterns_globs_and_paths_are_named() {
    let h = tree();
    let message = h
        .err(
            "grep",
            json!({"pattern": "fn (main"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`pattern` is not a valid regular expression"),
        "{message}"
    );
    let message = h
        .err(
            "grep",
            json!({"pattern": "x", "glob": "src/{a"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`glob` `src/{a` is not a valid glob"),
        "{message}"
    );
    let message = h
        .err(
            "grep",
            json!({"pattern": "x", "path": "nowhere"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("`nowhere` does not exist"), "{message}");
}

fn touch(h: &Harness, relative: &str, seconds_ago: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(h.path(relative))
        .unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago))
        .unwrap();
}

#[tokio::test]
async fn glob_lists_matches_newest_first_and_respects_gitignore() {
    let h = tree();
    touch(&h, "src/main.rs", 300);
    touch(&h, "src/lib.rs", 10);
    let (output, text) = h.ok("glob", json!({"pattern": "*.rs"})).await;
    assert_eq!(text, "src/lib.rs\nsrc/main.rs\n");
    assert_eq!(output["total"], 2);
    let (_, text) = h
        .ok("glob", json!({"pattern": "**/*.md", "path": "docs"}))
        .await;
    assert_eq!(text, "docs/guide.md\n");
    let (_, text) = h.ok("glob", json!({"pattern": "src/*.rs"})).await;
    assert_eq!(text, "src/lib.rs\nsrc/main.rs\n");
    let message = h
        .err(
            "glob",
            json!({"pattern": "[z-a]"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("is not a valid glob"), "{message}");
    let message = h
        .err(
            "glob",
            json!({"pattern": "*", "path": "src/lib.rs"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("is not a folder"), "{message}");
}

#[tokio::test]
async fn glob_caps_its_results_with_a_note() {
    let h = harness();
    for i in 0..120 {
        h.write(&format!("f/{i:03}.txt"), "x");
    }
    let (output, text) = h.ok("glob", json!({"pattern": "*.txt"})).await;
    assert_eq!(output["files"].as_array().unwrap().len(), 100);
    assert_eq!(output["total"], 120);
    assert_eq!(output["truncated"], true);
    assert!(text.contains("[showing the 100 most recently modified of 120 matching files"));
}
