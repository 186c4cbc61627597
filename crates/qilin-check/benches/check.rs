//! How long `qilin check` takes on a generated workspace of 100 skills, 100 tools and 20
//! agents: discovery of the skills and agent files plus every rule. Target: under 200 ms.
//!
//! Run with `cargo bench -p qilin-check --bench check`.

use qilin_check::{Target, check};
use qilin_protocol::{CallPresentation, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolInfo, ToolRegistry, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

const TOOLS: usize = 100;
const AGENTS: usize = 20;
const RUNS: usize = 20;

/// Arguments every generated tool takes.
#[expect(
    dead_code,
    reason = "the benchmark reads only the schema of the arguments"
)]
#[derive(Clone, Deserialize, JsonSchema)]
struct BenchArgs {
    /// What to look for.
    query: String,
    /// The most entries returned.
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
    /// How to match.
    options: Option<BenchOptions>,
}

/// How to match.
#[expect(
    dead_code,
    reason = "the benchmark reads only the schema of the arguments"
)]
#[derive(Clone, Deserialize, JsonSchema)]
struct BenchOptions {
    /// Match regardless of case.
    case_insensitive: bool,
    /// Paths to search.
    paths: Vec<String>,
}

/// What every generated tool returns.
#[derive(Serialize, JsonSchema)]
struct BenchOutput {
    /// The entries found.
    entries: Vec<String>,
    /// How many there are in all.
    total: u32,
    /// True when entries were left out.
    truncated: bool,
}

/// `tool_000` .. `tool_099`, as bytes, computed at compile time.
const fn wire_name(index: usize) -> [u8; 8] {
    [
        b't',
        b'o',
        b'o',
        b'l',
        b'_',
        b'0' + (index / 100 % 10) as u8,
        b'0' + (index / 10 % 10) as u8,
        b'0' + (index % 10) as u8,
    ]
}

/// Generated tool number `N`; every fifth one is code-mode-only.
struct GenTool<const N: usize>;

impl<const N: usize> GenTool<N> {
    const NAME_BYTES: [u8; 8] = wire_name(N);
}

impl<const N: usize> ToolInfo for GenTool<N> {
    const NAME: &'static str = match std::str::from_utf8(&Self::NAME_BYTES) {
        Ok(name) => name,
        Err(_) => panic!("generated names are ASCII"),
    };
    const DESCRIPTION: &'static str = "Look entries up by name.";
    const CODE_MODE_ONLY: bool = N.is_multiple_of(5);
}

impl<const N: usize> Tool for GenTool<N> {
    type Args = BenchArgs;
    type Output = BenchOutput;

    fn prompt_hint(&self) -> &str {
        "Prefer a small `limit`; narrow with `options.paths` before raising it."
    }

    fn present(&self, args: &BenchArgs) -> CallPresentation {
        CallPresentation::new("Look up", &args.query)
    }

    fn before_detail(&self, _: &BenchArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _: &BenchArgs, _: &ToolResult<BenchOutput>) -> Option<Detail> {
        None
    }

    async fn call(&self, _: BenchArgs, _: &ToolContext) -> ToolResult<BenchOutput> {
        Err(ToolError::failed("the benchmark only checks tools"))
    }
}

macro_rules! register {
    ($registry:ident; $($n:literal)*) => {
        $( $registry.register(GenTool::<$n>).expect("generated tools register"); )*
    };
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    register!(registry;
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
        30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57
        58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85
        86 87 88 89 90 91 92 93 94 95 96 97 98 99
    );
    registry
}

fn tool_name(index: usize) -> String {
    format!("tool_{index:03}")
}

fn skill_text(index: usize) -> String {
    let tool = tool_name(index);
    format!(
        "---\nname: skill-{index:03}\ndescription: Look entries up with {tool} from Python in run_code.\n---\n\n\
# {tool}\n\nLooks entries up by name.\n\nParameters:\n\n\
- `query` (string, required): what to look for.\n\
- `limit` (int, optional, 1 to 500): the most entries returned.\n\
- `options` (dict, optional): `case_insensitive` (bool) and `paths` (list of strings).\n\n\
Returns a dict: `entries` (list of strings), `total` (int) and `truncated` (bool).\n\n\
```python\nfound = sdk.tool.call(\"{tool}\", {{\"query\": \"alpha\", \"limit\": 20}})\n\
for entry in found[\"entries\"]:\n    print(entry)\nif found[\"truncated\"]:\n    print(found[\"total\"], \"in all\")\n```\n\n\
See `reference/more.md` for keyword calls.\n"
    )
}

fn reference_text(index: usize) -> String {
    let tool = tool_name(index);
    format!(
        "# More about {tool}\n\nKeywords work too:\n\n```python\nimport asyncio\n\n\
results = await asyncio.gather(\n    sdk.tool.call_async(\"{tool}\", query=\"a\", options={{\"case_insensitive\": True, \"paths\": [\"src\"]}}),\n\
    sdk.tool.call_async(\"{tool}\", query=\"b\", limit=5),\n)\nprint(sum(r[\"total\"] for r in results))\n```\n"
    )
}

fn agent_text(index: usize) -> String {
    let mounted: Vec<String> = (0..4)
        .map(|k| tool_name((index * 5 + k + 1) % TOOLS))
        .filter(|name| !name.ends_with('0') && !name.ends_with('5'))
        .collect();
    let skills: Vec<String> = (0..5)
        .map(|k| format!("skill-{:03}", (index * 5 + k) % TOOLS))
        .collect();
    format!(
        "name: agent-{index:02}\ninstructions: Answer questions about the entries.\ntools: [{}]\ncode_mode: true\n\
skills:\n  available: [{}]\n  preload:\n    - name: {}\n      files: [SKILL.md, reference/more.md]\n",
        mounted.join(", "),
        skills.join(", "),
        skills[0]
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn generate(root: &Path) {
    for index in 0..TOOLS {
        let dir = root.join(format!(".qilin/skills/skill-{index:03}"));
        write(&dir.join("SKILL.md"), &skill_text(index));
        write(&dir.join("reference/more.md"), &reference_text(index));
    }
    for index in 0..AGENTS {
        write(
            &root.join(format!("agents/agent-{index:02}.agent")),
            &agent_text(index),
        );
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("a temp dir");
    generate(dir.path());
    let start = Instant::now();
    let registry = registry();
    let registry_time = start.elapsed();
    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    let mut last = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        let target = Target::workspace(dir.path(), &[]);
        let report = check(&registry, &[target]);
        times.push(start.elapsed());
        last = Some(report);
    }
    let report = last.expect("at least one run");
    assert!(
        report.findings.is_empty(),
        "the generated workspace is clean:\n{}",
        qilin_check::render_text(&report)
    );
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("cargo bench -p qilin-check --bench check");
    println!(
        "workspace: {} tools, {} skills, {} agents; registry built in {:.1} ms",
        report.tools,
        report.skills,
        report.agents,
        ms(registry_time)
    );
    println!(
        "qilin check (discovery + every rule), {RUNS} runs: min {:.1} ms, median {:.1} ms, max {:.1} ms (target: under 200 ms)",
        ms(times[0]),
        ms(times[RUNS / 2]),
        ms(times[RUNS - 1])
    );
}
