//! The Test Anything Protocol: `ok 1 - name`, `not ok 2 - name`, `1..N`, with the place of a
//! failure in the diagnostics that follow it (`#   at t/basic.t line 7.`, or a YAML block's
//! `location: 'file:line:col'`, or its `file:` and `line:`), and `# SKIP` / `# TODO`
//! directives.

use super::{Parsed, annotation, strip_ansi, tests_summary};
use qilin_protocol::checks::AnnotationLevel;
use regex::Regex;
use std::sync::LazyLock;

/// `ok 1 - adds` / `not ok 2 - subtracts # TODO later`.
static TEST: LazyLock<Regex> =
    LazyLock::new(|| own_regex(r"^\s*(not ok|ok)\b\s*(\d+)?\s*-?\s*([^#]*)(?:#\s*(\w+)(.*))?$"));

/// `#   at t/basic.t line 7.`
static AT_LINE: LazyLock<Regex> = LazyLock::new(|| own_regex(r"\bat (\S+) line (\d+)"));

/// `location: '/path/test.js:3:7'` (node's test runner).
static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| own_regex(r#"^\s*location:\s*['"]?(.+?):(\d+):(\d+)['"]?\s*$"#));

/// Test::More's diagnostic of a failure, which `prove` may print before the TAP line itself
/// (it goes to stderr): `#   Failed test 'subtracts'` then `#   at t/math.t line 6.`
static PERL_FAILURE: LazyLock<Regex> =
    LazyLock::new(|| own_regex(r"(?m)^#\s+Failed test '(.*)'\s*\n#\s+at (\S+) line (\d+)"));

/// `prove -v`'s header of a test file's output: `t/basic.t .. `.
static PROVE_FILE: LazyLock<Regex> = LazyLock::new(|| own_regex(r"^(\S+\.t) \.\.+\s*"));

/// The patterns are constants of this file, compiled by its tests.
#[expect(clippy::expect_used, reason = "the parser's own constant patterns")]
fn own_regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid constant pattern")
}

/// A failed test waiting for the diagnostics that place it.
struct Failure {
    name: String,
    path: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
}

/// Reads a TAP stream (or several, as `prove` prints them).
pub fn parse(output: &str) -> Parsed {
    let output = strip_ansi(output);
    let mut parsed = Parsed::default();
    let (mut total, mut failed, mut skipped) = (0, 0, 0);
    let mut file: Option<String> = None;
    let mut pending: Option<Failure> = None;
    let placed: Vec<(String, String, Option<u32>)> = PERL_FAILURE
        .captures_iter(&output)
        .map(|caps| {
            (
                caps[1].to_string(),
                caps[2].to_string(),
                caps[3].parse().ok(),
            )
        })
        .collect();
    let flush = |pending: &mut Option<Failure>, parsed: &mut Parsed, file: &Option<String>| {
        if let Some(mut failure) = pending.take() {
            if failure.path.is_none()
                && let Some((_, path, line)) =
                    placed.iter().find(|(name, ..)| *name == failure.name)
            {
                failure.path = Some(path.clone());
                failure.line = *line;
            }
            let path = failure
                .path
                .or_else(|| file.clone())
                .unwrap_or_else(|| "(tap)".to_string());
            parsed.annotations.push(annotation(
                &path,
                failure.line,
                failure.column,
                AnnotationLevel::Error,
                &format!("not ok: {}", failure.name),
            ));
        }
    };
    for raw in output.lines() {
        let mut line = raw.trim_end();
        if let Some(caps) = PROVE_FILE.captures(line) {
            flush(&mut pending, &mut parsed, &file);
            file = Some(caps[1].to_string());
            line = &line[caps[0].len()..];
        }
        if let Some(caps) = TEST.captures(line) {
            flush(&mut pending, &mut parsed, &file);
            let directive = caps.get(4).map(|d| d.as_str().to_ascii_uppercase());
            let name = caps[3].trim().to_string();
            total += 1;
            match directive.as_deref() {
                Some("SKIP") => skipped += 1,
                // A failing TODO test is expected to fail: it fails nothing.
                Some("TODO") => {}
                _ if &caps[1] == "not ok" => {
                    failed += 1;
                    pending = Some(Failure {
                        name,
                        path: None,
                        line: None,
                        column: None,
                    });
                }
                _ => {}
            }
            continue;
        }
        let Some(failure) = pending.as_mut() else {
            continue;
        };
        if let Some(caps) = AT_LINE.captures(line) {
            failure.path.get_or_insert_with(|| caps[1].to_string());
            failure.line = failure.line.or(caps[2].parse().ok());
        } else if let Some(caps) = LOCATION.captures(line) {
            failure.path = Some(caps[1].to_string());
            failure.line = caps[2].parse().ok();
            failure.column = caps[3].parse().ok();
        }
    }
    flush(&mut pending, &mut parsed, &file);
    parsed.failures = failed;
    parsed.summary = Some(tests_summary(total, failed, skipped));
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_style_yaml_locations_are_read() {
        let parsed = parse(
            "TAP version 13\nok 1 - adds\nnot ok 2 - subtracts\n  ---\n  location: '/w/test/a.test.js:7:3'\n  ...\nok 3 - later # SKIP not yet\n1..3\n",
        );
        assert_eq!(parsed.failures, 1);
        assert_eq!(parsed.annotations[0].path, "/w/test/a.test.js");
        assert_eq!(parsed.annotations[0].line, Some(7));
        assert_eq!(
            parsed.summary.as_deref(),
            Some("1 of 3 tests failed, 1 skipped")
        );
    }
}
