//! Declared checks as agent files and the workspace declare them: `checks:` in an `.agent`
//! file, and the workspace's `.qilin/checks.yaml` (same shape). An agent's check replaces the
//! workspace's of the same id.
//!
//! ```yaml
//! checks:
//!   - id: test
//!     description: The unit tests pass.
//!     command: cargo test --message-format json
//!     parser: cargo            # cargo, junit, tap, eslint, tsc or plain (the default)
//!     timeout: 10m             # seconds (600), or "90s", "5m"; default 5m, at most 20m
//!     inputs: ["src/**", "Cargo.*"]   # what it reads, for the cache (default: every file not ignored)
//!   - id: lint
//!     command: npx eslint -f json .
//!     parser: eslint
//!     depends_on: [test]       # starts once `test` has ended, when both run
//!   - id: e2e
//!     command: ./e2e.sh
//!     parser: junit
//!     report: build/e2e.xml    # the JUnit file it writes (else the XML is read from its output)
//!     exclusive: true          # runs with no other check running
//! ```

use crate::yaml::{KnownKeys, Segment, Source};
use crate::{Diagnostic, DiagnosticKind};
use qilin_sandbox::{CONFIG_FILE_LIMIT, read_own_text};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The workspace's file of checks, relative to the workspace.
pub const CHECKS_WORKSPACE_FILE: &str = ".qilin/checks.yaml";

/// How long a check may run when its declaration sets no `timeout`.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The longest `timeout` a check may declare: a run of checks is one tool call, and a call
/// may run 20 minutes.
pub const MAX_CHECK_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// The longest check id, in characters.
pub const MAX_CHECK_ID_CHARS: usize = 64;

/// The keys one check declaration reads.
pub(crate) const CHECK_KEYS: &[&str] = &[
    "id",
    "command",
    "description",
    "timeout",
    "parser",
    "report",
    "depends_on",
    "exclusive",
    "inputs",
];

const WORKSPACE_KEYS: KnownKeys = &[("", &["checks"]), ("checks.*", CHECK_KEYS)];

/// How a check's output is read into annotations and a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckParser {
    /// The exit code alone decides; no annotations.
    #[default]
    Plain,
    /// `cargo … --message-format json`: the compiler's JSON diagnostics, and the test
    /// harness's result lines and panics.
    Cargo,
    /// JUnit XML: the file named by `report`, or the XML printed on the output.
    Junit,
    /// The Test Anything Protocol (`prove -v`, `node --test --test-reporter tap`).
    Tap,
    /// ESLint's JSON report (`eslint -f json`).
    Eslint,
    /// The TypeScript compiler's `file(line,col): error TSxxxx: message` lines.
    Tsc,
}

impl CheckParser {
    /// Every parser, in the order the documentation lists them.
    pub const ALL: [CheckParser; 6] = [
        CheckParser::Cargo,
        CheckParser::Junit,
        CheckParser::Tap,
        CheckParser::Eslint,
        CheckParser::Tsc,
        CheckParser::Plain,
    ];

    /// The parser's name as a declaration writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckParser::Plain => "plain",
            CheckParser::Cargo => "cargo",
            CheckParser::Junit => "junit",
            CheckParser::Tap => "tap",
            CheckParser::Eslint => "eslint",
            CheckParser::Tsc => "tsc",
        }
    }

    /// The parser a declaration names, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|parser| parser.as_str() == name)
    }
}

/// One check, declared and checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckDeclaration {
    /// Its id, unique among the session's checks.
    pub id: String,
    /// The command, run with `bash -c` in the workspace root, in the session's sandbox.
    pub command: String,
    /// What it verifies.
    pub description: Option<String>,
    /// How long it may run before its process group is killed.
    #[serde(skip)]
    pub timeout: Duration,
    /// How its output is read.
    pub parser: CheckParser,
    /// The JUnit XML file it writes, relative to the workspace (`parser: junit`).
    pub report: Option<String>,
    /// Checks that must have ended before it starts, when they run in the same call.
    pub depends_on: Vec<String>,
    /// Whether it runs with no other check running.
    pub exclusive: bool,
    /// Globs (relative to the workspace) of the files it reads; empty for every file not
    /// ignored. The cache keys its result on them.
    pub inputs: Vec<String>,
    /// The file that declares it (an agent file, or the workspace's `.qilin/checks.yaml`).
    pub declared_in: PathBuf,
}

