//! Skills built into the binary, served from memory: never written to disk, so no other user
//! can create, own or change their folder.

use crate::SkillFileError;
use crate::skill_files::{candidates, checked_parts, relative};
use include_dir::Dir;
use std::fmt;
use std::path::{Path, PathBuf};

/// A tree of skill folders built into the binary (`include_dir!`), one skill per folder.
#[derive(Clone, Copy)]
pub struct EmbeddedSkills(&'static Dir<'static>);

impl EmbeddedSkills {
    /// The skills whose folders are the sub-folders of `files`.
    pub const fn new(files: &'static Dir<'static>) -> Self {
        EmbeddedSkills(files)
    }

    /// Each skill folder, sorted by name; hidden ones left out.
    pub(crate) fn folders(&self) -> Vec<EmbeddedFolder> {
        let mut folders: Vec<EmbeddedFolder> = self
            .0
            .dirs()
            .map(EmbeddedFolder)
            .filter(|folder| !folder.name().starts_with('.'))
            .collect();
        folders.sort_by_key(EmbeddedFolder::name);
        folders
    }
}

impl PartialEq for EmbeddedSkills {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for EmbeddedSkills {}

impl fmt::Debug for EmbeddedSkills {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EmbeddedSkills({} skills)", self.0.dirs().count())
    }
}

/// One built-in skill's folder.
#[derive(Clone, Copy)]
pub(crate) struct EmbeddedFolder(&'static Dir<'static>);

impl EmbeddedFolder {
    /// The folder's name, which is the skill's.
    pub fn name(&self) -> String {
        self.0
            .path()
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The text of the file at `relative`, when it exists and is UTF-8.
    pub fn text(&self, relative: &Path) -> Option<String> {
        let file = self.0.get_file(self.0.path().join(relative))?;
        file.contents_utf8().map(str::to_string)
    }

    /// Every file but `SKILL.md`, relative to the folder with `/` separators, sorted; hidden
    /// files and folders left out.
    pub fn list(&self) -> Vec<String> {
        fn collect(dir: &Dir<'static>, root: &Path, out: &mut Vec<String>) {
            for file in dir.files() {
                out.push(relative(root, file.path()));
            }
            for sub in dir.dirs() {
                collect(sub, root, out);
            }
        }
        let mut files = Vec::new();
        collect(self.0, self.0.path(), &mut files);
        files.retain(|path| {
            path != crate::SKILL_FILE && !path.split('/').any(|part| part.starts_with('.'))
        });
        files.sort();
        files
    }

    /// The text of `requested` (`reference/x.md`), accepting `references/` for `reference/`
    /// and back; `files` is the listing named in errors.
    pub fn read(
        &self,
        skill: &str,
        requested: &str,
        files: &[String],
    ) -> Result<String, SkillFileError> {
        for candidate in candidates(checked_parts(requested)?) {
            let full: PathBuf = self.0.path().join(&candidate);
            if let Some(file) = self.0.get_file(&full) {
                return file.contents_utf8().map(str::to_string).ok_or_else(|| {
                    SkillFileError::NotText {
                        path: requested.to_string(),
                    }
                });
            }
            if self.0.get_dir(&full).is_some() {
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

impl PartialEq for EmbeddedFolder {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for EmbeddedFolder {}

impl fmt::Debug for EmbeddedFolder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EmbeddedFolder({})", self.name())
    }
}
