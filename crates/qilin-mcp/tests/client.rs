//! [`McpClient`] against hostile servers (this crate's `qilin-mcp-test-server` fixture with
//! `--hostile MODE`): nothing a server does or withholds makes a listing or a call hang.

use qilin_mcp::{McpClient, McpError};
use std::path::Path;
use std::time::Duration;

/// The longest a test waits on something that must not hang, before it calls it hung.
const PATIENCE: Duration = Duration::from_secs(60);

/// The fixture as a hostile server (`--hostile MODE`), with a startup timeout of `startup_ms`.
fn hostile(mode: &str, startup_ms: u64, workspace: &Path) -> qilin_skill::McpServer {
    qilin_skill::McpServer {
        name: "hostile".to_string(),
        transport: qilin_skill::McpTransport::Stdio {
            command: env!("CARGO_BIN_EXE_qilin-mcp-test-server").to_string(),
            args: vec!["--hostile".to_string(), mode.to_string()],
            env: Default::default(),
            cwd: workspace.to_path_buf(),
        },
        direct: Vec::new(),
        startup_timeout: Duration::from_millis(startup_ms),
        declared_in: workspace.join("a.agent"),
        workspace: workspace.to_path_buf(),
    }
}

/// A server that completes the handshake and then never answers `tools/list` fails its listing
/// at its startup timeout (the listing is part of starting), and is stopped and left alone a
/// while, so nothing that lists it hangs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_lists_its_tools_fails_the_listing_at_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let client = McpClient::connect(hostile("never-lists", 1500, dir.path()))
        .await
        .expect("the handshake completes");
    let listed = tokio::time::timeout(PATIENCE, client.list())
        .await
        .expect("the listing ends");
    let error = listed.unwrap_err().to_string();
    assert!(
        error.contains("did not list its tools within 1500 ms")
            && error.contains("startup_timeout_ms")
            && error.contains("started again in 1 s"),
        "{error}"
    );
    let down = client.ensure_started().await.unwrap_err();
    assert!(
        matches!(down, McpError::Down { .. }),
        "stopped and left alone: {down:?}"
    );
    client.close().await;
}

/// A server whose `tools/list` always offers another page is read up to the bound of pages,
/// then fails its listing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_pages_forever_fails_the_listing_after_the_last_page_read() {
    let dir = tempfile::tempdir().unwrap();
    let client = McpClient::connect(hostile("pages-forever", 30_000, dir.path()))
        .await
        .expect("the handshake completes");
    let listed = tokio::time::timeout(PATIENCE, client.list())
        .await
        .expect("the listing ends");
    let error = listed.unwrap_err().to_string();
    assert!(
        error.contains(&format!(
            "more than {} pages of tools",
            qilin_mcp::MAX_TOOL_PAGES
        )),
        "{error}"
    );
    client.close().await;
}

/// An answer over the limit of one message (which the line codec drops) fails its call at
/// once, naming the limit, whether its `id` comes before the result or after it; the
/// connection stays usable for the next call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_message_limit_fails_its_call_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let client = McpClient::connect(hostile("huge-answers", 30_000, dir.path()))
        .await
        .expect("the handshake completes");
    let cancel = tokio_util::sync::CancellationToken::new();
    for tool in ["big_id_first", "big_id_last"] {
        // No deadline: before, such a call waited for the call's time limit (20 minutes).
        let called = tokio::time::timeout(
            PATIENCE,
            client.call(tool, serde_json::Map::new(), &cancel, None),
        )
        .await
        .expect("the call ends without waiting for its time limit");
        let error = called.unwrap_err().to_string();
        assert!(
            error.contains("the call of `")
                && error.contains(
                    "larger than the 16 MiB Qilin takes from an MCP server in one message"
                ),
            "{tool}: {error}"
        );
    }
    let small = client
        .call("small", serde_json::Map::new(), &cancel, None)
        .await
        .expect("the connection goes on");
    assert!(format!("{small:?}").contains("small answered"), "{small:?}");
    client.close().await;
}
