//! JUnit XML, as test runners write it: `<testsuites>` of `<testsuite>`s of `<testcase>`s,
//! a failing case holding `<failure>` or `<error>`, a skipped one `<skipped>`. A case's place
//! is its `file` and `line` attributes when it has them, else the first `path:line` its
//! failure text names, else its `classname`.

use super::{Parsed, annotation, one_line, tests_summary};
use qilin_protocol::checks::AnnotationLevel;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use regex::Regex;
use std::sync::LazyLock;

/// `tests/test_math.py:14: AssertionError`, `at Object.<anonymous> (src/a.test.js:5:17)`.
static PLACE: LazyLock<Regex> =
    LazyLock::new(|| own_regex(r"([A-Za-z0-9_./\\-]+\.[A-Za-z0-9]+):(\d+)(?::(\d+))?"));

/// The pattern is a constant of this file, compiled by its tests.
#[expect(clippy::expect_used, reason = "the parser's own constant pattern")]
fn own_regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid constant pattern")
}

/// Whether an element has no children (`<testcase/>`).
enum Kind {
    Empty,
    Other,
}

/// One `<testcase>` being read.
#[derive(Default)]
struct Case {
    name: String,
    classname: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    /// `failure` or `error`, with its `message` attribute, when the case failed.
    failure: Option<(String, String)>,
    /// The failure's text (its stack or assertion).
    text: String,
    skipped: bool,
}

fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|attr| attr.key.as_ref() == name.as_bytes())
        .and_then(|attr| attr.unescape_value().ok().map(|value| value.into_owned()))
}

/// Reads the XML printed in a command's output: from its `<?xml` declaration, or its first
/// `<testsuites` or `<testsuite`.
pub fn parse_from_output(output: &str) -> Parsed {
    let start = ["<?xml", "<testsuites", "<testsuite"]
        .iter()
        .find_map(|mark| output.find(mark));
    match start {
        Some(start) => parse(&output[start..]),
        None => Parsed {
            summary: Some("no JUnit XML in the output".to_string()),
            failures: 1,
            ..Parsed::default()
        },
    }
}

/// Reads a JUnit XML document.
pub fn parse(xml: &str) -> Parsed {
    let mut reader = Reader::from_str(xml);
    let mut parsed = Parsed::default();
    let (mut total, mut failed, mut skipped) = (0, 0, 0);
    let mut case: Option<Case> = None;
    let mut in_failure = false;
    let mut ended = false;
    loop {
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(err) => {
                parsed.summary = Some(format!(
                    "the JUnit XML could not be read at byte {}: {err}",
                    reader.buffer_position()
                ));
                parsed.failures += 1;
                return parsed;
            }
        };
        let event_kind = match &event {
            Event::Empty(_) => Kind::Empty,
            _ => Kind::Other,
        };
        match event {
            Event::Start(element) | Event::Empty(element) => {
                let empty = matches!(event_kind, Kind::Empty);
                match element.name().as_ref() {
                    b"testcase" => {
                        let new = Case {
                            name: attribute(&element, "name").unwrap_or_default(),
                            classname: attribute(&element, "classname"),
                            file: attribute(&element, "file"),
                            line: attribute(&element, "line").and_then(|l| l.parse().ok()),
                            ..Case::default()
                        };
                        if let Some(done) = case.replace(new) {
                            finish(done, &mut parsed, &mut total, &mut failed, &mut skipped);
                        }
                        if empty && let Some(done) = case.take() {
                            finish(done, &mut parsed, &mut total, &mut failed, &mut skipped);
                        }
                    }
                    kind @ (b"failure" | b"error") => {
                        if let Some(case) = case.as_mut() {
                            let kind = String::from_utf8_lossy(kind).into_owned();
                            let message = attribute(&element, "message").unwrap_or_default();
                            case.failure.get_or_insert((kind, message));
                            in_failure = !empty;
                        }
                    }
                    b"skipped" => {
                        if let Some(case) = case.as_mut() {
                            case.skipped = true;
                        }
                    }
                    _ => {}
                }
            }
            Event::Text(text) if in_failure => {
                if let (Some(case), Ok(text)) = (case.as_mut(), text.decode()) {
                    case.text.push_str(&text);
                }
            }
            // An entity in the text (`&lt;`) comes as an event of its own.
            Event::GeneralRef(reference) if in_failure => {
                if let Some(case) = case.as_mut() {
                    if let Ok(Some(c)) = reference.resolve_char_ref() {
                        case.text.push(c);
                    } else if let Ok(name) = reference.decode()
                        && let Some(text) = quick_xml::escape::resolve_predefined_entity(&name)
                    {
                        case.text.push_str(text);
                    }
                }
            }
            Event::CData(text) if in_failure => {
                if let (Some(case), Ok(text)) = (case.as_mut(), text.decode()) {
                    case.text.push_str(&text);
                }
            }
            Event::End(element) => match element.name().as_ref() {
                b"failure" | b"error" => in_failure = false,
                b"testcase" => {
                    if let Some(done) = case.take() {
                        finish(done, &mut parsed, &mut total, &mut failed, &mut skipped);
                    }
                }
                b"testsuites" => ended = true,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
        if ended {
            break;
        }
    }
    if let Some(done) = case.take() {
        finish(done, &mut parsed, &mut total, &mut failed, &mut skipped);
    }
    parsed.failures += failed;
    parsed.summary = Some(tests_summary(total, failed, skipped));
    parsed
}

/// Counts a case that ended, and annotates it when it failed.
fn finish(
    case: Case,
    parsed: &mut Parsed,
    total: &mut usize,
    failed: &mut usize,
    skipped: &mut usize,
) {
    *total += 1;
    if case.skipped && case.failure.is_none() {
        *skipped += 1;
        return;
    }
    let Some((kind, message)) = case.failure else {
        return;
    };
    *failed += 1;
    let found = PLACE.captures(&case.text);
    let (path, line) = match (&case.file, found) {
        (Some(file), _) => (file.clone(), case.line),
        (None, Some(caps)) => (caps[1].to_string(), caps[2].parse().ok()),
        (None, None) => (
            case.classname.clone().unwrap_or_else(|| case.name.clone()),
            case.line,
        ),
    };
    let detail = if message.trim().is_empty() {
        one_line(&case.text)
    } else {
        one_line(&message)
    };
    let test = match &case.classname {
        Some(class) if !class.is_empty() => format!("{class}.{}", case.name),
        _ => case.name.clone(),
    };
    let what = if kind == "error" { "errored" } else { "failed" };
    parsed.annotations.push(annotation(
        &path,
        line,
        None,
        AnnotationLevel::Error,
        &format!("`{test}` {what}: {detail}"),
    ));
}
