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

/// Each of `a` and `b` waits (up to 10 s) for the other's start file and passes only if the
/// other has started and not yet ended: both pass only when they ran at once. `c` depends on
/// both and passes only if both had ended when it started.
const CONCURRENT: &str = r#"checks:
  - id: a
    command: 'touch a.started; for i in $(seq 200); do [ -e b.started ] && break; sleep 0.05; done; [ -e b.started ] && [ ! -e b.ended ]; rc=$?; touch a.ended; exit $rc'
  - id: b
    command: 'touch b.started; for i in $(seq 200); do [ -e a.started ] && break; sleep 0.05; done; [ -e a.started ] && [ ! -e a.ended ]; rc=$?; touch b.ended; exit $rc'
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
