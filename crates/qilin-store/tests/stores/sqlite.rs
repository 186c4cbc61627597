//! The conformance suite on [`SqliteStore`], then what only the SQLite file must survive: a
//! killed process, a second process, a lock held by someone else, a full database, a file from
//! a newer Qilin.

use crate::support::*;
use qilin_store::{EventStore, SearchQuery, SqliteOptions, SqliteStore, StoreError};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

async fn open() -> Harness {
    let folder = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(folder.path().join("qilin.db")).unwrap();
    Harness {
        store: Arc::new(store),
        cleanup: None,
        _folder: Some(folder),
    }
}

conformance!(open);

/// What the child process does, from `QILIN_STORE_CHILD`.
const CHILD_ENV: &str = "QILIN_STORE_CHILD";
/// The database the child opens.
const CHILD_DB_ENV: &str = "QILIN_STORE_CHILD_DB";
/// The sessions the appending child writes, concurrently.
const CHILD_SESSIONS: usize = 4;

/// Runs this test binary again as a child process doing `mode` on `database`.
fn child(mode: &str, database: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "sqlite::child_process",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_ENV, mode)
        .env(CHILD_DB_ENV, database)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The body of event `seq` of session `session` as the appending child writes it.
fn child_event(session: usize, seq: u64) -> qilin_protocol::Event {
    event(seq, 0, text(&format!("session {session} event {seq}")))
}

/// Not a test: the child process of the tests below, run by them with `--ignored`.
#[test]
#[ignore = "not a test of its own: the child process that the kill and second-process tests start with --ignored --exact, which is where it runs"]
fn child_process() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    let database = std::env::var(CHILD_DB_ENV).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        match mode.as_str() {
            "open" => match SqliteStore::open(&database) {
                Ok(_) => println!("opened"),
                Err(err) => println!("error: {err}"),
            },
            "share" => match SqliteStore::open_with(&database, shared()) {
                Ok(store) => {
                    store
                        .create_session(new_session("child", "/w", 0))
                        .await
                        .unwrap();
                    let events: Vec<_> = (1..=20).map(|seq| child_event(0, seq)).collect();
                    let head = store.append("child", &events).await.unwrap();
                    println!("shared {head}");
                }
                Err(err) => println!("error: {err}"),
            },
            "append" => {
                let store = Arc::new(SqliteStore::open(&database).unwrap());
                let mut writers = Vec::new();
                for session in 0..CHILD_SESSIONS {
                    let store = Arc::clone(&store);
                    writers.push(tokio::spawn(async move {
                        let id = format!("s{session}");
                        store
                            .create_session(new_session(&id, "/w", 0))
                            .await
                            .unwrap();
                        let mut head = 0;
                        loop {
                            let batch: Vec<_> = (head + 1..=head + 5)
                                .map(|seq| child_event(session, seq))
                                .collect();
                            head = store.append(&id, &batch).await.unwrap();
                            println!("committed {session} {head}");
                        }
                    }));
                }
                let (stopped, _, _) = futures_util::future::select_all(writers).await;
                panic!("a writer stopped: {stopped:?}");
            }
            other => panic!("unknown child mode {other}"),
        }
    });
}

/// `kill -9` of a process in the middle of appending loses no event it saw committed, and
/// leaves the file whole and free for the next process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_process_loses_no_committed_event() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    for round in 0..3 {
        let mut process = child("append", &database);
        let mut lines = BufReader::new(process.stdout.take().unwrap()).lines();
        let mut committed = [0u64; CHILD_SESSIONS];
        let mut reports = 0;
        // Kill it at a different point each round, while all its writers are busy.
        while reports < 150 + round * 97 {
            let line = lines.next().expect("the child reports commits").unwrap();
            if let Some(rest) = line.strip_prefix("committed ") {
                let (session, head) = rest.split_once(' ').unwrap();
                committed[session.parse::<usize>().unwrap()] = head.parse().unwrap();
                reports += 1;
            }
        }
        process.kill().unwrap();
        process.wait().unwrap();
        for line in lines.map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("committed ") {
                let (session, head) = rest.split_once(' ').unwrap();
                committed[session.parse::<usize>().unwrap()] = head.parse().unwrap();
            }
        }

        let store = SqliteStore::open(&database).expect("the killed process's lock is gone");
        for (session, reported) in committed.iter().enumerate() {
            let id = format!("s{session}");
            let head = store.session(&id).await.unwrap().unwrap().head_seq;
            assert!(
                head >= *reported,
                "round {round}: session {id} reported {reported} committed, the file has {head}"
            );
            let stored = store.read(&id, 0, usize::MAX).await.unwrap();
            let expected: Vec<_> = (1..=head).map(|seq| child_event(session, seq)).collect();
            assert_eq!(stored, expected, "round {round}: session {id}");
        }
        drop(store);
        // The next round's child starts from a fresh session set.
        std::fs::remove_file(&database).unwrap();
        let _ = std::fs::remove_file(folder.path().join("qilin.db-wal"));
        let _ = std::fs::remove_file(folder.path().join("qilin.db-shm"));
    }
}

