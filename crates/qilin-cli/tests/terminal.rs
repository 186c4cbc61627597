//! The terminal experience end to end: the real `qilin` binary on a pseudo-terminal, its
//! screen read through a virtual terminal (`vt100`), typed at like a person, with the scripted
//! model. A newcomer's `qilin` in a repository, a question, an approval with its preview, a
//! denial with a message, an interrupt of a running command, a resize, and `/exit`.

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The rows of every terminal here: enough for the whole demo.
const ROWS: u16 = 100;

/// A `qilin` process on a pseudo-terminal and the screen it draws.
struct Terminal {
    screen: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    master: Box<dyn portable_pty::MasterPty + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// Told when the reader has read everything `qilin` wrote (its end of the terminal closed).
    output_ended: std::sync::mpsc::Receiver<()>,
}

impl Terminal {
    fn start(dir: &Path, args: &[&str], envs: &[(&str, String)], columns: u16) -> Self {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: columns,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal opens");
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_qilin"));
        command.args(args);
        command.cwd(dir);
        command.env("TERM", "xterm-256color");
        command.env("NO_COLOR", "1");
        command.env_remove("QILIN_MODEL");
        for (name, value) in envs {
            command.env(name, value);
        }
        let child = pty.slave.spawn_command(command).expect("qilin starts");
        drop(pty.slave);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            NonZeroU16::new(ROWS).unwrap(),
            NonZeroU16::new(columns).unwrap(),
            0,
        )));
        let writer = Arc::new(Mutex::new(pty.master.take_writer().unwrap()));
        let mut reader = pty.master.try_clone_reader().unwrap();
        let (reading, answering) = (Arc::clone(&screen), Arc::clone(&writer));
        let (ended, output_ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = reader.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                let chunk = &buffer[..read];
                let mut parser = reading.lock().unwrap();
                parser.process(chunk);
                // The line editor asks where the cursor is; a terminal answers.
                if chunk.windows(4).any(|w| w == b"\x1b[6n") {
                    let (row, column) = parser.screen().cursor_position();
                    let answer = format!("\x1b[{};{}R", row + 1, column + 1);
                    let _ = answering.lock().unwrap().write_all(answer.as_bytes());
                }
            }
            let _ = ended.send(());
        });
        Terminal {
            screen,
            writer,
            master: pty.master,
            child,
            output_ended,
        }
    }

    fn rows(&self) -> String {
        let parser = self.screen.lock().unwrap();
        let (_, columns) = parser.screen().size();
        let rows: Vec<String> = parser.screen().rows(0, columns.get()).collect();
        rows.join("\n").trim_end().to_string()
    }

    fn type_keys(&self, keys: &str) {
        let mut writer = self.writer.lock().unwrap();
        writer.write_all(keys.as_bytes()).unwrap();
        writer.flush().unwrap();
    }

    /// Waits until the screen shows `text`, and returns it.
    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let rows = self.rows();
            if rows.contains(text) {
                return rows;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {text:?}:\n{rows}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the screen satisfies `done` (described as `what`), and returns it.
    fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let rows = self.rows();
            if done(&rows) {
                return rows;
            }
            assert!(Instant::now() < deadline, "never {what}:\n{rows}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the conversation's prompt is the last line, and returns the screen.
    fn wait_for_prompt(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let rows = self.rows();
            if rows.lines().last() == Some("›") {
                return rows;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed the prompt:\n{rows}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Resizes the terminal to `columns`, its lines reflowed to the new width as most
    /// terminals (tmux, VTE, kitty, iTerm2) do: a wrapped line joins up when widened, a long
    /// one wraps again when narrowed.
    ///
    /// The resize lands between two of qilin's writes: a redraw already written but not yet
    /// read when a terminal reflows was measured for the old width, and no program can redraw
    /// that one right (any terminal shows it so); here qilin is stopped and its output read
    /// before the resize, and continued after it.
    fn resize(&self, columns: u16) {
        let pid = self.child.process_id().expect("qilin runs").to_string();
        let signal = |name: &str| {
            let sent = std::process::Command::new("kill")
                .args([name, &pid])
                .status();
            assert!(sent.is_ok_and(|s| s.success()), "kill {name} {pid}");
        };
        signal("-STOP");
        std::thread::sleep(Duration::from_millis(200));
        {
            let mut parser = self.screen.lock().unwrap();
            self.master
                .resize(PtySize {
                    rows: ROWS,
                    cols: columns,
                    pixel_width: 0,
                    pixel_height: 0,
                })
                .unwrap();
            *parser = reflowed(&parser, columns);
        }
        signal("-CONT");
    }

    fn exit_code(mut self) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "qilin did not exit:\n{}",
                self.rows()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The screen `parser` shows, reflowed to `columns`: its logical lines (wrapped rows joined) up
/// to the cursor's, written again at the new width, the cursor at the start of its line.
fn reflowed(parser: &vt100::Parser, columns: u16) -> vt100::Parser {
    let screen = parser.screen();
    let (_, width) = screen.size();
    let (cursor_row, _) = screen.cursor_position();
    let rows: Vec<String> = screen.rows(0, width.get()).collect();
    let mut lines = vec![String::new()];
    for (row, text) in rows.iter().enumerate().take(usize::from(cursor_row) + 1) {
        let last = lines.last_mut().expect("a line");
        last.push_str(text);
        if !screen.row_wrapped(row as u16) {
            lines.push(String::new());
        }
    }
    lines.pop();
    let mut next = vt100::Parser::new(
        NonZeroU16::new(ROWS).unwrap(),
        NonZeroU16::new(columns).unwrap(),
        0,
    );
    next.process(lines.join("\r\n").as_bytes());
    next
}

/// The screen with what changes from run to run (times, the temporary folder) replaced.
fn stable(screen: &str, dir: &Path) -> String {
    let durations = regex::Regex::new(r"\b\d+(\.\d+)? ?(ms|s)\b").unwrap();
    let tokens = regex::Regex::new(r"[\d,]+\s+tokens\s+in\s+·\s+[\d,]+\s+out").unwrap();
    let cost = regex::Regex::new(r"\$\d+\.\d+").unwrap();
    let shown = screen.replace(&dir.display().to_string(), "[DIR]");
    let shown = durations.replace_all(&shown, "[T]");
    let shown = tokens.replace_all(&shown, "[N] tokens in · [N] out");
    cost.replace_all(&shown, "$[C]").into_owned()
}

/// The environment of a conversation in `dir` with the scripted model playing `script`, no
/// configuration file, and the history and home in `dir`.
fn scripted_conversation(dir: &Path, script: &str) -> [(&'static str, String); 4] {
    let path = dir.join("script.yaml");
    std::fs::write(&path, script).unwrap();
    [
        ("QILIN_MODEL", format!("scripted:{}", path.display())),
        ("QILIN_CONFIG", dir.join("none.toml").display().to_string()),
        (
            "QILIN_HISTORY",
            dir.join("history.txt").display().to_string(),
        ),
        ("HOME", dir.display().to_string()),
    ]
}

const SCRIPT: &str = r#"
turns:
  - say: "I will ask you **one thing** before I change anything."
    calls:
      - tool: question
        args:
          questions:
            - id: scope
              question: Which part should I fix?
              options: [the parser, the renderer]
  - say: "The renderer it is. Publishing the branch first."
    calls:
      - tool: bash
        args: {command: "git push origin main"}
  - say: "Understood: no push. Waiting for the build instead."
    calls:
      - tool: bash
        args: {command: "sleep 30; echo $((6 * 7)) checks passed, and a long line of output after them"}
  - say: "Stopped."
"#;

#[test]
fn a_newcomer_converses_answers_a_question_denies_an_approval_interrupts_and_resizes() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("AGENTS.md"), "Keep changes small.\n").unwrap();
    let script = dir.path().join("script.yaml");
    std::fs::write(&script, SCRIPT).unwrap();
    // The configuration prices the model: each turn shows its cost.
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[prices.\"scripted/{}\"]\ninput = 3.0\noutput = 15.0\n",
            script.display()
        ),
    )
    .unwrap();
    let envs = [
        ("QILIN_MODEL", format!("scripted:{}", script.display())),
        ("QILIN_CONFIG", config.display().to_string()),
        (
            "QILIN_HISTORY",
            dir.path().join("history.txt").display().to_string(),
        ),
        ("HOME", dir.path().display().to_string()),
    ];
    let terminal = Terminal::start(&repo, &["--no-sandbox"], &envs, 80);

    let banner = terminal.wait_for_prompt();
    assert!(
        banner.contains("Qilin · agent coder · model scripted:"),
        "{banner}"
    );

    // A slash command is answered here, not sent to the model.
    terminal.type_keys("/frobnicate\r");
    terminal.wait_for("unknown command /frobnicate");

    terminal.type_keys("fix the flaky test\r");
    let asked = terminal.wait_for("number>");
    assert!(asked.contains("I will ask you one thing"), "{asked}");
    assert!(asked.contains("1) the parser"), "{asked}");
    terminal.type_keys("2\r");

    // The model's text and the call come before the approval, with the command in view.
    let approval = terminal.wait_for("Esc stop");
    let text = approval
        .find("Publishing the branch")
        .expect("the text shows");
    let call = approval
        .find("? Run command git push")
        .expect("the call shows");
    let preview = approval
        .find("$ git push origin main")
        .expect("the command shows");
    assert!(text < call && call < preview, "{approval}");
    assert!(
        approval.contains("yes, `git push` this session"),
        "{approval}"
    );
    terminal.type_keys("m");
    terminal.wait_for("what should the model do instead?");
    terminal.type_keys("do not push\r");
    let denied = terminal.wait_for("Waiting for the build");
    assert!(
        denied.contains("⊘ Run command git push origin main"),
        "{denied}"
    );
    assert!(denied.contains("do not push"), "{denied}");

    // A long-running command draws a live line; widening and narrowing the terminal redraws
    // it; what is typed meanwhile is kept; Esc interrupts it.
    terminal.wait_for("Run command sleep 30");
    std::thread::sleep(Duration::from_millis(400));
    terminal.resize(120);
    std::thread::sleep(Duration::from_millis(400));
    terminal.type_keys("then run the linter");
    terminal.resize(60);
    std::thread::sleep(Duration::from_millis(400));
    let running = terminal.rows();
    assert!(
        !running.contains("then run the linter"),
        "not echoed:\n{running}"
    );
    terminal.type_keys("\x1b");
    let interrupted = terminal.wait_for("■ interrupted");
    assert_eq!(
        interrupted.matches("Run command sleep 30").count(),
        1,
        "no stale live line:\n{interrupted}"
    );
    let screen = terminal.wait_until("the typed text back at the prompt", |s| {
        s.lines().last() == Some("› then run the linter")
    });
    assert!(
        !screen.contains("42 checks passed"),
        "the command was stopped:\n{screen}"
    );
    let shown = stable(&screen, dir.path());
    // The draft is sent as it is.
    terminal.type_keys("\r");
    terminal.wait_for("Stopped.");
    terminal.wait_for_prompt();
    terminal.type_keys("/cost\r");
    // The sandbox warning says "this session:" too; the summary's line begins with it.
    let cost = terminal.wait_until("the session's cost", |s| {
        s.lines().any(|l| l.starts_with("this session:"))
    });
    let cost = cost
        .lines()
        .find(|l| l.starts_with("this session:"))
        .unwrap();
    assert!(
        regex::Regex::new(r"^this session: [\d,]+ tokens in · [\d,]+ out · \$\d+\.\d{4}$")
            .unwrap()
            .is_match(cost),
        "{cost}"
    );
    terminal.wait_for_prompt();
    terminal.type_keys("/exit\r");
    assert_eq!(terminal.exit_code(), 0);
    insta::assert_snapshot!("conversation_at_80_120_then_60_columns", shown);
}

#[test]
fn the_demo_on_a_terminal_leaves_no_line_behind_at_40_80_and_200_columns() {
    for columns in [40u16, 80, 200] {
        let dir = tempfile::tempdir().unwrap();
        let envs = [(
            "QILIN_CONFIG",
            dir.path().join("none.toml").display().to_string(),
        )];
        let mut terminal = Terminal::start(dir.path(), &["demo", "--no-sandbox"], &envs, columns);
        let deadline = Instant::now() + Duration::from_secs(90);
        let status = loop {
            if let Some(status) = terminal.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the demo did not end:\n{}",
                terminal.rows()
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        // What the process wrote last reaches the screen.
        terminal
            .output_ended
            .recv_timeout(Duration::from_secs(30))
            .expect("the terminal's output ends after qilin exits");
        let screen = terminal.rows();
        assert_eq!(status.exit_code(), 0, "{columns}:\n{screen}");
        for frame in [
            "⠋",
            "⠙",
            "⠹",
            "⠸",
            "⠼",
            "⠴",
            "⠦",
            "⠧",
            "⠇",
            "⠏",
            "thinking…",
        ] {
            assert!(
                !screen.contains(frame),
                "{columns}: {frame} left behind:\n{screen}"
            );
        }
        assert_eq!(
            screen.matches("Run command sh scripts/check.sh").count(),
            1,
            "{columns}:\n{screen}"
        );
        // The first step's two calls run at once and may end in either order.
        for call in ["\n✓ Find files src/**/*.py", "\n✓ Search TODO in src"] {
            assert_eq!(screen.matches(call).count(), 1, "{columns}:\n{screen}");
        }
        let from = screen
            .find("Now the sales data")
            .expect("the second step shows");
        insta::assert_snapshot!(
            format!("demo_at_{columns}_columns"),
            stable(&screen[from..], dir.path())
        );
    }
}

const GRANT_SCRIPT: &str = r#"
turns:
  - say: "Publishing the branch."
    calls:
      - tool: bash
        args: {command: "git push origin main"}
  - calls:
      - tool: bash
        args: {command: "git push origin main --force-with-lease"}
  - say: "Reading the release notes."
    calls:
      - tool: web_fetch
        args: {url: "http://127.0.0.1:9/notes"}
  - say: "never reached"
"#;

#[test]
fn a_session_grant_stops_the_asking_esc_stops_the_turn_and_ctrl_c_twice_quits() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status();
    assert!(init.is_ok_and(|s| s.success()), "git init works");
    let envs = scripted_conversation(dir.path(), GRANT_SCRIPT);
    let terminal = Terminal::start(&repo, &["--no-sandbox"], &envs, 100);
    terminal.wait_for_prompt();
    terminal.type_keys("publish it\r");
    terminal.wait_for("Esc stop");
    terminal.type_keys("a");
    terminal.wait_for("✓ allowed for this session");

    // The second push is covered by the grant: it runs without asking; the fetch asks.
    let asked = terminal.wait_until("a second approval", |s| s.matches("Esc stop").count() == 2);
    assert_eq!(
        asked.matches("? Run command git push").count(),
        1,
        "asked once:\n{asked}"
    );
    assert!(
        asked.contains("Run command git push origin main --force-with-lease"),
        "{asked}"
    );
    assert!(
        asked.contains("127.0.0.1:9/notes"),
        "the address shows:\n{asked}"
    );
    terminal.type_keys("\x1b");
    terminal.wait_for("⊘ denied; the turn stops");
    let stopped = terminal.wait_for("■ interrupted");
    assert!(!stopped.contains("never reached"), "{stopped}");

    // At the prompt, Ctrl-C clears the line, and twice quits.
    terminal.wait_for_prompt();
    terminal.type_keys("a draft");
    terminal.wait_for("› a draft");
    terminal.type_keys("\x03");
    terminal.wait_for("(Ctrl-C again or Ctrl-D to quit)");
    terminal.type_keys("\x03");
    assert_eq!(terminal.exit_code(), 0);
}

const SLOW_SCRIPT: &str = r#"
chunk_delay_ms: 100
turns:
  - calls:
      - tool: grep
        args: {pattern: "TODO", path: "src", glob: "**/*.rs", output_mode: "files_with_matches"}
  - think: "The search found nothing under src, so the notes must live somewhere else; before I look further I should think about where a project like this keeps its notes, perhaps in docs or in the issue tracker, and what the user meant by todos in the first place."
    say: "never reached"
"#;

#[test]
fn a_call_being_written_shows_its_verb_and_esc_stops_the_model_while_it_thinks() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let envs = scripted_conversation(dir.path(), SLOW_SCRIPT);
    let terminal = Terminal::start(&repo, &["--no-sandbox"], &envs, 80);
    terminal.wait_for_prompt();
    terminal.type_keys("find the todos\r");

    // While the model writes the call, its spinner says "Search", as the call's line will.
    let spinners = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let preparing = terminal.wait_until("a spinner naming the search", |screen| {
        screen
            .lines()
            .any(|line| line.starts_with(spinners) && line.contains("Search TODO"))
    });
    assert!(!preparing.contains("grep"), "{preparing}");
    terminal.wait_for("✓ Search TODO in src");

    // Esc while the model thinks stops the turn; the conversation goes on.
    terminal.wait_for("thinking…");
    terminal.type_keys("\x1b");
    let stopped = terminal.wait_for("■ interrupted");
    assert!(!stopped.contains("never reached"), "{stopped}");
    let screen = terminal.wait_for_prompt();
    assert!(!screen.contains("thinking…"), "{screen}");
    terminal.type_keys("/exit\r");
    assert_eq!(terminal.exit_code(), 0);
}

#[test]
fn compact_summarises_the_conversation_and_says_how_much_smaller_it_became() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let script = dir.path().join("script.yaml");
    std::fs::write(
        &script,
        "turns:\n  - say: \"The answer is 42, and here is a long explanation of why it is 42 and \
         not 41 or 43, which takes many words to say.\"\n  - say: \"**Goal**: the answer. \
         **Done**: it is 42.\"\n  - say: \"Still 42.\"\n",
    )
    .unwrap();
    let envs = [
        ("QILIN_MODEL", format!("scripted:{}", script.display())),
        (
            "QILIN_CONFIG",
            dir.path().join("none.toml").display().to_string(),
        ),
        (
            "QILIN_HISTORY",
            dir.path().join("history.txt").display().to_string(),
        ),
        ("HOME", dir.path().display().to_string()),
    ];
    let terminal = Terminal::start(&repo, &["--no-sandbox"], &envs, 100);
    terminal.wait_for_prompt();
    terminal.type_keys("/help\r");
    terminal.wait_for("/compact         summarise the conversation so far");

    // Nothing to compact before the first turn.
    terminal.type_keys("/compact\r");
    terminal.wait_for("there is nothing to compact");
    terminal.type_keys("what is the answer?\r");
    terminal.wait_for("The answer is 42");
    terminal.wait_for_prompt();

    terminal.type_keys("/compact\r");
    let compacted = terminal.wait_for("conversation compacted:");
    let line = compacted
        .lines()
        .find(|line| line.contains("conversation compacted:"))
        .unwrap();
    let sizes = regex::Regex::new(r"~([\d,]+) → ~([\d,]+) tokens a request").unwrap();
    let found = sizes.captures(line).unwrap_or_else(|| panic!("{line}"));
    let number = |i: usize| found[i].replace(',', "").parse::<u64>().unwrap();
    assert!(number(2) < number(1), "{line}");
    assert!(
        !compacted.contains("compacting the conversation…"),
        "the live line is gone:\n{compacted}"
    );

    // The conversation goes on from the summary; compacting again has nothing new.
    terminal.type_keys("/compact\r");
    terminal.wait_for("no turn has run since the session began or since its last compaction");
    terminal.type_keys("and now?\r");
    terminal.wait_for("Still 42.");
    terminal.wait_for_prompt();
    terminal.type_keys("/exit\r");
    assert_eq!(terminal.exit_code(), 0);
}

