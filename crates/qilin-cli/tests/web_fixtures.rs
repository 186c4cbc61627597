//! The recorded sessions the web client is developed and tested on: `web/fixtures/*.jsonl`.
//!
//! Each scenario is a real session — the scripted model, the real agent loop, the real
//! execution layer, the built-in tools, `skill`, and `run_code` on Monty — that makes the
//! built-in tools succeed, fail, get denied, time out, be interrupted, spill, run in the
//! background and nest under `run_code`. Its event log is written as JSON lines, and the
//! conversation tree the runtime folds from it beside it (`NAME.tree.json`), so the browser's
//! own fold is checked against the runtime's.
//!
//! What differs between two runs — the temporary workspace's path, the local web server's
//! port, durations, process ids, token estimates and how a live output happened to be cut
//! into `tool.progress` events — is normalised by one generic pass ([`normalise`]); nothing
//! else is touched. The test fails when a file is stale; regenerate them all with
//! `QILIN_UPDATE_FIXTURES=1 cargo test -p qilin-cli --test web_fixtures`.

use futures_util::StreamExt;
use qilin_model::{Script, ScriptedProvider};
use qilin_protocol::{Answer, CallStatus, ConversationTree, Event, EventBody, RequestAsk};
use qilin_runtime::{CodeSandbox, ModelChoice, Runtime, SANDBOX_HELPER_ARGS};
use qilin_sandbox::SandboxHelper;
use qilin_store::MemoryStore;
use qilin_tool::RequestReply;
use qilin_tools::WebFetchConfig;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The workspace every fixture names, in place of the temporary folder it ran in.
const WORKSPACE: &str = "/home/qilin/workspace";
/// The origin of the local web server every fixture names, in place of its real port.
const WEB_ORIGIN: &str = "http://127.0.0.1:8123";
/// The session id, which names the session's data folder.
const SESSION_ID: &str = "fixture";

/// A 12×12 PNG, a checker of two colours.
const LOGO_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x0c, 0x08, 0x02, 0x00, 0x00, 0x00, 0xd9, 0x17, 0xcb,
    0xb0, 0x00, 0x00, 0x00, 0x21, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xb8, 0xe9, 0xaf, 0x0d,
    0x41, 0x5f, 0x9f, 0x9d, 0x80, 0x20, 0x4c, 0x11, 0x06, 0xea, 0x29, 0xc2, 0x23, 0x07, 0x17, 0xa1,
    0xa2, 0xa2, 0x61, 0xed, 0x3b, 0x00, 0x9d, 0x6d, 0x1d, 0x40, 0xaa, 0xf4, 0x7e, 0x86, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// The files of the workspace every scenario starts from.
const WORKSPACE_FILES: &[(&str, &str)] = &[
    (
        "src/report.py",
        "\"\"\"Monthly sales report.\"\"\"\n\nimport csv\n\n\ndef totals(path):\n    \
         # TODO: skip the header row\n    rows = list(csv.reader(open(path)))\n    \
         return {\"Totla\": sum(float(r[2]) for r in rows[1:])}\n\n\ndef main():\n    \
         print(totals(\"data/sales.csv\"))\n",
    ),
    (
        "src/lib.rs",
        "//! Report helpers.\n\n/// Adds two numbers.\npub fn add(a: i64, b: i64) -> i64 {\n    \
         a + b\n}\n\n// TODO: handle overflow\npub fn double(a: i64) -> i64 {\n    add(a, a)\n}\n",
    ),
    (
        "README.md",
        "# Sales report\n\nRun `python src/report.py` to print the totals.\n",
    ),
    (
        "notes/ideas.txt",
        "TODO: chart per region\nmaybe later: export to PDF\n",
    ),
    (
        "data/sales.csv",
        "region,month,amount\nnorth,jan,120.5\nsouth,jan,98\nnorth,feb,130\nsouth,feb,101.25\n",
    ),
    ("assets/broken.png", "this is not an image\n"),
    (
        ".qilin/skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write the release notes of a version from the \
         merged changes.\n---\n\n# Release notes\n\nList the changes since the last tag, group \
         them by kind, and write one line per change. See `reference/style.md` for the wording.\n",
    ),
    (
        ".qilin/skills/release-notes/reference/style.md",
        "# Style\n\n- Start each line with a verb in the past tense.\n- Name the user-visible \
         effect, not the code.\n",
    ),
];

