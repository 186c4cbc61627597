use qilin_tool::Tool;

/// Names a path argument without quotes.
#[derive(Tool)]
#[tool(name = "reader", paths = [path])]
struct Reader;

fn main() {}