/// A second store on the same file, in this process or in another, is refused with the pid of
/// the process that has it.
#[tokio::test]
async fn a_second_process_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    let pid = std::process::id().to_string();

    let err = SqliteStore::open(&database)
        .err()
        .expect("a second store is refused");
    let message = err.to_string();
    assert!(matches!(err, StoreError::InUse { .. }), "{message}");
    assert!(
        message.contains("is in use by another Qilin process") && message.contains(&pid),
        "{message}"
    );

    let output = child("open", &database).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find(|line| line.starts_with("error: ") || *line == "opened")
        .unwrap_or_else(|| panic!("the child said nothing: {stdout}"));
    assert_eq!(
        line,
        format!(
            "error: {} is in use by another Qilin process (pid {pid}); stop it, or use another database",
            database.display()
        )
    );

    // Once the first store is closed the file is free again.
    drop(store);
    let output = child("open", &database).wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("opened"));
}

fn shared() -> SqliteOptions {
    SqliteOptions {
        shared: true,
        ..SqliteOptions::default()
    }
}

/// Terminal sessions of one workspace share its database: each process writes its own
/// sessions and sees the others'; a process that holds it alone is refused meanwhile, and the
/// other way round.
#[tokio::test]
async fn processes_that_share_the_database_each_write_their_sessions() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open_with(&database, shared()).unwrap();
    store
        .create_session(new_session("parent", "/w", 0))
        .await
        .unwrap();
    let output = child("share", &database).wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("shared 20"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(store.read("child", 0, 100).await.unwrap().len(), 20);
    let events: Vec<_> = (1..=3).map(|seq| child_event(1, seq)).collect();
    assert_eq!(store.append("parent", &events).await.unwrap(), 3);
    assert!(matches!(
        SqliteStore::open(&database).err(),
        Some(StoreError::InUse { .. })
    ));
    drop(store);
    let alone = SqliteStore::open(&database).unwrap();
    let output = child("share", &database).wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("is in use by another Qilin process"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    drop(alone);
}

/// Everything written is there after the store is closed and opened again.
#[tokio::test]
async fn a_reopened_store_has_everything() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("nested/folder/qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    store
        .append(
            "s",
            &[
                event(1, 0, turn_started("t", "Reopen me")),
                event(2, 0, request_opened("r", "c")),
            ],
        )
        .await
        .unwrap();
    store.append("s", &events(3, 50)).await.unwrap();
    let before = store.session("s").await.unwrap().unwrap();
    let log = store.read("s", 0, 100).await.unwrap();
    drop(store);

    let store = SqliteStore::open(&database).unwrap();
    assert_eq!(store.session("s").await.unwrap().unwrap(), before);
    assert_eq!(store.read("s", 0, 100).await.unwrap(), log);
    assert_eq!(store.open_requests("s").await.unwrap().len(), 1);
    assert_eq!(store.running_sessions().await.unwrap(), [before]);
}

/// While another connection holds the write lock, appends fail as busy and store nothing;
/// once it lets go, the store goes on.
#[tokio::test]
async fn followers_get_the_stored_json_and_a_damaged_event_is_reported_not_passed_on() {
    use futures_util::StreamExt;
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let stored = events(1, 3);
    store.append("s", &stored).await.unwrap();
    let got: Vec<_> = store.follow_json("s", 0).take(3).collect().await;
    for (event, expected) in got.iter().zip(&stored) {
        let event = event.as_ref().unwrap();
        assert_eq!(event.seq, expected.seq);
        let decoded: qilin_protocol::Event = serde_json::from_str(&event.json).unwrap();
        assert_eq!(&decoded, expected);
    }

    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.execute("UPDATE events SET data = '{\"seq\": 3,' WHERE seq = 3", [])
        .unwrap();
    let got: Vec<_> = store.follow_json("s", 0).collect().await;
    assert_eq!(got.len(), 1, "the follower stops at the error");
    let err = got[0].as_ref().unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("event 3"), "{err}");
}

