//! The workspace as a directory handle, and paths resolved once beneath it.
//!
//! A path a tool receives is resolved one component at a time from a handle on the workspace
//! root: each folder is opened with `O_NOFOLLOW` relative to the folder before it, and a
//! symlink is read and its target spliced into the rest of the path, as the kernel would, but
//! never above the root. What the resolution returns is a handle on the folder that holds the
//! file and the file's name in it, so the file is then opened (or replaced) relative to that
//! handle: there is no window between a check and a use in which a folder swapped for a link
//! could lead outside the workspace. Alongside comes the path's canonical form relative to the
//! root, which is what review rules, protected-file checks and messages use.
//!
//! A symlink whose target does not exist (a dangling link) is refused, as is anything that is
//! not a regular file or a folder (a FIFO, a socket, a device) when a file is opened.

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// Symlinks followed at most while resolving one path, as the kernel's limit.
const MAX_LINKS: usize = 40;

/// A workspace root opened as a directory handle.
#[derive(Debug)]
pub struct Workspace {
    /// The root, canonical.
    root: PathBuf,
    /// The root as it was given, when it differs from the canonical one.
    given: PathBuf,
    dir: Dir,
}

/// Why a path was refused.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The argument was empty.
    #[error("the path is empty; give a path relative to the workspace root, e.g. `src/main.rs`")]
    Empty,
    /// The path, after `..` and absolute parts, lies outside the workspace.
    #[error(
        "the path `{path}` is outside the workspace `{workspace}`; give a path inside it, relative to the workspace root"
    )]
    Outside {
        /// The path as given.
        path: String,
        /// The workspace root.
        workspace: String,
    },
    /// The path goes through a symlink whose target is outside the workspace.
    #[error(
        "the path `{path}` leads out of the workspace through a symlink (to `{target}`); only files inside `{workspace}` can be used"
    )]
    SymlinkOut {
        /// The path as given.
        path: String,
        /// Where the symlink leads.
        target: String,
        /// The workspace root.
        workspace: String,
    },
    /// The path goes through a symlink whose target does not exist.
    #[error(
        "the path `{path}` goes through the symlink `{link}`, whose target `{target}` does not exist; the file tools do not follow dangling links (give the target's own path)"
    )]
    Dangling {
        /// The path as given.
        path: String,
        /// The link, relative to the workspace root.
        link: String,
        /// What the link names.
        target: String,
    },
    /// Resolving the path followed more symlinks than allowed (a loop).
    #[error("the path `{path}` goes through more than {MAX_LINKS} symlinks (a loop?)")]
    TooManyLinks {
        /// The path as given.
        path: String,
    },
    /// A component in the middle of the path is a file, not a folder.
    #[error("the path `{path}` goes through `{file}`, which is a file, not a folder")]
    NotAFolder {
        /// The path as given.
        path: String,
        /// The file in the way, relative to the workspace root.
        file: String,
    },
    /// The workspace root itself could not be opened.
    #[error("the workspace `{workspace}` cannot be opened: {source}")]
    Workspace {
        /// The workspace root.
        workspace: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The file system refused a step of the resolution.
    #[error("the path `{path}` could not be resolved: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl From<PathError> for crate::ToolError {
    fn from(error: PathError) -> Self {
        crate::ToolError::invalid_arguments(error.to_string())
    }
}

/// What a resolved path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// Nothing yet: the file (and maybe some folders above it) would be created.
    Missing,
    /// Something else: a FIFO, a socket or a device, which the file tools refuse.
    Special,
}

/// A path resolved beneath the workspace: a handle on its folder, its name in it, and its
/// canonical path relative to the root.
#[derive(Debug)]
pub struct Resolved {
    root: PathBuf,
    relative: String,
    kind: PathKind,
    /// The deepest existing folder on the path (the folder itself for [`PathKind::Folder`]).
    dir: Dir,
    /// The file's name in `dir` ([`PathKind::File`] and [`PathKind::Special`]), or the parts
    /// below `dir` that do not exist yet ([`PathKind::Missing`]).
    rest: Vec<OsString>,
}

