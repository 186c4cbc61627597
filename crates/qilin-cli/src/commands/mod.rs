//! One module per subcommand.

pub mod agent;
pub mod check;
pub mod code;
pub mod demo;
pub mod run;
pub mod skills;
pub mod tools;

use qilin_tool::ToolRegistry;

/// The registry of every tool this build of Qilin ships.
pub fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry)
        .expect("the built-in tools have unique names and valid schemas");
    registry
}
