//! The interception rule for a code-mode-only tool an agent file lists under `tools:` by
//! mistake: the agent still loads, the tool is left out of the tools list with a warning, a
//! model naming it directly anyway is refused with a message that sends it to `run_code`, and
//! the same tool called from `run_code` runs.

mod support;

use qilin_protocol::{CallStatus, CallerKind, ContentBlock, ErrorCode, EventBody, FinishReason};
use qilin_skill::DiagnosticKind;
use support::{assert_consistent, fixture, stored};

const MISTAKEN_AGENT: &str = "\
name: analyst
instructions: Answer questions about the sales figures.
tools: [read, table_query]
code_mode: true
";

const DIRECT_THEN_FROM_CODE: &str = r#"
turns:
  - calls:
      - tool: table_query
        args: {path: sales.csv, aggregate: sum, column: amount}
  - calls:
      - tool: run_code
        args:
          code: |
            total = sdk.tool.call("table_query", {"path": "sales.csv", "aggregate": "sum", "column": "amount"})
            print(total["total"])
  - say: "The total is 30."
"#;

#[tokio::test]
async fn a_code_mode_only_tool_under_tools_is_left_out_refused_directly_and_runs_from_code() {
    let f = fixture(MISTAKEN_AGENT);
    std::fs::write(
        f.workspace().join("sales.csv"),
        "region,amount\nemea,10\napac,20\n",
    )
    .unwrap();
    let session = f.session(DIRECT_THEN_FROM_CODE, false).await;

    // The agent loaded, with a warning in the session's diagnostics naming the line.
    let warnings: Vec<_> = session
        .diagnostics()
        .iter()
        .filter(|d| d.kind == DiagnosticKind::CodeModeOnlyTool)
        .collect();
    assert_eq!(warnings.len(), 1, "{:#?}", session.diagnostics());
    assert!(!warnings[0].is_error());
    assert_eq!(warnings[0].line, Some(3));
    assert!(
        warnings[0].message.contains("left out of the tools list"),
        "{}",
        warnings[0]
    );
    // The tools list holds what the agent mounts, without the code-mode-only tool.
    let listed: Vec<String> = session.prompt().tools.into_iter().map(|t| t.name).collect();
    assert!(listed.contains(&"read".to_string()), "{listed:?}");
    assert!(listed.contains(&"run_code".to_string()), "{listed:?}");
    assert!(!listed.contains(&"table_query".to_string()), "{listed:?}");

    let summary = session
        .submit("What is the total?", None)
        .unwrap()
        .finished()
        .await;
    assert_eq!(summary.reason, FinishReason::Completed, "{summary:?}");
    let events = stored(&session).await;
    assert_consistent(&events);
    let results: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(result) if result.tool_name == "table_query" => Some(result),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:#?}");
    // The direct call is refused by the execution layer, telling the model where to call it.
    let direct = results[0];
    assert_eq!(direct.caller, CallerKind::Direct);
    assert_eq!(direct.status, CallStatus::Error);
    assert_eq!(direct.error_code, Some(ErrorCode::CodeModeOnly));
    let ContentBlock::Text { text } = &direct.content[0] else {
        panic!("a text message: {:?}", direct.content);
    };
    assert!(text.contains("cannot be called directly"), "{text}");
    assert!(text.contains("sdk.tool.call(\"table_query\""), "{text}");
    assert!(text.contains("skill"), "{text}");
    // From code it runs, nested under its `run_code` call.
    let from_code = results[1];
    assert_eq!(from_code.caller, CallerKind::Code);
    assert!(from_code.parent_call_id.is_some());
    assert_eq!(from_code.status, CallStatus::Ok, "{from_code:#?}");
    assert_eq!(
        from_code.output.as_ref().unwrap()["total"].as_f64(),
        Some(30.0)
    );
}
