//! Faults over real HTTP: a database locked by another process, a full database, a client
//! that stops reading, a quiet stream, and the `end` message that says why a stream ends.

use crate::support::{
    ASKING_AGENT, Backend, PATIENCE, World, assert_consistent, finishes_turn, wait_for_events,
};
use qilin_protocol::Event;
use qilin_server::StreamOptions;
use qilin_store::{EventStore, SqliteOptions, SqliteStore};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Two short turns.
const TWO_TURNS: &str = "turns:\n  - say: hello there\n  - say: hello again\n";

/// The words said by the turn that takes half of a 1 MiB database (each word is streamed as
/// an event of its own, about 130 bytes stored), and by the one that then fills it but fits
/// once the first is deleted.
const BALLAST_WORDS: usize = 4_000;
const FLOOD_WORDS: usize = 5_500;

/// The database the lock-holding child locks.
const LOCK_DB_ENV: &str = "QILIN_TEST_LOCK_DB";

/// Not a test: the child process that holds a write transaction on the database named by
/// `QILIN_TEST_LOCK_DB` until its standard input has a line. The locked-database test starts
/// it with `--ignored --exact`, which is where it runs.
#[test]
#[ignore = "not a test of its own: the lock-holding child process the locked-database test starts with --ignored --exact"]
fn lock_holder() {
    let Ok(database) = std::env::var(LOCK_DB_ENV) else {
        return;
    };
    let conn = rusqlite::Connection::open(database).unwrap();
    if let Err(err) = conn.execute_batch("BEGIN IMMEDIATE") {
        println!("error: {err}");
        return;
    }
    println!("locked");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    conn.execute_batch("ROLLBACK").unwrap();
}

/// Another process holding a write transaction on `database`, until [`Locker::release`].
struct Locker {
    child: Child,
    /// The child's output, kept open so it can write its last lines.
    output: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Locker {
    fn hold(database: &Path) -> Locker {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["faults::lock_holder", "--exact", "--ignored", "--nocapture"])
            .env(LOCK_DB_ENV, database)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let line = lines.next().expect("the child locks the database").unwrap();
            assert!(!line.starts_with("error"), "the child cannot lock: {line}");
            if line.trim() == "locked" {
                break;
            }
        }
        Locker {
            child,
            output: lines,
        }
    }

    fn release(mut self) {
        let mut stdin = self.child.stdin.take().unwrap();
        writeln!(stdin).unwrap();
        drop(stdin);
        let rest: Vec<String> = self.output.by_ref().map_while(Result::ok).collect();
        assert!(
            self.child.wait().unwrap().success(),
            "the lock is let go: {rest:?}"
        );
    }
}

impl Drop for Locker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sqlite(world: &World, options: SqliteOptions) -> Arc<dyn EventStore> {
    Arc::new(SqliteStore::open_with(world.sqlite_path(), options).unwrap())
}

fn turns_finished(events: &[Event]) -> usize {
    events.iter().filter(|event| finishes_turn(event)).count()
}

/// While another process holds a write transaction on the SQLite file, a write is refused
/// with 503 naming the lock; reads and the rest of the server go on; a turn started meanwhile
/// waits, and once the lock is let go every one of its events is stored, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_locked_by_another_process_is_503_and_nothing_is_lost() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("two.yaml", TWO_TURNS);
    let options = SqliteOptions {
        busy_timeout: Duration::from_millis(100),
        ..SqliteOptions::default()
    };
    let server = world.serve_on(sqlite(&world, options), |_| {}).await;
    let session = server.create("two.yaml").await;
    server.start_turn(&session, "hello").await;
    wait_for_events(&server, &session, |events| turns_finished(events) == 1).await;
    let before = server.all_events(&session).await;

    let locker = Locker::hold(&world.sqlite_path());
    let refused = server
        .post("/api/sessions", json!({"model": "scripted:two.yaml"}))
        .await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.code(), "store_busy");
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.contains("locked"),
        "the message names the lock: {message}"
    );
    assert!(message.contains("try again"), "{message}");
    // Reads go on (write-ahead log), and so does the rest of the server.
    assert_eq!(server.all_events(&session).await, before);
    assert_eq!(server.get("/api/sessions").await.status, 200);
    assert_eq!(server.get("/api/info").await.status, 200);

    // A turn started while the file is locked: its events wait for the lock.
    let started = {
        let request = server
            .request(
                reqwest::Method::POST,
                &format!("/api/sessions/{session}/turns"),
            )
            .json(&json!({"prompt": "again"}));
        tokio::spawn(async move { crate::support::Server::send(request).await })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        server.all_events(&session).await,
        before,
        "nothing is stored while the file is locked"
    );
    locker.release();
    let started = started.await.unwrap();
    assert_eq!(started.status, 202, "{started:?}");
    wait_for_events(&server, &session, |events| turns_finished(events) == 2).await;
    let after = server.all_events(&session).await;
    assert_eq!(after[..before.len()], before[..], "history unchanged");
    assert_consistent(&after);
    assert_eq!(
        server
            .post("/api/sessions", json!({"model": "scripted:two.yaml"}))
            .await
            .status,
        201,
        "writes go on once the lock is let go"
    );
    server.stop().await;
    world.finish().await;
}

