//! An application's own tools in its sessions: mounted by name like the built-ins, reached
//! from `run_code`, recorded with the same events, kept out of the tools list when
//! code-mode-only, and linted by `check` over the application's registry.

mod support;

use qilin_check::Rule;
use qilin_protocol::{CallPresentation, CallStatus, CallerKind, Detail, Event, EventBody};
use qilin_runtime::{CodeSandbox, Runtime, RuntimeError};
use qilin_store::{EventStore, MemoryStore};
use qilin_tool::{
    DynamicTool, RegistryError, Tool, ToolContext, ToolError, ToolRegistry, ToolResult,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use support::{assert_consistent, scripted, stored};

/// The arguments of [`Stamp`].
#[derive(Clone, Deserialize, JsonSchema)]
pub struct StampArgs {
    /// The text to stamp, as it should appear on the document.
    pub text: String,
    /// How many copies of the stamp to make, from 1.
    pub copies: u32,
}

/// What [`Stamp`] returns.
#[derive(Serialize, JsonSchema)]
pub struct Stamped {
    /// The stamps made, one line each.
    pub stamps: Vec<String>,
}

/// Stamps a text onto a document: returns the stamp lines made.
#[derive(qilin_tool::Tool)]
#[tool(name = "stamp")]
pub struct Stamp;

impl Tool for Stamp {
    type Args = StampArgs;
    type Output = Stamped;
    fn prompt_hint(&self) -> &str {
        "Use stamp once per document; give the exact text and the number of copies needed."
    }
    fn present(&self, args: &StampArgs) -> CallPresentation {
        CallPresentation::new("Stamp", &args.text)
    }
    fn before_detail(&self, _: &StampArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &StampArgs, result: &ToolResult<Stamped>) -> Option<Detail> {
        result.as_ref().ok().map(|out| Detail::Text {
            text: out.stamps.join("\n"),
        })
    }
    async fn call(&self, args: StampArgs, _: &ToolContext) -> ToolResult<Stamped> {
        if args.copies == 0 {
            return Err(ToolError::invalid_arguments("`copies` is at least 1"));
        }
        Ok(Stamped {
            stamps: (1..=args.copies)
                .map(|n| format!("[{n}] {}", args.text))
                .collect(),
        })
    }
}

/// The arguments of [`Ledger`].
#[derive(Clone, Deserialize, JsonSchema)]
pub struct LedgerArgs {
    /// The account.
    pub account: String,
}

/// Reads an account's balance from the ledger.
#[derive(qilin_tool::Tool)]
#[tool(name = "ledger", code_mode_only)]
pub struct Ledger;

impl Tool for Ledger {
    type Args = LedgerArgs;
    type Output = i64;
    fn prompt_hint(&self) -> &str {
        ""
    }
    fn present(&self, args: &LedgerArgs) -> CallPresentation {
        CallPresentation::new("Read the ledger", &args.account)
    }
    fn before_detail(&self, _: &LedgerArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &LedgerArgs, _: &ToolResult<i64>) -> Option<Detail> {
        None
    }
    async fn call(&self, args: LedgerArgs, _: &ToolContext) -> ToolResult<i64> {
        match args.account.as_str() {
            "acme" => Ok(120),
            other => Err(ToolError::failed(format!("no account `{other}`"))),
        }
    }
}

/// A tool defined at run time: the length of a text.
fn measure() -> DynamicTool {
    let mut tool = DynamicTool::from_fn(
        "measure",
        "Counts the characters of a text.",
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to measure."}},
            "required": ["text"]
        }),
        |arguments: Value, _: ToolContext| async move {
            let text = arguments["text"].as_str().unwrap_or_default();
            Ok(json!({"characters": text.chars().count()}))
        },
    );
    tool.prompt_hint = "Measure a text with this tool rather than counting by eye.".into();
    tool
}

const APP_AGENT: &str = "\
name: clerk
instructions: Stamp documents and read balances.
tools: [read, stamp, measure]
code_mode: true
";

const SCRIPT: &str = r#"
turns:
  - calls:
      - tool: stamp
        args: {text: PAID, copies: 2}
      - tool: read
        args: {path: notes.txt}
      - tool: measure
        args: {text: hello}
  - calls:
      - tool: run_code
        args:
          code: |
            made = sdk.tool.call("stamp", {"text": "FILED", "copies": 1})
            balance = sdk.tool.call("ledger", {"account": "acme"})
            print(made["stamps"][0], balance)
  - say: "Stamped and read."
"#;

fn app_runtime() -> Runtime {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    Runtime::builder(store, CodeSandbox::InProcess)
        .tool(Stamp)
        .tool(Ledger)
        .dynamic_tool(measure())
        .build()
        .unwrap()
}

