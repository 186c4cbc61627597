//! `qilin demo` and `qilin run` end to end: the real binary, the scripted model, the real
//! tools, code mode in worker processes.

use qilin_protocol::{CallStatus, CallerKind, Detail, Event, EventBody, FinishReason};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

fn qilin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("QILIN_CONFIG", "/nonexistent/qilin-config.toml")
        .env_remove("QILIN_MODEL")
        .output()
        .expect("the qilin binary runs")
}

fn events_of(stdout: &[u8]) -> Vec<Event> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Every `tool.start` has exactly one `tool.result` and the log has no gaps.
fn assert_consistent(events: &[Event]) {
    let mut open: HashMap<&str, usize> = HashMap::new();
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event.seq, i as u64 + 1);
        match &event.body {
            EventBody::ToolStart(start) => *open.entry(start.call_id.as_str()).or_default() += 1,
            EventBody::ToolResult(result) => {
                let count = open
                    .get_mut(result.call_id.as_str())
                    .expect("a result has its start");
                *count -= 1;
            }
            _ => {}
        }
    }
    assert!(
        open.values().all(|&n| n == 0),
        "every start has one result: {open:?}"
    );
}

#[test]
fn the_demo_shows_direct_calls_nested_code_calls_a_diff_and_a_failing_command() {
    let output = qilin(&["demo", "--fast", "--json"]);
    assert!(
        output.status.code() == Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events_of(&output.stdout);
    assert_consistent(&events);

    let results: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect();
    let mut direct: Vec<&str> = results
        .iter()
        .filter(|r| r.caller == CallerKind::Direct)
        .map(|r| r.tool_name.as_str())
        .collect();
    // The two calls of the first step run concurrently and may end in either order.
    direct[..2].sort_unstable();
    assert_eq!(
        direct,
        [
            "glob",
            "grep",
            "run_code",
            "read",
            "edit",
            "bash",
            "bash",
            "bash",
            "terminal_start",
            "terminal_send"
        ]
    );
    let run_code = results.iter().find(|r| r.tool_name == "run_code").unwrap();
    assert_eq!(run_code.status, CallStatus::Ok, "{:?}", run_code.content);
    let nested: Vec<&str> = results
        .iter()
        .filter(|r| r.parent_call_id.as_deref() == Some(run_code.call_id.as_str()))
        .map(|r| r.tool_name.as_str())
        .collect();
    assert_eq!(nested, ["grep", "table_query"]);
    let edit = results.iter().find(|r| r.tool_name == "edit").unwrap();
    assert!(
        matches!(
            edit.detail,
            Some(Detail::Diff {
                added: 1,
                removed: 1,
                ..
            })
        ),
        "{:?}",
        edit.detail
    );
    let bash = results.iter().find(|r| r.tool_name == "bash").unwrap();
    assert!(
        matches!(
            bash.detail,
            Some(Detail::Shell {
                exit_code: Some(1),
                ..
            })
        ),
        "{:?}",
        bash.detail
    );
    let persistent = results
        .iter()
        .filter(|r| r.tool_name == "bash")
        .nth(2)
        .unwrap();
    let said = format!("{:?}", persistent.content);
    assert!(
        said.contains("in src: ") && said.contains("lines in report.py"),
        "the persistent shell kept cd and the export: {said}"
    );
    let sent = results
        .iter()
        .find(|r| r.tool_name == "terminal_send")
        .unwrap();
    let said = format!("{:?}", sent.content);
    assert!(said.contains("45"), "the terminal ran Python: {said}");
    let EventBody::TurnFinished { reason, .. } = &events.last().unwrap().body else {
        panic!()
    };
    assert_eq!(*reason, FinishReason::Completed);
}

#[test]
fn the_demo_renders_as_plain_lines_when_piped() {
    let output = qilin(&["demo", "--fast"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!text.contains('\x1b'), "no escape codes when piped: {text}");
    assert!(text.contains("▸ Run code"), "{text}");
    assert!(text.contains("  ✓ Query table data/sales.csv"), "{text}");
    assert!(text.contains("+1 −1 src/report.py"), "{text}");
    assert!(text.contains("✗ Run command sh scripts/check.sh"), "{text}");
    assert!(text.contains("exit code 1"), "{text}");
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn run_records_the_session_and_reports_a_failed_turn_by_its_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    write(&workspace.join(".qilin/skills/.keep"), "");
    write(&workspace.join("notes.txt"), "alpha\nbeta\n");
    write(
        &workspace.join("reader.agent"),
        "name: reader\ninstructions: Read files.\ntools: [read]\nskills:\n  available: []\nlimits:\n  max_steps: 2\n",
    );
    write(
        &workspace.join("loop.yaml"),
        "turns:\n  - calls: [{tool: read, args: {path: notes.txt}}]\n  - calls: [{tool: read, args: {path: ../outside.txt}}]\n  - say: never\n",
    );
    let agent = workspace.join("reader.agent");
    let model = format!("scripted:{}", workspace.join("loop.yaml").display());
    let output = qilin(&[
        "run",
        "--agent",
        agent.to_str().unwrap(),
        "--workspace",
        agent.parent().unwrap().to_str().unwrap(),
        "--model",
        &model,
        "--json",
        "read it",
    ]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the step limit ends the turn as a failure"
    );
    let events = events_of(&output.stdout);
    assert_consistent(&events);
    let EventBody::TurnFinished { reason, .. } = &events.last().unwrap().body else {
        panic!()
    };
    assert_eq!(*reason, FinishReason::MaxSteps);
    let escaped = events.iter().find_map(|e| match &e.body {
        EventBody::ToolResult(r) if r.status == CallStatus::Error => Some(r),
        _ => None,
    });
    assert!(
        escaped.is_some(),
        "the escape out of the workspace is refused"
    );

    let listed = qilin(&[
        "sessions",
        "list",
        "--json",
        "--workspace",
        workspace.to_str().unwrap(),
    ]);
    let sessions: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["title"], "read it");
    assert_eq!(sessions[0]["turns"], 1);
    let id = sessions[0]["id"].as_str().unwrap();
    let exported = qilin(&[
        "sessions",
        "export",
        id,
        "--workspace",
        workspace.to_str().unwrap(),
    ]);
    assert_eq!(
        events_of(&exported.stdout),
        events,
        "the session store holds exactly what was printed"
    );

    // What the session recorded is searchable: as JSON, as a table, and a query with no
    // word is a clear error.
    let ws = workspace.to_str().unwrap();
    let searched = qilin(&["sessions", "search", "ALPHA", "--json", "--workspace", ws]);
    assert!(searched.status.success(), "{searched:?}");
    let hits: serde_json::Value = serde_json::from_slice(&searched.stdout).unwrap();
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty(), "{hits:?}");
    assert!(hits.iter().all(|hit| hit["session"] == id), "{hits:?}");
    let result = hits.iter().find(|hit| hit["field"] == "result").unwrap();
    assert_eq!(result["tool"], "read");
    assert_eq!(result["turn"], 1);
    assert!(
        result["snippet"].as_str().unwrap().contains("«alpha»"),
        "{result}"
    );
    let table = qilin(&["sessions", "search", "alpha", "--workspace", ws]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.starts_with("session"), "{table}");
    assert!(table.contains("«alpha»") && table.contains(id), "{table}");
    let refused = qilin(&["sessions", "search", "* (", "--workspace", ws]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("no word to search for"), "{stderr}");
}

