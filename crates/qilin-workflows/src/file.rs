//! Workflow files: `.qilin/workflows/NAME.py`, a Python script whose module docstring is its
//! front matter in YAML.
//!
//! ```python
//! """
//! description: Review a folder with three explorers and report what they found.
//! args:
//!   path:
//!     type: string
//!     description: The folder to review.
//!     default: src
//! checks: [unit]
//! limits:
//!   max_calls: 20
//!   timeout_secs: 600
//! """
//! import asyncio
//! ...
//! ```
//!
//! Workflows are found as skills are: the workspace's `.qilin/workflows/` first, then the
//! user's `~/.qilin/workflows/`; the first folder holding `NAME.py` wins.

use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The folder, under a workspace's `.qilin/` (or the user's `~/.qilin/`), holding workflows.
pub const WORKFLOWS_DIR: &str = "workflows";

/// The longest a workflow may run when its front matter names no `timeout_secs`: an hour.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60 * 60;

/// A workflow file, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowFile {
    /// Its name: the file's name without `.py`.
    pub name: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// What it does, from its front matter.
    pub description: String,
    /// The arguments it takes, by name.
    pub args: BTreeMap<String, ArgSpec>,
    /// The ids of the checks run when the script has ended; the run fails when one fails.
    pub checks: Vec<String>,
    /// Its limits.
    pub limits: WorkflowLimits,
    /// The whole file: the script the sandbox runs (its line numbers are the file's).
    pub code: String,
}

/// One argument of a workflow.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    /// Its JSON type.
    #[serde(rename = "type")]
    pub kind: ArgType,
    /// What it is, for the model.
    #[serde(default)]
    pub description: Option<String>,
    /// Its value when it is not given; an argument with a default is optional.
    #[serde(default)]
    pub default: Option<Value>,
    /// Whether it must be given; by default, when it has no default.
    #[serde(default)]
    pub required: Option<bool>,
}

impl ArgSpec {
    /// Whether a run must give it.
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(self.default.is_none())
    }
}

/// The JSON type of a workflow argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgType {
    /// A string.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A list.
    Array,
    /// A dict.
    Object,
}

impl ArgType {
    /// Its name in the front matter.
    pub fn as_str(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::Integer => "integer",
            ArgType::Number => "number",
            ArgType::Boolean => "boolean",
            ArgType::Array => "array",
            ArgType::Object => "object",
        }
    }

    /// Whether `value` is of this type.
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            ArgType::String => value.is_string(),
            ArgType::Integer => value.is_i64() || value.is_u64(),
            ArgType::Number => value.is_number(),
            ArgType::Boolean => value.is_boolean(),
            ArgType::Array => value.is_array(),
            ArgType::Object => value.is_object(),
        }
    }
}

/// What a workflow may use, from its front matter's `limits`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowLimits {
    /// The most tool calls the script may make (code mode's own limit when lower).
    #[serde(default)]
    pub max_calls: Option<usize>,
    /// The longest the whole run may take, calls included, in seconds
    /// ([`DEFAULT_TIMEOUT_SECS`] when absent).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// The front matter as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    description: String,
    #[serde(default)]
    args: BTreeMap<String, ArgSpec>,
    #[serde(default)]
    checks: Vec<String>,
    #[serde(default)]
    limits: WorkflowLimits,
}

/// Why a workflow file cannot be used: its path, the line (from 1) when known, and what is
/// wrong and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct WorkflowFileError {
    /// The file.
    pub path: PathBuf,
    /// The line, from 1, when the problem has one.
    pub line: Option<usize>,
    /// What is wrong and what is expected.
    pub message: String,
}

impl fmt::Display for WorkflowFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// Whether `name` is a valid workflow name: lowercase letters, digits, `-` and `_`, starting
/// with a letter or digit.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_lowercase() || first.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

impl WorkflowFile {
    /// Reads and checks the workflow file at `path`.
    pub fn load(path: &Path) -> Result<WorkflowFile, WorkflowFileError> {
        let text = std::fs::read_to_string(path).map_err(|err| WorkflowFileError {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot be read: {err}"),
        })?;
        WorkflowFile::parse(path, &text)
    }