/// Where a turn is interrupted, as a user pressing Ctrl-C would.
#[derive(Clone, Copy)]
enum Interrupt {
    /// When the call's arguments have started streaming (the model streams slowly).
    WhilePreparing(&'static str),
    /// A moment after the call started, once the model's answer has surely ended.
    AfterStart(&'static str),
    /// When the call has shown its first live output.
    AtProgress(&'static str),
}

impl Interrupt {
    /// How long after `event` the turn is interrupted, when `event` is the one waited for.
    fn delay_after(self, event: &Event) -> Option<Duration> {
        let fires = match (self, &event.body) {
            (Interrupt::WhilePreparing(id), EventBody::ToolPreparing(p)) => {
                p.call_id == id && !p.arguments_delta.is_empty()
            }
            (Interrupt::AfterStart(id), EventBody::ToolStart(s)) => {
                return (s.call_id == id).then_some(Duration::from_millis(200));
            }
            (Interrupt::AtProgress(id), EventBody::ToolProgress(p)) => p.call_id == id,
            _ => false,
        };
        fires.then_some(Duration::ZERO)
    }
}

/// One turn of a scenario: what the user asks, whether they interrupt it, and whether they
/// compact the conversation once it ends.
struct TurnPlan {
    prompt: &'static str,
    interrupt: Option<Interrupt>,
    compact_after: bool,
}

fn turn(prompt: &'static str) -> TurnPlan {
    TurnPlan {
        prompt,
        interrupt: None,
        compact_after: false,
    }
}

fn interrupted(prompt: &'static str, interrupt: Interrupt) -> TurnPlan {
    TurnPlan {
        prompt,
        interrupt: Some(interrupt),
        compact_after: false,
    }
}

fn then_compacted(prompt: &'static str) -> TurnPlan {
    TurnPlan {
        prompt,
        interrupt: None,
        compact_after: true,
    }
}

/// One recorded session.
struct Scenario {
    /// The fixture's file name, without extension.
    name: &'static str,
    /// The turns, in order.
    turns: Vec<TurnPlan>,
    /// The scripted model's answers, one call per answer so that the log's order is fixed.
    script: Value,
    /// The review policy (a [`PolicyConfig`] as JSON); allow-all when `Null`.
    policy: Value,
    /// The execution layer's time limit per call.
    timeout: Option<Duration>,
}

/// One model answer holding one call.
fn call(tool: &str, args: Value) -> Value {
    json!({"calls": [{"tool": tool, "args": args}]})
}

/// One model answer with a sentence and one call.
fn say_call(say: &str, tool: &str, args: Value) -> Value {
    json!({"say": say, "calls": [{"tool": tool, "args": args}]})
}

fn say(text: &str) -> Value {
    json!({"say": text})
}

fn script(turns: Vec<Value>) -> Value {
    json!({"turns": turns})
}

fn scenarios(web_origin: &str) -> Vec<Scenario> {
    let url = |path: &str| format!("{web_origin}{path}");
    vec![
        Scenario {
            name: "files",
            turns: vec![turn("Fix the typo in the report and tidy the helpers.")],
            script: script(vec![
                say_call(
                    "Let me read the report first.",
                    "read",
                    json!({"path": "src/report.py"}),
                ),
                call(
                    "read",
                    json!({"path": "src/report.py", "offset": 6, "limit": 4}),
                ),
                call("read", json!({"path": "src/missing.py"})),
                call("read", json!({"path": format!("{WORKSPACE}/README.md")})),
                call(
                    "write",
                    json!({"path": "notes/plan.md", "content": "# Plan\n\n1. Fix the typo.\n2. Skip the header row.\n"}),
                ),
                call(
                    "write",
                    json!({"path": "notes/plan.md", "content": "# Plan\n\n1. Fix the typo.\n2. Skip the header row.\n3. Add a chart per region.\n"}),
                ),
                call(
                    "edit",
                    json!({"path": "src/report.py", "old_string": "\"Totla\"", "new_string": "\"Total\""}),
                ),
                call(
                    "edit",
                    json!({"path": "src/report.py", "old_string": "def average(", "new_string": "def mean("}),
                ),
                call(
                    "str_replace_editor",
                    json!({"command": "view", "path": "src/lib.rs", "view_range": [1, 6]}),
                ),
                call(
                    "str_replace_editor",
                    json!({"command": "view", "path": "src"}),
                ),
                call(
                    "str_replace_editor",
                    json!({"command": "create", "path": "src/util.py", "file_text": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"}),
                ),
                call(
                    "str_replace_editor",
                    json!({"command": "str_replace", "path": "src/util.py", "old_str": "max(lo, min(x, hi))", "new_str": "min(max(x, lo), hi)"}),
                ),
                call(
                    "str_replace_editor",
                    json!({"command": "insert", "path": "src/util.py", "insert_line": 0, "new_str": "\"\"\"Small helpers.\"\"\"\n"}),
                ),
                call(
                    "str_replace_editor",
                    json!({"command": "undo_edit", "path": "src/util.py"}),
                ),
                call(
                    "str_replace_editor",
                    json!({"command": "str_replace", "path": "src/util.py", "old_str": "not there", "new_str": "x"}),
                ),
                call("read_image", json!({"path": "assets/logo.png"})),
                call("read_image", json!({"path": "assets/broken.png"})),
                say("The typo is fixed and the helpers are tidy."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "search",
            turns: vec![turn("Where are the TODOs?")],
            script: script(vec![
                say_call("Searching.", "grep", json!({"pattern": "TODO"})),
                call(
                    "grep",
                    json!({"pattern": "fn \\w+", "glob": "*.rs", "output_mode": "content", "context": 1}),
                ),
                call(
                    "grep",
                    json!({"pattern": "todo", "case_insensitive": true, "output_mode": "count"}),
                ),
                call("grep", json!({"pattern": "(unclosed"})),
                call("glob", json!({"pattern": "**/*.py"})),
                call("glob", json!({"pattern": "*.nothing"})),
                say("Two TODOs: in src/report.py and src/lib.rs."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "shell",
            turns: vec![turn("Run the checks and the dev server.")],
            script: script(vec![
                say_call(
                    "Building first.",
                    "bash",
                    json!({"command": "printf 'compiling report\\n'; echo done"}),
                ),
                call(
                    "bash",
                    json!({"command": "printf '\\033[32mok\\033[0m 3 tests\\n\\033[1;31mFAILED\\033[0m test_totals\\n'; exit 1"}),
                ),
                call("bash", json!({"command": "echo stopping; kill -TERM $$"})),
                call(
                    "bash",
                    json!({"command": "echo waiting for the lock; sleep 5", "timeout_secs": 1}),
                ),
                call("bash", json!({"command": "seq 1 30000"})),
                call("bash", json!({"command": "  "})),
                call("bash", json!({"command": "cd src &&\nls"})),
                call(
                    "bash",
                    json!({"command": "for i in 1 2 3; do echo tick $i; sleep 0.1; done", "background": true}),
                ),
                call("job_output", json!({"job_id": "job-1", "wait_secs": 10})),
                call("bash", json!({"command": "sleep 30", "background": true})),
                call("job_kill", json!({"job_id": "job-2"})),
                call("job_output", json!({"job_id": "job-9"})),
                call("bash", json!({"command": "seq 1 40"})),
                call(
                    "bash",
                    json!({"command": "echo oops; exit 4", "background": true}),
                ),
                call("bash", json!({"command": "sleep 30", "background": true})),
                call("job_output", json!({"job_id": "job-3", "wait_secs": 10})),
                call("job_output", json!({"job_id": "job-4"})),
                call("job_kill", json!({"job_id": "job-4"})),
                call("job_kill", json!({"job_id": "job-9"})),
                call("bash", json!({"command": "  ", "background": true})),
                say("One test fails: test_totals."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "timeouts",
            turns: vec![turn("Wait for the lock.")],
            script: script(vec![
                call(
                    "bash",
                    json!({"command": "echo waiting; sleep 5", "timeout_secs": 30}),
                ),
                say("The lock was not released in time."),
            ]),
            policy: Value::Null,
            timeout: Some(Duration::from_secs(1)),
        },
        Scenario {
            name: "web",
            turns: vec![turn("Read the guide.")],
            script: script(vec![
                say_call(
                    "Fetching the guide.",
                    "web_fetch",
                    json!({"url": url("/guide")}),
                ),
                call("web_fetch", json!({"url": url("/notes.txt")})),
                call("web_fetch", json!({"url": url("/guide"), "raw": true})),
                call("web_fetch", json!({"url": url("/missing")})),
                call("web_fetch", json!({"url": "http://127.0.0.1:1/closed"})),
                call("web_fetch", json!({"url": "ftp://127.0.0.1/file"})),
                say("The guide says to run the report monthly."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "tasks",
            turns: vec![turn("Plan the release notes with me.")],
            script: script(vec![
                say_call(
                    "Reading the skill.",
                    "skill",
                    json!({"name": "release-notes"}),
                ),
                call(
                    "skill",
                    json!({"name": "release-notes", "file": "reference/style.md"}),
                ),
                call("skill", json!({"name": "release-nots"})),
                call(
                    "todo_write",
                    json!({"todos": [
                        {"id": "changes", "content": "List the merged changes", "status": "in_progress"},
                        {"id": "group", "content": "Group them by kind", "status": "pending"},
                        {"id": "typos", "content": "Fix typos in old notes", "status": "pending"},
                        {"id": "write", "content": "Write the notes", "status": "pending"}
                    ]}),
                ),
                call(
                    "todo_write",
                    json!({"todos": [
                        {"id": "changes", "content": "List the merged changes", "status": "completed"},
                        {"id": "write", "content": "Write the notes", "status": "pending"},
                        {"id": "group", "content": "Group them by kind", "status": "in_progress"},
                        {"id": "review", "content": "Ask for a review", "status": "pending"}
                    ]}),
                ),
                call(
                    "todo_write",
                    json!({"todos": [{"id": "a", "content": "One", "status": "pending"}, {"id": "a", "content": "Two", "status": "pending"}]}),
                ),
                call(
                    "question",
                    json!({"questions": [
                        {"id": "version", "question": "Which version are the notes for?", "options": ["1.4.0", "2.0.0"]},
                        {"id": "day", "question": "When should they be published?"},
                        {"id": "kinds", "question": "Which kinds of change should be listed?", "options": ["features", "fixes", "internal"], "multi_select": true}
                    ]}),
                ),
                call(
                    "question",
                    json!({"questions": [{"id": "dismiss", "question": "Should I also email the team?", "options": ["yes", "no"]}]}),
                ),
                call(
                    "question",
                    json!({"questions": [{"id": "x", "question": "First?"}, {"id": "x", "question": "Second?"}]}),
                ),
                say("The notes for 1.4.0 will be published on Friday."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "review",
            turns: vec![turn("Clean up and publish.")],
            script: script(vec![
                say_call(
                    "Cleaning the build folder.",
                    "bash",
                    json!({"command": "rm -rf build"}),
                ),
                call(
                    "bash",
                    json!({"command": "git push --dry-run origin main 2>&1 || true"}),
                ),
                call("bash", json!({"command": "git push origin main"})),
                call("web_fetch", json!({"url": "https://example.com/release"})),
                call(
                    "write",
                    json!({"path": "secrets/token.txt", "content": "x"}),
                ),
                call(
                    "run_code",
                    json!({"code": "try:\n    sdk.tool.call(\"bash\", {\"command\": \"rm -rf /tmp/cache\"})\nexcept ToolError as e:\n    print(sdk.tool.error(e)[\"code\"])\nprint(sdk.tool.call(\"read\", {\"path\": \"README.md\"})[\"total_lines\"])\n"}),
                ),
                say("The build folder could not be removed; nothing was published."),
            ]),
            policy: json!({"rules": [
                {"tool": "bash", "when": {"command": "rm -rf"}, "decision": "deny", "reason": "deleting folders is not allowed in this workspace"},
                {"tool": "bash", "when": {"command": "^git push"}, "decision": "ask", "reason": "pushing publishes the work"},
                {"tool": "web_*", "decision": "deny", "reason": "  no network access\r\nfrom this agent\u{2028}ask the user  "},
                {"tool": "write", "when": {"path": "^secrets/"}, "decision": "deny", "reason": " "}
            ]}),
            timeout: None,
        },
        Scenario {
            name: "code-mode",
            turns: vec![turn("Summarise the TODOs and the sales with code.")],
            script: script(vec![
                say_call(
                    "I'll do it in one run.",
                    "run_code",
                    json!({"code": "hits = sdk.tool.call(\"grep\", {\"pattern\": \"TODO\"})\nfor f in hits[\"files\"]:\n    text = sdk.tool.call(\"read\", {\"path\": f[\"path\"], \"limit\": 3})[\"text\"]\n    print(f[\"path\"], len(text))\n"}),
                ),
                call(
                    "run_code",
                    json!({"code": "try:\n    sdk.tool.call(\"read\", {\"path\": \"missing.txt\"})\nexcept ToolError as e:\n    print(\"no file:\", sdk.tool.error(e)[\"code\"])\nimage = sdk.tool.call(\"read_image\", {\"path\": \"assets/logo.png\"})\nsales = sdk.tool.call(\"table_query\", {\"path\": \"data/sales.csv\", \"group_by\": [\"region\"], \"column\": \"amount\"})\nout = sdk.tool.call(\"bash\", {\"command\": \"echo nested shell\"})\nprint(image[\"width\"], len(sales[\"rows\"]), out[\"exit_code\"])\n"}),
                ),
                call(
                    "run_code",
                    json!({"code": "sdk.tool.call(\"glob\", {\"pattern\": \"*.csv\"})\ntotal = 1 / 0\n"}),
                ),
                call(
                    "run_code",
                    json!({"code": "for i in range(3000):\n    print(\"row\", i, \"of the generated table\")\n"}),
                ),
                call(
                    "run_code",
                    json!({"code": "sdk.tool.call(\"write\", {\"path\": \"notes/summary.md\", \"content\": \"# Summary\\n\\nTwo TODOs.\\n\"})\nsdk.tool.call(\"edit\", {\"path\": \"notes/summary.md\", \"old_string\": \"Two TODOs.\", \"new_string\": \"Two TODOs, both small.\"})\nsdk.tool.call(\"todo_write\", {\"todos\": [{\"id\": \"sum\", \"content\": \"Summarise\", \"status\": \"completed\"}]})\n\"done\"\n"}),
                ),
                say("There are two TODOs; the north region sold the most."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "interrupts",
            turns: vec![
                interrupted("Run the slow check.", Interrupt::AtProgress("call_1")),
                interrupted("Ask me what to do next.", Interrupt::AfterStart("call_2")),
                interrupted("Do it with code.", Interrupt::AtProgress("call_3.2")),
                turn("Never mind, stop here."),
            ],
            script: script(vec![
                call("bash", json!({"command": "echo started; sleep 30"})),
                call(
                    "question",
                    json!({"questions": [{"id": "wait", "question": "Which check should run next?", "options": ["unit", "lint"]}]}),
                ),
                call(
                    "run_code",
                    json!({"code": "sdk.tool.call(\"read\", {\"path\": \"README.md\"})\nsdk.tool.call(\"bash\", {\"command\": \"echo started; sleep 30\"})\n"}),
                ),
                say("Stopped."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "compacted",
            turns: vec![
                then_compacted("What does the report print?"),
                turn("Fix the typo you found."),
            ],
            script: script(vec![
                say_call(
                    "Reading the report.",
                    "read",
                    json!({"path": "src/report.py"}),
                ),
                say("It prints the total per region; its header says `Totla`."),
                say(
                    "**Goal**: the report's output, then its typo fixed.\n\n**Done**: read \
                     `src/report.py`; it prints the total per region.\n\n**Files**: \
                     `src/report.py` (read).\n\n**Next**: change the header's `Totla` to \
                     `Total`.",
                ),
                say_call(
                    "Fixing it.",
                    "edit",
                    json!({"path": "src/report.py", "old_string": "\"Totla\"", "new_string": "\"Total\""}),
                ),
                say("The header now says `Total`."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "interrupted-preparing",
            turns: vec![interrupted(
                "Write the long report.",
                Interrupt::WhilePreparing("call_1"),
            )],
            script: json!({
                "chunk_delay_ms": 150,
                "turns": [call("write", json!({"path": "notes/report.md", "content": "# Report\n\nThe north region sold the most in both months.\n"}))]
            }),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "session-queries",
            turns: vec![
                turn("Fix the retry logic in the report."),
                turn("Where was the report changed?"),
            ],
            script: script(vec![
                say_call(
                    "Reading the report first.",
                    "read",
                    json!({"path": "src/report.py", "limit": 4}),
                ),
                call(
                    "run_code",
                    json!({"code": "len(sdk.tool.call(\"read\", {\"path\": \"README.md\"})[\"text\"])\n"}),
                ),
                say("I changed the retry logic: three tries, a pause between them."),
                call("session_search", json!({"query": "retry logic"})),
                call(
                    "session_events",
                    json!({"session": SESSION_ID, "types": ["turn.started", "tool.start", "tool.result"], "limit": 4}),
                ),
                call(
                    "session_trajectory",
                    json!({"session": SESSION_ID, "turn": 1}),
                ),
                call("session_events", json!({"session": "other-session"})),
                say("The retry logic was changed in the first turn of this session."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
        Scenario {
            name: "terminals",
            turns: vec![turn(
                "Set up a shell in src, then try the line echo in a terminal.",
            )],
            script: script(vec![
                say_call(
                    "Entering src in a persistent shell.",
                    "bash",
                    json!({"command": "cd src && export GREETING=hello", "persistent": true}),
                ),
                call(
                    "bash",
                    json!({"command": "pwd; echo $GREETING", "persistent": true}),
                ),
                call(
                    "bash",
                    json!({"command": "echo partial; sleep 5", "persistent": true, "timeout_secs": 1}),
                ),
                call(
                    "bash",
                    json!({"command": "seq 1 30000", "persistent": true}),
                ),
                call("bash", json!({"command": "echo fresh; pwd", "reset": true})),
                call("terminal_start", json!({"command": "cat"})),
                call(
                    "terminal_send",
                    json!({"terminal_id": "term-1", "text": "hello", "keys": ["Enter"], "wait_for": "hello\\s+hello"}),
                ),
                call(
                    "run_code",
                    json!({"code": "out = sdk.tool.call(\"terminal_send\", {\"terminal_id\": \"term-1\", \"text\": \"nested\", \"keys\": [\"Enter\"], \"wait_for\": \"nested\\\\s+nested\"})\nprint(out[\"state\"])\n"}),
                ),
                call(
                    "terminal_send",
                    json!({"terminal_id": "term-9", "text": "hello", "keys": ["Enter"]}),
                ),
                call(
                    "terminal_start",
                    json!({"command": "seq 1 30000; cat", "wait_for": "30000"}),
                ),
                call(
                    "bash",
                    json!({"command": "seq 1 30000", "background": true}),
                ),
                call("job_output", json!({"job_id": "job-1", "wait_secs": 10})),
                call("terminal_list", json!({})),
                call("terminal_kill", json!({"terminal_id": "term-1"})),
                call("terminal_kill", json!({"terminal_id": "term-9"})),
                // A long quiet time, so the call ends with the program however busy the machine.
                call(
                    "terminal_start",
                    json!({"command": "sh -c 'echo bye; exit 3'", "settle_ms": 5000}),
                ),
                // The prompt set, so it does not depend on the user running the test, and
                // waited for, as the end of the output sent after it.
                call(
                    "terminal_start",
                    json!({"command": "PS1='$ ' sh", "wait_for": "^\\$ ?$"}),
                ),
                call(
                    "terminal_send",
                    json!({"terminal_id": "term-4", "text": "seq 1 30000", "keys": ["Enter"], "wait_for": "^30000\\s+\\$ ?$"}),
                ),
                call(
                    "terminal_start",
                    json!({"command": "cat", "timeout_secs": 0}),
                ),
                say("The shell keeps src and GREETING; the terminal echoes each line."),
            ]),
            policy: Value::Null,
            timeout: None,
        },
    ]
}

/// How the person at the screen answers a request, as the fixtures need: an approval is given
/// when the command is a dry run; the question `wait` is never answered, `dismiss` is
/// dismissed, the others get the first option (the first two for a multi-select) or a typed
/// text.
fn reply_to(ask: &RequestAsk) -> Option<RequestReply> {
    match ask {
        RequestAsk::Approval { arguments, .. } => {
            let command = arguments["command"].as_str().unwrap_or_default();
            Some(match command.contains("--dry-run") {
                true => RequestReply::Approve,
                false => RequestReply::Deny { reason: None },
            })
        }
        RequestAsk::Question { questions } => {
            if questions.iter().any(|q| q.id == "wait") {
                return None;
            }
            if questions.iter().any(|q| q.id == "dismiss") {
                return Some(RequestReply::Dismiss);
            }
            Some(RequestReply::Answer(
                questions
                    .iter()
                    .map(|q| Answer {
                        id: q.id.clone(),
                        answer: match (&q.options, q.multi_select) {
                            (Some(options), Some(true)) => {
                                options.iter().take(2).cloned().collect()
                            }
                            (Some(options), _) => vec![options[0].clone()],
                            (None, _) => vec!["Friday morning".to_string()],
                        },
                    })
                    .collect(),
            ))
        }
    }
}

/// A web server on 127.0.0.1 answering the `web` scenario's pages, one request per
/// connection, until the process ends.
fn start_web_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request_line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                match reader.read_line(&mut header) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if header.trim().is_empty() => break,
                    Ok(_) => {}
                }
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("/");
            let (status, kind, body) = match path {
                "/guide" => (
                    "200 OK",
                    "text/html; charset=utf-8",
                    "<!doctype html><html><head><title>Report guide</title></head><body>\
                     <h1>Report guide</h1><p>Run the report <strong>monthly</strong>, after \
                     the books close.</p><ul><li>Check the totals</li><li>Send the chart</li>\
                     </ul><p>See <a href=\"/notes.txt\">the notes</a>.</p></body></html>",
                ),
                "/notes.txt" => (
                    "200 OK",
                    "text/plain; charset=utf-8",
                    "Notes\n- totals are in euros\n- the south region reports late\n",
                ),
                _ => (
                    "404 Not Found",
                    "text/html; charset=utf-8",
                    "<html><body><h1>Not found</h1></body></html>",
                ),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    origin
}

/// A fresh workspace with the scenario files; its canonical path.
fn seed_workspace(dir: &Path) -> PathBuf {
    let root = dir.join("workspace");
    for (path, text) in WORKSPACE_FILES {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    std::fs::write(root.join("assets/logo.png"), LOGO_PNG).unwrap();
    root.canonicalize().unwrap()
}

/// The directly mounted tools, in the order the agent lists them; `skill` and `run_code`
/// follow (every skill is available, code mode is on).
const DIRECT_TOOLS: &[&str] = &[
    "bash",
    "job_output",
    "job_kill",
    "read",
    "read_image",
    "write",
    "edit",
    "str_replace_editor",
    "grep",
    "glob",
    "web_fetch",
    "todo_write",
    "question",
];

/// The tools a scenario mounts beside [`DIRECT_TOOLS`], by scenario name.
const EXTRA_TOOLS: &[(&str, &[&str])] = &[
    (
        "session-queries",
        &["session_search", "session_events", "session_trajectory"],
    ),
    (
        "terminals",
        &[
            "terminal_start",
            "terminal_send",
            "terminal_kill",
            "terminal_list",
        ],
    ),
];

/// The agent file a scenario runs (JSON, which is YAML): every built-in tool mounted (and the
/// scenario's [`EXTRA_TOOLS`]), code mode on, the scenario's review rules.
fn agent_file(scenario: &Scenario) -> String {
    let mut tools: Vec<&str> = DIRECT_TOOLS.to_vec();
    for (name, extra) in EXTRA_TOOLS {
        if *name == scenario.name {
            tools.extend_from_slice(extra);
        }
    }
    let mut agent = json!({
        "name": "fixture",
        "description": "Runs the web client's fixture scenarios.",
        "instructions": "You are the fixture agent.",
        "tools": tools,
        "code_mode": true,
        "limits": {"max_steps": 40},
    });
    if !scenario.policy.is_null() {
        agent["review"] = scenario.policy.clone();
    }
    serde_json::to_string_pretty(&agent).unwrap()
}

/// Runs a scenario as a real session — the runtime's session handle over an in-memory store,
/// attended, its requests answered by [`reply_to`] — and returns its event log.
async fn record(scenario: &Scenario, workspace: &Path) -> Vec<Event> {
    let agent_path = workspace.join("fixture.agent");
    std::fs::write(&agent_path, agent_file(scenario)).unwrap();
    let script_text = serde_json::to_string(&scenario.script).unwrap();
    let script = Script::parse(&script_text, Path::new("fixture-script.yaml")).unwrap();
    // Terminals start through the sandbox helper even unconfined: the `qilin` built here.
    let runtime = Runtime::new(Arc::new(MemoryStore::new()), CodeSandbox::InProcess)
        .with_sandbox_helper(SandboxHelper::new(
            env!("CARGO_BIN_EXE_qilin"),
            SANDBOX_HELPER_ARGS.iter().copied(),
        ));
    let mut builder = runtime
        .session(workspace)
        .id(SESSION_ID)
        .agent_file(&agent_path)
        .model(ModelChoice::Provider {
            provider: Arc::new(ScriptedProvider::new(script)),
            model: "scripted".to_string(),
            label: "scripted:fixture-script.yaml".to_string(),
        })
        .attended(true)
        // Confinement and the project context (date, shell, branch) depend on the machine;
        // the fixtures show what the tools do.
        .no_sandbox(true)
        .project_context(false)
        .service(Arc::new(WebFetchConfig {
            allow_private: true,
            ..WebFetchConfig::default()
        }));
    if let Some(limit) = scenario.timeout {
        builder = builder.call_timeout(Some(limit));
    }
    let session = builder.build().await.unwrap();

    let mut seen: Vec<Event> = Vec::new();
    for plan in &scenario.turns {
        let turn = session.submit(plan.prompt, None).unwrap();
        let mut events = session.subscribe_from(seen.last().map_or(0, |event| event.seq));
        while let Some(event) = events.next().await {
            let event = event.unwrap();
            if let Some(delay) = plan.interrupt.and_then(|i| i.delay_after(&event)) {
                let session = session.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    session.interrupt();
                });
            }
            if let EventBody::RequestOpened(opened) = &event.body
                && let Some(reply) = reply_to(&opened.ask)
            {
                session
                    .resolve(&opened.request_id, reply, "fixture")
                    .unwrap();
            }
            let finished = matches!(event.body, EventBody::TurnFinished { .. });
            seen.push(event);
            if finished {
                break;
            }
        }
        tokio::time::timeout(Duration::from_secs(10), turn.finished())
            .await
            .expect("the turn ends");
        if plan.compact_after {
            session.compact().await.unwrap();
            let mut events = session.subscribe_from(seen.last().map_or(0, |event| event.seq));
            let compacted = events.next().await.unwrap().unwrap();
            assert!(matches!(compacted.body, EventBody::ContextCompacted(_)));
            seen.push(compacted);
        }
    }
    session.close().await.unwrap();
    seen
}

/// The one generic pass over a recorded log that removes what differs between runs.
///
/// - Strings: the workspace's real path becomes [`WORKSPACE`]; the web server's port (a run of
///   digits on its own, since the model streams a URL in pieces that may cut it anywhere)
///   becomes that of [`WEB_ORIGIN`]; seconds written as `1.2 s` become `0.0 s`,
///   `(pid 123)` `(pid 0)`, and a time written as events write theirs (which a recalled
///   session's hits, lines and nodes carry) [`FIXED_TIME`].
/// - Fields: durations (`durationMs`, `duration_ms`, `ran_for_ms`), process ids (`pid`) and
///   token estimates (which count the bytes of the varying paths) become 0; every event's
///   `time` becomes [`FIXED_TIME`].
/// - Live output: how much of a command's output was read while it ran, and in how many
///   pieces, depends on timing. A call that ended `ok` carries all of it in its result, so its
///   `tool.progress` events are dropped; for any other call they are joined into one (its
///   output is read before it is stopped). The events are then numbered again from 1.
fn normalise(events: Vec<Event>, workspace: &Path, web_origin: &str) -> Vec<Value> {
    let port = web_origin.rsplit(':').next().unwrap_or_default();
    let fixed_port = WEB_ORIGIN.rsplit(':').next().unwrap_or_default();
    let rewrite = |text: &str| {
        let text = text.replace(&workspace.display().to_string(), WORKSPACE);
        fixed_times(&zero_seconds(&zero_pids(&replace_number(
            &text, port, fixed_port,
        ))))
    };
    let ended_ok: HashSet<&str> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.status == CallStatus::Ok => {
                Some(result.call_id.as_str())
            }
            _ => None,
        })
        .collect();
    let mut out: Vec<Value> = Vec::with_capacity(events.len());
    for event in &events {
        if let EventBody::ToolProgress(progress) = &event.body {
            if ended_ok.contains(progress.call_id.as_str()) {
                continue;
            }
            if let Some(last) = out.last_mut()
                && last["type"] == "tool.progress"
                && last["callId"] == progress.call_id.as_str()
            {
                let joined = format!(
                    "{}{}",
                    last["text"].as_str().unwrap_or_default(),
                    progress.text
                );
                last["text"] = Value::String(rewrite(&joined));
                continue;
            }
        }
        let mut value = serde_json::to_value(event).unwrap();
        scrub(&mut value, &rewrite);
        value["time"] = json!(FIXED_TIME);
        out.push(value);
    }
    for (index, value) in out.iter_mut().enumerate() {
        value["seq"] = json!(index + 1);
    }
    out
}

/// Every run of digits equal to `number` (not part of a longer run) → `replacement`.
fn replace_number(text: &str, number: &str, replacement: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(number) {
        let before = &rest[..at];
        let after = &rest[at + number.len()..];
        let alone = !before.ends_with(|c: char| c.is_ascii_digit())
            && !after.starts_with(|c: char| c.is_ascii_digit());
        out.push_str(before);
        out.push_str(if alone { replacement } else { number });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The time every event of a fixture carries.
const FIXED_TIME: &str = "2026-01-01T00:00:00.000Z";

const ZEROED_FIELDS: &[&str] = &[
    "durationMs",
    "duration_ms",
    "ran_for_ms",
    "pid",
    "inputTokens",
    "outputTokens",
    "cacheReadTokens",
    "estimatedTokensBefore",
    "estimatedTokensAfter",
];

fn scrub(value: &mut Value, rewrite: &dyn Fn(&str) -> String) {
    match value {
        Value::String(text) => *text = rewrite(text),
        Value::Array(items) => items.iter_mut().for_each(|item| scrub(item, rewrite)),
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if ZEROED_FIELDS.contains(&key.as_str()) && item.is_number() {
                    *item = json!(0);
                } else {
                    scrub(item, rewrite);
                }
            }
        }
        _ => {}
    }
}

/// Every time written as events write theirs (`2026-12-02T05:00:00.123Z`, in a recalled
/// session's hits, lines and nodes) → [`FIXED_TIME`].
fn fixed_times(text: &str) -> String {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd.dddZ";
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i + SHAPE.len() <= bytes.len() {
        let fits = SHAPE
            .iter()
            .zip(&bytes[i..])
            .all(|(shape, byte)| match shape {
                b'd' => byte.is_ascii_digit(),
                other => other == byte,
            });
        if fits {
            out.push_str(&text[copied..i]);
            out.push_str(FIXED_TIME);
            i += SHAPE.len();
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// `(pid 4242)` → `(pid 0)`.
fn zero_pids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("(pid ") {
        let (before, after) = rest.split_at(at + "(pid ".len());
        out.push_str(before);
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push('0');
            rest = &after[digits..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Every `12.3 s` (digits, a point, one digit, ` s`) → `0.0 s`.
fn zero_seconds(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_digit()) {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            let is_seconds = bytes.get(j) == Some(&b'.')
                && bytes.get(j + 1).is_some_and(u8::is_ascii_digit)
                && bytes.get(j + 2) == Some(&b' ')
                && bytes.get(j + 3) == Some(&b's')
                && !bytes.get(j + 4).is_some_and(u8::is_ascii_alphanumeric);
            if is_seconds {
                out.push_str(&text[copied..i]);
                out.push_str("0.0 s");
                copied = j + 4;
                i = j + 4;
                continue;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/fixtures")
}

#[test]
fn web_fixtures_are_current() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let web_origin = start_web_server();
    let mut files: Vec<(String, String)> = Vec::new();
    for scenario in scenarios(&web_origin) {
        let dir = tempfile::tempdir().unwrap();
        let workspace = seed_workspace(dir.path());
        let events = runtime.block_on(record(&scenario, &workspace));
        let normalised = normalise(events, &workspace, &web_origin);
        let lines: String = normalised
            .iter()
            .map(|event| serde_json::to_string(event).unwrap() + "\n")
            .collect();
        let parsed: Vec<Event> = normalised
            .into_iter()
            .map(|value| serde_json::from_value(value).unwrap())
            .collect();
        let tree = ConversationTree::from_events(&parsed);
        let tree = serde_json::to_string_pretty(&tree).unwrap() + "\n";
        files.push((format!("{}.jsonl", scenario.name), lines));
        files.push((format!("{}.tree.json", scenario.name), tree));
    }
    let dir = fixtures_dir();
    if std::env::var_os("QILIN_UPDATE_FIXTURES").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let stale: Vec<&str> = files
        .iter()
        .filter(|(name, text)| std::fs::read_to_string(dir.join(name)).ok().as_ref() != Some(text))
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(
        stale.is_empty(),
        "web/fixtures is stale ({}): run `QILIN_UPDATE_FIXTURES=1 cargo test -p qilin-cli --test web_fixtures` and commit the files",
        stale.join(", ")
    );
}

#[test]
fn the_normalising_pass_touches_only_what_varies() {
    assert_eq!(
        zero_seconds("[exit code 0, 12.3 s] took 1.5 s, v1.2 stays, 3.25 s stays"),
        "[exit code 0, 0.0 s] took 0.0 s, v1.2 stays, 3.25 s stays"
    );
    assert_eq!(
        fixed_times(
            "#3 2026-12-02T05:01:02.345Z turn 1, 2026-12-02 stays, é2026-12-02T05:01:02.345Z"
        ),
        "#3 2026-01-01T00:00:00.000Z turn 1, 2026-12-02 stays, é2026-01-01T00:00:00.000Z"
    );
    assert_eq!(
        zero_pids("job-1 (pid 4242) and (pid x) and (pid 7"),
        "job-1 (pid 0) and (pid x) and (pid 7"
    );
    assert_eq!(
        replace_number("http://127.0.0.1:41234/a 141234 41234", "41234", "8123"),
        "http://127.0.0.1:8123/a 141234 8123"
    );
    let mut value = json!({"durationMs": 17, "text": "/tmp/abc/x in 2.0 s", "pid": 99, "port": 4});
    scrub(&mut value, &|text: &str| {
        zero_seconds(&text.replace("/tmp/abc", WORKSPACE))
    });
    assert_eq!(
        value,
        json!({"durationMs": 0, "text": "/home/qilin/workspace/x in 0.0 s", "pid": 0, "port": 4})
    );
}
