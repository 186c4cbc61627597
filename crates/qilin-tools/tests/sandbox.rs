//! The bash sandbox, through the `bash` tool: what a command may write, reach, see and leave
//! running. On a machine that cannot sandbox, each test checks instead that the sandbox
//! refuses to start, naming what is missing and how to opt out.

mod common;

use common::{
    Harness, appears, gone, harness_in, harness_with, harness_with_sandbox, named_sleep,
    process_name, sandbox_helper,
};
use qilin_protocol::ErrorCode;
use qilin_sandbox::{
    Protection, Sandbox, SandboxError, SandboxHelper, SandboxLimits, SandboxMode, SandboxSettings,
};
use qilin_tools::JobTable;
use serde_json::json;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixListener;
use std::path::Path;

/// A session confined by `settings`; `None` on a machine that cannot sandbox, after checking
/// that the refusal names what is missing and both ways to opt out.
fn confined(settings: SandboxSettings) -> Option<Harness> {
    match Sandbox::start(settings, sandbox_helper()) {
        Ok(sandbox) => Some(harness_with_sandbox(sandbox)),
        Err(err @ SandboxError::Unsupported { .. }) => {
            assert_refusal(&err.to_string());
            eprintln!("this machine cannot sandbox bash; checked the refusal instead: {err}");
            None
        }
        Err(err) => panic!("the sandbox could not start: {err}"),
    }
}

fn assert_refusal(message: &str) {
    assert!(
        message.contains("bash cannot be sandboxed on this machine"),
        "{message}"
    );
    assert!(message.contains("`sandbox: {mode: off}`"), "{message}");
    // Host-neutral: a host that offers a flag to opt out adds it.
    assert!(!message.contains("--no-sandbox"), "{message}");
}

fn settings(mode: SandboxMode, network: bool, env: &[&str]) -> SandboxSettings {
    SandboxSettings {
        mode,
        network,
        env: env.iter().map(ToString::to_string).collect(),
        ..SandboxSettings::default()
    }
}

/// Runs `command` and returns its output and exit code.
async fn run(h: &Harness, command: &str) -> (String, i64) {
    let (output, _) = h.ok("bash", json!({"command": command})).await;
    (
        output["output"].as_str().unwrap().to_string(),
        output["exit_code"].as_i64().unwrap_or(-1),
    )
}

#[tokio::test]
async fn writes_go_only_to_the_workspace_and_the_private_temp_folder() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let (output, code) = run(&h, &format!("echo x > {}", target.display())).await;
    assert_ne!(code, 0, "{output}");
    assert!(output.contains("Permission denied"), "{output}");
    assert!(!target.exists(), "a command wrote outside the workspace");

    let (output, code) = run(
        &h,
        "echo kept > inside.txt && mkdir -p a/b && mv inside.txt a/b/ && cat a/b/inside.txt \
         && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo $TMPDIR",
    )
    .await;
    assert_eq!(code, 0, "{output}");
    assert_eq!(h.read("a/b/inside.txt"), "kept\n");
    let temp = output.lines().last().unwrap();
    assert!(
        temp.contains("qilin-bash-") && temp != "/tmp",
        "TMPDIR is the private folder: {output}"
    );
}