    /// Checks the workflow `text`, read from `path` (which names it).
    pub fn parse(path: &Path, text: &str) -> Result<WorkflowFile, WorkflowFileError> {
        let error = |line: Option<usize>, message: String| WorkflowFileError {
            path: path.to_path_buf(),
            line,
            message,
        };
        let name = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or_default()
            .to_string();
        if path.extension().and_then(|ext| ext.to_str()) != Some("py") || !valid_name(&name) {
            return Err(error(
                None,
                format!(
                    "a workflow file is named NAME.py, NAME of lowercase letters, digits, `-` \
                     and `_` (`review-folder.py`); `{}` is not",
                    path.file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                        .unwrap_or_default()
                ),
            ));
        }
        let (yaml, first_line) =
            front_matter(text).map_err(|(line, message)| error(line, message))?;
        let front: FrontMatter = serde_yaml_ng::from_str(yaml).map_err(|err| {
            let line = err.location().map(|at| first_line + at.line() - 1);
            error(
                line,
                format!(
                    "the front matter is not valid: {}; expected `description` (text), \
                     optional `args` (each NAME: {{type, description?, default?, required?}}), \
                     `checks` (check ids) and `limits` ({{max_calls?, timeout_secs?}})",
                    strip_location(&err.to_string())
                ),
            )
        })?;
        let line_of = |key: &str| {
            yaml.lines()
                .position(|line| line.trim_start().starts_with(&format!("{key}:")))
                .map(|at| first_line + at)
        };
        if front.description.trim().is_empty() {
            return Err(error(
                line_of("description"),
                "`description` is empty; say in a sentence what the workflow does".to_string(),
            ));
        }
        for (arg, spec) in &front.args {
            if !is_identifier(arg) {
                return Err(error(
                    line_of(arg),
                    format!(
                        "argument `{arg}` is not a Python identifier (letters, digits and `_`, \
                         not starting with a digit): the script reads it as args[\"{arg}\"] and \
                         tools take it by name"
                    ),
                ));
            }
            if let Some(default) = &spec.default
                && !spec.kind.accepts(default)
            {
                return Err(error(
                    line_of(arg),
                    format!(
                        "the default of argument `{arg}` is {default}, not of its type `{}`",
                        spec.kind.as_str()
                    ),
                ));
            }
        }
        if front.limits.max_calls == Some(0) || front.limits.timeout_secs == Some(0) {
            return Err(error(
                line_of("limits"),
                "`limits.max_calls` and `limits.timeout_secs` must be at least 1".to_string(),
            ));
        }
        if let Some(check) = front.checks.iter().find(|id| id.trim().is_empty()) {
            return Err(error(
                line_of("checks"),
                format!("`checks` holds an empty id ({check:?}); name declared checks"),
            ));
        }
        Ok(WorkflowFile {
            name,
            path: path.to_path_buf(),
            description: front.description.trim().to_string(),
            args: front.args,
            checks: front.checks,
            limits: front.limits,
            code: text.to_string(),
        })
    }

