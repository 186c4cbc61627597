//! The `skill` tool, dispatched through the execution layer as a model's call would be.

mod common;

use common::{discover_workspace, registry_with, write_files, write_skill};
use qilin_protocol::{CallStatus, ContentBlock, EventBody};
use qilin_tool::{Caller, Executor, Session, ToolCall};
use serde_json::{Value, json};
use std::sync::Arc;

struct Setup {
    executor: Executor,
    workspace: tempfile::TempDir,
}

fn setup() -> Setup {
    let workspace = tempfile::tempdir().unwrap();
    let dir = write_skill(
        workspace.path(),
        "data-analysis",
        "Analyse tabular data with pandas-like steps.",
        "# Data analysis\n\nLoad, then summarise.\n",
    );
    write_files(
        &dir,
        &[
            ("reference/queries.md", "# Queries\nGroup by region.\n"),
            ("scripts/clean.py", "print('clean')\n"),
        ],
    );
    write_files(workspace.path(), &[("outside.md", "not part of any skill")]);
    let discovery = discover_workspace(workspace.path());
    assert!(
        discovery.diagnostics.is_empty(),
        "{:#?}",
        discovery.diagnostics
    );
    let registry = Arc::new(registry_with(&discovery));
    let session = Arc::new(Session::new(
        "s",
        workspace.path(),
        workspace.path().join(".data"),
    ));
    Setup {
        executor: Executor::new(registry, session),
        workspace,
    }
}

async fn call(executor: &Executor, arguments: Value) -> (CallStatus, String, Option<Value>) {
    let outcome = executor
        .dispatch(
            ToolCall {
                call_id: "c1".into(),
                name: "skill".into(),
                arguments,
            },
            Caller::Direct,
        )
        .await;
    let text = match outcome.content.as_slice() {
        [ContentBlock::Text { text }] => text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    };
    (outcome.status, text, outcome.output)
}

#[tokio::test]
async fn reading_a_skill_gives_its_body_without_front_matter_and_lists_its_files() {
    let s = setup();
    let (status, text, output) = call(&s.executor, json!({"name": "data-analysis"})).await;
    assert_eq!(status, CallStatus::Ok);
    assert!(text.starts_with("# Data analysis\n\nLoad, then summarise."));
    assert!(!text.contains("description:"));
    assert!(
        text.contains("- reference/queries.md\n- scripts/clean.py"),
        "{text}"
    );
    let output = output.unwrap();
    assert_eq!(output["file"], "SKILL.md");
    assert_eq!(
        output["files"],
        json!(["reference/queries.md", "scripts/clean.py"])
    );
}

#[tokio::test]
async fn a_file_is_read_by_relative_path_and_references_also_works() {
    let s = setup();
    for file in [
        "reference/queries.md",
        "references/queries.md",
        "./reference/queries.md",
    ] {
        let (status, text, _) =
            call(&s.executor, json!({"name": "data-analysis", "file": file})).await;
        assert_eq!(status, CallStatus::Ok, "{file}: {text}");
        assert_eq!(text, "# Queries\nGroup by region.", "{file}");
    }
}

#[tokio::test]
async fn paths_that_leave_the_skill_folder_are_refused() {
    let s = setup();
    let outside = s.workspace.path().join("outside.md");
    let cases = [
        ("../../../outside.md", "leaves the skill folder"),
        (
            "reference/../../../../outside.md",
            "leaves the skill folder",
        ),
        (outside.to_str().unwrap(), "absolute path"),
    ];
    for (file, expected) in cases {
        let (status, text, _) =
            call(&s.executor, json!({"name": "data-analysis", "file": file})).await;
        assert_eq!(status, CallStatus::Error, "{file}");
        assert!(text.contains(expected), "{file}: {text}");
        assert!(!text.contains("not part of any skill"));
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_out_of_the_skill_folder_is_refused() {
    let s = setup();
    let dir = s.workspace.path().join(".qilin/skills/data-analysis");
    std::os::unix::fs::symlink(s.workspace.path().join("outside.md"), dir.join("link.md")).unwrap();
    let (status, text, _) = call(
        &s.executor,
        json!({"name": "data-analysis", "file": "link.md"}),
    )
    .await;
    assert_eq!(status, CallStatus::Error);
    assert!(text.contains("symlink leading outside"), "{text}");
}

#[tokio::test]
async fn a_missing_file_lists_the_files_the_skill_has() {
    let s = setup();
    let (status, text, _) = call(
        &s.executor,
        json!({"name": "data-analysis", "file": "reference/nope.md"}),
    )
    .await;
    assert_eq!(status, CallStatus::Error);
    assert!(text.contains("has no file `reference/nope.md`"), "{text}");
    assert!(
        text.contains("reference/queries.md, scripts/clean.py"),
        "{text}"
    );
}

#[tokio::test]
async fn an_unknown_skill_suggests_close_names_and_lists_the_available_ones() {
    let s = setup();
    let (status, text, _) = call(&s.executor, json!({"name": "data-analytics"})).await;
    assert_eq!(status, CallStatus::Error);
    assert!(text.contains("did you mean `data-analysis`?"), "{text}");
    assert!(text.contains("The available skills are: data-analysis."));
}

#[tokio::test]
async fn the_call_is_presented_as_read_skill_with_the_name_and_file() {
    let s = setup();
    let mut events = s.executor.session().events().subscribe();
    call(
        &s.executor,
        json!({"name": "data-analysis", "file": "scripts/clean.py"}),
    )
    .await;
    let start = std::iter::from_fn(|| events.try_recv().ok())
        .find_map(|event| match event.body {
            EventBody::ToolStart(start) => Some(start),
            _ => None,
        })
        .unwrap();
    assert_eq!(start.presentation.action, "Read skill");
    assert_eq!(
        start.presentation.remark,
        "data-analysis / scripts/clean.py"
    );
}

#[tokio::test]
async fn the_tool_definition_describes_every_argument() {
    let s = setup();
    let definition = s
        .executor
        .registry()
        .get("skill")
        .unwrap()
        .direct_definition()
        .unwrap();
    assert!(definition.description.starts_with("Read a skill"));
    assert!(definition.description.contains("call skill with its name"));
    for field in ["name", "file"] {
        let described = &definition.parameters["properties"][field]["description"];
        assert!(described.as_str().is_some_and(|d| !d.is_empty()), "{field}");
    }
}
