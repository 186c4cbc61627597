//! The store benchmark, on SQLite (and PostgreSQL when one is configured; memory for scale):
//!
//! - **throughput**: 200 sessions append concurrently, one event per append (the worst case:
//!   every delta committed on its own), then eight per append (a runtime flushing what a step
//!   streamed meanwhile), while 50 followers — one on each of 50 of the sessions — receive them;
//!   events committed per second over the whole run;
//! - **delivery latency**: for every event the followers receive, the time from just before its
//!   `append` was called to its arrival at the follower, p50 and p99;
//! - **resume**: a session of 10,000 events; a follower starts (from the beginning, and from the
//!   head) while the next event is appended; the time until that live event reaches it.
//!
//! Run: `cargo bench -p qilin-store` (PostgreSQL too with
//! `QILIN_TEST_POSTGRES_URL="$(bash scripts/postgres)"` exported; `QILIN_BENCH_STORES=sqlite`
//! measures only the stores it names, comma-separated).

use futures_util::StreamExt;
use qilin_protocol::{Event, EventBody};
use qilin_store::{
    EventStore, MemoryStore, NewSession, PostgresOptions, PostgresStore, SqliteStore,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SESSIONS: usize = 200;
const FOLLOWED: usize = 50;
const RESUME_EVENTS: u64 = 10_000;
const RESUME_RUNS: usize = 20;

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let folder = tempfile::tempdir()?;
        println!("store benchmark: {SESSIONS} sessions appending concurrently, {FOLLOWED} of them followed");
        let chosen = std::env::var("QILIN_BENCH_STORES").unwrap_or_default();
        let wanted = |store: &str| chosen.is_empty() || chosen.split(',').any(|name| name == store);
        if wanted("memory") {
            let memory: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
            measure("memory", &memory, 250).await?;
            resume("memory", &memory).await?;
        }
        if wanted("sqlite") {
            let sqlite: Arc<dyn EventStore> =
                Arc::new(SqliteStore::open(folder.path().join("qilin.db"))?);
            measure("sqlite", &sqlite, 250).await?;
            resume("sqlite", &sqlite).await?;
        }
        match std::env::var("QILIN_TEST_POSTGRES_URL") {
            _ if !wanted("postgres") => {}
            Ok(url) => {
                let schema = format!("qilin_bench_{:08x}", fastrand::u32(..));
                let options = PostgresOptions {
                    schema: schema.clone(),
                    pool_size: 16,
                };
                let postgres: Arc<dyn EventStore> =
                    Arc::new(PostgresStore::connect_with(&url, options).await?);
                let outcome = match measure("postgres", &postgres, 50).await {
                    Ok(()) => resume("postgres", &postgres).await,
                    failed => failed,
                };
                drop(postgres);
                let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
                let driver = tokio::spawn(connection);
                client.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).await?;
                drop(client);
                let _ = driver.await;
                outcome?;
            }
            Err(_) => println!(
                "postgres: skipped (export QILIN_TEST_POSTGRES_URL=\"$(bash scripts/postgres)\" to measure it)"
            ),
        }
        Ok(())
    })
}

/// A session to append to.
fn session(id: String) -> NewSession {
    NewSession {
        id,
        workspace: "/bench".into(),
        agent: "bench".into(),
        agent_file: None,
        model: "scripted:bench".into(),
        created_at: "2026-11-30T17:00:00.000Z".into(),
        parent_session_id: None,
        parent_call_id: None,
    }
}

/// A text delta the size of a streamed phrase, stamped with when its append began.
fn delta(seq: u64, sent: Duration) -> Event {
    Event {
        seq,
        time: "2026-11-30T17:00:01.000Z".into(),
        body: EventBody::StepTextDelta {
            turn_id: "turn-1".into(),
            step: 1,
            text: format!(
                "{} the quick brown fox jumps over the lazy dog, again and again",
                sent.as_nanos()
            ),
        },
    }
}

