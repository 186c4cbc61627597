//! `checks_run` through the execution layer, in the sandbox: timeouts, commands that cannot
//! start, concurrency and `depends_on`, the cache, JUnit reports, and refusals.

use qilin_checks::CheckService;
use qilin_protocol::checks::{CheckConclusion, CheckStatus, ChecksRunOutput};
use qilin_protocol::{CallStatus, ContentBlock, ErrorCode};
use qilin_sandbox::{Sandbox, SandboxError, SandboxHelper, SandboxMode, SandboxSettings};
use qilin_tool::{
    AllowAll, CallOutcome, Caller, ExecConfig, Executor, Services, Session, ToolCall, ToolRegistry,
};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

struct Harness {
    executor: Executor,
    workspace: tempfile::TempDir,
    _data: tempfile::TempDir,
    next: AtomicUsize,
}

fn sandbox() -> Sandbox {
    let helper = SandboxHelper::new(
        env!("CARGO_BIN_EXE_qilin-checks-sandbox-exec"),
        Vec::<String>::new(),
    );
    match Sandbox::start(SandboxSettings::default(), helper.clone()) {
        Ok(sandbox) => sandbox,
        Err(SandboxError::Unsupported { missing, .. }) => {
            eprintln!(
                "note: this machine cannot sandbox bash ({}); running unconfined",
                missing.join("; ")
            );
            let off = SandboxSettings {
                mode: SandboxMode::Off,
                ..SandboxSettings::default()
            };
            Sandbox::start(off, helper).unwrap()
        }
        Err(err) => panic!("{err}"),
    }
}

/// A session over a fresh workspace holding `files`, with the checks `checks_yaml` declares
/// (none when empty).
fn harness(checks_yaml: &str, files: &[(&str, &str)]) -> Harness {
    let workspace = tempfile::tempdir().unwrap();
    for (path, text) in files {
        write(workspace.path(), path, text);
    }
    let mut services: Services = qilin_tools::session_services();
    services.insert(Arc::new(sandbox()));
    if !checks_yaml.is_empty() {
        let (checks, problems) =
            qilin_skill::checks_in(Path::new(".qilin/checks.yaml"), checks_yaml);
        assert!(problems.is_empty(), "{problems:?}");
        services.insert(Arc::new(CheckService::new(checks)));
    }
    let mut registry = ToolRegistry::new();
    qilin_checks::register_tools(&mut registry).unwrap();
    let data = tempfile::tempdir().unwrap();
    let session =
        Arc::new(Session::new("s1", workspace.path(), data.path()).with_services(services));
    Harness {
        executor: Executor::with_policy(
            Arc::new(registry),
            session,
            Arc::new(AllowAll),
            ExecConfig::default(),
        ),
        workspace,
        _data: data,
        next: AtomicUsize::new(1),
    }
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl Harness {
    async fn call(&self, arguments: Value) -> CallOutcome {
        let call = ToolCall {
            call_id: format!("call-{}", self.next.fetch_add(1, Ordering::Relaxed)),
            name: "checks_run".into(),
            arguments,
        };
        self.executor.dispatch(call, Caller::Direct).await
    }

    /// Runs the checks and expects the call to succeed.
    async fn run(&self, arguments: Value) -> (ChecksRunOutput, String) {
        let outcome = self.call(arguments).await;
        assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.error);
        let text = outcome
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::Text { text } => text.clone(),
                _ => String::new(),
            })
            .collect();
        (
            serde_json::from_value(outcome.output.unwrap()).unwrap(),
            text,
        )
    }

    async fn call_cancelled_after(&self, arguments: Value, after: Duration) -> CallOutcome {
        let call = ToolCall {
            call_id: format!("call-{}", self.next.fetch_add(1, Ordering::Relaxed)),
            name: "checks_run".into(),
            arguments,
        };
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            trigger.cancel();
        });
        self.executor
            .dispatch_cancellable(call, Caller::Direct, cancel)
            .await
    }

    fn write(&self, path: &str, text: &str) {
        write(self.workspace.path(), path, text);
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.workspace.path().join(path)).unwrap_or_default()
    }
}

#[tokio::test]
async fn a_check_past_its_timeout_is_killed_and_fails() {
    let h = harness(
        "checks:\n  - id: slow\n    command: echo starting; sleep 30; echo never\n    timeout: 1\n",
        &[],
    );
    let (output, text) = h.run(json!({})).await;
    let run = &output.runs[0];
    assert_eq!(run.status, CheckStatus::TimedOut);
    assert_eq!(run.conclusion, CheckConclusion::Failure);
    assert_eq!(run.summary, "timed out after 1 s");
    assert_eq!(run.exit_code, None);
    assert!(run.output.contains("starting") && !run.output.contains("never"));
    assert_eq!(output.conclusion, CheckConclusion::Failure);
    assert!(
        text.contains("[FAILED] slow: timed out after 1 s"),
        "{text}"
    );
}