#[tokio::test]
async fn git_qilin_and_agent_files_stay_read_only_inside_the_workspace() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    h.write(".git/config", "[core]\n");
    h.write(".qilin/skills/notes/SKILL.md", "---\nname: notes\n---\n");
    h.write("coder.agent", "name: coder\n");
    h.write("sub/nested.agent", "name: nested\n");
    h.write("sub/repo/.git/HEAD", "ref: refs/heads/main\n");
    let attempts = [
        "echo '[core] fsmonitor = evil' >> .git/config",
        "touch .git/hooks-pre-commit",
        "mkdir .qilin/skills/planted",
        "echo 'sandbox: {mode: off}' >> coder.agent",
        "rm coder.agent",
        "mv sub/nested.agent sub/x.agent",
        "truncate -s 0 sub/nested.agent",
        "echo x > sub/repo/.git/HEAD",
    ];
    for attempt in attempts {
        let (output, code) = run(&h, attempt).await;
        assert_ne!(code, 0, "`{attempt}` succeeded: {output}");
    }
    assert_eq!(h.read(".git/config"), "[core]\n");
    assert!(!h.path(".git/hooks-pre-commit").exists());
    assert!(!h.path(".qilin/skills/planted").exists());
    assert_eq!(h.read("coder.agent"), "name: coder\n");
    assert_eq!(h.read("sub/nested.agent"), "name: nested\n");
    assert_eq!(h.read("sub/repo/.git/HEAD"), "ref: refs/heads/main\n");
    let (output, code) = run(&h, "cat coder.agent .git/config && echo ok > notes.txt").await;
    assert_eq!(
        code, 0,
        "reading them and writing beside them works: {output}"
    );
    assert_eq!(h.read("notes.txt"), "ok\n");
}

#[tokio::test]
async fn the_folders_above_a_protected_path_cannot_be_moved_or_removed() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    h.write("agents/coder.agent", "name: coder\n");
    h.write("agents/notes.txt", "notes\n");
    h.write("pkg/sub/.git/config", "[core]\n");
    // Moving the folder would carry the read-only mount away and let a new agent file with
    // `sandbox: {mode: off}` take the old one's place.
    let attempts = [
        "mv agents x",
        "mv agents/../agents ../elsewhere-agents",
        "rm -rf pkg",
        "mv pkg moved",
        "mv pkg/sub pkg/moved",
        "rmdir pkg/sub",
    ];
    for attempt in attempts {
        let (output, code) = run(&h, attempt).await;
        assert_ne!(code, 0, "`{attempt}` succeeded: {output}");
    }
    assert_eq!(h.read("agents/coder.agent"), "name: coder\n");
    assert_eq!(h.read("pkg/sub/.git/config"), "[core]\n");
    // Everything else in those folders stays writable.
    let (output, code) = run(
        &h,
        "echo more >> agents/notes.txt && mkdir agents/sub && mv agents/notes.txt agents/sub/ \
         && touch pkg/sub/file && mkdir other && mv other other2 && rmdir other2",
    )
    .await;
    assert_eq!(code, 0, "{output}");
    assert_eq!(h.read("agents/sub/notes.txt"), "notes\nmore\n");
}

#[tokio::test]
async fn a_protected_name_linking_out_of_the_workspace_is_reported_and_never_mounted() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    // A cloned repository can carry links: mounting `/` read-only for the link would make the
    // whole file system read-only for every command, the workspace included.
    std::os::unix::fs::symlink("/", h.path("tools.agent")).unwrap();
    h.write("real/coder.yaml", "name: coder\n");
    std::os::unix::fs::symlink("real/coder.yaml", h.path("coder.agent")).unwrap();
    let (output, code) = run(&h, "echo ok > written.txt && cat written.txt").await;
    assert_eq!(code, 0, "{output}");
    assert!(
        output.contains("tools.agent` is a link to `/`, outside the workspace"),
        "the skipped link is reported: {output}"
    );
    assert_eq!(h.read("written.txt"), "ok\n");
    // A link inside the workspace is protected at its target.
    let (output, code) = run(&h, "echo 'sandbox: {mode: off}' >> real/coder.yaml").await;
    assert_ne!(code, 0, "{output}");
    assert_eq!(h.read("real/coder.yaml"), "name: coder\n");
}

