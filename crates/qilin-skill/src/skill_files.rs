//! The files of a skill folder: listing them without following a symlink out or round a
//! loop, and resolving a relative path without leaving the folder.

use crate::{Diagnostic, DiagnosticKind};
use std::path::{Component, Path, PathBuf};
use walkdir::WalkDir;

/// The most files listed for one skill; a larger folder is listed up to this and warned about.
pub const MAX_LISTED_FILES: usize = 500;

/// Why a file of a skill cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillFileError {
    /// The path is empty.
    #[error("the file path is empty; give a path inside the skill folder, like `reference/x.md`")]
    Empty,
    /// The path is absolute.
    #[error(
        "`{path}` is an absolute path; give a path relative to the skill folder, like `reference/x.md`"
    )]
    Absolute {
        /// The path asked for.
        path: String,
    },
    /// The path climbs out with `..`.
    #[error(
        "`{path}` leaves the skill folder through `..`; only files inside the skill folder can be read"
    )]
    LeavesFolder {
        /// The path asked for.
        path: String,
    },
    /// The path resolves, through a symlink, to a file outside the skill folder.
    #[error(
        "`{path}` is a symlink leading outside the skill folder; only files inside the skill folder can be read"
    )]
    LinksOutside {
        /// The path asked for.
        path: String,
    },
    /// No such file.
    #[error("skill `{skill}` has no file `{path}`; {}", file_list(.files))]
    NotFound {
        /// The skill.
        skill: String,
        /// The path asked for.
        path: String,
        /// The files the skill does have.
        files: Vec<String>,
    },
    /// The path names a folder.
    #[error("`{path}` is a folder, not a file; {}", file_list(.files))]
    NotAFile {
        /// The path asked for.
        path: String,
        /// The files the skill does have.
        files: Vec<String>,
    },
    /// The file is not UTF-8 text.
    #[error("`{path}` is not UTF-8 text (a binary asset?); only text files can be read")]
    NotText {
        /// The path asked for.
        path: String,
    },
    /// The file could not be read.
    #[error("`{path}` could not be read: {reason}")]
    Unreadable {
        /// The path asked for.
        path: String,
        /// What the system said.
        reason: String,
    },
}

fn file_list(files: &[String]) -> String {
    if files.is_empty() {
        "it has no files besides SKILL.md".to_string()
    } else {
        format!("its files are: {}", files.join(", "))
    }
}

/// Lists the files under `dir` (relative, `/`-separated, sorted), leaving out `SKILL.md`,
/// hidden entries, symlinks that lead outside `dir` and symlink loops; what it leaves out
/// for a reason other than being hidden becomes a warning.
pub(crate) fn list_files(dir: &Path) -> (Vec<String>, Vec<Diagnostic>) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let root = match dir.canonicalize() {
        Ok(root) => root,
        Err(err) => {
            warnings.push(Diagnostic::warning(
                DiagnosticKind::UnlistableSkillFiles,
                dir,
                None,
                format!("the skill folder could not be listed: {err}"),
            ));
            return (files, warnings);
        }
    };
    let mut walk = WalkDir::new(dir)
        .follow_links(true)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walk.next() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                let path = err.path().unwrap_or(dir).to_path_buf();
                let (kind, message) = match err.loop_ancestor() {
                    Some(ancestor) => (
                        DiagnosticKind::SkippedLink,
                        format!(
                            "symlink loop: `{}` leads back to `{}`, a folder that contains it; it is skipped",
                            relative(dir, &path),
                            ancestor.display()
                        ),
                    ),
                    None => (
                        DiagnosticKind::UnlistableSkillFiles,
                        format!("skipped while listing the skill's files: {err}"),
                    ),
                };
                warnings.push(Diagnostic::warning(kind, &path, None, message));
                continue;
            }
        };
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        let outside = entry.path_is_symlink()
            && entry
                .path()
                .canonicalize()
                .map_or(true, |target| !target.starts_with(&root));
        if outside {
            warnings.push(Diagnostic::warning(
                DiagnosticKind::SkippedLink,
                entry.path(),
                None,
                format!(
                    "`{}` is a symlink leading outside the skill folder; it is not listed and cannot be read",
                    relative(dir, entry.path())
                ),
            ));
        }
        if hidden || outside {
            if entry.file_type().is_dir() {
                walk.skip_current_dir();
            }
            continue;
        }
        let path = relative(dir, entry.path());
        if entry.file_type().is_dir() || path == "SKILL.md" {
            continue;
        }
        if files.len() == MAX_LISTED_FILES {
            warnings.push(Diagnostic::warning(
                DiagnosticKind::TooManySkillFiles,
                dir,
                None,
                format!("the skill folder has more than {MAX_LISTED_FILES} files; only the first {MAX_LISTED_FILES} are listed"),
            ));
            break;
        }
        files.push(path);
    }
    (files, warnings)
}

/// `path` relative to `dir`, with `/` separators.
pub(crate) fn relative(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The parts of `requested`, a path inside a skill folder: `.` dropped; empty, absolute and
/// `..` paths refused.
pub(crate) fn checked_parts(requested: &str) -> Result<Vec<std::ffi::OsString>, SkillFileError> {
    let trimmed = requested.trim();
    if trimmed.is_empty() {
        return Err(SkillFileError::Empty);
    }
    let mut parts = Vec::new();
    for component in Path::new(trimmed).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_os_string()),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(SkillFileError::LeavesFolder {
                    path: requested.to_string(),
                });
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(SkillFileError::Absolute {
                    path: requested.to_string(),
                });
            }
        }
    }
    Ok(parts)
}

/// The paths to try for `parts`: as given, then with `reference/` and `references/` swapped.
pub(crate) fn candidates(parts: Vec<std::ffi::OsString>) -> Vec<PathBuf> {
    let mut candidates = vec![parts.iter().collect::<PathBuf>()];
    let other = match parts.first().and_then(|first| first.to_str()) {
        Some("reference") => Some("references"),
        Some("references") => Some("reference"),
        _ => None,
    };
    if let Some(other) = other {
        let mut alternative = parts.clone();
        alternative[0] = other.into();
        candidates.push(alternative.iter().collect());
    }
    candidates
}

/// Resolves `requested` (relative to the skill folder `dir`) to a file inside it, accepting
/// `references/` for `reference/` and back; `files` is the listing named in errors.
pub(crate) fn resolve(
    dir: &Path,
    skill: &str,
    requested: &str,
    files: &[String],
) -> Result<PathBuf, SkillFileError> {
    let candidates = candidates(checked_parts(requested)?);
    let root = dir
        .canonicalize()
        .map_err(|err| SkillFileError::Unreadable {
            path: requested.to_string(),
            reason: err.to_string(),
        })?;
    for candidate in candidates {
        let path = dir.join(candidate);
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if !real.starts_with(&root) {
            return Err(SkillFileError::LinksOutside {
                path: requested.to_string(),
            });
        }
        if !real.is_file() {
            return Err(SkillFileError::NotAFile {
                path: requested.to_string(),
                files: files.to_vec(),
            });
        }
        return Ok(real);
    }
    Err(SkillFileError::NotFound {
        skill: skill.to_string(),
        path: requested.to_string(),
        files: files.to_vec(),
    })
}