/// One check as written.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct RawCheck {
    id: Option<serde_yaml_ng::Value>,
    command: Option<serde_yaml_ng::Value>,
    description: Option<String>,
    timeout: Option<serde_yaml_ng::Value>,
    parser: Option<String>,
    report: Option<String>,
    #[serde(default)]
    depends_on: Vec<String>,
    #[serde(default)]
    exclusive: bool,
    #[serde(default)]
    inputs: Vec<String>,
}

#[derive(Deserialize, Default)]
struct RawWorkspaceFile {
    #[serde(default)]
    checks: Vec<RawCheck>,
}

fn key(name: &str) -> Segment {
    Segment::Key(name.to_string())
}

/// A scalar YAML value as text (a number written for an id stays usable).
fn scalar_text(value: &serde_yaml_ng::Value) -> Option<String> {
    match value {
        serde_yaml_ng::Value::String(text) => Some(text.clone()),
        serde_yaml_ng::Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// A `timeout` as written: a whole number of seconds, or a number followed by `s`, `m` or
/// `h`. Refused: zero, past [`MAX_CHECK_TIMEOUT`], or anything else.
pub fn parse_check_timeout(value: &serde_yaml_ng::Value) -> Result<Duration, String> {
    let expected = format!(
        "write seconds (`90`) or a number with `s`, `m` or `h` (`90s`, `5m`), from 1 s to {} min",
        MAX_CHECK_TIMEOUT.as_secs() / 60
    );
    let seconds = match value {
        serde_yaml_ng::Value::Number(number) => number.as_u64(),
        serde_yaml_ng::Value::String(text) => {
            let text = text.trim();
            let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
                Some(at) => text.split_at(at),
                None => (text, "s"),
            };
            let factor = match unit.trim() {
                "s" | "sec" | "secs" => Some(1),
                "m" | "min" | "mins" => Some(60),
                "h" => Some(3600),
                _ => None,
            };
            match (digits.parse::<u64>(), factor) {
                (Ok(n), Some(factor)) => n.checked_mul(factor),
                _ => None,
            }
        }
        _ => None,
    };
    let written = match value {
        serde_yaml_ng::Value::String(text) => format!("`{text}`"),
        serde_yaml_ng::Value::Number(number) => format!("`{number}`"),
        _ => "not a number or a text".to_string(),
    };
    match seconds {
        Some(0) => Err(format!(
            "`timeout` is {written}, which is no time; {expected}"
        )),
        Some(s) if s > MAX_CHECK_TIMEOUT.as_secs() => Err(format!(
            "`timeout` is {written}, past the longest a check may run; {expected}"
        )),
        Some(s) => Ok(Duration::from_secs(s)),
        None => Err(format!("`timeout` is {written}; {expected}")),
    }
}

/// What is wrong with a check id, if anything.
fn id_problem(id: &str) -> Option<String> {
    if id.is_empty() || id.chars().count() > MAX_CHECK_ID_CHARS {
        return Some(format!("must be 1 to {MAX_CHECK_ID_CHARS} characters"));
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Some("may hold only ASCII letters, digits, `_`, `-` and `.`".to_string());
    }
    None
}

/// Checks the declarations of `raw` (the list at `list` in `source`) and returns those that
/// are valid; every problem is added to `errors` with its line.
pub(crate) fn read_checks(
    raw: &[RawCheck],
    source: &Source,
    list: &[Segment],
    errors: &mut Vec<Diagnostic>,
) -> Vec<CheckDeclaration> {
    let mut checks: Vec<CheckDeclaration> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (index, check) in raw.iter().enumerate() {
        let mut at = list.to_vec();
        at.push(Segment::Index(index));
        let line_of = |field: &str| {
            let mut path = at.clone();
            path.push(key(field));
            source.line_of(&path)
        };
        let mut fail = |line: Option<usize>, message: String| {
            errors.push(Diagnostic::error(
                DiagnosticKind::InvalidCheck,
                source.path,
                line,
                message,
            ));
        };
        let Some(id) = check.id.as_ref().and_then(scalar_text) else {
            fail(
                source.line_of(&at),
                format!(
                    "check {} has no `id`; give it a short name (`test`, `lint`) that `checks_run` takes",
                    index + 1
                ),
            );
            continue;
        };
        let id = id.trim().to_string();
        if let Some(problem) = id_problem(&id) {
            fail(line_of("id"), format!("check id `{id}` {problem}"));
            continue;
        }
        let mut valid = true;
        if seen.contains(&id) {
            fail(
                line_of("id"),
                format!(
                    "check id `{id}` is declared twice in this file; give each check its own id"
                ),
            );
            valid = false;
        }
        seen.push(id.clone());
        let command = check.command.as_ref().and_then(scalar_text);
        let command = match command {
            Some(command) if !command.trim().is_empty() => command,
            Some(_) => {
                fail(
                    line_of("command"),
                    format!(
                        "check `{id}` has a blank `command`; give the shell command that runs it (`cargo test`)"
                    ),
                );
                valid = false;
                String::new()
            }
            None => {
                fail(
                    source.line_of(&at),
                    format!(
                        "check `{id}` has no `command`; give the shell command that runs it (`cargo test`)"
                    ),
                );
                valid = false;
                String::new()
            }
        };
        let parser = match check.parser.as_deref().map(str::trim) {
            None => CheckParser::Plain,
            Some(name) => match CheckParser::from_name(name) {
                Some(parser) => parser,
                None => {
                    let known: Vec<&str> = CheckParser::ALL.iter().map(|p| p.as_str()).collect();
                    fail(
                        line_of("parser"),
                        format!(
                            "check `{id}` names parser `{name}`, which does not exist; the parsers are {}",
                            known.join(", ")
                        ),
                    );
                    valid = false;
                    CheckParser::Plain
                }
            },
        };
        let timeout = match &check.timeout {
            None => DEFAULT_CHECK_TIMEOUT,
            Some(value) => match parse_check_timeout(value) {
                Ok(timeout) => timeout,
                Err(problem) => {
                    fail(line_of("timeout"), format!("check `{id}`: {problem}"));
                    valid = false;
                    DEFAULT_CHECK_TIMEOUT
                }
            },
        };
        if check.report.is_some() && parser != CheckParser::Junit {
            fail(
                line_of("report"),
                format!(
                    "check `{id}` names a `report` file, which only `parser: junit` reads; set the parser or remove `report`"
                ),
            );
            valid = false;
        }
        if let Some(report) = &check.report
            && (report.trim().is_empty()
                || Path::new(report).is_absolute()
                || report.contains(".."))
        {
            fail(
                line_of("report"),
                format!(
                    "check `{id}`: `report: {report}` must be a path inside the workspace, relative to it (`build/junit.xml`)"
                ),
            );
            valid = false;
        }
        for (n, glob) in check.inputs.iter().enumerate() {
            if let Err(err) = globset::Glob::new(glob) {
                let mut path = at.clone();
                path.extend([key("inputs"), Segment::Index(n)]);
                fail(
                    source.line_of(&path),
                    format!(
                        "check `{id}`: input `{glob}` is not a valid glob ({}); write a pattern relative to the workspace (`src/**/*.rs`)",
                        err.kind()
                    ),
                );
                valid = false;
            }
        }
        if check.depends_on.iter().any(|other| other == &id) {
            fail(
                line_of("depends_on"),
                format!(
                    "check `{id}` depends on itself; name the checks that must end before it starts"
                ),
            );
            valid = false;
        }
        if valid {
            checks.push(CheckDeclaration {
                id,
                command,
                description: check.description.clone(),
                timeout,
                parser,
                report: check.report.clone(),
                depends_on: check.depends_on.clone(),
                exclusive: check.exclusive,
                inputs: check.inputs.clone(),
                declared_in: source.path.to_path_buf(),
            });
        }
    }
    checks
}

/// The checks the workspace's `.qilin/checks.yaml` declares (none when it has no such file),
/// with every error found and its unknown keys as warnings.
pub fn workspace_checks(workspace: &Path) -> (Vec<CheckDeclaration>, Vec<Diagnostic>) {
    let path = workspace.join(CHECKS_WORKSPACE_FILE);
    let text = match read_own_text(&path, CONFIG_FILE_LIMIT) {
        Ok(text) => text,
        Err(err) if err.is_not_found() => return (Vec::new(), Vec::new()),
        Err(err) => {
            let error = Diagnostic::error(
                DiagnosticKind::InvalidCheck,
                &path,
                None,
                format!("the checks file could not be read: {err}"),
            );
            return (Vec::new(), vec![error]);
        }
    };
    checks_in(&path, &text)
}

/// The checks a checks file's `text` declares (named `path` in findings), with every error
/// found and its unknown keys as warnings.
pub fn checks_in(path: &Path, text: &str) -> (Vec<CheckDeclaration>, Vec<Diagnostic>) {
    let source = Source {
        path,
        text,
        line_offset: 0,
    };
    let (raw, mut diagnostics): (RawWorkspaceFile, _) = match source.parse(WORKSPACE_KEYS) {
        Ok(parsed) => parsed,
        Err(mut error) => {
            error.kind = DiagnosticKind::InvalidCheck;
            error.message = format!(
                "{}; the file holds `checks:`, a list of checks each with `id` and `command`",
                error.message
            );
            return (Vec::new(), vec![error]);
        }
    };
    let checks = read_checks(&raw.checks, &source, &[key("checks")], &mut diagnostics);
    let problems = dependency_problems(&checks);
    for problem in problems {
        diagnostics.push(Diagnostic::error(
            DiagnosticKind::InvalidCheck,
            path,
            source.line_of(&[key("checks")]),
            problem,
        ));
    }
    diagnostics.sort_by_key(|d| d.line);
    (checks, diagnostics)
}

/// The checks of a session: the workspace's, each replaced by the agent's of the same id, then
/// the agent's others, in their order; with what is wrong with their `depends_on` (an unknown
/// id, a cycle). A check whose dependencies are wrong is left out.
pub fn merge_checks(
    workspace: Vec<CheckDeclaration>,
    agent: &[CheckDeclaration],
) -> (Vec<CheckDeclaration>, Vec<String>) {
    let mut merged = workspace;
    for check in agent {
        match merged.iter_mut().find(|earlier| earlier.id == check.id) {
            Some(earlier) => *earlier = check.clone(),
            None => merged.push(check.clone()),
        }
    }
    let problems = dependency_problems(&merged);
    if problems.is_empty() {
        return (merged, problems);
    }
    let broken = broken_ids(&merged);
    merged.retain(|check| !broken.contains(&check.id));
    (merged, problems)
}

/// What is wrong with the `depends_on` of `checks`: an id that is not declared, or a cycle.
fn dependency_problems(checks: &[CheckDeclaration]) -> Vec<String> {
    let ids: Vec<&str> = checks.iter().map(|c| c.id.as_str()).collect();
    let mut problems = Vec::new();
    for check in checks {
        for other in &check.depends_on {
            if !ids.contains(&other.as_str()) {
                problems.push(format!(
                    "check `{}` depends on `{other}`, which is not declared; the checks are {}",
                    check.id,
                    ids.iter()
                        .map(|id| format!("`{id}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    for id in cyclic_ids(checks) {
        problems.push(format!(
            "check `{id}` depends, through `depends_on`, on itself; break the cycle"
        ));
    }
    problems
}

/// The ids whose `depends_on` is wrong: an unknown id, or in a cycle.
fn broken_ids(checks: &[CheckDeclaration]) -> Vec<String> {
    let mut broken = cyclic_ids(checks);
    for check in checks {
        if check
            .depends_on
            .iter()
            .any(|other| !checks.iter().any(|c| &c.id == other))
        {
            broken.push(check.id.clone());
        }
    }
    broken
}

/// The ids of the checks that depend on themselves through a chain of `depends_on`.
fn cyclic_ids(checks: &[CheckDeclaration]) -> Vec<String> {
    let reaches_itself = |start: &CheckDeclaration| {
        let mut seen: Vec<&str> = Vec::new();
        let mut next: Vec<&str> = start.depends_on.iter().map(String::as_str).collect();
        while let Some(id) = next.pop() {
            if id == start.id {
                return true;
            }
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            if let Some(check) = checks.iter().find(|c| c.id == id) {
                next.extend(check.depends_on.iter().map(String::as_str));
            }
        }
        false
    };
    checks
        .iter()
        .filter(|check| reaches_itself(check))
        .map(|check| check.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Vec<CheckDeclaration>, Vec<String>) {
        let (checks, diagnostics) = checks_in(Path::new(".qilin/checks.yaml"), text);
        let messages = diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.line.unwrap_or(0), d.message))
            .collect();
        (checks, messages)
    }

    #[test]
    fn a_valid_file_gives_its_checks_with_their_defaults() {
        let (checks, messages) = parse(
            "checks:\n  - id: test\n    command: cargo test --message-format json\n    parser: cargo\n    timeout: 10m\n  - id: lint\n    command: npx eslint -f json .\n    parser: eslint\n    depends_on: [test]\n    inputs: ['web/**/*.ts']\n  - id: quick\n    command: 'true'\n    timeout: 90\n",
        );
        assert!(messages.is_empty(), "{messages:?}");
        assert_eq!(checks.len(), 3);
        assert_eq!(checks[0].timeout, Duration::from_secs(600));
        assert_eq!(checks[0].parser, CheckParser::Cargo);
        assert_eq!(checks[1].depends_on, ["test"]);
        assert_eq!(checks[2].parser, CheckParser::Plain);
        assert_eq!(checks[2].timeout, Duration::from_secs(90));
    }

    #[test]
    fn each_bad_declaration_names_its_line_and_what_is_expected() {
        let (checks, messages) = parse(
            "checks:\n  - id: a\n    command: x\n    parser: pytest\n  - id: a\n    command: y\n  - id: b\n    command: '  '\n  - id: c\n  - id: d\n    command: z\n    timeout: 2 weeks\n  - id: e\n    command: z\n    timeout: 0\n  - id: f\n    command: z\n    timeout: 3h\n  - command: z\n",
        );
        assert!(checks.is_empty(), "{checks:?}");
        assert_eq!(messages.len(), 8, "{messages:#?}");
        assert!(messages[0].starts_with(
            "4: check `a` names parser `pytest`, which does not exist; the parsers are cargo, junit"
        ));
        assert!(messages[1].starts_with("5: check id `a` is declared twice"));
        assert!(messages[2].starts_with("8: check `b` has a blank `command`"));
        assert!(messages[3].starts_with("9: check `c` has no `command`"));
        assert!(messages[4].starts_with("12: check `d`: `timeout` is `2 weeks`; write seconds"));
        assert!(messages[5].contains("`timeout` is `0`, which is no time"));
        assert!(messages[6].contains("`timeout` is `3h`, past the longest"));
        assert!(messages[7].starts_with("19: check 8 has no `id`"));
    }

    #[test]
    fn the_agents_checks_replace_the_workspaces_by_id_and_dependencies_are_checked() {
        let (workspace, _) = parse(
            "checks:\n  - id: test\n    command: make test\n  - id: lint\n    command: make lint\n",
        );
        let (agent, _) = parse(
            "checks:\n  - id: lint\n    command: cargo clippy\n  - id: doc\n    command: cargo doc\n    depends_on: [lint, nope]\n",
        );
        let (merged, problems) = merge_checks(workspace, &agent);
        let ids: Vec<(&str, &str)> = merged
            .iter()
            .map(|c| (c.id.as_str(), c.command.as_str()))
            .collect();
        assert_eq!(ids, [("test", "make test"), ("lint", "cargo clippy")]);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("check `doc` depends on `nope`, which is not declared"));
        let (cycle, _) = parse(
            "checks:\n  - id: a\n    command: x\n    depends_on: [b]\n  - id: b\n    command: y\n    depends_on: [a]\n  - id: c\n    command: z\n",
        );
        let (merged, problems) = merge_checks(cycle, &[]);
        assert_eq!(merged.len(), 1);
        assert_eq!(problems.len(), 2, "{problems:?}");
    }
}