/// One component still to resolve, and the symlink it came from, if any.
struct Pending {
    part: OsString,
    parent: bool,
    from_link: Option<(String, PathBuf)>,
}

impl Workspace {
    /// Opens the workspace root.
    pub fn open(root: &Path) -> Result<Workspace, PathError> {
        let failed = |source| PathError::Workspace {
            workspace: root.display().to_string(),
            source,
        };
        let canonical = root.canonicalize().map_err(failed)?;
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority()).map_err(failed)?;
        Ok(Workspace {
            given: lexical(root).unwrap_or_else(|| root.to_path_buf()),
            root: canonical,
            dir,
        })
    }

    /// The root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The handle on the root.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Resolves `raw` (relative to the root, or absolute inside it) beneath the root.
    pub fn resolve(&self, raw: &str) -> Result<Resolved, PathError> {
        if raw.trim().is_empty() {
            return Err(PathError::Empty);
        }
        let inside = self
            .inside(Path::new(raw))
            .ok_or_else(|| self.outside(raw))?;
        let mut pending: VecDeque<Pending> = parts(&inside, None).collect();
        let mut stack: Vec<(OsString, Dir)> = Vec::new();
        let mut missing: Vec<OsString> = Vec::new();
        let mut leaf: Option<(OsString, PathKind)> = None;
        let mut links = 0;
        let io = |source| PathError::Io {
            path: raw.to_string(),
            source,
        };
        while let Some(next) = pending.pop_front() {
            if let Some((name, _)) = &leaf {
                return Err(PathError::NotAFolder {
                    path: raw.to_string(),
                    file: join(
                        stack
                            .iter()
                            .map(|(n, _)| n.as_os_str())
                            .chain([name.as_os_str()]),
                    ),
                });
            }
            if next.parent {
                if missing.pop().is_none() && stack.pop().is_none() {
                    return Err(self.outside(raw));
                }
                continue;
            }
            if !missing.is_empty() {
                missing.push(next.part);
                continue;
            }
            let here = stack.last().map_or(&self.dir, |(_, dir)| dir);
            let meta = match here.symlink_metadata(&next.part) {
                Ok(meta) => meta,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    if let Some((link, target)) = next.from_link {
                        return Err(PathError::Dangling {
                            path: raw.to_string(),
                            link,
                            target: target.display().to_string(),
                        });
                    }
                    missing.push(next.part);
                    continue;
                }
                Err(err) => return Err(io(err)),
            };
            let kind = meta.file_type();
            if kind.is_symlink() {
                links += 1;
                if links > MAX_LINKS {
                    return Err(PathError::TooManyLinks {
                        path: raw.to_string(),
                    });
                }
                let target = here.read_link_contents(&next.part).map_err(io)?;
                let link = join(
                    stack
                        .iter()
                        .map(|(n, _)| n.as_os_str())
                        .chain([next.part.as_os_str()]),
                );
                let origin = Some((link, target.clone()));
                let spliced: Vec<Pending> = if target.is_absolute() {
                    let inside = self.inside(&target).ok_or_else(|| PathError::SymlinkOut {
                        path: raw.to_string(),
                        target: target.display().to_string(),
                        workspace: self.root.display().to_string(),
                    })?;
                    stack.clear();
                    parts(&inside, origin).collect()
                } else {
                    parts(&target, origin).collect()
                };
                for part in spliced.into_iter().rev() {
                    pending.push_front(part);
                }
                continue;
            }
            if kind.is_dir() {
                let opened = here.open_dir_nofollow(&next.part).map_err(io)?;
                stack.push((next.part, opened));
            } else {
                let kind = if kind.is_file() {
                    PathKind::File
                } else {
                    PathKind::Special
                };
                leaf = Some((next.part, kind));
            }
        }
        let relative = join(
            stack
                .iter()
                .map(|(n, _)| n.as_os_str())
                .chain(leaf.iter().map(|(n, _)| n.as_os_str()))
                .chain(missing.iter().map(OsString::as_os_str)),
        );
        let (kind, rest) = match (leaf, missing.is_empty()) {
            (Some((name, kind)), _) => (kind, vec![name]),
            (None, false) => (PathKind::Missing, missing),
            (None, true) => (PathKind::Folder, Vec::new()),
        };
        let dir = match stack.pop() {
            Some((_, dir)) => dir,
            None => self.dir.try_clone().map_err(io)?,
        };
        Ok(Resolved {
            root: self.root.clone(),
            relative,
            kind,
            dir,
            rest,
        })
    }

    /// The workspace-relative form of a path that lies inside the root, or `None`.
    fn inside(&self, path: &Path) -> Option<PathBuf> {
        if !path.is_absolute() {
            return Some(path.to_path_buf());
        }
        let lexical = lexical(path)?;
        lexical
            .strip_prefix(&self.root)
            .or_else(|_| lexical.strip_prefix(&self.given))
            .ok()
            .map(Path::to_path_buf)
    }

    fn outside(&self, raw: &str) -> PathError {
        PathError::Outside {
            path: raw.to_string(),
            workspace: self.root.display().to_string(),
        }
    }
}

