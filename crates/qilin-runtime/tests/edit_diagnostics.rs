//! Diagnostics after an edit, end to end: a session of an agent with
//! `lsp: {diagnostics_after_edit: true}` whose (scripted) model breaks a call in a Python file
//! with `edit`, then fixes it; each `edit` result carries what the real language server
//! (pyright from `tests/lsp-servers`) found new or gone.

mod support;

use qilin_protocol::lsp::{EditDiagnostics, LspSeverity};
use qilin_protocol::{CallStatus, EventBody, ToolResultEvent};
use std::path::Path;
use support::{assert_consistent, fixture, stored};

const BREAK_THEN_FIX: &str = r#"
turns:
  - calls:
      - tool: edit
        args:
          path: app.py
          old_string: "print(area_of(circle))"
          new_string: "print(area_of(circle, 3))"
  - calls:
      - tool: edit
        args:
          path: app.py
          old_string: "print(area_of(circle, 3))"
          new_string: "print(area_of(circle))"
  - say: "Broken, then fixed."
"#;

/// The Python fixture of `qilin-lsp`'s tests.
fn python_fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../qilin-lsp/tests/fixtures/python")
}

/// pyright from `tests/lsp-servers`.
fn pyright() -> std::path::PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/lsp-servers/node_modules/.bin/pyright-langserver");
    assert!(
        bin.exists(),
        "the test language servers are not installed: run `npm ci --prefix tests/lsp-servers --no-audit --no-fund`"
    );
    bin
}

fn diagnostics(result: &ToolResultEvent) -> EditDiagnostics {
    assert_eq!(result.status, CallStatus::Ok, "{result:#?}");
    let output = result.output.as_ref().expect("edit has an output");
    serde_json::from_value(
        output
            .get("diagnostics")
            .cloned()
            .unwrap_or_else(|| panic!("the edit carried no diagnostics: {output:#}")),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_in_a_session_reports_the_call_it_broke_and_the_fix_reports_it_gone() {
    let f = fixture(
        "name: coder\ninstructions: Change the code.\ntools: [read, edit]\n\
         lsp:\n  diagnostics_after_edit: true\n",
    );
    for name in ["app.py", "shapes.py", "pyrightconfig.json"] {
        std::fs::copy(python_fixture().join(name), f.workspace().join(name)).unwrap();
    }
    // The server is named by its path, so the session finds it without a `PATH` of its own.
    std::fs::write(
        f.workspace().join(".qilin/lsp.yaml"),
        format!(
            "servers:\n  python:\n    command: {}\n    args: [--stdio]\n",
            pyright().display()
        ),
    )
    .unwrap();
    let session = f.session(BREAK_THEN_FIX, false).await;
    session
        .submit("Break the call, then fix it.", None)
        .unwrap()
        .finished()
        .await;
    let events = stored(&session).await;
    assert_consistent(&events);
    let edits: Vec<&ToolResultEvent> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(result) if result.tool_name == "edit" => Some(result),
            _ => None,
        })
        .collect();
    assert_eq!(edits.len(), 2, "{edits:#?}");

    let broken = diagnostics(edits[0]);
    assert_eq!(broken.server, "pyright-langserver");
    assert_eq!(broken.introduced.len(), 1, "{broken:#?}");
    let error = &broken.introduced[0];
    assert_eq!(error.severity, Some(LspSeverity::Error));
    assert_eq!(error.path.as_deref(), Some("app.py"));
    assert_eq!(error.line, 12);
    assert_eq!(error.text.as_deref(), Some("    print(area_of(circle, 3))"));
    assert!(broken.resolved.is_empty(), "{broken:#?}");
    assert_eq!(broken.remaining, 1);

    let fixed = diagnostics(edits[1]);
    assert!(fixed.introduced.is_empty(), "{fixed:#?}");
    assert_eq!(fixed.resolved.len(), 1, "{fixed:#?}");
    assert_eq!(fixed.resolved[0].message, error.message);
    assert_eq!(fixed.remaining, 0);
    assert_eq!(
        std::fs::read_to_string(f.workspace().join("app.py")).unwrap(),
        std::fs::read_to_string(python_fixture().join("app.py")).unwrap()
    );
}
