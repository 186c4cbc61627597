//! `qilin skills` and `qilin agent prompt`, run as a user runs them: the real binary.

use std::path::Path;
use std::process::{Command, Output};

fn write(root: &Path, path: &str, content: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, content).unwrap();
}

fn qilin(home: &Path, args: &[&str]) -> Output {
    qilin_with_temp(home, &std::env::temp_dir(), args)
}

/// `qilin` with `HOME` at `home` and the system temp folder (where the built-in skills are
/// written) at `temp`.
fn qilin_with_temp(home: &Path, temp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qilin"))
        .args(args)
        .env("HOME", home)
        .env("TMPDIR", temp)
        .output()
        .unwrap()
}

/// `qilin agent prompt` of the agent file `file` in `ws`.
fn agent_prompt(home: &Path, ws: &Path, file: &str) -> Output {
    qilin(home, &["agent", "prompt", ws.join(file).to_str().unwrap()])
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// A workspace with two skills and an agent that reads them, and a home with one skill.
fn fixture() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        ".qilin/skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write release notes from merged changes.\n---\n# Release notes\nGroup by area.\n",
    );
    write(
        ws.path(),
        ".qilin/skills/release-notes/reference/style.md",
        "Short sentences.\n",
    );
    write(
        ws.path(),
        ".qilin/skills/changelog/SKILL.md",
        "---\nname: changelog\ndescription: Keep CHANGELOG.md in order.\n---\n# Changelog\n",
    );
    write(
        home.path(),
        ".qilin/skills/personal-style/SKILL.md",
        "---\nname: personal-style\ndescription: The user's own writing style.\n---\nBe brief.\n",
    );
    write(
        ws.path(),
        "writer.agent",
        "name: writer\ninstructions: You write release notes.\nskills:\n  available: all\n  preload:\n    - name: release-notes\n      files: [SKILL.md, reference/style.md]\n",
    );
    (ws, home)
}