#[test]
fn a_goal_set_with_slash_goal_runs_turn_after_turn_until_it_stalls_then_clears() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    // Two different answers, then the script's own last answer again and again: three turns
    // in a row that change nothing and end the same way.
    let envs = scripted_conversation(
        dir.path(),
        "turns:\n  - say: \"Looking at the layout first.\"\n  - say: \"Reading the tests next.\"\n",
    );
    let terminal = Terminal::start(&repo, &["--no-sandbox"], &envs, 120);
    terminal.wait_for_prompt();
    terminal.type_keys("/goal budget lots\r");
    terminal.wait_for("/goal budget needs a positive number of tokens");
    terminal.type_keys("/goal Tidy the repository\r");
    terminal.wait_for("goal · active — Tidy the repository · 0 tokens, 0 s, 0 turns");
    terminal.wait_for("Looking at the layout first.");
    terminal.wait_for("Reading the tests next.");
    let stalled = terminal.wait_for("goal · paused (stalled) — Tidy the repository");
    assert!(stalled.contains("5 turns"), "{stalled}");
    terminal.wait_for_prompt();
    terminal.type_keys("/goal\r");
    terminal.wait_until("the goal shown again", |rows| {
        rows.matches("goal · paused (stalled) — Tidy the repository")
            .count()
            >= 2
    });
    terminal.type_keys("/goal clear\r");
    terminal.wait_for("goal · cleared — Tidy the repository");
    terminal.wait_for_prompt();
    terminal.type_keys("/exit\r");
    assert_eq!(terminal.exit_code(), 0);
}

