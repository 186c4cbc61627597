//! `terminal_start`, `terminal_send` and `terminal_kill`: real programs in a real
//! pseudo-terminal, in the session's sandbox, through the execution layer.

mod common;

use common::{appears, gone, harness, harness_with, named_sleep, process_name};
use qilin_protocol::{Detail, ErrorCode, EventBody};
use qilin_tool::Services;
use qilin_tools::TerminalTable;
use serde_json::json;

#[tokio::test]
async fn a_python_repl_keeps_a_variable_between_sends() {
    let mut h = harness();
    let (started, text) = h
        .ok(
            "terminal_start",
            json!({"command": "python3 -q", "wait_for": ">>> $"}),
        )
        .await;
    assert_eq!(started["terminal_id"], "term-1");
    assert_eq!(started["state"], "running");
    assert_eq!(started["matched"], true, "{text}");
    assert!(text.starts_with("term-1 (python3 -q): running\n"), "{text}");
    let (defined, _) = h
        .ok(
            "terminal_send",
            json!({"terminal_id": "term-1", "text": "answer = 6 * 7", "keys": ["Enter"], "wait_for": ">>> $"}),
        )
        .await;
    assert_eq!(defined["matched"], true, "{defined}");
    let (read_back, text) = h
        .ok(
            "terminal_send",
            json!({"terminal_id": "term-1", "text": "print(f'answer={answer}')\r", "wait_for": ">>> $"}),
        )
        .await;
    let output = read_back["output"].as_str().unwrap();
    assert!(output.contains("answer=42\n"), "{output}");
    assert!(
        !output.contains('\x1b'),
        "escape sequences are stripped: {output:?}"
    );
    assert!(output.ends_with(">>> "), "the prompt comes last: {text}");
    // Nothing typed: only new output, here none.
    let (polled, text) = h
        .ok(
            "terminal_send",
            json!({"terminal_id": "term-1", "settle_ms": 50}),
        )
        .await;
    assert_eq!(polled["output"], "");
    assert!(text.contains("(no new output)"), "{text}");
    let (ended, _) = h
        .ok(
            "terminal_send",
            json!({"terminal_id": "term-1", "keys": ["Ctrl-D"]}),
        )
        .await;
    assert_eq!(ended["state"], "exited", "{ended}");
    assert_eq!(ended["exit_code"], 0);

    let events = h.drain();
    let sent = events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolStart(start) if start.tool_name == "terminal_send" => {
                Some(start.presentation.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(sent.action, "Type in terminal");
    assert!(
        sent.remark.contains("term-1") && sent.remark.contains("Enter"),
        "{}",
        sent.remark
    );
    let progress: String = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolProgress(progress) => Some(progress.text.as_str()),
            _ => None,
        })
        .collect();
    assert!(progress.contains("answer=42"), "live output: {progress:?}");
    let raw = read_back["raw"].as_str().unwrap();
    assert!(
        raw.contains("answer=42\r\n"),
        "the raw output is kept for a client: {raw:?}"
    );
    let detail = events.iter().find_map(|event| match &event.body {
        EventBody::ToolResult(result) if result.tool_name == "terminal_send" => {
            result.detail.clone()
        }
        _ => None,
    });
    assert!(
        matches!(detail, Some(Detail::Text { .. })),
        "a running program's detail is its text: {detail:?}"
    );
}

#[tokio::test]
async fn ctrl_c_interrupts_the_running_program_and_the_shell_answers_again() {
    let h = harness();
    h.ok(
        "terminal_start",
        json!({"command": "bash --norc --noprofile -i", "settle_ms": 500}),
    )
    .await;
    let name = process_name("terminal-ctrl-c");
    let command = named_sleep(&name);
    h.ok(
        "terminal_send",
        json!({"terminal_id": "term-1", "text": command, "keys": ["Enter"], "settle_ms": 200}),
    )
    .await;
    assert!(appears(&name).await);
    let (after, _) = h
        .ok(
            "terminal_send",
            json!({"terminal_id": "term-1", "keys": ["Ctrl-C"], "wait_for": "\\^C"}),
        )
        .await;
    assert_eq!(after["matched"], true, "{after}");
    assert_eq!(after["state"], "running", "the shell outlived the Ctrl-C");
    assert!(gone(&name).await, "Ctrl-C ended the program");
    let (echo, _) = h
        .ok(
            "terminal_send",
            json!({"terminal_id": "term-1", "text": "echo still-here\r", "wait_for": "^still-here"}),
        )
        .await;
    assert_eq!(echo["matched"], true, "{echo}");
}