#[tokio::test]
async fn a_locked_database_is_busy_then_usable() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let options = SqliteOptions {
        busy_timeout: Duration::from_millis(200),
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(&database, options).unwrap();
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    store.append("s", &events(1, 3)).await.unwrap();

    let intruder = rusqlite::Connection::open(&database).unwrap();
    intruder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let err = store.append("s", &events(4, 6)).await.unwrap_err();
    assert!(matches!(err, StoreError::Busy(_)), "{err}");
    assert!(err.to_string().contains("locked"), "{err}");
    let err = store
        .create_session(new_session("t", "/w", 0))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Busy(_)), "{err}");
    // Reads still work while it is locked (write-ahead log).
    assert_eq!(store.read("s", 0, 10).await.unwrap(), events(1, 3));
    intruder.execute_batch("COMMIT").unwrap();
    drop(intruder);

    assert_eq!(store.session("s").await.unwrap().unwrap().head_seq, 3);
    assert_eq!(store.append("s", &events(4, 6)).await.unwrap(), 6);
    assert_eq!(store.read("s", 0, 10).await.unwrap(), events(1, 6));
}

/// A database at its size limit refuses appends as full, stores nothing of them, keeps
/// serving reads and followers, and takes appends again once there is room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_database_is_full_then_usable() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let options = SqliteOptions {
        max_size_bytes: Some(256 * 1024),
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(&database, options).unwrap();
    store
        .create_session(new_session("filler", "/w", 0))
        .await
        .unwrap();
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    store.append("s", &events(1, 2)).await.unwrap();
    let mut follower = store.follow("s", 0);
    assert_eq!(take(&mut follower, 2).await, events(1, 2));

    let big = "x".repeat(16 * 1024);
    let mut head = 0;
    let full = loop {
        let batch = [event(head + 1, 0, text(&big))];
        match store.append("filler", &batch).await {
            Ok(new_head) => head = new_head,
            Err(err) => break err,
        }
        assert!(head < 100, "the size limit never bit");
    };
    assert!(matches!(full, StoreError::Full(_)), "{full}");
    assert!(full.to_string().contains("full"), "{full}");
    assert_eq!(
        store.session("filler").await.unwrap().unwrap().head_seq,
        head
    );
    let err = store
        .append("s", &[event(3, 0, text(&big))])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Full(_)), "{err}");
    assert_eq!(store.read("s", 0, 10).await.unwrap(), events(1, 2));

    // Room again: the filler goes, and the same append now commits and reaches the follower.
    store.delete_session("filler").await.unwrap();
    let batch = [event(3, 0, text(&big))];
    assert_eq!(store.append("s", &batch).await.unwrap(), 3);
    assert_eq!(take(&mut follower, 1).await, batch);
}

/// A file written by a newer Qilin is refused with a message saying so.
#[test]
fn a_newer_schema_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    drop(SqliteStore::open(&database).unwrap());
    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.pragma_update(None, "user_version", 99).unwrap();
    drop(raw);
    let err = SqliteStore::open(&database).err().expect("refused");
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("schema version 99") && message.contains("upgrade Qilin"),
        "{message}"
    );
    // Refusing it released the lock: the file at this binary's version opens again.
    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.pragma_update(None, "user_version", 7).unwrap();
    drop(raw);
    SqliteStore::open(&database).unwrap();
}

