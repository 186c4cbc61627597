//! The contract of `EventStore`, one function per behaviour; [`conformance!`] runs each against
//! a store.

pub use crate::schedules::*;
use crate::support::*;
use futures_util::StreamExt;
use qilin_protocol::CallStatus;
use qilin_protocol::{Event, EventBody};
use qilin_store::{
    EventStore, HitField, Lease, NewSession, ParentFilter, SearchHit, SearchQuery, SessionQuery,
    SessionStatus, StoreError, TITLE_CHARS, title_from_prompt,
};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// Writes one test per conformance case, each on a fresh store from `$open` (an async fn
/// returning a [`Harness`](crate::support::Harness)).
macro_rules! conformance {
    ($open:path; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let harness = $open().await;
                crate::conformance::$case(std::sync::Arc::clone(&harness.store)).await;
                harness.finish().await;
            }
        )*
    };
    ($open:path) => {
        conformance!($open;
            sessions_are_created_and_read,
            sessions_list_newest_first_in_pages_with_filters,
            sessions_are_renamed_and_deleted,
            children_are_linked_to_their_parent_and_listed_apart,
            appends_are_gapless,
            positions_past_any_log_are_refused_calmly,
            concurrent_appends_are_refused_alone,
            racing_appends_to_one_session_commit_once,
            events_are_read_back_exactly,
            followers_get_every_event_once_from_any_point,
            a_dropped_follower_resumes_where_it_stopped,
            a_lagging_follower_is_caught_up_from_storage,
            followers_of_a_deleted_session_end,
            following_an_unknown_session_fails,
            derived_rows_follow_the_events,
            open_requests_are_the_unanswered_ones,
            running_sessions_are_those_mid_turn,
            sessions_with_running_loops_or_workflows_are_found,
            leases_have_one_owner_and_expire,
            search_finds_every_kind_of_text,
            search_ranks_the_exact_phrase_first,
            search_filters_and_pages,
            search_finds_chinese_text,
            search_forgets_deleted_sessions,
            search_takes_hostile_queries_literally,
            schedules_are_created_listed_and_deleted,
            a_due_fire_is_claimed_once,
            missed_fires_follow_catch_up,
            one_shots_finish_and_stopped_runs_are_interrupted,
            racing_claims_take_each_fire_once,
            a_this_session_fire_goes_to_the_session_owner,
        );
    };
}

/// A session is read back as created; ids are unique.
pub async fn sessions_are_created_and_read(store: Arc<dyn EventStore>) {
    let created = store
        .create_session(new_session("s1", "/work/a", 5))
        .await
        .unwrap();
    assert_eq!(created.head_seq, 0);
    assert_eq!(created.status, SessionStatus::Idle);
    assert_eq!(created.last_activity, time(5));
    assert_eq!(store.session("s1").await.unwrap(), Some(created));
    assert_eq!(store.session("nope").await.unwrap(), None);
    let duplicate = store
        .create_session(new_session("s1", "/work/b", 6))
        .await
        .unwrap_err();
    assert!(
        matches!(&duplicate, StoreError::DuplicateSession(id) if id == "s1"),
        "{duplicate}"
    );
    assert_eq!(
        store.session("s1").await.unwrap().unwrap().workspace,
        "/work/a"
    );
}