    /// The arguments of a run: `given` checked against the declared arguments (each known,
    /// of its type, every required one given), defaults filled in.
    pub fn arguments(&self, given: Option<&Value>) -> Result<Value, String> {
        let given = match given {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(given)) => given.clone(),
            Some(other) => {
                return Err(format!(
                    "`args` must be an object of the workflow's arguments, got {other}"
                ));
            }
        };
        let known = || {
            if self.args.is_empty() {
                "it takes none".to_string()
            } else {
                format!(
                    "it takes {}",
                    self.args
                        .iter()
                        .map(|(name, spec)| format!("`{name}` ({})", spec.kind.as_str()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        };
        if let Some(unknown) = given.keys().find(|key| !self.args.contains_key(*key)) {
            return Err(format!(
                "workflow `{}` has no argument `{unknown}`: {}",
                self.name,
                known()
            ));
        }
        let mut args = Map::new();
        for (name, spec) in &self.args {
            match given.get(name).or(spec.default.as_ref()) {
                Some(value) if !spec.kind.accepts(value) => {
                    return Err(format!(
                        "argument `{name}` of workflow `{}` must be of type `{}`, got {value}",
                        self.name,
                        spec.kind.as_str()
                    ));
                }
                Some(value) => {
                    args.insert(name.clone(), value.clone());
                }
                None if spec.is_required() => {
                    return Err(format!(
                        "workflow `{}` needs argument `{name}` ({}{}): {}",
                        self.name,
                        spec.kind.as_str(),
                        spec.description
                            .as_deref()
                            .map(|d| format!(", {d}"))
                            .unwrap_or_default(),
                        known()
                    ));
                }
                None => {
                    args.insert(name.clone(), Value::Null);
                }
            }
        }
        Ok(Value::Object(args))
    }
}

/// The YAML of the module docstring `text` starts with, and the file line its first line is
/// on; or the line and why there is none.
fn front_matter(text: &str) -> Result<(&str, usize), (Option<usize>, String)> {
    const EXPECTED: &str = "a workflow starts with its front matter: a docstring (`\"\"\"` on \
                            the first line, then YAML with at least `description:`, then `\"\"\"`)";
    let mut offset = 0;
    let mut line = 1;
    for raw in text.split_inclusive('\n') {
        let trimmed = raw.trim();
        if trimmed.is_empty() || (line == 1 && trimmed.starts_with("#!")) {
            offset += raw.len();
            line += 1;
            continue;
        }
        break;
    }
    let rest = &text[offset..];
    let Some(body) = rest
        .strip_prefix("\"\"\"")
        .or_else(|| rest.strip_prefix("r\"\"\""))
    else {
        return Err((Some(line), EXPECTED.to_string()));
    };
    let Some(end) = body.find("\"\"\"") else {
        return Err((
            Some(line),
            "the front matter's docstring is never closed: end it with `\"\"\"` on a line of \
             its own"
                .to_string(),
        ));
    };
    let yaml = &body[..end];
    // The YAML's first line is the docstring's own when text follows the quotes on it.
    let (yaml, first_line) = match yaml.strip_prefix('\n') {
        Some(after) => (after, line + 1),
        None => (yaml, line),
    };
    if yaml.trim().is_empty() {
        return Err((Some(line), EXPECTED.to_string()));
    }
    Ok((yaml, first_line))
}

/// A YAML error's message without the " at line L column C" the caller gives as a line.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The folders workflows are found in for `workspace`, first wins: its `.qilin/workflows/`,
/// then `home`'s `.qilin/workflows/`.
pub fn workflow_dirs(workspace: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![workspace.join(".qilin").join(WORKFLOWS_DIR)];
    if let Some(home) = home {
        let user = home.join(".qilin").join(WORKFLOWS_DIR);
        if !dirs.contains(&user) {
            dirs.push(user);
        }
    }
    dirs
}

/// The folders workflows are found in for `workspace`, the user's from `HOME`.
pub fn default_workflow_dirs(workspace: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    workflow_dirs(workspace, home.as_deref())
}

/// Every workflow file in `dirs` (`*.py`), a name found twice only in its first folder, sorted
/// by name.
pub fn workflow_paths(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: BTreeMap<String, PathBuf> = BTreeMap::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "py"))
            .collect();
        paths.sort();
        for path in paths {
            if let Some(stem) = path.file_stem().and_then(|stem| stem.to_str()) {
                found.entry(stem.to_string()).or_insert(path);
            }
        }
    }
    found.into_values().collect()
}