/// A database from before the search index (schema version 1) is indexed when opened: what
/// it stored is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_from_before_the_index_is_indexed_when_opened() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    searchable_sessions(&store).await;
    drop(store);
    // What version 1 had: no search index (no index file either), no parent links.
    remove_index_file(&database);
    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.execute_batch(
        "DROP TABLE store_identity;
         DROP TABLE schedules; DROP TABLE schedule_runs;
         DROP INDEX sessions_by_parent; DROP INDEX events_loop_and_workflow_runs;
         ALTER TABLE sessions DROP COLUMN parent_session_id;
         ALTER TABLE sessions DROP COLUMN parent_call_id;
         PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(raw);
    let store = SqliteStore::open(&database).unwrap();
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
    // New appends are indexed as before.
    store
        .append("b", &[event(3, 0, turn_started("t2", "another prompt"))])
        .await
        .unwrap();
    let another = store
        .search(&SearchQuery {
            text: "another".into(),
            ..SearchQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(another.hits.len(), 1);
    assert_eq!(another.hits[0].turn, Some(2));
    assert!(
        another.hits[0].snippet.contains("«another»"),
        "{another:#?}"
    );
    // The index built from the log forgets a deleted session as a new one does.
    store.delete_session("b").await.unwrap();
    for text in ["another", "retry logic"] {
        let left = store
            .search(&SearchQuery {
                text: text.into(),
                ..SearchQuery::default()
            })
            .await
            .unwrap();
        assert!(left.hits.iter().all(|hit| hit.session == "a"), "{left:#?}");
    }
    drop(store);
    assert_eq!(search_tables(&database), 0, "the index is in its own file");
    let raw = rusqlite::Connection::open(index_file(&database)).unwrap();
    let tables: i64 = raw
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'search_text%content'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(tables, 0, "the index keeps no copy of the text");
}

/// A database from before child sessions (schema version 2) opens and works: its sessions are
/// top-level, and children can be created and listed under them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_from_before_child_sessions_opens_and_works() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    searchable_sessions(&store).await;
    drop(store);
    // What version 2 had: the search index in the database, no parent links.
    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.execute_batch(VERSION_2_INDEX).unwrap();
    raw.execute_batch(
        "DROP TABLE store_identity;
         DROP TABLE schedules; DROP TABLE schedule_runs;
         DROP INDEX sessions_by_parent; DROP INDEX events_loop_and_workflow_runs;
         ALTER TABLE sessions DROP COLUMN parent_session_id;
         ALTER TABLE sessions DROP COLUMN parent_call_id;
         PRAGMA user_version = 2;",
    )
    .unwrap();
    drop(raw);
    let store = SqliteStore::open(&database).unwrap();
    let old = store.session("a").await.unwrap().unwrap();
    assert_eq!((old.parent_session_id, old.parent_call_id), (None, None));
    assert!(old.head_seq > 0, "its events are kept");
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
    let top = store
        .list_sessions(&qilin_store::SessionQuery {
            limit: 10,
            parent: qilin_store::ParentFilter::TopLevel,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut ids: Vec<&str> = top.sessions.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["a", "b"]);
    let raw = rusqlite::Connection::open(&database).unwrap();
    let version: i64 = raw
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, 7);
    assert_eq!(search_tables(&database), 0);
}

/// A file that is not a database is an error naming it, not a panic.
#[test]
fn a_file_that_is_not_a_database_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    std::fs::write(
        &database,
        "this is not a database, it is a note\n".repeat(200),
    )
    .unwrap();
    let err = SqliteStore::open(&database).err().expect("refused");
    let message = err.to_string();
    assert!(
        message.contains(&database.display().to_string()),
        "{message}"
    );
    assert!(message.contains("not a database"), "{message}");
}

/// `open_database` picks the store a `--database` value names.
#[tokio::test]
async fn open_database_reads_the_database_value() {
    let folder = tempfile::tempdir().unwrap();
    let workspace = folder.path();
    let store = qilin_store::open_database(None, workspace).await.unwrap();
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    drop(store);
    assert!(workspace.join(".qilin/qilin.db").exists());

    let named = workspace.join("named.db");
    let store = qilin_store::open_database(Some(&format!("sqlite:{}", named.display())), workspace)
        .await
        .unwrap();
    assert_eq!(store.session("s").await.unwrap(), None);
    drop(store);
    assert!(named.exists());

    let err = qilin_store::open_database(Some("mysql://x"), workspace)
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("postgres://"), "{err}");
}

/// The permission bits of `path`, in octal.
fn mode_of(path: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    format!(
        "{:o}",
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    )
}

/// The database, its folder, log, index and lock are the user's alone, whatever the umask
/// lets other files be: they hold every prompt, file read and output.
#[tokio::test]
async fn a_new_database_and_its_folder_are_readable_by_their_owner_alone() {
    let workspace = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_workspace(workspace.path()).unwrap();
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    store.append("s", &events(1, 20)).await.unwrap();
    let database = workspace.path().join(".qilin/qilin.db");
    let files = ["qilin.db", "qilin.db-wal", "qilin.db-shm", "qilin.db.lock"];
    for name in files {
        let path = database.with_file_name(name);
        assert_eq!(mode_of(&path), "600", "{name}");
    }
    assert_eq!(mode_of(database.parent().unwrap()), "700");
    drop(store);
}