/// On a terminal, `qilin mcp list` in a repository whose `.qilin/mcp.yaml` is not trusted asks
/// first, showing what each server would run: no starts nothing; yes trusts the file
/// (remembered: the next list does not ask) and lists the servers.
#[test]
fn a_repositorys_mcp_servers_are_asked_about_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let started = dir.path().join("started");
    std::fs::create_dir_all(repo.join(".qilin")).unwrap();
    std::fs::write(
        repo.join(".qilin/mcp.yaml"),
        format!(
            "mcp_servers:\n  probe:\n    command: sh\n    args: [-c, 'touch {}']\n",
            started.display()
        ),
    )
    .unwrap();
    let envs = [
        (
            "XDG_DATA_HOME",
            dir.path().join("data").display().to_string(),
        ),
        ("HOME", dir.path().display().to_string()),
    ];
    let refusing = Terminal::start(&repo, &["mcp", "list"], &envs, 100);
    let asked = refusing.wait_for("[y/N]");
    assert!(
        asked.contains(".qilin/mcp.yaml declares MCP servers that Qilin would start")
            && asked.contains("probe: sh -c touch"),
        "{asked}"
    );
    refusing.type_keys("n\r");
    refusing.wait_for("not started: its file is not trusted");
    assert!(!started.exists(), "no starts nothing");

    let trusting = Terminal::start(&repo, &["mcp", "list"], &envs, 100);
    trusting.wait_for("[y/N]");
    trusting.type_keys("y\r");
    trusting.wait_for("probe  unavailable");
    let trusted = trusting.rows();
    assert!(!trusted.contains("not trusted"), "{trusted}");
    assert!(started.exists(), "yes starts it");

    let remembered = Terminal::start(&repo, &["mcp", "list"], &envs, 100);
    let shown = remembered.wait_for("probe  unavailable");
    assert!(!shown.contains("[y/N]"), "remembered: {shown}");
}