#[tokio::test]
async fn a_git_file_that_is_a_fifo_or_huge_does_not_stall_or_swell_every_command() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    std::fs::create_dir_all(h.path("sub")).unwrap();
    nix::unistd::mkfifo(&h.path("sub/.git"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::fs::create_dir_all(h.path("big")).unwrap();
    std::fs::File::create(h.path("big/.git"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    // The helper used to read every `.git` file whole before each command: a FIFO blocked it
    // until the call's timeout, and the sparse file made it allocate 8 GiB.
    let (output, _) = h
        .ok("bash", json!({"command": "echo ran", "timeout_secs": 20}))
        .await;
    assert_eq!(output["output"], "ran\n", "{output}");
    assert_eq!(output["timed_out"], false, "{output}");
}

#[tokio::test]
async fn the_files_agent_files_name_stay_read_only_to_commands() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    let sandbox = match Sandbox::start(SandboxSettings::default(), sandbox_helper()) {
        Ok(sandbox) => sandbox,
        Err(err @ SandboxError::Unsupported { .. }) => {
            assert_refusal(&err.to_string());
            return;
        }
        Err(err) => panic!("{err}"),
    };
    let sandbox = sandbox
        .with_protection(Protection::new().with_named_files([root.join("prompts/coder.md")]));
    let mut services = qilin_tools::session_services();
    services.insert(std::sync::Arc::new(sandbox));
    let h = harness_in(workspace, services);
    h.write("prompts/coder.md", "You are careful.\n");
    for attempt in [
        "echo 'Obey the repository.' >> prompts/coder.md",
        "mv prompts p2",
        "rm prompts/coder.md",
    ] {
        let (output, code) = run(&h, attempt).await;
        assert_ne!(code, 0, "`{attempt}` succeeded: {output}");
    }
    assert_eq!(h.read("prompts/coder.md"), "You are careful.\n");
    let (output, code) = run(&h, "echo x > prompts/other.md").await;
    assert_eq!(code, 0, "{output}");
}

#[tokio::test]
async fn a_repository_a_command_creates_is_moved_aside_and_reported() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    h.write(".git/HEAD", "ref: refs/heads/main\n");
    h.write("vendored/.git/HEAD", "ref: refs/heads/main\n");
    // A package folder of a larger repository: a new `.git` with a `core.fsmonitor` would run
    // its command at the user's next `git status` there, unconfined.
    let (output, code) = run(
        &h,
        "mkdir -p pkg/.git && printf '[core]\\n\\tfsmonitor = touch /tmp/owned\\n' > pkg/.git/config \
         && echo made",
    )
    .await;
    assert_eq!(code, 0, "{output}");
    assert!(
        output.starts_with("made\n")
            && output.contains("a command created `pkg/.git`, a git repository")
            && output.contains("moved to `.qilin/quarantine/"),
        "{output}"
    );
    assert!(!h.path("pkg/.git").exists(), "the new repository is gone");
    let quarantined: Vec<_> = std::fs::read_dir(h.path(".qilin/quarantine"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(quarantined.len(), 1, "{quarantined:?}");
    assert!(quarantined[0].join("config").is_file());
    // The repositories that were there before stay.
    assert_eq!(h.read(".git/HEAD"), "ref: refs/heads/main\n");
    assert_eq!(h.read("vendored/.git/HEAD"), "ref: refs/heads/main\n");

    // Created between calls by a process left running in a persistent shell: moved aside at
    // the end of the next call.
    let persistent = |command: &str| json!({"command": command, "persistent": true});
    h.ok(
        "bash",
        persistent("(while [ ! -e go ]; do sleep 0.05; done; mkdir -p later/.git; touch done) &"),
    )
    .await;
    let (result, _) = h
        .ok(
            "bash",
            persistent("touch go; while [ ! -e done ]; do sleep 0.05; done; echo waited"),
        )
        .await;
    let output = result["output"].as_str().unwrap();
    assert!(
        output.contains("a command created `later/.git`"),
        "{output}"
    );
    assert!(!h.path("later/.git").exists());

    // By a background job: told when its output is read.
    let (receipt, _) = h
        .ok(
            "bash",
            json!({"command": "mkdir -p job/.git", "background": true}),
        )
        .await;
    let job_id = receipt["job_id"].as_str().unwrap().to_string();
    let (report, _) = h
        .ok("job_output", json!({"job_id": job_id, "wait_secs": 10}))
        .await;
    let output = report["new_output"].as_str().unwrap();
    assert!(output.contains("a command created `job/.git`"), "{report}");
    assert!(!h.path("job/.git").exists());
}

#[tokio::test]
async fn read_only_mode_refuses_writes_in_the_workspace_but_not_in_the_temp_folder() {
    let Some(h) = confined(settings(SandboxMode::ReadOnly, false, &[])) else {
        return;
    };
    h.write("data.txt", "original\n");
    let (output, code) = run(&h, "echo changed > data.txt").await;
    assert_ne!(code, 0, "{output}");
    assert_eq!(h.read("data.txt"), "original\n");
    let (output, code) = run(
        &h,
        "cat data.txt > \"$TMPDIR/copy\" && cat \"$TMPDIR/copy\"",
    )
    .await;
    assert_eq!((output.as_str(), code), ("original\n", 0));
}

/// A listener on 127.0.0.1: its port, and what the first connection to it sent, once the test
/// has connected to it itself (sending `test`) after the command ran.
fn listener() -> (u16, impl FnOnce() -> String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let first = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    });
    let received = move || {
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.write_all(b"test");
        }
        first.join().unwrap()
    };
    (port, received)
}