/// A database an older Qilin left readable by everyone is made the user's alone when opened,
/// its log and index with it.
#[tokio::test]
async fn an_existing_readable_database_is_made_private_when_opened() {
    use std::os::unix::fs::PermissionsExt;
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    store.append("s", &events(1, 20)).await.unwrap();
    drop(store);
    let mut names = vec!["qilin.db", "qilin.db.lock"];
    // A closed database may have folded its log back; make both files as an older Qilin would.
    for name in ["qilin.db-wal", "qilin.db-shm"] {
        let path = database.with_file_name(name);
        if !path.exists() {
            std::fs::write(&path, b"").unwrap();
        }
        names.push(name);
    }
    for name in &names {
        let path = database.with_file_name(name);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    let store = SqliteStore::open(&database).unwrap();
    for name in &names {
        assert_eq!(mode_of(&database.with_file_name(name)), "600", "{name}");
    }
    assert_eq!(store.read("s", 0, 100).await.unwrap().len(), 20);
}

/// A step's text is indexed whole when the writer did not see all of it (the store reopened
/// while the step streamed: its text is read back from the events), and a refused append
/// between a step's pieces leaves nothing of its own in the index.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_written_across_a_reopening_is_indexed_whole() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    store
        .create_session(new_session("a", "/work/a", 1))
        .await
        .unwrap();
    store
        .append(
            "a",
            &[
                event(1, 0, turn_started("t1", "look")),
                event(2, 0, step_started("t1", 1)),
                event(3, 0, text("the quokka ")),
            ],
        )
        .await
        .unwrap();
    drop(store);
    let store = SqliteStore::open(&database).unwrap();
    store
        .append(
            "a",
            &[
                event(4, 0, text("crossed the fjord")),
                event(5, 0, step_finished("t1", 1)),
                event(6, 0, step_started("t1", 2)),
                event(7, 0, text("a second zanzibar ")),
            ],
        )
        .await
        .unwrap();
    // Refused: its `seq` does not follow the head.
    let refused = store
        .append("a", &[event(9, 0, text("never stored"))])
        .await
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::SeqConflict { .. }),
        "{refused}"
    );
    store
        .append(
            "a",
            &[
                event(8, 0, text("step ended")),
                event(9, 0, step_finished("t1", 2)),
            ],
        )
        .await
        .unwrap();
    let found = |text: &str| {
        let store = &store;
        let text = text.to_string();
        async move {
            store
                .search(&SearchQuery {
                    text,
                    ..SearchQuery::default()
                })
                .await
                .unwrap()
                .hits
        }
    };
    let first = found("quokka fjord").await;
    assert_eq!(first.len(), 1, "{first:#?}");
    assert_eq!(first[0].seq, 3);
    assert!(first[0].snippet.contains("«quokka»"), "{first:#?}");
    let second = found("zanzibar ended").await;
    assert_eq!(second.len(), 1, "{second:#?}");
    assert_eq!(second[0].seq, 7);
    assert!(found("never").await.is_empty());
}

/// Two processes never judge each other's scheduled runs on one SQLite file: a store held
/// alone refuses every other process (above), and a store opened shared — whose session
/// leases live in each process, unseen by the others — refuses to claim fires or to end runs
/// as abandoned, saying why and what to do instead.
#[tokio::test]
async fn a_shared_store_refuses_the_scheduler() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open_with(&database, shared()).unwrap();
    let now = chrono::Utc::now();
    let claim = store
        .claim_due(
            now,
            "p1",
            chrono::Duration::seconds(30),
            std::time::Duration::from_secs(30),
        )
        .await
        .unwrap_err();
    let message = claim.to_string();
    assert!(matches!(claim, StoreError::Config(_)), "{message}");
    assert!(
        message.contains("opened shared") && message.contains("qilin serve"),
        "{message}"
    );
    let judge = store
        .interrupt_abandoned_runs("p1", now, now)
        .await
        .unwrap_err();
    assert!(
        judge.to_string().contains("cannot claim or judge"),
        "{judge}"
    );
    drop(store);
    let alone = SqliteStore::open(&database).unwrap();
    assert!(
        alone
            .claim_due(
                now,
                "p1",
                chrono::Duration::seconds(30),
                std::time::Duration::from_secs(30),
            )
            .await
            .unwrap()
            .is_empty()
    );
}

