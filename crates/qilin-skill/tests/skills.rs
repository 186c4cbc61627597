//! Skill discovery: what loads, and the diagnostic each kind of broken skill gives.

mod common;

use common::{discover_workspace, skill_md, write_files, write_skill};
use qilin_skill::{Diagnostic, DiagnosticKind, Severity, discover, skill_roots};
use std::path::Path;

fn only_error(diagnostics: &[Diagnostic]) -> &Diagnostic {
    let errors: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "expected one error, got {diagnostics:#?}");
    errors[0]
}

#[test]
fn yaml_quoting_block_scalars_and_colons_in_values_load() {
    let ws = tempfile::tempdir().unwrap();
    write_files(
        &ws.path().join(".qilin/skills/csv-tools"),
        &[(
            "SKILL.md",
            "---\nname: \"csv-tools\"\ndescription: >\n  Clean CSV files: fix quoting,\n  drop empty rows.\nlicense: 'MIT'\nmetadata:\n  note: |\n    line one\n    line two\n  version: 2\n---\n\n# Body: with a colon\n",
        )],
    );
    let found = discover_workspace(ws.path());
    assert!(found.diagnostics.is_empty(), "{:#?}", found.diagnostics);
    let skill = found.skills.get("csv-tools").unwrap();
    assert_eq!(
        skill.description,
        "Clean CSV files: fix quoting, drop empty rows."
    );
    assert_eq!(skill.license.as_deref(), Some("MIT"));
    assert_eq!(skill.metadata["note"], "line one\nline two\n");
    assert_eq!(skill.metadata["version"], "2");
    assert_eq!(skill.body, "# Body: with a colon\n");
}

#[test]
fn a_file_without_front_matter_is_an_error_on_line_one() {
    let ws = tempfile::tempdir().unwrap();
    write_files(
        &ws.path().join(".qilin/skills/plain"),
        &[("SKILL.md", "# Just Markdown\n")],
    );
    let found = discover_workspace(ws.path());
    let error = only_error(&found.diagnostics);
    assert!(error.path.ends_with("plain/SKILL.md"));
    assert_eq!(error.line, Some(1));
    assert!(error.message.contains("no front matter"), "{error}");
    assert!(found.skills.is_empty());
}

#[test]
fn broken_yaml_names_the_line_in_the_skill_file() {
    let ws = tempfile::tempdir().unwrap();
    write_files(
        &ws.path().join(".qilin/skills/broken"),
        &[(
            "SKILL.md",
            "---\nname: broken\ndescription: fine\nlicense: \"unterminated\n---\nbody\n",
        )],
    );
    let found = discover_workspace(ws.path());
    let error = only_error(&found.diagnostics);
    let line = error.line.expect("a YAML error has a line");
    assert!((4..=5).contains(&line), "line {line}: {error}");
    assert!(
        error
            .to_string()
            .contains(&format!("SKILL.md:{line}: error:"))
    );
}

#[test]
fn a_wrongly_typed_value_names_its_line_offset_by_the_opening_delimiter() {
    let ws = tempfile::tempdir().unwrap();
    write_files(
        &ws.path().join(".qilin/skills/typed"),
        &[(
            "SKILL.md",
            "---\nname: typed\ndescription:\n  - not\n  - a string\n---\n",
        )],
    );
    let error = only_error(&discover_workspace(ws.path()).diagnostics).clone();
    assert_eq!(error.line, Some(3), "{error}");
    assert!(
        error.message.contains("`description` must be text"),
        "{error}"
    );
}

/// The one warning of a skill that loaded.
fn only_warning(found: &qilin_skill::SkillDiscovery) -> &Diagnostic {
    let [warning] = found.diagnostics.as_slice() else {
        panic!("expected one warning, got {:#?}", found.diagnostics);
    };
    assert_eq!(warning.severity, Severity::Warning, "{warning}");
    warning
}

