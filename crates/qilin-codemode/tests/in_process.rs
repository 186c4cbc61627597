//! `run_code` in-process: the happy paths, errors as exceptions, concurrency and limits.

mod support;

use qilin_codemode::{CodeLimits, CodeMode};
use qilin_protocol::{CallStatus, CallerKind, ErrorCode, parse_spill_notice};
use serde_json::json;
use support::Harness;

fn harness() -> Harness {
    Harness::new(CodeMode::in_process(CodeLimits::default()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loops_comprehensions_dicts_and_f_strings_run_over_tool_outputs() {
    let h = harness();
    let run = h
        .run(
            r#"
words = ["alpha", "beta", "gamma"]
lengths = {}
for w in words:
    out = sdk.tool.call("echo", {"text": w})
    lengths[out["text"]] = out["length"]
long = [w for w, n in lengths.items() if n > 4]
print(f"total={sum(lengths.values())} long={sorted(long)}")
{"lengths": lengths, "count": len(long)}
"#,
        )
        .await;
    let output = run.output();
    assert_eq!(output["printed"], "total=14 long=['alpha', 'gamma']\n");
    assert_eq!(
        output["value"],
        json!({"lengths": {"alpha": 5, "beta": 4, "gamma": 5}, "count": 2})
    );
    assert_eq!(output["tool_calls"], 3);
    let nested = run.nested();
    assert_eq!(nested.len(), 3);
    for (i, result) in nested.iter().enumerate() {
        assert_eq!(result.call_id, format!("rc1.{}", i + 1));
        assert_eq!(result.parent_call_id.as_deref(), Some("rc1"));
        assert_eq!(result.caller, CallerKind::Code);
        assert_eq!(result.status, CallStatus::Ok);
    }
    let starts: Vec<_> = run
        .starts
        .iter()
        .filter(|s| s.tool_name == "echo")
        .collect();
    assert_eq!(starts[0].presentation.action, "Echo");
    assert_eq!(starts[0].arguments, json!({"text": "alpha"}));
    let run_code = run
        .starts
        .iter()
        .find(|s| s.tool_name == "run_code")
        .unwrap();
    assert_eq!(run_code.presentation.action, "Run code");
    assert_eq!(
        run_code.presentation.remark,
        "words = [\"alpha\", \"beta\", \"gamma\"]"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keywords_are_arguments_and_code_mode_only_tools_are_callable() {
    let h = harness();
    let run = h
        .run("a = sdk.tool.call('echo', text='kw')\nb = sdk.tool.call('secret')\n[a['text'], b]")
        .await;
    assert_eq!(run.output()["value"], json!(["kw", "s3cret"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_call_raises_tool_error_with_its_code_and_message() {
    let h = harness();
    let run = h
        .run(
            r#"
caught = []
for name, args in [("fail", {"message": "disk on fire"}), ("nope", {}), ("echo", {"text": 3})]:
    try:
        sdk.tool.call(name, args)
    except ToolError as e:
        info = sdk.tool.error(e)
        caught.append(info["code"])
        if name == "fail":
            print(info["message"])
try:
    1 / 0
except Exception as e:
    caught.append(sdk.tool.error(e))
caught
"#,
        )
        .await;
    let output = run.output();
    assert_eq!(output["printed"], "disk on fire\n");
    assert_eq!(
        output["value"],
        json!(["TOOL_FAILED", "UNKNOWN_TOOL", "INVALID_ARGUMENTS", null])
    );
    let statuses: Vec<_> = run.nested().iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![CallStatus::Error; 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncaught_tool_error_ends_the_run_with_a_traceback_in_the_models_lines() {
    let h = harness();
    let run = h
        .run("print('before')\nx = 1\nsdk.tool.call('fail', {'message': 'boom'})\nprint('after')")
        .await;
    let error = run.error();
    assert!(error.starts_with("TOOL_FAILED"), "{error}");
    assert!(error.contains("File \"main.py\", line 3"), "{error}");
    assert!(error.contains("RuntimeError: TOOL_FAILED: boom"), "{error}");
    assert!(
        error.contains("Printed before the failure:\nbefore"),
        "{error}"
    );
    assert!(!error.contains("after"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_syntax_error_names_its_line_and_nothing_runs() {
    let h = harness();
    let run = h.run("x = 1\ny = (2,\nsdk.tool.call('noop')").await;
    let error = run.error();
    assert!(error.starts_with("INVALID_ARGUMENTS"), "{error}");
    assert!(error.contains("line 3"), "{error}");
    assert!(run.nested().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_gathered_calls_overlap_on_the_host() {
    let h = Harness::new(CodeMode::in_process(CodeLimits {
        max_concurrency: 10,
        ..CodeLimits::default()
    }));
    let run = h
        .run(
            r#"
import asyncio
labels = await asyncio.gather(*[sdk.tool.call_async("slow", {"ms": 200, "label": f"l{i}"}) for i in range(10)])
labels
"#,
        )
        .await;
    let expected: Vec<String> = (0..10).map(|i| format!("l{i}")).collect();
    assert_eq!(run.output()["value"], json!(expected));
    assert_eq!(h.gauge.max(), 10, "all ten calls ran at once");
    assert_eq!(run.nested().len(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gathered_calls_are_bounded_by_max_concurrency() {
    let h = Harness::new(CodeMode::in_process(CodeLimits {
        max_concurrency: 3,
        ..CodeLimits::default()
    }));
    let run = h
        .run(
            "import asyncio\nawait asyncio.gather(*[sdk.tool.call_async('slow', ms=50, label='x') for i in range(9)])",
        )
        .await;
    assert_eq!(run.output()["value"], json!(vec!["x"; 9]));
    assert_eq!(h.gauge.max(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exception_inside_gather_reaches_the_codes_except() {
    let h = harness();
    let run = h
        .run(
            r#"
import asyncio
try:
    await asyncio.gather(
        sdk.tool.call_async("slow", {"ms": 100, "label": "a"}),
        sdk.tool.call_async("fail", {"message": "gathered failure"}),
    )
    result = "no error"
except ToolError as e:
    result = sdk.tool.error(e)["message"]
result
"#,
        )
        .await;
    assert_eq!(run.output()["value"], "gathered failure");
    h.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_ms_shortens_the_wall_time_and_the_error_names_the_limit() {
    let h = harness();
    let run = h
        .run_with(json!({"code": "while True:\n    pass", "timeout_ms": 200}))
        .await;
    let error = run.error();
    assert!(error.starts_with("TIMEOUT"), "{error}");
    assert!(error.contains("wall_time_ms limit of 200 ms"), "{error}");
    h.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_inside_tools_does_not_count_against_the_wall_time() {
    let h = harness();
    let run = h
        .run_with(json!({
            "code": "[sdk.tool.call('slow', ms=150, label='t') for _ in range(3)]",
            "timeout_ms": 100
        }))
        .await;
    assert_eq!(run.output()["value"], json!(["t", "t", "t"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_output_is_cut_and_spilled_whole_to_a_file() {
    let h = Harness::new(CodeMode::in_process(CodeLimits {
        max_output_bytes: 1_000,
        ..CodeLimits::default()
    }));
    let run = h.run("for i in range(2000):\n    print(f'line {i}')").await;
    let printed = run.output()["printed"].as_str().unwrap().to_string();
    assert!(printed.starts_with("line 0\n"), "{printed}");
    assert!(printed.contains("line 1999"), "{printed}");
    let notice = parse_spill_notice(&printed).expect("a spill notice");
    let whole = std::fs::read_to_string(&notice.path).unwrap();
    assert_eq!(whole.lines().count(), 2000);
    assert_eq!(whole.len() as u64, notice.total_bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_error_surface_counts_the_calls_and_reports_code() {
    let h = harness();
    let run = h
        .run("sdk.tool.call('noop')\nsdk.tool.call('noop')\nraise ValueError('mine')")
        .await;
    let error = run.error();
    assert_eq!(
        run.outcome.error.as_ref().unwrap().code,
        ErrorCode::ToolFailed
    );
    assert!(error.contains("ValueError: mine"), "{error}");
    assert!(error.contains("line 3"), "{error}");
}
