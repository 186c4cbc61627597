use qilin_tool::Tool;

/// Gives a flag a string.
#[derive(Tool)]
#[tool(name = "lister", read_only = "yes")]
struct Lister;

fn main() {}
