//! A local HTTP server that answers each request with the next recorded streaming body and
//! keeps every request body it received.

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The server's address and the request bodies it received, in order (parsed, and as the
/// bytes that arrived).
pub struct FakeProvider {
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<serde_json::Value>>>,
    #[allow(dead_code)]
    pub raw: Arc<Mutex<Vec<Vec<u8>>>>,
}

/// Starts a server on 127.0.0.1 answering request N with `answers[N]` as `text/event-stream`;
/// an answer that starts with `HTTP/` is sent as it is (a whole response, status line first).
pub async fn serve(answers: Vec<String>) -> FakeProvider {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let raw = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    let seen_raw = Arc::clone(&raw);
    tokio::spawn(async move {
        for answer in answers {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let body = read_request_body(&mut socket).await;
            seen.lock()
                .unwrap()
                .push(serde_json::from_slice(&body).unwrap());
            seen_raw.lock().unwrap().push(body);
            if !answer.starts_with("HTTP/") {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                socket.write_all(head.as_bytes()).await.unwrap();
            }
            socket.write_all(answer.as_bytes()).await.unwrap();
            socket.shutdown().await.unwrap();
        }
    });
    FakeProvider {
        base_url,
        requests,
        raw,
    }
}

async fn read_request_body(socket: &mut TcpStream) -> Vec<u8> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let read = socket.read(&mut chunk).await.unwrap();
        assert!(read > 0, "the client closed the connection mid-request");
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = find(&buffer, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map(|value| value.trim().parse().unwrap())
                .unwrap_or(0);
            while buffer.len() < end + 4 + length {
                let read = socket.read(&mut chunk).await.unwrap();
                assert!(read > 0, "the client closed the connection mid-body");
                buffer.extend_from_slice(&chunk[..read]);
            }
            return buffer[end + 4..end + 4 + length].to_vec();
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Server-sent events from `(event name, JSON data)` pairs; no name writes a bare `data:`.
pub fn sse(events: &[(Option<&str>, &str)]) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out
}
