//! Hostile code in-process: each script ends in a clear error, and the next run works.
//! (A crash of the interpreter is tested with worker processes, in qilin-cli's tests.)

mod support;

use qilin_codemode::{CodeLimits, CodeMode};
use support::Harness;

/// Limits small enough to reach quickly, with room in the wall time for a loaded machine (the
/// endless loop has its own, shorter one).
fn harness() -> Harness {
    harness_with_wall_time(30_000)
}

fn harness_with_wall_time(wall_time_ms: u64) -> Harness {
    Harness::new(CodeMode::in_process(CodeLimits {
        wall_time_ms,
        memory_mb: 64,
        max_output_bytes: 2_000,
        max_tool_calls: 1_000,
        ..CodeLimits::default()
    }))
}

/// Runs `code`, asserts its error contains every one of `expected`, then that a normal run
/// still works.
async fn refused(h: &Harness, code: &str, expected: &[&str]) {
    let run = h.run(code).await;
    let error = run.error();
    for part in expected {
        assert!(
            error.contains(part),
            "{code:?} gave {error:?}, expected {part:?}"
        );
    }
    h.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_and_the_environment_are_out_of_reach_by_every_route() {
    let h = harness();
    for code in [
        "open('/etc/passwd').read()",
        "from pathlib import Path\nPath('/etc/passwd').read_text()",
        "import os\nos.listdir('/')",
        "import os\nos.getenv('HOME')",
        "import os\nos.environ['HOME']",
    ] {
        refused(&h, code, &["PermissionError", "run_code has no file"]).await;
    }
    refused(&h, "import os\nos.system('id')", &["AttributeError"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_and_network_modules_do_not_exist() {
    let h = harness();
    for module in ["subprocess", "socket", "importlib", "ctypes"] {
        let code = format!("import {module}");
        refused(&h, &code, &["ModuleNotFoundError", module]).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_code_and_dunder_tricks_are_refused() {
    let h = harness();
    refused(
        &h,
        "__import__('os').system('id')",
        &["NameError", "__import__"],
    )
    .await;
    refused(&h, "eval('1+1')", &["NameError", "eval"]).await;
    refused(&h, "exec('import os')", &["NameError", "exec"]).await;
    refused(&h, "globals()['sdk']", &["NameError", "globals"]).await;
    refused(&h, "__builtins__", &["NameError"]).await;
    refused(&h, "().__class__.__subclasses__()", &["AttributeError"]).await;
    refused(&h, "def f():\n    pass\nf.__globals__", &["AttributeError"]).await;
    refused(&h, "sdk.tool.__dict__", &["AttributeError"]).await;
    refused(
        &h,
        "sdk.tool.dispatch('x')",
        &["AttributeError", "has no method"],
    )
    .await;
    refused(&h, "sdk.tool.call(1)", &["TypeError", "name must be a str"]).await;
    refused(
        &h,
        "sdk.tool.call('echo', [1])",
        &["TypeError", "args must be a dict"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_ends_at_the_wall_time() {
    let h = harness_with_wall_time(1_000);
    refused(
        &h,
        "while True:\n    pass",
        &["TIMEOUT", "wall_time_ms limit of 1000 ms"],
    )
    .await;
    refused(
        &h,
        "try:\n    while True:\n        pass\nexcept BaseException:\n    print('caught')",
        &["wall_time_ms"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_gigabyte_string_ends_at_the_memory_limit() {
    let h = harness();
    refused(
        &h,
        "s = 'x' * (10 * 1024 ** 3)\nlen(s)",
        &["memory_mb limit of 64 MiB"],
    )
    .await;
    refused(&h, "[0] * (10 ** 10)", &["memory_mb"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_is_a_recursion_error_even_with_a_huge_configured_limit() {
    let h = Harness::new(CodeMode::in_process(CodeLimits {
        max_recursion_depth: 10_000_000,
        wall_time_ms: 5_000,
        ..CodeLimits::default()
    }));
    refused(
        &h,
        "def f(n):\n    return f(n + 1)\nf(0)",
        &["RecursionError", "max_recursion_depth limit is 2000"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn megabytes_of_prints_are_stopped_with_an_error_naming_the_output_limit() {
    let h = harness();
    refused(
        &h,
        "line = 'y' * 1000\nfor i in range(100000):\n    print(line)",
        &["max_output_bytes is 2000"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_tool_calls_end_at_the_call_limit() {
    let h = harness();
    let run = h
        .run("for i in range(100000):\n    sdk.tool.call('noop')")
        .await;
    let error = run.error();
    assert!(error.contains("max_tool_calls limit of 1000"), "{error}");
    assert_eq!(run.nested().len(), 1000);
    h.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catching_the_call_limit_does_not_let_the_code_go_on() {
    let h = harness();
    let run = h
        .run("n = 0\nfor i in range(5000):\n    try:\n        sdk.tool.call('noop')\n        n += 1\n    except BaseException:\n        pass\nn")
        .await;
    assert!(run.error().contains("max_tool_calls"), "{}", run.error());
}