/// The workflow named `name` in `dirs`, read and checked; the error names what exists when it
/// is not found.
pub fn find_workflow(dirs: &[PathBuf], name: &str) -> Result<WorkflowFile, String> {
    let name = name.trim().trim_end_matches(".py");
    if !valid_name(name) {
        return Err(format!(
            "`{name}` is not a workflow name: a workflow is named by its file, \
             .qilin/workflows/NAME.py, NAME of lowercase letters, digits, `-` and `_`"
        ));
    }
    match dirs
        .iter()
        .map(|dir| dir.join(format!("{name}.py")))
        .find(|path| path.is_file())
    {
        Some(path) => WorkflowFile::load(&path).map_err(|err| err.to_string()),
        None => {
            let known: Vec<String> = workflow_paths(dirs)
                .iter()
                .filter_map(|path| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .collect();
            Err(format!(
                "no workflow is named `{name}` (looked for {name}.py in {}); {}",
                dirs.iter()
                    .map(|dir| dir.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if known.is_empty() {
                    "there are no workflows".to_string()
                } else {
                    format!("the workflows are: {}", known.join(", "))
                }
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GOOD: &str = "\"\"\"\ndescription: Review a folder.\nargs:\n  path:\n    type: string\n    default: src\n  depth:\n    type: integer\nlimits:\n  max_calls: 5\n\"\"\"\nprint(args)\n";

    #[test]
    fn a_front_matter_is_read_with_its_arguments_and_limits() {
        let file = WorkflowFile::parse(Path::new("/w/review.py"), GOOD).unwrap();
        assert_eq!(file.name, "review");
        assert_eq!(file.description, "Review a folder.");
        assert_eq!(file.limits.max_calls, Some(5));
        assert!(!file.args["path"].is_required());
        assert!(file.args["depth"].is_required());
        assert_eq!(
            file.arguments(Some(&json!({"depth": 2}))).unwrap(),
            json!({"path": "src", "depth": 2})
        );
        let missing = file.arguments(None).unwrap_err();
        assert!(
            missing.contains("needs argument `depth` (integer)"),
            "{missing}"
        );
        let unknown = file
            .arguments(Some(&json!({"depth": 1, "deep": 1})))
            .unwrap_err();
        assert!(unknown.contains("no argument `deep`"), "{unknown}");
        let typed = file.arguments(Some(&json!({"depth": "2"}))).unwrap_err();
        assert!(typed.contains("must be of type `integer`"), "{typed}");
    }

    #[test]
    fn a_bad_front_matter_names_the_file_the_line_and_what_is_expected() {
        let path = Path::new("/w/review.py");
        let no_docstring = WorkflowFile::parse(path, "\n# hi\nprint(1)\n").unwrap_err();
        assert_eq!(no_docstring.line, Some(2));
        assert!(no_docstring.message.contains("docstring"), "{no_docstring}");
        let unknown_key = WorkflowFile::parse(
            path,
            "\"\"\"\ndescription: x\nlimit:\n  max_calls: 3\n\"\"\"\n",
        )
        .unwrap_err();
        assert_eq!(unknown_key.line, Some(3), "{unknown_key}");
        assert!(
            unknown_key.to_string().starts_with("/w/review.py:3: "),
            "{unknown_key}"
        );
        assert!(
            unknown_key.message.contains("unknown field `limit`"),
            "{unknown_key}"
        );
        let bad_type = WorkflowFile::parse(
            path,
            "\"\"\"\ndescription: x\nargs:\n  n:\n    type: int\n\"\"\"\n",
        )
        .unwrap_err();
        assert_eq!(bad_type.line, Some(5), "{bad_type}");
        assert!(
            bad_type.message.contains("unknown variant `int`"),
            "{bad_type}"
        );
        let bad_default = WorkflowFile::parse(
            path,
            "\"\"\"\ndescription: x\nargs:\n  n:\n    type: integer\n    default: many\n\"\"\"\n",
        )
        .unwrap_err();
        assert_eq!(bad_default.line, Some(4), "{bad_default}");
        let unclosed = WorkflowFile::parse(path, "\"\"\"\ndescription: x\n").unwrap_err();
        assert!(unclosed.message.contains("never closed"), "{unclosed}");
        let bad_name = WorkflowFile::parse(Path::new("/w/Review.py"), GOOD).unwrap_err();
        assert!(bad_name.message.contains("lowercase"), "{bad_name}");
    }

    #[test]
    fn workflows_are_found_first_folder_first() {
        let workspace = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let dirs = workflow_dirs(workspace.path(), Some(home.path()));
        for dir in &dirs {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(dirs[0].join("review.py"), GOOD).unwrap();
        std::fs::write(
            dirs[1].join("review.py"),
            GOOD.replace("Review a folder.", "Mine."),
        )
        .unwrap();
        std::fs::write(dirs[1].join("mine.py"), GOOD).unwrap();
        assert_eq!(workflow_paths(&dirs).len(), 2);
        let review = find_workflow(&dirs, "review").unwrap();
        assert_eq!(review.description, "Review a folder.");
        let missing = find_workflow(&dirs, "absent").unwrap_err();
        assert!(
            missing.contains("the workflows are: mine, review"),
            "{missing}"
        );
    }
}