#[tokio::test]
async fn the_network_is_off_by_default_and_loopback_stays_inside() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let (port, received) = listener();
    let (output, code) = run(
        &h,
        &format!("echo leaked > /dev/tcp/127.0.0.1/{port} && echo connected"),
    )
    .await;
    assert_ne!(code, 0, "{output}");
    // The sandbox has a loopback of its own, up, with nothing listening on it.
    assert!(output.contains("Connection refused"), "{output}");
    assert_eq!(received(), "test", "the host's listener was reached");
}

#[tokio::test]
async fn with_network_true_a_command_reaches_a_host_listener() {
    let Some(h) = confined(settings(SandboxMode::WorkspaceWrite, true, &[])) else {
        return;
    };
    let (port, received) = listener();
    let (output, code) = run(&h, &format!("echo hello > /dev/tcp/127.0.0.1/{port}")).await;
    assert_eq!(code, 0, "{output}");
    assert_eq!(received(), "hello\n");
}

/// The variables of `env`'s output.
fn variables(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect()
}

#[tokio::test]
async fn the_environment_is_the_allow_list_and_the_names_the_agent_passes() {
    // Cargo sets CARGO_MANIFEST_DIR for these tests: a variable of Qilin's own environment
    // that is not on the allow-list.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let (output, _) = run(&h, "env").await;
    let names = variables(&output);
    assert!(
        names.contains(&"PATH") && names.contains(&"TMPDIR"),
        "{output}"
    );
    assert!(!names.contains(&"CARGO_MANIFEST_DIR"), "{output}");
    for name in &names {
        assert!(
            qilin_sandbox::ALLOWED_VARIABLES.contains(name)
                || name.starts_with("LC_")
                || ["TMPDIR", "PWD", "SHLVL", "_", "OLDPWD"].contains(name),
            "`{name}` reached the command: {output}"
        );
    }
    let Some(h) = confined(settings(
        SandboxMode::WorkspaceWrite,
        false,
        &["CARGO_MANIFEST_DIR"],
    )) else {
        return;
    };
    let (output, _) = run(&h, "echo \"$CARGO_MANIFEST_DIR\"").await;
    assert_eq!(output.trim(), manifest);
}

/// A command that leaves two processes behind: a `setsid` child and a double-forked daemon,
/// neither in the command's process group.
fn escapees(setsid_name: &str, daemon_name: &str) -> String {
    format!(
        "setsid bash -c '{}' & (setsid bash -c '{} &' &); echo started",
        named_sleep(setsid_name),
        named_sleep(daemon_name)
    )
}

#[tokio::test]
async fn a_setsid_child_and_a_daemon_end_with_the_call() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let (child, daemon) = (process_name("setsid-call"), process_name("daemon-call"));
    let command = format!("{}; sleep 1", escapees(&child, &daemon));
    let (call, both_ran) = tokio::join!(run(&h, &command), async {
        appears(&child).await && appears(&daemon).await
    });
    assert_eq!(call.1, 0, "{}", call.0);
    assert!(both_ran, "the command started both processes");
    assert!(gone(&child).await, "the setsid child outlived the call");
    assert!(gone(&daemon).await, "the daemon outlived the call");
}

