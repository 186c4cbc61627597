//! How a session is put together from files: the workspace an agent file belongs to, the
//! skills found for it (the built-in skills last), and the registries — every tool this build
//! offers (for checking), or exactly an agent's (its tools, `skill` over its skills, and
//! `run_code` with its limits when code mode is on).

use crate::RuntimeError;
use include_dir::{Dir, include_dir};
use qilin_codemode::{CodeMode, RunCode};
use qilin_skill::{
    Agent, RootOrigin, SkillDiscovery, SkillRoot, SkillSet, SkillTool, agent_skill_set, discover,
    skill_roots,
};
use qilin_tool::ToolRegistry;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a fallible assembly step returns.
type Result<T> = std::result::Result<T, RuntimeError>;

/// An I/O failure, naming what was being done.
fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RuntimeError {
    let what = what.into();
    move |source| RuntimeError::Io { what, source }
}

/// The workspace of an agent file: the nearest folder above it holding `.qilin/`, else the
/// file's own folder.
pub fn workspace_of(agent_file: &Path) -> PathBuf {
    let absolute = std::path::absolute(agent_file).unwrap_or_else(|_| agent_file.to_path_buf());
    let folder = absolute.parent().unwrap_or(Path::new(".")).to_path_buf();
    folder
        .ancestors()
        .find(|dir| dir.join(".qilin").is_dir())
        .map_or(folder.clone(), Path::to_path_buf)
}

/// The skills shipped with the built-in tools (those of the code-mode-only ones), built into
/// the binary.
static BUILTIN_SKILLS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../qilin-tools/skills");

/// The registry of every built-in tool.
pub fn builtin_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry)
        .expect("the built-in tools have unique names and valid schemas");
    registry
}

/// The folder holding the built-in skills, searched after every other skill root.
///
/// The skills are built into the binary and written on first use to
/// `<temp dir>/qilin-builtin-skills-<version>-<hash of their contents>`: extracted into a fresh
/// folder beside it, then renamed into place, so another process never sees half of it. When
/// another process wins that race its folder is used; a folder whose files differ from the
/// built-in ones (some removed, changed or added) is replaced.
pub fn builtin_skills_root() -> Result<SkillRoot> {
    let parent = std::env::temp_dir();
    let dir = parent.join(format!(
        "qilin-builtin-skills-{}-{:016x}",
        env!("CARGO_PKG_VERSION"),
        contents_hash()
    ));
    if !holds_builtin_skills(&dir) {
        let staging = tempfile::Builder::new()
            .prefix(".qilin-builtin-skills-")
            .tempdir_in(&parent)
            .map_err(io(format!(
                "creating a folder for the built-in skills in {}",
                parent.display()
            )))?;
        BUILTIN_SKILLS.extract(staging.path()).map_err(io(format!(
            "writing the built-in skills into {}",
            staging.path().display()
        )))?;
        if dir.symlink_metadata().is_ok() {
            // A stale folder (or anything else in its place) is moved aside, then removed with
            // `stale`; if another process moved it first, the rename below settles who is in
            // place.
            let stale = tempfile::Builder::new()
                .prefix(".qilin-builtin-skills-stale-")
                .tempdir_in(&parent)
                .map_err(io(format!("replacing {}", dir.display())))?;
            let _ = std::fs::rename(&dir, stale.path().join("skills"));
        }
        match std::fs::rename(staging.path(), &dir) {
            // The folder now lives on as `dir`, for this process and the next ones.
            Ok(()) => drop(staging.keep()),
            Err(_) if holds_builtin_skills(&dir) => {}
            Err(err) => {
                return Err(io(format!(
                    "putting the built-in skills in place at {}",
                    dir.display()
                ))(err));
            }
        }
    }
    Ok(SkillRoot {
        dir,
        origin: RootOrigin::BuiltIn,
    })
}

