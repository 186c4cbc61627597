use qilin_tool::Tool;

/// A wire name with capitals and a dash.
#[derive(Tool)]
#[tool(name = "Grep-Files")]
struct GrepFiles;

fn main() {}