/// The search index's tables as schema version 2 created them in the database.
const VERSION_2_INDEX: &str = "
    CREATE TABLE search_docs (
        id INTEGER PRIMARY KEY,
        session INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        turn INTEGER,
        call_id TEXT,
        field TEXT NOT NULL,
        time TEXT NOT NULL
    );
    CREATE INDEX search_docs_by_session ON search_docs (session);
    CREATE VIRTUAL TABLE search_text USING fts5 (body, tokenize = 'unicode61');
    CREATE TABLE search_calls (
        session INTEGER NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        status TEXT,
        PRIMARY KEY (session, call_id)
    ) WITHOUT ROWID;";

/// The search index's file beside `database`.
fn index_file(database: &Path) -> std::path::PathBuf {
    let mut name = database.as_os_str().to_os_string();
    name.push(".search");
    name.into()
}

/// Removes the search index's file (and its log) beside `database`.
fn remove_index_file(database: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = index_file(database).into_os_string();
        name.push(suffix);
        let _ = std::fs::remove_file(name);
    }
}

/// How many search tables the database itself holds.
fn search_tables(database: &Path) -> i64 {
    rusqlite::Connection::open(database)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'search%'",
            [],
            |row| row.get(0),
        )
        .unwrap()
}

/// A document of the index: its session's id, `seq`, turn, call and field.
type IndexRow = (String, i64, Option<i64>, Option<String>, String);

/// Every document in the index of the (closed) store at `database`, in order (a session no
/// longer in the log named `(deleted)`), after checking that the FTS5 table holds one row per
/// document.
fn index_rows(database: &Path) -> Vec<IndexRow> {
    let raw = rusqlite::Connection::open(index_file(database)).unwrap();
    raw.execute("ATTACH DATABASE ?1 AS log", [database.to_str().unwrap()])
        .unwrap();
    let rows: Vec<IndexRow> = raw
        .prepare(
            "SELECT coalesce(s.id, '(deleted)'), d.seq, d.turn, d.call_id, d.field
             FROM search_docs d LEFT JOIN log.sessions s ON s.key = d.session
             ORDER BY 1, 2, 5",
        )
        .unwrap()
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
            ))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let (docs, texts): (i64, i64) = raw
        .query_row(
            "SELECT (SELECT count(*) FROM search_docs), (SELECT count(*) FROM search_text)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(docs, texts, "one FTS5 row per document");
    rows
}

/// The index of [`searchable_sessions`] written as the appends came, for comparison.
async fn reference_rows() -> Vec<IndexRow> {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    searchable_sessions(&store).await;
    drop(store);
    let rows = index_rows(&database);
    assert!(rows.len() > 10, "{rows:#?}");
    rows
}

/// The hits of `text` as (session, seq) pairs.
async fn hits(store: &SqliteStore, text: &str) -> Vec<(String, u64)> {
    store
        .search(&SearchQuery {
            text: text.into(),
            ..SearchQuery::default()
        })
        .await
        .unwrap()
        .hits
        .into_iter()
        .map(|hit| (hit.session, hit.seq))
        .collect()
}

/// A database from when the index was in its own tables of the database (schema version 5) is
/// migrated: those tables go, and its index file is built from the log; what the old tables held
/// and the log does not is never found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_with_the_index_inside_is_migrated_and_searchable() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    searchable_sessions(&store).await;
    drop(store);
    remove_index_file(&database);
    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.execute_batch(
        "DROP TABLE store_identity; DROP INDEX events_loop_and_workflow_runs;
         CREATE TABLE search_docs (
             id INTEGER PRIMARY KEY, session INTEGER NOT NULL, seq INTEGER NOT NULL,
             turn INTEGER, call_id TEXT, field TEXT NOT NULL, time TEXT NOT NULL
         );
         CREATE INDEX search_docs_by_session ON search_docs (session);
         CREATE VIRTUAL TABLE search_text USING fts5 (
             body, tokenize = 'unicode61', content = '', contentless_delete = 1
         );
         CREATE TABLE search_calls (
             session INTEGER NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL, status TEXT,
             PRIMARY KEY (session, call_id)
         ) WITHOUT ROWID;
         INSERT INTO search_docs VALUES (1, 1, 1, 1, NULL, 'prompt', '2026-12-01T00:00:00.000Z');
         INSERT INTO search_text (rowid, body) VALUES (1, 'stale platypus');
         PRAGMA user_version = 5;",
    )
    .unwrap();
    drop(raw);
    let store = SqliteStore::open(&database).unwrap();
    let found = hits(&store, "retry logic").await;
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(hits(&store, "重试").await.len(), 2);
    assert!(hits(&store, "platypus").await.is_empty());
    drop(store);
    assert_eq!(search_tables(&database), 0);
    let version: i64 = rusqlite::Connection::open(&database)
        .unwrap()
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, 7);
    assert_eq!(index_rows(&database), reference_rows().await);
}

