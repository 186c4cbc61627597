//! One module per subcommand.

pub mod tools;

use qilin_tool::ToolRegistry;

/// The registry of every tool this build of Qilin ships.
pub fn registry() -> ToolRegistry {
    ToolRegistry::new()
}