#[tokio::test]
async fn a_command_that_cannot_start_is_failed_to_start() {
    let h = harness(
        "checks:\n  - id: lint\n    command: ./no-such-linter --strict\n",
        &[],
    );
    let (output, _) = h.run(json!({"ids": ["lint"]})).await;
    let run = &output.runs[0];
    assert_eq!(run.status, CheckStatus::FailedToStart);
    assert_eq!(run.conclusion, CheckConclusion::Failure);
    assert!(
        run.summary
            .starts_with("could not start: command not found (exit code 127)"),
        "{}",
        run.summary
    );
}

/// Each of `a` and `b` writes its start file, then waits (up to 10 s) for the other's and
/// fails without it: neither ends before the other has started, so both pass only when they
/// ran at once (one after the other, the first would fail). `c` depends on both and passes
/// only if both had ended when it started.
const CONCURRENT: &str = r#"checks:
  - id: a
    command: 'touch a.started; for i in $(seq 200); do [ -e b.started ] && break; sleep 0.05; done; [ -e b.started ] && touch a.ended'
  - id: b
    command: 'touch b.started; for i in $(seq 200); do [ -e a.started ] && break; sleep 0.05; done; [ -e a.started ] && touch b.ended'
  - id: c
    command: '[ -e a.ended ] && [ -e b.ended ]'
    depends_on: [a, b]
"#;

#[tokio::test]
async fn independent_checks_run_at_once_and_a_dependent_one_after_them() {
    let h = harness(CONCURRENT, &[]);
    let (output, _) = h.run(json!({})).await;
    let outcome: Vec<(&str, CheckConclusion)> = output
        .runs
        .iter()
        .map(|run| (run.id.as_str(), run.conclusion))
        .collect();
    assert_eq!(
        outcome,
        [
            ("a", CheckConclusion::Success),
            ("b", CheckConclusion::Success),
            ("c", CheckConclusion::Success)
        ],
        "{output:#?}"
    );
    assert_eq!(output.summary, "3 checks: 3 passed");
}

#[tokio::test]
async fn an_unchanged_tree_returns_the_cached_run_and_a_change_reruns() {
    let h = harness(
        "checks:\n  - id: count\n    command: 'echo ran >> .runs/log; wc -l < input.txt'\n  - id: narrow\n    command: 'echo ran >> .runs/narrow; cat src/a.txt'\n    inputs: ['src/**']\n",
        &[
            ("input.txt", "one\n"),
            ("src/a.txt", "a\n"),
            (".gitignore", ".runs/\n"),
            (".runs/.keep", ""),
        ],
    );
    let (first, _) = h.run(json!({})).await;
    assert!(first.runs.iter().all(|run| !run.cached));
    assert_eq!(first.conclusion, CheckConclusion::Success);

    let (second, text) = h.run(json!({})).await;
    assert!(second.runs.iter().all(|run| run.cached), "{second:#?}");
    assert_eq!(second.runs[0].started_at, first.runs[0].started_at);
    assert_eq!(h.read(".runs/log"), "ran\n", "a cached check does not run");
    assert!(text.contains("cached: nothing it reads changed"), "{text}");

    // A file the whole-tree check reads changes: it runs again; the narrow one (its inputs
    // are under src/) stays cached.
    h.write("input.txt", "one\ntwo\n");
    let (third, _) = h.run(json!({})).await;
    assert!(!third.runs[0].cached);
    assert!(
        third.runs[0].output.contains('2'),
        "{}",
        third.runs[0].output
    );
    assert!(third.runs[1].cached);
    assert_eq!(h.read(".runs/log"), "ran\nran\n");

    h.write("src/b.txt", "new file\n");
    let (fourth, _) = h.run(json!({"ids": ["narrow"]})).await;
    assert!(!fourth.runs[0].cached);
    assert_eq!(h.read(".runs/narrow"), "ran\nran\n");
}

