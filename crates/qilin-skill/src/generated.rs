//! Skills made at run time — the guide Qilin writes for each MCP server's tools — served from
//! memory like the built-in ones, so nothing on disk can be planted in their place.

use crate::SkillFileError;
use crate::skill_files::{candidates, checked_parts};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The folder generated skills are shown under in diagnostics and listings: `(mcp)/NAME`.
pub const GENERATED_ROOT: &str = "(mcp)";

/// Skill folders made at run time: each a name and its files (`SKILL.md` and others) by
/// `/`-separated relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeneratedSkills {
    folders: BTreeMap<String, GeneratedFolder>,
}

impl GeneratedSkills {
    /// No skills.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the skill folder `name` holding `files` (relative path → text).
    pub fn insert(&mut self, name: impl Into<String>, files: BTreeMap<String, String>) {
        let name = name.into();
        self.folders.insert(
            name.clone(),
            GeneratedFolder {
                name,
                files: Arc::new(files),
            },
        );
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.folders.is_empty()
    }

    /// Each folder, sorted by name.
    pub(crate) fn folders(&self) -> impl Iterator<Item = &GeneratedFolder> {
        self.folders.values()
    }
}

/// One generated skill's folder, in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GeneratedFolder {
    name: String,
    files: Arc<BTreeMap<String, String>>,
}

impl GeneratedFolder {
    /// The folder's name, which is the skill's.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The text of the file at `relative` (`/`-separated), when it exists.
    pub fn text(&self, relative: &str) -> Option<String> {
        self.files.get(relative).cloned()
    }

    /// Every file but `SKILL.md`, sorted.
    pub fn list(&self) -> Vec<String> {
        self.files
            .keys()
            .filter(|path| path.as_str() != crate::SKILL_FILE)
            .cloned()
            .collect()
    }

    /// The text of `requested`, accepting `references/` for `reference/` and back; `files`
    /// is the listing named in errors.
    pub fn read(
        &self,
        skill: &str,
        requested: &str,
        files: &[String],
    ) -> Result<String, SkillFileError> {
        for candidate in candidates(checked_parts(requested)?) {
            let key = slash_path(&candidate);
            if let Some(text) = self.files.get(&key) {
                return Ok(text.clone());
            }
            let prefix = format!("{key}/");
            if self.files.keys().any(|path| path.starts_with(&prefix)) {
                return Err(SkillFileError::NotAFile {
                    path: requested.to_string(),
                    files: files.to_vec(),
                });
            }
        }
        Err(SkillFileError::NotFound {
            skill: skill.to_string(),
            path: requested.to_string(),
            files: files.to_vec(),
        })
    }
}

fn slash_path(path: &Path) -> String {
    path.iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
