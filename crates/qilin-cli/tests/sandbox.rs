//! The bash sandbox as `qilin run` sets it up: the environment a command sees, the refusal on
//! a kernel that cannot sandbox, and the two ways to opt out.

mod support;

use qilin_protocol::{Event, EventBody};
use std::path::Path;
use std::process::{Command, Output};
use support::{finished, scripted_serve, started};

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

/// A Unix socket listening at `path`; returns whether someone connected and sent `hi`.
fn unix_listener(path: &Path) -> impl FnOnce() -> bool + use<> {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
    listener.set_nonblocking(true).unwrap();
    move || match listener.accept() {
        Ok((mut stream, _)) => {
            stream.set_nonblocking(false).unwrap();
            let mut text = String::new();
            std::io::Read::read_to_string(&mut stream, &mut text).unwrap();
            text == "hi"
        }
        Err(_) => false,
    }
}

/// Shell text that connects to the Unix socket at `path`, sends `hi` and says `NAME=connected`,
/// or prints why not.
fn connect_to(name: &str, path: &Path) -> String {
    format!(
        "python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
         s.sendall(b\"hi\"); print(\"{name}=connected\")' {}",
        path.display()
    )
}

#[test]
fn the_users_runtime_folder_is_hidden_but_a_socket_the_agent_names_there_is_reached() {
    let home = tempfile::tempdir().unwrap();
    let runtime = home.path().join("run");
    let bus = runtime.join("bus");
    let podman = runtime.join("podman/podman.sock");
    let bus_reached = unix_listener(&bus);
    let podman_reached = unix_listener(&podman);
    let command = format!(
        "echo listed: $(ls -A {}); {}; {}",
        runtime.display(),
        connect_to("bus", &bus),
        connect_to("podman", &podman)
    );
    let dir = workspace(
        "sandbox:\n  unix_sockets: ['$XDG_RUNTIME_DIR/podman/podman.sock']\n",
        &command,
    );
    let env = [
        ("XDG_RUNTIME_DIR", runtime.to_str().unwrap()),
        ("HOME", home.path().to_str().unwrap()),
    ];
    let output = run(dir.path(), &[], &[], &env);
    if output.status.code() == Some(1) {
        assert_refused(&output);
        return;
    }
    assert!(output.status.success(), "{output:?}");
    let seen = bash_output(&output);
    // The folder shows only the path to the socket the agent names.
    assert!(seen.contains("listed: podman"), "{seen}");
    assert!(!seen.contains("bus=connected"), "{seen}");
    assert!(seen.contains("podman=connected"), "{seen}");
    assert!(
        !bus_reached(),
        "the session bus was reached from the sandbox"
    );
    assert!(
        podman_reached(),
        "the socket the agent names was not reached"
    );
}

/// The text of every bash result in `events`, as JSON.
fn bash_results(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == "bash" => {
                Some(serde_json::to_string(&result.content).unwrap())
            }
            _ => None,
        })
        .collect()
}