/// A database at its size limit: a write is refused with 507 saying the store is full, reads
/// go on, nothing already stored is lost, and once there is room (a session deleted) sessions
/// are created and turns run again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_database_is_507_reads_go_on_and_writes_resume_with_room() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("two.yaml", TWO_TURNS);
    world.script(
        "flood.yaml",
        &format!("turns:\n  - say: {}\n", "flood ".repeat(40_000).trim_end()),
    );
    let options = SqliteOptions {
        max_size_bytes: Some(512 * 1024),
        ..SqliteOptions::default()
    };
    let server = world.serve_on(sqlite(&world, options), |_| {}).await;
    let keeper = server.create("two.yaml").await;
    server.start_turn(&keeper, "hello").await;
    wait_for_events(&server, &keeper, |events| turns_finished(events) == 1).await;
    let kept = server.all_events(&keeper).await;

    let flood = server.create("flood.yaml").await;
    server.start_turn(&flood, "flood").await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let full = loop {
        let created = server
            .post("/api/sessions", json!({"model": "scripted:two.yaml"}))
            .await;
        match created.status {
            201 => {}
            _ => break created,
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the database never filled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(full.status, 507, "{full:?}");
    assert_eq!(full.code(), "store_full");
    assert!(
        full.body["message"].as_str().unwrap().contains("full"),
        "{full:?}"
    );
    // Reads go on; what was stored is all there.
    assert_eq!(server.all_events(&keeper).await, kept);
    let flooded = server.all_events(&flood).await;
    assert!(!flooded.is_empty());
    for (index, event) in flooded.iter().enumerate() {
        assert_eq!(event.seq, index as u64 + 1, "gapless up to where it filled");
    }
    assert_eq!(server.get("/api/sessions").await.status, 200);
    assert_eq!(
        server.get(&format!("/api/sessions/{flood}")).await.status,
        200
    );

    // Room again: the flood goes, and writes go on.
    let deleted = crate::support::Server::send(
        server.request(reqwest::Method::DELETE, &format!("/api/sessions/{flood}")),
    )
    .await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
    let fresh = server.create("two.yaml").await;
    server.start_turn(&fresh, "hello").await;
    wait_for_events(&server, &fresh, |events| turns_finished(events) == 1).await;
    server.start_turn(&keeper, "again").await;
    wait_for_events(&server, &keeper, |events| turns_finished(events) == 2).await;
    let keeper_events = server.all_events(&keeper).await;
    assert_eq!(keeper_events[..kept.len()], kept[..]);
    assert_consistent(&keeper_events);
    server.stop().await;
    world.finish().await;
}

/// A session whose turn fills the database keeps the events the store refused, in order, in
/// memory: a new turn is refused meanwhile with 503 saying so, and once there is room (another
/// session deleted) every one of them is stored and the session goes on, without reopening.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_refused_by_a_full_database_are_stored_once_there_is_room() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("two.yaml", TWO_TURNS);
    let said = |word: &str, count: usize| {
        format!(
            "turns:\n  - say: {}\n  - say: after\n",
            format!("{word} ").repeat(count).trim_end()
        )
    };
    world.script("ballast.yaml", &said("ballast", BALLAST_WORDS));
    // Streamed slowly enough that its events meet the full store while the turn still runs.
    world.script(
        "flood.yaml",
        &format!("chunk_delay_ms: 1\n{}", said("flood", FLOOD_WORDS)),
    );
    let options = SqliteOptions {
        max_size_bytes: Some(1024 * 1024),
        ..SqliteOptions::default()
    };
    let server = world.serve_on(sqlite(&world, options), |_| {}).await;
    let ballast = server.create("ballast.yaml").await;
    server.start_turn(&ballast, "weigh").await;
    wait_for_events(&server, &ballast, |events| turns_finished(events) == 1).await;

    let flood = server.create("flood.yaml").await;
    server.start_turn(&flood, "flood").await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let refused = loop {
        // Once the flood's events meet a full store, the session refuses turns; until then
        // its turn runs (409) and its events are stored.
        let again = server
            .post(
                &format!("/api/sessions/{flood}/turns"),
                json!({"prompt": "again"}),
            )
            .await;
        if again.status != 409 {
            break again;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the flood's turn never ended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.code(), "session_broken");
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.contains("full") && message.contains("wait in memory"),
        "{message}"
    );
    let stored_while_full = server.all_events(&flood).await;
    assert_eq!(
        turns_finished(&stored_while_full),
        0,
        "the store was full before the turn's end"
    );

    let deleted = crate::support::Server::send(
        server.request(reqwest::Method::DELETE, &format!("/api/sessions/{ballast}")),
    )
    .await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
    wait_for_events(&server, &flood, |events| turns_finished(events) == 1).await;
    let stored = server.all_events(&flood).await;
    assert_eq!(stored[..stored_while_full.len()], stored_while_full[..]);
    assert_consistent(&stored);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let again = server
            .post(
                &format!("/api/sessions/{flood}/turns"),
                json!({"prompt": "again"}),
            )
            .await;
        if again.status == 202 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{again:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    wait_for_events(&server, &flood, |events| turns_finished(events) == 2).await;
    assert_consistent(&server.all_events(&flood).await);
    server.stop().await;
    world.finish().await;
}

/// One SSE message read off a raw response.
#[derive(Debug)]
struct RawMessage {
    event: String,
    id: String,
    data: String,
}

/// The messages of an SSE body, in order (comments skipped).
fn parse_sse(body: &str) -> Vec<RawMessage> {
    let mut messages = Vec::new();
    for block in body.split("\n\n") {
        let mut message = RawMessage {
            event: "message".into(),
            id: String::new(),
            data: String::new(),
        };
        let mut any = false;
        for line in block.lines() {
            if let Some(value) = line.strip_prefix("event:") {
                message.event = value.trim_start().to_string();
                any = true;
            } else if let Some(value) = line.strip_prefix("id:") {
                message.id = value.trim_start().to_string();
                any = true;
            } else if let Some(value) = line.strip_prefix("data:") {
                message.data.push_str(value.trim_start());
                any = true;
            }
        }
        if any {
            messages.push(message);
        }
    }
    messages
}

/// A client that opens a stream and then stops reading (a small receive buffer, nothing read)
/// fills its bounded buffer on the server and is cut, while the turn runs to its end
/// unhindered. When it reads again it finds what the buffer held and an `end` saying it lagged;
/// resuming from its last `id` it gets the rest: every event exactly once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_client_is_cut_the_turn_runs_on_and_it_resumes_without_loss() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script(
        "long.yaml",
        &format!("turns:\n  - say: {}\n", "word ".repeat(20_000).trim_end()),
    );
    // A small send buffer on the server's side too (accepted sockets take the listener's),
    // so what the kernel holds for the stalled client is small beside the turn's output.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(4096).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(64).unwrap();
    let server = world
        .serve_on_listener(world.store().await, listener, |config| {
            config.stream = StreamOptions {
                buffer: 8,
                stall: Duration::from_millis(200),
                ..StreamOptions::default()
            }
        })
        .await;
    let session = server.create("long.yaml").await;

    // HTTP/1.0, so the body is the rest of the connection (no chunks to decode).
    let address = server.base.trim_start_matches("http://").to_string();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(address.parse().unwrap()).await.unwrap();
    let request = format!(
        "GET /api/sessions/{session}/events/stream HTTP/1.0\r\nHost: {address}\r\n\
         Authorization: Bearer {}\r\nAccept: text/event-stream\r\n\r\n",
        server.token
    );
    stalled.write_all(request.as_bytes()).await.unwrap();

    server.start_turn(&session, "talk").await;
    wait_for_events(&server, &session, |events| {
        events.last().is_some_and(finishes_turn)
    })
    .await;
    let all = server.all_events(&session).await;
    assert_consistent(&all);

    let mut raw = Vec::new();
    let read = tokio::time::timeout(PATIENCE, stalled.read_to_end(&mut raw)).await;
    assert!(
        read.is_ok(),
        "the cut stream ends ({} events, {} bytes read)",
        all.len(),
        raw.len()
    );
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a response");
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "{head}"
    );
    let messages = parse_sse(body);
    let (end, events) = messages.split_last().expect("messages");
    assert_eq!(
        end.event, "end",
        "the last message says the stream ends: {end:?}"
    );
    let end: Value = serde_json::from_str(&end.data).unwrap();
    assert_eq!(end, json!({"sessionId": session, "reason": "lagging"}));
    let received: Vec<Event> = events
        .iter()
        .filter(|message| message.event == "message")
        .map(|message| {
            let event: Event = serde_json::from_str(&message.data).unwrap();
            assert_eq!(message.id, event.seq.to_string());
            event
        })
        .collect();
    assert!(
        received.len() < all.len(),
        "cut before the end: {} of {} events",
        received.len(),
        all.len()
    );
    assert_eq!(received[..], all[..received.len()], "what came, in order");

    // Resume from the last `id`, as the `end` says; a busy machine may cut this reader too,
    // and it resumes the same way.
    let mut last = received.last().map_or(0, |event| event.seq);
    let mut rest = Vec::new();
    while rest.len() + received.len() < all.len() {
        let mut resumed = server
            .stream(
                &format!("/api/sessions/{session}/events/stream"),
                Some(&last.to_string()),
            )
            .await;
        while rest.len() + received.len() < all.len() {
            let message = resumed.next().await.expect("the rest follows");
            if message.event == "end" {
                let end: Value = serde_json::from_str(&message.data).unwrap();
                assert_eq!(end["reason"], json!("lagging"), "{end}");
                break;
            }
            let event: Event = serde_json::from_str(&message.data).unwrap();
            last = event.seq;
            rest.push(event);
        }
    }
    assert_eq!(rest[..], all[received.len()..], "the rest, exactly once");
    server.stop().await;
    world.finish().await;
}

