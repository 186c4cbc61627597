//! One task done by a scripted agent twice — with the tools mounted directly, and in code
//! mode — over the same generated tree of 200 files: find the TODO comments and report the
//! five files with the most. Reports the bytes (and estimated tokens, bytes / 4) of every
//! request sent to the model.
//!
//! Three plans: **direct** asks `grep` for the matching lines (the comments themselves, as
//! the task asks) and ranks the files itself; **direct, counts only** is the most frugal
//! direct plan — `grep` in count mode, never seeing a comment; **code mode** makes the
//! content `grep` inside `run_code`, counts per file in Python and prints only the five lines
//! of the answer. The code-mode agent has the example's `code-search` skill preloaded, so it
//! knows `grep` without the tool's own prompt; the direct agents carry `grep`, `glob` and
//! `read` in their tools list.
//!
//! Run: `cargo bench -p qilin-agent --bench todo_task`

use qilin_agent::{Agent, AgentPrompt, LoopSettings};
use qilin_codemode::{CodeLimits, CodeMode, RunCode};
use qilin_model::{ModelProvider, ModelRequest, ModelStream, Script, ScriptedProvider};
use qilin_protocol::FinishReason;
use qilin_tool::{DirectDefinition, Executor, Session, ToolRegistry};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

const FILES: usize = 200;

/// Counts the bytes of every request (as JSON) before passing it on.
struct Metered {
    inner: ScriptedProvider,
    requests: AtomicUsize,
    total_bytes: AtomicUsize,
    conversation_bytes: AtomicUsize,
}

impl ModelProvider for Metered {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let whole = serde_json::to_vec(&request)
            .expect("a request serializes")
            .len();
        let conversation = serde_json::to_vec(&request.messages)
            .expect("messages serialize")
            .len();
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.total_bytes.fetch_add(whole, Ordering::Relaxed);
        self.conversation_bytes
            .fetch_add(conversation, Ordering::Relaxed);
        self.inner.stream(request)
    }
}

/// Writes the tree and returns the expected answer: `path: count` of the top five.
fn generate_tree(root: &Path) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut counts = Vec::with_capacity(FILES);
    for index in 0..FILES {
        let relative = format!("src/module_{:02}/file_{index:03}.rs", index % 20);
        let path = root.join(&relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        let todos = rng.usize(0..=6);
        let mut text = String::new();
        let lines = rng.usize(40..120);
        let mut placed = 0;
        for line in 0..lines {
            if placed < todos && rng.usize(0..lines) < todos * 2 {
                text.push_str(&format!("    // TODO: case {line}\n"));
                placed += 1;
            } else {
                text.push_str(&format!(
                    "    let value_{line} = compute({line}, {index});\n"
                ));
            }
        }
        std::fs::write(&path, text).expect("write");
        counts.push((placed, relative));
    }
    counts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    counts
        .iter()
        .take(5)
        .map(|(count, path)| format!("{path}: {count}"))
        .collect()
}

fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

struct Measured {
    requests: usize,
    total_bytes: usize,
    conversation_bytes: usize,
    printed: String,
}

