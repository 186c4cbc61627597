//! One skill: a folder with a `SKILL.md` in the Agent Skills format, loaded and checked.

use crate::embedded::EmbeddedFolder;
use crate::front_matter::{self, FrontMatterError};
use crate::generated::GeneratedFolder;
use crate::skill_files::{self, SkillFileError};
use crate::yaml::{KnownKeys, Segment, Source};
use crate::{Diagnostic, DiagnosticKind, Loaded};
use qilin_sandbox::{CONFIG_FILE_LIMIT, read_own_file, read_own_text};
use serde::{Deserialize, Serialize};
use serde_yaml_ng::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file every skill folder holds.
pub const SKILL_FILE: &str = "SKILL.md";

/// The longest skill name the Agent Skills format allows.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description the Agent Skills format allows.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest `compatibility` note the Agent Skills format allows.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

const KNOWN_KEYS: KnownKeys = &[(
    "",
    &[
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
    ],
)];

/// A loaded skill: its front matter, its body and the list of its other files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// The skill's name as its front matter writes it (whitespace runs made single spaces),
    /// or its folder's name when it has none. Normally equal to the folder's name; a skill
    /// whose name differs, or breaks the naming rules, still loads with a warning.
    pub name: String,
    /// What the skill teaches and when to read it; shown in the catalog.
    pub description: String,
    /// The license, when the skill states one.
    pub license: Option<String>,
    /// What the skill needs from its environment, when it says.
    pub compatibility: Option<String>,
    /// Free-form string metadata.
    pub metadata: BTreeMap<String, String>,
    /// Tools the skill expects to use (`allowed-tools`), as written.
    pub allowed_tools: Vec<String>,
    /// The skill's folder.
    pub dir: PathBuf,
    /// The Markdown after the front matter.
    #[serde(skip)]
    pub body: String,
    /// The skill's other files, relative to its folder, `/`-separated and sorted.
    pub files: Vec<String>,
    /// Where a built-in or generated skill's files are, in memory; `OnDisk` for a skill on
    /// disk.
    #[serde(skip)]
    source: SkillSource,
}

/// Where a skill's files are read from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum SkillSource {
    /// Its folder on disk.
    #[default]
    OnDisk,
    /// Built into the binary.
    Embedded(EmbeddedFolder),
    /// Made at run time (an MCP server's guide).
    Generated(GeneratedFolder),
}

/// The front matter as written: every field kept as a YAML value and read leniently, so a
/// value of an unexpected type is a warning, not a skill refused.
#[derive(Deserialize)]
struct RawFrontMatter {
    name: Option<Value>,
    description: Option<Value>,
    license: Option<Value>,
    compatibility: Option<Value>,
    metadata: Option<Value>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<Value>,
}

/// A scalar as text (strings as they are, numbers and booleans written out); `None` for a
/// list, a mapping or nothing.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Tagged(tagged) => scalar_text(&tagged.value),
        Value::Null | Value::Sequence(_) | Value::Mapping(_) => None,
    }
}

/// `allowed-tools`: a string of tools separated by spaces or commas per the format and the
/// clients that write it (`Read, Bash(git status:*)`: a parenthesised pattern stays whole),
/// or a list of strings; `None` for anything else.
fn allowed_tools(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::Sequence(items) => items.iter().map(scalar_text).collect(),
        other => scalar_text(other).map(|text| split_tools(&text)),
    }
}

fn split_tools(text: &str) -> Vec<String> {
    let mut tools = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c.is_whitespace() || c == ',') {
            if !current.is_empty() {
                tools.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        tools.push(current);
    }
    tools
}

impl Skill {
    /// Loads the skill in `dir`: parses `SKILL.md` and lists the other files.
    ///
    /// Loading is lenient, as the Agent Skills client guide asks: what breaks the format but
    /// leaves the skill usable is a warning naming `SKILL.md` and the line, and the skill
    /// loads — a name that differs from the folder's, or breaks the naming rules (uppercase,
    /// spaces, over 64 characters), or is missing (the folder's name is used); a description
    /// over 1,024 characters; a plain value holding `: ` (read as quoted text); a license,
    /// compatibility note, metadata or `allowed-tools` of the wrong type (ignored). The skill
    /// is refused, with one error diagnostic, only when `SKILL.md` cannot be read, has no
    /// front matter, its YAML cannot be parsed even after quoting such values, or it has no
    /// description.
    pub fn load(dir: &Path) -> Result<Loaded<Skill>, Diagnostic> {
        Self::load_from(dir, SkillSource::OnDisk)
    }

