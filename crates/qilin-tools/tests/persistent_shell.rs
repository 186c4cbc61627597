//! `bash` with `persistent: true`: a real bash kept for the session, in its sandbox, through
//! the execution layer.

mod common;

use common::{Harness, appears, gone, harness, harness_with, named_sleep, process_name};
use qilin_protocol::{CallStatus, Detail, ErrorCode, EventBody};
use qilin_tool::Services;
use qilin_tools::ShellTable;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Runs `command` in the persistent shell `shell`; returns the structured result and text.
async fn shell(h: &Harness, shell: &str, command: &str) -> (Value, String) {
    h.ok(
        "bash",
        json!({"command": command, "persistent": true, "shell": shell}),
    )
    .await
}

#[tokio::test]
async fn state_carries_over_between_calls() {
    let h = harness();
    h.write("src/deep/file.txt", "hi\n");
    let (first, text) = shell(&h, "default", "cd src/deep && export GREETING=hello").await;
    assert_eq!(first["kind"], "persistent");
    assert_eq!(first["exit_code"], 0);
    assert_eq!(first["cwd"], "src/deep");
    assert_eq!(first["reset"], Value::Null);
    assert_eq!(first["new_shell"], true);
    assert!(
        text.contains("new shell `default`") && text.contains("cwd src/deep"),
        "{text}"
    );
    shell(
        &h,
        "default",
        "greet() { echo \"$GREETING, $1\"; }; set -o pipefail",
    )
    .await;
    let (second, text) = shell(&h, "default", "cat file.txt; greet world; pwd").await;
    assert_eq!(second["new_shell"], false);
    assert!(text.contains(", shell `default`, cwd src/deep]"), "{text}");
    let output = second["output"].as_str().unwrap();
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines[0], "hi");
    assert_eq!(lines[1], "hello, world");
    assert!(lines[2].ends_with("/src/deep"), "{output}");
    let (options, _) = shell(&h, "default", "false | true; echo $?").await;
    assert_eq!(options["output"], "1\n", "pipefail stayed set");

    // Another name is another shell; a one-off `bash` call is fresh as before.
    let (other, _) = shell(&h, "other", "pwd; echo \"[$GREETING]\"").await;
    assert_eq!(other["cwd"], ".");
    assert!(other["output"].as_str().unwrap().ends_with("[]\n"));
    let (fresh, _) = h
        .ok("bash", json!({"command": "echo \"[$GREETING]\""}))
        .await;
    assert_eq!(fresh["kind"], "finished");
    assert_eq!(fresh["output"], "[]\n");
}

#[tokio::test]
async fn output_and_exit_status_are_exact_even_with_marker_like_text() {
    let h = harness();
    let (result, _) = shell(
        &h,
        "default",
        "printf 'no newline'; printf '__qilin_end_0:0:/tmp:0_qilin_end__\\n' >&2; (exit 7)",
    )
    .await;
    assert_eq!(
        result["output"],
        "no newline__qilin_end_0:0:/tmp:0_qilin_end__\n"
    );
    assert_eq!(result["exit_code"], 7);
    // The script is sourced, so `exit` code of the last command and `return` both count.
    let (result, _) = shell(&h, "default", "echo a; false").await;
    assert_eq!(result["output"], "a\n");
    assert_eq!(result["exit_code"], 1);
    let (result, _) = shell(&h, "default", "read line; echo \"[$line]\"").await;
    assert_eq!(result["output"], "[]\n", "the command's stdin is closed");
    assert_eq!(result["exit_code"], 0);
    let (result, text) = shell(&h, "default", "true").await;
    assert_eq!(result["output"], "");
    assert!(text.starts_with("(no output)\n[exit code 0"), "{text}");
}

