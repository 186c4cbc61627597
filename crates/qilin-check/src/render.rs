//! What `qilin check` prints: compiler-style text, or a JSON array of findings.

use crate::{Finding, Report};
use qilin_skill::Severity;

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}

fn finding_text(out: &mut String, finding: &Finding) {
    let severity = match finding.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    out.push_str(&format!(
        "{severity}[{}]: {}\n  --> {}\n  = help: {}\n  = rule: {}\n\n",
        finding.rule.code(),
        finding.message,
        finding.location,
        finding.help,
        finding.rule.name(),
    ));
}

/// The report as text: each finding as
/// `error[Q201]: message` / `  --> path:line:col` / `  = help: ...` / `  = rule: name`,
/// then a summary line.
pub fn render_text(report: &Report) -> String {
    let mut out = String::new();
    for finding in &report.findings {
        finding_text(&mut out, finding);
    }
    let checked = match report.workflows {
        0 => format!(
            "{}, {} and {}",
            plural(report.tools, "tool"),
            plural(report.skills, "skill"),
            plural(report.agents, "agent"),
        ),
        workflows => format!(
            "{}, {}, {} and {}",
            plural(report.tools, "tool"),
            plural(report.skills, "skill"),
            plural(report.agents, "agent"),
            plural(workflows, "workflow"),
        ),
    };
    if report.findings.is_empty() {
        out.push_str(&format!("ok: checked {checked}: no problems found\n"));
    } else {
        out.push_str(&format!(
            "{}: {} and {} in {checked}\n",
            if report.errors() > 0 {
                "error"
            } else {
                "warning"
            },
            plural(report.errors(), "error"),
            plural(report.warnings(), "warning"),
        ));
    }
    out
}

/// The report as a JSON array of findings (see [`crate::JsonFinding`] for the fields).
pub fn render_json(report: &Report) -> String {
    let findings: Vec<_> = report.findings.iter().map(Finding::to_json).collect();
    serde_json::to_string_pretty(&findings).unwrap_or_else(|_| "[]".to_string())
}
