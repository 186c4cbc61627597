//! `invoices serve` as a user runs it: the library's server hosting the application's runtime,
//! so a session created over HTTP calls the application's own tools, and the conversation tree
//! the web client renders holds both calls where they were made.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The longest the test waits for the server or the turn.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running `invoices serve`, killed when dropped.
struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    base: String,
    token: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `invoices serve` and reads the URL it prints.
fn serve() -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_invoices"))
        .arg("serve")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("invoices serve starts");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("invoices serve prints its URL before its output ends")
            .unwrap();
        if let Some(url) = line.trim().strip_prefix("http://") {
            break url.to_string();
        }
    };
    let (authority, token) = url
        .split_once("/#token=")
        .unwrap_or_else(|| panic!("a URL with the token in its fragment: {url}"));
    assert!(
        authority.starts_with("127.0.0.1:"),
        "it listens on 127.0.0.1 alone: {url}"
    );
    Served {
        child,
        base: format!("http://{authority}"),
        token: token.to_string(),
    }
}

/// The root call named `tool` of the turn.
fn root_call<'a>(turn: &'a Value, tool: &str) -> &'a Value {
    turn["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| &item["node"])
        .find(|node| node["toolName"] == tool)
        .unwrap_or_else(|| panic!("a root {tool} call: {turn}"))
}

#[tokio::test]
async fn a_session_served_over_http_calls_the_application_s_own_tools() {
    let served = serve();
    let http = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        http.post(format!("{}{path}", served.base))
            .bearer_auth(&served.token)
            .json(&body)
            .send()
    };

    // Without the token the API is closed.
    let refused = http
        .post(format!("{}/api/sessions", served.base))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);

    // A session from the server's defaults: the application's agent and offline script.
    let created = post("/api/sessions", json!({})).await.unwrap();
    assert_eq!(created.status(), 201);
    let session: Value = created.json().await.unwrap();
    assert_eq!(session["agent"], "invoices", "{session}");
    let id = session["id"].as_str().unwrap().to_string();
    let started = post(
        &format!("/api/sessions/{id}/turns"),
        json!({"prompt": "Invoice Acme GmbH, then total what we invoiced in EUR."}),
    )
    .await
    .unwrap();
    assert_eq!(started.status(), 202);

    // The conversation tree, once the turn has finished.
    let deadline = Instant::now() + PATIENCE;
    let turn = loop {
        let snapshot: Value = http
            .get(format!("{}/api/sessions/{id}/snapshot", served.base))
            .bearer_auth(&served.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let turn = &snapshot["turns"][0];
        if !turn["finished"].is_null() {
            break turn.clone();
        }
        assert!(Instant::now() < deadline, "the turn finishes: {snapshot}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(turn["finished"], "completed", "{turn}");

    // The dual-active tool, called directly: a root node, with its result.
    let created = root_call(&turn, "create_invoice");
    assert_eq!(created["caller"], "direct");
    assert_eq!(created["presentation"]["action"], "Create an invoice");
    assert_eq!(created["outcome"]["status"], "ok", "{created}");
    assert_eq!(created["outcome"]["output"]["number"], "INV-0001");

    // The code-mode-only tool, called from Python: nested under its `run_code` call.
    let run_code = root_call(&turn, "run_code");
    assert_eq!(run_code["outcome"]["status"], "ok", "{run_code}");
    let sub_calls = run_code["subCalls"].as_array().unwrap();
    let [totals] = sub_calls.as_slice() else {
        panic!("one call under run_code: {run_code}");
    };
    assert_eq!(totals["toolName"], "invoice_totals");
    assert_eq!(totals["caller"], "code");
    assert_eq!(totals["parentCallId"], run_code["callId"]);
    assert_eq!(totals["outcome"]["status"], "ok", "{totals}");
    assert_eq!(
        totals["outcome"]["output"]["by_customer"][0]["total_cents"],
        102_000
    );
    // No root call is the code-mode-only tool.
    assert!(
        turn["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|item| item["node"]["toolName"] != "invoice_totals"),
        "{turn}"
    );
}