#[test]
fn a_name_that_differs_from_its_folder_loads_under_it_with_a_warning_at_the_name_line() {
    let ws = tempfile::tempdir().unwrap();
    write_files(
        &ws.path().join(".qilin/skills/pdf-tools"),
        &[("SKILL.md", "---\ndescription: PDFs\nname: pdf\n---\n")],
    );
    let found = discover_workspace(ws.path());
    assert!(found.skills.get("pdf").is_some());
    let warning = only_warning(&found);
    assert_eq!(warning.kind, DiagnosticKind::NameNotFolder);
    assert_eq!(warning.line, Some(3));
    assert!(warning.message.contains("folder `pdf-tools`"), "{warning}");
}

#[test]
fn an_over_long_description_loads_whole_with_a_warning_that_gives_the_limit() {
    let ws = tempfile::tempdir().unwrap();
    write_skill(ws.path(), "wordy", &"x".repeat(1025), "body");
    let found = discover_workspace(ws.path());
    assert_eq!(found.skills.get("wordy").unwrap().description.len(), 1025);
    let warning = only_warning(&found);
    assert_eq!(warning.kind, DiagnosticKind::LongDescription);
    assert_eq!(warning.line, Some(3));
    assert!(warning.message.contains("1025 characters"), "{warning}");
    assert!(
        warning.message.contains("over the format's 1024"),
        "{warning}"
    );
}

#[test]
fn unknown_keys_are_warnings_with_their_line_and_the_skill_still_loads() {
    let ws = tempfile::tempdir().unwrap();
    write_files(
        &ws.path().join(".qilin/skills/extra"),
        &[(
            "SKILL.md",
            "---\nname: extra\ndescription: has extras\nversion: 3\nlicence: MIT\n---\nbody\n",
        )],
    );
    let found = discover_workspace(ws.path());
    assert!(found.skills.get("extra").is_some());
    let warnings: Vec<&Diagnostic> = found.diagnostics.iter().collect();
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(warnings.iter().all(|w| w.severity == Severity::Warning));
    assert_eq!(warnings[0].line, Some(4));
    assert!(warnings[0].message.contains("unknown key `version`"));
    assert_eq!(warnings[1].line, Some(5));
    assert!(
        warnings[1].message.contains("did you mean `license`?"),
        "{}",
        warnings[1]
    );
}