/// Every file of the built-in skills: its path inside the skills folder and its contents.
fn builtin_files() -> Vec<(&'static Path, &'static [u8])> {
    fn collect(dir: &'static Dir<'static>, files: &mut Vec<(&'static Path, &'static [u8])>) {
        files.extend(dir.files().map(|file| (file.path(), file.contents())));
        for sub in dir.dirs() {
            collect(sub, files);
        }
    }
    let mut files = Vec::new();
    collect(&BUILTIN_SKILLS, &mut files);
    files.sort();
    files
}

/// A hash (64-bit FNV-1a) of the built-in skills' paths and contents, so a binary with other
/// skills never uses this one's folder.
fn contents_hash() -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for (path, contents) in builtin_files() {
        let path = path.to_string_lossy();
        let length = (contents.len() as u64).to_le_bytes();
        for byte in [path.as_bytes(), &[0], &length, contents].concat() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
        }
    }
    hash
}

/// True when `dir` is a real folder holding exactly the built-in skills' files, byte for
/// byte, and nothing else.
fn holds_builtin_skills(dir: &Path) -> bool {
    let mut found = Vec::new();
    if !list_files(dir, dir, &mut found) {
        return false;
    }
    found.sort();
    let expected = builtin_files();
    found.len() == expected.len()
        && found
            .iter()
            .zip(&expected)
            .all(|(path, (want_path, want_contents))| {
                path.as_path() == *want_path
                    && std::fs::read(dir.join(path)).is_ok_and(|bytes| bytes == *want_contents)
            })
}

/// Adds the path (relative to `root`) of every file under `dir` to `files`; false when a
/// folder cannot be read or holds something other than files and folders.
fn list_files(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) -> bool {
    if !std::fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir()) {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else { return false };
        let Ok(kind) = entry.file_type() else {
            return false;
        };
        let path = entry.path();
        if kind.is_dir() {
            if !list_files(root, &path, files) {
                return false;
            }
        } else if kind.is_file() {
            match path.strip_prefix(root) {
                Ok(relative) => files.push(relative.to_path_buf()),
                Err(_) => return false,
            }
        } else {
            return false;
        }
    }
    true
}

/// Discovers the skills for `workspace`: its `.qilin/skills/`, `~/.qilin/skills/` (from
/// `HOME`), each `explicit` folder, then the built-in skills; the first root with a name wins.
pub fn discover_skills(workspace: &Path, explicit: &[PathBuf]) -> Result<SkillDiscovery> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut roots = skill_roots(workspace, home.as_deref(), explicit);
    roots.push(builtin_skills_root()?);
    Ok(discover(&roots))
}

/// Every tool: the built-ins, `skill` over `skills`, and `run_code` running as `code_mode`
/// (what `qilin check` and `qilin tools` look at, and what an agent file is checked against).
pub fn full_registry(skills: Arc<SkillSet>, code_mode: CodeMode) -> ToolRegistry {
    let mut registry = builtin_registry();
    registry
        .register(SkillTool::new(skills))
        .expect("`skill` is not a built-in tool's name");
    registry
        .register(RunCode::new(code_mode))
        .expect("`run_code` is not a built-in tool's name");
    registry
}

/// The tools `agent` runs with: the built-ins, `skill` serving only the skills it may read,
/// and `run_code` only when its code mode is on (running as `code_mode`).
pub fn agent_registry(
    agent: &Agent,
    skills: &SkillSet,
    code_mode: Option<CodeMode>,
) -> Result<ToolRegistry> {
    let mut registry = builtin_registry();
    let readable = agent_skill_set(agent, skills).map_err(RuntimeError::Prompt)?;
    registry
        .register(SkillTool::new(Arc::new(readable)))
        .expect("`skill` is not a built-in tool's name");
    if let Some(code_mode) = code_mode {
        registry
            .register(RunCode::new(code_mode))
            .expect("`run_code` is not a built-in tool's name");
    }
    Ok(registry)
}
