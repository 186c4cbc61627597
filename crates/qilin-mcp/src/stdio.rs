//! The stdio transport to a server Qilin starts: rmcp's line codec over the process's stdin
//! and stdout, with the one thing it lacks — a message over the limit of one message
//! ([`MAX_MESSAGE_BYTES`]), which the codec drops, fails the request it answers at once
//! instead of leaving it to wait for an answer that will never come.
//!
//! Every byte the server writes passes a watcher that follows the line's top-level JSON keys:
//! when a line grows past the limit, the watcher knows whether it is an answer (a top-level
//! `result` or `error`, no `method`) and to which request (its top-level `id`, before or after
//! the result: servers write either order). The transport then hands rmcp an error answer for
//! that request, naming the limit; rmcp drops the line itself, never holding more than the limit
//! in memory. A message that is no answer (a notification, a request of the server's own) is
//! dropped as the codec drops it.

use rmcp::RoleClient;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;

/// The largest message Qilin takes from a server over stdio (one line of JSON): 16 MiB, as the
/// streamable HTTP transport takes at most in one message.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The `data.qilin` of the error answer standing for a message over the limit.
pub(crate) const OVERSIZED: &str = "oversized-message";

/// How long a closed server may take to exit before it is killed.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// A message over the limit, as the watcher saw it.
#[derive(Debug, Clone, PartialEq)]
struct Oversized {
    /// The request it answers, when it is an answer.
    answers: Option<RequestId>,
    /// Its size so far (at least this).
    bytes: usize,
}

/// The top-level key a value belongs to, as far as the watcher cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Id,
    Result,
    Error,
    Method,
    Other,
}

/// Follows one JSON-RPC message's top-level keys as its bytes stream by, keeping its `id`.
#[derive(Debug, Default)]
struct Scanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expecting_key: bool,
    /// A key being read (at depth 1), at most a few bytes of it.
    key_text: Option<Vec<u8>>,
    /// The key of the top-level value being read.
    key: Option<Key>,
    /// The raw text of the `id` value being read.
    id_text: Option<Vec<u8>>,
    id: Option<RequestId>,
    answer: bool,
    method: bool,
}

/// The longest key or id text the scanner keeps.
const KEPT_TEXT: usize = 128;

impl Scanner {
    fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.byte(byte);
        }
    }

    fn byte(&mut self, byte: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                if let Some(text) = self.key_text.take() {
                    self.key = Some(match text.as_slice() {
                        b"id" => Key::Id,
                        b"result" => Key::Result,
                        b"error" => Key::Error,
                        b"method" => Key::Method,
                        _ => Key::Other,
                    });
                }
            } else if let Some(text) = &mut self.key_text {
                if text.len() < KEPT_TEXT {
                    text.push(byte);
                }
                return;
            }
            self.keep_id_byte(byte);
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expecting_key {
                    self.expecting_key = false;
                    self.key_text = Some(Vec::new());
                    return;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.expecting_key = byte == b'{';
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_value();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 => {
                match self.key {
                    Some(Key::Id) => self.id_text = Some(Vec::new()),
                    Some(Key::Result | Key::Error) => self.answer = true,
                    Some(Key::Method) => self.method = true,
                    _ => {}
                }
                return;
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.expecting_key = true;
                return;
            }
            b' ' | b'\t' | b'\r' | b'\n' => return,
            _ => {}
        }
        self.keep_id_byte(byte);
    }

    fn keep_id_byte(&mut self, byte: u8) {
        if let Some(text) = &mut self.id_text {
            if text.len() < KEPT_TEXT {
                text.push(byte);
            } else {
                // No id is this long: not one Qilin sent.
                self.id_text = None;
            }
        }
    }

    /// A top-level value ended.
    fn end_value(&mut self) {
        if let Some(text) = self.id_text.take() {
            self.id = serde_json::from_slice(&text).ok();
        }
        self.key = None;
    }

    /// Whether the message is surely an answer to a known request already, while it is read.
    fn answers_now(&self) -> Option<&RequestId> {
        match self.key {
            Some(Key::Result | Key::Error) if !self.method => self.id.as_ref(),
            _ => None,
        }
    }

    /// The request the whole message answered, once it ended.
    fn answered(&self) -> Option<RequestId> {
        (self.answer && !self.method)
            .then(|| self.id.clone())
            .flatten()
    }
}

/// One line of the server's output, as the watcher follows it.
#[derive(Default)]
struct Line {
    bytes: usize,
    scanner: Scanner,
    reported: bool,
}

/// The server's stdout, watched for messages over the limit.
struct Watched<R> {
    inner: R,
    limit: usize,
    line: Line,
    reports: mpsc::UnboundedSender<Oversized>,
}

impl<R> Watched<R> {
    fn watch(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|&b| b == b'\n');
            let part = &bytes[..end.unwrap_or(bytes.len())];
            if !self.line.reported {
                self.line.scanner.feed(part);
            }
            self.line.bytes += part.len();
            // The codec drops a line whose bytes and newline exceed the limit.
            if !self.line.reported
                && self.line.bytes >= self.limit
                && let Some(id) = self.line.scanner.answers_now()
            {
                self.report(Some(id.clone()));
            }
            let Some(end) = end else { return };
            if self.line.bytes >= self.limit && !self.line.reported {
                let answers = self.line.scanner.answered();
                self.report(answers);
            }
            self.line = Line::default();
            bytes = &bytes[end + 1..];
        }
    }

    fn report(&mut self, answers: Option<RequestId>) {
        self.line.reported = true;
        let _ = self.reports.send(Oversized {
            answers,
            bytes: self.line.bytes,
        });
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.watch(&buf.filled()[before..]);
        }
        polled
    }
}

