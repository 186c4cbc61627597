//! One skill: a folder with a `SKILL.md` in the Agent Skills format, loaded and checked.

use crate::embedded::EmbeddedFolder;
use crate::front_matter::{self, FrontMatterError};
use crate::skill_files::{self, SkillFileError};
use crate::yaml::{KnownKeys, Segment, Source};
use crate::{Diagnostic, DiagnosticKind, Loaded};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
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
    /// The skill's name, equal to its folder's name.
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
    /// Where a built-in skill's files are, in memory; `None` for a skill on disk.
    #[serde(skip)]
    embedded: Option<EmbeddedFolder>,
}

#[derive(Deserialize)]
struct RawFrontMatter {
    name: String,
    description: String,
    license: Option<String>,
    compatibility: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, serde_yaml_ng::Value>,
    #[serde(rename = "allowed-tools", default)]
    allowed_tools: AllowedTools,
}

/// `allowed-tools`: a space-separated string per the format, or a list as some clients write.
#[derive(Default)]
struct AllowedTools(Vec<String>);

impl<'de> Deserialize<'de> for AllowedTools {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AllowedToolsVisitor;
        impl<'de> Visitor<'de> for AllowedToolsVisitor {
            type Value = AllowedTools;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a space-separated string of tools (`Read Bash(git:*)`) or a list of strings",
                )
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<AllowedTools, E> {
                Ok(AllowedTools(
                    text.split_whitespace().map(str::to_string).collect(),
                ))
            }
            fn visit_unit<E: de::Error>(self) -> Result<AllowedTools, E> {
                Ok(AllowedTools::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AllowedTools, A::Error> {
                let mut tools = Vec::new();
                while let Some(tool) = seq.next_element::<String>()? {
                    tools.push(tool);
                }
                Ok(AllowedTools(tools))
            }
        }
        deserializer.deserialize_any(AllowedToolsVisitor)
    }
}

impl Skill {
    /// Loads the skill in `dir`: parses and checks `SKILL.md` and lists the other files.
    /// Any error is one diagnostic naming `SKILL.md` and the line.
    pub fn load(dir: &Path) -> Result<Loaded<Skill>, Diagnostic> {
        Self::load_from(dir, None)
    }

    /// Loads a skill built into the binary from memory; `shown` is the folder named in its
    /// diagnostics and in [`Skill::dir`].
    pub(crate) fn load_embedded(
        folder: EmbeddedFolder,
        shown: &Path,
    ) -> Result<Loaded<Skill>, Diagnostic> {
        Self::load_from(shown, Some(folder))
    }

