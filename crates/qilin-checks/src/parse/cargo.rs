//! `cargo build|test|clippy --message-format json`: one JSON object a line for the compiler's
//! diagnostics (`reason: compiler-message`), and the test harness's own text around them
//! (`test x ... FAILED`, the panics with their places, `test result: …`).

use super::{Parsed, annotation, diagnostics_summary, one_line, strip_ansi, tests_summary};
use qilin_protocol::checks::AnnotationLevel;
use regex::Regex;
use serde::Deserialize;
use std::sync::LazyLock;

#[derive(Deserialize)]
struct Line {
    reason: String,
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    message: String,
    level: String,
    #[serde(default)]
    spans: Vec<Span>,
}

#[derive(Deserialize)]
struct Span {
    file_name: String,
    line_start: u32,
    column_start: u32,
    is_primary: bool,
}

/// `test result: FAILED. 1 passed; 1 failed; 2 ignored; …`
static RESULT: LazyLock<Regex> =
    LazyLock::new(|| own_regex(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored"));

/// `thread 'tests::it_adds' (4242) panicked at src/lib.rs:12:9:` (recent Rust prints the
/// thread's id; the message follows on the next lines), or the older
/// `thread 'x' panicked at 'message', src/lib.rs:12:9`.
static PANIC: LazyLock<Regex> = LazyLock::new(|| {
    own_regex(r"^thread '([^']+)'(?: \(\d+\))? panicked at (?:'(.*)', )?([^:\s]+):(\d+):(\d+):?$")
});

/// The patterns are constants of this file, compiled by its tests.
#[expect(clippy::expect_used, reason = "the parser's own constant patterns")]
fn own_regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid constant pattern")
}

/// Reads cargo's JSON lines and the test harness's text.
pub fn parse(output: &str) -> Parsed {
    let output = strip_ansi(output);
    let mut parsed = Parsed::default();
    let (mut errors, mut warnings) = (0, 0);
    let (mut passed, mut failed, mut ignored) = (0, 0, 0);
    let mut results = false;
    let lines: Vec<&str> = output.lines().collect();
    for (index, text) in lines.iter().enumerate() {
        let text = text.trim_end();
        if text.starts_with('{') {
            if let Ok(line) = serde_json::from_str::<Line>(text)
                && line.reason == "compiler-message"
                && let Some(message) = line.message
            {
                let level = match message.level.as_str() {
                    "error" | "error: internal compiler error" => AnnotationLevel::Error,
                    "warning" => AnnotationLevel::Warning,
                    _ => AnnotationLevel::Notice,
                };
                let Some(span) = message.spans.iter().find(|span| span.is_primary) else {
                    continue;
                };
                let found = annotation(
                    &span.file_name,
                    Some(span.line_start),
                    Some(span.column_start),
                    level,
                    &message.message,
                );
                // A file compiled for two targets (the library and its tests) repeats its
                // diagnostics: each counts once.
                if parsed.annotations.contains(&found) {
                    continue;
                }
                match level {
                    AnnotationLevel::Error => errors += 1,
                    AnnotationLevel::Warning => warnings += 1,
                    AnnotationLevel::Notice => {}
                }
                parsed.annotations.push(found);
            }
            continue;
        }
        if let Some(caps) = RESULT.captures(text) {
            results = true;
            let number = |i: usize| caps[i].parse::<usize>().unwrap_or(0);
            passed += number(1);
            failed += number(2);
            ignored += number(3);
            continue;
        }
        if let Some(caps) = PANIC.captures(text) {
            let test = &caps[1];
            let message = match caps.get(2) {
                Some(inline) => inline.as_str().to_string(),
                None => lines[index + 1..]
                    .iter()
                    .map(|line| line.trim())
                    .find(|line| !line.is_empty())
                    .unwrap_or("panicked")
                    .to_string(),
            };
            parsed.annotations.push(annotation(
                &caps[3],
                caps[4].parse().ok(),
                caps[5].parse().ok(),
                AnnotationLevel::Error,
                &format!("test `{test}` panicked: {}", one_line(&message)),
            ));
        }
    }
    parsed.failures = errors + failed;
    let tests = results.then(|| tests_summary(passed + failed + ignored, failed, ignored));
    let diagnostics = diagnostics_summary(errors, warnings);
    parsed.summary = match (tests, diagnostics) {
        (Some(tests), Some(diagnostics)) => Some(format!("{tests}; {diagnostics}")),
        (Some(tests), None) => Some(tests),
        (None, Some(diagnostics)) => Some(diagnostics),
        (None, None) => None,
    };
    if parsed.summary.is_none() && output.lines().any(|l| l.contains("\"build-finished\"")) {
        parsed.summary = Some("built with no errors or warnings".to_string());
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patterns_compile_and_read_both_panic_forms() {
        let new = PANIC
            .captures("thread 'tests::adds' panicked at src/lib.rs:12:9:")
            .unwrap();
        assert_eq!(
            (&new[1], &new[3], &new[4]),
            ("tests::adds", "src/lib.rs", "12")
        );
        let old = PANIC
            .captures("thread 'main' panicked at 'boom', src/main.rs:3:5")
            .unwrap();
        assert_eq!(&old[2], "boom");
        assert!(RESULT.is_match(
            "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"
        ));
    }
}