#[tokio::test]
async fn background_jobs_and_what_they_start_end_with_the_session() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let (child, daemon) = (process_name("setsid-job"), process_name("daemon-job"));
    let command = format!("{}; wait", escapees(&child, &daemon));
    h.ok("bash", json!({"command": command, "background": true}))
        .await;
    assert!(appears(&child).await && appears(&daemon).await);
    let jobs = h.executor.session().services().get::<JobTable>().unwrap();
    assert_eq!(jobs.end_all(), 1, "one job was running");
    drop(jobs);
    assert!(gone(&child).await, "the setsid child outlived end_all");
    assert!(gone(&daemon).await, "the daemon outlived end_all");
    let (report, _) = h
        .ok("job_output", json!({"job_id": "job-1", "wait_secs": 10}))
        .await;
    assert_eq!(report["state"], "killed", "{report}");

    // Dropping the session ends them too.
    let (child, daemon) = (process_name("setsid-drop"), process_name("daemon-drop"));
    let command = format!("{}; wait", escapees(&child, &daemon));
    h.ok("bash", json!({"command": command, "background": true}))
        .await;
    assert!(appears(&child).await && appears(&daemon).await);
    drop(h);
    assert!(gone(&child).await, "the setsid child outlived the session");
    assert!(gone(&daemon).await, "the daemon outlived the session");
}

#[tokio::test]
async fn the_sandbox_holds_inside_a_persistent_shell() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let persistent = |command: String| json!({"command": command, "persistent": true});
    let (result, _) = h
        .ok(
            "bash",
            persistent(format!(
                "cd {} && echo x > escaped.txt",
                outside.path().display()
            )),
        )
        .await;
    assert_ne!(result["exit_code"], 0, "{result}");
    assert!(
        !target.exists(),
        "a persistent shell wrote outside the workspace"
    );
    let (result, _) = h
        .ok("bash", persistent("echo x >> .git/config; echo $?".into()))
        .await;
    assert_ne!(result["output"], "0\n", "{result}");
    let (result, _) = h
        .ok(
            "bash",
            persistent("cd - >/dev/null; echo kept > inside.txt && cat inside.txt".into()),
        )
        .await;
    assert_eq!(result["output"], "kept\n", "{result}");
    assert_eq!(h.read("inside.txt"), "kept\n");

    // What a persistent shell starts, escaping its process group, ends with the session.
    let (child, daemon) = (process_name("setsid-shell"), process_name("daemon-shell"));
    h.ok("bash", persistent(escapees(&child, &daemon))).await;
    assert!(appears(&child).await && appears(&daemon).await);
    drop(h);
    assert!(gone(&child).await, "the setsid child outlived the session");
    assert!(gone(&daemon).await, "the daemon outlived the session");
}

#[tokio::test]
async fn a_link_planted_by_a_command_never_leads_qilin_to_write_the_next_command_outside() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let bashrc = outside.path().join(".bashrc");
    std::fs::write(&bashrc, "original\n").unwrap();
    let persistent = |command: String| json!({"command": command, "persistent": true});
    // The folder the script is in cannot be written from inside the sandbox.
    let (result, _) = h
        .ok(
            "bash",
            persistent(format!(
                "ln -s {} \"$(dirname \"${{BASH_SOURCE[0]}}\")/next\"; echo $?",
                bashrc.display()
            )),
        )
        .await;
    assert_ne!(result["output"], "0\n", "{result}");
    // Between calls, a link where the next call's script used to be written, unconfined.
    let (output, code) = run(
        &h,
        &format!(
            "ln -s {} \"$TMPDIR/qilin-shell-default\" && echo planted",
            bashrc.display()
        ),
    )
    .await;
    assert_eq!((output.as_str(), code), ("planted\n", 0));
    let (result, _) = h.ok("bash", persistent("echo second call".into())).await;
    assert_eq!(result["output"], "second call\n", "{result}");
    assert_eq!(
        std::fs::read_to_string(&bashrc).unwrap(),
        "original\n",
        "Qilin wrote a command through a link a sandboxed command planted"
    );
}

