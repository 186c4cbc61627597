//! What the commands that run or inspect an agent share: the workspace an agent file belongs
//! to, the skills found for it (the built-in skills last), and the registry of every tool this
//! build offers — the built-in tools, `skill` over the skills found, and `run_code` with the
//! agent's limits.

use anyhow::{Context, Result};
use include_dir::{Dir, include_dir};
use qilin_codemode::{CodeLimits, CodeMode, PoolOptions, RunCode, WorkerPool};
use qilin_sandbox::{Sandbox, SandboxHelper, SandboxSettings};
use qilin_skill::{
    CodeLimitsConfig, RootOrigin, SkillDiscovery, SkillRoot, SkillSet, SkillTool, discover,
    skill_roots,
};
use qilin_tool::ToolRegistry;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
            .with_context(|| {
                format!(
                    "cannot create a folder for the built-in skills in {}",
                    parent.display()
                )
            })?;
        BUILTIN_SKILLS.extract(staging.path()).with_context(|| {
            format!(
                "cannot write the built-in skills into {}",
                staging.path().display()
            )
        })?;
        if dir.symlink_metadata().is_ok() {
            // A stale folder (or anything else in its place) is moved aside, then removed with
            // `stale`; if another process moved it first, the rename below settles who is in
            // place.
            let stale = tempfile::Builder::new()
                .prefix(".qilin-builtin-skills-stale-")
                .tempdir_in(&parent)
                .with_context(|| format!("cannot replace {}", dir.display()))?;
            let _ = std::fs::rename(&dir, stale.path().join("skills"));
        }
        match std::fs::rename(staging.path(), &dir) {
            // The folder now lives on as `dir`, for this process and the next ones.
            Ok(()) => drop(staging.keep()),
            Err(_) if holds_builtin_skills(&dir) => {}
            Err(err) => {
                return Err(err).with_context(|| {
                    format!(
                        "cannot put the built-in skills in place at {}",
                        dir.display()
                    )
                });
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

/// Every tool: the built-ins, `skill` over `skills`, and `run_code` running as `code_mode`.
pub fn full_registry(skills: Arc<SkillSet>, code_mode: CodeMode) -> Result<ToolRegistry> {
    let mut registry = crate::commands::registry();
    registry
        .register(SkillTool::new(skills))
        .context("the `skill` tool could not be registered")?;
    registry
        .register(RunCode::new(code_mode))
        .context("the `run_code` tool could not be registered")?;
    Ok(registry)
}

/// The arguments that make this binary the bash sandbox's helper (`qilin sandbox-exec`).
pub const SANDBOX_HELPER_ARGS: &[&str] = &["sandbox-exec"];

/// A session's bash sandbox as `settings` ask, with this very binary as its helper; shows the
/// warning of the unconfined mode. Fails, saying what is missing and how to opt out, when the
/// kernel cannot confine commands.
pub fn bash_sandbox(settings: SandboxSettings) -> Result<Sandbox> {
    let helper = SandboxHelper::current_exe(SANDBOX_HELPER_ARGS)
        .context("cannot locate the qilin binary for the bash sandbox")?;
    let sandbox = Sandbox::start(settings, helper)?;
    if let Some(warning) = sandbox.warning() {
        eprintln!("{warning}");
    }
    Ok(sandbox)
}

/// Code mode in worker processes of this very binary (`qilin subprocess`), with `limits`.
pub fn pooled_code_mode(limits: CodeLimits) -> Result<CodeMode> {
    let binary =
        std::env::current_exe().context("cannot locate the qilin binary for code-mode workers")?;
    Ok(CodeMode::workers(
        WorkerPool::new(PoolOptions::new(binary)),
        limits,
    ))
}

/// The code-mode limits an agent file asks for, on top of the defaults.
pub fn code_limits(config: &CodeLimitsConfig) -> CodeLimits {
    let defaults = CodeLimits::default();
    CodeLimits {
        wall_time_ms: config.wall_time_ms.unwrap_or(defaults.wall_time_ms),
        memory_mb: config.memory_mb.unwrap_or(defaults.memory_mb),
        max_recursion_depth: config
            .max_recursion_depth
            .map_or(defaults.max_recursion_depth, |d| d as usize),
        max_tool_calls: config
            .max_tool_calls
            .map_or(defaults.max_tool_calls, |n| n as usize),
        max_output_bytes: config
            .max_output_bytes
            .map_or(defaults.max_output_bytes, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
        max_concurrency: config
            .max_concurrency
            .map_or(defaults.max_concurrency, |n| n as usize),
    }
}
