//! What a skill states about a code-mode-only tool beyond its parameters and examples: its
//! purpose, what it returns, its boundary conditions and its common errors (Q204).
//!
//! A code-mode-only tool has no other entry: a model learns it from its skill alone, so the
//! skill must say what the tool is for, what comes back, where it stops and how it fails.
//! A statement is recognised by its **heading** (`## Returns`, `### 常见错误`) or by a
//! **labelled paragraph** (a paragraph or list item that starts `Returns:`, `**Errors:**`,
//! `限制：`; a paragraph that opens "Returns …" states the return shape), in English or
//! Chinese; the accepted words are in [`Aspect::words`]. The purpose
//! may also be the prose paragraph that opens a section whose heading names the tool.
//!
//! A statement counts for a tool when its heading or label, its text, or a heading above it
//! names the tool; in a skill that covers one code-mode-only tool only, every statement counts
//! for that tool.

use crate::markdown;
use regex::Regex;
use std::path::PathBuf;
use std::sync::LazyLock;

/// One thing a code-mode-only tool's skill must state about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Aspect {
    /// What the tool is for.
    Purpose,
    /// The shape of what it returns.
    Returns,
    /// Its limits and what it refuses.
    Boundaries,
    /// How it fails.
    Errors,
}

impl Aspect {
    /// Every aspect, in the order a finding lists them.
    pub const ALL: [Aspect; 4] = [
        Aspect::Purpose,
        Aspect::Returns,
        Aspect::Boundaries,
        Aspect::Errors,
    ];

    /// The aspect in words, as a finding names it.
    pub fn describe(self) -> &'static str {
        match self {
            Aspect::Purpose => "purpose",
            Aspect::Returns => "return shape",
            Aspect::Boundaries => "boundary conditions",
            Aspect::Errors => "common errors",
        }
    }

    /// A heading that states the aspect, for a finding's help.
    pub fn heading_example(self) -> &'static str {
        match self {
            Aspect::Purpose => "`## Purpose`",
            Aspect::Returns => "`## Returns`",
            Aspect::Boundaries => "`## Limits`",
            Aspect::Errors => "`## Common errors`",
        }
    }

    /// The words a heading or label stating this aspect contains (English, matched as whole
    /// words in any case) and the Chinese terms (matched anywhere).
    pub fn words(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Aspect::Purpose => (
                &[
                    "purpose",
                    "overview",
                    "what it does",
                    "what it is for",
                    "when to use",
                    "use cases",
                    "about",
                    "description",
                    "introduction",
                    "summary",
                ],
                &[
                    "用途",
                    "作用",
                    "功能",
                    "概述",
                    "简介",
                    "介绍",
                    "适用场景",
                    "使用场景",
                    "何时使用",
                ],
            ),
            Aspect::Returns => (
                &[
                    "returns",
                    "return",
                    "return value",
                    "return shape",
                    "result",
                    "results",
                    "output",
                    "response",
                ],
                &["返回", "结果", "输出"],
            ),
            Aspect::Boundaries => (
                &[
                    "limits",
                    "limit",
                    "limitations",
                    "boundaries",
                    "boundary conditions",
                    "bounds",
                    "constraints",
                    "edge cases",
                    "caveats",
                    "restrictions",
                    "what it refuses",
                ],
                &["边界", "限制", "约束", "注意事项", "上限"],
            ),
            Aspect::Errors => (
                &[
                    "errors",
                    "error",
                    "error handling",
                    "failures",
                    "failure modes",
                    "when it fails",
                    "troubleshooting",
                    "exceptions",
                    "pitfalls",
                ],
                &["错误", "报错", "异常", "失败", "常见问题"],
            ),
        }
    }

    fn pattern(self) -> &'static Regex {
        static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
            Aspect::ALL
                .iter()
                .map(|aspect| {
                    let (english, chinese) = aspect.words();
                    let english: Vec<String> = english
                        .iter()
                        .map(|word| word.replace(' ', r"\s+"))
                        .collect();
                    let chinese: Vec<String> =
                        chinese.iter().map(|word| regex::escape(word)).collect();
                    crate::own_regex(&format!(
                        r"(?i)\b(?:{})\b|{}",
                        english.join("|"),
                        chinese.join("|")
                    ))
                })
                .collect()
        });
        &PATTERNS[self as usize]
    }

    /// True when a heading `title` states this aspect (its words anywhere in it), or a label
    /// `title` does (its words first).
    fn titles(self, title: &str, heading: bool) -> bool {
        match self.pattern().find(title) {
            Some(found) => heading || found.start() == 0,
            None => false,
        }
    }
}