    fn load_from(
        dir: &Path,
        embedded: Option<EmbeddedFolder>,
    ) -> Result<Loaded<Skill>, Diagnostic> {
        let skill_md = dir.join(SKILL_FILE);
        let read = match embedded {
            Some(folder) => folder
                .text(Path::new(SKILL_FILE))
                .ok_or_else(|| std::io::Error::other("it is missing or not UTF-8")),
            None => std::fs::read_to_string(&skill_md),
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
        let (raw, mut warnings): (RawFrontMatter, _) = source.parse(KNOWN_KEYS)?;
        let folder = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let line_of = |key: &str| source.line_of(&[Segment::Key(key.to_string())]);
        if let Err(problem) = check_name(&raw.name, &folder) {
            return Err(Diagnostic::error(
                DiagnosticKind::InvalidSkill,
                &skill_md,
                line_of("name"),
                problem,
            ));
        }
        let description = raw.description.trim().to_string();
        let description_chars = description.chars().count();
        if description_chars == 0 || description_chars > MAX_DESCRIPTION_CHARS {
            return Err(Diagnostic::error(
                DiagnosticKind::InvalidSkill,
                &skill_md,
                line_of("description"),
                format!(
                    "`description` is {description_chars} characters; it must be 1 to \
                     {MAX_DESCRIPTION_CHARS}: say what the skill teaches and when to read it"
                ),
            ));
        }
        if let Some(compatibility) = &raw.compatibility {
            let chars = compatibility.chars().count();
            if chars == 0 || chars > MAX_COMPATIBILITY_CHARS {
                return Err(Diagnostic::error(
                    DiagnosticKind::InvalidSkill,
                    &skill_md,
                    line_of("compatibility"),
                    format!(
                        "`compatibility` is {chars} characters; it must be 1 to {MAX_COMPATIBILITY_CHARS}"
                    ),
                ));
            }
        }
        let mut metadata = BTreeMap::new();
        for (key, value) in raw.metadata {
            let text = match value {
                serde_yaml_ng::Value::String(text) => text,
                serde_yaml_ng::Value::Number(number) => number.to_string(),
                serde_yaml_ng::Value::Bool(flag) => flag.to_string(),
                _ => {
                    let path = [Segment::Key("metadata".into()), Segment::Key(key.clone())];
                    warnings.push(Diagnostic::warning(
                        DiagnosticKind::IgnoredMetadata,
                        &skill_md,
                        source.line_of(&path),
                        format!("`metadata.{key}` is ignored: metadata values must be strings"),
                    ));
                    continue;
                }
            };
            metadata.insert(key, text);
        }
        let (files, file_warnings) = match embedded {
            Some(folder) => (folder.list(), Vec::new()),
            None => skill_files::list_files(dir),
        };
        warnings.extend(file_warnings);
        Ok(Loaded {
            value: Skill {
                name: raw.name,
                description,
                license: raw.license,
                compatibility: raw.compatibility,
                metadata,
                allowed_tools: raw.allowed_tools.0,
                dir: dir.to_path_buf(),
                body: cut.body.trim_start_matches(['\r', '\n']).to_string(),
                files,
                embedded,
            },
            warnings,
        })
    }

    /// The whole text of one of the skill's listed files (`SKILL.md` with its front matter),
    /// from disk or, for a built-in skill, from memory; `None` when it cannot be read as text.
    pub fn source_text(&self, relative: &str) -> Option<String> {
        match self.embedded {
            Some(folder) => folder.text(Path::new(relative)),
            None => std::fs::read_to_string(self.dir.join(relative)).ok(),
        }
    }

    /// The text of one of the skill's files by relative path; `SKILL.md` gives the body
    /// without front matter. Paths that leave the folder are refused.
    pub fn read_file(&self, path: &str) -> Result<String, SkillFileError> {
        if path.trim().trim_start_matches("./") == SKILL_FILE {
            return Ok(self.body.clone());
        }
        if let Some(folder) = self.embedded {
            return folder.read(&self.name, path, &self.files);
        }
        let real = skill_files::resolve(&self.dir, &self.name, path, &self.files)?;
        let bytes = std::fs::read(&real).map_err(|err| SkillFileError::Unreadable {
            path: path.to_string(),
            reason: err.to_string(),
        })?;
        String::from_utf8(bytes).map_err(|_| SkillFileError::NotText {
            path: path.to_string(),
        })
    }
}

/// Checks a name against the Agent Skills rules and the folder's name.
fn check_name(name: &str, folder: &str) -> Result<(), String> {
    let chars = name.chars().count();
    let problem = if chars == 0 || chars > MAX_NAME_CHARS {
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
    };
    if let Some(problem) = problem {
        return Err(format!(
            "`name: {name}` {problem}; a skill name is 1 to {MAX_NAME_CHARS} characters of \
             a-z, 0-9 and single hyphens inside, like `pdf-tools`"
        ));
    }
    if name != folder {
        return Err(format!(
            "`name: {name}` does not match the skill's folder `{folder}`; the name must equal \
             the folder's name (rename one of them)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_name;

    #[test]
    fn names_follow_the_agent_skills_rules() {
        assert!(check_name("pdf-tools", "pdf-tools").is_ok());
        assert!(check_name("v2", "v2").is_ok());
        for bad in [
            "",
            "-pdf",
            "pdf-",
            "pdf--tools",
            "Pdf",
            "pdf_tools",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad, bad).is_err(), "{bad:?} should be refused");
        }
        let mismatch = check_name("pdf", "pdf-tools").unwrap_err();
        assert!(mismatch.contains("folder `pdf-tools`"), "{mismatch}");
    }
}