/// Under `qilin serve`, a command with the network can neither read the server's token file
/// nor connect to its port (it can connect elsewhere); its private temp folder is the owner's
/// alone, and a SIGTERM to the server removes it, with the token file, while a job still runs
/// there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_serve_a_command_never_reaches_the_server_and_sigterm_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let (workspace, runtime, temp, home) = (
        dir.path().join("workspace"),
        dir.path().join("run"),
        dir.path().join("tmp"),
        dir.path().join("home"),
    );
    for folder in [&workspace, &temp, &home] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(
        workspace.join("net.agent"),
        "name: net\ninstructions: Run commands.\ntools: [bash]\nsandbox: {network: true}\n",
    )
    .unwrap();
    let mut command = scripted_serve(dir.path(), &workspace, "net");
    command.env("TMPDIR", &temp).env("HOME", &home);
    let served = started(command);
    let port = served.port();
    let token_file = runtime.join("qilin").join(format!("serve-{port}.json"));
    assert!(token_file.exists(), "the server wrote its token file");
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let probe = format!(
        "ls -A {folder}; cat {file}; echo token-read=$?; \
         (echo hi > /dev/tcp/127.0.0.1/{port}) 2>&1; echo server-port=$?; \
         (echo hi > /dev/tcp/127.0.0.1/{other}) 2>&1; echo other-port=$?; \
         echo \"temp=$TMPDIR mode=$(stat -c %a \"$TMPDIR\")\"",
        folder = token_file.parent().unwrap().display(),
        file = token_file.display(),
        other = elsewhere.local_addr().unwrap().port(),
    );
    let job = "sleep 60 > \"$TMPDIR/busy\"";
    std::fs::write(
        workspace.join("net.yaml"),
        format!(
            "turns:\n  - calls: [{{tool: bash, args: {{command: {}}}}}]\n  - say: done\n  \
             - calls: [{{tool: bash, args: {{command: {}, background: true}}}}]\n  - say: started\n",
            serde_json::to_string(&probe).unwrap(),
            serde_json::to_string(job).unwrap(),
        ),
    )
    .unwrap();

    let client = reqwest::Client::new();
    let session = served.create_session(&client).await;
    served.start_turn(&client, &session, "look").await;
    let events = served
        .wait_for(&client, &session, 60, "the turn never finished", |events| {
            !finished(events).is_empty()
        })
        .await;
    let results = bash_results(&events);
    let [seen] = results.as_slice() else {
        panic!("{events:#?}")
    };
    if seen.contains("bash cannot be sandboxed") {
        eprintln!("this machine cannot sandbox bash: {seen}");
        return;
    }
    assert!(!seen.contains(&served.token), "the token was read: {seen}");
    assert!(seen.contains("token-read=1"), "{seen}");
    assert!(seen.contains("Permission denied"), "{seen}");
    assert!(seen.contains("server-port=1"), "{seen}");
    assert!(seen.contains("other-port=0"), "the network works: {seen}");
    assert!(seen.contains("mode=700"), "{seen}");
    let private = seen
        .split("temp=")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .map(std::path::PathBuf::from)
        .unwrap();
    assert!(private.starts_with(&temp) && private.is_dir(), "{seen}");

    served.start_turn(&client, &session, "start a job").await;
    served
        .wait_for(&client, &session, 60, "the turn never finished", |events| {
            finished(events).len() >= 2
        })
        .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !private.join("busy").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the job never ran in the folder"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    let pid = rustix::process::Pid::from_raw(served.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let mut served = served;
    let status = served.child.wait().unwrap();
    assert!(
        status.success(),
        "a stop on SIGTERM is a clean one: {status:?}"
    );
    assert!(
        !private.exists(),
        "the private temp folder outlived the server"
    );
    let left: Vec<_> = std::fs::read_dir(&temp).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(!token_file.exists(), "the token file outlived the server");
}

/// `qilin run` stopped by SIGTERM, or interrupted by Ctrl-C (SIGINT), while a command runs in
/// the sandbox leaves no private temp folder behind.
#[test]
fn qilin_run_stopped_by_a_signal_mid_command_leaves_no_temp_folder() {
    for signal in [rustix::process::Signal::TERM, rustix::process::Signal::INT] {
        let dir = workspace("", "echo \"temp=$TMPDIR\"; sleep 60");
        let temp = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_qilin"))
            .args(["run", "--agent", "shell.agent", "--json", "--model"])
            .arg(format!(
                "scripted:{}",
                dir.path().join("script.yaml").display()
            ))
            .arg("go")
            .current_dir(dir.path())
            .env("TMPDIR", temp.path())
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
        let private = lines.by_ref().map_while(Result::ok).find_map(|line| {
            let at = line.find("temp=")? + "temp=".len();
            let end = line[at..].find("\\n")? + at;
            Some(std::path::PathBuf::from(&line[at..end]))
        });
        let Some(private) = private else {
            let output = child.wait_with_output().unwrap();
            assert_refused(&output);
            return;
        };
        assert!(private.is_dir(), "{}", private.display());
        let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
        // Read on, so the process never blocks on a full pipe.
        let drained = std::thread::spawn(move || lines.count());
        let status = child.wait().unwrap();
        drained.join().unwrap();
        assert!(
            !private.exists(),
            "{signal:?} left {} ({status:?})",
            private.display()
        );
        let left: Vec<_> = std::fs::read_dir(temp.path()).unwrap().collect();
        assert!(left.is_empty(), "{signal:?}: {left:?}");
    }
}

