//! `.agent` files: what loads, and the error each mistake gives, with its line.

mod common;

use common::{discover_workspace, registry_with, write_files, write_skill};
use qilin_skill::{
    AgentError, AgentFile, AvailableSkills, Diagnostic, DiagnosticKind, Loaded, SkillDiscovery,
};
use std::path::Path;

struct Workspace {
    dir: tempfile::TempDir,
    discovery: SkillDiscovery,
}

fn workspace() -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let skill = write_skill(
        dir.path(),
        "sales-data",
        "Query sales figures with the table_query tool.",
        "# Sales\n\nCall `sdk.tool.call(\"table_query\", {\"path\": \"sales.csv\"})`.\n",
    );
    write_files(
        &skill,
        &[("reference/regions.md", "# Regions\nemea, apac\n")],
    );
    write_skill(dir.path(), "code-search", "Find code.", "# Search\n");
    let discovery = discover_workspace(dir.path());
    assert!(
        discovery.diagnostics.is_empty(),
        "{:#?}",
        discovery.diagnostics
    );
    Workspace { dir, discovery }
}

impl Workspace {
    fn load(&self, text: &str) -> Result<Loaded<AgentFile>, AgentError> {
        let path = self.dir.path().join("test.agent");
        std::fs::write(&path, text).unwrap();
        let registry = registry_with(&self.discovery);
        AgentFile::load(&path, &self.discovery.skills, &registry)
    }

    fn error(&self, text: &str) -> Diagnostic {
        let err = self.load(text).unwrap_err();
        let [diagnostic] = err.diagnostics.as_slice() else {
            panic!("expected one error: {err}");
        };
        assert!(diagnostic.path.ends_with("test.agent"));
        diagnostic.clone()
    }
}

#[test]
fn a_complete_agent_file_loads_with_every_section() {
    let ws = workspace();
    write_files(
        ws.dir.path(),
        &[("prompts/analyst.md", "You analyse sales.\n")],
    );
    let loaded = ws
        .load(
            "name: analyst\ndescription: Answers sales questions\nmodel: gpt-5\ninstructions_file: prompts/analyst.md\ntools: [read, grep]\nskills:\n  available: [sales-data]\n  preload:\n    - name: sales-data\n      files: [SKILL.md, references/regions.md]\ncode_mode: true\nlimits:\n  max_steps: 30\n  code:\n    wall_time_ms: 20000\n    max_tool_calls: 50\nreview:\n  default: allow\n  rules:\n    - tool: bash\n      when: {command: \"rm\\\\s+-rf\"}\n      decision: deny\n",
        )
        .unwrap();
    assert!(loaded.warnings.is_empty(), "{:#?}", loaded.warnings);
    let agent = loaded.value;
    assert_eq!(agent.instructions, "You analyse sales.");
    assert_eq!(agent.tools, ["read", "grep"]);
    assert_eq!(
        agent.available_skills,
        AvailableSkills::Named(vec!["sales-data".into()])
    );
    assert_eq!(agent.preload.len(), 2);
    assert!(agent.preload[0].content.starts_with("# Sales"));
    assert_eq!(agent.preload[1].path, "references/regions.md");
    assert_eq!(agent.preload[1].content, "# Regions\nemea, apac\n");
    assert!(agent.code_mode);
    assert_eq!(agent.limits.max_steps, Some(30));
    assert_eq!(agent.limits.code.wall_time_ms, 20000);
    assert_eq!(agent.limits.code.max_tool_calls, 50);
    assert_eq!(
        agent.limits.code.memory_mb,
        qilin_tool::CodeLimits::default().memory_mb,
        "an absent limit keeps its default"
    );
    assert!(matches!(
        agent
            .policy
            .reviewer()
            .decide("bash", &serde_json::json!({"command": "rm -rf /"})),
        (qilin_tool::Verdict::Deny, _)
    ));
}

