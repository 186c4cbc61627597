//! Finding skills: the workspace's `.qilin/skills/`, the user's `~/.qilin/skills/`, any
//! `--skills DIR` and last the skills built into Qilin, in that order; the first root that
//! has a name wins.

use crate::generated::GENERATED_ROOT;
use crate::{
    AgentFile, AvailableSkills, Diagnostic, DiagnosticKind, EmbeddedSkills, GeneratedSkills,
    Loaded, SKILL_FILE, Skill, SkillSet,
};
use std::path::{Path, PathBuf};

/// Where a skill root came from; decides whether its absence is worth telling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootOrigin {
    /// `<workspace>/.qilin/skills/`.
    Workspace,
    /// `~/.qilin/skills/`.
    User,
    /// A folder given explicitly (`--skills DIR`); it must exist.
    Explicit,
    /// The skills shipped with Qilin itself (those of its code-mode-only tools), served from
    /// memory, searched last so a skill of the same name in any other root overrides one.
    BuiltIn(EmbeddedSkills),
    /// Skills made at run time (one per MCP server, teaching its tools), served from memory;
    /// searched after the workspace's, the user's and explicit folders, so a written skill of
    /// the same name replaces a generated one.
    Generated(GeneratedSkills),
}

/// A folder whose sub-folders are skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRoot {
    /// The folder.
    pub dir: PathBuf,
    /// Where it came from.
    pub origin: RootOrigin,
}

impl SkillRoot {
    /// The root of the skills built into the binary, shown as `(built-in)/NAME`.
    pub fn built_in(skills: EmbeddedSkills) -> SkillRoot {
        SkillRoot {
            dir: PathBuf::from("(built-in)"),
            origin: RootOrigin::BuiltIn(skills),
        }
    }

    /// The root of skills made at run time, shown as `(mcp)/NAME`.
    pub fn generated(skills: GeneratedSkills) -> SkillRoot {
        SkillRoot {
            dir: PathBuf::from(GENERATED_ROOT),
            origin: RootOrigin::Generated(skills),
        }
    }
}

/// The roots in search order: the workspace's `.qilin/skills`, then `<home>/.qilin/skills`
/// when a home folder is known, then each explicit folder. The built-in skills come after
/// them all: whoever holds their folder appends it as a [`RootOrigin::BuiltIn`] root.
pub fn skill_roots(workspace: &Path, home: Option<&Path>, explicit: &[PathBuf]) -> Vec<SkillRoot> {
    let mut roots = vec![SkillRoot {
        dir: workspace.join(".qilin").join("skills"),
        origin: RootOrigin::Workspace,
    }];
    if let Some(home) = home {
        roots.push(SkillRoot {
            dir: home.join(".qilin").join("skills"),
            origin: RootOrigin::User,
        });
    }
    roots.extend(explicit.iter().map(|dir| SkillRoot {
        dir: dir.clone(),
        origin: RootOrigin::Explicit,
    }));
    roots
}

/// What discovery found: the skills that loaded and every finding, broken skills included.
#[derive(Debug, Clone, Default)]
pub struct SkillDiscovery {
    /// The skills that loaded.
    pub skills: SkillSet,
    /// Errors (skills that did not load) and warnings, in the order found.
    pub diagnostics: Vec<Diagnostic>,
}

/// The skill diagnostics worth showing when one agent runs, and a count of the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentDiagnostics<'a> {
    /// The diagnostics about what the agent uses, in the order found: every error about a
    /// skill it can read (one it names, or any with `available: all`) or about a skills
    /// folder, and every warning about a skill it names under `skills.available` or
    /// `skills.preload`.
    pub relevant: Vec<&'a Diagnostic>,
    /// How many other diagnostics there are (warnings about skills it reaches only through
    /// `available: all`, anything about skills it cannot read); `qilin check` lists them.
    pub others: usize,
}