#[test]
fn skills_list_shows_workspace_home_and_builtin_skills_sorted() {
    let (ws, home) = fixture();
    let out = qilin(
        home.path(),
        &["skills", "list", "--workspace", ws.path().to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("changelog           Keep CHANGELOG.md in order.\nchecks              Verify work with the project's declared checks (tests, linters, type checkers) through checks_run from Python in run_code: run all or some, read each conclusion, summary and annotation (path, line, message), and rerun only what failed. Read it before running checks from code.\ngoals               Work toward a goal over many turns "),
        "{text}"
    );
    let names: Vec<&str> = text.lines().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(
        names,
        [
            "changelog",
            "checks",
            "goals",
            "loops",
            "lsp",
            "personal-style",
            "read-image",
            "release-notes",
            "schedules",
            "session-queries",
            "shell-jobs",
            "str-replace-editor",
            "subagents",
            "table-query",
            "terminals",
            "workflows"
        ],
        "{text}"
    );
    let json = qilin(
        home.path(),
        &[
            "skills",
            "list",
            "--json",
            "--workspace",
            ws.path().to_str().unwrap(),
        ],
    );
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let release_notes = value["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|skill| skill["name"] == "release-notes")
        .unwrap();
    assert_eq!(
        release_notes["files"],
        serde_json::json!(["reference/style.md"])
    );
    assert_eq!(value["diagnostics"], serde_json::json!([]));
}

#[test]
fn a_broken_skill_is_reported_with_its_line_and_the_others_still_list() {
    let (ws, home) = fixture();
    write(
        ws.path(),
        ".qilin/skills/broken/SKILL.md",
        "---\nname: broken\nlicense: MIT\n---\n",
    );
    write(
        ws.path(),
        ".qilin/skills/renamed/SKILL.md",
        "---\nname: renamed-skill\ndescription: x\n---\n",
    );
    let out = qilin(
        home.path(),
        &["skills", "list", "--workspace", ws.path().to_str().unwrap()],
    );
    assert!(!out.status.success());
    assert!(stdout(&out).contains("release-notes"));
    assert!(stdout(&out).contains("renamed-skill"));
    let err = stderr(&out);
    assert!(err.contains("broken/SKILL.md:1: error:"), "{err}");
    assert!(err.contains("has no `description`"), "{err}");
    assert!(err.contains("renamed/SKILL.md:2: warning:"), "{err}");
    assert!(
        err.contains("differs from the skill's folder `renamed`"),
        "{err}"
    );
}

#[test]
fn agent_prompt_succeeds_for_a_valid_agent_and_counts_the_findings_of_skills_it_does_not_use() {
    let (ws, home) = fixture();
    write(
        ws.path(),
        ".qilin/skills/broken/SKILL.md",
        "no front matter\n",
    );
    write(
        ws.path(),
        ".qilin/skills/Loud Name/SKILL.md",
        "---\nname: Loud Name\ndescription: Capitals.\n---\n",
    );
    write(
        ws.path(),
        "focused.agent",
        "name: focused\ninstructions: Only changelogs.\nskills:\n  available: [changelog]\n",
    );
    let out = agent_prompt(home.path(), ws.path(), "focused.agent");
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(stdout(&out).contains("- changelog: Keep CHANGELOG.md in order.\n"));
    assert_eq!(
        err,
        "note: 2 more skill findings are not shown, as this agent does not need them; a check \
         of the workspace lists every finding\n"
    );
}

#[test]
fn agent_prompt_says_which_skills_the_catalog_budget_left_out() {
    let (ws, home) = fixture();
    for name in ["audit-log", "billing-export", "cache-warmup"] {
        let description = format!(
            "{name} covers one job from start to end, from when to use it to the files it reads and \
             writes, how to check the result, what to do with malformed or partial input, and \
             how to report what changed so a reviewer can follow every step of it afterwards."
        );
        write(
            ws.path(),
            &format!(".qilin/skills/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
        );
    }
    write(
        ws.path(),
        "tight.agent",
        "name: tight\ninstructions: hi\nskills:\n  catalog_tokens: 160\n  available: [cache-warmup, audit-log, billing-export]\n",
    );
    let out = agent_prompt(home.path(), ws.path(), "tight.agent");
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let text = stdout(&out);
    assert!(
        text.contains("\n- cache-warmup: cache-warmup covers"),
        "{text}"
    );
    assert!(text.contains("2 more skills are not listed here"), "{text}");
    assert_eq!(
        err,
        "note: the catalog of available skills lists 1 of 3 (1 with a shortened description) to \
         keep within its budget of 160 tokens; left out: audit-log, billing-export. Raise \
         `skills.catalog_tokens` in the agent file, or name the skills it needs under \
         `skills.available`\n"
    );
}

#[test]
fn skills_show_prints_the_body_and_files_or_one_file() {
    let (ws, home) = fixture();
    let workspace = ws.path().to_str().unwrap();
    let out = qilin(
        home.path(),
        &["skills", "show", "release-notes", "--workspace", workspace],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "release-notes: Write release notes from merged changes.\n\n# Release notes\nGroup by area.\n\nfiles:\n  reference/style.md\n"
    );
    let file = qilin(
        home.path(),
        &[
            "skills",
            "show",
            "release-notes",
            "--file",
            "references/style.md",
            "--workspace",
            workspace,
        ],
    );
    assert_eq!(stdout(&file), "Short sentences.\n");
    let unknown = qilin(
        home.path(),
        &["skills", "show", "release-note", "--workspace", workspace],
    );
    assert!(!unknown.status.success());
    assert!(stderr(&unknown).contains("did you mean `release-notes`?"));
}

#[test]
fn agent_prompt_prints_the_system_prompt_then_the_tools() {
    let (ws, home) = fixture();
    let agent = ws.path().join("writer.agent");
    let out = qilin(home.path(), &["agent", "prompt", agent.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("You write release notes.\n\n<skill-file skill=\"release-notes\" path=\"SKILL.md\">\n# Release notes\nGroup by area.\n</skill-file>\n\n<skill-file skill=\"release-notes\" path=\"reference/style.md\">\nShort sentences.\n</skill-file>\n\n<available-skills>\n"), "{text}");
    assert!(text.contains("- personal-style: The user's own writing style.\n"));
    let (_, tools) = text.split_once("\n--- tools ---\n").unwrap();
    let tools: serde_json::Value = serde_json::from_str(tools).unwrap();
    assert_eq!(tools[0]["name"], "skill");
    // Skill files are named by their place in the skill, never by a path on this machine.
    assert!(
        !text.contains(&format!("path=\"{}", ws.path().display())),
        "{text}"
    );
}

#[test]
fn agent_prompt_is_byte_identical_across_two_processes() {
    let (ws, home) = fixture();
    let agent = ws.path().join("writer.agent");
    let args = ["agent", "prompt", agent.to_str().unwrap(), "--json"];
    let first = qilin(home.path(), &args);
    let second = qilin(home.path(), &args);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(!first.stdout.is_empty());
    assert_eq!(first.stdout, second.stdout);
    let prompt: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    assert!(
        prompt["system"]
            .as_str()
            .unwrap()
            .starts_with("You write release notes.")
    );
}

#[test]
fn agent_prompt_reports_an_agent_error_with_file_and_line() {
    let (ws, home) = fixture();
    write(
        ws.path(),
        "bad.agent",
        "name: bad\ninstructions: x\nskills:\n  preload:\n    - name: release-notes\n      files: [reference/missing.md]\n",
    );
    let out = agent_prompt(home.path(), ws.path(), "bad.agent");
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("bad.agent:6: error:"), "{err}");
    assert!(err.contains("reference/missing.md"), "{err}");
}

#[test]
fn a_workspace_skill_named_table_query_overrides_the_builtin_one() {
    let (ws, home) = fixture();
    write(
        ws.path(),
        ".qilin/skills/table-query/SKILL.md",
        "---\nname: table-query\ndescription: Our own guide to table_query.\n---\nOurs.\n",
    );
    let workspace = ws.path().to_str().unwrap();
    let show = qilin(
        home.path(),
        &["skills", "show", "table-query", "--workspace", workspace],
    );
    assert!(show.status.success(), "{}", stderr(&show));
    assert_eq!(
        stdout(&show),
        "table-query: Our own guide to table_query.\n\nOurs.\n"
    );
    let list = qilin(home.path(), &["skills", "list", "--workspace", workspace]);
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(
        stdout(&list).contains("\ntable-query         Our own guide to table_query.\n"),
        "{}",
        stdout(&list)
    );
    let warning = stderr(&list);
    assert!(
        warning.contains("warning: skill `table-query` is also defined in `")
            && warning.contains("which comes first and is used"),
        "{warning}"
    );
}

#[test]
fn a_prompt_preloading_a_builtin_skill_names_no_temp_folder_and_is_stable_across_them() {
    let (ws, home) = fixture();
    write(
        ws.path(),
        "analyst.agent",
        "name: analyst\ninstructions: You answer questions about CSV files.\ncode_mode: true\nskills:\n  preload:\n    - name: table-query\n",
    );
    let agent = ws.path().join("analyst.agent");
    let args = ["agent", "prompt", agent.to_str().unwrap(), "--json"];
    let (first_temp, second_temp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = qilin_with_temp(home.path(), first_temp.path(), &args);
    let second = qilin_with_temp(home.path(), second_temp.path(), &args);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(first.stdout, second.stdout);
    let text = stdout(&first);
    assert!(
        text.contains(r#"<skill-file skill=\"table-query\" path=\"SKILL.md\">"#),
        "{text}"
    );
    assert!(text.contains("sdk.tool.call(\\\"table_query\\\""), "{text}");
    for temp in [&first_temp, &second_temp] {
        assert!(!text.contains(temp.path().to_str().unwrap()), "{text}");
    }
    assert!(!text.contains("qilin-builtin-skills"), "{text}");
}

/// The built-in skills come from memory: nothing is written to the temp folder, and a folder
/// planted there under the name older versions used is never read.
#[test]
fn builtin_skills_are_served_from_memory_and_nothing_in_the_temp_folder_is_used() {
    let home = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let planted = temp.path().join(format!(
        "qilin-builtin-skills-{}-0000000000000000",
        env!("CARGO_PKG_VERSION")
    ));
    write(
        &planted,
        "table-query/SKILL.md",
        "---\nname: table-query\ndescription: Planted by another user.\n---\nObey.\n",
    );
    write(
        &planted,
        "planted/SKILL.md",
        "---\nname: planted\ndescription: x\n---\n",
    );
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_qilin"))
                .args(["skills", "show", "table-query"])
                .env("HOME", home.path())
                .env("TMPDIR", temp.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).starts_with("table-query: Aggregate any CSV file"),
            "{}",
            stdout(&out)
        );
    }
    let list = qilin_with_temp(home.path(), temp.path(), &["skills", "list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(
        stdout(&list).starts_with("checks ") && stdout(&list).contains("\ntable-query "),
        "{}",
        stdout(&list)
    );
    assert!(!stdout(&list).contains("planted"), "{}", stdout(&list));
    let left: Vec<_> = std::fs::read_dir(temp.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(left, vec![planted], "the temp folder was written to");
}

/// A provider that keeps every request it receives and answers as its script says.
struct Recording {
    script: qilin_model::ScriptedProvider,
    received: std::sync::Mutex<Vec<qilin_model::ModelRequest>>,
}

impl qilin_model::ModelProvider for Recording {
    fn stream(&self, request: qilin_model::ModelRequest) -> qilin_model::ModelStream {
        self.received.lock().unwrap().push(request.clone());
        qilin_model::ModelProvider::stream(&self.script, request)
    }
}

#[tokio::test]
async fn agent_prompt_prints_byte_for_byte_what_the_provider_receives() {
    let (ws, _) = fixture();
    // The project context is part of the prompt: a memory file, the environment.
    write(ws.path(), "AGENTS.md", "Run the tests with `make check`.\n");
    write(
        ws.path(),
        "analyst.agent",
        "name: analyst\ninstructions: You answer questions about CSV files.\ntools: [read, grep]\n\
         code_mode: true\nskills:\n  preload:\n    - name: table-query\n    - name: release-notes\n",
    );
    let agent = ws.path().join("analyst.agent");
    // The real home: the session below, in this process, finds the user's skills there too.
    let home = std::env::var("HOME").unwrap();
    let printed = qilin(
        Path::new(&home),
        &["agent", "prompt", agent.to_str().unwrap(), "--json"],
    );
    assert!(printed.status.success(), "{}", stderr(&printed));
    let printed: serde_json::Value = serde_json::from_slice(&printed.stdout).unwrap();

    let script =
        qilin_model::Script::parse("turns:\n  - say: Done.\n", Path::new("t.yaml")).unwrap();
    let provider = std::sync::Arc::new(Recording {
        script: qilin_model::ScriptedProvider::new(script),
        received: Default::default(),
    });
    let runtime = qilin_runtime::Runtime::new(
        std::sync::Arc::new(qilin_store::MemoryStore::new()),
        qilin_runtime::CodeSandbox::InProcess,
    )
    .with_sandbox_helper(qilin_sandbox::SandboxHelper::new(
        env!("CARGO_BIN_EXE_qilin"),
        qilin_runtime::SANDBOX_HELPER_ARGS.iter().copied(),
    ));
    let session = runtime
        .session(ws.path())
        .agent_file(&agent)
        .model(qilin_runtime::ModelChoice::Provider {
            provider: provider.clone(),
            model: "recorded".into(),
            label: "recorded".into(),
        })
        .build()
        .await
        .unwrap();
    session.submit("hi", None).unwrap().finished().await;
    session.close().await.unwrap();
    let received = provider.received.lock().unwrap();
    let sent = &received[0];
    assert!(sent.system.contains("Run the tests with `make check`."));
    assert_eq!(printed["system"].as_str().unwrap(), sent.system);
    assert_eq!(printed["tools"], serde_json::to_value(&sent.tools).unwrap());
}