#[tokio::test]
async fn a_junit_report_file_decides_and_places_the_failure() {
    let xml = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2" failures="1">
<testcase classname="tests.test_math" name="test_adds" file="tests/test_math.py" line="3"/>
<testcase classname="tests.test_math" name="test_subtracts" file="tests/test_math.py" line="7"><failure message="assert 1 == 3">tests/test_math.py:8: AssertionError</failure></testcase>
</testsuite></testsuites>"#;
    let h = harness(
        "checks:\n  - id: tests\n    command: 'mkdir -p build && cp report.xml build/junit.xml'\n    parser: junit\n    report: build/junit.xml\n",
        &[("report.xml", xml)],
    );
    let (output, text) = h.run(json!({})).await;
    let run = &output.runs[0];
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(
        run.conclusion,
        CheckConclusion::Failure,
        "a failing test fails the check whatever the exit code"
    );
    assert_eq!(run.summary, "1 of 2 tests failed");
    assert_eq!(run.annotations[0].path, "tests/test_math.py");
    assert_eq!(run.annotations[0].line, Some(7));
    assert!(
        text.contains(
            "error tests/test_math.py:7: `tests.test_math.test_subtracts` failed: assert 1 == 3"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn tsc_output_becomes_annotations_and_a_summary() {
    let h = harness(
        "checks:\n  - id: types\n    command: 'cat tsc.txt; exit 2'\n    parser: tsc\n    description: The web client type-checks.\n",
        &[(
            "tsc.txt",
            "bad.ts(2,7): error TS2322: Type 'string' is not assignable to type 'number'.\n",
        )],
    );
    let (output, _) = h.run(json!({})).await;
    let run = &output.runs[0];
    assert_eq!(run.summary, "1 error (exit code 2)");
    assert_eq!(
        run.description.as_deref(),
        Some("The web client type-checks.")
    );
    assert_eq!(run.annotations.len(), 1);
    assert_eq!(run.annotations[0].path, "bad.ts");
}

#[tokio::test]
async fn an_unknown_id_is_refused_naming_the_declared_ones() {
    let h = harness(
        "checks:\n  - id: test\n    command: 'true'\n  - id: lint\n    command: 'true'\n",
        &[],
    );
    let outcome = h.call(json!({"ids": ["tset"]})).await;
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ErrorCode::InvalidArguments);
    assert_eq!(
        error.message,
        "no check is declared with the id `tset`; the declared checks are `test`, `lint`"
    );
}

#[tokio::test]
async fn without_checks_the_call_says_where_to_declare_them() {
    let h = harness("", &[]);
    let outcome = h.call(json!({})).await;
    let error = outcome.error.unwrap();
    assert!(
        error.message.starts_with("no checks are declared for this session: declare them in the workspace's `.qilin/checks.yaml`"),
        "{}",
        error.message
    );
}

/// `x` and `y` each fail if `e` runs while they do; `e` fails if `x` or `y` runs while it does
/// (it runs longer, so an overlap is seen by one side or the other).
const EXCLUSIVE: &str = r#"checks:
  - id: x
    command: '[ ! -e e.running ] && touch x.running && sleep 0.3 && [ ! -e e.running ] && rm x.running'
  - id: e
    command: '[ ! -e x.running ] && [ ! -e y.running ] && touch e.running && sleep 0.6 && [ ! -e x.running ] && [ ! -e y.running ] && rm e.running'
    exclusive: true
  - id: y
    command: '[ ! -e e.running ] && touch y.running && sleep 0.3 && [ ! -e e.running ] && rm y.running'
"#;

#[tokio::test]
async fn an_exclusive_check_runs_with_no_other() {
    let h = harness(EXCLUSIVE, &[]);
    let (output, _) = h.run(json!({})).await;
    assert_eq!(output.conclusion, CheckConclusion::Success, "{output:#?}");
    let ids: Vec<&str> = output.runs.iter().map(|run| run.id.as_str()).collect();
    assert_eq!(
        ids,
        ["x", "e", "y"],
        "declaration order, whatever ran first"
    );
}

#[tokio::test]
async fn a_junit_report_left_by_an_earlier_run_proves_nothing() {
    let h = harness(
        "checks:\n  - id: tests\n    command: 'true'\n    parser: junit\n    report: build/junit.xml\n",
        &[(
            "build/junit.xml",
            "<testsuites><testsuite><testcase name=\"old\"/></testsuite></testsuites>",
        )],
    );
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(h.workspace.path().join("build/junit.xml"))
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let (output, _) = h.run(json!({})).await;
    let run = &output.runs[0];
    assert_eq!(run.conclusion, CheckConclusion::Failure);
    assert_eq!(
        run.summary,
        "no JUnit report to read at `build/junit.xml`: the file there was not written by this run (it is older)"
    );
}

#[tokio::test]
async fn interrupting_the_call_kills_the_running_checks() {
    let h = harness(
        "checks:\n  - id: slow\n    command: 'touch began; sleep 2; touch late'\n  - id: slower\n    command: 'sleep 3; touch later'\n",
        &[],
    );
    let outcome = h
        .call_cancelled_after(json!({}), Duration::from_millis(500))
        .await;
    assert_eq!(
        outcome.status,
        CallStatus::Interrupted,
        "{:?}",
        outcome.error
    );
    assert!(h.workspace.path().join("began").exists());
    // Past the time either command would have taken: neither finished.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(!h.workspace.path().join("late").exists());
    assert!(!h.workspace.path().join("later").exists());
}

#[tokio::test]
async fn a_long_output_is_capped_and_spilled_whole() {
    let h = harness(
        "checks:\n  - id: noisy\n    command: 'for i in $(seq 5000); do echo \"line $i of the output\"; done; exit 1'\n",
        &[],
    );
    let (output, text) = h.run(json!({})).await;
    let run = &output.runs[0];
    let spill = run.spill.as_ref().expect("the output was spilled");
    let whole = std::fs::read_to_string(&spill.path).unwrap();
    assert_eq!(whole.len() as u64, spill.total_bytes);
    assert!(whole.contains("line 2500 of the output\n"));
    assert!(run.output.len() < 9_000, "{} bytes shown", run.output.len());
    assert!(run.output.starts_with("line 1 of the output\n"));
    assert!(run.output.contains("line 5000 of the output"));
    assert_eq!(
        qilin_protocol::parse_spill_notice(&run.output).map(|notice| notice.path),
        Some(spill.path.clone())
    );
    assert!(text.contains(&spill.path), "the model is told where it is");
}