/// The fields an event carries, as JSON keys.
fn shape(event: &Event) -> BTreeSet<String> {
    match serde_json::to_value(&event.body).unwrap() {
        Value::Object(fields) => fields.keys().cloned().collect(),
        other => panic!("an event is an object: {other}"),
    }
}

fn call_events<'a>(events: &'a [Event], tool: &str, caller: CallerKind) -> Vec<&'a Event> {
    events
        .iter()
        .filter(|e| match &e.body {
            EventBody::ToolStart(s) => s.tool_name == tool && s.caller == caller,
            EventBody::ToolResult(r) => r.tool_name == tool && r.caller == caller,
            _ => false,
        })
        .collect()
}

#[tokio::test]
async fn app_tools_are_called_directly_and_from_code_with_the_events_of_a_built_in() {
    let f = support::fixture(APP_AGENT);
    let runtime = app_runtime();
    let session = runtime
        .session(f.workspace())
        .agent_file(f.agent())
        .no_sandbox(true)
        .model(scripted(SCRIPT))
        .build()
        .await
        .unwrap();
    assert!(
        session.diagnostics().is_empty(),
        "{:#?}",
        session.diagnostics()
    );
    // The dual-active tools are in the tools list with their hints; the code-mode-only one is
    // not.
    let tools = session.prompt().tools;
    let stamp = tools.iter().find(|t| t.name == "stamp").unwrap();
    assert!(stamp.description.contains("Use stamp once per document"));
    assert!(tools.iter().any(|t| t.name == "measure"));
    assert!(!tools.iter().any(|t| t.name == "ledger"));

    let summary = session.submit("go", None).unwrap().finished().await;
    assert_eq!(
        summary.reason,
        qilin_protocol::FinishReason::Completed,
        "{summary:?}"
    );
    let events = stored(&session).await;
    assert_consistent(&events);

    let read = call_events(&events, "read", CallerKind::Direct);
    let direct = call_events(&events, "stamp", CallerKind::Direct);
    let from_code = call_events(&events, "stamp", CallerKind::Code);
    assert_eq!((read.len(), direct.len(), from_code.len()), (2, 2, 2));
    // The app's direct call records the events a built-in's does, field for field.
    assert_eq!(shape(direct[0]), shape(read[0]), "tool.start");
    assert_eq!(shape(direct[1]), shape(read[1]), "tool.result");
    let EventBody::ToolResult(result) = &direct[1].body else {
        panic!("a result")
    };
    assert_eq!(result.status, CallStatus::Ok);
    assert_eq!(
        result.output,
        Some(json!({"stamps": ["[1] PAID", "[2] PAID"]}))
    );
    assert_eq!(
        result.detail,
        Some(Detail::Text {
            text: "[1] PAID\n[2] PAID".into()
        })
    );
    // From code, it is nested under its `run_code` call, presented by the tool itself.
    let EventBody::ToolStart(start) = &from_code[0].body else {
        panic!("a start")
    };
    assert!(start.parent_call_id.is_some());
    assert_eq!(start.presentation, CallPresentation::new("Stamp", "FILED"));
    let ledger = call_events(&events, "ledger", CallerKind::Code);
    let EventBody::ToolResult(balance) = &ledger[1].body else {
        panic!("a result")
    };
    assert_eq!(balance.output, Some(json!(120)));
    let measured = call_events(&events, "measure", CallerKind::Direct);
    let EventBody::ToolResult(measured) = &measured[1].body else {
        panic!("a result")
    };
    assert_eq!(measured.output, Some(json!({"characters": 5})));
    // What the code printed reached the model through `run_code`.
    let run_code = call_events(&events, "run_code", CallerKind::Direct);
    let EventBody::ToolResult(ran) = &run_code[1].body else {
        panic!("a result")
    };
    assert!(
        format!("{:?}", ran.content).contains("[1] FILED 120"),
        "{:?}",
        ran.content
    );
}

#[tokio::test]
async fn a_code_mode_only_app_tool_under_tools_is_left_out_with_a_warning() {
    let f = support::fixture(
        "name: clerk\ninstructions: Read balances.\ntools: [stamp, ledger]\ncode_mode: true\n",
    );
    let session = app_runtime()
        .session(f.workspace())
        .agent_file(f.agent())
        .no_sandbox(true)
        .model(scripted("turns:\n  - say: hi\n"))
        .build()
        .await
        .unwrap();
    let names: Vec<String> = session.prompt().tools.into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"stamp".to_string()), "{names:?}");
    assert!(!names.contains(&"ledger".to_string()), "{names:?}");
    assert_eq!(
        session.diagnostics().len(),
        1,
        "{:#?}",
        session.diagnostics()
    );
    assert!(
        session.diagnostics()[0]
            .message
            .contains("`ledger` is code-mode-only")
    );
}