/// A quiet stream sends a `heartbeat` at the configured interval, so a client (and any proxy
/// between) knows it is alive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_stream_sends_heartbeats() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("two.yaml", TWO_TURNS);
    let server = world
        .serve_with(|config| {
            config.stream = StreamOptions {
                heartbeat: Duration::from_millis(100),
                ..StreamOptions::default()
            }
        })
        .await;
    let session = server.create("two.yaml").await;
    let mut stream = server
        .stream(&format!("/api/sessions/{session}/events/stream"), None)
        .await;
    let mut heartbeats = 0;
    while heartbeats < 3 {
        let message = stream
            .next_or_heartbeat()
            .await
            .expect("the stream stays open");
        match message.event.as_str() {
            "heartbeat" => heartbeats += 1,
            other => assert_eq!(other, "message", "events and heartbeats only: {message:?}"),
        }
    }
    server.stop().await;
    world.finish().await;
}

/// The data of the next `end` message of `stream`, skipping the events before it.
async fn next_end(stream: &mut crate::support::Sse) -> Value {
    loop {
        let message = stream
            .next()
            .await
            .expect("an `end` before the stream closes");
        if message.event == "end" {
            return serde_json::from_str(&message.data).unwrap();
        }
        assert_eq!(message.event, "message", "{message:?}");
    }
}

