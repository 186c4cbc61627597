use qilin_tool::Tool;

/// Has a description but no wire name.
#[derive(Tool)]
#[tool(read_only)]
struct Nameless;

fn main() {}
