//! `grep` against the `rg` binary on the same generated tree of 50,000 files, side by side.
//!
//! Run with `cargo bench -p qilin-tools --bench grep`. Prints the median wall time of each
//! over several runs, per output mode, and the ratio. Without `rg` on the PATH only Qilin's
//! figures are printed.

use qilin_tool::{Caller, Executor, Session, ToolCall, ToolRegistry};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FILES: usize = 50_000;
const FILES_PER_FOLDER: usize = 100;
const RUNS: usize = 11;
const PATTERN: &str = r"needle_[0-9]+\(";

/// A tiny deterministic generator, so every run searches the same tree.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

const WORDS: &[&str] = &[
    "let", "value", "return", "match", "struct", "impl", "self", "config", "parse", "error",
    "result", "buffer", "index", "token", "stream", "handle", "window", "layout", "render",
];

fn generate(root: &Path) -> usize {
    let mut rng = Lcg(42);
    let mut matching = 0;
    std::fs::write(root.join(".gitignore"), "ignored/\n*.log\n").unwrap();
    for index in 0..FILES {
        let folder = match index % 50 {
            0 => root
                .join("ignored")
                .join(format!("d{}", index / FILES_PER_FOLDER)),
            _ => root
                .join(format!("pkg{}", index / (FILES_PER_FOLDER * 20)))
                .join(format!("d{}", index / FILES_PER_FOLDER)),
        };
        std::fs::create_dir_all(&folder).unwrap();
        let extension = if index % 40 == 1 { "log" } else { "rs" };
        let size_class = rng.next() % 100;
        let lines = match size_class {
            0..=59 => 5 + rng.next() % 40,
            60..=94 => 50 + rng.next() % 300,
            _ => 400 + rng.next() % 1500,
        };
        let plant = rng.next().is_multiple_of(20);
        let mut text = String::new();
        for line in 0..lines {
            if plant && line == lines / 2 {
                text.push_str(&format!("    let found = needle_{index}(value);\n"));
                continue;
            }
            let words = 3 + rng.next() % 9;
            text.push_str("    ");
            for _ in 0..words {
                text.push_str(WORDS[(rng.next() % WORDS.len() as u64) as usize]);
                text.push(' ');
            }
            text.push('\n');
        }
        let ignored = index.is_multiple_of(50) || extension == "log";
        if plant && !ignored {
            matching += 1;
        }
        std::fs::write(folder.join(format!("f{index}.{extension}")), text).unwrap();
    }
    matching
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn rg_available() -> bool {
    Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `rg` and returns its wall time and the number of lines it printed.
fn run_rg(root: &Path, mode_flag: &str) -> (Duration, usize) {
    let started = Instant::now();
    let output = Command::new("rg")
        .args(["--no-require-git", mode_flag, PATTERN, "."])
        .current_dir(root)
        .output()
        .expect("rg runs");
    let elapsed = started.elapsed();
    (
        elapsed,
        output.stdout.iter().filter(|&&b| b == b'\n').count(),
    )
}

fn main() {
    let tree = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let generating = Instant::now();
    let matching = generate(tree.path());
    println!(
        "generated {FILES} files ({matching} with a match outside ignored paths) in {:.1} s",
        generating.elapsed().as_secs_f64()
    );
    let mut registry = ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry).unwrap();
    let session = Arc::new(Session::new("bench", tree.path(), data.path()));
    let executor = Executor::new(Arc::new(registry), session);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let with_rg = rg_available();
    if !with_rg {
        println!("`rg` is not on the PATH: showing Qilin's figures only (apt-get install ripgrep)");
    }
    println!("pattern {PATTERN:?}, median of {RUNS} interleaved runs after a warm-up\n");
    println!(
        "{:<20} {:>12} {:>12} {:>8}",
        "mode", "qilin grep", "rg", "ratio"
    );
    for (mode, rg_flag) in [
        ("files_with_matches", "-l"),
        ("content", "-n"),
        ("count", "-c"),
    ] {
        let call = |n: usize| ToolCall {
            call_id: format!("bench-{mode}-{n}"),
            name: "grep".into(),
            arguments: json!({"pattern": PATTERN, "output_mode": mode}),
        };
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for run in 0..=RUNS {
            let started = Instant::now();
            let outcome = runtime.block_on(executor.dispatch(call(run), Caller::Direct));
            let elapsed = started.elapsed();
            let output = outcome.output.expect("grep succeeds");
            let found_files = output["total_files"].as_u64().unwrap() as usize;
            assert_eq!(
                found_files, matching,
                "qilin grep found a different set of files"
            );
            if with_rg {
                let (rg_elapsed, lines) = run_rg(tree.path(), rg_flag);
                assert_eq!(lines, matching, "rg found a different set of files");
                if run > 0 {
                    theirs.push(rg_elapsed);
                }
            }
            if run > 0 {
                ours.push(elapsed);
            }
        }
        let ours = median(ours);
        if with_rg {
            let theirs = median(theirs);
            println!(
                "{mode:<20} {:>9.1} ms {:>9.1} ms {:>7.2}x",
                ours.as_secs_f64() * 1000.0,
                theirs.as_secs_f64() * 1000.0,
                ours.as_secs_f64() / theirs.as_secs_f64()
            );
        } else {
            println!("{mode:<20} {:>9.1} ms", ours.as_secs_f64() * 1000.0);
        }
    }
}
