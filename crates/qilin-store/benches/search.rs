//! The search benchmark, on SQLite: a store of 1,000 sessions and 1,000,000 events of
//! realistic shape (prompts, the model's text streamed in pieces, calls with arguments and
//! results, some failing, some Chinese), built twice from the same seed — with the search index
//! and without it — then:
//!
//! - **append throughput**: events committed per second while building each store (50 sessions
//!   appending concurrently, eight events per append, as a runtime flushes a step's stream; the
//!   two stores built in turns, a tenth at a time, so the machine's load weighs on both alike);
//!   the index is written by the store's indexer thread after the appends commit, so after each
//!   tenth a search waits for it to catch up before the other store's turn: that wait is
//!   printed on its own (and with the appends' time), so nothing hides behind the thread;
//! - **search latency**: p50 and p95 of `EventStore::search` (a page of 20) over queries of one
//!   common word, one rare word, a two-word phrase, a Chinese word, and a word with a tool
//!   filter;
//! - **index size**: the pages of the index file (`DB.search`) as a share of the database's
//!   and the index's together (SQLite's `dbstat`).
//!
//! With `QILIN_TEST_POSTGRES_URL` set (`export QILIN_TEST_POSTGRES_URL="$(bash scripts/postgres)"`)
//! the same events are then appended to PostgreSQL (in a schema of their own, dropped after),
//! with its index (it has no store without one), and the same queries timed there.
//!
//! The writer and indexer threads' CPU time and the bytes they wrote (the files' logs) are
//! printed beside the wall clock: the load other programs put on the machine changes them much
//! less.
//!
//! Run: `cargo bench -p qilin-store --bench search` (`QILIN_BENCH_EVENTS=100000` for a smaller
//! store; the sessions stay 1,000; `QILIN_BENCH_STORES=sqlite` or `postgres` for one store).

use qilin_protocol::{
    CallPresentation, CallStatus, CallerKind, ContentBlock, Event, EventBody, FinishReason,
    ToolResultEvent, ToolStartEvent, Usage,
};
use qilin_store::{
    EventStore, NewSession, PostgresOptions, PostgresStore, SearchQuery, SqliteOptions, SqliteStore,
};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SESSIONS: usize = 1_000;
const CONCURRENT: usize = 50;
const ROUNDS: usize = 10;
const PER_APPEND: usize = 8;
const SEED: u64 = 28;

const WORDS: &[&str] = &[
    "the",
    "retry",
    "logic",
    "client",
    "server",
    "request",
    "timeout",
    "error",
    "config",
    "parser",
    "report",
    "total",
    "region",
    "cache",
    "build",
    "test",
    "migration",
    "schema",
    "index",
    "query",
    "handler",
    "session",
    "token",
    "stream",
    "buffer",
    "file",
    "path",
    "write",
    "read",
    "update",
    "delete",
    "user",
    "account",
    "invoice",
    "payment",
    "order",
    "branch",
    "commit",
    "merge",
    "review",
    "deploy",
    "release",
    "version",
    "module",
    "crate",
    "function",
    "struct",
    "field",
    "value",
    "result",
    "option",
    "vector",
    "string",
    "number",
    "backoff",
    "exponential",
    "jitter",
    "latency",
    "throughput",
    "memory",
    "thread",
    "lock",
];
const RARE: &[&str] = &["zanzibar", "quokka", "fjord", "xylophone", "mnemonic"];
const CHINESE: &[&str] = &[
    "修改",
    "重试",
    "逻辑",
    "数据库",
    "迁移",
    "失败",
    "报告",
    "测试",
];

