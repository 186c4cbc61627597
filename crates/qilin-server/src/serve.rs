//! [`serve`]: the router on every connection a listener accepts (HTTP/1.1), within the bounds a
//! server on a shared machine needs, so that no client can hold a connection, and with it a
//! file descriptor, by sending nothing or next to nothing:
//!
//! - a request's headers must arrive within [`ConnectionLimits::header_read`], counted from
//!   when the server starts waiting for them (the connection opened, or the previous response
//!   sent): a half-sent header line, or a kept-alive connection with no next request, is closed;
//! - a request's body must arrive whole within [`ConnectionLimits::body_read`] (the route then
//!   answers that it could not read the body);
//! - a connection on which nothing is sent or received for [`ConnectionLimits::idle`] while it
//!   waits on the client (a body trickling, a response the client does not read) is closed.
//!   While a route works on a request it has received whole, the connection waits on the server,
//!   not the client, and is not idle; an event stream is never quiet that long, as it sends a
//!   heartbeat every 15 s.

use crate::ServerState;
use axum::Router;
use axum::body::Body;
use axum::response::Response;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use qilin_runtime::SessionHost;
use std::convert::Infallible;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// How long a connection may keep the server waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// The longest a request's headers may take to arrive, from when the server starts
    /// waiting for them (the connection opened, or the previous response sent).
    pub header_read: Duration,
    /// The longest a request's body may take to arrive whole.
    pub body_read: Duration,
    /// The longest a connection may go with nothing sent or received while it waits on the
    /// client.
    pub idle: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read: Duration::from_secs(10),
            body_read: Duration::from_secs(30),
            idle: Duration::from_secs(60),
        }
    }
}

/// Serves `state` as [`serve`] does until `stop` completes, then stops `sessions` — their
/// running turns interrupted and their events stored — and ends the event streams, so every
/// connection closes; returns once the server and its sessions have stopped. This is how
/// `qilin serve`, and an application serving its own sessions, run until asked to stop.
pub async fn serve_hosted(
    listener: TcpListener,
    state: ServerState,
    sessions: SessionHost,
    stop: impl Future<Output = ()> + Send,
) {
    let stopping = {
        let state = state.clone();
        let sessions = sessions.clone();
        async move {
            stop.await;
            sessions.shutdown().await;
            state.end_streams();
        }
    };
    serve(listener, state, stopping).await;
    // A session opened while the server was stopping is stopped too.
    sessions.shutdown().await;
}