/// The `end` message says why a stream ends: the session was deleted (on a stream of one, and
/// for that session on a stream of several), or the server is stopping.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_end_says_why() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("two.yaml", TWO_TURNS);
    let server = world.serve().await;
    let doomed = server.create("two.yaml").await;
    let staying = server.create("two.yaml").await;
    let mut one = server
        .stream(&format!("/api/sessions/{doomed}/events/stream"), None)
        .await;
    let mut several = server
        .stream(
            &format!("/api/stream?sessions={doomed}:0,{staying}:0"),
            None,
        )
        .await;
    let deleted = crate::support::Server::send(
        server.request(reqwest::Method::DELETE, &format!("/api/sessions/{doomed}")),
    )
    .await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
    assert_eq!(
        next_end(&mut one).await,
        json!({"sessionId": doomed, "reason": "deleted"})
    );
    assert!(one.next().await.is_none(), "the stream is over");
    assert_eq!(
        next_end(&mut several).await,
        json!({"sessionId": doomed, "reason": "deleted"})
    );

    let stopping = tokio::spawn(server.stop());
    assert_eq!(
        next_end(&mut several).await,
        json!({"sessionId": null, "reason": "stopping"})
    );
    stopping.await.unwrap();
    world.finish().await;
}

/// A lock held longer than a busy store's quick retries, while a turn streams: the session
/// keeps trying, and once the lock is let go every event of the turn is stored, in order —
/// none dropped, the session still usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_mid_turn_delays_its_events_and_loses_none() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    let words: Vec<String> = (1..=60).map(|n| format!("word{n}")).collect();
    world.script(
        "slow.yaml",
        &format!(
            "chunk_delay_ms: 50\nturns:\n  - say: {}\n  - say: after the lock\n",
            words.join(" ")
        ),
    );
    let options = SqliteOptions {
        busy_timeout: Duration::from_millis(100),
        ..SqliteOptions::default()
    };
    let server = world.serve_on(sqlite(&world, options), |_| {}).await;
    let session = server.create("slow.yaml").await;
    server.start_turn(&session, "talk slowly").await;
    wait_for_events(&server, &session, |events| {
        events.iter().any(|event| event.seq > 3)
    })
    .await;

    // Held past the quick retries (seven tries of 100 ms and their pauses, about 2 s).
    let locker = Locker::hold(&world.sqlite_path());
    tokio::time::sleep(Duration::from_secs(4)).await;
    locker.release();

    wait_for_events(&server, &session, |events| turns_finished(events) == 1).await;
    let events = server.all_events(&session).await;
    assert_consistent(&events);
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event.seq, index as u64 + 1, "gapless");
    }
    let text: String = events
        .iter()
        .filter_map(|event| match &event.body {
            qilin_protocol::EventBody::StepTextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, words.join(" "), "every streamed word stored once");
    server.start_turn(&session, "again").await;
    wait_for_events(&server, &session, |events| turns_finished(events) == 2).await;
    server.stop().await;
    world.finish().await;
}

