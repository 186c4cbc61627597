//! The spill-notice test vectors the web client shares: `web/fixtures/spill-notice-vectors.json`.
//!
//! Every expectation in the file is computed here by `spill_notice` and `parse_spill_notice`
//! themselves, so the file says what the runtime does; the TypeScript tests of
//! `@qilin-agent/spill-policy` read the same file, and this test fails when it is stale.
//! Regenerate with `QILIN_UPDATE_FIXTURES=1 cargo test -p qilin-protocol --test spill_notice_vectors`.

use qilin_protocol::{parse_spill_notice, spill_notice};
use serde_json::{Value, json};
use std::path::PathBuf;

/// Notices as the runtime writes them: a path and a size.
const WRITTEN: &[(&str, u64)] = &[
    ("/data/s1/spill/call_7.txt", 123_456),
    ("/tmp/my dir/bytes saved to/x.txt", 9),
    ("/home/ana/項目/.qilin/sessions/s/spill/call_1.1.txt", 0),
    ("relative/spill.txt", 9_007_199_254_740_991),
    ("/x - read that file for the rest]/y.txt", 30_001),
];

/// Texts that end (or seem to end) with a notice, each with a name saying what it checks.
fn texts() -> Vec<(&'static str, String)> {
    let notice = spill_notice("/data/s1/spill/call_7.txt", 123_456);
    vec![
        ("notice alone", notice.clone()),
        ("after output, with a final line break", format!("head\n[... 10 bytes omitted ...]\ntail\n{notice}\n")),
        ("followed by blank lines and spaces", format!("out\n{notice}\n\n  \t\n")),
        ("lines ending in CR LF", format!("out\r\n{notice}\r\n")),
        ("a path holding the separator words", format!("x\n{}", spill_notice("/a bytes saved to b.txt", 5))),
        ("a size with a plus sign", "[qilin: output cut; all +5 bytes saved to /x - read that file for the rest]".to_string()),
        ("a size with leading zeros", "[qilin: output cut; all 007 bytes saved to /x - read that file for the rest]".to_string()),
        ("the largest size", format!("[qilin: output cut; all {} bytes saved to /x - read that file for the rest]", u64::MAX)),
        ("empty text", String::new()),
        ("ordinary output", "all fine\n[exit code 0, 0.1 s]".to_string()),
        ("a notice followed by more output", format!("{notice}\nmore output")),
        ("a notice followed by the shell's exit marker", format!("out\n{notice}\n[exit code 0, 0.1 s]")),
        ("a size that is not a number", "[qilin: output cut; all many bytes saved to /x - read that file for the rest]".to_string()),
        ("a negative size", "[qilin: output cut; all -5 bytes saved to /x - read that file for the rest]".to_string()),
        ("a size past 64 bits", "[qilin: output cut; all 18446744073709551616 bytes saved to /x - read that file for the rest]".to_string()),
        ("a size with a space", "[qilin: output cut; all  5 bytes saved to /x - read that file for the rest]".to_string()),
        ("an empty path", "[qilin: output cut; all 5 bytes saved to  - read that file for the rest]".to_string()),
        ("indented", format!("  {notice}")),
        ("the opening and closing words sharing a space", "[qilin: output cut; all - read that file for the rest]".to_string()),
        ("the closing words missing", "[qilin: output cut; all 5 bytes saved to /x]".to_string()),
        ("the failure note when the spill could not be written", "[qilin: output cut; the whole output could not be saved to /x: denied]".to_string()),
        ("another tool's marker", "[output truncated: 5 bytes]".to_string()),
    ]
}

fn vectors() -> Value {
    let written: Vec<Value> = WRITTEN
        .iter()
        .map(|(path, total)| {
            json!({"path": path, "totalBytes": total.to_string(), "notice": spill_notice(path, *total)})
        })
        .collect();
    let recognised: Vec<Value> = texts()
        .into_iter()
        .map(|(name, text)| {
            let notice = parse_spill_notice(&text)
                .map(|n| json!({"path": n.path, "totalBytes": n.total_bytes.to_string()}));
            json!({"name": name, "text": text, "notice": notice})
        })
        .collect();
    json!({
        "about": "Written by crates/qilin-protocol/tests/spill_notice_vectors.rs from qilin_protocol::spill_notice and parse_spill_notice; do not edit. Sizes are decimal strings so that 64-bit values stay exact.",
        "written": written,
        "recognised": recognised,
    })
}

#[test]
fn spill_notice_vectors_are_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../web/fixtures/spill-notice-vectors.json");
    let fresh = serde_json::to_string_pretty(&vectors()).unwrap() + "\n";
    if std::env::var_os("QILIN_UPDATE_FIXTURES").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == fresh,
        "{} is stale: run `QILIN_UPDATE_FIXTURES=1 cargo test -p qilin-protocol --test spill_notice_vectors` and commit it",
        path.display()
    );
}

#[test]
fn the_vectors_cover_both_answers() {
    let all = vectors();
    let recognised = all["recognised"].as_array().unwrap();
    let found = recognised.iter().filter(|v| !v["notice"].is_null()).count();
    assert!(found >= 5, "too few recognised texts: {found}");
    assert!(recognised.len() - found >= 10, "too few rejected texts");
    for written in all["written"].as_array().unwrap() {
        let text = written["notice"].as_str().unwrap();
        let parsed = parse_spill_notice(text).expect("a written notice is recognised");
        assert_eq!(parsed.path, written["path"].as_str().unwrap());
    }
}