/// Listing: newest activity first, a page at a time, by workspace and by title.
pub async fn sessions_list_newest_first_in_pages_with_filters(store: Arc<dyn EventStore>) {
    let prompts = [
        "Fix the Übung parser",
        "write docs",
        "fix CI",
        "Refactor",
        "übung two",
        "plain",
        "Seventh",
    ];
    for (n, prompt) in prompts.iter().enumerate() {
        let n = n as u64;
        let id = format!("s{n}");
        let workspace = if n.is_multiple_of(2) {
            "/work/even"
        } else {
            "/work/odd"
        };
        store
            .create_session(new_session(&id, workspace, n))
            .await
            .unwrap();
        // Activity in an order unlike creation: s3 is the most recent, s0 the oldest.
        let activity = [10, 60, 30, 70, 20, 50, 40][n as usize];
        store
            .append(&id, &[event(1, activity, turn_started("t1", prompt))])
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut query = SessionQuery {
        limit: 3,
        ..SessionQuery::default()
    };
    let mut pages = 0;
    loop {
        let page = store.list_sessions(&query).await.unwrap();
        assert!(page.sessions.len() <= 3);
        pages += 1;
        seen.extend(page.sessions.iter().map(|info| info.id.clone()));
        match page.next {
            Some(next) => query.after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["s3", "s1", "s5", "s6", "s2", "s4", "s0"]);
    assert_eq!(pages, 3);

    let even = store
        .list_sessions(&SessionQuery {
            workspace: Some("/work/even".into()),
            limit: 10,
            ..SessionQuery::default()
        })
        .await
        .unwrap();
    let even: Vec<&str> = even.sessions.iter().map(|info| info.id.as_str()).collect();
    assert_eq!(even, ["s6", "s2", "s4", "s0"]);

    let ubung = store
        .list_sessions(&SessionQuery {
            title_contains: Some("ÜBUNG".into()),
            limit: 10,
            ..SessionQuery::default()
        })
        .await
        .unwrap();
    let ubung: Vec<&str> = ubung.sessions.iter().map(|info| info.id.as_str()).collect();
    assert_eq!(ubung, ["s4", "s0"]);

    let fix_even = store
        .list_sessions(&SessionQuery {
            workspace: Some("/work/even".into()),
            title_contains: Some("fix".into()),
            limit: 1,
            ..SessionQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(fix_even.sessions.len(), 1);
    assert_eq!(fix_even.sessions[0].id, "s2");
    let rest = store
        .list_sessions(&SessionQuery {
            workspace: Some("/work/even".into()),
            title_contains: Some("fix".into()),
            limit: 1,
            after: fix_even.next,
            parent: ParentFilter::Any,
        })
        .await
        .unwrap();
    assert_eq!(rest.sessions[0].id, "s0");
    assert_eq!(rest.next, None);

    let bad = store
        .list_sessions(&SessionQuery {
            after: Some("not a cursor".into()),
            limit: 3,
            ..SessionQuery::default()
        })
        .await
        .unwrap_err();
    assert!(matches!(bad, StoreError::InvalidCursor(_)), "{bad}");
}

/// A child session keeps its parent's id and call; a listing holds every session, only the
/// top-level ones, or one session's children.
pub async fn children_are_linked_to_their_parent_and_listed_apart(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("p", "/w", 1))
        .await
        .unwrap();
    store
        .create_session(new_session("other", "/w", 2))
        .await
        .unwrap();
    for (id, call, tick) in [("c1", "call-1", 3), ("c2", "code-2", 4)] {
        let created = store
            .create_session(NewSession {
                parent_session_id: Some("p".into()),
                parent_call_id: Some(call.into()),
                ..new_session(id, "/w", tick)
            })
            .await
            .unwrap();
        assert_eq!(created.parent_session_id.as_deref(), Some("p"));
        assert_eq!(created.parent_call_id.as_deref(), Some(call));
    }
    let read = store.session("c2").await.unwrap().unwrap();
    assert_eq!(
        (
            read.parent_session_id.as_deref(),
            read.parent_call_id.as_deref()
        ),
        (Some("p"), Some("code-2"))
    );
    let top = store.session("p").await.unwrap().unwrap();
    assert_eq!((top.parent_session_id, top.parent_call_id), (None, None));

    let ids = |filter: ParentFilter| {
        let store = Arc::clone(&store);
        async move {
            let page = store
                .list_sessions(&SessionQuery {
                    limit: 10,
                    parent: filter,
                    ..SessionQuery::default()
                })
                .await
                .unwrap();
            let mut ids: Vec<String> = page.sessions.into_iter().map(|info| info.id).collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(ids(ParentFilter::Any).await, ["c1", "c2", "other", "p"]);
    assert_eq!(ids(ParentFilter::TopLevel).await, ["other", "p"]);
    assert_eq!(
        ids(ParentFilter::ChildrenOf("p".into())).await,
        ["c1", "c2"]
    );
    assert!(
        ids(ParentFilter::ChildrenOf("other".into()))
            .await
            .is_empty()
    );
}

/// A rename sticks (a later prompt does not replace it); a delete removes everything.
pub async fn sessions_are_renamed_and_deleted(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s1", "/w", 1))
        .await
        .unwrap();
    store
        .create_session(new_session("s2", "/w", 2))
        .await
        .unwrap();
    store.rename_session("s1", "My session").await.unwrap();
    store
        .append("s1", &[event(1, 0, turn_started("t1", "a prompt"))])
        .await
        .unwrap();
    let s1 = store.session("s1").await.unwrap().unwrap();
    assert_eq!(s1.title.as_deref(), Some("My session"));
    let unknown = store.rename_session("nope", "x").await.unwrap_err();
    assert!(
        matches!(unknown, StoreError::UnknownSession(_)),
        "{unknown}"
    );

    store
        .append(
            "s1",
            &[
                event(2, 0, request_opened("r1", "c1")),
                event(3, 0, turn_finished("t1")),
            ],
        )
        .await
        .unwrap();
    store.delete_session("s1").await.unwrap();
    assert_eq!(store.session("s1").await.unwrap(), None);
    let listed = store
        .list_sessions(&SessionQuery {
            limit: 10,
            ..SessionQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.sessions.len(), 1);
    assert_eq!(listed.sessions[0].id, "s2");
    for err in [
        store.read("s1", 0, 10).await.unwrap_err(),
        store.append("s1", &events(4, 4)).await.unwrap_err(),
        store.open_requests("s1").await.unwrap_err(),
        store.delete_session("s1").await.unwrap_err(),
    ] {
        assert!(matches!(err, StoreError::UnknownSession(_)), "{err}");
    }
    // The id is free again, and the new session starts empty.
    store
        .create_session(new_session("s1", "/w", 9))
        .await
        .unwrap();
    assert!(store.read("s1", 0, 10).await.unwrap().is_empty());
    assert!(store.open_requests("s1").await.unwrap().is_empty());
    assert_eq!(store.append("s1", &events(1, 2)).await.unwrap(), 2);
}

/// An append continues the head exactly; anything else stores nothing.
pub async fn appends_are_gapless(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    assert_eq!(store.append("s", &events(1, 3)).await.unwrap(), 3);
    assert_eq!(store.append("s", &[]).await.unwrap(), 3);

    let gap = store.append("s", &events(5, 6)).await.unwrap_err();
    assert!(
        matches!(
            gap,
            StoreError::SeqConflict {
                expected: 4,
                got: 5,
                ..
            }
        ),
        "{gap}"
    );
    let replay = store.append("s", &events(3, 4)).await.unwrap_err();
    assert!(
        matches!(
            replay,
            StoreError::SeqConflict {
                expected: 4,
                got: 3,
                ..
            }
        ),
        "{replay}"
    );
    let mut holey = events(4, 6);
    holey.remove(1);
    let holey = store.append("s", &holey).await.unwrap_err();
    assert!(
        matches!(
            holey,
            StoreError::SeqConflict {
                expected: 5,
                got: 6,
                ..
            }
        ),
        "{holey}"
    );
    assert_eq!(store.session("s").await.unwrap().unwrap().head_seq, 3);
    assert_eq!(store.read("s", 0, 100).await.unwrap(), events(1, 3));

    assert_eq!(store.append("s", &events(4, 4)).await.unwrap(), 4);
    let unknown = store.append("nope", &events(1, 1)).await.unwrap_err();
    assert!(
        matches!(unknown, StoreError::UnknownSession(_)),
        "{unknown}"
    );
    let unknown = store.append("nope", &[]).await.unwrap_err();
    assert!(
        matches!(unknown, StoreError::UnknownSession(_)),
        "{unknown}"
    );
}

/// Positions no log reaches (a hostile client's `after`, a corrupt event) are refused or
/// answered with nothing, never a panic.
pub async fn positions_past_any_log_are_refused_calmly(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    store.append("s", &events(1, 2)).await.unwrap();
    for batch in [
        vec![event(u64::MAX, 0, text("x"))],
        vec![
            event(u64::MAX - 1, 0, text("x")),
            event(u64::MAX, 0, text("y")),
        ],
        vec![event(i64::MAX as u64 + 1, 0, text("x"))],
    ] {
        let err = store.append("s", &batch).await.unwrap_err();
        assert!(matches!(err, StoreError::SeqConflict { .. }), "{err}");
    }
    assert!(store.read("s", u64::MAX, 10).await.unwrap().is_empty());
    assert!(store.read("s", 0, usize::MAX).await.unwrap().len() == 2);
    let mut beyond = store.follow("s", u64::MAX);
    store.append("s", &events(3, 3)).await.unwrap();
    let nothing = tokio::time::timeout(Duration::from_millis(100), beyond.next()).await;
    assert!(nothing.is_err(), "a follower past the end got {nothing:?}");
    assert_eq!(store.session("s").await.unwrap().unwrap().head_seq, 3);
}

/// Many appends at once (one transaction, for a store that batches): the out-of-order ones and
/// those to unknown sessions are refused alone, the others commit.
pub async fn concurrent_appends_are_refused_alone(store: Arc<dyn EventStore>) {
    for n in 0..40 {
        store
            .create_session(new_session(&format!("s{n}"), "/w", 0))
            .await
            .unwrap();
    }
    let appends = (0..45).map(|n| {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            // Every fifth append is out of order; the last five go to sessions that do not exist.
            let first = if n % 5 == 0 { 2 } else { 1 };
            store
                .append(&format!("s{n}"), &events(first, first + 2))
                .await
        })
    });
    let outcomes = futures_util::future::join_all(appends).await;
    for (n, outcome) in outcomes.into_iter().enumerate() {
        let outcome = outcome.unwrap();
        if n >= 40 {
            assert!(
                matches!(outcome, Err(StoreError::UnknownSession(_))),
                "{outcome:?}"
            );
            continue;
        }
        let head = store
            .session(&format!("s{n}"))
            .await
            .unwrap()
            .unwrap()
            .head_seq;
        if n % 5 == 0 {
            assert!(
                matches!(outcome, Err(StoreError::SeqConflict { .. })),
                "{outcome:?}"
            );
            assert_eq!(head, 0);
        } else {
            assert_eq!(outcome.unwrap(), 3);
            assert_eq!(head, 3);
            assert_eq!(
                store.read(&format!("s{n}"), 0, 10).await.unwrap(),
                events(1, 3)
            );
        }
    }
}

/// Writers racing to append the same `seq` to one session: exactly one commits each round, the
/// rest are told `SeqConflict`, and the log holds the winner's events.
pub async fn racing_appends_to_one_session_commit_once(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let mut head = 0;
    for _ in 0..20 {
        let racers = (0..4).map(|writer| {
            let store = Arc::clone(&store);
            let batch: Vec<_> = (head + 1..=head + 2)
                .map(|seq| event(seq, 0, text(&format!("writer {writer}"))))
                .collect();
            tokio::spawn(async move { (store.append("s", &batch).await, batch) })
        });
        let mut winners = Vec::new();
        for racer in futures_util::future::join_all(racers).await {
            match racer.unwrap() {
                (Ok(new_head), batch) => {
                    assert_eq!(new_head, head + 2);
                    winners.push(batch);
                }
                (Err(StoreError::SeqConflict { .. }), _) => {}
                (Err(other), _) => panic!("a racer failed: {other}"),
            }
        }
        assert_eq!(winners.len(), 1, "exactly one racer commits");
        assert_eq!(store.read("s", head, 10).await.unwrap(), winners[0]);
        head += 2;
    }
    assert_eq!(store.session("s").await.unwrap().unwrap().head_seq, head);
}

/// `read` pages through the log, each event exactly as appended.
pub async fn events_are_read_back_exactly(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    store
        .create_session(new_session("other", "/w", 0))
        .await
        .unwrap();
    let all = events(1, 40);
    store.append("s", &all[..25]).await.unwrap();
    store.append("other", &events(1, 5)).await.unwrap();
    store.append("s", &all[25..]).await.unwrap();
    assert_eq!(store.read("s", 0, 1000).await.unwrap(), all);
    assert_eq!(store.read("s", 3, 4).await.unwrap(), all[3..7]);
    assert_eq!(store.read("s", 38, 10).await.unwrap(), all[38..]);
    assert!(store.read("s", 40, 10).await.unwrap().is_empty());
    assert!(store.read("s", 99, 10).await.unwrap().is_empty());
    assert!(store.read("s", 0, 0).await.unwrap().is_empty());
    assert_eq!(store.read("other", 0, 1000).await.unwrap(), events(1, 5));
    // The same events as the JSON kept: each one decodes to what `read` gives.
    let kept = store.read_json("s", 3, 4).await.unwrap();
    let decoded: Vec<Event> = kept
        .iter()
        .map(|event| serde_json::from_str(&event.json).unwrap())
        .collect();
    assert_eq!(decoded, all[3..7]);
    assert_eq!(
        kept.iter().map(|event| event.seq).collect::<Vec<_>>(),
        [4, 5, 6, 7]
    );
    assert!(matches!(
        store.read_json("missing", 0, 10).await,
        Err(StoreError::UnknownSession(_))
    ));
}

/// Followers started before, during and after a concurrent writer, from every kind of point,
/// each get exactly the events after their point, in order.
pub async fn followers_get_every_event_once_from_any_point(store: Arc<dyn EventStore>) {
    const STORED: u64 = 20;
    const TOTAL: u64 = 400;
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let all = events(1, TOTAL);
    store.append("s", &all[..STORED as usize]).await.unwrap();

    let mut followers = Vec::new();
    let spawn_follower = |after: u64| {
        let mut stream = store.follow("s", after);
        let all = all.clone();
        tokio::spawn(async move {
            let got = take(&mut stream, (TOTAL - after) as usize).await;
            assert_run(&got, &all, after + 1, TOTAL);
        })
    };
    // Before the writer: from the start, from inside the history, from the head, past it.
    for after in [0, 7, STORED, STORED + 5] {
        followers.push(spawn_follower(after));
    }
    let writer = {
        let store = Arc::clone(&store);
        let all = all.clone();
        tokio::spawn(async move {
            let mut next = STORED as usize;
            let mut size = 1;
            while next < all.len() {
                let end = (next + size).min(all.len());
                store.append("s", &all[next..end]).await.unwrap();
                next = end;
                size = size % 7 + 1;
                if next.is_multiple_of(3) {
                    tokio::task::yield_now().await;
                }
            }
        })
    };
    // While it writes: from the start and from wherever the head is at that moment.
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let head = store.session("s").await.unwrap().unwrap().head_seq;
        followers.push(spawn_follower(0));
        followers.push(spawn_follower(head));
        followers.push(spawn_follower(head.saturating_sub(3)));
    }
    writer.await.unwrap();
    // After it: from the end and from just before it.
    followers.push(spawn_follower(TOTAL - 1));
    for follower in followers {
        follower.await.unwrap();
    }
    // Past the end there is nothing yet; the next append arrives.
    let mut tail = store.follow("s", TOTAL);
    let more = events(TOTAL + 1, TOTAL + 2);
    store.append("s", &more).await.unwrap();
    assert_eq!(take(&mut tail, 2).await, more);
}

/// A follower dropped mid-way and followed again from its last seq misses and repeats nothing.
pub async fn a_dropped_follower_resumes_where_it_stopped(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let all = events(1, 60);
    store.append("s", &all[..10]).await.unwrap();
    let mut first = store.follow("s", 0);
    let got = take(&mut first, 7).await;
    drop(first);
    store.append("s", &all[10..30]).await.unwrap();
    let mut second = store.follow("s", got.last().unwrap().seq);
    let resumed = take(&mut second, 13).await;
    store.append("s", &all[30..]).await.unwrap();
    let rest = take(&mut second, 40).await;
    let mut joined = got;
    joined.extend(resumed);
    joined.extend(rest);
    assert_run(&joined, &all, 1, 60);
}

/// A follower that reads nothing while thousands of events commit still gets every one.
pub async fn a_lagging_follower_is_caught_up_from_storage(store: Arc<dyn EventStore>) {
    const TOTAL: u64 = 3000;
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let all = events(1, TOTAL);
    let mut lagging = store.follow("s", 0);
    let mut keeping_up = store.follow("s", 0);
    for chunk in all.chunks(50) {
        store.append("s", chunk).await.unwrap();
        let seen = take(&mut keeping_up, chunk.len()).await;
        assert_eq!(seen, chunk);
    }
    let got = take(&mut lagging, TOTAL as usize).await;
    assert_run(&got, &all, 1, TOTAL);
    // A follower that starts once everything is stored reads it all, page after page, with no
    // commit to wake it.
    let mut late = store.follow("s", 1);
    let got = take(&mut late, TOTAL as usize - 1).await;
    assert_run(&got, &all, 2, TOTAL);
}

/// Deleting a session ends its followers.
pub async fn followers_of_a_deleted_session_end(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    store.append("s", &events(1, 3)).await.unwrap();
    let mut follower = store.follow("s", 0);
    assert_eq!(take(&mut follower, 3).await, events(1, 3));
    let waiting = tokio::spawn(async move { follower.next().await.map(|item| item.is_ok()) });
    tokio::time::sleep(Duration::from_millis(20)).await;
    store.delete_session("s").await.unwrap();
    let ended = tokio::time::timeout(PATIENCE, waiting)
        .await
        .expect("the follower ended")
        .unwrap();
    assert_eq!(ended, None);
}

/// Following a session that does not exist is an error, not an endless wait.
pub async fn following_an_unknown_session_fails(store: Arc<dyn EventStore>) {
    let mut follower = store.follow("nope", 0);
    let first = tokio::time::timeout(PATIENCE, follower.next())
        .await
        .expect("the follower answered");
    assert!(
        matches!(first, Some(Err(StoreError::UnknownSession(_)))),
        "{first:?}"
    );
}

/// Title, status, turns, last activity and head follow the events as they commit.
pub async fn derived_rows_follow_the_events(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let long = format!("\n\n   {}\nsecond line", "word ".repeat(40));
    store
        .append(
            "s",
            &[
                event(1, 100, varied(2)),
                event(2, 100, turn_started("t1", &long)),
                event(3, 100, text("hi")),
            ],
        )
        .await
        .unwrap();
    let info = store.session("s").await.unwrap().unwrap();
    assert_eq!(info.title, Some(title_from_prompt(&long)));
    assert_eq!(info.title.as_ref().unwrap().chars().count(), TITLE_CHARS);
    assert!(info.title.as_ref().unwrap().ends_with('…'));
    assert_eq!(info.status, SessionStatus::Running);
    assert_eq!(info.turns, 1);
    assert_eq!(info.head_seq, 3);
    assert_eq!(info.last_activity, time(103));

    store
        .append(
            "s",
            &[
                event(4, 100, turn_finished("t1")),
                event(5, 100, turn_started("t2", "another prompt")),
            ],
        )
        .await
        .unwrap();
    let info = store.session("s").await.unwrap().unwrap();
    assert_eq!(
        info.title,
        Some(title_from_prompt(&long)),
        "the first prompt names it"
    );
    assert_eq!(info.status, SessionStatus::Running);
    assert_eq!(info.turns, 2);
    store
        .append("s", &[event(6, 100, turn_finished("t2"))])
        .await
        .unwrap();
    let info = store.session("s").await.unwrap().unwrap();
    assert_eq!(info.status, SessionStatus::Idle);
    assert_eq!(info.turns, 2);
    assert_eq!(info.head_seq, 6);
    assert_eq!(info.last_activity, time(106));
    // A refused append changes none of it.
    store
        .append("s", &[event(9, 500, turn_started("t3", "x"))])
        .await
        .unwrap_err();
    assert_eq!(store.session("s").await.unwrap().unwrap(), info);
}

/// Open requests are those opened and not yet resolved, in the order opened.
pub async fn open_requests_are_the_unanswered_ones(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    assert!(store.open_requests("s").await.unwrap().is_empty());
    store
        .append(
            "s",
            &[
                event(1, 0, turn_started("t1", "go")),
                event(2, 0, request_opened("r1", "c1")),
                event(3, 0, question_opened("r2", "c2")),
                event(4, 0, request_opened("r3", "c3")),
                event(5, 0, request_resolved("r3", "c3")),
            ],
        )
        .await
        .unwrap();
    let open = store.open_requests("s").await.unwrap();
    let ids: Vec<&str> = open.iter().map(|r| r.request_id.as_str()).collect();
    assert_eq!(ids, ["r1", "r2"]);
    let EventBody::RequestOpened(r2) = question_opened("r2", "c2") else {
        unreachable!()
    };
    assert_eq!(open[1], r2);
    store
        .append("s", &[event(6, 0, request_resolved("r1", "c1"))])
        .await
        .unwrap();
    let open = store.open_requests("s").await.unwrap();
    assert_eq!(open, [r2]);
    store
        .append("s", &[event(7, 0, request_resolved("r2", "c2"))])
        .await
        .unwrap();
    assert!(store.open_requests("s").await.unwrap().is_empty());
    let unknown = store.open_requests("nope").await.unwrap_err();
    assert!(
        matches!(unknown, StoreError::UnknownSession(_)),
        "{unknown}"
    );
}

/// A loop's or a workflow run's start or end, as its session's log records it.
fn run_event(kind: &str, id: &str) -> EventBody {
    let body = match kind {
        "loop.started" | "loop.finished" => serde_json::json!({
            "type": kind,
            "loop": {"loopId": id, "prompt": "go", "until": {}, "maxIterations": 3,
                     "freshContext": true, "status": "running", "iterations": [],
                     "startedAt": time(0), "inputTokens": 0, "outputTokens": 0},
        }),
        _ => serde_json::json!({
            "type": kind,
            "run": {"runId": id, "workflow": "review", "args": {}, "status": "running",
                    "background": true, "steps": [], "startedAt": time(0)},
        }),
    };
    serde_json::from_value(body).unwrap()
}

/// Sessions holding a loop or workflow run started and not finished are found, whatever their
/// turns do: the work a host takes up after a restart.
pub async fn sessions_with_running_loops_or_workflows_are_found(store: Arc<dyn EventStore>) {
    let logs: [(&str, &[(&str, &str)]); 6] = [
        ("plain", &[]),
        ("loop-running", &[("loop.started", "l1")]),
        (
            "loop-done",
            &[("loop.started", "l1"), ("loop.finished", "l1")],
        ),
        (
            "one-of-two-runs",
            &[
                ("workflow.started", "wf1"),
                ("workflow.started", "wf2"),
                ("workflow.finished", "wf1"),
            ],
        ),
        (
            "runs-done",
            &[
                ("workflow.started", "wf1"),
                ("loop.started", "l1"),
                ("workflow.finished", "wf1"),
                ("loop.finished", "l1"),
            ],
        ),
        ("deleted", &[("loop.started", "l1")]),
    ];
    for (id, runs) in logs {
        store
            .create_session(new_session(id, "/w", 0))
            .await
            .unwrap();
        // The turn that started them ended: the session is idle, not running.
        let mut events = vec![event(1, 0, turn_started("t", "go"))];
        for (kind, run) in runs {
            events.push(event(events.len() as u64 + 1, 0, run_event(kind, run)));
        }
        events.push(event(events.len() as u64 + 1, 0, turn_finished("t")));
        store.append(id, &events).await.unwrap();
    }
    store.delete_session("deleted").await.unwrap();
    let found: BTreeSet<String> = store
        .sessions_with_running_loops_or_workflows()
        .await
        .unwrap()
        .into_iter()
        .map(|info| {
            assert_eq!(info.status, SessionStatus::Idle, "{info:?}");
            info.id
        })
        .collect();
    assert_eq!(
        found,
        BTreeSet::from(["loop-running".into(), "one-of-two-runs".into()])
    );
    assert!(store.running_sessions().await.unwrap().is_empty());
}

/// Running sessions are those whose last turn started and has not finished.
pub async fn running_sessions_are_those_mid_turn(store: Arc<dyn EventStore>) {
    for id in ["idle", "finished", "running", "running-too"] {
        store
            .create_session(new_session(id, "/w", 0))
            .await
            .unwrap();
    }
    store
        .append(
            "finished",
            &[
                event(1, 0, turn_started("t", "a")),
                event(2, 0, turn_finished("t")),
            ],
        )
        .await
        .unwrap();
    store
        .append("running", &[event(1, 0, turn_started("t", "b"))])
        .await
        .unwrap();
    store
        .append(
            "running-too",
            &[
                event(1, 0, turn_started("t", "c")),
                event(2, 0, turn_finished("t")),
                event(3, 0, turn_started("t2", "d")),
            ],
        )
        .await
        .unwrap();
    let running: BTreeSet<String> = store
        .running_sessions()
        .await
        .unwrap()
        .into_iter()
        .map(|info| {
            assert_eq!(info.status, SessionStatus::Running);
            info.id
        })
        .collect();
    assert_eq!(
        running,
        BTreeSet::from(["running".into(), "running-too".into()])
    );
}

/// A lease has one owner at a time, is renewed by its owner, freed on release and taken over
/// once it expires.
pub async fn leases_have_one_owner_and_expire(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s", "/w", 0))
        .await
        .unwrap();
    let long = Duration::from_secs(60);
    assert_eq!(
        store.acquire_lease("s", "a", long).await.unwrap(),
        Lease::Acquired
    );
    assert_eq!(
        store.acquire_lease("s", "b", long).await.unwrap(),
        Lease::HeldBy { owner: "a".into() }
    );
    assert_eq!(
        store.acquire_lease("s", "a", long).await.unwrap(),
        Lease::Acquired
    );
    store.release_lease("s", "b").await.unwrap();
    assert_eq!(
        store.acquire_lease("s", "b", long).await.unwrap(),
        Lease::HeldBy { owner: "a".into() }
    );
    store.release_lease("s", "a").await.unwrap();
    assert_eq!(
        store.acquire_lease("s", "b", long).await.unwrap(),
        Lease::Acquired
    );

    // b stops renewing; once its time has passed, c takes over and b cannot renew.
    let short = Duration::from_millis(100);
    assert_eq!(
        store.acquire_lease("s", "b", short).await.unwrap(),
        Lease::Acquired
    );
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(
        store.acquire_lease("s", "c", long).await.unwrap(),
        Lease::Acquired
    );
    assert_eq!(
        store.acquire_lease("s", "b", long).await.unwrap(),
        Lease::HeldBy { owner: "c".into() }
    );
    let unknown = store.acquire_lease("nope", "a", long).await.unwrap_err();
    assert!(
        matches!(unknown, StoreError::UnknownSession(_)),
        "{unknown}"
    );
}

/// The hits of `text` with `query`'s other settings.
async fn search(store: &dyn EventStore, text: &str, query: SearchQuery) -> Vec<SearchHit> {
    store
        .search(&SearchQuery {
            text: text.into(),
            limit: 100,
            ..query
        })
        .await
        .unwrap_or_else(|err| panic!("searching `{text}`: {err}"))
        .hits
}

/// The hit of `hits` in `field` at `seq` of `session`.
fn hit<'a>(hits: &'a [SearchHit], session: &str, seq: u64, field: HitField) -> &'a SearchHit {
    hits.iter()
        .find(|hit| hit.session == session && hit.seq == seq && hit.field == field)
        .unwrap_or_else(|| panic!("no {field:?} hit at {session}:{seq} in {hits:#?}"))
}

/// Prompts, the model's text (over several events and appends), arguments, results and
/// errors are found, each hit placed in its session, turn and call, with its match marked.
pub async fn search_finds_every_kind_of_text(store: Arc<dyn EventStore>) {
    searchable_sessions(store.as_ref()).await;
    let hits = search(store.as_ref(), "backoff", SearchQuery::default()).await;
    let text = hit(&hits, "a", 3, HitField::Text);
    assert_eq!(text.turn, Some(1));
    assert_eq!(text.call_id, None);
    assert!(text.snippet.contains("«backoff»"), "{}", text.snippet);
    assert!(
        text.snippet.contains("retry logic in client.rs"),
        "{}",
        text.snippet
    );
    assert_eq!(text.title, "Where did we change the retry logic?");
    assert_eq!(text.time, time(3));
    let arguments = hit(&hits, "a", 6, HitField::Arguments);
    assert_eq!(arguments.call_id.as_deref(), Some("c1"));
    assert_eq!(arguments.tool.as_deref(), Some("bash"));
    let result = hit(&hits, "a", 7, HitField::Result);
    assert_eq!(result.call_id.as_deref(), Some("c1"));
    assert_eq!(hits.len(), 3, "{hits:#?}");

    let hits = search(store.as_ref(), "relation already", SearchQuery::default()).await;
    let error = hit(&hits, "a", 9, HitField::Error);
    assert_eq!(
        (error.turn, error.call_id.as_deref()),
        (Some(1), Some("c2"))
    );
    assert!(error.snippet.contains("«relation»"), "{}", error.snippet);

    let hits = search(store.as_ref(), "where did we", SearchQuery::default()).await;
    assert_eq!(hit(&hits, "a", 1, HitField::Prompt).turn, Some(1));
    let hits = search(store.as_ref(), "PSQL", SearchQuery::default()).await;
    assert_eq!(
        hit(&hits, "a", 8, HitField::Arguments).tool.as_deref(),
        Some("bash")
    );
    let hits = search(store.as_ref(), "bash", SearchQuery::default()).await;
    assert_eq!(
        hit(&hits, "a", 8, HitField::Tool).call_id.as_deref(),
        Some("c2")
    );
    assert!(
        search(store.as_ref(), "nowhere", SearchQuery::default())
            .await
            .is_empty()
    );
}

/// Hits where the words make the phrase asked rank above hits with the words apart.
pub async fn search_ranks_the_exact_phrase_first(store: Arc<dyn EventStore>) {
    searchable_sessions(store.as_ref()).await;
    let hits = search(store.as_ref(), "retry logic", SearchQuery::default()).await;
    let places: Vec<(&str, u64)> = hits.iter().map(|h| (h.session.as_str(), h.seq)).collect();
    assert_eq!(places.len(), 3, "{hits:#?}");
    assert!(
        places[..2].contains(&("a", 1)) && places[..2].contains(&("a", 3)),
        "{hits:#?}"
    );
    assert_eq!(places[2], ("b", 1), "{hits:#?}");
    assert!(hits[1].score > hits[2].score, "{hits:#?}");
    assert!(hits.windows(2).all(|pair| pair[0].score >= pair[1].score));
}

/// Hits narrowed by session, workspace, agent, tool, status and time, a page at a time.
pub async fn search_filters_and_pages(store: Arc<dyn EventStore>) {
    searchable_sessions(store.as_ref()).await;
    let sessions_of = |hits: &[SearchHit]| -> BTreeSet<String> {
        hits.iter().map(|hit| hit.session.clone()).collect()
    };
    let all = search(store.as_ref(), "retry", SearchQuery::default()).await;
    assert_eq!(sessions_of(&all), BTreeSet::from(["a".into(), "b".into()]));
    let by_agent = SearchQuery {
        agent: Some("reviewer".into()),
        ..SearchQuery::default()
    };
    assert_eq!(
        sessions_of(&search(store.as_ref(), "retry", by_agent).await),
        BTreeSet::from(["b".into()])
    );
    let by_workspace = SearchQuery {
        workspace: Some("/work/a".into()),
        ..SearchQuery::default()
    };
    assert_eq!(
        sessions_of(&search(store.as_ref(), "retry", by_workspace).await),
        BTreeSet::from(["a".into()])
    );
    let by_session = SearchQuery {
        sessions: vec!["b".into(), "none".into()],
        ..SearchQuery::default()
    };
    assert_eq!(
        sessions_of(&search(store.as_ref(), "retry", by_session).await),
        BTreeSet::from(["b".into()])
    );
    let by_tool = SearchQuery {
        tool: Some("bash".into()),
        ..SearchQuery::default()
    };
    let in_calls = search(store.as_ref(), "retry", by_tool).await;
    assert!(!in_calls.is_empty());
    assert!(
        in_calls
            .iter()
            .all(|hit| hit.call_id.as_deref() == Some("c1")),
        "{in_calls:#?}"
    );
    let failed = SearchQuery {
        status: Some(CallStatus::Error),
        ..SearchQuery::default()
    };
    let failed = search(store.as_ref(), "psql migrate", failed).await;
    assert!(!failed.is_empty());
    assert!(
        failed
            .iter()
            .all(|hit| hit.call_id.as_deref() == Some("c2")),
        "{failed:#?}"
    );
    let later = SearchQuery {
        after: Some(time(1000)),
        ..SearchQuery::default()
    };
    let later = search(store.as_ref(), "重试", later).await;
    assert!(
        !later.is_empty() && later.iter().all(|hit| hit.turn == Some(2)),
        "{later:#?}"
    );
    let earlier = SearchQuery {
        before: Some(time(1000)),
        ..SearchQuery::default()
    };
    assert!(search(store.as_ref(), "重试", earlier).await.is_empty());

    let mut pages = Vec::new();
    let mut query = SearchQuery {
        text: "retry".into(),
        limit: 2,
        ..SearchQuery::default()
    };
    loop {
        let page = store.search(&query).await.unwrap();
        assert!(page.hits.len() <= 2);
        pages.extend(
            page.hits
                .into_iter()
                .map(|hit| (hit.session, hit.seq, hit.field)),
        );
        match page.next {
            Some(next) => query.cursor = Some(next),
            None => break,
        }
    }
    let whole: Vec<_> = all
        .into_iter()
        .map(|hit| (hit.session, hit.seq, hit.field))
        .collect();
    assert_eq!(pages, whole);
    let bad = store
        .search(&SearchQuery {
            text: "retry".into(),
            cursor: Some("page two".into()),
            ..SearchQuery::default()
        })
        .await
        .unwrap_err();
    assert!(matches!(bad, StoreError::InvalidCursor(_)), "{bad}");
}

/// Chinese text, written without spaces, is found by any run of its characters.
pub async fn search_finds_chinese_text(store: Arc<dyn EventStore>) {
    searchable_sessions(store.as_ref()).await;
    let hits = search(store.as_ref(), "重试逻辑", SearchQuery::default()).await;
    let prompt = hit(&hits, "a", 11, HitField::Prompt);
    assert_eq!(prompt.turn, Some(2));
    let text = hit(&hits, "a", 13, HitField::Text);
    let plain = text.snippet.replace(['«', '»'], "");
    assert!(plain.contains("我们修改了重试逻辑"), "{}", text.snippet);
    assert!(text.snippet.contains('«'), "{}", text.snippet);
    assert_eq!(hits.len(), 2, "{hits:#?}");
    assert!(
        search(store.as_ref(), "退避", SearchQuery::default())
            .await
            .len()
            == 1
    );
    // Characters that are not next to each other are not the word.
    assert!(
        search(store.as_ref(), "逻修", SearchQuery::default())
            .await
            .is_empty()
    );
}

/// A deleted session's text is found no more.
pub async fn search_forgets_deleted_sessions(store: Arc<dyn EventStore>) {
    searchable_sessions(store.as_ref()).await;
    store.delete_session("a").await.unwrap();
    let hits = search(store.as_ref(), "retry", SearchQuery::default()).await;
    assert!(hits.iter().all(|hit| hit.session == "b"), "{hits:#?}");
    assert!(
        search(store.as_ref(), "backoff", SearchQuery::default())
            .await
            .is_empty()
    );
    assert!(
        search(store.as_ref(), "重试", SearchQuery::default())
            .await
            .is_empty()
    );
}

/// Query syntax is no syntax: quotes, `*`, `NEAR(`, `OR`, a column filter are words or
/// nothing; a query with no word or too long is a clear error, never a failure.
pub async fn search_takes_hostile_queries_literally(store: Arc<dyn EventStore>) {
    searchable_sessions(store.as_ref()).await;
    let quoted = search(store.as_ref(), "\"retry", SearchQuery::default()).await;
    assert!(!quoted.is_empty());
    for hostile in [
        "NEAR(retry logic",
        "retry\" OR \"x",
        "body:retry",
        "retry*",
        "a\" OR 1=1 --",
        "(retry AND",
        "'; DROP TABLE events; --",
        "^retry",
        "retry NOT backoff",
    ] {
        let query = SearchQuery {
            text: hostile.into(),
            ..SearchQuery::default()
        };
        match store.search(&query).await {
            Ok(_) | Err(StoreError::InvalidQuery(_)) => {}
            Err(err) => panic!("`{hostile}` failed: {err}"),
        }
    }
    for empty in ["*", "\"\"", "( ) -", "   "] {
        let err = store
            .search(&SearchQuery {
                text: empty.into(),
                ..SearchQuery::default()
            })
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::InvalidQuery(message) if message.contains("no word")),
            "`{empty}`: {err}"
        );
    }
    let long = "retry ".repeat(2000);
    let err = store
        .search(&SearchQuery {
            text: long,
            ..SearchQuery::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::InvalidQuery(m) if m.contains("at most")),
        "{err}"
    );
    // The store still works.
    assert!(
        !search(store.as_ref(), "retry", SearchQuery::default())
            .await
            .is_empty()
    );
}