#[test]
fn an_unknown_tool_is_an_error_on_its_line_with_the_closest_names() {
    let ws = workspace();
    let error = ws.error("name: a\ninstructions: hi\ntools:\n  - read\n  - gerp\n");
    assert_eq!(error.line, Some(5));
    assert!(error.message.contains("`gerp`"), "{error}");
    assert!(error.message.contains("did you mean `grep`?"), "{error}");
}

#[test]
fn a_code_mode_only_tool_under_tools_is_left_out_with_a_warning_that_says_how_to_reach_it() {
    let ws = workspace();
    let loaded = ws
        .load("name: a\ninstructions: hi\ntools: [read, table_query]\ncode_mode: true\n")
        .unwrap();
    assert_eq!(loaded.value.tools, ["read"]);
    let [warning] = loaded.warnings.as_slice() else {
        panic!("expected one warning: {:#?}", loaded.warnings);
    };
    assert_eq!(warning.kind, DiagnosticKind::CodeModeOnlyTool);
    assert!(!warning.is_error());
    assert_eq!(warning.line, Some(3));
    assert!(
        warning.message.contains("left out of the tools list"),
        "{warning}"
    );
    assert!(warning.message.contains("run_code"), "{warning}");
    assert!(warning.message.contains("skill `sales-data`"), "{warning}");
    // With code mode off the tool cannot be reached at all, and the warning says so.
    let loaded = ws
        .load("name: a\ninstructions: hi\ntools: [table_query]\n")
        .unwrap();
    assert!(loaded.value.tools.is_empty());
    assert!(
        loaded.warnings[0].message.contains("set `code_mode: true`"),
        "{}",
        loaded.warnings[0]
    );
}

#[test]
fn an_unknown_skill_is_an_error_with_suggestions() {
    let ws = workspace();
    let error = ws.error("name: a\ninstructions: hi\nskills:\n  available:\n    - sales-dta\n");
    assert_eq!(error.line, Some(5));
    assert!(
        error.message.contains("did you mean `sales-data`?"),
        "{error}"
    );
    let error =
        ws.error("name: a\ninstructions: hi\nskills:\n  preload:\n    - name: code-serch\n");
    assert_eq!(error.line, Some(5));
    assert!(
        error.message.contains("did you mean `code-search`?"),
        "{error}"
    );
}

#[test]
fn a_preload_file_that_does_not_exist_is_an_error_naming_it() {
    let ws = workspace();
    let error = ws.error(
        "name: a\ninstructions: hi\nskills:\n  preload:\n    - name: sales-data\n      files:\n        - SKILL.md\n        - reference/missing.md\n",
    );
    assert_eq!(error.line, Some(8));
    assert!(error.message.contains("reference/missing.md"), "{error}");
    assert!(error.message.contains("reference/regions.md"), "{error}");
    let escape = ws.error(
        "name: a\ninstructions: hi\nskills:\n  preload:\n    - name: sales-data\n      files: [../code-search/SKILL.md]\n",
    );
    assert!(
        escape.message.contains("leaves the skill folder"),
        "{escape}"
    );
}

#[test]
fn every_error_in_a_file_is_reported_in_line_order() {
    let ws = workspace();
    let err = ws
        .load("name: a\ninstructions: hi\ntools: [nope]\nskills:\n  available: [gone]\n")
        .unwrap_err();
    let lines: Vec<Option<usize>> = err.diagnostics.iter().map(|d| d.line).collect();
    assert_eq!(lines, [Some(3), Some(5)]);
    assert!(err.to_string().contains("test.agent:3: error:"));
}

