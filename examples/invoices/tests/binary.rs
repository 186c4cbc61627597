//! The example application as a user runs it: `invoices` prints the offline session's events as
//! JSON lines, and `invoices check` passes over its own tools and workspace.

use serde_json::Value;
use std::process::Command;

fn invoices(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_invoices"))
        .args(args)
        .output()
        .expect("the invoices binary runs")
}

/// The events of the run whose `type` is `kind` and whose `toolName` is `tool`.
fn tool_events<'a>(events: &'a [Value], kind: &str, tool: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind && event["toolName"] == tool)
        .collect()
}

#[test]
fn the_offline_run_prints_the_session_s_events_as_json_lines() {
    let output = invoices(&[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect();
    // Every event once, in order, from the session's start to its turn's end.
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event["seq"], index as u64 + 1, "{event}");
    }
    assert_eq!(events[0]["type"], "session.started");
    assert_eq!(events[0]["agent"]["name"], "invoices");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn.finished", "{last}");
    assert_eq!(last["reason"], "completed", "{last}");

    // The dual-active tool, called directly, presented and recorded as the tool presents it.
    let starts = tool_events(&events, "tool.start", "create_invoice");
    let [start] = starts.as_slice() else {
        panic!("one create_invoice call: {starts:?}");
    };
    assert_eq!(start["caller"], "direct");
    assert_eq!(start["presentation"]["action"], "Create an invoice");
    assert_eq!(start["presentation"]["remark"], "Acme GmbH (2 lines, EUR)");
    let created = tool_events(&events, "tool.result", "create_invoice");
    assert_eq!(created[0]["status"], "ok", "{}", created[0]);
    assert_eq!(created[0]["output"]["number"], "INV-0001");
    assert_eq!(created[0]["output"]["total_cents"], 102_000);

    // The code-mode-only tool, called from Python, nested under the `run_code` call.
    let run_code = tool_events(&events, "tool.start", "run_code");
    let totals = tool_events(&events, "tool.start", "invoice_totals");
    assert_eq!(totals.len(), 1, "{totals:?}");
    assert_eq!(totals[0]["caller"], "code");
    assert_eq!(totals[0]["parentCallId"], run_code[0]["callId"]);
    let totalled = tool_events(&events, "tool.result", "invoice_totals");
    assert_eq!(totalled[0]["status"], "ok", "{}", totalled[0]);
    assert_eq!(
        totalled[0]["output"],
        serde_json::json!({
            "invoices": 1,
            "by_customer": [
                {"customer": "Acme GmbH", "currency": "EUR", "invoices": 1, "total_cents": 102000}
            ]
        })
    );
    // What the Python printed is what `run_code` gave the model.
    let ran = tool_events(&events, "tool.result", "run_code");
    assert!(
        ran[0]["content"].to_string().contains("Acme GmbH 1 1020"),
        "{}",
        ran[0]
    );
}

#[test]
fn invoices_check_passes_over_the_application_s_tools_and_workspace() {
    let output = invoices(&["check"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!stdout.contains("error"), "{stdout}");
}

#[test]
fn invoices_check_fails_an_agent_file_mounting_the_code_mode_only_tool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".qilin")).unwrap();
    let agent = dir.path().join("wrong.agent");
    std::fs::write(
        &agent,
        "name: wrong\ninstructions: Total the invoices.\ntools: [invoice_totals]\n",
    )
    .unwrap();
    let output = invoices(&["check", agent.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("Q112"), "{stdout}");
    assert!(stdout.contains("invoice_totals"), "{stdout}");
}

#[test]
fn an_unknown_command_is_refused_with_the_usage() {
    let output = invoices(&["bill"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("usage: invoices"));
}

#[test]
fn a_reader_that_goes_away_ends_the_run_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_invoices"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line's worth, then close the pipe.
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
