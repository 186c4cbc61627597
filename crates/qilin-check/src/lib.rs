//! `qilin check`: the linter that keeps both entries of every tool complete and in step.
//!
//! A dual-active tool is documented twice on purpose: in the tool itself (description, field
//! descriptions, prompt hint) for when it is mounted, and in a skill for code mode. The two
//! never see each other at run time; these rules check each against the tool's schemas and
//! the skills against the tools, so neither entry drifts unnoticed.
//!
//! Rules ([`Rule`]) have stable codes: `Q1xx` a tool's own prompt and strategy, `Q2xx` what
//! a skill says about the tools it covers, `Q3xx` a skill's Python examples, `Q4xx` agent
//! files, `Q5xx` skill folders, `Q6xx` check declarations, `Q7xx` workflow files
//! (`.qilin/workflows/*.py`). [`check`] runs them over [`Target`]s and returns a [`Report`];
//! [`render_text`] and [`render_json`] turn it into what the command prints.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod agents;
mod coverage;
mod examples;
mod finding;
mod literal;
mod markdown;
mod python;
mod render;
mod report;
mod rule;
mod skill_docs;
mod statements;
mod target;
mod tool_prompt;
mod workflows;

pub use finding::{Finding, JsonFinding, Location};
pub use literal::Literal;
pub use markdown::{Fence, RUN_CODE_MARKER, fences};
pub use python::{CompileError, Position, ToolCallSite, calls_sdk, compile, parse, tool_calls};
pub use render::{render_json, render_text};
pub use report::{Report, check};
pub use rule::Rule;
pub use statements::Aspect;
pub use target::{AGENT_EXTENSION, Scope, Target, TargetError, agent_files};
pub use tool_prompt::deferral;

/// A regular expression the linter writes itself (a constant, or built from constant word
/// lists): every one is compiled by the tests, so a typo fails them rather than a user's run.
#[expect(
    clippy::expect_used,
    reason = "the patterns are the linter's own constants, never input"
)]
fn own_regex(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("the linter's own patterns are valid regular expressions")
}