#[test]
fn unknown_keys_at_every_level_are_warnings_naming_their_lines() {
    let ws = workspace();
    let loaded = ws
        .load("name: a\ninstructions: hi\ntemperature: 0.2\nskills:\n  availble: all\nlimits:\n  code:\n    wall_time: 5\n")
        .unwrap();
    let found: Vec<(Option<usize>, &str)> = loaded
        .warnings
        .iter()
        .map(|w| (w.line, w.message.as_str()))
        .collect();
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!(found[0].0, Some(3));
    assert!(found[0].1.contains("`temperature`"));
    assert_eq!(found[1].0, Some(5));
    assert!(
        found[1].1.contains("did you mean `available`?"),
        "{}",
        found[1].1
    );
    assert_eq!(found[2].0, Some(8));
    assert!(found[2].1.contains("`limits.code.wall_time`"));
}

#[test]
fn a_bad_review_pattern_is_a_load_error_naming_the_rule_line() {
    let ws = workspace();
    let error = ws.error(
        "name: a\ninstructions: hi\nreview:\n  rules:\n    - tool: read\n      decision: allow\n    - tool: bash\n      when: {command: \"(unclosed\"}\n      decision: deny\n",
    );
    assert_eq!(error.line, Some(7));
    assert!(error.message.contains("rule 2"), "{error}");
}

#[test]
fn yaml_and_shape_errors_name_the_line() {
    let ws = workspace();
    let error = ws.error("name: a\ninstructions: hi\ncode_mode: sometimes\n");
    assert_eq!(error.line, Some(3));
    assert!(error.message.contains("code_mode"), "{error}");
    let error = ws.error("name: a\ninstructions: hi\nskills:\n  available: some\n");
    assert_eq!(error.line, Some(4));
    assert!(error.message.contains("write `all` or a list"), "{error}");
    let error = ws.error(
        "name: a\ninstructions: hi\nreview:\n  rules:\n    - tool: x\n      verdict: deny\n",
    );
    assert_eq!(error.line, Some(6));
}

#[test]
fn instructions_are_required_once() {
    let ws = workspace();
    assert!(ws.error("name: a\n").message.contains("no instructions"));
    let both = ws.error("name: a\ninstructions: x\ninstructions_file: y.md\n");
    assert_eq!(both.line, Some(3));
    let missing = ws.error("name: a\ninstructions_file: nowhere.md\n");
    assert!(missing.message.contains("nowhere.md"), "{missing}");
    assert!(missing.message.contains("relative to the agent file"));
}

#[test]
fn an_agent_file_that_does_not_exist_names_its_path() {
    let ws = workspace();
    let registry = registry_with(&ws.discovery);
    let err =
        AgentFile::load(Path::new("/no/such.agent"), &ws.discovery.skills, &registry).unwrap_err();
    assert!(
        err.to_string().starts_with("/no/such.agent: error:"),
        "{err}"
    );
}

#[test]
fn each_agent_mistake_carries_a_kind_that_tells_it_apart_without_reading_the_message() {
    let ws = workspace();
    let errors = [
        (
            "name: a\ninstructions: hi\ntools: [gerp]\n",
            DiagnosticKind::UnknownTool,
        ),
        (
            "name: a\ninstructions: hi\nskills:\n  available: [sales-dta]\n",
            DiagnosticKind::UnknownSkill,
        ),
        (
            "name: a\ninstructions: hi\nskills:\n  preload:\n    - name: code-serch\n",
            DiagnosticKind::UnknownSkill,
        ),
        (
            "name: a\ninstructions: hi\nskills:\n  preload:\n    - name: sales-data\n      files: [reference/missing.md]\n",
            DiagnosticKind::UnreadablePreloadFile,
        ),
        (
            "name: a\ninstructions: hi\ncode_mode: sometimes\n",
            DiagnosticKind::InvalidYaml,
        ),
        ("name: a\n", DiagnosticKind::InvalidAgent),
        (
            "name: a\ninstructions: hi\nreview:\n  rules:\n    - tool: bash\n      when: {command: \"(unclosed\"}\n      decision: deny\n",
            DiagnosticKind::InvalidAgent,
        ),
    ];
    for (text, kind) in errors {
        assert_eq!(ws.error(text).kind, kind, "for {text:?}");
    }
    let loaded = ws
        .load("name: a\ninstructions: hi\ntemperature: 0.2\ntools: [read, read, table_query]\nlimits:\n  code:\n    wall_time_ms: 5\n")
        .unwrap();
    let kinds: Vec<DiagnosticKind> = loaded.warnings.iter().map(|w| w.kind).collect();
    assert_eq!(
        kinds,
        [
            DiagnosticKind::UnknownKey,
            DiagnosticKind::DuplicateTool,
            DiagnosticKind::CodeModeOnlyTool,
            DiagnosticKind::CodeLimitsWithoutCodeMode,
        ],
        "{:#?}",
        loaded.warnings
    );
}