fn main() -> anyhow::Result<()> {
    let events_total: usize = std::env::var("QILIN_BENCH_EVENTS")
        .ok()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let per_session = (events_total / SESSIONS).max(8);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let chosen = std::env::var("QILIN_BENCH_STORES").unwrap_or_default();
    let wanted = |store: &str| chosen.is_empty() || chosen.split(',').any(|name| name == store);
    runtime.block_on(async {
        if wanted("sqlite") {
            sqlite(per_session).await?;
        }
        match std::env::var("QILIN_TEST_POSTGRES_URL") {
            _ if !wanted("postgres") => {}
            Ok(url) => postgres(&url, per_session).await?,
            Err(_) => println!(
                "postgres: skipped (export QILIN_TEST_POSTGRES_URL=\"$(bash scripts/postgres)\" to measure it)"
            ),
        }
        anyhow::Ok(())
    })
}

/// The SQLite store built with the index and without it, its search latency and index size.
async fn sqlite(per_session: usize) -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    println!(
        "search benchmark: {SESSIONS} sessions x {per_session} events = {} events, SQLite",
        SESSIONS * per_session
    );
    let plain_path = folder.path().join("plain.db");
    let indexed_path = folder.path().join("indexed.db");
    let plain = open(&plain_path, false).await?;
    let indexed = open(&indexed_path, true).await?;
    // The two stores are built in turns, a tenth of the sessions at a time, so that a
    // change in the machine's load weighs on both alike.
    let (mut plain_took, mut indexed_took) = (Duration::ZERO, Duration::ZERO);
    let (mut caught_up, mut last_caught_up) = (Duration::ZERO, Duration::ZERO);
    let (mut plain_used, mut indexed_used) = (WriterUsage::default(), WriterUsage::default());
    let mut indexer_used = WriterUsage::default();
    for round in 0..ROUNDS {
        let sessions = round * SESSIONS / ROUNDS..(round + 1) * SESSIONS / ROUNDS;
        let before = thread_usage(WRITER);
        plain_took += append(&plain, sessions.clone(), per_session).await?;
        let between = thread_usage(WRITER);
        let indexer_before = thread_usage(INDEXER);
        indexed_took += append(&indexed, sessions, per_session).await?;
        plain_used = plain_used.add(between.since(before));
        indexed_used = indexed_used.add(thread_usage(WRITER).since(between));
        // A search waits for the indexer to have indexed every append before it.
        let started = Instant::now();
        indexed.search(&query("zanzibar", None)).await?;
        last_caught_up = started.elapsed();
        caught_up += last_caught_up;
        indexer_used = indexer_used.add(thread_usage(INDEXER).since(indexer_before));
    }
    let events = (SESSIONS * per_session) as f64;
    let (plain_rate, indexed_rate) = (
        events / plain_took.as_secs_f64(),
        events / indexed_took.as_secs_f64(),
    );
    println!(
        "append without the index: {plain_rate:.0} events/s ({:.1} s)",
        plain_took.as_secs_f64()
    );
    println!(
        "append with the index:    {indexed_rate:.0} events/s ({:.1} s): {:.1}% slower",
        indexed_took.as_secs_f64(),
        (1.0 - indexed_rate / plain_rate) * 100.0
    );
    let ratio = |with: f64, without: f64| with / without.max(f64::MIN_POSITIVE);
    let whole = indexed_took + caught_up;
    println!(
        "index caught up after the last append in {:.0} ms (after each tenth: {:.1} s in all); \
         appends and catching up together: {:.0} events/s ({:.1} s): {:.1}% slower",
        ms(last_caught_up),
        caught_up.as_secs_f64(),
        events / whole.as_secs_f64(),
        whole.as_secs_f64(),
        (1.0 - events / whole.as_secs_f64() / plain_rate) * 100.0
    );
    println!(
        "writer thread CPU time: {:.1} s without the index, {:.1} s with it ({:.2}x); \
         indexer thread: {:.1} s (writer and indexer {:.2}x the plain writer)",
        plain_used.cpu.as_secs_f64(),
        indexed_used.cpu.as_secs_f64(),
        ratio(indexed_used.cpu.as_secs_f64(), plain_used.cpu.as_secs_f64()),
        indexer_used.cpu.as_secs_f64(),
        ratio(
            (indexed_used.cpu + indexer_used.cpu).as_secs_f64(),
            plain_used.cpu.as_secs_f64()
        )
    );
    println!(
        "writer thread bytes written: {:.0} MiB without the index, {:.0} MiB with it ({:.2}x); \
         indexer thread: {:.0} MiB",
        plain_used.written as f64 / 1048576.0,
        indexed_used.written as f64 / 1048576.0,
        ratio(indexed_used.written as f64, plain_used.written as f64),
        indexer_used.written as f64 / 1048576.0
    );
    drop(plain);
    latency(indexed.as_ref()).await?;
    drop(indexed);
    size(&indexed_path)
}