/// A heading or a labelled paragraph, with the text it heads.
#[derive(Debug, Clone)]
struct Statement {
    /// The heading's or label's words, without Markdown marks.
    title: String,
    /// Its text: to the next heading of the same or a higher level (a heading), or to the
    /// next heading or label (a label).
    body: String,
    /// The titles of the headings it lies under.
    above: Vec<String>,
    /// For a heading: whether its first block is a prose paragraph (a lead paragraph).
    lead: bool,
    /// Whether it is a heading (else a label).
    heading: bool,
}

/// One line of Markdown outside code fences, classified.
enum Line<'a> {
    Heading { level: usize, title: String },
    Label { title: String, listed: bool },
    Text(&'a str),
    Blank,
    Code,
}

static LABEL: LazyLock<Regex> = LazyLock::new(|| {
    crate::own_regex(
        r"^(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?([^:：`*_.!?。！？]{1,60}?)(?:\*\*|__)?\s*[:：]",
    )
});

/// A paragraph that opens with the verb: "Returns a dict …", "It returns …", "返回一个字典".
static RETURNS_SENTENCE: LazyLock<Regex> =
    LazyLock::new(|| crate::own_regex(r"^(?:[-*+]\s+)?(?:(?i:it\s+)?(?i:returns)\b|返回)"));

static LIST_ITEM: LazyLock<Regex> = LazyLock::new(|| crate::own_regex(r"^(?:[-*+]|\d+[.)])\s"));

static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| crate::own_regex(r"[A-Za-z0-9_]+"));

fn heading(line: &str) -> Option<(usize, String)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let title = &rest[level..];
    if !title.is_empty() && !title.starts_with([' ', '\t']) {
        return None;
    }
    Some((level, plain(title.trim().trim_end_matches('#'))))
}

/// `text` without the Markdown marks that do not change its words.
fn plain(text: &str) -> String {
    text.replace(['`', '*'], "").trim().to_string()
}

fn classify(line: &str) -> Line<'_> {
    if line.trim().is_empty() {
        return Line::Blank;
    }
    if let Some((level, title)) = heading(line) {
        return Line::Heading { level, title };
    }
    if let Some(found) = LABEL.captures(line.trim_start())
        && let Some(title) = found.get(1)
    {
        return Line::Label {
            title: plain(title.as_str()),
            listed: LIST_ITEM.is_match(line.trim_start()),
        };
    }
    Line::Text(line)
}

/// True for a line that opens a prose paragraph: not a list item, table row or quote.
fn is_prose(line: &str) -> bool {
    let trimmed = line.trim_start();
    !LIST_ITEM.is_match(trimmed) && !trimmed.starts_with(['|', '>'])
}

/// Every heading and labelled paragraph of `markdown`, outside code fences.
fn statements(markdown: &str) -> Vec<Statement> {
    let lines: Vec<Line> = markdown::outside_fences(markdown)
        .into_iter()
        .map(|line| line.map_or(Line::Code, classify))
        .collect();
    let mut found = Vec::new();
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut previous_blank = true;
    for (index, line) in lines.iter().enumerate() {
        match line {
            Line::Heading { level, title } => {
                open.retain(|(open_level, _)| open_level < level);
                let end = lines[index + 1..]
                    .iter()
                    .position(|l| matches!(l, Line::Heading { level: next, .. } if next <= level))
                    .map_or(lines.len(), |offset| index + 1 + offset);
                let lead = lines[index + 1..end]
                    .iter()
                    .find(|l| !matches!(l, Line::Blank))
                    .is_some_and(|first| matches!(first, Line::Text(text) if is_prose(text)));
                found.push(Statement {
                    title: title.clone(),
                    body: body(markdown, index + 1, end),
                    above: open.iter().map(|(_, title)| title.clone()).collect(),
                    lead,
                    heading: true,
                });
                open.push((*level, title.clone()));
            }
            Line::Text(text) if previous_blank && RETURNS_SENTENCE.is_match(text.trim_start()) => {
                found.push(Statement {
                    title: "Returns".to_string(),
                    body: body(markdown, index, index + 1),
                    above: open.iter().map(|(_, title)| title.clone()).collect(),
                    lead: false,
                    heading: false,
                });
            }
            Line::Label { title, listed } if previous_blank || *listed => {
                let end = lines[index + 1..]
                    .iter()
                    .position(|l| matches!(l, Line::Heading { .. } | Line::Label { .. }))
                    .map_or(lines.len(), |offset| index + 1 + offset);
                found.push(Statement {
                    title: title.clone(),
                    body: body(markdown, index, end),
                    above: open.iter().map(|(_, title)| title.clone()).collect(),
                    lead: false,
                    heading: false,
                });
            }
            _ => {}
        }
        previous_blank = matches!(line, Line::Blank | Line::Heading { .. });
    }
    found
}

