//! The conformance suite on [`PostgresStore`] against a real PostgreSQL, then what several
//! processes sharing it need: live events across stores, racing writers, lease takeover, a
//! dropped listening connection, commands relayed between them. Each test works in a schema of
//! its own.
//!
//! The database comes from `QILIN_TEST_POSTGRES_URL`; `bash scripts/postgres` starts a local
//! one and prints it (`bash scripts/test` does both).

use crate::support::*;
use futures_util::StreamExt;
use qilin_store::{
    EventStore, Lease, PostgresOptions, PostgresStore, RelayHandler, SearchQuery, StoreError,
};
use std::sync::Arc;
use std::time::Duration;

/// The test database's URL.
fn url() -> String {
    std::env::var("QILIN_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "QILIN_TEST_POSTGRES_URL is not set: the PostgreSQL tests need a real PostgreSQL. \
             Run `export QILIN_TEST_POSTGRES_URL=\"$(bash scripts/postgres)\"` (it starts \
             Debian's cluster and creates a test database), or run `bash scripts/test`."
        )
    })
}

/// A schema no other test uses.
fn fresh_schema() -> String {
    format!("qilin_t_{:016x}", fastrand::u64(..))
}

/// A store on `schema`, as one process would have it.
async fn store_on(schema: &str) -> PostgresStore {
    PostgresStore::connect_with(
        &url(),
        PostgresOptions {
            schema: schema.to_string(),
            pool_size: 8,
        },
    )
    .await
    .unwrap_or_else(|err| panic!("cannot connect to the test PostgreSQL: {err}"))
}

/// Runs `sql` on a connection of its own.
async fn admin(sql: &str) {
    let (client, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    client.batch_execute(sql).await.unwrap();
    drop(client);
    let _ = driver.await;
}

/// Removes `schema` and everything in it.
async fn drop_schema(schema: String) {
    admin(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await;
}

/// Two stores on one fresh schema, as two processes sharing the database have them.
struct TwoProcesses {
    schema: String,
    first: Arc<dyn EventStore>,
    second: Arc<dyn EventStore>,
}

impl TwoProcesses {
    async fn start() -> Self {
        let schema = fresh_schema();
        let first = Arc::new(store_on(&schema).await);
        let second = Arc::new(store_on(&schema).await);
        TwoProcesses {
            schema,
            first,
            second,
        }
    }

    async fn finish(self) {
        drop((self.first, self.second));
        drop_schema(self.schema).await;
    }
}

async fn open() -> Harness {
    let schema = fresh_schema();
    let store = store_on(&schema).await;
    Harness {
        store: Arc::new(store),
        cleanup: Some(Box::new(move || Box::pin(drop_schema(schema)))),
        _folder: None,
    }
}

conformance!(open);

/// Two stores — two pools, as two processes have — each follow the other's session live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_see_each_others_events_live() {
    let processes = TwoProcesses::start().await;
    let (first, second) = (&processes.first, &processes.second);
    first
        .create_session(new_session("of-first", "/w", 0))
        .await
        .unwrap();
    second
        .create_session(new_session("of-second", "/w", 0))
        .await
        .unwrap();
    let mut first_follows_second = first.follow("of-second", 0);
    let mut second_follows_first = second.follow("of-first", 0);
    let all = events(1, 150);
    for chunk in all.chunks(3) {
        first.append("of-first", chunk).await.unwrap();
        second.append("of-second", chunk).await.unwrap();
    }
    let seen_by_first = take(&mut first_follows_second, 150).await;
    let seen_by_second = take(&mut second_follows_first, 150).await;
    assert_run(&seen_by_first, &all, 1, 150);
    assert_run(&seen_by_second, &all, 1, 150);

    // Live, one at a time: each event is announced, not found by a later one's wake.
    for seq in 151..=160 {
        let next = events(seq, seq);
        second.append("of-second", &next).await.unwrap();
        assert_eq!(take(&mut first_follows_second, 1).await, next);
    }
    // A delete in one process ends the other's follower.
    second.delete_session("of-second").await.unwrap();
    let ended = tokio::time::timeout(PATIENCE, first_follows_second.next())
        .await
        .expect("the follower ended");
    assert!(ended.is_none(), "{ended:?}");
    processes.finish().await;
}

/// A session id too long for an announcement still reaches the other process's followers,
/// and takes no other session's append down with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_id_too_long_to_announce_is_still_followed() {
    let processes = TwoProcesses::start().await;
    let (first, second) = (&processes.first, &processes.second);
    let long = "s".repeat(9_000);
    first
        .create_session(new_session(&long, "/w", 0))
        .await
        .unwrap();
    first
        .create_session(new_session("short", "/w", 0))
        .await
        .unwrap();
    let mut follower = second.follow(&long, 0);
    let all = events(1, 6);
    let (a, b) = tokio::join!(
        first.append(&long, &all[..3]),
        first.append("short", &all[..3])
    );
    assert_eq!((a.unwrap(), b.unwrap()), (3, 3));
    assert_eq!(take(&mut follower, 3).await, all[..3]);
    first.append(&long, &all[3..]).await.unwrap();
    assert_eq!(take(&mut follower, 3).await, all[3..]);
    first.delete_session(&long).await.unwrap();
    let ended = tokio::time::timeout(PATIENCE, follower.next())
        .await
        .expect("the follower ended");
    assert!(ended.is_none(), "{ended:?}");
    processes.finish().await;
}

