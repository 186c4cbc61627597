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
    raw.pragma_update(None, "user_version", 6).unwrap();
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
    // What version 1 had: no search tables, no parent links.
    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.execute_batch(
        "DROP TABLE search_docs; DROP TABLE search_text; DROP TABLE search_calls;
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
    // The index the migrations built (its text copied out, version 5) forgets a deleted
    // session as a new one does.
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
    let raw = rusqlite::Connection::open(&database).unwrap();
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
    // What version 2 had: no parent links.
    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.execute_batch(
        "DROP TABLE schedules; DROP TABLE schedule_runs;
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
    assert_eq!(version, 6);
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