/// The same events in PostgreSQL (a schema of their own, dropped after): the append
/// throughput with the index and the search latency.
async fn postgres(url: &str, per_session: usize) -> anyhow::Result<()> {
    println!(
        "search benchmark: {SESSIONS} sessions x {per_session} events = {} events, PostgreSQL",
        SESSIONS * per_session
    );
    let schema = format!("qilin_bench_search_{:08x}", fastrand::u32(..));
    let options = PostgresOptions {
        schema: schema.clone(),
        pool_size: 16,
    };
    let store: Arc<dyn EventStore> = Arc::new(PostgresStore::connect_with(url, options).await?);
    let outcome = async {
        create_sessions(store.as_ref()).await?;
        let took = append(&store, 0..SESSIONS, per_session).await?;
        println!(
            "append with the index: {:.0} events/s ({:.1} s)",
            (SESSIONS * per_session) as f64 / took.as_secs_f64(),
            took.as_secs_f64()
        );
        latency(store.as_ref()).await
    }
    .await;
    drop(store);
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await?;
    drop(client);
    let _ = driver.await;
    outcome
}

/// Opens a new store at `path` (indexed or not) holding the benchmark's sessions, no events.
async fn open(path: &Path, search_index: bool) -> anyhow::Result<Arc<dyn EventStore>> {
    let store: Arc<dyn EventStore> = Arc::new(SqliteStore::open_with(
        path,
        SqliteOptions {
            search_index,
            ..SqliteOptions::default()
        },
    )?);
    create_sessions(store.as_ref()).await?;
    Ok(store)
}

/// Creates the benchmark's sessions in `store`, with no events.
async fn create_sessions(store: &dyn EventStore) -> anyhow::Result<()> {
    for n in 0..SESSIONS {
        store
            .create_session(NewSession {
                id: format!("s{n:04}"),
                workspace: "/bench".into(),
                agent: if n % 3 == 0 { "reviewer" } else { "coder" }.into(),
                agent_file: None,
                model: "scripted:bench".into(),
                created_at: "2026-12-02T00:00:00.000Z".into(),
                parent_session_id: None,
                parent_call_id: None,
            })
            .await?;
    }
    Ok(())
}

