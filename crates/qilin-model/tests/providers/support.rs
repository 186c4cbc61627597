//! A minimal HTTP/1.1 server on 127.0.0.1 that replays scripted replies and records every
//! request, to fake a provider at the HTTP boundary.

use qilin_model::{Backoff, HttpSettings, ModelEvent, ModelResponse, ModelStream, RetryPolicy};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The request line's path.
    pub path: String,
    /// Header names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON.
    pub body: Value,
}

impl Recorded {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// What the server wrote or saw, in order.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A request arrived.
    Request(Recorded),
    /// A mark set by [`Reply::mark_after`] fired.
    Mark(String),
}

/// How the server answers one request.
#[derive(Debug, Clone)]
pub enum Body {
    /// HTTP 200 `text/event-stream`: the pieces written one by one, then the connection closed.
    Sse(Vec<String>),
    /// An HTTP status with headers and a body.
    Status {
        /// The status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: String,
    },
    /// HTTP 200 `text/event-stream`: the pieces written, then the connection held open.
    Stall(Vec<String>),
}

/// One reply, optionally recording a mark some time after it was written.
#[derive(Debug, Clone)]
pub struct Reply {
    body: Body,
    mark: Option<(Duration, String)>,
}

impl Reply {
    /// A streamed 200 answer.
    pub fn sse(pieces: Vec<String>) -> Reply {
        Reply {
            body: Body::Sse(pieces),
            mark: None,
        }
    }

    /// A status answer.
    pub fn status(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
        Reply {
            body: Body::Status {
                status,
                headers: headers
                    .iter()
                    .map(|(key, value)| (key.to_string(), value.to_string()))
                    .collect(),
                body: body.to_owned(),
            },
            mark: None,
        }
    }

    /// A 200 answer that sends `pieces` and then nothing, never closing.
    pub fn stall(pieces: Vec<String>) -> Reply {
        Reply {
            body: Body::Stall(pieces),
            mark: None,
        }
    }

    /// Records [`Entry::Mark`] `label` `delay` after this reply was written.
    pub fn mark_after(mut self, delay: Duration, label: &str) -> Reply {
        self.mark = Some((delay, label.to_owned()));
        self
    }
}

/// The running server.
pub struct FakeServer {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Entry>>>,
}

impl FakeServer {
    /// Serves `replies`, one per connection, in order; later connections get a 500.
    pub async fn start(replies: Vec<Reply>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let server_log = log.clone();
        tokio::spawn(async move {
            let mut replies = replies.into_iter();
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let reply = replies.next().unwrap_or_else(|| {
                    Reply::status(500, &[], r#"{"error":{"message":"no more replies"}}"#)
                });
                tokio::spawn(serve(socket, reply, server_log.clone()));
            }
        });
        FakeServer { addr, log }
    }

    /// `http://127.0.0.1:PORT` followed by `suffix`.
    pub fn url(&self, suffix: &str) -> String {
        format!("http://{}{suffix}", self.addr)
    }

    /// Everything so far.
    pub fn log(&self) -> Vec<Entry> {
        self.log.lock().expect("log").clone()
    }

    /// The requests so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log()
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Request(request) => Some(request),
                Entry::Mark(_) => None,
            })
            .collect()
    }
}

