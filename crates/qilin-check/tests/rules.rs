//! Every rule that reads files: its fixture fails with exactly its code, its fixed twin passes.

mod common;

use common::{check_path, codes, fixture, listing, registry, registry_with_tally};
use qilin_check::{Location, Rule};

/// Checks `fixtures/<rule name>/fail` and `/pass` as workspaces.
/// The fixtures of the code-mode-only rules need the code-mode-only `tally`.
fn fails_then_passes(rule: Rule) -> qilin_check::Report {
    let registry = match rule {
        Rule::CodeModeOnlyUncovered | Rule::CodeModeOnlyMounted | Rule::SkillStatementMissing => {
            registry_with_tally()
        }
        _ => registry(),
    };
    let failing = check_path(&registry, &fixture(rule.name()).join("fail"));
    assert_eq!(
        codes(&failing.findings).into_iter().collect::<Vec<_>>(),
        vec![rule.code()],
        "the failing fixture of {} found:\n{}",
        rule.name(),
        listing(&failing)
    );
    let passing = check_path(&registry, &fixture(rule.name()).join("pass"));
    assert!(
        passing.findings.is_empty(),
        "the fixed fixture of {} found:\n{}",
        rule.name(),
        listing(&passing)
    );
    failing
}

fn place(report: &qilin_check::Report) -> String {
    report.findings[0].location.to_string()
}

#[test]
fn q201_a_covered_tool_has_every_parameter_named() {
    let report = fails_then_passes(Rule::ParameterUndocumented);
    assert_eq!(report.findings.len(), 1);
    assert!(report.findings[0].message.contains("`limit`"));
    assert!(
        place(&report).ends_with("lookup-guide/SKILL.md:17:9"),
        "{}",
        place(&report)
    );
}

#[test]
fn q202_a_covered_tool_has_every_output_field_named() {
    let report = fails_then_passes(Rule::OutputFieldUndocumented);
    assert!(report.findings[0].message.contains("`total`"));
}

#[test]
fn q203_a_mentioned_tool_has_an_example() {
    let report = fails_then_passes(Rule::ExampleMissing);
    assert!(place(&report).ends_with("SKILL.md:8"), "{}", place(&report));
}

#[test]
fn q204_a_code_mode_only_tools_skill_states_purpose_returns_bounds_and_errors() {
    let report = fails_then_passes(Rule::SkillStatementMissing);
    let finding = &report.findings[0];
    assert_eq!(
        finding.message,
        "skill `tallying` covers code-mode-only tool `tally` but states no purpose, boundary conditions, common errors for it"
    );
    assert!(
        place(&report).ends_with("tallying/SKILL.md:13:10"),
        "{}",
        place(&report)
    );
    assert_eq!(report.errors(), 0, "a warning by default");
    assert!(report.fails(true), "an error under --strict");
}

#[test]
fn q301_examples_compile_and_errors_point_into_the_markdown() {
    let report = fails_then_passes(Rule::ExampleSyntaxError);
    assert!(
        place(&report).ends_with("SKILL.md:26:26"),
        "{}",
        place(&report)
    );
    assert!(report.findings[0].message.contains("SyntaxError"));
}

#[test]
fn q302_examples_call_known_tools_with_a_suggestion() {
    let report = fails_then_passes(Rule::ExampleUnknownTool);
    assert_eq!(report.findings[0].help, "did you mean `lookup`?");
}

#[test]
fn q303_literal_arguments_fit_the_schema_and_names_are_not_guessed() {
    let report = fails_then_passes(Rule::ExampleArgumentsInvalid);
    assert!(
        report.findings[0].message.contains("`limit`: 500"),
        "{}",
        report.findings[0].message
    );
}

#[test]
fn q111_a_code_mode_only_tool_is_covered_by_a_skill() {
    let report = fails_then_passes(Rule::CodeModeOnlyUncovered);
    assert_eq!(
        report.findings[0].location,
        Location::tool("tally", "coverage")
    );
}

#[test]
fn q112_no_agent_mounts_a_code_mode_only_tool() {
    let report = fails_then_passes(Rule::CodeModeOnlyMounted);
    assert!(
        place(&report).ends_with("helper.agent:3:1"),
        "{}",
        place(&report)
    );
    assert!(report.findings[0].help.contains("remove it from `tools`"));
}

#[test]
fn q401_agents_mount_known_tools() {
    let report = fails_then_passes(Rule::AgentUnknownTool);
    assert_eq!(report.findings[0].help, "did you mean `lookup`?");
}

#[test]
fn q402_agents_name_known_skills() {
    let report = fails_then_passes(Rule::AgentUnknownSkill);
    assert!(
        place(&report).contains("agents/helper.agent:4"),
        "{}",
        place(&report)
    );
}

#[test]
fn q403_preloaded_files_exist() {
    let report = fails_then_passes(Rule::AgentPreloadMissing);
    assert!(
        place(&report).ends_with("helper.agent:7:1"),
        "{}",
        place(&report)
    );
    assert!(
        report.findings[0]
            .message
            .contains("`reference/missing.md`")
    );
}

#[test]
fn q404_a_code_mode_agent_can_read_a_skill() {
    let report = fails_then_passes(Rule::AgentNoReadableSkill);
    assert!(
        place(&report).ends_with("helper.agent:3:1"),
        "{}",
        place(&report)
    );
}

#[test]
fn q405_broken_agent_files_are_errors() {
    fails_then_passes(Rule::AgentInvalid);
}

#[test]
fn q406_agent_warnings_are_warnings() {
    let report = fails_then_passes(Rule::AgentWarning);
    assert_eq!(report.errors(), 0);
    assert!(!report.fails(false));
    assert!(report.fails(true));
}

