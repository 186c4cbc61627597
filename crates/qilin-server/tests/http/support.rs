//! A real server on 127.0.0.1 over a real store (a SQLite file, or a schema of its own in the
//! test PostgreSQL), reqwest clients, an SSE reader, and scripted models in the workspace.

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use qilin_protocol::{Event, EventBody};
use qilin_runtime::{CodeSandbox, LeaseTiming, Runtime, SessionHost};
use qilin_server::{
    Access, ConnectionLimits, ServerConfig, ServerState, SessionDefaults, StreamOptions,
};
use qilin_store::{EventStore, StoreError};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// The longest a test waits for anything before it calls the server stuck.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// An agent that asks before it reads, and may ask the user questions.
pub const ASKING_AGENT: &str = "\
name: asker
instructions: Ask before reading.
tools: [read, glob, question]
skills:
  available: []
review:
  rules:
    - tool: read
      decision: ask
      reason: reading needs a yes
";

/// Which store a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file in the test's folder.
    Sqlite,
    /// A schema of its own in the test PostgreSQL (`QILIN_TEST_POSTGRES_URL`).
    Postgres,
}

/// The test PostgreSQL's URL.
pub fn postgres_url() -> String {
    std::env::var("QILIN_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "QILIN_TEST_POSTGRES_URL is not set: the PostgreSQL tests need a real PostgreSQL. \
             Run `export QILIN_TEST_POSTGRES_URL=\"$(bash scripts/postgres)\"`, or `bash scripts/test`."
        )
    })
}

/// A workspace with `agent.agent` and `notes.txt`, and the store URL of a test.
pub struct World {
    /// The test's folder; the workspace is its `workspace/`.
    pub dir: tempfile::TempDir,
    /// What `--database` would say.
    pub database: String,
    /// The PostgreSQL schema to drop at the end, if any.
    schema: Option<String>,
    /// Folders besides the workspace a client may put sessions under (`--allow-root`).
    pub allowed_roots: Vec<PathBuf>,
}

impl World {
    /// A fresh workspace whose agent is `agent_yaml`, on `backend`.
    pub fn new(backend: Backend, agent_yaml: &str) -> World {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(workspace.join("agent.agent"), agent_yaml).unwrap();
        std::fs::write(workspace.join("notes.txt"), "first line\nsecond line\n").unwrap();
        let (database, schema) = match backend {
            Backend::Sqlite => (
                format!("sqlite:{}", dir.path().join("qilin.db").display()),
                None,
            ),
            Backend::Postgres => {
                let schema = format!("qilin_srv_{:016x}", fastrand::u64(..));
                (format!("{}?schema={schema}", postgres_url()), Some(schema))
            }
        };
        World {
            dir,
            database,
            schema,
            allowed_roots: Vec::new(),
        }
    }

    /// The workspace.
    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    /// Writes the scripted model `name` into the workspace.
    pub fn script(&self, name: &str, yaml: &str) {
        std::fs::write(self.workspace().join(name), yaml).unwrap();
    }