impl Resolved {
    /// The canonical path relative to the workspace root, with `/` separators (`.` for the
    /// root).
    pub fn relative(&self) -> &str {
        &self.relative
    }

    /// The absolute path, for messages and for walking a folder.
    pub fn absolute(&self) -> PathBuf {
        if self.relative == "." {
            self.root.clone()
        } else {
            self.root.join(&self.relative)
        }
    }

    /// The path of [`Resolved::folder`] relative to the workspace root (`.` for the root).
    pub fn folder_relative(&self) -> String {
        let mut parts: Vec<&str> = self.relative.split('/').filter(|p| *p != ".").collect();
        parts.truncate(parts.len().saturating_sub(self.rest.len()));
        if parts.is_empty() {
            ".".to_string()
        } else {
            parts.join("/")
        }
    }

    /// What the path names.
    pub fn kind(&self) -> PathKind {
        self.kind
    }

    /// The deepest existing folder on the path: the folder itself for a folder, the parent
    /// of a file, the nearest existing ancestor of a missing path.
    pub fn folder(&self) -> &Dir {
        &self.dir
    }

    /// Opens the regular file for reading. The open never follows a link and never blocks
    /// (a FIFO swapped in since the resolution is refused, not waited on).
    pub fn open_file(&self) -> io::Result<std::fs::File> {
        let name = self.file_name()?;
        let mut options = OpenOptions::new();
        options.read(true).follow(FollowSymlinks::No).nonblock(true);
        let file = self.dir.open_with(name, &options)?;
        if !file.metadata()?.is_file() {
            return Err(not_regular(&self.relative));
        }
        Ok(file.into_std())
    }

