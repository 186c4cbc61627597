//! Skills built into the binary: loaded and read from memory like a folder on disk.

use include_dir::{Dir, include_dir};
use qilin_skill::{EmbeddedSkills, SkillFileError, SkillRoot, discover};

static BUILT_IN: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/tests/fixtures/embedded");

#[test]
fn an_embedded_skill_loads_lists_and_reads_its_files_from_memory() {
    let found = discover(&[SkillRoot::built_in(EmbeddedSkills::new(&BUILT_IN))]);
    assert!(found.diagnostics.is_empty(), "{:#?}", found.diagnostics);
    let skill = found.skills.get("demo").expect("the built-in skill loads");
    assert_eq!(skill.description, "A skill built into the binary.");
    assert_eq!(skill.dir, std::path::Path::new("(built-in)/demo"));
    assert_eq!(skill.files, ["reference/usage.md"]);
    assert_eq!(skill.read_file("SKILL.md").unwrap(), skill.body);
    assert_eq!(
        skill.read_file("references/usage.md").unwrap(),
        "# Usage\nCall it.\n"
    );
    assert!(
        skill
            .source_text("SKILL.md")
            .unwrap()
            .starts_with("---\nname: demo\n")
    );
    assert!(matches!(
        skill.read_file("../demo/SKILL.md"),
        Err(SkillFileError::LeavesFolder { .. })
    ));
    assert!(matches!(
        skill.read_file("reference/missing.md"),
        Err(SkillFileError::NotFound { .. })
    ));
    assert!(matches!(
        skill.read_file("reference"),
        Err(SkillFileError::NotAFile { .. })
    ));
}
