//! What a check looks at: a workspace (its skills under `.qilin/skills/` and every `*.agent`
//! file not ignored by `.gitignore`), one skill folder, or one agent file.

use qilin_skill::{
    Diagnostic, RootOrigin, SKILL_FILE, Skill, SkillDiscovery, SkillRoot, SkillSet, discover,
};
use std::path::{Path, PathBuf};

/// The extension of agent files.
pub const AGENT_EXTENSION: &str = "agent";

/// Why a path cannot be checked.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The path does not exist.
    #[error("`{}` does not exist; give a workspace folder, a skill folder (holding SKILL.md) or an `.agent` file", .0.display())]
    NotFound(PathBuf),
    /// The path is a file but not an agent file.
    #[error("`{}` is neither a folder nor an `.agent` file; give a workspace folder, a skill folder (holding SKILL.md) or an `.agent` file", .0.display())]
    NotCheckable(PathBuf),
}

/// What kind of thing a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A whole workspace: its tools, skills and agents.
    Workspace,
    /// One skill folder.
    Skill,
    /// One agent file, with the skills of its workspace.
    Agent,
}

/// One thing to check, loaded.
#[derive(Debug, Clone)]
pub struct Target {
    /// The path given.
    pub path: PathBuf,
    /// What it is.
    pub scope: Scope,
    /// Its skills (for an agent, those of its workspace) and what loading them found.
    pub discovery: SkillDiscovery,
    /// The agent files to check.
    pub agents: Vec<PathBuf>,
    /// The skill roots searched after a workspace's own `.qilin/skills/` (the skills built
    /// into Qilin); empty for a skill folder.
    pub builtin: Vec<SkillRoot>,
}

impl Target {
    /// A workspace folder: the skills under its `.qilin/skills/`, then those under the
    /// `builtin` roots, and every `*.agent` file in it, skipping what `.gitignore` files
    /// ignore.
    pub fn workspace(dir: &Path, builtin: &[SkillRoot]) -> Target {
        Target {
            path: dir.to_path_buf(),
            scope: Scope::Workspace,
            discovery: workspace_skills(dir, builtin),
            agents: agent_files(dir),
            builtin: builtin.to_vec(),
        }
    }

    /// One skill folder.
    pub fn skill(dir: &Path) -> Target {
        let mut discovery = SkillDiscovery::default();
        match Skill::load(dir) {
            Ok(loaded) => {
                discovery.diagnostics.extend(loaded.warnings);
                discovery.skills = one_skill(loaded.value);
            }
            Err(diagnostic) => discovery.diagnostics.push(diagnostic),
        }
        Target {
            path: dir.to_path_buf(),
            scope: Scope::Skill,
            discovery,
            agents: Vec::new(),
            builtin: Vec::new(),
        }
    }

    /// One agent file, checked against the skills of its workspace (the nearest folder above
    /// it holding `.qilin/`, else its own folder) and those under the `builtin` roots.
    pub fn agent(file: &Path, builtin: &[SkillRoot]) -> Target {
        let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        let folder = absolute.parent().unwrap_or(Path::new(".")).to_path_buf();
        let workspace = folder
            .ancestors()
            .find(|dir| dir.join(".qilin").is_dir())
            .unwrap_or(&folder);
        let mut discovery = workspace_skills(workspace, builtin);
        discovery.diagnostics.retain(Diagnostic::is_error);
        Target {
            path: file.to_path_buf(),
            scope: Scope::Agent,
            discovery,
            agents: vec![file.to_path_buf()],
            builtin: builtin.to_vec(),
        }
    }

    /// The target for a path: an `.agent` file, a folder holding `SKILL.md`, or a workspace;
    /// a workspace or agent file also sees the skills under the `builtin` roots.
    pub fn from_path(path: &Path, builtin: &[SkillRoot]) -> Result<Target, TargetError> {
        if !path.exists() {
            return Err(TargetError::NotFound(path.to_path_buf()));
        }
        if path.is_dir() {
            if path.join(SKILL_FILE).is_file() {
                return Ok(Target::skill(path));
            }
            return Ok(Target::workspace(path, builtin));
        }
        if path.extension().is_some_and(|ext| ext == AGENT_EXTENSION) {
            return Ok(Target::agent(path, builtin));
        }
        Err(TargetError::NotCheckable(path.to_path_buf()))
    }
}

fn one_skill(skill: Skill) -> SkillSet {
    let mut set = SkillSet::new();
    // A new set has no name to clash with.
    let _ = set.insert(skill);
    set
}

/// The skills under `<dir>/.qilin/skills/`, then those under the `builtin` roots.
pub(crate) fn workspace_skills(dir: &Path, builtin: &[SkillRoot]) -> SkillDiscovery {
    let workspace = SkillRoot {
        dir: dir.join(".qilin").join("skills"),
        origin: RootOrigin::Workspace,
    };
    let roots: Vec<SkillRoot> = std::iter::once(workspace)
        .chain(builtin.iter().cloned())
        .collect();
    discover(&roots)
}

/// The workspace an agent file found under `root` belongs to: the nearest folder holding
/// `.qilin/` between the file and `root`, else `root` (a workspace may hold others, each
/// with its own skills).
pub(crate) fn agent_workspace(agent: &Path, root: &Path) -> PathBuf {
    agent
        .parent()
        .into_iter()
        .flat_map(Path::ancestors)
        .take_while(|dir| *dir != root)
        .find(|dir| dir.join(".qilin").is_dir())
        .unwrap_or(root)
        .to_path_buf()
}

/// Every `*.agent` file under `dir`, sorted, skipping `.git` and what `.gitignore` ignores.
pub fn agent_files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(ignore::DirEntry::into_path)
        .filter(|path| path.extension().is_some_and(|ext| ext == AGENT_EXTENSION))
        .collect();
    found.sort();
    found
}
