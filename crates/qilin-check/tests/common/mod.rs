//! Small tools for the checks: a well documented dual-active `lookup`, a code-mode-only
//! `tally`, and twins of `lookup` that each break one rule of a tool's own prompt.
//!
//! The checks never run a tool, so every `call` refuses: only the metadata matters here.

#![allow(dead_code)]

use qilin_check::{Finding, Report, Target, check};
use qilin_protocol::{CallPresentation, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolInfo, ToolRegistry, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Arguments of `lookup`.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct LookupArgs {
    /// What to look for.
    pub query: String,
    /// The most matches returned.
    #[schemars(range(max = 100))]
    pub limit: Option<u32>,
}

/// What `lookup` returns.
#[derive(Serialize, JsonSchema)]
pub struct LookupOutput {
    /// The matches, best first.
    pub matches: Vec<String>,
    /// How many matches there are in all.
    pub total: u32,
}

/// Arguments with a nested field that has no description.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct NestedArgs {
    /// What to look for.
    pub query: String,
    /// How to match.
    pub options: MatchOptions,
}

/// How to match.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct MatchOptions {
    pub mode: String,
}

/// The same, with the nested field described.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct DescribedNestedArgs {
    /// What to look for.
    pub query: String,
    /// How to match.
    pub options: DescribedMatchOptions,
}

/// How to match.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct DescribedMatchOptions {
    /// `exact` or `prefix`.
    pub mode: String,
}

/// Arguments of `tally`.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct TallyArgs {
    /// The column to add up.
    pub column: String,
}

/// What `tally` returns.
#[derive(Serialize, JsonSchema)]
pub struct TallyOutput {
    /// The sum of the column.
    pub sum: f64,
}

/// A good prompt hint.
pub const GOOD_HINT: &str = "Use lookup to find entries by name; keep `limit` small.";

macro_rules! test_tool {
    ($ty:ident, $name:literal, $description:expr, $code_mode_only:literal, $args:ty, $output:ty, $hint:expr) => {
        pub struct $ty;

        impl ToolInfo for $ty {
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $description;
            const CODE_MODE_ONLY: bool = $code_mode_only;
        }

        impl Tool for $ty {
            type Args = $args;
            type Output = $output;

            fn prompt_hint(&self) -> &str {
                $hint
            }

            fn present(&self, _: &$args) -> CallPresentation {
                CallPresentation::new($name, "")
            }

            fn before_detail(&self, _: &$args) -> Option<Detail> {
                None
            }

            fn detail(&self, _: &$args, _: &ToolResult<$output>) -> Option<Detail> {
                None
            }

            async fn call(&self, _: $args, _: &ToolContext) -> ToolResult<$output> {
                Err(ToolError::failed("test tools only describe themselves"))
            }
        }
    };
}

test_tool!(
    Lookup,
    "lookup",
    "Find entries by name.",
    false,
    LookupArgs,
    LookupOutput,
    GOOD_HINT
);
test_tool!(
    Tally,
    "tally",
    "Add up a column.",
    true,
    TallyArgs,
    TallyOutput,
    ""
);
test_tool!(
    LookupWithoutDescription,
    "lookup",
    "",
    false,
    LookupArgs,
    LookupOutput,
    GOOD_HINT
);
test_tool!(
    LookupNestedUndescribed,
    "lookup",
    "Find entries by name.",
    false,
    NestedArgs,
    LookupOutput,
    GOOD_HINT
);
test_tool!(
    LookupNestedDescribed,
    "lookup",
    "Find entries by name.",
    false,
    DescribedNestedArgs,
    LookupOutput,
    GOOD_HINT
);
test_tool!(
    LookupWithoutHint,
    "lookup",
    "Find entries by name.",
    false,
    LookupArgs,
    LookupOutput,
    "  "
);
test_tool!(
    LookupDeferringHint,
    "lookup",
    "Find entries by name.",
    false,
    LookupArgs,
    LookupOutput,
    "Lookup has many options; see SKILL.md of the lookup-guide skill for how to use them."
);

test_tool!(
    LookupDeferringHintChineseNoSpace,
    "lookup",
    "Find entries by name.",
    false,
    LookupArgs,
    LookupOutput,
    "参数很多，详见SKILL.md。"
);
test_tool!(
    LookupDeferringHintChineseNoFile,
    "lookup",
    "Find entries by name.",
    false,
    LookupArgs,
    LookupOutput,
    "用法详见技能说明"
);
test_tool!(
    LookupDeferringDescriptionChinese,
    "lookup",
    "由 Skill 调用，不需要说明",
    false,
    LookupArgs,
    LookupOutput,
    GOOD_HINT
);
test_tool!(
    LookupDeferringDescription,
    "lookup",
    "Called by the lookup-guide skill; needs no explanation.",
    false,
    LookupArgs,
    LookupOutput,
    GOOD_HINT
);
test_tool!(
    LookupDescribedInChinese,
    "lookup",
    "按名称查找条目，返回最匹配的结果。",
    false,
    LookupArgs,
    LookupOutput,
    "用 lookup 按名称查找条目；`limit` 尽量小。技能目录列出的技能与此无关。"
);

/// A registry holding exactly `tool`.
pub fn registry_of<T: Tool>(tool: T) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(tool).expect("a test tool registers");
    registry
}

/// `lookup` alone.
pub fn registry() -> ToolRegistry {
    registry_of(Lookup)
}

/// `lookup` and the code-mode-only `tally`.
pub fn registry_with_tally() -> ToolRegistry {
    let mut registry = registry_of(Lookup);
    registry.register(Tally).expect("tally registers");
    registry
}

/// The folder of fixture `name`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join(name)
}

/// Checks `path` (a workspace, skill folder or agent file) with `registry`.
pub fn check_path(registry: &ToolRegistry, path: &Path) -> Report {
    let target = Target::from_path(path, &[]).expect("the fixture exists");
    check(registry, &[target])
}

/// The codes of the findings.
pub fn codes(findings: &[Finding]) -> BTreeSet<&'static str> {
    findings.iter().map(|f| f.rule.code()).collect()
}

/// Every finding, one per line, for assertion messages.
pub fn listing(report: &Report) -> String {
    qilin_check::render_text(report)
}