/// A temp folder in the host's `/dev/shm` (`TMPDIR=/dev/shm/...`, as some machines set it)
/// stays the command's `TMPDIR` under the private `/dev`.
#[test]
fn a_temp_folder_in_dev_shm_stays_usable_under_the_private_dev() {
    if !Path::new("/dev/shm").is_dir() {
        return;
    }
    let temp = tempfile::tempdir_in("/dev/shm").unwrap();
    let dir = workspace(
        "",
        "echo kept > \"$TMPDIR/note\" && cat \"$TMPDIR/note\" && echo $TMPDIR",
    );
    let elsewhere = run(dir.path(), &[], &[], &[]);
    if elsewhere.status.code() == Some(1) {
        assert_refused(&elsewhere);
        return;
    }
    let output = run(
        dir.path(),
        &[],
        &[],
        &[("TMPDIR", temp.path().to_str().unwrap())],
    );
    assert!(output.status.success(), "{output:?}");
    let seen = bash_output(&output);
    assert!(seen.contains("kept"), "{seen}");
    assert!(
        seen.contains(&format!("{}/qilin-bash-", temp.path().display())),
        "{seen}"
    );
}

/// Under `nohup` (SIGHUP ignored), a hangup leaves `qilin run` going: its turn ends as the
/// script says and the process exits 0, not 129.
#[test]
fn under_nohup_a_hangup_leaves_qilin_run_going() {
    let dir = workspace("", "echo started; sleep 5; echo finished");
    let mut child = Command::new("nohup")
        .arg(env!("CARGO_BIN_EXE_qilin"))
        .args(["run", "--agent", "shell.agent", "--json", "--model"])
        .arg(format!(
            "scripted:{}",
            dir.path().join("script.yaml").display()
        ))
        .arg("go")
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    let started = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|line| line.contains("started\\n"));
    if !started {
        // A machine that cannot sandbox refused the run before any command.
        assert!(!child.wait().unwrap().success());
        return;
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
    let rest: String = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{rest}");
    assert!(rest.contains("finished"), "{rest}");
}

/// `qilin run` killed outright (SIGKILL) mid-command cannot remove its temp folder; the next
/// Qilin to start a sandbox with the same TMPDIR does, since no process holds it any more.
#[test]
fn a_temp_folder_left_by_a_killed_qilin_is_removed_by_the_next_one() {
    let dir = workspace("", "echo \"temp=$TMPDIR\"; sleep 60");
    let temp = tempfile::tempdir().unwrap();
    let start = || {
        Command::new(env!("CARGO_BIN_EXE_qilin"))
            .args(["run", "--agent", "shell.agent", "--json", "--model"])
            .arg(format!(
                "scripted:{}",
                dir.path().join("script.yaml").display()
            ))
            .arg("go")
            .current_dir(dir.path())
            .env("TMPDIR", temp.path())
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut killed = start();
    let stdout = killed.stdout.take().unwrap();
    let private = std::io::BufRead::lines(std::io::BufReader::new(stdout))
        .map_while(Result::ok)
        .find_map(|line| {
            let at = line.find("temp=")? + "temp=".len();
            let end = line[at..].find("\\n")? + at;
            Some(std::path::PathBuf::from(&line[at..end]))
        });
    let Some(private) = private else {
        let _ = killed.wait();
        return; // A machine that cannot sandbox refused the run.
    };
    killed.kill().unwrap(); // SIGKILL
    killed.wait().unwrap();
    assert!(private.is_dir(), "a killed process cannot clean up");

    let mut next = start();
    let stdout = next.stdout.take().unwrap();
    let started = std::io::BufRead::lines(std::io::BufReader::new(stdout))
        .map_while(Result::ok)
        .any(|line| line.contains("temp="));
    next.kill().unwrap();
    next.wait().unwrap();
    assert!(started, "the next run started its command");
    assert!(
        !private.exists(),
        "the abandoned folder {} is still there",
        private.display()
    );
}