    /// Opens the store, waiting while a stopping server still holds a SQLite file.
    pub async fn store(&self) -> Arc<dyn EventStore> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match qilin_store::open_database(Some(&self.database), &self.workspace()).await {
                Ok(store) => return store,
                Err(StoreError::InUse { .. }) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(err) => panic!("cannot open the store {}: {err}", self.database),
            }
        }
    }

    /// Starts a server on this world's store.
    pub async fn serve(&self) -> Server {
        self.serve_with(|_| {}).await
    }

    /// The SQLite file of a world on [`Backend::Sqlite`].
    pub fn sqlite_path(&self) -> PathBuf {
        self.dir.path().join("qilin.db")
    }

    /// Starts a server on this world's store, its configuration changed by `adjust`.
    pub async fn serve_with(&self, adjust: impl FnOnce(&mut ServerConfig)) -> Server {
        let store = self.store().await;
        self.serve_on(store, adjust).await
    }

    /// Starts a server on `store` (this world's, opened by the test with options of its own),
    /// its configuration changed by `adjust`.
    pub async fn serve_on(
        &self,
        store: Arc<dyn EventStore>,
        adjust: impl FnOnce(&mut ServerConfig),
    ) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        self.serve_on_listener(store, listener, adjust).await
    }

    /// Starts a server on `store`, accepting on `listener` (a socket the test set up).
    pub async fn serve_on_listener(
        &self,
        store: Arc<dyn EventStore>,
        listener: tokio::net::TcpListener,
        adjust: impl FnOnce(&mut ServerConfig),
    ) -> Server {
        let runtime = Runtime::new(store, CodeSandbox::InProcess);
        let owner = format!("test-{:08x}", fastrand::u32(..));
        let sessions = SessionHost::new(runtime, owner, LeaseTiming::default(), |builder| {
            builder.attended(true).no_sandbox(true)
        });
        sessions.recover_abandoned().await.unwrap();
        let bound = listener.local_addr().unwrap();
        let token = Access::random_token().unwrap();
        let mut config = ServerConfig {
            host: sessions.clone(),
            defaults: SessionDefaults {
                workspace: self.workspace(),
                agent_file: Some(self.workspace().join("agent.agent")),
                model: None,
                no_sandbox: true,
                allowed_roots: self.allowed_roots.clone(),
            },
            access: Access::new(token.clone(), bound),
            stream: StreamOptions::default(),
            max_body: qilin_server::DEFAULT_MAX_BODY,
            connections: ConnectionLimits::default(),
        };
        adjust(&mut config);
        let state = ServerState::new(config);
        let relays = state.connect_relay().await.unwrap();
        assert_eq!(
            relays,
            self.schema.is_some(),
            "PostgreSQL relays, SQLite needs none"
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(qilin_server::serve(listener, state.clone(), async move {
            let _ = stopped.await;
        }));
        Server {
            base: format!("http://127.0.0.1:{}", bound.port()),
            token,
            state,
            sessions,
            http: reqwest::Client::new(),
            stop: Some(stop),
            serving: Some(serving),
        }
    }

    /// Drops the PostgreSQL schema, if any.
    pub async fn finish(self) {
        if let Some(schema) = &self.schema {
            let (client, connection) =
                tokio_postgres::connect(&postgres_url(), tokio_postgres::NoTls)
                    .await
                    .unwrap();
            let driver = tokio::spawn(connection);
            client
                .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                .await
                .unwrap();
            drop(client);
            let _ = driver.await;
        }
    }
}

/// A running server and a client of it.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Its token.
    pub token: String,
    /// Its state.
    pub state: ServerState,
    /// Its sessions.
    pub sessions: SessionHost,
    /// A client.
    pub http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<JoinHandle<()>>,
}

/// A response: its status and its JSON body (`Null` when it has none).
#[derive(Debug)]
pub struct Answer {
    /// The status.
    pub status: u16,
    /// The body.
    pub body: Value,
}

impl Answer {
    /// The error's `code`.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or_default()
    }
}

impl Server {
    /// The URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request with the token.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, self.url(path))
            .bearer_auth(&self.token)
    }

    /// Sends `request`, reads its status and JSON body.
    pub async fn send(request: reqwest::RequestBuilder) -> Answer {
        let response = tokio::time::timeout(PATIENCE, request.send())
            .await
            .expect("the server answers")
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text)
                .unwrap_or_else(|err| panic!("the body is not JSON ({err}): {text}"))
        };
        Answer { status, body }
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Answer {
        Self::send(self.request(reqwest::Method::GET, path)).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> Answer {
        Self::send(self.request(reqwest::Method::POST, path).json(&body)).await
    }

    /// Creates a session answering from the script `script` of the workspace; returns its id.
    pub async fn create(&self, script: &str) -> String {
        let created = self
            .post(
                "/api/sessions",
                json!({"model": format!("scripted:{script}")}),
            )
            .await;
        assert_eq!(created.status, 201, "{created:?}");
        created.body["id"].as_str().unwrap().to_string()
    }

    /// Starts a turn of `prompt`; returns its id.
    pub async fn start_turn(&self, session: &str, prompt: &str) -> String {
        let started = self
            .post(
                &format!("/api/sessions/{session}/turns"),
                json!({"prompt": prompt}),
            )
            .await;
        assert_eq!(started.status, 202, "{started:?}");
        started.body["turnId"].as_str().unwrap().to_string()
    }

    /// Every stored event of `session`, read a page at a time.
    pub async fn all_events(&self, session: &str) -> Vec<Event> {
        let mut events: Vec<Event> = Vec::new();
        loop {
            let after = events.last().map_or(0, |event| event.seq);
            let page = self
                .get(&format!(
                    "/api/sessions/{session}/events?after={after}&limit=100"
                ))
                .await;
            assert_eq!(page.status, 200, "{page:?}");
            let got: Vec<Event> = serde_json::from_value(page.body["events"].clone()).unwrap();
            events.extend(got);
            if page.body["more"] != json!(true) {
                return events;
            }
        }
    }

    /// Opens the event stream at `path` (with `Last-Event-ID: last` when given).
    pub async fn stream(&self, path: &str, last: Option<&str>) -> Sse {
        let mut request = self.request(reqwest::Method::GET, path);
        if let Some(last) = last {
            request = request.header("Last-Event-ID", last);
        }
        let response = tokio::time::timeout(PATIENCE, request.send())
            .await
            .expect("the stream opens")
            .unwrap();
        assert_eq!(response.status(), 200, "the stream opens");
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "an event stream"
        );
        Sse {
            messages: response.bytes_stream().eventsource().boxed(),
        }
    }

    /// Stops the server as Ctrl-C does: running turns interrupted and stored, streams ended,
    /// the store closed.
    pub async fn stop(mut self) {
        tokio::time::timeout(PATIENCE, self.sessions.shutdown())
            .await
            .expect("the sessions close");
        self.state.end_streams();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            tokio::time::timeout(PATIENCE, serving)
                .await
                .expect("the server stops")
                .unwrap();
        }
    }
}