/// Two processes appending the same `seq` to one session at once: one commits, the other is
/// told `SeqConflict`, and the log holds one copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_writers_on_one_session_conflict() {
    let processes = TwoProcesses::start().await;
    let (first, second) = (&processes.first, &processes.second);
    first
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let mut head = 0;
    for _ in 0..30 {
        let ours = events(head + 1, head + 3);
        let theirs: Vec<_> = (head + 1..=head + 3)
            .map(|seq| event(seq, 0, text("theirs")))
            .collect();
        let (a, b) = tokio::join!(first.append("s", &ours), second.append("s", &theirs));
        let winner = match (&a, &b) {
            (Ok(3..), Err(StoreError::SeqConflict { .. })) => &ours,
            (Err(StoreError::SeqConflict { .. }), Ok(3..)) => &theirs,
            other => panic!("expected one commit and one conflict, got {other:?}"),
        };
        let stored = first.read("s", head, 10).await.unwrap();
        assert_eq!(&stored, winner);
        head += 3;
    }
    assert_eq!(second.session("s").await.unwrap().unwrap().head_seq, head);
    processes.finish().await;
}

/// A lease held by one process keeps the other out until it expires; then the other takes the
/// session over and the first cannot renew.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_is_taken_over_after_its_owner_stops_renewing() {
    let processes = TwoProcesses::start().await;
    let (first, second) = (&processes.first, &processes.second);
    first
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let ttl = Duration::from_millis(300);
    assert_eq!(
        first.acquire_lease("s", "process-1", ttl).await.unwrap(),
        Lease::Acquired
    );
    assert_eq!(
        second.acquire_lease("s", "process-2", ttl).await.unwrap(),
        Lease::HeldBy {
            owner: "process-1".into()
        }
    );
    // Renewed in time, it holds.
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(
        first.acquire_lease("s", "process-1", ttl).await.unwrap(),
        Lease::Acquired
    );
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(
        second.acquire_lease("s", "process-2", ttl).await.unwrap(),
        Lease::HeldBy {
            owner: "process-1".into()
        }
    );
    // process-1 "crashes": it renews no more.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        second.acquire_lease("s", "process-2", ttl).await.unwrap(),
        Lease::Acquired
    );
    assert_eq!(
        first.acquire_lease("s", "process-1", ttl).await.unwrap(),
        Lease::HeldBy {
            owner: "process-2".into()
        }
    );
    processes.finish().await;
}

/// When the listening connection is cut, the store reconnects and its followers still get
/// every event another process commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followers_survive_a_lost_listening_connection() {
    let processes = TwoProcesses::start().await;
    let (first, second) = (&processes.first, &processes.second);
    first
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let mut follower = first.follow("s", 0);
    let all = events(1, 20);
    second.append("s", &all[..5]).await.unwrap();
    assert_eq!(take(&mut follower, 5).await, all[..5]);

    // Cut both stores' listening connections: the server side ends them.
    admin(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE query = 'LISTEN \"qilin_events.{}\"'",
        processes.schema
    ))
    .await;
    second.append("s", &all[5..12]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    second.append("s", &all[12..]).await.unwrap();
    let rest = take(&mut follower, 15).await;
    assert_run(&rest, &all, 6, 20);
    processes.finish().await;
}

/// A relay handler that answers `NAME ran COMMAND on SESSION`.
fn answering(name: &'static str) -> RelayHandler {
    Arc::new(move |session, command| {
        Box::pin(async move { format!("{name} ran {command} on {session}") })
    })
}