#[tokio::test]
async fn terminal_kill_and_the_session_end_every_terminal() {
    let h = harness();
    let first = process_name("terminal-kill");
    h.ok(
        "terminal_start",
        json!({"command": format!("{} & echo ready; wait", named_sleep(&first)), "wait_for": "ready"}),
    )
    .await;
    assert!(appears(&first).await);
    let (killed, text) = h
        .ok("terminal_kill", json!({"terminal_id": "term-1"}))
        .await;
    assert_eq!(killed["state"], "killed", "{text}");
    assert!(gone(&first).await, "terminal_kill left the program running");
    let message = h
        .err(
            "terminal_send",
            json!({"terminal_id": "term-1", "text": "x"}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(message.contains("has ended"), "{message}");
    let message = h
        .err(
            "terminal_send",
            json!({"terminal_id": "term-9"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`term-9`") && message.contains("term-1"),
        "{message}"
    );

    let second = process_name("terminal-table");
    h.ok(
        "terminal_start",
        json!({"command": named_sleep(&second), "settle_ms": 50}),
    )
    .await;
    assert!(appears(&second).await);
    let table = h
        .executor
        .session()
        .services()
        .get::<TerminalTable>()
        .unwrap();
    assert_eq!(table.end_all(), 1);
    assert!(gone(&second).await, "a terminal outlived end_all");

    let third = process_name("terminal-drop");
    h.ok(
        "terminal_start",
        json!({"command": named_sleep(&third), "settle_ms": 50}),
    )
    .await;
    assert!(appears(&third).await);
    drop(table);
    drop(h);
    assert!(gone(&third).await, "a terminal outlived its session");
}

#[tokio::test]
async fn bad_arguments_are_refused_clearly() {
    let h = harness();
    let message = h
        .err(
            "terminal_start",
            json!({"command": "python3", "wait_for": "(unclosed"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`wait_for` is not a valid regular expression"),
        "{message}"
    );
    h.ok("terminal_start", json!({"command": "cat", "settle_ms": 50}))
        .await;
    let message = h
        .err(
            "terminal_send",
            json!({"terminal_id": "term-1", "keys": ["Hyper-X"]}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("`Hyper-X` is not a key"), "{message}");
    let bare = harness_with(Services::default());
    let message = bare
        .err(
            "terminal_start",
            json!({"command": "cat"}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(message.contains("no terminal table"), "{message}");
}

#[tokio::test]
async fn a_screenful_of_redrawn_output_reads_as_its_final_lines() {
    let h = harness();
    let (result, _) = h
        .ok(
            "terminal_start",
            json!({
                "command": "printf '\\033[1;32mgreen\\033[0m\\n'; for i in 1 2 3; do printf '\\r%s%%' $((i*33)); done; printf '\\rdone\\033[K\\n'",
                "timeout_secs": 5
            }),
        )
        .await;
    assert_eq!(result["output"], "green\ndone\n", "{result}");
    assert_eq!(result["state"], "exited");
    assert_eq!(result["exit_code"], 0);
}

#[tokio::test]
async fn with_the_sandbox_off_a_terminal_still_gets_ctrl_c_and_ends_with_the_session() {
    let sandbox = qilin_sandbox::Sandbox::start(
        qilin_sandbox::SandboxSettings {
            mode: qilin_sandbox::SandboxMode::Off,
            ..Default::default()
        },
        common::sandbox_helper(),
    )
    .unwrap();
    let h = common::harness_with_sandbox(sandbox);
    let name = process_name("terminal-off");
    let (started, _) = h
        .ok(
            "terminal_start",
            json!({"command": format!("tty; {}", named_sleep(&name)), "settle_ms": 200}),
        )
        .await;
    assert!(
        started["output"].as_str().unwrap().contains("/dev/pts/"),
        "{started}"
    );
    assert!(appears(&name).await);
    let (after, _) = h
        .ok(
            "terminal_send",
            json!({"terminal_id": "term-1", "keys": ["Ctrl-C"], "timeout_secs": 5}),
        )
        .await;
    // As in any terminal, Ctrl-C reaches the whole foreground group: `bash -c` ends too.
    assert_eq!(after["state"], "killed", "{after}");
    assert_eq!(after["signal"], "SIGINT", "{after}");
    assert!(gone(&name).await);

    let second = process_name("terminal-off-drop");
    h.ok(
        "terminal_start",
        json!({"command": named_sleep(&second), "settle_ms": 50}),
    )
    .await;
    assert!(appears(&second).await);
    drop(h);
    assert!(gone(&second).await, "a terminal outlived its session");
}

#[tokio::test]
async fn terminal_list_shows_terminals_and_persistent_shells() {
    let h = harness();
    let (empty, text) = h.ok("terminal_list", json!({})).await;
    assert_eq!(empty["terminals"], json!([]));
    assert!(
        text.contains("No terminals.") && text.contains("No persistent shells."),
        "{text}"
    );
    h.ok("terminal_start", json!({"command": "cat", "settle_ms": 50}))
        .await;
    h.ok(
        "bash",
        json!({"command": "cd /tmp\necho more", "shell": "build"}),
    )
    .await;
    let (listing, text) = h.ok("terminal_list", json!({})).await;
    assert_eq!(listing["terminals"][0]["terminal_id"], "term-1");
    assert_eq!(listing["terminals"][0]["state"], "running");
    assert_eq!(listing["shells"][0]["shell"], "build");
    assert_eq!(listing["shells"][0]["tool"], "bash");
    assert_eq!(listing["shells"][0]["calls"], 1);
    assert!(text.contains("term-1 (cat): running"), "{text}");
    assert!(
        text.contains("bash shell `build`: idle, 1 calls, last: cd /tmp"),
        "{text}"
    );
}
