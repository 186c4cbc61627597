//! `qilin check` on skills written in the published styles: Python blocks that are not meant
//! for `run_code` (an MCP server, classes with inheritance, `async with`, generators) are read
//! as CPython, so only their real syntax errors are findings; blocks that call
//! `sdk.tool.call`, or are marked ```` ```python run_code ````, are held to Monty.

mod common;

use common::{check_path, listing, registry};
use qilin_check::{Finding, Rule};
use std::path::{Path, PathBuf};

/// The published-style skills shared with `qilin-skill`'s tests.
fn published() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../qilin-skill/tests/fixtures/published")
}

fn syntax_findings(findings: &[Finding]) -> Vec<&Finding> {
    findings
        .iter()
        .filter(|finding| finding.rule == Rule::ExampleSyntaxError)
        .collect()
}

/// A skill folder `example` in a temporary folder, its body `body`.
fn skill_with(body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let skill = dir.path().join("example");
    std::fs::create_dir_all(&skill).expect("the skill folder");
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: example\ndescription: An example.\n---\n\n{body}"),
    )
    .expect("SKILL.md");
    dir
}

#[test]
fn cpython_shown_by_published_skills_is_not_held_to_monty() {
    let registry = registry();
    let mut checked = 0;
    for name in [
        "brand-guidelines",
        "notes-server",
        "protein-structure-analysis",
    ] {
        let report = check_path(&registry, &published().join(name));
        assert_eq!(report.skills, 1, "{name} loads");
        assert!(
            syntax_findings(&report.findings).is_empty(),
            "{name}:\n{}",
            listing(&report)
        );
        checked += 1;
    }
    assert_eq!(checked, 3);
    // The same code is beyond Monty, so it was read as CPython, not skipped.
    let server = std::fs::read_to_string(published().join("notes-server/SKILL.md")).unwrap();
    let class = server
        .lines()
        .skip_while(|line| !line.starts_with("class NoteStore"))
        .take(3)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(qilin_check::compile(&class).is_err(), "{class}");
    assert!(qilin_check::parse(&class).is_ok(), "{class}");
}

#[test]
fn a_syntax_error_in_cpython_code_is_still_an_error_at_its_line() {
    let dir = skill_with(
        "Intro.\n\n```python\nimport json\n\ndef load(path:\n    return json.load(path)\n```\n",
    );
    let report = check_path(&registry(), &dir.path().join("example"));
    let found = syntax_findings(&report.findings);
    assert_eq!(found.len(), 1, "{}", listing(&report));
    assert!(
        found[0]
            .message
            .starts_with("a Python example of skill `example` is not valid Python: SyntaxError:"),
        "{}",
        found[0].message
    );
    assert_eq!(
        found[0].location.to_string(),
        format!("{}:12:5", dir.path().join("example/SKILL.md").display())
    );
}

#[test]
fn code_that_calls_the_sdk_or_is_marked_run_code_is_held_to_monty() {
    let body = "```python\nclass Cache(dict):\n    pass\n\nhits = sdk.tool.call(\"lookup\", {\"query\": \"a\"})\nprint(hits[\"matches\"], hits[\"total\"])\n```\n\n\
                The `lookup` tool takes `query` and `limit`.\n\n\
                ```python run_code\ndef pages():\n    yield 1\n```\n\n\
                ```python\ndef pages():\n    yield 1\n```\n";
    let dir = skill_with(body);
    let report = check_path(&registry(), &dir.path().join("example"));
    let found: Vec<(usize, &str)> = syntax_findings(&report.findings)
        .iter()
        .map(|finding| {
            let line = match &finding.location {
                qilin_check::Location::File { line, .. } => line.unwrap_or(0),
                other => panic!("a file location, not {other}"),
            };
            (line, finding.message.as_str())
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                7,
                "a Python example of skill `example` does not compile for `run_code`: \
                 NotImplementedError: The monty syntax parser does not yet support class \
                 inheritance and metaclasses"
            ),
            (
                18,
                "a Python example of skill `example` does not compile for `run_code`: \
                 NotImplementedError: The monty syntax parser does not yet support yield \
                 expressions"
            ),
        ],
        "{}",
        listing(&report)
    );
}
