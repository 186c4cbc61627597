//! ESLint's JSON report (`eslint -f json`): an array of files, each with its messages
//! (`severity` 2 an error, 1 a warning).

use super::{Parsed, annotation, diagnostics_summary};
use qilin_protocol::checks::AnnotationLevel;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileReport {
    file_path: String,
    #[serde(default)]
    messages: Vec<Message>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    rule_id: Option<String>,
    severity: u8,
    message: String,
    line: Option<u32>,
    column: Option<u32>,
}

/// The report: the first JSON array in the output (a wrapper such as `npx` may print lines
/// before it).
fn report(output: &str) -> Option<Vec<FileReport>> {
    let mut from = 0;
    while let Some(at) = output[from..].find('[') {
        let start = from + at;
        let mut values = serde_json::Deserializer::from_str(&output[start..]).into_iter();
        if let Some(Ok(files)) = values.next() {
            return Some(files);
        }
        from = start + 1;
    }
    None
}

/// Reads ESLint's report.
pub fn parse(output: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let Some(files) = report(output) else {
        parsed.summary = Some("no ESLint JSON report in the output".to_string());
        return parsed;
    };
    let (mut errors, mut warnings) = (0, 0);
    let mut with_problems = 0;
    for file in &files {
        if !file.messages.is_empty() {
            with_problems += 1;
        }
        for message in &file.messages {
            let level = match message.severity {
                2 => {
                    errors += 1;
                    AnnotationLevel::Error
                }
                1 => {
                    warnings += 1;
                    AnnotationLevel::Warning
                }
                _ => AnnotationLevel::Notice,
            };
            let text = match &message.rule_id {
                Some(rule) => format!("{} ({rule})", message.message),
                None => message.message.clone(),
            };
            parsed.annotations.push(annotation(
                &file.file_path,
                message.line,
                message.column,
                level,
                &text,
            ));
        }
    }
    parsed.failures = errors;
    parsed.summary = Some(match diagnostics_summary(errors, warnings) {
        Some(summary) => format!("{summary} in {with_problems} of {} files", files.len()),
        None => format!("no problems in {} files", files.len()),
    });
    parsed
}