    /// Loads a skill built into the binary from memory; `shown` is the folder named in its
    /// diagnostics and in [`Skill::dir`].
    pub(crate) fn load_embedded(
        folder: EmbeddedFolder,
        shown: &Path,
    ) -> Result<Loaded<Skill>, Diagnostic> {
        Self::load_from(shown, SkillSource::Embedded(folder))
    }

    /// Loads a skill made at run time from memory; `shown` is the folder named in its
    /// diagnostics and in [`Skill::dir`].
    pub(crate) fn load_generated(
        folder: GeneratedFolder,
        shown: &Path,
    ) -> Result<Loaded<Skill>, Diagnostic> {
        Self::load_from(shown, SkillSource::Generated(folder))
    }

    /// True for a skill Qilin made at run time (an MCP server's guide).
    pub fn is_generated(&self) -> bool {
        matches!(self.source, SkillSource::Generated(_))
    }

    fn load_from(dir: &Path, origin: SkillSource) -> Result<Loaded<Skill>, Diagnostic> {
        let skill_md = dir.join(SKILL_FILE);
        let missing = || "it is missing or not UTF-8".to_string();
        let read = match &origin {
            SkillSource::Embedded(folder) => folder.text(Path::new(SKILL_FILE)).ok_or_else(missing),
            SkillSource::Generated(folder) => folder.text(SKILL_FILE).ok_or_else(missing),
            SkillSource::OnDisk => {
                read_own_text(&skill_md, CONFIG_FILE_LIMIT).map_err(|err| err.to_string())
            }
        };
        let text = read.map_err(|err| {
            Diagnostic::error(
                DiagnosticKind::InvalidSkill,
                &skill_md,
                None,
                format!("SKILL.md could not be read: {err}"),
            )
        })?;
        let cut = front_matter::split(&text).map_err(|err: FrontMatterError| {
            Diagnostic::error(
                DiagnosticKind::InvalidSkill,
                &skill_md,
                Some(err.line()),
                err.message(),
            )
        })?;
        let source = Source {
            path: &skill_md,
            text: cut.yaml,
            line_offset: 1,
        };
        let (raw, mut warnings) = parse_front_matter(&source)?;
        let folder = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let line_of = |key: &str| source.line_of(&[Segment::Key(key.to_string())]);
        let mut warn = |kind: DiagnosticKind, key: &str, message: String| {
            warnings.push(Diagnostic::warning(kind, &skill_md, line_of(key), message));
        };

        let description = match &raw.description {
            None | Some(Value::Null) => {
                return Err(Diagnostic::error(
                    DiagnosticKind::InvalidYaml,
                    &skill_md,
                    Some(1),
                    "SKILL.md has no `description`, so the skill cannot be listed; add \
                     `description:` saying what it teaches and when to read it",
                ));
            }
            Some(value) => match scalar_text(value) {
                Some(text) => text.trim().to_string(),
                None => {
                    return Err(Diagnostic::error(
                        DiagnosticKind::InvalidYaml,
                        &skill_md,
                        line_of("description"),
                        "`description` must be text, not a list or mapping: say what the \
                         skill teaches and when to read it",
                    ));
                }
            },
        };
        if description.is_empty() {
            return Err(Diagnostic::error(
                DiagnosticKind::InvalidSkill,
                &skill_md,
                line_of("description"),
                "`description` is empty; say what the skill teaches and when to read it",
            ));
        }
        if let Some(message) = over_length(
            "description",
            &description,
            MAX_DESCRIPTION_CHARS,
            "the skill loads with all of it, but other clients may refuse it: shorten it to \
             what the skill teaches and when to read it",
        ) {
            warn(DiagnosticKind::LongDescription, "description", message);
        }

        let written_name = raw.name.as_ref().and_then(scalar_text);
        let name = match written_name.map(|name| collapse_whitespace(&name)) {
            Some(name) if !name.is_empty() => {
                if let Some(problem) = name_problem(&name) {
                    warn(
                        DiagnosticKind::NonstandardName,
                        "name",
                        format!(
                            "`name: {name}` {problem}; the skill loads under that name, but \
                             the format wants 1 to {MAX_NAME_CHARS} characters of a-z, 0-9 and \
                             single hyphens inside, like `pdf-tools`"
                        ),
                    );
                } else if name != folder {
                    warn(
                        DiagnosticKind::NameNotFolder,
                        "name",
                        format!(
                            "`name: {name}` differs from the skill's folder `{folder}`; the \
                             skill loads as `{name}`, but the format wants the two equal \
                             (rename one of them)"
                        ),
                    );
                }
                name
            }
            _ => {
                warn(
                    DiagnosticKind::MissingName,
                    "name",
                    format!(
                        "SKILL.md has no usable `name`; the skill loads under its folder's \
                         name `{folder}`: add `name: {folder}`"
                    ),
                );
                folder.clone()
            }
        };

        let mut optional_text = |key: &str, value: Option<&Value>| -> Option<String> {
            let value = value.filter(|value| !value.is_null())?;
            let text = scalar_text(value);
            if text.is_none() {
                warn(
                    DiagnosticKind::IgnoredField,
                    key,
                    format!("`{key}` is ignored: it must be text, not a list or mapping"),
                );
            }
            text
        };
        let license = optional_text("license", raw.license.as_ref());
        let compatibility = optional_text("compatibility", raw.compatibility.as_ref());
        if let Some(message) = compatibility.as_deref().and_then(|note| {
            let kept = "it is kept, but other clients may refuse it";
            over_length("compatibility", note, MAX_COMPATIBILITY_CHARS, kept)
        }) {
            warn(DiagnosticKind::IgnoredField, "compatibility", message);
        }
        let allowed = match raw.allowed_tools.as_ref().map(allowed_tools) {
            None => Vec::new(),
            Some(Some(tools)) => tools,
            Some(None) => {
                warn(
                    DiagnosticKind::IgnoredField,
                    "allowed-tools",
                    "`allowed-tools` is ignored: write the tools as one string (`Read Bash(git:*)`) \
                     or a list of strings"
                        .into(),
                );
                Vec::new()
            }
        };
        let metadata = read_metadata(raw.metadata.as_ref(), &source, &mut warnings);
        let (files, file_warnings) = match &origin {
            SkillSource::Embedded(folder) => (folder.list(), Vec::new()),
            SkillSource::Generated(folder) => (folder.list(), Vec::new()),
            SkillSource::OnDisk => skill_files::list_files(dir),
        };
        warnings.extend(file_warnings);
        Ok(Loaded {
            value: Skill {
                name,
                description,
                license,
                compatibility,
                metadata,
                allowed_tools: allowed,
                dir: dir.to_path_buf(),
                body: cut.body.trim_start_matches(['\r', '\n']).to_string(),
                files,
                source: origin,
            },
            warnings,
        })
    }