impl SkillDiscovery {
    /// True when some skill failed to load.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The diagnostics that concern `agent` (see [`AgentDiagnostics`]), so a run prints those
    /// and points to `qilin check` for the others rather than printing every skill's.
    ///
    /// A diagnostic concerns the skill whose folder holds its path: a loaded skill by its
    /// name, a refused one by its folder's name.
    pub fn diagnostics_for(&self, agent: &AgentFile) -> AgentDiagnostics<'_> {
        let mut named: Vec<&str> = agent
            .preload
            .iter()
            .map(|file| file.skill.as_str())
            .collect();
        if let AvailableSkills::Named(names) = &agent.available_skills {
            named.extend(names.iter().map(String::as_str));
        }
        let all = agent.available_skills == AvailableSkills::All;
        let mut found = AgentDiagnostics::default();
        for diagnostic in &self.diagnostics {
            let relevant = match self.skill_of(diagnostic) {
                None => diagnostic.is_error(),
                Some(skill) if named.contains(&skill.as_str()) => true,
                Some(_) => all && diagnostic.is_error(),
            };
            if relevant {
                found.relevant.push(diagnostic);
            } else {
                found.others += 1;
            }
        }
        found
    }

    /// The name of the skill a diagnostic is about: the loaded skill whose folder holds its
    /// path, else the name of the folder holding its `SKILL.md` (or of the folder it names);
    /// `None` for a diagnostic about a skills folder itself.
    fn skill_of(&self, diagnostic: &Diagnostic) -> Option<String> {
        if matches!(
            diagnostic.kind,
            DiagnosticKind::MissingSkillsFolder | DiagnosticKind::UnreadableSkillsFolder
        ) {
            return None;
        }
        if diagnostic.kind != DiagnosticKind::DuplicateSkill
            && let Some(skill) = self
                .skills
                .iter()
                .find(|skill| diagnostic.path.starts_with(&skill.dir))
        {
            return Some(skill.name.clone());
        }
        let folder = if diagnostic.path.ends_with(SKILL_FILE) {
            diagnostic.path.parent()?
        } else {
            &diagnostic.path
        };
        Some(folder.file_name()?.to_string_lossy().into_owned())
    }
}

/// Loads every skill under the roots. A broken skill is a diagnostic and never hides the
/// others; a name already loaded from an earlier root is skipped with a warning naming both;
/// a root that is the same folder as an earlier one (the workspace is the home folder) is
/// searched once.
pub fn discover(roots: &[SkillRoot]) -> SkillDiscovery {
    let mut found = SkillDiscovery::default();
    let mut searched: Vec<PathBuf> = Vec::new();
    for root in roots {
        match &root.origin {
            RootOrigin::BuiltIn(skills) => {
                for folder in skills.folders() {
                    let shown = root.dir.join(folder.name());
                    add(Skill::load_embedded(folder, &shown), &mut found);
                }
                continue;
            }
            RootOrigin::Generated(skills) => {
                for folder in skills.folders() {
                    let shown = root.dir.join(folder.name());
                    add(Skill::load_generated(folder.clone(), &shown), &mut found);
                }
                continue;
            }
            _ => {}
        }
        let real = root.dir.canonicalize().unwrap_or_else(|_| root.dir.clone());
        if searched.contains(&real) {
            continue;
        }
        searched.push(real);
        let entries = match std::fs::read_dir(&root.dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                if root.origin == RootOrigin::Explicit {
                    found.diagnostics.push(Diagnostic::error(
                        DiagnosticKind::MissingSkillsFolder,
                        &root.dir,
                        None,
                        "the skills folder does not exist; give a folder whose sub-folders each hold a SKILL.md",
                    ));
                }
                continue;
            }
            Err(err) => {
                found.diagnostics.push(Diagnostic::error(
                    DiagnosticKind::UnreadableSkillsFolder,
                    &root.dir,
                    None,
                    format!("the skills folder could not be read: {err}"),
                ));
                continue;
            }
        };
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .filter(|path| {
                !path
                    .file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with('.'))
            })
            .collect();
        dirs.sort();
        for dir in dirs {
            load_into(&dir, &mut found);
        }
    }
    found
}

fn load_into(dir: &Path, found: &mut SkillDiscovery) {
    if !dir.join(crate::SKILL_FILE).is_file() {
        found.diagnostics.push(Diagnostic::warning(
            DiagnosticKind::NotASkill,
            dir,
            None,
            "this folder has no SKILL.md, so it is not a skill; each skill is a folder holding a SKILL.md",
        ));
        return;
    }
    add(Skill::load(dir), found);
}

/// Adds a loaded skill (or the error of one that did not load) to what was found.
fn add(loaded: Result<Loaded<Skill>, Diagnostic>, found: &mut SkillDiscovery) {
    match loaded {
        Ok(loaded) => {
            found.diagnostics.extend(loaded.warnings);
            if let Err(shadowed) = found.skills.insert(loaded.value) {
                let kept = found
                    .skills
                    .get(&shadowed.name)
                    .map(|skill| skill.dir.display().to_string())
                    .unwrap_or_default();
                found.diagnostics.push(Diagnostic::warning(
                    DiagnosticKind::DuplicateSkill,
                    &shadowed.dir.join(crate::SKILL_FILE),
                    None,
                    format!(
                        "skill `{}` is also defined in `{kept}`, which comes first and is used; \
                         this one is ignored",
                        shadowed.name
                    ),
                ));
            }
        }
        Err(diagnostic) => found.diagnostics.push(diagnostic),
    }
}