#[test]
fn q501_broken_skills_are_errors() {
    fails_then_passes(Rule::SkillInvalid);
}

#[test]
fn q502_skill_warnings_are_warnings() {
    let report = fails_then_passes(Rule::SkillWarning);
    assert_eq!(report.warnings(), 1);
}

#[test]
fn a_skill_folder_or_an_agent_file_can_be_checked_alone() {
    let registry = registry();
    let skill = fixture("parameter-undocumented/fail/.qilin/skills/lookup-guide");
    let report = check_path(&registry, &skill);
    assert_eq!(
        codes(&report.findings).into_iter().collect::<Vec<_>>(),
        vec!["Q201"]
    );
    assert_eq!((report.skills, report.agents, report.tools), (1, 0, 0));
    let agent = fixture("agent-unknown-skill/fail/agents/helper.agent");
    let report = check_path(&registry, &agent);
    assert_eq!(
        codes(&report.findings).into_iter().collect::<Vec<_>>(),
        vec!["Q402"]
    );
    assert_eq!((report.skills, report.agents), (0, 1));
}

#[test]
fn agent_files_ignored_by_gitignore_are_skipped() {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::write(dir.path().join(".gitignore"), "drafts/\n").expect("write");
    std::fs::create_dir(dir.path().join("drafts")).expect("mkdir");
    std::fs::write(dir.path().join("drafts/broken.agent"), "name: broken\n").expect("write");
    std::fs::write(
        dir.path().join("helper.agent"),
        "name: helper\ninstructions: Help.\ntools: [lookup]\n",
    )
    .expect("write");
    let found = qilin_check::agent_files(dir.path());
    assert_eq!(found, vec![dir.path().join("helper.agent")]);
    let report = check_path(&registry(), dir.path());
    assert!(report.findings.is_empty(), "{}", listing(&report));
    assert_eq!(report.agents, 1);
}

#[test]
fn an_agent_of_a_nested_workspace_reads_that_workspace_s_skills() {
    let root = tempfile::tempdir().expect("a temp dir");
    let inner = fixture("agent-unknown-skill/pass");
    let copy = root.path().join("inner");
    for file in [".qilin/skills/lookup-guide/SKILL.md", "agents/helper.agent"] {
        std::fs::create_dir_all(copy.join(file).parent().expect("a parent")).expect("mkdir");
        std::fs::copy(inner.join(file), copy.join(file)).expect("copy");
    }
    let report = check_path(&registry(), root.path());
    assert!(report.findings.is_empty(), "{}", listing(&report));
    assert_eq!((report.skills, report.agents), (0, 1));
}

#[test]
fn q601_check_declarations_name_the_file_and_what_is_expected() {
    let report = fails_then_passes(Rule::CheckInvalid);
    let found: Vec<String> = report
        .findings
        .iter()
        .map(|f| format!("{} {}", f.location, f.message))
        .collect();
    assert_eq!(found.len(), 5, "{found:#?}");
    let expected = [
        (
            ".qilin/checks.yaml:4:1",
            "check `test` names parser `pytest`, which does not exist; the parsers are cargo, junit, tap, eslint, tsc, plain",
        ),
        (
            ".qilin/checks.yaml:5:1",
            "check id `test` is declared twice in this file",
        ),
        (
            ".qilin/checks.yaml:8:1",
            "check `lint` has a blank `command`",
        ),
        (
            ".qilin/checks.yaml:11:1",
            "check `types`: `timeout` is `2 weeks`; write seconds (`90`) or a number with `s`, `m` or `h` (`90s`, `5m`), from 1 s to 20 min",
        ),
        ("helper.agent:5:1", "check `fmt` has no `command`"),
    ];
    for (place, message) in expected {
        assert!(
            found
                .iter()
                .any(|f| f.contains(place) && f.contains(message)),
            "no finding at {place} saying {message:?} in {found:#?}"
        );
    }
}

#[test]
fn q602_check_warnings_are_warnings() {
    let report = fails_then_passes(Rule::CheckWarning);
    assert_eq!(report.warnings(), 1);
    assert!(report.findings[0].message.contains("`checks.0.timout`"));
}

#[test]
fn q701_a_workflow_front_matter_is_valid() {
    let report = fails_then_passes(Rule::WorkflowInvalid);
    let finding = &report.findings[0];
    assert!(
        finding.message.contains("unknown field `max_call`"),
        "{}",
        finding.message
    );
    assert!(
        place(&report).ends_with(".qilin/workflows/find-entries.py:8:1"),
        "{}",
        place(&report)
    );
}

#[test]
fn q702_a_workflow_compiles_for_code_mode() {
    let report = fails_then_passes(Rule::WorkflowSyntaxError);
    assert!(
        report.findings[0].message.contains("SyntaxError"),
        "{}",
        report.findings[0].message
    );
    assert!(
        place(&report).contains("find-entries.py:12"),
        "{}",
        place(&report)
    );
}

#[test]
fn q703_a_workflow_calls_tools_that_exist() {
    let report = fails_then_passes(Rule::WorkflowUnknownTool);
    assert!(
        report.findings[0]
            .message
            .contains("no tool is named `lokup`"),
        "{}",
        report.findings[0].message
    );
    assert_eq!(report.findings[0].help, "did you mean `lookup`?");
    assert!(
        place(&report).ends_with("find-entries.py:14:5"),
        "{}",
        place(&report)
    );
}

#[test]
fn q704_a_workflow_passes_arguments_its_tools_accept() {
    let report = fails_then_passes(Rule::WorkflowArgumentsInvalid);
    assert!(
        report.findings[0].message.contains("`limit`"),
        "{}",
        report.findings[0].message
    );
}