async fn run(
    workspace: &Path,
    registry: Arc<ToolRegistry>,
    system: String,
    tools: Vec<DirectDefinition>,
    script: &str,
) -> Measured {
    let metered = Arc::new(Metered {
        inner: ScriptedProvider::new(
            Script::parse(script, Path::new("task.yaml")).expect("script"),
        ),
        requests: AtomicUsize::new(0),
        total_bytes: AtomicUsize::new(0),
        conversation_bytes: AtomicUsize::new(0),
    });
    let data = workspace.join(".qilin/bench-session");
    let session = Arc::new(Session::new("bench", workspace, &data));
    let agent = Agent::new(
        Arc::clone(&metered) as Arc<dyn ModelProvider>,
        AgentPrompt { system, tools },
        Executor::new(registry, session),
        LoopSettings {
            model: "scripted".into(),
            max_steps: 10,
            max_tokens: None,
            reasoning: None,
        },
    );
    let summary = agent
        .run_turn(
            "Find the TODO comments and report the five files with the most.",
            CancellationToken::new(),
        )
        .await;
    assert_eq!(summary.reason, FinishReason::Completed);
    let printed = agent
        .history()
        .iter()
        .find_map(|message| match message {
            qilin_model::Message::ToolResults { results } => Some(
                results[0]
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        qilin_protocol::ContentBlock::Text { text } => Some(text.clone()),
                        _ => None,
                    })
                    .collect::<String>(),
            ),
            _ => None,
        })
        .unwrap_or_default();
    Measured {
        requests: metered.requests.load(Ordering::Relaxed),
        total_bytes: metered.total_bytes.load(Ordering::Relaxed),
        conversation_bytes: metered.conversation_bytes.load(Ordering::Relaxed),
        printed,
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path();
    let expected = generate_tree(workspace);
    let answer = format!(
        "The five files with the most TODOs:\n{}",
        expected.join("\n")
    );

    let mut registry = ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry).expect("built-ins");
    registry
        .register(RunCode::new(CodeMode::in_process(CodeLimits::default())))
        .expect("run_code");
    let registry = Arc::new(registry);

    let skill_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/workspace/.qilin/skills/code-search/SKILL.md");
    let skill = std::fs::read_to_string(&skill_path).expect("the code-search skill");
    let instructions = "You are a careful engineer working in this workspace.";

    let direct_script = |mode: &str| {
        format!(
            "turns:\n  - calls: [{{tool: grep, args: {{pattern: TODO, output_mode: {mode}, head_limit: 1000}}}}]\n  - say: {}\n",
            yaml_string(&answer)
        )
    };
    let code = "hits = sdk.tool.call(\"grep\", {\"pattern\": \"TODO\", \"output_mode\": \"content\", \"head_limit\": 1000})\n\
                counts = [(-len(f[\"lines\"]), f[\"path\"]) for f in hits[\"files\"]]\n\
                for count, path in sorted(counts)[:5]:\n    print(f\"{path}: {-count}\")\n";
    let code_script = format!(
        "turns:\n  - calls: [{{tool: run_code, args: {{code: {}}}}}]\n  - say: {}\n",
        yaml_string(code),
        yaml_string(&answer)
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let direct_tools = registry
        .tools_list(["grep", "glob", "read"])
        .expect("tools");
    let (direct, counts_only, code_mode) = runtime.block_on(async {
        let direct = run(
            workspace,
            Arc::clone(&registry),
            instructions.to_string(),
            direct_tools.clone(),
            &direct_script("content"),
        )
        .await;
        let counts_only = run(
            workspace,
            Arc::clone(&registry),
            instructions.to_string(),
            direct_tools,
            &direct_script("count"),
        )
        .await;
        let code_mode = run(
            workspace,
            Arc::clone(&registry),
            format!("{instructions}\n\n<skill-file skill=\"code-search\" path=\"SKILL.md\">\n{skill}\n</skill-file>"),
            registry.tools_list(["run_code"]).expect("tools"),
            &code_script,
        )
        .await;
        (direct, counts_only, code_mode)
    });
    let printed: Vec<&str> = code_mode.printed.lines().take(5).collect();
    assert_eq!(printed, expected, "code mode printed the right answer");

    println!(
        "task: find the TODO comments in {FILES} files and report the five files with the most"
    );
    for (label, m) in [
        ("direct", &direct),
        ("direct, counts only", &counts_only),
        ("code mode", &code_mode),
    ] {
        let cut = if qilin_protocol::parse_spill_notice(&m.printed).is_some() {
            "   (tool output cut at the cap)"
        } else {
            ""
        };
        println!(
            "{label:<20} requests {}   sent {:>7} bytes (~{:>6} tokens)   of which conversation {:>7} bytes (~{:>6} tokens)",
            m.requests,
            m.total_bytes,
            m.total_bytes / 4,
            m.conversation_bytes,
            m.conversation_bytes / 4,
        );
        if !cut.is_empty() {
            println!("{:<20}{cut}", "");
        }
    }
    let fewer = |a: usize, b: usize| 100.0 * (1.0 - b as f64 / a as f64);
    for (label, baseline) in [("direct", &direct), ("direct, counts only", &counts_only)] {
        println!(
            "code mode vs {label:<20}: {:.1}% fewer bytes in all, {:.1}% fewer conversation bytes",
            fewer(baseline.total_bytes, code_mode.total_bytes),
            fewer(baseline.conversation_bytes, code_mode.conversation_bytes)
        );
    }
}
