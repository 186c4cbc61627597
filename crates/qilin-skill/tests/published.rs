//! Skills written in the styles the published collections use (`tests/fixtures/published`,
//! in Qilin's own words): each loads, or is refused, as the Agent Skills client guide asks —
//! warn and load what is usable, refuse only a skill with no description or front matter no
//! parser can read — with one diagnostic per leniency, at its file and line.
//!
//! The folders: `brand-guidelines` (a license pointing at a file, a scripts folder, CPython
//! in its Markdown), `release-notes` (a short description under `metadata`, an `agents/`
//! folder), `test-first-debugging` ("Use when: ..." with an unquoted colon),
//! `react-render-rules` (author and version metadata, comma-separated `allowed-tools`, a
//! `rules/` folder), `azure-cost-report` (a display name with capitals and spaces),
//! `csv-cleaner` (a name that differs from its folder), `protein-structure-analysis` (a
//! description over 1,024 characters, with an unquoted colon too), `notes-server` (an MCP server in CPython beside a
//! `run_code` example), `no-description` and `broken-front-matter` (refused).

use qilin_skill::{Diagnostic, DiagnosticKind, Severity, SkillDiscovery, discover, skill_roots};
use std::path::{Path, PathBuf};

fn published() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/published")
}

fn load() -> SkillDiscovery {
    discover(&skill_roots(
        Path::new("/nonexistent"),
        None,
        &[published()],
    ))
}

/// `folder/SKILL.md:LINE severity kind` for a diagnostic, the path relative to the corpus.
fn summary(diagnostic: &Diagnostic) -> String {
    let path = diagnostic
        .path
        .strip_prefix(published())
        .unwrap_or(&diagnostic.path)
        .display()
        .to_string();
    let severity = match diagnostic.severity {
        Severity::Warning => "warning",
        Severity::Error => "error",
    };
    let line = diagnostic
        .line
        .map_or(String::new(), |line| format!(":{line}"));
    format!("{path}{line} {severity} {:?}", diagnostic.kind)
}

#[test]
fn published_styles_load_with_one_warning_per_leniency_and_only_two_are_refused() {
    let found = load();
    assert_eq!(
        found.skills.names().collect::<Vec<_>>(),
        [
            "Azure Cost Report",
            "brand-guidelines",
            "csv-data-cleaner",
            "notes-server",
            "protein-structure-analysis",
            "react-render-rules",
            "release-notes",
            "test-first-debugging",
        ]
    );
    let mut summaries: Vec<String> = found.diagnostics.iter().map(summary).collect();
    let broken = summaries
        .iter()
        .position(|s| s.starts_with("broken-front-matter/SKILL.md:"))
        .expect("the broken front matter is reported");
    assert!(
        summaries[broken].ends_with(" error InvalidYaml"),
        "{}",
        summaries[broken]
    );
    summaries.remove(broken);
    assert_eq!(
        summaries,
        [
            "azure-cost-report/SKILL.md:2 warning NonstandardName",
            "csv-cleaner/SKILL.md:2 warning NameNotFolder",
            "no-description/SKILL.md:1 error InvalidYaml",
            "protein-structure-analysis/SKILL.md:3 warning UnquotedColon",
            "protein-structure-analysis/SKILL.md:3 warning LongDescription",
            "test-first-debugging/SKILL.md:3 warning UnquotedColon",
        ]
    );
}

#[test]
fn each_leniency_says_what_was_done_and_what_the_format_wants() {
    let found = load();
    let message = |kind: DiagnosticKind| {
        found
            .diagnostics
            .iter()
            .filter(|d| !d.path.starts_with(published().join("broken-front-matter")))
            .find(|d| d.kind == kind)
            .map(|d| d.message.clone())
            .unwrap_or_else(|| panic!("no {kind:?} in {:#?}", found.diagnostics))
    };
    assert_eq!(
        message(DiagnosticKind::NonstandardName),
        "`name: Azure Cost Report` contains `A`; the skill loads under that name, but the \
         format wants 1 to 64 characters of a-z, 0-9 and single hyphens inside, like `pdf-tools`"
    );
    assert!(message(DiagnosticKind::NameNotFolder).starts_with(
        "`name: csv-data-cleaner` differs from the skill's folder `csv-cleaner`; the skill \
             loads as `csv-data-cleaner`"
    ));
    assert!(
        message(DiagnosticKind::LongDescription).contains("over the format's 1024"),
        "{}",
        message(DiagnosticKind::LongDescription)
    );
    assert!(message(DiagnosticKind::UnquotedColon).starts_with(
        "the value of `description` holds `: ` without quotes, which is not valid YAML"
    ));
    assert!(
        message(DiagnosticKind::InvalidYaml).contains("has no `description`"),
        "{}",
        message(DiagnosticKind::InvalidYaml)
    );
}

#[test]
fn front_matter_no_fallback_can_read_is_refused_at_the_files_own_lines() {
    let found = load();
    let error = found
        .diagnostics
        .iter()
        .find(|d| d.path.starts_with(published().join("broken-front-matter")))
        .expect("an error");
    assert_eq!(
        error.to_string(),
        format!(
            "{}:5: error: found unexpected end of stream, while scanning a quoted scalar at \
             line 3 column 14 (column 1)",
            error.path.display()
        )
    );
}

#[test]
fn what_the_lenient_loads_read_is_what_the_author_wrote() {
    let found = load();
    let skill = |name: &str| found.skills.get(name).expect(name);
    assert_eq!(
        skill("test-first-debugging").description,
        "Use when: a test fails and the cause is not obvious - reproduce it in the smallest \
         test first, then fix the code, never the test"
    );
    assert_eq!(
        skill("react-render-rules").allowed_tools,
        ["Read", "Grep", "Bash(npx eslint:*)"]
    );
    assert_eq!(
        skill("react-render-rules").files,
        ["rules/keys.md", "rules/memo.md"]
    );
    assert_eq!(
        skill("release-notes").metadata["short-description"],
        "Draft release notes from merged changes"
    );
    assert_eq!(
        skill("Azure Cost Report").description,
        "Summarise an Azure subscription's spending by resource group and month, and flag what \
         grew fastest."
    );
    assert!(skill("protein-structure-analysis").description.len() > 1024);
    assert_eq!(
        skill("brand-guidelines").license.as_deref(),
        Some("Complete terms in LICENSE.txt")
    );
    assert!(
        skill("csv-data-cleaner")
            .dir
            .ends_with("published/csv-cleaner")
    );
}