#[test]
fn run_without_a_model_says_how_to_name_one() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("a.agent");
    write(&agent, "name: a\ninstructions: Hi.\ntools: [read]\n");
    let output = qilin(&[
        "run",
        "--agent",
        agent.to_str().unwrap(),
        "--workspace",
        dir.path().to_str().unwrap(),
        "hello",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("names no model") && stderr.contains("--model openai:NAME"),
        "{stderr}"
    );
}

#[test]
fn run_reads_the_prompt_from_piped_input_when_none_is_given() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    write(
        &workspace.join("a.agent"),
        "name: a\ninstructions: Hi.\ntools: [read]\nskills:\n  available: []\n",
    );
    write(
        &workspace.join("s.yaml"),
        "turns:\n  - say: \"Hello back.\"\n",
    );
    let model = format!("scripted:{}", workspace.join("s.yaml").display());
    let agent = workspace.join("a.agent");
    let mut child = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args([
            "run",
            "--agent",
            agent.to_str().unwrap(),
            "--workspace",
            agent.parent().unwrap().to_str().unwrap(),
            "--model",
            &model,
            "--json",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"  say hello\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let events = events_of(&output.stdout);
    let EventBody::TurnStarted { prompt, .. } = &events[1].body else {
        panic!("{events:?}")
    };
    assert_eq!(prompt, "say hello");
}

#[test]
fn a_session_continues_in_a_later_run_with_the_same_history() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    write(
        &workspace.join("a.agent"),
        "name: a\ninstructions: Hi.\ntools: [read]\nskills:\n  available: []\n",
    );
    write(
        &workspace.join("s.yaml"),
        "turns:\n  - say: \"First answer.\"\n  - say: \"Second answer, after the first.\"\n",
    );
    let model = format!("scripted:{}", workspace.join("s.yaml").display());
    let agent = workspace.join("a.agent");
    let first = qilin(&[
        "run",
        "--agent",
        agent.to_str().unwrap(),
        "--workspace",
        agent.parent().unwrap().to_str().unwrap(),
        "--model",
        &model,
        "--json",
        "one",
    ]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let second = qilin(&[
        "run",
        "--continue",
        "--workspace",
        workspace.to_str().unwrap(),
        "--json",
        "two",
    ]);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let events = events_of(&second.stdout);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.body, EventBody::SessionStarted(_))),
        "only the new turn is printed"
    );
    let text: String = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::StepTextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Second answer, after the first.");
    let EventBody::TurnStarted { turn_id, .. } = &events[0].body else {
        panic!("{events:?}")
    };
    assert_eq!(turn_id, "turn-2");
    let listed = qilin(&[
        "sessions",
        "list",
        "--json",
        "--workspace",
        workspace.to_str().unwrap(),
    ]);
    let sessions: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 1);
    assert_eq!(sessions[0]["turns"], 2);
}