/// Serves the server of `state` ([`app`](crate::app)) on every connection `listener`
/// accepts, within the state's [`ConnectionLimits`], until `shutdown` completes; then stops
/// accepting, lets every connection finish its request (the event streams end when
/// [`end_streams`](crate::ServerState::end_streams) is called) and returns once every
/// connection is closed.
pub async fn serve(
    listener: TcpListener,
    state: ServerState,
    shutdown: impl Future<Output = ()> + Send,
) {
    let limits = state.inner.connections;
    let app = crate::app(state);
    let graceful = GracefulShutdown::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(err) => {
                    pause_after(&err).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(error = %err, "TCP_NODELAY could not be set on a connection");
        }
        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Watched {
            inner: stream,
            activity: Arc::clone(&activity),
        });
        let service = Tracked {
            app: app.clone(),
            activity: Arc::clone(&activity),
            body_read: limits.body_read,
        };
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read)
            .serve_connection(io, service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            tokio::select! {
                served = connection => {
                    if let Err(err) = served {
                        tracing::debug!(error = %err, "a connection ended with an error");
                    }
                }
                () = activity.quiet_for(limits.idle) => {
                    tracing::debug!(idle = ?limits.idle, "closed a connection that kept the server waiting");
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Waits after a failed accept: not at all when only that connection failed, a moment when
/// the process is out of descriptors (they free up as connections close).
async fn pause_after(err: &std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::warn!(error = %err, "accepting a connection failed; trying again in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// What one connection is doing: when it last sent or received a byte, and how many requests
/// received whole a route is still working on.
struct Activity {
    opened: Instant,
    /// Milliseconds from `opened` to the last byte sent or received.
    last_io: AtomicU64,
    /// Requests received whole whose response is not ready yet.
    working: AtomicUsize,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            opened: Instant::now(),
            last_io: AtomicU64::new(0),
            working: AtomicUsize::new(0),
        }
    }

    fn touch(&self) {
        let now = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_io.store(now, Ordering::Relaxed);
    }

    /// Completes once nothing was sent or received for `limit` while no route worked on a
    /// request.
    async fn quiet_for(&self, limit: Duration) {
        loop {
            let last = self.opened + Duration::from_millis(self.last_io.load(Ordering::Relaxed));
            let quiet = last.elapsed();
            let wait = if self.working.load(Ordering::Acquire) > 0 {
                limit
            } else if quiet >= limit {
                return;
            } else {
                limit - quiet
            };
            tokio::time::sleep(wait).await;
        }
    }
}

/// The connection's socket, noting every byte that moves.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The router, with each request's body bounded in time and each request counted as work of
/// the server once its body has arrived.
#[derive(Clone)]
struct Tracked {
    app: Router,
    activity: Arc<Activity>,
    body_read: Duration,
}

/// Where a request stands.
const RECEIVING: u8 = 0;
const WORKING: u8 = 1;
const ANSWERED: u8 = 2;

/// One request: receiving its body, worked on (the body arrived whole), or answered.
struct RequestState {
    activity: Arc<Activity>,
    stage: AtomicU8,
}

impl RequestState {
    /// The body arrived whole: the server works on the request.
    fn received(&self) {
        if self
            .stage
            .compare_exchange(RECEIVING, WORKING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.activity.working.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// The response is ready (or the request was dropped).
    fn answered(&self) {
        if self.stage.swap(ANSWERED, Ordering::AcqRel) == WORKING {
            // The response goes out now: the quiet time counts from here.
            self.activity.touch();
            self.activity.working.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Marks its request answered when the route's future ends or is dropped.
struct Answered(Arc<RequestState>);

impl Drop for Answered {
    fn drop(&mut self) {
        self.0.answered();
    }
}

impl hyper::service::Service<hyper::Request<Incoming>> for Tracked {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let state = Arc::new(RequestState {
            activity: Arc::clone(&self.activity),
            stage: AtomicU8::new(RECEIVING),
        });
        let body_read = self.body_read;
        let request = request.map(|body| {
            Body::new(TimedBody {
                inner: body,
                deadline: Box::pin(tokio::time::sleep(body_read)),
                limit: body_read,
                state: Arc::clone(&state),
            })
        });
        let mut app = self.app.clone();
        Box::pin(async move {
            let answered = Answered(state);
            if hyper::body::Body::is_end_stream(request.body()) {
                answered.0.received();
            }
            let response = tower_service::Service::call(&mut app, request).await;
            drop(answered);
            response
        })
    }
}

/// A request's body that must arrive whole before its deadline, and says when it has.
struct TimedBody {
    inner: Incoming,
    deadline: Pin<Box<Sleep>>,
    limit: Duration,
    state: Arc<RequestState>,
}

/// A request body that did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive whole within {:?}", .0)]
struct BodyTimeout(Duration);

impl hyper::body::Body for TimedBody {
    type Data = hyper::body::Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(None) => {
                self.state.received();
                return Poll::Ready(None);
            }
            Poll::Ready(Some(_)) if self.inner.is_end_stream() => self.state.received(),
            Poll::Ready(_) => {}
            Poll::Pending => {
                if self.deadline.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Some(Err(Box::new(BodyTimeout(self.limit)))));
                }
            }
        }
        polled.map(|frame| frame.map(|frame| frame.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request being worked on keeps its connection from counting as idle, however long the
    /// work takes; once answered, the quiet time counts from the answer.
    #[tokio::test(start_paused = true)]
    async fn a_connection_is_idle_only_while_no_request_is_worked_on() {
        let limit = Duration::from_secs(60);
        let activity = Arc::new(Activity::new());
        // Nothing moves: idle once the limit has passed (the clock is paused and advances by
        // itself when every task waits).
        tokio::time::timeout(limit * 2, activity.quiet_for(limit))
            .await
            .expect("idle after the limit");

        let request = RequestState {
            activity: Arc::clone(&activity),
            stage: AtomicU8::new(RECEIVING),
        };
        request.received();
        let worked_on = tokio::time::timeout(limit * 10, activity.quiet_for(limit)).await;
        assert!(
            worked_on.is_err(),
            "not idle while the request is worked on"
        );

        request.answered();
        let answered_at = Instant::now();
        activity.quiet_for(limit).await;
        assert!(
            answered_at.elapsed() >= limit,
            "the quiet counts from the answer"
        );
        // Answered once: a body polled again after the answer changes nothing.
        request.received();
        assert_eq!(activity.working.load(Ordering::Acquire), 0);
    }
}
