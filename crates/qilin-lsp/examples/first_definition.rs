//! Measures `definition` on the Python fixture: the first request on a cold server (start,
//! `initialize`, opening the file, the answer) and the same request on the warm server.
//!
//! `cargo build --release -p qilin-lsp --bins && cargo run --release -p qilin-lsp --example
//! first_definition` (the servers of `tests/lsp-servers` installed with
//! `npm ci --prefix tests/lsp-servers`). The server runs sandboxed through the
//! `qilin-lsp-sandbox-exec` helper built beside the example; without it, unconfined (it says
//! which).

use qilin_lsp::{LspOptions, LspQuery, LspWorkspace, ServerSandbox};
use qilin_protocol::lsp::LspOperation;
use qilin_sandbox::SandboxHelper;
use std::path::Path;
use std::time::{Duration, Instant};

const COLD_RUNS: usize = 5;
const WARM_RUNS: usize = 50;

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = manifest.join("../../tests/lsp-servers/node_modules/.bin");
    if !bin.join("pyright-langserver").exists() {
        return Err("run `npm ci --prefix tests/lsp-servers --no-audit --no-fund` first".into());
    }
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let helper = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .map(|profile| profile.join("qilin-lsp-sandbox-exec"))
        .filter(|helper| helper.exists());
    let sandbox = match helper {
        Some(helper) => ServerSandbox::Confined(SandboxHelper::new(helper, Vec::<String>::new())),
        None => ServerSandbox::Off,
    };
    let how = if sandbox.is_confined() {
        "sandboxed"
    } else {
        "unconfined (build the helper with `cargo build --release -p qilin-lsp --bins`)"
    };
    let options = LspOptions {
        search_path: Some(std::env::join_paths(dirs)?),
        sandbox,
        ..LspOptions::default()
    };
    let query = LspQuery {
        operation: LspOperation::Definition,
        path: Some("app.py".into()),
        line: Some(12),
        character: Some(11),
        query: None,
    };
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for _ in 0..COLD_RUNS {
        let dir = tempfile::tempdir()?;
        copy_dir(&manifest.join("tests/fixtures/python"), dir.path())?;
        let workspace = LspWorkspace::new(dir.path(), options.clone());
        let started = Instant::now();
        let first = workspace.run(&query).await?;
        cold.push(started.elapsed());
        if first.items.len() != 1 {
            return Err(format!("the cold definition found {:?}", first).into());
        }
        for _ in 0..WARM_RUNS / COLD_RUNS {
            let started = Instant::now();
            let again = workspace.run(&query).await?;
            warm.push(started.elapsed());
            if again.items.len() != 1 {
                return Err(format!("a warm definition found {:?}", again).into());
            }
        }
    }
    let max_cold = cold.iter().max().copied().unwrap_or_default();
    let max_warm = warm.iter().max().copied().unwrap_or_default();
    println!(
        "definition app.py:12:11 on pyright-langserver, {how} — cold (start + initialize + open + answer): median {} (max {}, {COLD_RUNS} runs); warm: median {} (max {}, {} runs)",
        ms(median(cold)),
        ms(max_cold),
        ms(median(warm.clone())),
        ms(max_warm),
        warm.len()
    );
    Ok(())
}