async fn serve(mut socket: TcpStream, reply: Reply, log: Arc<Mutex<Vec<Entry>>>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    log.lock().expect("log").push(Entry::Request(request));
    match reply.body {
        Body::Sse(pieces) => {
            write_sse(&mut socket, pieces).await;
            let _ = socket.shutdown().await;
        }
        Body::Status {
            status,
            mut headers,
            body,
        } => {
            headers.push(("content-length".into(), body.len().to_string()));
            headers.push(("content-type".into(), "application/json".into()));
            let text = format!("{}{body}", head(status, &headers));
            let _ = socket.write_all(text.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
        Body::Stall(pieces) => {
            write_sse(&mut socket, pieces).await;
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
    }
    if let Some((delay, label)) = reply.mark {
        tokio::time::sleep(delay).await;
        log.lock().expect("log").push(Entry::Mark(label));
    }
}

fn head(status: u16, headers: &[(String, String)]) -> String {
    let mut head = format!("HTTP/1.1 {status} Fake\r\nconnection: close\r\n");
    for (key, value) in headers {
        head.push_str(&format!("{key}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

async fn write_sse(socket: &mut TcpStream, pieces: Vec<String>) {
    let headers = [("content-type".to_owned(), "text/event-stream".to_owned())];
    let _ = socket.write_all(head(200, &headers).as_bytes()).await;
    for piece in pieces {
        let _ = socket.write_all(piece.as_bytes()).await;
        let _ = socket.flush().await;
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut data = Vec::new();
    let mut buffer = [0u8; 4096];
    let header_end = loop {
        if let Some(at) = data.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..read]);
    };
    let head = String::from_utf8_lossy(&data[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(key, _)| key == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    while data.len() < header_end + length {
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..read]);
    }
    let body =
        serde_json::from_slice(&data[header_end..header_end + length]).unwrap_or(Value::Null);
    Some(Recorded {
        path,
        headers,
        body,
    })
}

/// Settings for tests: quick retries and a short idle timeout.
pub fn quick_settings() -> HttpSettings {
    HttpSettings {
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 4,
            backoff: Backoff::new(Duration::from_millis(5), Duration::from_millis(20)).jittered(),
            ..RetryPolicy::default()
        },
    }
}

/// Every item of a stream, errors included.
pub async fn drain(mut stream: ModelStream) -> Vec<Result<ModelEvent, qilin_model::ModelError>> {
    use futures_util::StreamExt;
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item);
    }
    items
}

/// The stream's events, failing the test on an error.
pub async fn events(stream: ModelStream) -> Vec<ModelEvent> {
    drain(stream)
        .await
        .into_iter()
        .map(|item| item.expect("no error in the stream"))
        .collect()
}

/// The stream's answer, failing the test on an error.
pub async fn response(stream: ModelStream) -> ModelResponse {
    ModelResponse::collect(stream)
        .await
        .expect("a whole answer")
}

/// A fixture from `tests/fixtures`.
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// `text` cut into pieces of `size` bytes (on character boundaries), so events straddle
/// network writes.
pub fn pieces(text: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        out.push(rest[..end].to_owned());
        rest = &rest[end..];
    }
    out
}

/// The two tools the test conversations mount.
pub fn tools() -> Vec<qilin_tool::DirectDefinition> {
    vec![
        qilin_tool::DirectDefinition {
            name: "read".into(),
            description: "Read a file.\n\nUse read before editing.".into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "The file to read."}},
                "required": ["path"],
            }),
        },
        qilin_tool::DirectDefinition {
            name: "grep".into(),
            description: "Search file contents with a regular expression.".into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"pattern": {"type": "string", "description": "The regex."}},
                "required": ["pattern"],
            }),
        },
    ]
}

/// The first request of a turn: system prompt, tools, one user message.
pub fn first_request(model: &str) -> qilin_model::ModelRequest {
    qilin_model::ModelRequest {
        model: model.into(),
        system: "You are Qilin, a careful coding agent.".into(),
        tools: tools(),
        messages: vec![qilin_model::Message::user("Check src/main.rs for TODOs.")],
        max_tokens: Some(1024),
        reasoning: None,
    }
}

/// A tiny PNG's bytes, base64.
pub const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// The request after `first`, given the model's answer: its assistant message, then a result
/// for each call under the call's id (the first with text and an image, the others failed).
pub fn next_request(
    first: &qilin_model::ModelRequest,
    answer: &ModelResponse,
) -> qilin_model::ModelRequest {
    use qilin_model::{Message, ToolCallResult};
    use qilin_protocol::ContentBlock;
    let results = answer
        .tool_calls
        .iter()
        .enumerate()
        .map(|(position, call)| {
            if position == 0 {
                ToolCallResult::ok(
                    &call.id,
                    vec![
                        ContentBlock::text("fn main() {}"),
                        ContentBlock::Image {
                            media_type: "image/png".into(),
                            data: PNG_BASE64.into(),
                        },
                    ],
                )
            } else {
                ToolCallResult::error(&call.id, vec![ContentBlock::text("INVALID_ARGUMENTS")])
            }
        })
        .collect();
    let mut next = first.clone();
    next.messages.push(answer.to_message());
    next.messages.push(Message::tool_results(results));
    next
}