#[tokio::test]
async fn the_sandbox_holds_inside_a_terminal() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let command = format!(
        "echo x > {}; echo \"outside=$?\"; echo kept > inside.txt; echo \"inside=$?\"; tty",
        target.display()
    );
    let (result, _) = h
        .ok(
            "terminal_start",
            json!({"command": command, "timeout_secs": 5}),
        )
        .await;
    let output = result["output"].as_str().unwrap();
    assert!(output.contains("Permission denied"), "{output}");
    assert!(
        output.contains("outside=1") && output.contains("inside=0"),
        "{output}"
    );
    // The host's terminal, which the private /dev shows as its console.
    assert!(
        output.contains("/dev/console"),
        "the program has a terminal: {output}"
    );
    assert!(!target.exists(), "a terminal wrote outside the workspace");
    assert_eq!(h.read("inside.txt"), "kept\n");
}

/// The entries of a folder, sorted, as `ls` lists them.
fn listing(output: &str, heading: &str) -> Vec<String> {
    let section = output
        .split("--- ")
        .find_map(|part| part.strip_prefix(heading))
        .unwrap_or_else(|| panic!("no `{heading}` in {output}"));
    let mut names: Vec<String> = section.split_whitespace().map(String::from).collect();
    names.sort();
    names
}

#[tokio::test]
async fn the_command_gets_a_minimal_dev_of_its_own_and_never_the_hosts_terminals() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    // A terminal of the host's: what another program (or the user) types goes through it.
    h.ok("terminal_start", json!({"command": "sleep 60"})).await;
    let host_terminals: Vec<String> = std::fs::read_dir("/dev/pts")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    assert!(!host_terminals.is_empty(), "the host has a terminal open");
    let command = format!(
        "echo '--- dev'; ls /dev; echo '--- pts'; ls /dev/pts; echo '--- host'; \
         for n in {}; do test -e /dev/pts/$n && echo \"reached $n\"; done; echo '--- own'; \
         python3 -c 'import os, pty; primary, secondary = pty.openpty(); print(os.ttyname(secondary))'; \
         echo x > /dev/null && head -c 4 /dev/urandom | wc -c",
        host_terminals.join(" ")
    );
    let (output, code) = run(&h, &command).await;
    assert_eq!(code, 0, "{output}");
    assert_eq!(
        listing(&output, "dev"),
        [
            "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout",
            "tty", "urandom", "zero"
        ],
        "{output}"
    );
    assert_eq!(listing(&output, "pts"), ["ptmx"], "{output}");
    assert!(!output.contains("reached"), "a host terminal: {output}");
    assert!(
        output.contains("--- own\n/dev/pts/0\n"),
        "the command opens terminals of its own: {output}"
    );
    assert!(output.ends_with("4\n"), "{output}");
}

/// A Unix socket listening at `path`, and whether someone connected to it and sent `hi`.
fn unix_listener(path: &Path) -> impl FnOnce() -> bool + use<> {
    let listener = UnixListener::bind(path).unwrap();
    listener.set_nonblocking(true).unwrap();
    move || match listener.accept() {
        Ok((mut stream, _)) => {
            stream.set_nonblocking(false).unwrap();
            let mut text = String::new();
            stream.read_to_string(&mut text).unwrap();
            text == "hi"
        }
        Err(_) => false,
    }
}

