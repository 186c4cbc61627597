use qilin_tool::Tool;

/// Asks for an option the derive does not have.
#[derive(Tool)]
#[tool(name = "fast_tool", fast)]
struct FastTool;

fn main() {}
