//! Connections that keep the server waiting are closed: headers that never finish, a kept-alive
//! connection with no next request, a body that does not arrive. Raw TCP clients, as a hostile
//! local user would write them; event streams, long-lived but never quiet, stay open.

use crate::support::{ASKING_AGENT, Backend, PATIENCE, World};
use qilin_server::{ConnectionLimits, StreamOptions};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Limits short enough for a test to wait them out.
fn short_limits() -> ConnectionLimits {
    ConnectionLimits {
        header_read: Duration::from_millis(300),
        body_read: Duration::from_millis(300),
        idle: Duration::from_millis(600),
    }
}

/// Reads what the server sends until it closes the connection; fails the test when it keeps
/// the connection open past the test's patience.
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let read = tokio::time::timeout(PATIENCE, async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the server keeps the connection open; it sent {:?}",
        String::from_utf8_lossy(&received)
    );
    String::from_utf8_lossy(&received).into_owned()
}

/// A client that sends half a header line and then nothing is disconnected, and the server
/// goes on serving everyone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    let server = world
        .serve_with(|config| config.connections = short_limits())
        .await;
    let address = server.base.trim_start_matches("http://").to_string();
    let mut slow = TcpStream::connect(&address).await.unwrap();
    slow.write_all(b"GET /api/info HTTP/1.1\r\nHost: 127.0")
        .await
        .unwrap();
    let answered = until_closed(&mut slow).await;
    assert_eq!(answered, "", "closed without an answer");

    // A connection that sends nothing at all is closed the same way.
    let mut silent = TcpStream::connect(&address).await.unwrap();
    assert_eq!(until_closed(&mut silent).await, "");

    let info = server.get("/api/info").await;
    assert_eq!(info.status, 200, "{info:?}");
    server.stop().await;
    world.finish().await;
}

/// A kept-alive connection whose client sends no next request is closed once the header time
/// has passed, after its answer arrived whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_with_no_next_request_is_closed() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    let server = world
        .serve_with(|config| config.connections = short_limits())
        .await;
    let address = server.base.trim_start_matches("http://").to_string();
    let mut client = TcpStream::connect(&address).await.unwrap();
    let request = format!(
        "GET /api/info HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\r\n",
        server.token
    );
    client.write_all(request.as_bytes()).await.unwrap();
    let answered = until_closed(&mut client).await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    assert!(answered.contains("\"protocolVersion\""), "{answered}");
    server.stop().await;
    world.finish().await;
}

/// A request whose body does not arrive within the body time is answered with a clear error
/// and its connection closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_arrive_is_refused_and_its_connection_closed() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    let server = world
        .serve_with(|config| config.connections = short_limits())
        .await;
    let address = server.base.trim_start_matches("http://").to_string();
    let mut client = TcpStream::connect(&address).await.unwrap();
    let request = format!(
        "POST /api/sessions HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{{\"title\": ",
        server.token
    );
    client.write_all(request.as_bytes()).await.unwrap();
    let answered = until_closed(&mut client).await;
    assert!(answered.starts_with("HTTP/1.1 400"), "{answered}");
    assert!(answered.contains("\"unreadable_body\""), "{answered}");
    assert!(
        answered.contains("the request body did not arrive whole within"),
        "{answered}"
    );
    assert_eq!(
        server.get("/api/sessions").await.body["sessions"],
        serde_json::json!([]),
        "nothing was created"
    );
    server.stop().await;
    world.finish().await;
}

/// An event stream lives far longer than the idle limit: it is long-lived, never quiet (its
/// heartbeats keep it moving).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_with_heartbeats_outlives_the_idle_limit() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("quiet.yaml", "turns:\n  - say: hi\n");
    let server = world
        .serve_with(|config| {
            config.connections = short_limits();
            config.stream = StreamOptions {
                heartbeat: Duration::from_millis(100),
                ..StreamOptions::default()
            };
        })
        .await;
    let session = server.create("quiet.yaml").await;
    let mut stream = server
        .stream(&format!("/api/sessions/{session}/events/stream"), None)
        .await;
    // Thirty heartbeats: five times the idle limit, on a stream that only the heartbeats move.
    let mut heartbeats = 0;
    while heartbeats < 30 {
        let message = stream
            .next_or_heartbeat()
            .await
            .expect("the stream stays open");
        if message.event == "heartbeat" {
            heartbeats += 1;
        }
    }
    server.stop().await;
    world.finish().await;
}