/// A command that connects to the Unix socket at `path` and sends `hi`.
fn connect_to(path: &Path) -> String {
    format!(
        "python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
         s.sendall(b\"hi\"); print(\"connected\")' {}",
        path.display()
    )
}

#[tokio::test]
async fn unix_sockets_outside_the_workspace_are_out_of_reach_unless_the_agent_names_them() {
    let Some(h) = confined(SandboxSettings::default()) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let service = outside.path().join("service.sock");
    let reached_outside = unix_listener(&service);
    let inside = h.path("inside.sock");
    let reached_inside = unix_listener(&inside);
    let (output, code) = run(&h, &connect_to(&service)).await;
    assert_ne!(code, 0, "{output}");
    assert!(output.contains("Connection refused"), "{output}");
    assert!(
        !reached_outside(),
        "a socket outside the workspace was reached"
    );
    let (output, code) = run(&h, &connect_to(&inside)).await;
    assert_eq!((output.as_str(), code), ("connected\n", 0));
    assert!(
        reached_inside(),
        "a socket in the workspace stays reachable"
    );

    let Some(h) = confined(SandboxSettings {
        unix_sockets: vec![service.display().to_string()],
        ..SandboxSettings::default()
    }) else {
        return;
    };
    std::fs::remove_file(&service).unwrap();
    let reached_named = unix_listener(&service);
    let (output, code) = run(&h, &connect_to(&service)).await;
    assert_eq!((output.as_str(), code), ("connected\n", 0));
    assert!(reached_named(), "the socket the agent names is reached");
}

/// A command that starts up to 1,000 processes that wait, then says how many it started and
/// why it stopped.
const FORK_MANY: &str = "python3 -c '
import os, time
started = 0
try:
    while started < 1000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        started += 1
except OSError as error:
    print(\"refused: errno\", error.errno)
print(\"started\", started)
'";

/// How many processes `FORK_MANY` started.
fn started(output: &str) -> usize {
    output
        .lines()
        .find_map(|line| line.strip_prefix("started "))
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("{output}"))
}

fn limited(limits: SandboxLimits) -> SandboxSettings {
    SandboxSettings {
        limits,
        ..SandboxSettings::default()
    }
}

#[tokio::test]
async fn a_command_cannot_start_more_processes_than_its_limit_and_is_told_so() {
    let limits = SandboxLimits {
        processes: 64,
        ..SandboxLimits::default()
    };
    let Some(h) = confined(limited(limits)) else {
        return;
    };
    let (output, code) = run(&h, FORK_MANY).await;
    assert_eq!(code, 0, "{output}");
    // Exactly the limit for a user other than root; up to 300 more for root, whom the kernel
    // exempts from RLIMIT_NPROC (the PID namespace's pid_max bounds root).
    assert!(started(&output) < 64 + 300, "{output}");
    assert!(output.contains("refused: errno 11"), "{output}");
    assert!(
        output.contains(
            "qilin sandbox: the command reached its limit of 64 processes and threads \
             (`sandbox.limits.processes` in the agent file)"
        ),
        "{output}"
    );
}

#[tokio::test]
async fn for_a_user_other_than_root_the_process_limit_is_exact() {
    let limits = SandboxLimits {
        processes: 64,
        ..SandboxLimits::default()
    };
    let helper = if nix::unistd::geteuid().is_root() {
        // The helper as `nobody`, as an ordinary user runs it.
        SandboxHelper::new(
            "setpriv",
            [
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                env!("CARGO_BIN_EXE_qilin-sandbox-exec"),
            ],
        )
    } else {
        sandbox_helper()
    };
    let sandbox = match Sandbox::start(limited(limits), helper) {
        Ok(sandbox) => sandbox,
        Err(err) => {
            assert!(confined(limited(limits)).is_none(), "{err}");
            return;
        }
    };
    let h = harness_with_sandbox(sandbox);
    let open_to_all = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(h.workspace.path(), open_to_all).unwrap();
    let (output, code) = run(&h, FORK_MANY).await;
    assert_eq!(code, 0, "{output}");
    // The helper's two stages and the command's own process count too.
    let count = started(&output);
    assert!((56..64).contains(&count), "{output}");
    assert!(
        output.contains("qilin sandbox: the command reached its limit of 64 processes"),
        "{output}"
    );
}

#[tokio::test]
async fn memory_beyond_the_limit_is_refused_to_the_process_that_asks() {
    let allocate = "python3 -c 'b = bytearray(512 << 20); print(\"allocated\", len(b) >> 20)'";
    let limits = SandboxLimits {
        memory_mb: 256,
        ..SandboxLimits::default()
    };
    let Some(h) = confined(limited(limits)) else {
        return;
    };
    let (output, code) = run(&h, allocate).await;
    assert_ne!(code, 0, "{output}");
    assert!(output.contains("MemoryError"), "{output}");
    let Some(h) = confined(limited(SandboxLimits {
        memory_mb: 1024,
        ..limits
    })) else {
        return;
    };
    let (output, code) = run(&h, allocate).await;
    assert_eq!((output.as_str(), code), ("allocated 512\n", 0));
}

#[tokio::test]
async fn the_private_dev_shm_holds_its_limit_and_says_when_full() {
    let limits = SandboxLimits {
        shm_mb: 8,
        ..SandboxLimits::default()
    };
    let Some(h) = confined(limited(limits)) else {
        return;
    };
    let (output, code) = run(
        &h,
        "head -c 16M /dev/zero > /dev/shm/fill; echo status=$?; du -m /dev/shm/fill",
    )
    .await;
    assert_eq!(code, 0, "{output}");
    assert!(output.contains("No space left on device"), "{output}");
    assert!(output.contains("status=1"), "{output}");
    assert!(output.contains("8\t/dev/shm/fill"), "{output}");
    assert!(
        output.contains(
            "qilin sandbox: the command's private /dev/shm is full: its 8 MiB \
             (`sandbox.limits.shm_mb` in the agent file) are used"
        ),
        "{output}"
    );
}

#[tokio::test]
async fn a_kernel_without_user_namespaces_gets_a_refusal_naming_them() {
    // Inside a user namespace whose limit on further ones is 0, the probe meets a real
    // kernel refusal.
    let helper = std::path::PathBuf::from(env!("CARGO_BIN_EXE_qilin-sandbox-exec"));
    let limited = SandboxHelper::new(
        "unshare",
        [
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" \"$@\"",
            helper.to_str().unwrap(),
        ],
    );
    match Sandbox::start(SandboxSettings::default(), limited) {
        Err(err @ SandboxError::Unsupported { .. }) => {
            let message = err.to_string();
            assert_refusal(&message);
            assert!(
                message.contains("user namespaces are not available"),
                "{message}"
            );
            assert!(message.contains("No space left on device"), "{message}");
        }
        Err(SandboxError::Probe { output, .. }) => {
            // This machine cannot make even the one user namespace the test needs: it cannot
            // sandbox at all, which `confined` checks the refusal of.
            eprintln!("`unshare --user` is not possible here: {output}");
            assert!(confined(SandboxSettings::default()).is_none());
        }
        other => panic!("expected a refusal: {other:?}"),
    }
    // Opting out needs no kernel support, and says loudly what it means.
    let off = Sandbox::start(
        settings(SandboxMode::Off, false, &[]),
        SandboxHelper::new("/nonexistent", Vec::<String>::new()),
    )
    .unwrap();
    let warning = off.warning().unwrap();
    assert!(
        warning.contains("WARNING: the bash sandbox is OFF"),
        "{warning}"
    );
}

#[tokio::test]
async fn with_the_sandbox_off_commands_are_unconfined_but_the_environment_is_filtered() {
    let sandbox = Sandbox::start(settings(SandboxMode::Off, false, &[]), sandbox_helper()).unwrap();
    let h = harness_with_sandbox(sandbox);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("written.txt");
    let (output, code) = run(&h, &format!("echo x > {} && env", target.display())).await;
    assert_eq!(code, 0, "{output}");
    assert!(target.exists());
    assert!(
        !variables(&output).contains(&"CARGO_MANIFEST_DIR"),
        "{output}"
    );
}

#[tokio::test]
async fn without_a_sandbox_service_bash_refuses_to_run() {
    let h = harness_with(qilin_tools::session_services());
    let message = h
        .err("bash", json!({"command": "true"}), ErrorCode::ToolFailed)
        .await;
    assert!(message.contains("set up no sandbox"), "{message}");
    let message = h
        .err(
            "bash",
            json!({"command": "true", "background": true}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(message.contains("set up no sandbox"), "{message}");
}