/// When the append of a `delta` began.
fn stamp(event: &Event) -> Option<Duration> {
    let EventBody::StepTextDelta { text, .. } = &event.body else {
        return None;
    };
    let nanos: u64 = text.split(' ').next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// The `p`-th percentile of sorted `values`.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

/// Throughput and delivery latency, appending one event per append and then eight.
async fn measure(label: &str, store: &Arc<dyn EventStore>, per_session: u64) -> anyhow::Result<()> {
    for batch in [1, 8] {
        throughput(label, store, per_session * batch, batch).await?;
    }
    Ok(())
}

async fn throughput(
    label: &str,
    store: &Arc<dyn EventStore>,
    per_session: u64,
    batch: u64,
) -> anyhow::Result<()> {
    let run = format!("{label}-{}", fastrand::u32(..));
    for n in 0..SESSIONS {
        store.create_session(session(format!("{run}-{n}"))).await?;
    }
    let origin = Instant::now();
    let mut followers = Vec::new();
    for n in 0..FOLLOWED {
        let mut stream = store.follow(&format!("{run}-{n}"), 0);
        followers.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(per_session as usize);
            while let Some(event) = stream.next().await {
                let event = event?;
                if let Some(sent) = stamp(&event) {
                    latencies.push(origin.elapsed().saturating_sub(sent));
                }
                if event.seq == per_session {
                    break;
                }
            }
            anyhow::Ok(latencies)
        }));
    }
    let started = Instant::now();
    let mut writers = Vec::new();
    for n in 0..SESSIONS {
        let store = Arc::clone(store);
        let id = format!("{run}-{n}");
        writers.push(tokio::spawn(async move {
            let mut head = 0;
            while head < per_session {
                let sent = origin.elapsed();
                let events: Vec<Event> = (head + 1..=head + batch)
                    .map(|seq| delta(seq, sent))
                    .collect();
                head = store.append(&id, &events).await?;
            }
            anyhow::Ok(())
        }));
    }
    for writer in writers {
        writer.await??;
    }
    let elapsed = started.elapsed();
    let mut latencies = Vec::new();
    for follower in followers {
        latencies.extend(follower.await??);
    }
    latencies.sort();
    let total = SESSIONS as u64 * per_session;
    println!(
        "{label}, {batch} per append: {total} events committed in {:.2} s = {:.0} events/s; append to follower: p50 {}, p99 {} ({} deliveries)",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.99)),
        latencies.len(),
    );
    Ok(())
}

/// A follower of a 10,000-event session, started as the next event is appended: how long until
/// that live event reaches it, from the start of the log and from its head.
async fn resume(label: &str, store: &Arc<dyn EventStore>) -> anyhow::Result<()> {
    let id = format!("{label}-resume-{}", fastrand::u32(..));
    store.create_session(session(id.clone())).await?;
    let origin = Instant::now();
    let mut head = 0;
    while head < RESUME_EVENTS {
        let batch: Vec<Event> = (head + 1..=head + 100)
            .map(|seq| delta(seq, origin.elapsed()))
            .collect();
        head = store.append(&id, &batch).await?;
    }
    for (from, after) in [("the start", true), ("the head", false)] {
        let mut times = Vec::with_capacity(RESUME_RUNS);
        for _ in 0..RESUME_RUNS {
            let live = head + 1;
            let started = Instant::now();
            let mut stream = store.follow(&id, if after { 0 } else { head });
            let store = Arc::clone(store);
            let id = id.clone();
            let appended =
                tokio::spawn(
                    async move { store.append(&id, &[delta(live, origin.elapsed())]).await },
                );
            loop {
                let event = stream
                    .next()
                    .await
                    .ok_or_else(|| anyhow::anyhow!("the follower ended"))??;
                if event.seq == live {
                    break;
                }
            }
            times.push(started.elapsed());
            head = appended.await??;
        }
        times.sort();
        println!(
            "{label}: resume of a {RESUME_EVENTS}-event session from {from} to its first live event: median {}, max {} ({RESUME_RUNS} runs)",
            ms(percentile(&times, 0.5)),
            ms(*times.last().unwrap_or(&Duration::ZERO)),
        );
    }
    Ok(())
}