#[tokio::test]
async fn a_session_tool_is_that_session_s_alone_and_a_taken_name_is_refused() {
    let f = support::fixture("name: clerk\ninstructions: Stamp.\ntools: [stamp]\n");
    let plain = Runtime::new(f.store.clone(), CodeSandbox::InProcess);
    let with_tool = plain
        .session(f.workspace())
        .agent_file(f.agent())
        .no_sandbox(true)
        .model(scripted("turns:\n  - say: hi\n"))
        .tool(Stamp)
        .build()
        .await
        .unwrap();
    assert!(with_tool.prompt().tools.iter().any(|t| t.name == "stamp"));
    // Another session of the same runtime does not have it: its agent file names no tool.
    let without = plain
        .session(f.workspace())
        .agent_file(f.agent())
        .no_sandbox(true)
        .model(scripted("turns:\n  - say: hi\n"))
        .build()
        .await;
    let Err(RuntimeError::Agent(error)) = without else {
        panic!("the agent file names a tool the session lacks");
    };
    assert!(error.to_string().contains("`stamp`"), "{error}");
    // A name a built-in has, or one given twice, is refused with the name.
    let clash = app_runtime()
        .session(f.workspace())
        .agent_file(f.agent())
        .tool(Stamp)
        .build()
        .await;
    assert!(
        matches!(&clash, Err(RuntimeError::Tools(RegistryError::Duplicate(name))) if name == "stamp"),
        "{:?}",
        clash.err()
    );
    let read_again =
        DynamicTool::from_fn("read", "Reads.", json!({"type": "object"}), |_, _| async {
            Ok(Value::Null)
        });
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let runtime = Runtime::builder(store, CodeSandbox::InProcess)
        .dynamic_tool(read_again)
        .build()
        .unwrap();
    let refused = runtime
        .session(f.workspace())
        .agent_file(f.agent())
        .build()
        .await;
    assert!(
        matches!(&refused, Err(RuntimeError::Tools(RegistryError::Duplicate(name))) if name == "read"),
        "{:?}",
        refused.err()
    );
}

/// A dual-active tool one of whose fields has no description.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct VagueArgs {
    /// The account.
    pub account: String,
    #[allow(missing_docs)]
    pub amount: i64,
}

/// Books an amount on an account.
#[derive(qilin_tool::Tool)]
#[tool(name = "book")]
pub struct Book;

impl Tool for Book {
    type Args = VagueArgs;
    type Output = bool;
    fn prompt_hint(&self) -> &str {
        "Book each amount once; a negative amount is a refund."
    }
    fn present(&self, args: &VagueArgs) -> CallPresentation {
        CallPresentation::new("Book", &args.account)
    }
    fn before_detail(&self, _: &VagueArgs) -> Option<Detail> {
        None
    }
    fn detail(&self, _: &VagueArgs, _: &ToolResult<bool>) -> Option<Detail> {
        None
    }
    async fn call(&self, _: VagueArgs, _: &ToolContext) -> ToolResult<bool> {
        Ok(true)
    }
}

#[test]
fn check_fails_a_dual_active_app_tool_with_an_undescribed_field() {
    let f = support::fixture("name: clerk\ninstructions: Stamp.\ntools: [stamp]\n");
    let mut tools = ToolRegistry::new();
    tools.register(Stamp).unwrap();
    let report = qilin_runtime::check(&tools, &[f.workspace()]).unwrap();
    assert!(!report.fails(false), "{:#?}", report.findings);

    tools.register(Book).unwrap();
    let report = qilin_runtime::check(&tools, &[f.workspace()]).unwrap();
    assert!(report.fails(false));
    let [finding] = report.findings.as_slice() else {
        panic!("one finding: {:#?}", report.findings);
    };
    assert_eq!(finding.rule, Rule::ParameterDescriptionMissing);
    assert!(
        finding.location.to_string().contains("book"),
        "{}",
        finding.location
    );
    assert!(
        finding.location.to_string().contains("amount"),
        "{}",
        finding.location
    );
    // A path that is neither a workspace, a skill nor an agent file is refused by name.
    let missing = qilin_runtime::check(&tools, &[f.workspace().join("nowhere")]);
    assert!(
        matches!(&missing, Err(RuntimeError::CheckTarget(_))),
        "{:?}",
        missing.err()
    );
}
