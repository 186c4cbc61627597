//! How a session is put together from files: the workspace an agent file belongs to, the
//! skills found for it (the built-in skills last, served from memory), and the registries —
//! every tool this build offers (for checking), or exactly an agent's (its tools, `skill` over
//! its skills, and `run_code` with its limits when code mode is on).

use crate::RuntimeError;
use include_dir::{Dir, include_dir};
use qilin_codemode::{CodeMode, RunCode};
use qilin_skill::{
    AgentFile, EmbeddedSkills, GeneratedSkills, SkillDiscovery, SkillRoot, SkillSet, SkillTool,
    agent_skill_set, discover, skill_roots,
};
use qilin_tool::ToolRegistry;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// What a fallible assembly step returns.
type Result<T> = std::result::Result<T, RuntimeError>;

/// The workspace of an agent file: the nearest folder above it holding `.qilin/`, else the
/// file's own folder.
pub fn workspace_of(agent_file: &Path) -> PathBuf {
    qilin_skill::agent_workspace(agent_file)
}

/// The skills shipped with the built-in tools (those of the code-mode-only ones), built into
/// the binary and served from memory.
static BUILTIN_SKILLS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../qilin-tools/skills");

/// The registry of every built-in tool, the session query, subagent, check, goal, loop and
/// schedule tools included.
///
/// The built-in tools keep no state of their own (a session's is in its services), so the
/// registry — every tool's schemas made and its validator compiled, the bulk of a session's
/// start — is made once per process and shared: once with `pwsh` and once without, chosen by
/// whether PowerShell is on `PATH` now, as a registry made afresh would be.
pub fn builtin_registry() -> ToolRegistry {
    static MADE: [OnceLock<ToolRegistry>; 2] = [OnceLock::new(), OnceLock::new()];
    let with_pwsh = usize::from(qilin_tools::powershell_on_path());
    if let Some(registry) = MADE[with_pwsh].get() {
        return registry.clone();
    }
    let registry = make_builtin_registry();
    // Kept under what it holds (`PATH` may have changed in between).
    let holds_pwsh = usize::from(registry.get("pwsh").is_some());
    let _ = MADE[holds_pwsh].set(registry.clone());
    registry
}

/// Makes the registry of [`builtin_registry`].
fn make_builtin_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    built_in(
        qilin_tools::register_builtins(&mut registry),
        "the built-in tools have unique names and valid schemas",
    );
    built_in(
        qilin_sessions::register_tools(&mut registry),
        "the session query tools have unique names and valid schemas",
    );
    built_in(
        qilin_subagents::register_tools(&mut registry),
        "the subagent tools have unique names and valid schemas",
    );
    built_in(
        qilin_lsp::register_tools(&mut registry),
        "`lsp` has a unique name and a valid schema",
    );
    built_in(
        qilin_checks::register_tools(&mut registry),
        "`checks_run` has a unique name and a valid schema",
    );
    built_in(
        qilin_goals::register_tools(&mut registry),
        "the goal tools have unique names and valid schemas",
    );
    built_in(
        qilin_loops::register_tools(&mut registry),
        "the loop tools have unique names and valid schemas",
    );
    built_in(
        qilin_schedules::register_tools(&mut registry),
        "the schedule tools have unique names and valid schemas",
    );
    registry
}

/// The root of the built-in skills, searched after every other skill root.
pub fn builtin_skills_root() -> SkillRoot {
    SkillRoot::built_in(EmbeddedSkills::new(&BUILTIN_SKILLS))
}

/// Discovers the skills for `workspace`: its `.qilin/skills/`, `~/.qilin/skills/` (from
/// `HOME`), each `explicit` folder, then the built-in skills; the first root with a name wins.
pub fn discover_skills(workspace: &Path, explicit: &[PathBuf]) -> Result<SkillDiscovery> {
    discover_skills_with(workspace, explicit, GeneratedSkills::new())
}

/// As [`discover_skills`], with `generated` (the skills generated for a session's MCP
/// servers) searched after the explicit folders and before the built-in skills, so a skill
/// written with the same name replaces a generated one.
pub fn discover_skills_with(
    workspace: &Path,
    explicit: &[PathBuf],
    generated: GeneratedSkills,
) -> Result<SkillDiscovery> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut roots = skill_roots(workspace, home.as_deref(), explicit);
    if !generated.is_empty() {
        roots.push(SkillRoot::generated(generated));
    }
    roots.push(builtin_skills_root());
    Ok(discover(&roots))
}

/// Every tool: the built-ins, `skill` over `skills`, and `run_code` and the workflow tools
/// running as `code_mode`
/// (what `qilin check` and `qilin tools` look at, and what an agent file is checked against).
pub(crate) fn full_registry(skills: Arc<SkillSet>, code_mode: CodeMode) -> ToolRegistry {
    let mut registry = builtin_registry();
    built_in(registry.register(SkillTool::new(skills)), SKILL_NAME_FREE);
    built_in(
        registry.register(RunCode::new(code_mode.clone())),
        RUN_CODE_NAME_FREE,
    );
    built_in(
        qilin_workflows::register_tools(&mut registry, code_mode),
        WORKFLOW_NAMES_FREE,
    );
    registry
}

/// The tools `agent` runs with: the built-ins, `skill` serving only the skills it may read,
/// and `run_code` and the workflow tools only when its code mode is on (running as
/// `code_mode`).
pub(crate) fn agent_registry(
    agent: &AgentFile,
    skills: &SkillSet,
    code_mode: Option<CodeMode>,
) -> Result<ToolRegistry> {
    let mut registry = builtin_registry();
    let readable = agent_skill_set(agent, skills).map_err(RuntimeError::Prompt)?;
    built_in(
        registry.register(SkillTool::new(Arc::new(readable))),
        SKILL_NAME_FREE,
    );
    if let Some(code_mode) = code_mode {
        built_in(
            registry.register(RunCode::new(code_mode.clone())),
            RUN_CODE_NAME_FREE,
        );
        built_in(
            qilin_workflows::register_tools(&mut registry, code_mode),
            WORKFLOW_NAMES_FREE,
        );
    }
    Ok(registry)
}

/// Why registering `skill` beside the built-ins cannot fail.
const SKILL_NAME_FREE: &str = "`skill` is not a built-in tool's name";
/// Why registering `run_code` beside the built-ins cannot fail.
const RUN_CODE_NAME_FREE: &str = "`run_code` is not a built-in tool's name";
/// Why registering the workflow tools beside the built-ins cannot fail.
const WORKFLOW_NAMES_FREE: &str = "the workflow tools have unique names and valid schemas";

/// The one place a registration of Qilin's own tools is taken as infallible: their names and
/// schemas are fixed when Qilin is compiled, and every test that builds a session builds
/// these registries, so a failure here is a bug in Qilin that the tests catch, never an input.
#[expect(
    clippy::expect_used,
    reason = "Qilin's own tools' names and schemas are fixed at compile time"
)]
fn built_in<E: std::fmt::Debug>(registered: std::result::Result<(), E>, why: &str) {
    registered.expect(why);
}