/// `qilin` alone, in a folder, with no agent file and no configuration file.
fn qilin_in(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("QILIN_CONFIG", dir.join("no-config.toml"))
        .env_remove("QILIN_MODEL")
        .envs(envs.iter().copied())
        .output()
        .expect("the qilin binary runs")
}

#[test]
fn qilin_with_a_prompt_runs_the_built_in_coder_in_the_current_folder() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    write(
        &repo.join("AGENTS.md"),
        "Run `make check` before you finish.\n",
    );
    let script = dir.path().join("s.yaml");
    write(&script, "turns:\n  - say: \"Hello from the coder.\"\n");
    let model = format!("scripted:{}", script.display());

    let output = qilin_in(
        &repo,
        &["--json", "fix the failing test"],
        &[("QILIN_MODEL", &model)],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events_of(&output.stdout);
    let EventBody::SessionStarted(started) = &events[0].body else {
        panic!("{:?}", events[0]);
    };
    assert_eq!(started.agent.name, "coder");
    assert!(started.agent.builtin);
    assert_eq!(
        Path::new(&started.workspace),
        repo.canonicalize().unwrap(),
        "the workspace is the current folder"
    );
    assert!(repo.join(".qilin/qilin.db").exists());

    // The config file names the model when the environment does not, and prices it.
    let escaped = model.replace('\\', "\\\\");
    write(
        &dir.path().join("config.toml"),
        &format!(
            "model = \"{escaped}\"\n[prices.\"{}\"]\ninput = 3.0\noutput = 15.0\n",
            escaped.replacen(':', "/", 1)
        ),
    );
    let config = dir.path().join("config.toml");
    let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["fix it"])
        .current_dir(&repo)
        .env("NO_COLOR", "1")
        .env("QILIN_CONFIG", &config)
        .env_remove("QILIN_MODEL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Hello from the coder."), "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        regex::Regex::new(r"tokens in · [\d,]+ out · \$\d+\.\d{4}")
            .unwrap()
            .is_match(&stderr),
        "the turn's summary shows its cost:\n{stderr}"
    );
    let shown = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["config"])
        .env("QILIN_CONFIG", &config)
        .env_remove("QILIN_MODEL")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains(&format!("model: {model} (from ")), "{shown}");
    assert!(
        shown.contains("input 3 · output 15"),
        "the prices show:\n{shown}"
    );
}

#[test]
fn a_first_run_without_a_model_says_how_to_set_one_in_three_lines() {
    let dir = tempfile::tempdir().unwrap();
    let output = qilin_in(dir.path(), &["hello"], &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 3, "{stderr}");
    assert!(stderr.contains("no model is configured"), "{stderr}");
    assert!(stderr.contains("no-config.toml"), "{stderr}");
    assert!(stderr.contains("qilin demo"), "{stderr}");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");

    let bad = dir.path().join("no-config.toml");
    write(&bad, "modle = 'x'\n");
    let output = qilin_in(dir.path(), &["hello"], &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not a valid Qilin configuration") && stderr.contains("modle"),
        "{stderr}"
    );
}