/// A server process on stdio, as an rmcp transport.
pub(crate) struct StdioTransport {
    child: Child,
    codec: AsyncRwTransport<RoleClient, Watched<ChildStdout>, ChildStdin>,
    reports: mpsc::UnboundedReceiver<Oversized>,
    limit: usize,
}

/// A started server: its transport, its process id and its stderr (when piped).
pub(crate) struct Started {
    pub(crate) transport: StdioTransport,
    pub(crate) process_id: Option<u32>,
    pub(crate) stderr: Option<ChildStderr>,
}

/// Starts `command` (its stdin and stdout piped; its stderr as the command says), taking at
/// most `limit` bytes in one message.
pub(crate) fn start(mut command: Command, limit: usize) -> std::io::Result<Started> {
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let missing = |what: &str| std::io::Error::other(format!("the server's {what} is not piped"));
    let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr.take();
    let (sender, reports) = mpsc::unbounded_channel();
    let watched = Watched {
        inner: stdout,
        limit,
        line: Line::default(),
        reports: sender,
    };
    let codec = AsyncRwTransport::new_client(watched, stdin).with_max_line_length(limit);
    Ok(Started {
        process_id: child.id(),
        transport: StdioTransport {
            child,
            codec,
            reports,
            limit,
        },
        stderr,
    })
}

impl StdioTransport {
    /// The error answer standing for an answer over the limit.
    fn refusal(&self, id: RequestId, bytes: usize) -> RxJsonRpcMessage<RoleClient> {
        let message = format!(
            "its answer was larger than the {} MiB Qilin takes from an MCP server in one \
             message ({} bytes or more), and was dropped",
            self.limit / (1024 * 1024),
            bytes
        );
        let data = serde_json::json!({"qilin": OVERSIZED, "limit": self.limit, "bytes": bytes});
        JsonRpcMessage::Error(JsonRpcError::new(
            Some(id),
            ErrorData::new(ErrorCode::INTERNAL_ERROR, message, Some(data)),
        ))
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.codec.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let report = tokio::select! {
                biased;
                report = self.reports.recv() => report,
                message = self.codec.receive() => return message,
            };
            let Some(Oversized { answers, bytes }) = report else {
                continue;
            };
            match answers {
                Some(id) => return Some(self.refusal(id, bytes)),
                None => tracing::warn!(
                    bytes,
                    limit = self.limit,
                    "an MCP server sent a message over the limit that answers no request; dropped"
                ),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let closed = self.codec.close().await;
        if tokio::time::timeout(EXIT_WAIT, self.child.wait())
            .await
            .is_err()
        {
            // It may have exited meanwhile; either way it is gone.
            let _ = self.child.kill().await;
        }
        closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Scanner {
        let mut scanner = Scanner::default();
        scanner.feed(text.as_bytes());
        scanner
    }

    #[test]
    fn the_id_of_an_answer_is_found_before_or_after_its_result() {
        let first = scan(r#"{"jsonrpc":"2.0","id":7,"result":{"id":99,"text":"a \"b\" {"}}"#);
        assert_eq!(first.answered(), Some(RequestId::Number(7)));
        let last = scan(r#"{"result":{"content":[{"id":"x"}]},"jsonrpc":"2.0","id":"r-1"}"#);
        assert_eq!(last.answered(), Some(RequestId::String("r-1".into())));
        let spaced = scan("{ \"id\" : 12 , \"error\" : {\"code\": 1} }");
        assert_eq!(spaced.answered(), Some(RequestId::Number(12)));
    }

    #[test]
    fn a_message_of_the_servers_own_answers_nothing() {
        let request = scan(
            r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"result":1}}"#,
        );
        assert_eq!(request.answered(), None);
        let notification =
            scan(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"id":4}}"#);
        assert_eq!(notification.answered(), None);
    }

    #[test]
    fn an_answer_is_known_while_its_result_streams_when_its_id_came_first() {
        let mut scanner = Scanner::default();
        scanner
            .feed(br#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"xxxx"#);
        assert_eq!(scanner.answers_now(), Some(&RequestId::Number(5)));
        let mut late = Scanner::default();
        late.feed(br#"{"result":{"content":[{"type":"text","text":"xxxx"#);
        assert_eq!(late.answers_now(), None);
    }

    #[test]
    fn a_line_over_the_limit_is_reported_once_with_what_it_answers() {
        let (sender, mut reports) = mpsc::unbounded_channel();
        let mut watched = Watched {
            inner: tokio::io::empty(),
            limit: 64,
            line: Line::default(),
            reports: sender,
        };
        watched.watch(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"result\":{\"text\":\"");
        watched.watch(&[b'x'; 100]);
        assert!(reports.try_recv().is_err(), "the id is not known yet");
        watched.watch(
            b"\"},\"jsonrpc\":\"2.0\",\"id\":2}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"",
        );
        let late = reports.try_recv().unwrap();
        assert_eq!(late.answers, Some(RequestId::Number(2)));
        assert!(late.bytes > 100);
        watched.watch(&[b'y'; 100]);
        let early = reports.try_recv().unwrap();
        assert_eq!(early.answers, Some(RequestId::Number(3)));
        watched.watch(b"\"}\n");
        assert!(reports.try_recv().is_err(), "reported once");
    }
}
