//! A dual-active tool's own prompt: each broken twin of `lookup` fails with exactly its code,
//! and `lookup` itself passes. The workspace checked (`fixtures/tool-prompt/pass`) is empty:
//! the tools are the fixtures.

mod common;

use common::{
    Lookup, LookupDeferringDescription, LookupDeferringDescriptionChinese, LookupDeferringHint,
    LookupDeferringHintChineseNoFile, LookupDeferringHintChineseNoSpace, LookupDescribedInChinese,
    LookupNestedDescribed, LookupNestedUndescribed, LookupWithoutDescription, LookupWithoutHint,
    check_path, codes, fixture, listing, registry_of,
};
use qilin_check::{Location, Rule};
use qilin_tool::ToolRegistry;

fn findings_with(registry: ToolRegistry) -> qilin_check::Report {
    check_path(&registry, &fixture("tool-prompt").join("pass"))
}

fn fails_with(registry: ToolRegistry, rule: Rule) -> qilin_check::Report {
    let report = findings_with(registry);
    assert_eq!(
        codes(&report.findings).into_iter().collect::<Vec<_>>(),
        vec![rule.code()],
        "{}",
        listing(&report)
    );
    report
}

#[test]
fn the_well_documented_tool_passes() {
    let report = findings_with(registry_of(Lookup));
    assert!(report.findings.is_empty(), "{}", listing(&report));
    assert_eq!((report.tools, report.skills), (1, 0));
}

#[test]
fn q101_a_dual_active_tool_has_a_description() {
    let report = fails_with(
        registry_of(LookupWithoutDescription),
        Rule::ToolDescriptionMissing,
    );
    assert_eq!(
        report.findings[0].location.to_string(),
        "tool lookup: description"
    );
}

#[test]
fn q102_every_parameter_nested_ones_too_has_a_description() {
    let report = fails_with(
        registry_of(LookupNestedUndescribed),
        Rule::ParameterDescriptionMissing,
    );
    assert_eq!(
        report.findings[0].location,
        Location::tool("lookup", "parameter `options.mode`")
    );
    assert!(
        findings_with(registry_of(LookupNestedDescribed))
            .findings
            .is_empty()
    );
}

#[test]
fn q103_a_dual_active_tool_has_a_prompt_hint() {
    fails_with(registry_of(LookupWithoutHint), Rule::PromptHintMissing);
}

#[test]
fn q104_the_prompt_hint_does_not_defer_to_a_skill() {
    let report = fails_with(registry_of(LookupDeferringHint), Rule::PromptHintDefers);
    assert!(
        report.findings[0].message.contains("(\"see SKILL\")"),
        "{}",
        report.findings[0].message
    );
}

#[test]
fn q104_chinese_deferrals_with_or_without_a_space_or_the_file_name_are_found() {
    let report = fails_with(
        registry_of(LookupDeferringHintChineseNoSpace),
        Rule::PromptHintDefers,
    );
    assert!(
        report.findings[0].message.contains("详见SKILL"),
        "{}",
        report.findings[0].message
    );
    let report = fails_with(
        registry_of(LookupDeferringHintChineseNoFile),
        Rule::PromptHintDefers,
    );
    assert!(
        report.findings[0].message.contains("详见技能"),
        "{}",
        report.findings[0].message
    );
    let fixed = findings_with(registry_of(LookupDescribedInChinese));
    assert!(fixed.findings.is_empty(), "{}", listing(&fixed));
}

#[test]
fn q105_the_description_does_not_defer_to_a_skill() {
    let report = fails_with(
        registry_of(LookupDeferringDescription),
        Rule::DescriptionDefers,
    );
    assert_eq!(
        report.findings[0].location.to_string(),
        "tool lookup: description"
    );
    let report = fails_with(
        registry_of(LookupDeferringDescriptionChinese),
        Rule::DescriptionDefers,
    );
    assert!(
        report.findings[0].message.contains("由 Skill 调用"),
        "{}",
        report.findings[0].message
    );
}