#[test]
fn reasoning_is_an_effort_or_a_token_budget() {
    use qilin_model::{ReasoningEffort, ReasoningSetting};
    let ws = workspace();
    let base = "name: a\ninstructions: hi\n";
    let read = |line: &str| {
        ws.load(&format!("{base}{line}"))
            .expect("the agent loads")
            .value
            .reasoning
    };
    assert_eq!(read(""), None);
    assert_eq!(
        read("reasoning: high\n"),
        Some(ReasoningSetting::Effort(ReasoningEffort::High))
    );
    assert_eq!(
        read("reasoning: 12000\n"),
        Some(ReasoningSetting::BudgetTokens(12_000))
    );
    let error = ws.error(&format!("{base}reasoning: maximum\n"));
    assert_eq!(error.line, Some(3), "{error}");
    assert!(
        error
            .message
            .contains("`maximum` is not a reasoning setting; write `low`, `medium`, `high`"),
        "{error}"
    );
}

#[test]
fn instructions_file_stays_inside_the_agent_workspace() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "TOP SECRET\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        ws.dir.path().join("linked.md"),
    )
    .unwrap();
    let climbing = format!(
        "name: a\ninstructions_file: {}\n",
        "../".repeat(12) + "etc/passwd"
    );
    for text in [
        climbing.as_str(),
        "name: a\ninstructions_file: linked.md\n",
        &format!(
            "name: a\ninstructions_file: {}\n",
            outside.path().join("secret.txt").display()
        ),
    ] {
        let diagnostic = ws.error(text);
        assert!(
            diagnostic
                .message
                .contains("leads outside the agent's workspace"),
            "{}",
            diagnostic.message
        );
    }
    write_files(ws.dir.path(), &[("docs/inside.md", "Stay inside.\n")]);
    let loaded = ws
        .load("name: a\ninstructions_file: docs/../docs/inside.md\n")
        .unwrap();
    assert_eq!(loaded.value.instructions, "Stay inside.");
}