/// A command printing 50 MB as it runs leaves its start, a few glimpses and its end in the
/// store, the event stream and the server's tree, each far under what it printed: the live
/// output of one call is bounded whatever it prints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_flooding_its_output_leaves_the_store_the_stream_and_the_tree_bounded() {
    let world = World::new(
        Backend::Sqlite,
        "name: runner\ninstructions: Run what you are asked to.\ntools: [bash]\n\
         skills:\n  available: []\n",
    );
    world.script(
        "flood.yaml",
        "turns:\n  - calls:\n      - tool: bash\n        args: {command: \"yes | head -c 50000000\"}\n  - say: done\n",
    );
    let server = world.serve().await;
    let session = server.create("flood.yaml").await;
    server.start_turn(&session, "flood").await;
    let mut stream = server
        .stream(&format!("/api/sessions/{session}/events/stream"), None)
        .await;
    let mut streamed = 0usize;
    loop {
        let (message, event) = tokio::time::timeout(PATIENCE, stream.next_event())
            .await
            .expect("the turn goes on")
            .expect("the stream goes on");
        streamed += message.data.len();
        if finishes_turn(&event) {
            break;
        }
    }
    // What the call's live output may take, at most: its text, written as JSON (`y\n` takes
    // four bytes there), plus the call's capped result.
    let bound = 2 * qilin_protocol::LIVE_MAX_BYTES + 256 * 1024;
    assert!(streamed < bound, "the stream carried {streamed} bytes");
    let stored = server.all_events(&session).await;
    assert_consistent(&stored);
    let stored_bytes: usize = stored
        .iter()
        .map(|event| serde_json::to_string(event).unwrap().len())
        .sum();
    assert!(stored_bytes < bound, "the store holds {stored_bytes} bytes");
    let live: u64 = stored
        .iter()
        .filter_map(|event| match &event.body {
            qilin_protocol::EventBody::ToolProgress(p) => {
                Some(p.text.len() as u64 + p.omitted_bytes.unwrap_or(0))
            }
            _ => None,
        })
        .sum();
    assert_eq!(
        live, 50_000_000,
        "every byte printed is shown live or counted"
    );
    let snapshot = server
        .get(&format!("/api/sessions/{session}/snapshot"))
        .await;
    assert_eq!(snapshot.status, 200);
    let tree_bytes = snapshot.body.to_string().len();
    assert!(tree_bytes < bound, "the tree takes {tree_bytes} bytes");
    let call = &snapshot.body["turns"][0]["items"][0]["node"];
    assert_eq!(call["toolName"], "bash");
    assert!(call["progressOmittedBytes"].as_u64().unwrap() > 40_000_000);
    assert!(call["progressTail"].as_str().unwrap().ends_with("y\n"));
    server.stop().await;
    world.finish().await;
}
