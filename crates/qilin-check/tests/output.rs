//! The text and JSON forms of a report.

mod common;

use common::{check_path, fixture, registry, registry_with_tally};
use qilin_check::{render_json, render_text};
use serde_json::Value;

#[test]
fn text_is_compiler_style_with_a_summary() {
    let report = check_path(&registry(), &fixture("example-unknown-tool/fail"));
    let text = render_text(&report);
    let place = fixture("example-unknown-tool/fail/.qilin/skills/lookup-guide/SKILL.md");
    let expected = format!(
        "error[Q302]: an example of skill `lookup-guide` calls `sdk.tool.call(\"lokup\", ...)`, but no tool is named `lokup`\n  --> {}:26:9\n  = help: did you mean `lookup`?\n  = rule: example-unknown-tool\n\nerror: 1 error and 0 warnings in 1 tool, 1 skill and 0 agents\n",
        place.display()
    );
    assert_eq!(text, expected);
    let clean = check_path(&registry(), &fixture("example-unknown-tool/pass"));
    assert_eq!(
        render_text(&clean),
        "ok: checked 1 tool, 1 skill and 0 agents: no problems found\n"
    );
}

#[test]
fn json_is_an_array_with_stable_fields() {
    let report = check_path(
        &registry_with_tally(),
        &fixture("code-mode-only-uncovered/fail"),
    );
    let json: Value = serde_json::from_str(&render_json(&report)).expect("valid JSON");
    let findings = json.as_array().expect("an array");
    assert_eq!(findings.len(), 1);
    let finding = &findings[0];
    assert_eq!(finding["code"], "Q111");
    assert_eq!(finding["rule"], "code-mode-only-uncovered");
    assert_eq!(finding["severity"], "error");
    assert_eq!(finding["tool"], "tally");
    assert_eq!(finding["field"], "coverage");
    assert_eq!(finding["location"], "tool tally: coverage");
    assert!(finding["path"].is_null() && finding["line"].is_null());
    assert!(
        finding["help"]
            .as_str()
            .is_some_and(|h| h.contains("sdk.tool.call(\"tally\""))
    );

    let report = check_path(&registry(), &fixture("skill-warning/fail"));
    let json: Value = serde_json::from_str(&render_json(&report)).expect("valid JSON");
    assert_eq!(json[0]["severity"], "warning");
    assert_eq!(json[0]["line"], 4);
    assert!(
        json[0]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("SKILL.md"))
    );
}

#[test]
fn deny_warnings_turns_warnings_into_errors() {
    let mut report = check_path(&registry(), &fixture("agent-warning/fail"));
    assert!(!report.fails(false));
    report.deny_warnings();
    assert_eq!(report.errors(), 1);
    assert!(render_text(&report).starts_with("error[Q406]"));
}