#[test]
fn closed_or_full_output_and_bad_arguments_end_with_one_clear_line() {
    // A closed pipe ends quietly; a full disk says so once; neither panics.
    let mut child = Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(["tools", "list"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
    if let Ok(full) = std::fs::File::options().write(true).open("/dev/full") {
        let output = Command::new(env!("CARGO_BIN_EXE_qilin"))
            .args(["tools", "list"])
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    }

    let output = qilin(&["skills", "list", "--workspace", "/nonexistent/qilin"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("/nonexistent/qilin is not a folder"),
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    let output = qilin_in(
        dir.path(),
        &["   "],
        &[("QILIN_MODEL", "scripted:none.yaml")],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the prompt is empty"), "{stderr}");
}

#[test]
fn the_session_store_is_kept_out_of_git_and_skills_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.yaml");
    write(&script, "turns:\n  - say: \"Hi.\"\n");
    let model = format!("scripted:{}", script.display());
    let output = qilin_in(dir.path(), &["hello"], &[("QILIN_MODEL", &model)]);
    assert_eq!(output.status.code(), Some(0));
    let ignore = std::fs::read_to_string(dir.path().join(".qilin/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "qilin.db*"), "{ignore}");
    assert!(ignore.lines().any(|l| l == "sessions/"), "{ignore}");
    assert!(!ignore.contains("skills"), "{ignore}");
}

#[test]
fn a_piped_turn_that_stops_early_says_so_on_standard_error() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    write(&workspace.join("notes.txt"), "alpha\n");
    write(
        &workspace.join("reader.agent"),
        "name: reader\ninstructions: Read files.\ntools: [read]\nskills:\n  available: []\nlimits:\n  max_steps: 1\n",
    );
    write(
        &workspace.join("loop.yaml"),
        "turns:\n  - say: \"Reading.\"\n    calls: [{tool: read, args: {path: notes.txt}}]\n  - say: never\n",
    );
    let model = format!("scripted:{}", workspace.join("loop.yaml").display());
    let agent = workspace.join("reader.agent");
    let output = qilin_in(
        workspace,
        &[
            "--agent",
            agent.to_str().unwrap(),
            "--model",
            &model,
            "read it",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.contains("Reading."), "{stdout}");
    assert!(!stdout.contains("step limit"), "{stdout}");
    assert!(
        stderr.contains("stopped: the agent reached its step limit") && stderr.contains("1 step"),
        "{stderr}"
    );
}

#[test]
fn sessions_list_json_links_a_child_to_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    write(&workspace.join(".qilin/skills/.keep"), "");
    write(
        &workspace.join("lead.agent"),
        "name: lead\ninstructions: Delegate.\ntools: [agent, read]\nskills:\n  available: []\n",
    );
    write(
        &workspace.join("worker.yaml"),
        "turns:\n  - say: worker done\n",
    );
    write(
        &workspace.join("worker.agent"),
        &format!(
            "name: worker\ninstructions: Work.\ntools: [read]\nskills:\n  available: []\nmodel: scripted:{}\n",
            workspace.join("worker.yaml").display()
        ),
    );
    write(
        &workspace.join("lead.yaml"),
        "turns:\n  - calls: [{tool: agent, args: {agent: worker, prompt: Work., description: Work}}]\n  - say: done\n",
    );
    let ws = workspace.to_str().unwrap();
    let model = format!("scripted:{}", workspace.join("lead.yaml").display());
    let agent = workspace.join("lead.agent");
    let output = qilin(&[
        "run",
        "--agent",
        agent.to_str().unwrap(),
        "--workspace",
        ws,
        "--model",
        &model,
        "--json",
        "delegate",
    ]);
    assert!(output.status.success(), "{output:?}");
    let events = events_of(&output.stdout);
    let call = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::AgentStarted(started) => Some(started.clone()),
            _ => None,
        })
        .expect("agent.started");
    let listed = qilin(&["sessions", "list", "--json", "--workspace", ws]);
    let sessions: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let sessions = sessions.as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let child = sessions
        .iter()
        .find(|s| s["id"] == call.child_session_id.as_str())
        .expect("the child is listed");
    let lead = sessions
        .iter()
        .find(|s| s["id"] != call.child_session_id.as_str())
        .unwrap();
    assert_eq!(child["parentCallId"], call.call_id.as_str());
    assert_eq!(child["parentSessionId"], lead["id"]);
    assert_eq!(lead["parentSessionId"], serde_json::Value::Null);
    assert_eq!(lead["parentCallId"], serde_json::Value::Null);
}