#[test]
fn one_broken_skill_never_hides_the_others() {
    let ws = tempfile::tempdir().unwrap();
    write_skill(ws.path(), "alpha", "first", "a");
    write_files(
        &ws.path().join(".qilin/skills/beta"),
        &[("SKILL.md", "no front matter")],
    );
    write_skill(ws.path(), "gamma", "third", "c");
    std::fs::create_dir_all(ws.path().join(".qilin/skills/notes")).unwrap();
    let found = discover_workspace(ws.path());
    assert_eq!(found.skills.names().collect::<Vec<_>>(), ["alpha", "gamma"]);
    assert!(found.has_errors());
    let folder_warning = found
        .diagnostics
        .iter()
        .find(|d| d.path.ends_with("notes"))
        .unwrap();
    assert!(folder_warning.message.contains("no SKILL.md"));
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_in_a_skill_folder_is_a_clear_warning_not_a_hang() {
    let ws = tempfile::tempdir().unwrap();
    let dir = write_skill(ws.path(), "loopy", "has a loop", "body");
    write_files(&dir, &[("reference/a.md", "A")]);
    std::os::unix::fs::symlink("..", dir.join("reference/again")).unwrap();
    let found = discover_workspace(ws.path());
    let skill = found.skills.get("loopy").expect("the skill still loads");
    assert_eq!(skill.files, ["reference/a.md"]);
    let warning = found
        .diagnostics
        .iter()
        .find(|d| d.message.contains("symlink loop"))
        .unwrap_or_else(|| panic!("no loop warning in {:#?}", found.diagnostics));
    assert!(warning.message.contains("reference/again"), "{warning}");
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_skill_folder_is_neither_listed_nor_followed() {
    let ws = tempfile::tempdir().unwrap();
    let dir = write_skill(ws.path(), "leaky", "links out", "body");
    let outside = tempfile::tempdir().unwrap();
    write_files(outside.path(), &[("secret.txt", "top secret")]);
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.join("secret.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("elsewhere")).unwrap();
    let found = discover_workspace(ws.path());
    let skill = found.skills.get("leaky").unwrap();
    assert!(skill.files.is_empty(), "{:?}", skill.files);
    let warnings = found
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("outside the skill folder"))
        .count();
    assert_eq!(warnings, 2, "{:#?}", found.diagnostics);
}

#[test]
fn the_workspace_root_wins_over_home_and_explicit_roots_and_says_so() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    write_skill(ws.path(), "shared", "from the workspace", "ws");
    write_skill(home.path(), "shared", "from home", "home");
    write_skill(home.path(), "personal", "only at home", "home");
    write_files(
        &extra.path().join("more"),
        &[("SKILL.md", &skill_md("more", "from --skills", "x"))],
    );
    let roots = skill_roots(ws.path(), Some(home.path()), &[extra.path().to_path_buf()]);
    let found = discover(&roots);
    assert_eq!(
        found.skills.names().collect::<Vec<_>>(),
        ["more", "personal", "shared"]
    );
    assert_eq!(
        found.skills.get("shared").unwrap().description,
        "from the workspace"
    );
    let [warning] = found.diagnostics.as_slice() else {
        panic!("expected one warning: {:#?}", found.diagnostics);
    };
    assert_eq!(warning.severity, Severity::Warning);
    assert!(warning.path.starts_with(home.path()));
    assert!(
        warning
            .message
            .contains(&ws.path().join(".qilin/skills/shared").display().to_string()),
        "{warning}"
    );
}

#[test]
fn a_missing_explicit_root_is_an_error_but_missing_default_roots_are_not() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let missing = ws.path().join("no-such-dir");
    let found = discover(&skill_roots(
        ws.path(),
        Some(home.path()),
        std::slice::from_ref(&missing),
    ));
    let error = only_error(&found.diagnostics);
    assert_eq!(error.path, missing);
    assert!(error.message.contains("does not exist"));
}

#[test]
fn skills_written_for_other_agent_skills_clients_load_with_their_scripts_and_assets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/foreign-skills");
    let found = discover(&skill_roots(Path::new("/nonexistent"), None, &[root]));
    assert!(found.diagnostics.is_empty(), "{:#?}", found.diagnostics);
    let skill = found.skills.get("pdf-form-filling").unwrap();
    assert_eq!(
        skill.files,
        [
            "assets/checkbox.png",
            "assets/field-template.json",
            "references/field-types.md",
            "scripts/fill_form.py",
            "scripts/list_fields.py",
        ]
    );
    assert_eq!(skill.allowed_tools, ["Bash(python:*)", "Read", "Write"]);
    assert_eq!(skill.metadata["version"], "1.2");
    assert!(skill.description.starts_with("Fill in PDF forms"));
    assert!(
        skill
            .read_file("reference/field-types.md")
            .unwrap()
            .contains("/Btn")
    );
}

#[test]
fn a_workspace_that_is_the_home_folder_is_searched_once() {
    let ws = tempfile::tempdir().unwrap();
    write_skill(ws.path(), "notes", "Keep notes.", "body");
    let found = discover(&skill_roots(ws.path(), Some(ws.path()), &[]));
    assert_eq!(found.skills.len(), 1);
    assert!(found.diagnostics.is_empty(), "{:#?}", found.diagnostics);
}

