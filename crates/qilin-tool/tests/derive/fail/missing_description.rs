use qilin_tool::Tool;

#[derive(Tool)]
#[tool(name = "undocumented")]
struct Undocumented;

fn main() {}