/// A command sent to another process runs there, through its handler, and its outcome comes
/// back; a command sent before its target listens runs once it does; a store only one process
/// uses has no relay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_relayed_to_the_process_they_name() {
    let processes = TwoProcesses::start().await;
    let first = processes
        .first
        .connect_relay("first", answering("first"))
        .await
        .unwrap()
        .expect("PostgreSQL relays");
    let second = processes
        .second
        .connect_relay("second", answering("second"))
        .await
        .unwrap()
        .expect("PostgreSQL relays");
    assert_eq!(
        first.forward("second", "s1", "start").await.unwrap(),
        "second ran start on s1"
    );
    assert_eq!(
        second.forward("first", "s2", "stop").await.unwrap(),
        "first ran stop on s2"
    );

    // Sent to a process not yet listening: run as soon as it is.
    let early = tokio::spawn({
        let first = Arc::clone(&first);
        async move { first.forward("third", "s3", "early").await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let third_store = store_on(&processes.schema).await;
    let _third = third_store
        .connect_relay("third", answering("third"))
        .await
        .unwrap()
        .expect("PostgreSQL relays");
    assert_eq!(early.await.unwrap().unwrap(), "third ran early on s3");

    // After the relay's listening connection is cut, it listens again and runs commands.
    admin(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE query LIKE 'LISTEN \"qilin_relay_%'",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        first.forward("second", "s4", "again").await.unwrap(),
        "second ran again on s4"
    );

    let alone = qilin_store::MemoryStore::new();
    assert!(
        alone
            .connect_relay("only", answering("only"))
            .await
            .unwrap()
            .is_none()
    );
    drop((first, second, _third, third_store));
    processes.finish().await;
}

/// Tables written by a newer Qilin are refused with a message saying so.
#[tokio::test]
async fn a_newer_schema_is_refused() {
    let schema = fresh_schema();
    drop(store_on(&schema).await);
    admin(&format!("UPDATE {schema}.schema_version SET version = 99")).await;
    let err = PostgresStore::connect_with(
        &url(),
        PostgresOptions {
            schema: schema.clone(),
            ..PostgresOptions::default()
        },
    )
    .await
    .err()
    .expect("refused");
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("upgrade Qilin"), "{err}");
    drop_schema(schema).await;
}

/// Tables from before the search index (schema version 1) are indexed on connect: what they
/// stored is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_from_before_the_index_are_indexed_on_connect() {
    let schema = fresh_schema();
    let store = store_on(&schema).await;
    searchable_sessions(&store).await;
    drop(store);
    admin(&format!(
        "DROP TABLE {schema}.search_docs, {schema}.search_calls,
                    {schema}.schedule_runs, {schema}.schedules;
         DROP INDEX {schema}.events_loop_and_workflow_runs;
         ALTER TABLE {schema}.sessions DROP COLUMN parent_session_id,
                                       DROP COLUMN parent_call_id;
         UPDATE {schema}.schema_version SET version = 1"
    ))
    .await;
    let store = store_on(&schema).await;
    let page = store
        .search(&SearchQuery {
            text: "retry logic".into(),
            ..SearchQuery::default()
        })
        .await
        .unwrap();
    let places: Vec<(&str, u64, Option<u32>)> = page
        .hits
        .iter()
        .map(|hit| (hit.session.as_str(), hit.seq, hit.turn))
        .collect();
    assert_eq!(places.len(), 3, "{page:#?}");
    assert!(places.contains(&("a", 3, Some(1))), "{page:#?}");
    assert_eq!(places[2], ("b", 1, Some(1)));
    let chinese = store
        .search(&SearchQuery {
            text: "重试".into(),
            ..SearchQuery::default()
        })
        .await
        .unwrap();
    assert!(chinese.hits.iter().all(|hit| hit.turn == Some(2)) && chinese.hits.len() == 2);
    drop(store);
    drop_schema(schema).await;
}

/// Tables from before child sessions (schema version 2) are migrated on connect: their
/// sessions are top-level, and children can be created and listed under them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_from_before_child_sessions_work_after_connect() {
    let schema = fresh_schema();
    let store = store_on(&schema).await;
    searchable_sessions(&store).await;
    drop(store);
    admin(&format!(
        "DROP TABLE {schema}.schedule_runs, {schema}.schedules;
         DROP INDEX {schema}.events_loop_and_workflow_runs;
         ALTER TABLE {schema}.sessions DROP COLUMN parent_session_id,
                                       DROP COLUMN parent_call_id;
         UPDATE {schema}.schema_version SET version = 2"
    ))
    .await;
    let store = store_on(&schema).await;
    let old = store.session("a").await.unwrap().unwrap();
    assert_eq!((old.parent_session_id, old.parent_call_id), (None, None));
    store
        .create_session(qilin_store::NewSession {
            parent_session_id: Some("a".into()),
            parent_call_id: Some("call-9".into()),
            ..new_session("child", "/w", 20)
        })
        .await
        .unwrap();
    let children = store
        .list_sessions(&qilin_store::SessionQuery {
            limit: 10,
            parent: qilin_store::ParentFilter::ChildrenOf("a".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(children.sessions.len(), 1);
    assert_eq!(
        children.sessions[0].parent_call_id.as_deref(),
        Some("call-9")
    );
    drop(store);
    drop_schema(schema).await;
}

/// Bad settings are clear errors: a malformed URL, a schema name that is not one, a server
/// that is not there.
#[tokio::test]
async fn bad_settings_are_clear_errors() {
    let err = PostgresStore::connect("postgres://user@host:notaport/db")
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, StoreError::Config(_)), "{err}");
    let err = PostgresStore::connect_with(
        &url(),
        PostgresOptions {
            schema: "Robert'); DROP TABLE".into(),
            ..PostgresOptions::default()
        },
    )
    .await
    .err()
    .expect("refused");
    assert!(err.to_string().contains("lower-case letters"), "{err}");
    // Nothing listens on port 1.
    let err = PostgresStore::connect("postgres://qilin:qilin@127.0.0.1:1/qilin")
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, StoreError::Backend(_)), "{err}");
    assert!(
        !err.to_string().contains("qilin:qilin"),
        "no password in messages: {err}"
    );
}