/// A deleted index file is built again from the log; a damaged one is moved aside (kept, not
/// deleted) and built again; an index file of another database (the database deleted and made
/// again beside it) is emptied and built again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_damaged_or_foreign_index_file_is_rebuilt() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let store = SqliteStore::open(&database).unwrap();
    searchable_sessions(&store).await;
    drop(store);
    let reference = reference_rows().await;
    assert_eq!(index_rows(&database), reference);

    remove_index_file(&database);
    let store = SqliteStore::open(&database).unwrap();
    assert_eq!(hits(&store, "retry logic").await.len(), 3);
    drop(store);
    assert_eq!(index_rows(&database), reference);

    remove_index_file(&database);
    std::fs::write(index_file(&database), "not an index at all\n".repeat(500)).unwrap();
    let store = SqliteStore::open(&database).unwrap();
    assert_eq!(hits(&store, "retry logic").await.len(), 3);
    drop(store);
    assert_eq!(index_rows(&database), reference);
    let aside: Vec<String> = std::fs::read_dir(folder.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("qilin.db.search.damaged-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    let kept = std::fs::read_to_string(folder.path().join(&aside[0])).unwrap();
    assert!(kept.starts_with("not an index at all"));
    assert_eq!(
        mode_of(&index_file(&database)),
        "600",
        "the new index is private"
    );

    // A new database beside the old index: its sessions have the same ids and keys, but the
    // index is not theirs.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(folder.path().join(format!("qilin.db{suffix}")));
    }
    let store = SqliteStore::open(&database).unwrap();
    store
        .create_session(new_session("a", "/work/a", 1))
        .await
        .unwrap();
    store
        .append("a", &[event(1, 0, turn_started("t1", "a fresh wombat"))])
        .await
        .unwrap();
    assert!(hits(&store, "retry").await.is_empty());
    assert_eq!(hits(&store, "wombat").await, [("a".to_string(), 1)]);
    drop(store);
    assert_eq!(index_rows(&database).len(), 1);
}

