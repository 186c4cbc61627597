//! The bash sandbox as `qilin run` sets it up: the environment a command sees, the refusal on
//! a kernel that cannot sandbox, and the two ways to opt out.

use qilin_protocol::{Event, EventBody};
use std::path::Path;
use std::process::{Command, Output};

/// A workspace with an agent that mounts bash (and `sandbox_section`, when given) and a script
/// whose model runs `command` once, then answers.
fn workspace(sandbox_section: &str, command: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("shell.agent"),
        format!("name: shell\ninstructions: Run commands.\ntools: [bash]\n{sandbox_section}"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("script.yaml"),
        format!(
            "turns:\n  - calls: [{{tool: bash, args: {{command: {}}}}}]\n  - say: done\n",
            serde_json::to_string(command).unwrap()
        ),
    )
    .unwrap();
    dir
}

/// `qilin run --json` of the workspace's agent and script, with `extra` arguments, started by
/// `launcher` (a program and its arguments before the qilin binary; none to start it
/// directly), with `env` added to the environment.
fn run(dir: &Path, launcher: &[&str], extra: &[&str], env: &[(&str, &str)]) -> Output {
    let qilin = env!("CARGO_BIN_EXE_qilin");
    let agent = dir.join("shell.agent");
    let model = format!("scripted:{}", dir.join("script.yaml").display());
    let mut args: Vec<&str> = launcher.to_vec();
    args.extend([
        qilin,
        "run",
        "--agent",
        agent.to_str().unwrap(),
        "--model",
        &model,
        "--json",
    ]);
    args.extend(extra);
    args.push("go");
    // The workspace is the current folder: the agent's.
    Command::new(args[0])
        .args(&args[1..])
        .current_dir(agent.parent().expect("the agent file is in a folder"))
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .output()
        .expect("qilin runs")
}

/// The output of the one bash call in a `--json` event log.
fn bash_output(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Event>(line).ok())
        .find_map(|event| match event.body {
            EventBody::ToolResult(result) if result.tool_name == "bash" => {
                Some(serde_json::to_string(&result.content).unwrap())
            }
            _ => None,
        })
        .unwrap_or_else(|| {
            panic!(
                "no bash result; stderr: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

fn assert_refused(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bash cannot be sandboxed on this machine"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`sandbox: {mode: off}`") && stderr.contains("--no-sandbox"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "no turn ran");
}

/// The run went ahead unconfined, with the warning.
fn assert_warned_off(output: &Output) {
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("WARNING: the bash sandbox is OFF"),
        "{stderr}"
    );
}

#[test]
fn bash_never_sees_the_model_api_keys() {
    let dir = workspace("", "env");
    let keys = [
        ("OPENAI_API_KEY", "sk-test-openai-key"),
        ("ANTHROPIC_API_KEY", "sk-test-anthropic-key"),
    ];
    let mut output = run(dir.path(), &[], &[], &keys);
    if output.status.code() == Some(1) {
        // A machine that cannot sandbox refuses; the environment is filtered unconfined too.
        assert_refused(&output);
        output = run(dir.path(), &[], &["--no-sandbox"], &keys);
    }
    assert!(output.status.success(), "{output:?}");
    let seen = bash_output(&output);
    assert!(seen.contains("PATH="), "{seen}");
    assert!(!seen.contains("sk-test"), "a key reached bash: {seen}");
    assert!(!seen.contains("API_KEY"), "{seen}");
}

#[test]
fn without_user_namespaces_run_refuses_to_start_until_the_user_opts_out() {
    // `unshare` makes a user namespace whose limit on further ones is 0: inside it, the kernel
    // refuses the sandbox's namespaces for real.
    let limited = [
        "unshare",
        "--user",
        "--map-root-user",
        "sh",
        "-c",
        "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" \"$@\"",
    ];
    let dir = workspace("", "echo ran-unconfined");
    let possible = Command::new("unshare")
        .args(["--user", "--map-root-user", "true"])
        .status()
        .is_ok_and(|status| status.success());
    let launcher: &[&str] = if possible { &limited } else { &[] };

    let refused = run(dir.path(), launcher, &[], &[]);
    assert_refused(&refused);
    if possible {
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("user namespaces are not available"),
            "{stderr}"
        );
    }

    let flagged = run(dir.path(), launcher, &["--no-sandbox"], &[]);
    assert_warned_off(&flagged);
    assert!(bash_output(&flagged).contains("ran-unconfined"));

    let dir = workspace("sandbox: {mode: off}\n", "echo ran-unconfined");
    let opted_out = run(dir.path(), launcher, &[], &[]);
    assert_warned_off(&opted_out);
}

#[test]
fn the_agent_file_chooses_read_only_mode() {
    let dir = workspace(
        "sandbox:\n  mode: read-only\n",
        "echo x > made.txt; echo status=$?",
    );
    let output = run(dir.path(), &[], &[], &[]);
    if output.status.code() == Some(1) {
        assert_refused(&output);
        return;
    }
    assert!(output.status.success(), "{output:?}");
    let seen = bash_output(&output);
    assert!(seen.contains("status=1"), "{seen}");
    assert!(!dir.path().join("made.txt").exists());
}