#[tokio::test]
async fn reset_starts_afresh_and_says_so() {
    let h = harness();
    shell(&h, "default", "mkdir -p sub && cd sub && X=1").await;
    let (result, text) = h
        .ok(
            "bash",
            json!({"command": "pwd; echo \"[$X]\"", "reset": true}),
        )
        .await;
    assert_eq!(result["cwd"], ".");
    assert!(result["output"].as_str().unwrap().ends_with("[]\n"));
    assert!(
        result["reset"]
            .as_str()
            .unwrap()
            .contains("asked for a fresh shell")
    );
    assert!(
        text.starts_with("[shell `default` was started afresh"),
        "{text}"
    );

    // A command that exits the shell ends it; the next call says the shell was new.
    let (result, text) = shell(&h, "default", "echo bye; exit 3").await;
    assert_eq!(result["output"], "bye\n");
    assert!(
        result["shell_ended"]
            .as_str()
            .unwrap()
            .contains("exited with status 3"),
        "{result}"
    );
    assert!(
        text.contains("the next persistent call starts a fresh one"),
        "{text}"
    );
    let (result, _) = shell(&h, "default", "echo again").await;
    assert_eq!(result["output"], "again\n");
    assert!(
        result["reset"]
            .as_str()
            .unwrap()
            .contains("exited with status 3")
    );
}

#[tokio::test]
async fn a_timeout_interrupts_the_command_and_keeps_the_shell() {
    let h = harness();
    let name = process_name("persistent-timeout");
    shell(&h, "default", "cd / && V=kept").await;
    let command = format!("echo started; {}; echo not-reached", named_sleep(&name));
    let (result, text) = h
        .ok(
            "bash",
            json!({"command": command, "persistent": true, "timeout_secs": 1}),
        )
        .await;
    assert_eq!(result["timed_out"], true, "{result}");
    assert_eq!(result["shell_ended"], Value::Null, "{result}");
    assert_eq!(result["output"], "started\n");
    assert!(text.contains("shell `default` is kept"), "{text}");
    assert!(gone(&name).await, "the timed-out command survived");
    let (after, _) = shell(&h, "default", "echo \"$V $PWD\"").await;
    assert_eq!(after["output"], "kept /\n");
    assert_eq!(after["reset"], Value::Null);
}

#[tokio::test]
async fn an_interrupt_stops_the_command_not_the_shell() {
    let h = harness();
    let name = process_name("persistent-cancel");
    shell(&h, "default", "W=still-here").await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watched = name.clone();
    tokio::spawn(async move {
        assert!(appears(&watched).await);
        trigger.cancel();
    });
    let command = format!("echo before; {}", named_sleep(&name));
    let outcome = h
        .call_cancellable(
            "bash",
            json!({"command": command, "persistent": true}),
            cancel,
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Interrupted);
    let said = common::text(&outcome.content);
    assert!(
        said.contains("is kept") && said.contains("before"),
        "{said}"
    );
    assert!(gone(&name).await, "the interrupted command survived");
    let (after, _) = shell(&h, "default", "echo $W").await;
    assert_eq!(after["output"], "still-here\n");
    assert_eq!(after["reset"], Value::Null);
}

#[tokio::test]
async fn output_from_processes_left_running_comes_with_the_next_call() {
    let h = harness();
    shell(&h, "default", "(sleep 0.3; echo from-the-background) &").await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let (result, text) = shell(&h, "default", "echo mine").await;
    assert_eq!(result["output"], "mine\n");
    assert_eq!(result["earlier_output"], "from-the-background\n");
    assert!(text.contains("still running in shell `default`"), "{text}");
}

#[tokio::test]
async fn shells_die_with_the_session_and_the_table() {
    let h = harness();
    let name = process_name("persistent-session");
    shell(&h, "default", &format!("{} &", named_sleep(&name))).await;
    assert!(appears(&name).await);
    let table = h.executor.session().services().get::<ShellTable>().unwrap();
    assert_eq!(table.list().len(), 1);
    assert_eq!(table.end_all(), 1);
    assert!(gone(&name).await, "a process of the shell outlived end_all");
    let (result, _) = shell(&h, "default", "echo fresh").await;
    assert!(
        result["reset"]
            .as_str()
            .unwrap()
            .contains("killed by SIGKILL")
    );

    let second = process_name("persistent-drop");
    shell(&h, "default", &format!("{} &", named_sleep(&second))).await;
    assert!(appears(&second).await);
    drop(table);
    drop(h);
    assert!(gone(&second).await, "a shell outlived its session");
}

