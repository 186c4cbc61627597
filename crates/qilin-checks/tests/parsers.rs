//! The parsers over output recorded from the real tools (see `fixtures/README.md`).

use qilin_checks::parse::{ParseInput, Parsed, parse};
use qilin_protocol::checks::AnnotationLevel;
use qilin_skill::CheckParser;
use std::path::Path;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn read(parser: CheckParser, output: &str, workspace: &str) -> Parsed {
    parse(
        parser,
        &ParseInput {
            output,
            report: None,
            workspace: Path::new(workspace),
        },
    )
}

/// `path:line:column level message` for each annotation.
fn places(parsed: &Parsed) -> Vec<String> {
    parsed
        .annotations
        .iter()
        .map(|a| {
            format!(
                "{}:{}:{} {} {}",
                a.path,
                a.line.map(|n| n.to_string()).unwrap_or_default(),
                a.column.map(|n| n.to_string()).unwrap_or_default(),
                a.level.as_str(),
                a.message
            )
        })
        .collect()
}

#[test]
fn cargo_test_json_gives_the_warning_the_failing_test_and_the_counts() {
    let parsed = read(CheckParser::Cargo, &fixture("cargo-test.txt"), "/tmp/tiny");
    let places = places(&parsed);
    assert!(
        places.contains(&"src/lib.rs:2:9 warning unused variable: `unused`".to_string()),
        "{places:#?}"
    );
    assert!(
        places.contains(
            &"src/lib.rs:17:9 error test `tests::subtracts` panicked: assertion `left == right` failed: two minus one"
                .to_string()
        ),
        "{places:#?}"
    );
    assert!(
        places
            .iter()
            .all(|p| !p.contains("unused") || p.contains("warning"))
    );
    assert_eq!(parsed.failures, 1, "one failed test, no compile error");
    assert_eq!(
        parsed.summary.as_deref(),
        Some("1 of 2 tests failed; 1 warning")
    );
}

#[test]
fn junit_xml_gives_the_failing_case_at_the_place_its_stack_names() {
    let parsed = read(
        CheckParser::Junit,
        &fixture("node-junit.xml"),
        "/tmp/noderec",
    );
    assert_eq!(parsed.failures, 1);
    assert_eq!(
        parsed.summary.as_deref(),
        Some("1 of 3 tests failed, 1 skipped")
    );
    assert_eq!(
        places(&parsed),
        [
            "math.test.js:9: error `test.subtracts` failed: Expected values to be strictly equal:1 !== 3"
        ]
    );
}

#[test]
fn junit_xml_from_a_report_file_is_read_the_same() {
    let xml = fixture("node-junit.xml");
    let parsed = parse(
        CheckParser::Junit,
        &ParseInput {
            output: "the runner printed only this",
            report: Some(&xml),
            workspace: Path::new("/tmp/noderec"),
        },
    );
    assert_eq!(parsed.failures, 1);
    let missing = read(CheckParser::Junit, "no xml here", "/tmp");
    assert_eq!(
        missing.summary.as_deref(),
        Some("no JUnit XML in the output")
    );
    assert!(
        missing.failures > 0,
        "a JUnit check with no report cannot pass"
    );
}

#[test]
fn tap_from_prove_places_the_failure_from_its_diagnostics() {
    let parsed = read(CheckParser::Tap, &fixture("prove-v.txt"), "/tmp/taprec");
    assert_eq!(parsed.failures, 1);
    assert_eq!(
        parsed.summary.as_deref(),
        Some("1 of 3 tests failed, 1 skipped")
    );
    assert_eq!(places(&parsed), ["t/math.t:6: error not ok: subtracts"]);
}

#[test]
fn tap_from_node_places_the_failure_from_its_yaml_block() {
    let parsed = read(CheckParser::Tap, &fixture("node-tap.txt"), "/tmp/noderec");
    assert_eq!(parsed.failures, 1);
    assert_eq!(
        places(&parsed),
        ["math.test.js:8:1 error not ok: subtracts"]
    );
}

#[test]
fn tsc_errors_are_read_with_their_codes() {
    let parsed = read(CheckParser::Tsc, &fixture("tsc.txt"), "/tmp/tscrec");
    assert_eq!(parsed.failures, 2);
    assert_eq!(parsed.summary.as_deref(), Some("2 errors"));
    assert_eq!(
        places(&parsed),
        [
            "bad.ts:2:7 error TS2322: Type 'string' is not assignable to type 'number'.",
            "bad.ts:6:10 error TS2552: Cannot find name 'summ'. Did you mean 'sum'?"
        ]
    );
}

#[test]
fn eslint_json_is_read_with_paths_made_relative() {
    let parsed = read(
        CheckParser::Eslint,
        &fixture("eslint.json"),
        "/work/wt/checks/web",
    );
    assert_eq!(parsed.failures, 2);
    assert_eq!(parsed.summary.as_deref(), Some("2 errors in 1 of 1 files"));
    assert_eq!(
        places(&parsed),
        [
            "app/src/lint-probe.ts:3:9 error 'unused' is assigned a value but never used. (@typescript-eslint/no-unused-vars)",
            "app/src/lint-probe.ts:8:5 error Unexpected 'debugger' statement. (no-debugger)"
        ]
    );
    assert!(
        parsed
            .annotations
            .iter()
            .all(|a| a.level == AnnotationLevel::Error)
    );
}

#[test]
fn plain_reads_nothing() {
    let parsed = read(CheckParser::Plain, &fixture("tsc.txt"), "/tmp");
    assert_eq!(parsed, Parsed::default());
}