/// A store whose index lags its log (events committed while no indexer ran, as after a crash
/// between an append's commit and its indexing; a session deleted meanwhile) catches up when
/// opened: every event indexed once, the deleted session's rows gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_behind_the_log_catches_up_once() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let without_indexer = SqliteOptions {
        search_index: false,
        ..SqliteOptions::default()
    };
    // Indexed: a session later deleted, and the first event of session a.
    let store = SqliteStore::open(&database).unwrap();
    store
        .create_session(new_session("gone", "/work/gone", 0))
        .await
        .unwrap();
    store
        .append(
            "gone",
            &[event(1, 0, turn_started("t1", "the retry logic"))],
        )
        .await
        .unwrap();
    store
        .create_session(new_session("a", "/work/a", 1))
        .await
        .unwrap();
    store
        .append(
            "a",
            &[event(
                1,
                0,
                turn_started("t1", "Where did we change the retry logic?"),
            )],
        )
        .await
        .unwrap();
    assert_eq!(hits(&store, "retry logic").await.len(), 2);
    drop(store);
    let indexed = index_rows(&database);
    assert_eq!(indexed.len(), 2, "{indexed:#?}");

    // Not indexed: the rest, and the deletion.
    let store = SqliteStore::open_with(&database, without_indexer.clone()).unwrap();
    store.delete_session("gone").await.unwrap();
    drop(store);
    // `searchable_sessions` creates a (there already) and appends its first event again:
    // the rest of it, as it appends it, by hand.
    let store = SqliteStore::open_with(&database, without_indexer).unwrap();
    let reference_store = {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("qilin.db");
        let full = SqliteStore::open(&path).unwrap();
        searchable_sessions(&full).await;
        let mut logs = Vec::new();
        for id in ["a", "b"] {
            logs.push((id, full.read(id, 0, usize::MAX).await.unwrap()));
        }
        logs
    };
    store
        .create_session({
            let mut reviewer = new_session("b", "/work/b", 2);
            reviewer.agent = "reviewer".into();
            reviewer
        })
        .await
        .unwrap();
    for (id, log) in &reference_store {
        let from = if *id == "a" { 1 } else { 0 };
        for chunk in log[from..].chunks(3) {
            store.append(id, chunk).await.unwrap();
        }
    }
    drop(store);
    let meanwhile: Vec<(String, i64)> = index_rows(&database)
        .into_iter()
        .map(|row| (row.0, row.1))
        .collect();
    assert_eq!(
        meanwhile,
        [("(deleted)".to_string(), 1), ("a".to_string(), 1)],
        "nothing indexed meanwhile"
    );

    let store = SqliteStore::open(&database).unwrap();
    let found = hits(&store, "retry logic").await;
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found.iter().all(|(session, _)| session != "gone"));
    drop(store);
    assert_eq!(index_rows(&database), reference_rows().await);
    // Opened again, nothing is left to do and nothing is added.
    drop(SqliteStore::open(&database).unwrap());
    assert_eq!(index_rows(&database), reference_rows().await);
}

/// Two stores sharing one database (as two processes do), each appending to its sessions and
/// searching: each finds the other's appends, and each event is indexed once although both
/// indexers follow the same log; a deleted session leaves no index rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_stores_index_each_event_once() {
    let folder = tempfile::tempdir().unwrap();
    let database = folder.path().join("qilin.db");
    let first = Arc::new(SqliteStore::open_with(&database, shared()).unwrap());
    let second = Arc::new(SqliteStore::open_with(&database, shared()).unwrap());
    const PER_STORE: usize = 4;
    const EVENTS: u64 = 60;
    let mut tasks = Vec::new();
    for (which, store) in [&first, &second].into_iter().enumerate() {
        for n in 0..PER_STORE {
            let store = Arc::clone(store);
            tasks.push(tokio::spawn(async move {
                let id = format!("s{which}{n}");
                store
                    .create_session(new_session(&id, "/w", 0))
                    .await
                    .unwrap();
                for seq in 1..=EVENTS {
                    let word = format!("word{which}x{n}x{seq}");
                    store
                        .append(&id, &[event(seq, 0, turn_started("t", &word))])
                        .await
                        .unwrap();
                    if seq % 15 == 0 {
                        // Its own append is found at once, whatever the other indexer does.
                        let found = store
                            .search(&SearchQuery {
                                text: word.clone(),
                                ..SearchQuery::default()
                            })
                            .await
                            .unwrap();
                        assert_eq!(found.hits.len(), 1, "{word}");
                    }
                }
            }));
        }
    }
    for task in tasks {
        task.await.unwrap();
    }
    for (which, store) in [&first, &second].into_iter().enumerate() {
        for n in 0..PER_STORE {
            let other = format!("word{}x{n}x{EVENTS}", 1 - which);
            let found = store
                .search(&SearchQuery {
                    text: other.clone(),
                    ..SearchQuery::default()
                })
                .await
                .unwrap();
            assert_eq!(found.hits.len(), 1, "{other}");
        }
    }
    first.delete_session("s00").await.unwrap();
    assert!(
        second
            .search(&SearchQuery {
                text: "word0x0x1".into(),
                ..SearchQuery::default()
            })
            .await
            .unwrap()
            .hits
            .is_empty()
    );
    drop(first);
    drop(second);
    let rows = index_rows(&database);
    assert_eq!(rows.len(), (2 * PER_STORE - 1) * EVENTS as usize);
    let mut places: Vec<(String, i64)> = rows.into_iter().map(|row| (row.0, row.1)).collect();
    places.dedup();
    assert_eq!(places.len(), (2 * PER_STORE - 1) * EVENTS as usize);
    assert!(
        places
            .iter()
            .all(|(session, _)| session != "s00" && session != "(deleted)")
    );
}