#[test]
fn the_files_section_opts_in_to_writing_qilin_files() {
    let ws = workspace();
    let agent = ws.load("name: a\ninstructions: Hi.\n").unwrap().value;
    assert!(!agent.files.write_qilin_files);
    let loaded = ws
        .load("name: a\ninstructions: Hi.\nfiles:\n  write_qilin_files: true\n")
        .unwrap();
    assert!(loaded.warnings.is_empty(), "{:#?}", loaded.warnings);
    assert!(loaded.value.files.write_qilin_files);
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
fn files_qilin_reads_for_itself_are_bounded_regular_files_never_fifos_or_links() {
    let ws = workspace();
    let root = ws.dir.path();
    // An instructions file, a SKILL.md and `.qilin/mcp.yaml` a repository made FIFOs or huge:
    // each is refused with its path named, nothing waits or reads gigabytes.
    mkfifo(&root.join("prompts/fifo.md"));
    let error = ws.error("name: a\ninstructions_file: prompts/fifo.md\n");
    assert!(error.message.contains("not a regular file"), "{error}");
    std::fs::File::create(root.join("prompts/huge.md"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let error = ws.error("name: a\ninstructions_file: prompts/huge.md\n");
    assert!(error.message.contains("larger than"), "{error}");
    std::fs::create_dir_all(root.join(".qilin/skills/huge")).unwrap();
    std::fs::File::create(root.join(".qilin/skills/huge/SKILL.md"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let discovery = discover_workspace(root);
    let skill_error = discovery
        .diagnostics
        .iter()
        .find(|d| d.path.ends_with("huge/SKILL.md"))
        .expect("the huge skill is reported");
    assert!(skill_error.message.contains("larger than"), "{skill_error}");
    mkfifo(&root.join(".qilin/mcp.yaml"));
    let (servers, errors) = qilin_skill::workspace_mcp_servers(root);
    assert!(servers.is_empty());
    assert!(
        errors[0].message.contains("not a regular file"),
        "{errors:?}"
    );
    // An agent file that is a link to a device is not read through.
    std::os::unix::fs::symlink("/dev/zero", root.join("zero.agent")).unwrap();
    let registry = registry_with(&ws.discovery);
    let err = AgentFile::load(&root.join("zero.agent"), &ws.discovery.skills, &registry)
        .unwrap_err()
        .to_string();
    assert!(err.contains("symbolic link"), "{err}");
}

#[test]
fn an_agent_file_names_its_instructions_file_for_protection() {
    let ws = workspace();
    let root = ws.dir.path().canonicalize().unwrap();
    write_files(&root, &[("prompts/a.md", "Be careful.\n")]);
    let loaded = ws
        .load("name: a\ninstructions_file: prompts/a.md\nfiles: {write_git: true}\n")
        .unwrap();
    assert_eq!(loaded.value.named_files, [root.join("prompts/a.md")]);
    assert!(loaded.value.files.write_git);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    // Read leniently from any agent file of the workspace, loadable or not.
    std::fs::write(
        root.join("other.agent"),
        "name: other\ninstructions_file: prompts/a.md\ntools: [no-such-tool]\n",
    )
    .unwrap();
    assert_eq!(
        qilin_skill::agent_named_files(&root.join("other.agent")),
        [root.join("prompts/a.md")]
    );
    std::fs::write(root.join("bad.agent"), "name: [").unwrap();
    assert!(qilin_skill::agent_named_files(&root.join("bad.agent")).is_empty());
}

#[test]
fn auto_review_mistakes_are_errors_on_their_line() {
    let ws = workspace();
    let error = ws.error(
        "name: a\ninstructions: hi\ntools: [bash]\nreview:\n  rules:\n    - tool: bash\n      decision: auto\n",
    );
    assert_eq!(error.line, Some(7), "{error}");
    assert!(
        error
            .message
            .contains("`decision: auto` needs a reviewer model")
            && error.message.contains("review.auto"),
        "{error}"
    );
    let auto = |rest: &str| {
        format!(
            "name: a\ninstructions: hi\ntools: [bash]\nreview:\n  default: auto\n  auto:\n{rest}"
        )
    };
    let error = ws.error(&auto("    model: scripted:r.yaml\n    timeout: soon\n"));
    assert_eq!(error.line, Some(8), "{error}");
    assert!(error.message.contains("`timeout: soon`"), "{error}");
    let error = ws.error(&auto("    model: gpt-5\n    rules: Only builds.\n"));
    assert_eq!(error.line, Some(7), "{error}");
    assert!(
        error.message.contains("reviewer's model `gpt-5`") && error.message.contains("openai:NAME"),
        "{error}"
    );
    let loaded = ws
        .load(&auto(
            "    model: scripted:r.yaml\n    rules: [\"Only builds.\", \"Never push.\"]\n    timeout: 2m\n",
        ))
        .unwrap();
    let config = loaded.value.review.auto.unwrap();
    assert_eq!(config.rules.text(), "Only builds.\nNever push.");
    assert_eq!(config.timeout(), Ok(std::time::Duration::from_secs(120)));
}