#[tokio::test]
async fn bad_arguments_and_a_missing_table_are_refused_clearly() {
    let h = harness();
    let message = h
        .err(
            "bash",
            json!({"command": "ls", "persistent": true, "background": true}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("exclude each other"), "{message}");
    let message = h
        .err(
            "bash",
            json!({"command": "ls", "shell": "no spaces"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`no spaces` is not a shell name"),
        "{message}"
    );
    let message = h
        .err(
            "bash",
            json!({"command": " ", "persistent": true}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("only with `reset: true`"), "{message}");

    let mut services = Services::default();
    services.insert(std::sync::Arc::new(
        qilin_sandbox::Sandbox::start(
            qilin_sandbox::SandboxSettings {
                mode: qilin_sandbox::SandboxMode::Off,
                ..Default::default()
            },
            common::sandbox_helper(),
        )
        .unwrap(),
    ));
    let bare = harness_with(services);
    let message = bare
        .err(
            "bash",
            json!({"command": "ls", "persistent": true}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(message.contains("no shell table"), "{message}");
}

#[tokio::test]
async fn live_output_and_presentation_go_through_the_execution_layer() {
    let mut h = harness();
    shell(&h, "build", "echo one; echo two").await;
    let events = h.drain();
    let start = events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolStart(start) => Some(start.presentation.clone()),
            _ => None,
        })
        .expect("a tool.start event");
    assert_eq!(start.action, "Run in shell");
    assert_eq!(start.remark, "[build] echo one; echo two");
    let progress: String = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolProgress(progress) => Some(progress.text.as_str()),
            _ => None,
        })
        .collect();
    assert!(progress.contains("one\n"), "{progress}");
    assert!(
        !progress.contains("__qilin_end_"),
        "the marker never reaches the client: {progress}"
    );
    let detail = events.iter().find_map(|event| match &event.body {
        EventBody::ToolResult(result) => result.detail.clone(),
        _ => None,
    });
    match detail {
        Some(Detail::Text { text }) => assert!(text.contains("shell `build`"), "{text}"),
        other => panic!("a finished persistent call's detail is plain text: {other:?}"),
    }
}

/// Whether `program` is an executable in a `PATH` folder.
fn installed(program: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|folder| folder.join(program).is_file())
}

#[tokio::test]
async fn pwsh_is_registered_only_where_it_is_installed_and_keeps_its_state() {
    let mut registry = qilin_tool::ToolRegistry::new();
    qilin_tools::register_builtins(&mut registry).unwrap();
    let has_pwsh = installed("pwsh");
    assert_eq!(registry.get("pwsh").is_some(), has_pwsh);
    if !has_pwsh {
        eprintln!("PowerShell is not installed here: checked that `pwsh` is not registered");
        return;
    }
    let h = harness();
    h.write("src/a.txt", "a\n");
    let (first, _) = h
        .ok(
            "pwsh",
            json!({"command": "Set-Location src; $kept = 5", "persistent": true}),
        )
        .await;
    assert_eq!(first["exit_code"], 0, "{first}");
    let (second, _) = h
        .ok(
            "pwsh",
            json!({"command": "Write-Output \"$kept $(Split-Path -Leaf (Get-Location))\"", "persistent": true}),
        )
        .await;
    assert_eq!(second["output"], "5 src\n", "{second}");
    let (one_off, _) = h.ok("pwsh", json!({"command": "exit 3"})).await;
    assert_eq!(one_off["exit_code"], 3);
}

#[tokio::test]
async fn a_process_writing_between_calls_never_blocks_and_its_output_is_bounded() {
    let h = harness();
    // 2 MiB written while no call reads: more than a pipe holds, more than is kept.
    shell(
        &h,
        "default",
        "(head -c 2097152 /dev/zero | tr '\\0' x; echo; echo writer-done > done.txt) &",
    )
    .await;
    assert!(
        common::eventually(|| h.path("done.txt").exists()).await,
        "the writer blocked on a full pipe"
    );
    let (result, _) = shell(&h, "default", "echo mine").await;
    // The writer's last newline may still be on its way when the call begins.
    let output = result["output"].as_str().unwrap();
    assert!(
        output.ends_with("mine\n") && output.len() <= 6,
        "{output:?}"
    );
    let earlier = result["earlier_output"].as_str().unwrap();
    assert!(
        earlier.contains("bytes written while no call was reading were not kept"),
        "{}",
        &earlier[..200.min(earlier.len())]
    );
    assert!(earlier.len() < 64 * 1024, "earlier output is capped");
}
