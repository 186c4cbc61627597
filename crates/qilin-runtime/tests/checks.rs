//! Checks in real sessions: the workspace's `.qilin/checks.yaml` with the agent's `checks:` over
//! it reach `checks_run` (and code), and a session with none is told where to declare them.

mod support;

use qilin_protocol::checks::{CheckConclusion, ChecksRunOutput};
use qilin_protocol::{CallStatus, ContentBlock, Event, EventBody, ToolResultEvent};
use support::{assert_consistent, fixture, stored};

const RUN_ALL: &str = r#"
turns:
  - calls:
      - tool: checks_run
        args: {}
  - calls:
      - tool: run_code
        args:
          code: |
            r = sdk.tool.call("checks_run", {"ids": ["notes"]})
            print(r["summary"], r["runs"][0]["cached"])
  - say: "Checked."
"#;

fn results<'a>(events: &'a [Event], tool: &str) -> Vec<&'a ToolResultEvent> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == tool => Some(result),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_checks_replace_the_workspaces_and_run_from_both_entries() {
    let f = fixture(
        "name: worker\ninstructions: Check the work.\ntools: [checks_run]\ncode_mode: true\n\
         checks:\n  - id: lint\n    command: grep -q second notes.txt\n",
    );
    std::fs::write(
        f.workspace().join(".qilin/checks.yaml"),
        "checks:\n  - id: notes\n    command: grep -c line notes.txt\n  - id: lint\n    command: 'false'\n",
    )
    .unwrap();
    let session = f.session(RUN_ALL, false).await;
    session
        .submit("Are the checks green?", None)
        .unwrap()
        .finished()
        .await;
    let events = stored(&session).await;
    assert_consistent(&events);

    let direct = results(&events, "checks_run");
    assert_eq!(direct[0].status, CallStatus::Ok);
    let output: ChecksRunOutput =
        serde_json::from_value(direct[0].output.clone().unwrap()).unwrap();
    let ids: Vec<(&str, CheckConclusion)> = output
        .runs
        .iter()
        .map(|run| (run.id.as_str(), run.conclusion))
        .collect();
    assert_eq!(
        ids,
        [
            ("notes", CheckConclusion::Success),
            ("lint", CheckConclusion::Success)
        ],
        "the agent's `lint` replaced the workspace's failing one: {output:#?}"
    );
    assert!(output.runs[0].output.starts_with('2'));

    // From code, the same service: nothing changed, so the run comes from the cache.
    let nested = results(&events, "checks_run");
    assert_eq!(nested.len(), 2, "the call from code is recorded too");
    let from_code: ChecksRunOutput =
        serde_json::from_value(nested[1].output.clone().unwrap()).unwrap();
    assert_eq!(from_code.summary, "1 check: 1 passed");
    assert!(from_code.runs[0].cached);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_without_checks_is_told_where_to_declare_them() {
    let f = fixture("name: worker\ninstructions: Check the work.\ntools: [checks_run]\n");
    let script =
        "turns:\n  - calls:\n      - tool: checks_run\n        args: {}\n  - say: \"No checks.\"\n";
    let session = f.session(script, false).await;
    session.submit("Check", None).unwrap().finished().await;
    let events = stored(&session).await;
    let result = results(&events, "checks_run")[0];
    assert_eq!(result.status, CallStatus::Error);
    let message: String = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        message.contains("`.qilin/checks.yaml`") && message.contains("`checks:`"),
        "{message}"
    );
}