/// One SSE message.
#[derive(Debug, Clone)]
pub struct Message {
    /// The `event:` field (`message` when absent).
    pub event: String,
    /// The `id:` field.
    pub id: String,
    /// The `data:` field.
    pub data: String,
}

/// A client's side of an event stream.
pub struct Sse {
    messages: BoxStream<
        'static,
        Result<eventsource_stream::Event, eventsource_stream::EventStreamError<reqwest::Error>>,
    >,
}

impl Sse {
    /// The next message other than a heartbeat; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Message> {
        self.next_of(false).await
    }

    /// The next message, a heartbeat too; `None` when the stream ended.
    pub async fn next_or_heartbeat(&mut self) -> Option<Message> {
        self.next_of(true).await
    }

    async fn next_of(&mut self, heartbeats: bool) -> Option<Message> {
        let messages = &mut self.messages;
        let next = async move {
            loop {
                let message = messages.next().await?.ok()?;
                if heartbeats || message.event != "heartbeat" {
                    return Some(Message {
                        event: message.event,
                        id: message.id,
                        data: message.data,
                    });
                }
            }
        };
        tokio::time::timeout(PATIENCE, next)
            .await
            .expect("the stream goes on")
    }

    /// The next session event of a one-session stream.
    pub async fn next_event(&mut self) -> Option<(Message, Event)> {
        let message = self.next().await?;
        assert_eq!(message.event, "message", "an event: {message:?}");
        let event: Event = serde_json::from_str(&message.data).unwrap();
        assert_eq!(message.id, event.seq.to_string(), "the id is the seq");
        Some((message, event))
    }
}

/// The type of an event, as the protocol writes it.
pub fn kind(event: &Event) -> String {
    serde_json::to_value(&event.body).unwrap()["type"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Whether `event` ends a turn.
pub fn finishes_turn(event: &Event) -> bool {
    matches!(event.body, EventBody::TurnFinished { .. })
}

/// Checks a whole log: `seq` gapless from 1, every call ended once, every request resolved
/// once, every turn finished.
pub fn assert_consistent(events: &[Event]) {
    let mut open_calls = std::collections::HashSet::new();
    let mut open_requests = std::collections::HashSet::new();
    let mut turns = 0i32;
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event.seq, index as u64 + 1, "gapless seq: {events:#?}");
        match &event.body {
            EventBody::ToolStart(start) => assert!(open_calls.insert(start.call_id.clone())),
            EventBody::ToolResult(result) => assert!(open_calls.remove(&result.call_id)),
            EventBody::RequestOpened(opened) => {
                assert!(open_requests.insert(opened.request_id.clone()))
            }
            EventBody::RequestResolved(done) => assert!(open_requests.remove(&done.request_id)),
            EventBody::TurnStarted { .. } => turns += 1,
            EventBody::TurnFinished { .. } => turns -= 1,
            _ => {}
        }
    }
    assert!(open_calls.is_empty(), "calls never ended: {open_calls:?}");
    assert!(
        open_requests.is_empty(),
        "requests never resolved: {open_requests:?}"
    );
    assert_eq!(turns, 0, "every turn finished");
}

/// Waits until `check` holds for the session's stored events.
pub async fn wait_for_events(server: &Server, session: &str, check: impl Fn(&[Event]) -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let events = server.all_events(session).await;
        if check(&events) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the events never got there: {:#?}",
            events.iter().map(kind).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
