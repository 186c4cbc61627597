//! The fixture's hostile server (`--hostile MODE`).

use serde_json::{Value, json};

/// A server written by hand, line by line, so it can misbehave in ways an SDK would not let
/// it. It answers `initialize` and `ping`; then, by `mode`:
///
/// - `never-lists`: never answers `tools/list`;
/// - `pages-forever`: answers every `tools/list` with one tool and a cursor to a next page;
/// - `lists-once`: answers the first `tools/list` (the tool `echo`), says its tool list
///   changed, and never answers `tools/list` again; `echo` still answers;
/// - `huge-answers`: its tool `big_id_first` answers with a message of 17 MiB whose `id` comes
///   before the result (as rmcp and the Python SDK write it), `big_id_last` with one whose `id`
///   comes after (as the TypeScript SDK writes it), and `small` with a few bytes.
pub fn serve(mode: &str) -> std::io::Result<()> {
    use std::io::{BufRead, Write};
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let tool = |name: &str| json!({"name": name, "description": format!("The tool `{name}`."), "inputSchema": {"type": "object", "properties": {}}});
    let mut listed = 0;
    for line in stdin.lock().lines() {
        let Ok(message) = serde_json::from_str::<Value>(&line?) else {
            continue;
        };
        let id = message["id"].clone();
        let method = message["method"].as_str().unwrap_or_default();
        let answer =
            |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        let mut lines = Vec::new();
        match method {
            "initialize" => lines.push(answer(json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "hostile", "version": "1.0.0"},
            }))),
            "ping" => lines.push(answer(json!({}))),
            "tools/list" => {
                listed += 1;
                match mode {
                    "pages-forever" => lines.push(answer(
                        json!({"tools": [tool(&format!("t{listed}"))], "nextCursor": format!("page-{}", listed + 1)}),
                    )),
                    "lists-once" if listed == 1 => {
                        lines.push(answer(json!({"tools": [tool("echo")]})));
                        lines.push(
                            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                                .to_string(),
                        );
                    }
                    "huge-answers" => lines.push(answer(json!({
                        "tools": [tool("big_id_first"), tool("big_id_last"), tool("small")]
                    }))),
                    _ => {}
                }
            }
            "tools/call" => {
                let text = |text: String| json!({"content": [{"type": "text", "text": text}]});
                let huge = || "x".repeat(17 * 1024 * 1024);
                match message["params"]["name"].as_str().unwrap_or_default() {
                    "big_id_first" => lines.push(answer(text(huge()))),
                    "big_id_last" => lines.push(format!(
                        "{{\"result\":{},\"jsonrpc\":\"2.0\",\"id\":{id}}}",
                        text(huge())
                    )),
                    other => lines.push(answer(text(format!("{other} answered")))),
                }
            }
            _ => {}
        }
        for line in lines {
            stdout.write_all(line.as_bytes())?;
            stdout.write_all(b"\n")?;
        }
        stdout.flush()?;
    }
    Ok(())
}
