//! The TypeScript compiler: `file(line,col): error TS2322: message` lines (`--pretty false`,
//! the default when not printing to a terminal), or `file:line:col - error TS2322: message`
//! (`--pretty`).

use super::{Parsed, annotation, diagnostics_summary, strip_ansi};
use qilin_protocol::checks::AnnotationLevel;
use regex::Regex;
use std::sync::LazyLock;

/// `src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.`
static PLAIN: LazyLock<Regex> =
    LazyLock::new(|| own_regex(r"^(.+?)\((\d+),(\d+)\): (error|warning|message) (TS\d+): (.*)$"));

/// `src/a.ts:3:7 - error TS2322: Type 'string' is not assignable to type 'number'.`
static PRETTY: LazyLock<Regex> =
    LazyLock::new(|| own_regex(r"^(.+?):(\d+):(\d+) - (error|warning|message) (TS\d+): (.*)$"));

/// `error TS5083: Cannot read file 'tsconfig.json'.` (no file of its own).
static GLOBAL: LazyLock<Regex> = LazyLock::new(|| own_regex(r"^(error|warning) (TS\d+): (.*)$"));

/// The patterns are constants of this file, compiled by its tests.
#[expect(clippy::expect_used, reason = "the parser's own constant patterns")]
fn own_regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid constant pattern")
}

/// Reads the compiler's diagnostics.
pub fn parse(output: &str) -> Parsed {
    let output = strip_ansi(output);
    let mut parsed = Parsed::default();
    let (mut errors, mut warnings) = (0, 0);
    for line in output.lines() {
        let line = line.trim_end();
        let caps = PLAIN.captures(line).or_else(|| PRETTY.captures(line));
        let (path, row, column, kind, code, message) = match &caps {
            Some(caps) => (
                caps[1].to_string(),
                caps[2].parse().ok(),
                caps[3].parse().ok(),
                caps[4].to_string(),
                caps[5].to_string(),
                caps[6].to_string(),
            ),
            None => match GLOBAL.captures(line) {
                Some(caps) => (
                    "tsconfig.json".to_string(),
                    None,
                    None,
                    caps[1].to_string(),
                    caps[2].to_string(),
                    caps[3].to_string(),
                ),
                None => continue,
            },
        };
        let level = match kind.as_str() {
            "error" => {
                errors += 1;
                AnnotationLevel::Error
            }
            "warning" => {
                warnings += 1;
                AnnotationLevel::Warning
            }
            _ => AnnotationLevel::Notice,
        };
        parsed.annotations.push(annotation(
            &path,
            row,
            column,
            level,
            &format!("{code}: {message}"),
        ));
    }
    parsed.failures = errors;
    parsed.summary = Some(match diagnostics_summary(errors, warnings) {
        Some(summary) => summary,
        None => "no type errors".to_string(),
    });
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_are_read() {
        let parsed = parse(
            "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n\
             src/b.ts:1:1 - error TS2304: Cannot find name 'x'.\n",
        );
        assert_eq!(parsed.failures, 2);
        assert_eq!(parsed.annotations[1].path, "src/b.ts");
        assert_eq!(parsed.summary.as_deref(), Some("2 errors"));
        assert_eq!(parse("").summary.as_deref(), Some("no type errors"));
    }
}