#[test]
fn each_skill_finding_carries_a_kind_that_tells_it_apart_without_reading_the_message() {
    let ws = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    let skills = ws.path().join(".qilin/skills");
    write_files(&skills.join("plain"), &[("SKILL.md", "# Just Markdown\n")]);
    write_files(
        &skills.join("typed"),
        &[("SKILL.md", "---\nname: typed\ndescription: [a, b]\n---\n")],
    );
    write_files(
        &skills.join("extra"),
        &[(
            "SKILL.md",
            "---\nname: extra\ndescription: has extras\nlicence: MIT\nmetadata:\n  tags: [a, b]\n---\nbody\n",
        )],
    );
    std::fs::create_dir_all(skills.join("notes")).unwrap();
    write_skill(ws.path(), "shared", "from the workspace", "ws");
    write_files(
        &extra.path().join("shared"),
        &[("SKILL.md", &skill_md("shared", "from --skills", "x"))],
    );
    let missing = ws.path().join("no-such-dir");
    let found = discover(&skill_roots(
        ws.path(),
        None,
        &[extra.path().to_path_buf(), missing.clone()],
    ));
    let kind_at = |path: &Path| -> Vec<DiagnosticKind> {
        found
            .diagnostics
            .iter()
            .filter(|d| d.path.starts_with(path))
            .map(|d| d.kind)
            .collect()
    };
    assert_eq!(
        kind_at(&skills.join("plain")),
        [DiagnosticKind::InvalidSkill]
    );
    assert_eq!(
        kind_at(&skills.join("typed")),
        [DiagnosticKind::InvalidYaml]
    );
    assert_eq!(
        kind_at(&skills.join("extra")),
        [DiagnosticKind::UnknownKey, DiagnosticKind::IgnoredMetadata]
    );
    assert_eq!(kind_at(&skills.join("notes")), [DiagnosticKind::NotASkill]);
    assert_eq!(kind_at(extra.path()), [DiagnosticKind::DuplicateSkill]);
    assert_eq!(kind_at(&missing), [DiagnosticKind::MissingSkillsFolder]);
}

#[cfg(unix)]
#[test]
fn symlinks_left_out_of_a_skill_are_told_apart_by_their_kind() {
    let ws = tempfile::tempdir().unwrap();
    let dir = write_skill(ws.path(), "linky", "has links", "body");
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("..", dir.join("again")).unwrap();
    let found = discover_workspace(ws.path());
    let kinds: Vec<DiagnosticKind> = found.diagnostics.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        [DiagnosticKind::SkippedLink, DiagnosticKind::SkippedLink],
        "{:#?}",
        found.diagnostics
    );
}

#[test]
fn a_run_shows_the_diagnostics_of_the_skills_its_agent_uses_and_counts_the_rest() {
    let ws = tempfile::tempdir().unwrap();
    let skills = ws.path().join(".qilin/skills");
    write_skill(ws.path(), "good", "Clean.", "body");
    write_files(
        &skills.join("renamed"),
        &[(
            "SKILL.md",
            &skill_md("renamed-skill", "Named apart.", "body"),
        )],
    );
    write_files(
        &skills.join("Other Notes"),
        &[("SKILL.md", &skill_md("Other Notes", "Capitals.", "body"))],
    );
    write_files(&skills.join("broken"), &[("SKILL.md", "no front matter")]);
    let found = discover_workspace(ws.path());
    assert_eq!(found.diagnostics.len(), 3, "{:#?}", found.diagnostics);
    let registry = common::registry_with(&found);
    let shown = |agent: &str| {
        let path = ws.path().join("a.agent");
        std::fs::write(&path, agent).unwrap();
        let agent = qilin_skill::AgentFile::load(&path, &found.skills, &registry)
            .unwrap()
            .value;
        let picked = found.diagnostics_for(&agent);
        let kinds: Vec<DiagnosticKind> = picked.relevant.iter().map(|d| d.kind).collect();
        (kinds, picked.others)
    };
    assert_eq!(
        shown("name: a\ninstructions: hi\nskills:\n  available: [good, renamed-skill]\n"),
        (vec![DiagnosticKind::NameNotFolder], 2)
    );
    assert_eq!(
        shown(
            "name: a\ninstructions: hi\nskills:\n  available: []\n  preload:\n    - name: Other Notes\n"
        ),
        (vec![DiagnosticKind::NonstandardName], 2)
    );
    assert_eq!(
        shown("name: a\ninstructions: hi\nskills:\n  available: []\n"),
        (vec![], 3)
    );
    assert_eq!(
        shown("name: a\ninstructions: hi\n"),
        (vec![DiagnosticKind::InvalidSkill], 2),
        "with `available: all`, the skills it lost; warnings are counted"
    );
}