fn body(markdown: &str, start: usize, end: usize) -> String {
    markdown
        .lines()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect::<Vec<_>>()
        .join("\n")
}

/// True when `text` names `tool` as a whole identifier.
fn names(text: &str, tool: &str) -> bool {
    IDENTIFIER.find_iter(text).any(|word| word.as_str() == tool)
}

/// What the Markdown files of a skill state about its tools.
#[derive(Debug, Default)]
pub struct SkillStatements {
    statements: Vec<Statement>,
}

impl SkillStatements {
    /// Reads the statements of every Markdown file among `texts` (path and text).
    pub fn read(texts: &[(PathBuf, String)]) -> Self {
        let statements = texts
            .iter()
            .filter(|(path, _)| {
                path.extension()
                    .is_some_and(|ext| ext == "md" || ext == "markdown")
            })
            .flat_map(|(_, text)| statements(text))
            .collect();
        SkillStatements { statements }
    }

    /// The aspects the skill does not state for `tool`; `alone` when the skill covers no
    /// other code-mode-only tool, so every statement counts for it.
    pub fn missing(&self, tool: &str, alone: bool) -> Vec<Aspect> {
        let about = |statement: &Statement| {
            alone
                || names(&statement.title, tool)
                || names(&statement.body, tool)
                || statement.above.iter().any(|title| names(title, tool))
        };
        Aspect::ALL
            .into_iter()
            .filter(|aspect| {
                !self.statements.iter().any(|statement| {
                    let titled =
                        aspect.titles(&statement.title, statement.heading) && about(statement);
                    let lead = *aspect == Aspect::Purpose
                        && statement.heading
                        && statement.lead
                        && names(&statement.title, tool);
                    titled || lead
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Aspect, SkillStatements};

    fn missing(text: &str, tool: &str, alone: bool) -> Vec<Aspect> {
        SkillStatements::read(&[("SKILL.md".into(), text.to_string())]).missing(tool, alone)
    }

    #[test]
    fn headings_and_labels_in_english_and_chinese_are_recognised() {
        let english = "# Guide\n\n## Purpose\n\nAdds.\n\n## Returns\n\nA dict.\n\n## Limits\n\nAt most 10.\n\n## Common errors\n\n- `X`\n";
        assert!(missing(english, "tally", true).is_empty());
        let labels = "Purpose: adds a column.\n\n**Returns:** a dict.\n\n- Limits: 10 rows.\n- Errors: `INVALID_ARGUMENTS`.\n";
        assert!(missing(labels, "tally", true).is_empty());
        let sentence = "Returns a dict with `sum`.\n";
        assert!(!missing(sentence, "tally", true).contains(&Aspect::Returns));
        let chinese = "## 用途\n\n求和。\n\n## 返回结构\n\n字典。\n\n边界条件：最多 10 行。\n\n## 常见错误\n\n参数错误。\n";
        assert!(missing(chinese, "tally", true).is_empty());
    }

    #[test]
    fn each_missing_aspect_is_named() {
        let text = "## Returns\n\nA dict.\n";
        assert_eq!(
            missing(text, "tally", true),
            [Aspect::Purpose, Aspect::Boundaries, Aspect::Errors]
        );
    }

    #[test]
    fn a_heading_naming_the_tool_with_a_lead_paragraph_states_its_purpose() {
        let text = "# Adding with `tally`\n\n`tally` adds up a column.\n";
        assert!(!missing(text, "tally", true).contains(&Aspect::Purpose));
        let list_first = "# `tally`\n\n- adds up a column\n";
        assert!(missing(list_first, "tally", true).contains(&Aspect::Purpose));
    }

    #[test]
    fn with_two_tools_a_statement_counts_for_the_tool_it_is_about() {
        let text = "## `tally`\n\nAdds.\n\n### Returns\n\nA dict.\n\n## `count`\n\nCounts.\n\n### Errors\n\nNone for `count`.\n";
        assert!(!missing(text, "tally", false).contains(&Aspect::Returns));
        assert!(missing(text, "tally", false).contains(&Aspect::Errors));
        assert!(missing(text, "count", false).contains(&Aspect::Returns));
        assert!(!missing(text, "count", false).contains(&Aspect::Errors));
    }

    #[test]
    fn lines_inside_code_fences_are_not_headings() {
        let text = "```python\n# Returns\nx = 1\n```\n";
        assert!(missing(text, "tally", true).contains(&Aspect::Returns));
    }

    #[test]
    fn an_ordinary_sentence_with_a_colon_is_not_a_label() {
        let text = "Then the tool does this for every row of the file it is given: a sum.\n";
        assert!(missing(text, "tally", true).contains(&Aspect::Returns));
    }
}