    /// The whole text of one of the skill's listed files (`SKILL.md` with its front matter),
    /// from disk or, for a built-in skill, from memory; `None` when it cannot be read as text.
    pub fn source_text(&self, relative: &str) -> Option<String> {
        match &self.source {
            SkillSource::Embedded(folder) => folder.text(Path::new(relative)),
            SkillSource::Generated(folder) => folder.text(relative),
            SkillSource::OnDisk => read_own_text(&self.dir.join(relative), CONFIG_FILE_LIMIT).ok(),
        }
    }

    /// The text of one of the skill's files by relative path; `SKILL.md` gives the body
    /// without front matter. Paths that leave the folder are refused.
    pub fn read_file(&self, path: &str) -> Result<String, SkillFileError> {
        if path.trim().trim_start_matches("./") == SKILL_FILE {
            return Ok(self.body.clone());
        }
        match &self.source {
            SkillSource::Embedded(folder) => return folder.read(&self.name, path, &self.files),
            SkillSource::Generated(folder) => return folder.read(&self.name, path, &self.files),
            SkillSource::OnDisk => {}
        }
        let real = skill_files::resolve(&self.dir, &self.name, path, &self.files)?;
        let bytes =
            read_own_file(&real, CONFIG_FILE_LIMIT).map_err(|err| SkillFileError::Unreadable {
                path: path.to_string(),
                reason: err.to_string(),
            })?;
        String::from_utf8(bytes).map_err(|_| SkillFileError::NotText {
            path: path.to_string(),
        })
    }
}

