//! `web_fetch` against a plain HTTP server on 127.0.0.1.

mod common;

use common::{Harness, harness_with};
use qilin_protocol::ErrorCode;
use qilin_tools::WebFetchConfig;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves a few fixed routes over HTTP/1.1, one response per connection.
async fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&request[..n]).into_owned();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, headers, body): (&str, String, Vec<u8>) = match path.as_str() {
                    "/page" => (
                        "200 OK",
                        "Content-Type: text/html; charset=utf-8\r\n".into(),
                        b"<html><head><title>T</title></head><body><h1>Title</h1><p>Hello <a href=\"/x\">link</a></p></body></html>".to_vec(),
                    ),
                    "/data.json" => (
                        "200 OK",
                        "Content-Type: application/json\r\n".into(),
                        br#"{"answer": 42}"#.to_vec(),
                    ),
                    "/image" => (
                        "200 OK",
                        "Content-Type: image/png\r\n".into(),
                        b"\x89PNG\r\n\x1a\n\0\0\0".to_vec(),
                    ),
                    "/redirect" => ("302 Found", "Location: /page\r\n".into(), Vec::new()),
                    "/loop" => ("302 Found", "Location: /loop\r\n".into(), Vec::new()),
                    "/big" => ("200 OK", "Content-Type: text/plain\r\n".into(), vec![b'a'; 100_000]),
                    "/slow" => {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                        ("200 OK", "Content-Type: text/plain\r\n".into(), b"late".to_vec())
                    }
                    _ => (
                        "404 Not Found",
                        "Content-Type: text/html\r\n".into(),
                        b"<p>Nothing here</p>".to_vec(),
                    ),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&body).await;
            });
        }
    });
    format!("http://{address}")
}

fn allowing(config: WebFetchConfig) -> Harness {
    let mut services = qilin_tools::session_services();
    services.insert(Arc::new(config));
    harness_with(services)
}

fn local() -> Harness {
    allowing(WebFetchConfig {
        allow_private: true,
        ..WebFetchConfig::default()
    })
}

#[tokio::test]
async fn loopback_is_refused_by_default_by_address_and_by_name() {
    let base = serve().await;
    let h = common::harness();
    let message = h
        .err(
            "web_fetch",
            json!({"url": format!("{base}/page")}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("leads to 127.0.0.1"), "{message}");
    let port = base.rsplit(':').next().unwrap();
    let message = h
        .err(
            "web_fetch",
            json!({"url": format!("http://localhost:{port}/page")}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("loopback, private or link-local"),
        "{message}"
    );
}

#[tokio::test]
async fn html_becomes_markdown_unless_raw() {
    let base = serve().await;
    let h = local();
    let (output, text) = h
        .ok("web_fetch", json!({"url": format!("{base}/page")}))
        .await;
    let content = output["content"].as_str().unwrap();
    assert!(content.contains("# Title"), "{content}");
    assert!(content.contains("Hello [link](/x)"), "{content}");
    assert!(!content.contains("<p>"));
    assert_eq!(output["status"], 200);
    assert!(text.starts_with(&format!("{base}/page (text/html")));
    let (output, _) = h
        .ok(
            "web_fetch",
            json!({"url": format!("{base}/page"), "raw": true}),
        )
        .await;
    assert!(
        output["content"]
            .as_str()
            .unwrap()
            .contains("<h1>Title</h1>")
    );
}

#[tokio::test]
async fn json_is_returned_as_served_and_redirects_are_followed() {
    let base = serve().await;
    let h = local();
    let (output, _) = h
        .ok("web_fetch", json!({"url": format!("{base}/data.json")}))
        .await;
    assert_eq!(output["content"], r#"{"answer": 42}"#);
    assert_eq!(output["content_type"], "application/json");
    let (output, _) = h
        .ok("web_fetch", json!({"url": format!("{base}/redirect")}))
        .await;
    assert_eq!(output["url"], format!("{base}/page"));
    let message = h
        .err(
            "web_fetch",
            json!({"url": format!("{base}/loop")}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(
        message.contains("redirected more than 10 times"),
        "{message}"
    );
}

#[tokio::test]
async fn binary_content_and_error_statuses_are_errors_that_say_why() {
    let base = serve().await;
    let h = local();
    let message = h
        .err(
            "web_fetch",
            json!({"url": format!("{base}/image")}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`image/png`") && message.contains("not text"),
        "{message}"
    );
    let message = h
        .err(
            "web_fetch",
            json!({"url": format!("{base}/nope")}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(
        message.contains("404 Not Found") && message.contains("Nothing here"),
        "{message}"
    );
}

#[tokio::test]
async fn size_and_time_caps_apply() {
    let base = serve().await;
    let h = allowing(WebFetchConfig {
        allow_private: true,
        max_bytes: 1000,
        timeout: Duration::from_millis(500),
    });
    let (output, text) = h
        .ok("web_fetch", json!({"url": format!("{base}/big")}))
        .await;
    assert_eq!(output["truncated"], true);
    assert_eq!(output["bytes"], 1000);
    assert!(text.contains("larger than the size cap"));
    let message = h
        .err(
            "web_fetch",
            json!({"url": format!("{base}/slow")}),
            ErrorCode::ToolFailed,
        )
        .await;
    assert!(message.contains("did not answer within 0.5 s"), "{message}");
}

#[tokio::test]
async fn invalid_urls_and_schemes_are_refused() {
    let h = local();
    let message = h
        .err(
            "web_fetch",
            json!({"url": "not a url"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("is not a valid absolute URL"), "{message}");
    let message = h
        .err(
            "web_fetch",
            json!({"url": "file:///etc/passwd"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("`file` scheme"), "{message}");
}

/// A proxy configured in the environment would resolve the host again, after the address
/// guard: web_fetch never uses one. The test runs itself again in a child process whose
/// environment names a proxy, and checks the proxy was never contacted.
#[tokio::test]
async fn a_proxy_from_the_environment_is_never_used() {
    if std::env::var_os("QILIN_TEST_PROXY_CHILD").is_some() {
        let base = serve().await;
        let (output, _) = local()
            .ok("web_fetch", json!({"url": format!("{base}/data.json")}))
            .await;
        assert_eq!(output["content"], r#"{"answer": 42}"#);
        return;
    }
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    proxy.set_nonblocking(true).unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_proxy_from_the_environment_is_never_used"])
        .env("QILIN_TEST_PROXY_CHILD", "1")
        .env("HTTP_PROXY", &proxy_url)
        .env("http_proxy", &proxy_url)
        .env("ALL_PROXY", &proxy_url)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .status()
        .unwrap();
    assert!(status.success(), "the fetch failed in the child process");
    assert!(
        proxy.accept().is_err(),
        "web_fetch connected to the proxy named in the environment"
    );
}
