//! Helpers shared by the integration tests: skill folders written into a temporary
//! workspace, and small stand-in tools for a registry.

#![allow(dead_code)]

use qilin_protocol::{CallPresentation, Detail};
use qilin_skill::{SkillDiscovery, SkillTool, discover, skill_roots};
use qilin_tool::{Tool, ToolContext, ToolRegistry, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes `files` (path relative to `root`, content) under `root`.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
}

/// A well-formed SKILL.md.
pub fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}")
}

/// Writes a skill into `<workspace>/.qilin/skills/<name>/`.
pub fn write_skill(workspace: &Path, name: &str, description: &str, body: &str) -> PathBuf {
    let dir = workspace.join(".qilin/skills").join(name);
    write_files(&dir, &[("SKILL.md", &skill_md(name, description, body))]);
    dir
}

/// Discovers the skills of `workspace` alone (no home folder).
pub fn discover_workspace(workspace: &Path) -> SkillDiscovery {
    discover(&skill_roots(workspace, None, &[]))
}

/// Arguments of every stand-in tool.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct StandInArgs {
    /// A path.
    pub path: Option<String>,
}

macro_rules! stand_in {
    ($ty:ident, $doc:literal, $($attr:tt)*) => {
        #[doc = $doc]
        #[derive(qilin_tool::Tool)]
        #[tool($($attr)*)]
        pub struct $ty;

        impl Tool for $ty {
            type Args = StandInArgs;
            type Output = String;
            fn prompt_hint(&self) -> &str {
                concat!("Hint for ", stringify!($ty), ".")
            }
            fn present(&self, args: &StandInArgs) -> CallPresentation {
                CallPresentation::new(stringify!($ty), args.path.clone().unwrap_or_default())
            }
            fn before_detail(&self, _args: &StandInArgs) -> Option<Detail> {
                None
            }
            fn detail(&self, _args: &StandInArgs, _result: &ToolResult<String>) -> Option<Detail> {
                None
            }
            async fn call(&self, args: StandInArgs, _cx: &ToolContext) -> ToolResult<String> {
                Ok(format!("{} ran on {:?}", stringify!($ty), args.path))
            }
        }
    };
}

stand_in!(Read, "Read a file.", name = "read");
stand_in!(Write, "Write a file.", name = "write");
stand_in!(Edit, "Edit a file.", name = "edit");
stand_in!(Grep, "Search file contents.", name = "grep");
stand_in!(Glob, "Find files by pattern.", name = "glob");
stand_in!(Bash, "Run a shell command.", name = "bash");
stand_in!(RunCode, "Run Python that calls tools.", name = "run_code");
stand_in!(
    TableQuery,
    "Aggregate a CSV file.",
    name = "table_query",
    code_mode_only
);

/// A registry with stand-ins for the built-in tools, `run_code`, the code-mode-only
/// `table_query`, and the real `skill` tool over `discovery`'s skills.
pub fn registry_with(discovery: &SkillDiscovery) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Read).unwrap();
    registry.register(Write).unwrap();
    registry.register(Edit).unwrap();
    registry.register(Grep).unwrap();
    registry.register(Glob).unwrap();
    registry.register(Bash).unwrap();
    registry.register(RunCode).unwrap();
    registry.register(TableQuery).unwrap();
    registry
        .register(SkillTool::new(Arc::new(discovery.skills.clone())))
        .unwrap();
    registry
}