/// The front matter, strictly parsed, or else with plain values that hold `: ` quoted (one
/// warning per value quoted); the strict parse's error when neither reads.
fn parse_front_matter(source: &Source) -> Result<(RawFrontMatter, Vec<Diagnostic>), Diagnostic> {
    let strict_error = match source.parse::<RawFrontMatter>(KNOWN_KEYS) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    let Some(quoted) = front_matter::quote_colon_values(source.text) else {
        return Err(strict_error);
    };
    let retry = Source {
        text: &quoted.yaml,
        ..*source
    };
    let Ok((raw, mut warnings)) = retry.parse::<RawFrontMatter>(KNOWN_KEYS) else {
        return Err(strict_error);
    };
    warnings.extend(quoted.keys.iter().map(|(key, line)| {
        Diagnostic::warning(
            DiagnosticKind::UnquotedColon,
            source.path,
            Some(source.file_line(*line)),
            format!(
                "the value of `{key}` holds `: ` without quotes, which is not valid YAML; it was \
                 read as quoted text: quote it (`{key}: \"...\"`) so every client reads it"
            ),
        )
    }));
    Ok((raw, warnings))
}

/// `metadata`: a mapping of keys to strings (numbers and booleans written out); other values,
/// and a `metadata` that is not a mapping, are warnings and left out.
fn read_metadata(
    value: Option<&Value>,
    source: &Source,
    warnings: &mut Vec<Diagnostic>,
) -> BTreeMap<String, String> {
    let mut metadata = BTreeMap::new();
    let mapping = match value {
        None | Some(Value::Null) => return metadata,
        Some(Value::Mapping(mapping)) => mapping,
        Some(_) => {
            warnings.push(Diagnostic::warning(
                DiagnosticKind::IgnoredMetadata,
                source.path,
                source.line_of(&[Segment::Key("metadata".into())]),
                "`metadata` is ignored: it must be a mapping of keys to strings",
            ));
            return metadata;
        }
    };
    for (key, value) in mapping {
        let Some(key) = scalar_text(key) else {
            continue;
        };
        let text = match value {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => scalar_text(value),
            _ => None,
        };
        match text {
            Some(text) => {
                metadata.insert(key, text);
            }
            None => {
                let path = [Segment::Key("metadata".into()), Segment::Key(key.clone())];
                warnings.push(Diagnostic::warning(
                    DiagnosticKind::IgnoredMetadata,
                    source.path,
                    source.line_of(&path),
                    format!("`metadata.{key}` is ignored: metadata values must be strings"),
                ));
            }
        }
    }
    metadata
}

/// The warning for a `key` whose `text` is over the format's `max` characters, saying what
/// happens (`consequence`); `None` within the limit.
fn over_length(key: &str, text: &str, max: usize, consequence: &str) -> Option<String> {
    let chars = text.chars().count();
    (chars > max)
        .then(|| format!("`{key}` is {chars} characters, over the format's {max}; {consequence}"))
}

/// `text` with each run of whitespace (line breaks included) as one space, trimmed.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What breaks the Agent Skills naming rules in `name`, if anything.
fn name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        Some(format!("is {chars} characters long"))
    } else if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        Some(format!("contains `{bad}`"))
    } else if name.starts_with('-') || name.ends_with('-') {
        Some("starts or ends with a hyphen".to_string())
    } else if name.contains("--") {
        Some("contains a double hyphen".to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{name_problem, split_tools};

    #[test]
    fn names_follow_the_agent_skills_rules() {
        assert_eq!(name_problem("pdf-tools"), None);
        assert_eq!(name_problem("v2"), None);
        for bad in [
            "-pdf",
            "pdf-",
            "pdf--tools",
            "Pdf",
            "pdf_tools",
            "PDF Tools",
            &"a".repeat(65),
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?} should be flagged");
        }
    }

    #[test]
    fn allowed_tools_split_on_spaces_and_commas_outside_parentheses() {
        assert_eq!(
            split_tools("Read, Write Bash(git status:*), Grep"),
            ["Read", "Write", "Bash(git status:*)", "Grep"]
        );
        assert!(split_tools("  ").is_empty());
    }
}