    /// Writes `bytes` as the whole file, atomically (a temporary file in the same folder,
    /// then renamed over the name), creating missing folders. An existing file keeps its
    /// permissions. Returns `true` when the file was created.
    pub fn write_atomically(&self, bytes: &[u8]) -> io::Result<bool> {
        let (folder, name) = match self.kind {
            PathKind::File => (self.dir.try_clone()?, self.rest[0].clone()),
            PathKind::Missing => {
                let mut folder = self.dir.try_clone()?;
                let (name, above) = self
                    .rest
                    .split_last()
                    .ok_or_else(|| io::Error::other("no file name"))?;
                for part in above {
                    match folder.create_dir(part) {
                        Ok(()) => {}
                        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(err) => return Err(err),
                    }
                    folder = folder.open_dir_nofollow(part)?;
                }
                (folder, name.clone())
            }
            PathKind::Folder => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("`{}` is a folder, not a file", self.relative),
                ));
            }
            PathKind::Special => return Err(not_regular(&self.relative)),
        };
        let existing = match folder.symlink_metadata(&name) {
            Ok(meta) if meta.is_file() => Some(meta.permissions()),
            Ok(meta) if meta.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("`{}` is a folder, not a file", self.relative),
                ));
            }
            Ok(_) => return Err(not_regular(&self.relative)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(err),
        };
        let mut temp = cap_tempfile::TempFile::new(&folder)?;
        temp.write_all(bytes)?;
        match &existing {
            Some(permissions) => temp.as_file().set_permissions(permissions.clone())?,
            // A new file gets the usual mode of a new file, not the temporary file's 0600.
            None => {
                use cap_std::fs::PermissionsExt;
                temp.as_file()
                    .set_permissions(cap_std::fs::Permissions::from_mode(0o644))?;
            }
        }
        temp.as_file().sync_all()?;
        temp.replace(&name)?;
        Ok(existing.is_none())
    }

    /// Removes the file.
    pub fn remove_file(&self) -> io::Result<()> {
        self.dir.remove_file(self.file_name()?)
    }

    fn file_name(&self) -> io::Result<&OsStr> {
        match self.kind {
            PathKind::File => Ok(&self.rest[0]),
            PathKind::Special => Err(not_regular(&self.relative)),
            PathKind::Folder => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("`{}` is a folder, not a file", self.relative),
            )),
            PathKind::Missing => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{}` does not exist", self.relative),
            )),
        }
    }
}

fn not_regular(relative: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "`{relative}` is not a regular file (a FIFO, socket or device); the file tools only \
             read and write regular files"
        ),
    )
}

/// The components of a relative path as pending steps, `.` dropped.
fn parts(path: &Path, from_link: Option<(String, PathBuf)>) -> impl Iterator<Item = Pending> + '_ {
    path.components()
        .filter_map(move |component| match component {
            Component::Normal(part) => Some(Pending {
                part: part.to_os_string(),
                parent: false,
                from_link: from_link.clone(),
            }),
            Component::ParentDir => Some(Pending {
                part: OsString::new(),
                parent: true,
                from_link: None,
            }),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
}

fn join<'a>(parts: impl Iterator<Item = &'a OsStr>) -> String {
    let text: Vec<String> = parts.map(|p| p.to_string_lossy().into_owned()).collect();
    if text.is_empty() {
        ".".to_string()
    } else {
        text.join("/")
    }
}

/// Removes `.` and folds `..` without touching the file system; `None` when `..` climbs
/// above the file system root.
fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(part) => out.push(part),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        (dir, workspace)
    }

    #[test]
    fn relative_and_absolute_paths_inside_resolve_to_one_canonical_form() {
        let (dir, ws) = workspace();
        let root = dir.path().canonicalize().unwrap();
        for raw in [
            "src/main.rs",
            "./src/main.rs",
            "src/../src/main.rs",
            &root.join("src/main.rs").display().to_string(),
            &dir.path().join("src/./main.rs").display().to_string(),
        ] {
            let resolved = ws.resolve(raw).unwrap();
            assert_eq!(resolved.relative(), "src/main.rs", "{raw}");
            assert_eq!(resolved.kind(), PathKind::File);
        }
        assert_eq!(ws.resolve(".").unwrap().relative(), ".");
        assert_eq!(ws.resolve(".").unwrap().kind(), PathKind::Folder);
        let new = ws.resolve("a/b/../c.txt").unwrap();
        assert_eq!((new.relative(), new.kind()), ("a/c.txt", PathKind::Missing));
    }

    #[test]
    fn escapes_are_refused_naming_the_path() {
        let (_dir, ws) = workspace();
        let err = ws.resolve("../etc/passwd").unwrap_err();
        assert!(matches!(err, PathError::Outside { .. }));
        assert!(err.to_string().contains("`../etc/passwd`"));
        assert!(matches!(
            ws.resolve("src/../../x"),
            Err(PathError::Outside { .. })
        ));
        let err = ws.resolve("/etc/passwd").unwrap_err();
        assert!(
            err.to_string()
                .contains("`/etc/passwd` is outside the workspace")
        );
        assert!(matches!(ws.resolve(" "), Err(PathError::Empty)));
    }

    #[test]
    fn links_inside_are_followed_to_their_canonical_path_and_links_out_refused() {
        let (dir, ws) = workspace();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), dir.path().join("out")).unwrap();
        symlink("src", dir.path().join("alias")).unwrap();
        symlink(dir.path().join("src/main.rs"), dir.path().join("main")).unwrap();
        symlink("../..", dir.path().join("src/up")).unwrap();
        assert!(matches!(
            ws.resolve("out/secret.txt"),
            Err(PathError::SymlinkOut { .. })
        ));
        assert!(matches!(
            ws.resolve("src/up/x"),
            Err(PathError::Outside { .. })
        ));
        assert_eq!(
            ws.resolve("alias/new.txt").unwrap().relative(),
            "src/new.txt"
        );
        let file = ws.resolve("main").unwrap();
        assert_eq!(
            (file.relative(), file.kind()),
            ("src/main.rs", PathKind::File)
        );
        symlink("loop", dir.path().join("loop")).unwrap();
        assert!(matches!(
            ws.resolve("loop"),
            Err(PathError::TooManyLinks { .. })
        ));
    }

    #[test]
    fn dangling_links_are_refused_for_files_and_folders() {
        let (dir, ws) = workspace();
        let elsewhere = tempfile::tempdir().unwrap();
        let gone = elsewhere.path().join("gone");
        symlink(&gone, dir.path().join("outdir")).unwrap();
        symlink("outdir/new.txt", dir.path().join("note.md")).unwrap();
        symlink("missing-folder", dir.path().join("inner")).unwrap();
        symlink("missing.txt", dir.path().join("file-link")).unwrap();
        assert!(matches!(
            ws.resolve("note.md"),
            Err(PathError::SymlinkOut { .. })
        ));
        for raw in ["inner/new.txt", "file-link"] {
            assert!(
                matches!(ws.resolve(raw), Err(PathError::Dangling { .. })),
                "{raw}"
            );
        }
    }

    #[test]
    fn a_file_in_the_middle_of_a_path_is_named() {
        let (_dir, ws) = workspace();
        let err = ws.resolve("src/main.rs/x").unwrap_err();
        assert!(
            err.to_string().contains("goes through `src/main.rs`"),
            "{err}"
        );
    }

    #[test]
    fn writes_create_folders_replace_atomically_and_keep_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, ws) = workspace();
        assert!(
            ws.resolve("a/b/c.txt")
                .unwrap()
                .write_atomically(b"one")
                .unwrap()
        );
        let path = dir.path().join("a/b/c.txt");
        let created = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(created & 0o777, 0o644, "a new file is readable by others");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(
            !ws.resolve("a/b/c.txt")
                .unwrap()
                .write_atomically(b"two")
                .unwrap()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        let names: Vec<_> = std::fs::read_dir(dir.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["c.txt"]);
        let err = ws
            .resolve("src")
            .unwrap()
            .write_atomically(b"x")
            .unwrap_err();
        assert!(err.to_string().contains("is a folder"), "{err}");
    }

    #[test]
    fn a_fifo_is_special_and_never_opened() {
        let (dir, ws) = workspace();
        let status = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .unwrap();
        assert!(status.success());
        let fifo = ws.resolve("pipe").unwrap();
        assert_eq!(fifo.kind(), PathKind::Special);
        assert!(fifo.open_file().is_err());
        assert!(fifo.write_atomically(b"x").is_err());
    }
}