/// Appends the events of `sessions` to `store`, [`CONCURRENT`] sessions at a time, and says how
/// long it took.
async fn append(
    store: &Arc<dyn EventStore>,
    sessions: Range<usize>,
    per_session: usize,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..CONCURRENT {
        let store = Arc::clone(store);
        let sessions = sessions.clone();
        tasks.push(tokio::spawn(async move {
            for n in sessions.skip(worker).step_by(CONCURRENT) {
                let events = session_events(n, per_session);
                for chunk in events.chunks(PER_APPEND) {
                    store.append(&format!("s{n:04}"), chunk).await?;
                }
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    Ok(started.elapsed())
}

/// The stores' writer threads.
const WRITER: &str = "qilin-store-writer";

/// The indexed store's indexer thread.
const INDEXER: &str = "qilin-store-indexer";

/// What the stores' threads named `thread` have used so far, from `/proc` (zero where it
/// cannot be read): their CPU time and the bytes they wrote (their file's log). While one store
/// appends the other's writer waits, and only the indexed store has an indexer, so the
/// difference over an append is that store's thread's — figures the machine's load changes
/// much less than the wall clock.
fn thread_usage(thread: &str) -> WriterUsage {
    let mut usage = WriterUsage::default();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return usage;
    };
    for task in tasks.flatten() {
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        // The kernel keeps the first 15 bytes of a thread's name.
        let name = name.trim();
        if name.len() < 15 || !thread.starts_with(name) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        let nanos = stat
            .split_whitespace()
            .next()
            .and_then(|on_cpu| on_cpu.parse::<u64>().ok())
            .unwrap_or(0);
        usage.cpu += Duration::from_nanos(nanos);
        let io = std::fs::read_to_string(task.path().join("io")).unwrap_or_default();
        usage.written += io
            .lines()
            .find_map(|line| line.strip_prefix("wchar:"))
            .and_then(|bytes| bytes.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    usage
}

/// A thread's CPU time and bytes written.
#[derive(Debug, Clone, Copy, Default)]
struct WriterUsage {
    cpu: Duration,
    written: u64,
}

impl WriterUsage {
    /// What was used between `earlier` and `self`.
    fn since(self, earlier: WriterUsage) -> WriterUsage {
        WriterUsage {
            cpu: self.cpu.saturating_sub(earlier.cpu),
            written: self.written.saturating_sub(earlier.written),
        }
    }

    /// `self` and `other` together.
    fn add(self, other: WriterUsage) -> WriterUsage {
        WriterUsage {
            cpu: self.cpu + other.cpu,
            written: self.written + other.written,
        }
    }
}

/// `count` words drawn from `rng`, a rare or Chinese one now and then.
fn sentence(rng: &mut fastrand::Rng, count: usize) -> String {
    let mut words = Vec::with_capacity(count);
    for _ in 0..count {
        let word = match rng.u32(0..100) {
            0 => RARE[rng.usize(..RARE.len())],
            1..=4 => CHINESE[rng.usize(..CHINESE.len())],
            _ => WORDS[rng.usize(..WORDS.len())],
        };
        words.push(word);
    }
    words.join(" ")
}

/// The `count` events of session `n`: turns of a prompt, a step of streamed text, a call and
/// its result, again and again.
fn session_events(n: usize, count: usize) -> Vec<Event> {
    let mut rng = fastrand::Rng::with_seed(SEED + n as u64);
    let mut events = Vec::with_capacity(count);
    let mut turn = 0;
    let time = |seq: usize| {
        let seconds = (n * 7 + seq) % 86_400;
        format!(
            "2026-12-02T{:02}:{:02}:{:02}.000Z",
            seconds / 3600,
            (seconds / 60) % 60,
            seconds % 60
        )
    };
    while events.len() < count {
        turn += 1;
        let turn_id = format!("t{turn}");
        let mut bodies = vec![
            EventBody::TurnStarted {
                turn_id: turn_id.clone(),
                prompt: sentence(&mut rng, 12),
                client_turn_id: None,
            },
            EventBody::StepStarted {
                turn_id: turn_id.clone(),
                step: 1,
            },
        ];
        for _ in 0..10 {
            bodies.push(EventBody::StepTextDelta {
                turn_id: turn_id.clone(),
                step: 1,
                text: format!("{} ", sentence(&mut rng, 4)),
            });
        }
        bodies.push(EventBody::StepFinished {
            turn_id: turn_id.clone(),
            step: 1,
            usage: Usage::default(),
            stop_reason: None,
        });
        let call_id = format!("call-{turn}");
        let tool = ["bash", "read", "grep"][rng.usize(..3)];
        bodies.push(EventBody::ToolStart(ToolStartEvent {
            call_id: call_id.clone(),
            tool_name: tool.into(),
            caller: CallerKind::Direct,
            parent_call_id: None,
            arguments: serde_json::json!({"command": sentence(&mut rng, 6)}),
            presentation: CallPresentation::new("Run", tool),
            before_detail: None,
        }));
        let failed = rng.u32(0..10) == 0;
        bodies.push(EventBody::ToolResult(ToolResultEvent {
            call_id,
            tool_name: tool.into(),
            caller: CallerKind::Direct,
            parent_call_id: None,
            status: if failed {
                CallStatus::Error
            } else {
                CallStatus::Ok
            },
            error_code: None,
            content: vec![ContentBlock::text(sentence(&mut rng, 40))],
            output: None,
            detail: None,
            duration_ms: 12,
            user_reason: None,
        }));
        bodies.push(EventBody::TurnFinished {
            turn_id,
            reason: FinishReason::Completed,
            message: None,
        });
        for body in bodies {
            if events.len() == count {
                break;
            }
            let seq = events.len() + 1;
            events.push(Event {
                seq: seq as u64,
                time: time(seq),
                body,
            });
        }
    }
    events
}

/// Search latency over a mix of queries, p50 and p95 (a page of 20).
async fn latency(store: &dyn EventStore) -> anyhow::Result<()> {
    let queries: Vec<SearchQuery> = vec![
        query("retry", None),
        query("zanzibar", None),
        query("retry logic", None),
        query("exponential backoff", None),
        query("重试", None),
        query("数据库 迁移", None),
        query("migration", Some("bash")),
        query("quokka fjord", None),
    ];
    let mut warm = 0;
    for query in &queries {
        warm += store.search(query).await?.hits.len();
    }
    println!("search warm-up: {warm} hits over {} queries", queries.len());
    let mut all = Vec::new();
    for query in &queries {
        let mut times = Vec::new();
        for _ in 0..25 {
            let started = Instant::now();
            store.search(query).await?;
            times.push(started.elapsed());
        }
        times.sort_unstable();
        println!(
            "  `{}`{}: p50 {:.1} ms, p95 {:.1} ms",
            query.text,
            query
                .tool
                .as_deref()
                .map_or(String::new(), |tool| format!(" (tool {tool})")),
            ms(times[times.len() / 2]),
            ms(times[times.len() * 95 / 100])
        );
        all.extend(times);
    }
    all.sort_unstable();
    println!(
        "search, all queries: p50 {:.1} ms, p95 {:.1} ms (target p95 < 50 ms)",
        ms(all[all.len() / 2]),
        ms(all[all.len() * 95 / 100])
    );
    Ok(())
}

fn query(text: &str, tool: Option<&str>) -> SearchQuery {
    SearchQuery {
        text: text.into(),
        tool: tool.map(str::to_string),
        limit: 20,
        ..SearchQuery::default()
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The index file's share of the database and the index together, by `dbstat`.
fn size(path: &Path) -> anyhow::Result<()> {
    let pages = |file: &Path| -> anyhow::Result<i64> {
        let conn = rusqlite::Connection::open(file)?;
        Ok(conn.query_row("SELECT sum(pgsize) FROM dbstat", [], |row| row.get(0))?)
    };
    let mut index_file = path.as_os_str().to_os_string();
    index_file.push(".search");
    let index_file = std::path::PathBuf::from(index_file);
    let (database, index) = (pages(path)?, pages(&index_file)?);
    println!(
        "index size: {:.1} MiB beside a database of {:.1} MiB ({:.1}% of both)",
        index as f64 / 1048576.0,
        database as f64 / 1048576.0,
        index as f64 * 100.0 / (database + index) as f64
    );
    let conn = rusqlite::Connection::open(&index_file)?;
    let mut statement =
        conn.prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")?;
    let parts = statement
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for (name, bytes) in parts {
        println!("  {name}: {:.1} MiB", bytes as f64 / 1048576.0);
    }
    Ok(())
}
