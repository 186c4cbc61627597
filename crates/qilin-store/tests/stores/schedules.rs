//! The schedule part of the store contract: schedules and runs as rows, and the claim of a due
//! fire (atomic, once, missed fires following `catch_up`). Time is passed in: no test waits.

use crate::support::*;
use chrono::{DateTime, Duration, TimeZone, Utc};
use qilin_protocol::schedules::{
    CatchUp, CreateSchedule, RunOutcome, ScheduleRecord, ScheduleStatus, ScheduleTarget,
};
use qilin_store::EventStore;
use qilin_store::schedules::time::{format_time, plan};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The grace of the claims here: a fire later than this is a missed one.
fn grace() -> Duration {
    Duration::seconds(30)
}

/// How long a claim of a `this_session` fire takes its session's lease for.
fn lease() -> std::time::Duration {
    std::time::Duration::from_secs(60)
}

/// 2030-01-01 at `minutes` past 10:00 UTC (plus `seconds`).
fn at(minutes: i64, seconds: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 10, 0, 0).single().unwrap()
        + Duration::minutes(minutes)
        + Duration::seconds(seconds)
}

/// Creates schedule `id` of session `session` from `request` at `now`; returns its first fire.
async fn create(
    store: &dyn EventStore,
    id: &str,
    session: &str,
    request: CreateSchedule,
    now: DateTime<Utc>,
    min_interval: u64,
) -> (ScheduleRecord, DateTime<Utc>) {
    let mut planned = plan(&request, now, min_interval).unwrap();
    planned.record.id = id.to_string();
    planned.record.session_id = session.to_string();
    store
        .create_schedule(&planned.record, planned.first_fire)
        .await
        .unwrap();
    (planned.record, planned.first_fire)
}

fn every(every: &str, catch_up: CatchUp) -> CreateSchedule {
    CreateSchedule {
        prompt: "look at the build".into(),
        every: Some(every.into()),
        catch_up: Some(catch_up),
        ..CreateSchedule::default()
    }
}

/// Schedules are read back, listed newest first per session, deleted, and go with their
/// session.
pub async fn schedules_are_created_listed_and_deleted(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s1", "/w", 1))
        .await
        .unwrap();
    store
        .create_session(new_session("s2", "/w", 2))
        .await
        .unwrap();
    let (first, _) = create(
        store.as_ref(),
        "sch1",
        "s1",
        every("15m", CatchUp::Once),
        at(0, 0),
        60,
    )
    .await;
    create(
        store.as_ref(),
        "sch2",
        "s1",
        every("1h", CatchUp::Skip),
        at(0, 0),
        60,
    )
    .await;
    create(
        store.as_ref(),
        "sch3",
        "s2",
        every("2h", CatchUp::Once),
        at(0, 0),
        60,
    )
    .await;
    let read = store.schedule("sch1").await.unwrap().unwrap();
    assert_eq!(read.prompt, first.prompt);
    assert_eq!(read.status, ScheduleStatus::Active);
    assert_eq!(read.runs, 0);
    assert_eq!(
        read.next_fires,
        [
            format_time(at(15, 0)),
            format_time(at(30, 0)),
            format_time(at(45, 0))
        ]
    );
    let ids = |list: Vec<ScheduleRecord>| list.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_schedules(Some("s1")).await.unwrap()),
        ["sch2", "sch1"]
    );
    assert_eq!(
        ids(store.list_schedules(None).await.unwrap()),
        ["sch3", "sch2", "sch1"]
    );
    let deleted = store.delete_schedule("sch2").await.unwrap().unwrap();
    assert_eq!(deleted.status, ScheduleStatus::Deleted);
    assert!(deleted.next_fires.is_empty());
    assert_eq!(
        ids(store.list_schedules(Some("s1")).await.unwrap()),
        ["sch1"]
    );
    assert!(store.delete_schedule("nope").await.unwrap().is_none());
    // A deleted schedule never fires.
    let claimed = store
        .claim_due(at(60, 0), "p1", grace(), lease())
        .await
        .unwrap();
    assert!(claimed.iter().all(|fire| fire.schedule.id != "sch2"));
    store.delete_session("s1").await.unwrap();
    assert!(store.schedule("sch1").await.unwrap().is_none());
    assert_eq!(ids(store.list_schedules(None).await.unwrap()), ["sch3"]);
    // A schedule needs its session.
    let mut orphan = plan(&every("1h", CatchUp::Once), at(0, 0), 60).unwrap();
    orphan.record.id = "sch4".into();
    orphan.record.session_id = "gone".into();
    assert!(
        store
            .create_schedule(&orphan.record, orphan.first_fire)
            .await
            .is_err()
    );
}

/// A due fire is claimed once: a second claim, and a claim racing it, find nothing; the next
/// fire moves on; the run is recorded `running` for its owner.
pub async fn a_due_fire_is_claimed_once(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s1", "/w", 1))
        .await
        .unwrap();
    create(
        store.as_ref(),
        "sch1",
        "s1",
        every("1m", CatchUp::Once),
        at(0, 0),
        60,
    )
    .await;
    assert!(
        store
            .claim_due(at(0, 59), "p1", grace(), lease())
            .await
            .unwrap()
            .is_empty()
    );
    let (one, two) = tokio::join!(
        store.claim_due(at(1, 0), "p1", grace(), lease()),
        store.claim_due(at(1, 0), "p2", grace(), lease())
    );
    let claimed: Vec<_> = one.unwrap().into_iter().chain(two.unwrap()).collect();
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    let fire = &claimed[0];
    assert_eq!(fire.run_number, 1);
    assert_eq!(fire.run.fire_time, format_time(at(1, 0)));
    assert_eq!(fire.run.outcome, RunOutcome::Running);
    assert!(!fire.run.caught_up);
    assert_eq!(fire.schedule.runs, 1);
    assert_eq!(fire.schedule.next_fires[0], format_time(at(2, 0)));
    assert!(
        store
            .claim_due(at(1, 5), "p1", grace(), lease())
            .await
            .unwrap()
            .is_empty()
    );
    // The next fire goes to the claimer of the first, which holds the session's lease now.
    let (one, two) = tokio::join!(
        store.claim_due(at(2, 1), "p1", grace(), lease()),
        store.claim_due(at(2, 1), "p2", grace(), lease())
    );
    let again: Vec<_> = one.unwrap().into_iter().chain(two.unwrap()).collect();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].run_number, 2);
    // The run is updated in place and shows as the schedule's last.
    let mut ended = again[0].run.clone();
    ended.outcome = RunOutcome::Completed;
    ended.turn_id = Some("t1".into());
    ended.ended_at = Some(format_time(at(2, 30)));
    store.update_run("sch1", 2, &ended).await.unwrap();
    let read = store.schedule("sch1").await.unwrap().unwrap();
    assert_eq!(read.runs, 2);
    assert_eq!(read.last_run, Some(ended));
    assert!(store.update_run("sch1", 9, &again[0].run).await.is_err());
}

/// Fires missed while nothing claimed: `once` runs one late run for all of them, `skip` none;
/// either way the next fire is the next one after now.
pub async fn missed_fires_follow_catch_up(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s1", "/w", 1))
        .await
        .unwrap();
    create(
        store.as_ref(),
        "once",
        "s1",
        every("10m", CatchUp::Once),
        at(0, 0),
        60,
    )
    .await;
    create(
        store.as_ref(),
        "skip",
        "s1",
        every("10m", CatchUp::Skip),
        at(0, 0),
        60,
    )
    .await;
    // Nothing claimed from 10:00 until 10:55: fires at :10 … :50 were missed.
    let claimed = store
        .claim_due(at(55, 0), "p1", grace(), lease())
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    assert_eq!(claimed[0].schedule.id, "once");
    assert!(claimed[0].run.caught_up);
    assert_eq!(claimed[0].run.fire_time, format_time(at(10, 0)));
    for id in ["once", "skip"] {
        let read = store.schedule(id).await.unwrap().unwrap();
        assert_eq!(read.next_fires[0], format_time(at(60, 0)), "{id}");
    }
    assert_eq!(store.schedule("skip").await.unwrap().unwrap().runs, 0);
    // One fire a little late (within the grace) is no missed one.
    let on_time = store
        .claim_due(at(60, 10), "p1", grace(), lease())
        .await
        .unwrap();
    assert_eq!(on_time.len(), 2);
    assert!(on_time.iter().all(|fire| !fire.run.caught_up));
}

/// A one-shot schedule fires once and is done; runs a stopped process left running (their
/// claimer holds no lease of their session) end as interrupted when another process starts,
/// and only those.
pub async fn one_shots_finish_and_stopped_runs_are_interrupted(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s1", "/w", 1))
        .await
        .unwrap();
    let once = CreateSchedule {
        prompt: "ship it".into(),
        at: Some(format_time(at(5, 0))),
        ..CreateSchedule::default()
    };
    create(store.as_ref(), "at", "s1", once, at(0, 0), 60).await;
    create(
        store.as_ref(),
        "tick",
        "s1",
        every("5m", CatchUp::Once),
        at(0, 0),
        60,
    )
    .await;
    let first = store
        .claim_due(at(5, 0), "p1", grace(), lease())
        .await
        .unwrap();
    assert_eq!(first.len(), 2);
    let done = store.schedule("at").await.unwrap().unwrap();
    assert_eq!(done.status, ScheduleStatus::Done);
    assert!(done.next_fires.is_empty());
    // p1 stops: its lease of the session goes (here by hand; a dead process's runs out).
    store.release_lease("s1", "p1").await.unwrap();
    let second = store
        .claim_due(at(10, 0), "p2", grace(), lease())
        .await
        .unwrap();
    assert_eq!(second.len(), 1);
    // p2 still runs its run's session; p1 stopped.
    let held = store
        .acquire_lease("s1", "p2", std::time::Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(held, qilin_store::Lease::Acquired);
    // Runs claimed at or after the bound are left alone (their claimer may be opening the
    // session).
    let early = store
        .interrupt_abandoned_runs("p3", at(11, 0), at(5, 0))
        .await
        .unwrap();
    assert!(early.is_empty(), "{early:?}");
    let ended = store
        .interrupt_abandoned_runs("p3", at(11, 0), at(11, 0))
        .await
        .unwrap();
    let mut ids: Vec<_> = ended.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["at", "tick"]);
    assert!(
        ended
            .iter()
            .all(|(_, run)| run.outcome == RunOutcome::Interrupted
                && run.message.is_some()
                && run.ended_at.as_deref() == Some(format_time(at(11, 0)).as_str()))
    );
    // p2's run still runs; the schedule goes on firing.
    let tick = store.schedule("tick").await.unwrap().unwrap();
    assert_eq!(tick.last_run.unwrap().outcome, RunOutcome::Running);
    assert!(
        store
            .interrupt_abandoned_runs("p3", at(12, 0), at(12, 0))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .claim_due(at(15, 0), "p2", grace(), lease())
            .await
            .unwrap()
            .len(),
        1
    );
}

/// Claims from several owners racing on a one-second schedule over 30 simulated seconds take
/// each fire exactly once.
pub async fn racing_claims_take_each_fire_once(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s1", "/w", 1))
        .await
        .unwrap();
    create(
        store.as_ref(),
        "fast",
        "s1",
        every("1s", CatchUp::Once),
        at(0, 0),
        1,
    )
    .await;
    let mut fires: BTreeMap<String, usize> = BTreeMap::new();
    for second in 1..=30 {
        let now = at(0, second);
        let (a, b, c) = tokio::join!(
            store.claim_due(now, "p1", grace(), lease()),
            store.claim_due(now, "p2", grace(), lease()),
            store.claim_due(now, "p3", grace(), lease())
        );
        for fire in a.unwrap().into_iter().chain(b.unwrap()).chain(c.unwrap()) {
            *fires.entry(fire.run.fire_time).or_default() += 1;
        }
    }
    assert_eq!(fires.len(), 30, "{fires:?}");
    assert!(fires.values().all(|&count| count == 1), "{fires:?}");
    assert_eq!(store.schedule("fast").await.unwrap().unwrap().runs, 30);
}

/// A `this_session` fire goes to the process holding its session's lease: another claimer
/// leaves it due; once the lease is free, any claimer takes it and the lease with it. A
/// `new_session` fire goes to any claimer.
pub async fn a_this_session_fire_goes_to_the_session_owner(store: Arc<dyn EventStore>) {
    store
        .create_session(new_session("s1", "/w", 1))
        .await
        .unwrap();
    create(
        store.as_ref(),
        "here",
        "s1",
        every("1m", CatchUp::Once),
        at(0, 0),
        60,
    )
    .await;
    let elsewhere = CreateSchedule {
        target: Some(ScheduleTarget::NewSession),
        ..every("1m", CatchUp::Once)
    };
    create(store.as_ref(), "new", "s1", elsewhere, at(0, 0), 60).await;
    let held = store.acquire_lease("s1", "owner", lease()).await.unwrap();
    assert_eq!(held, qilin_store::Lease::Acquired);
    let by_other = store
        .claim_due(at(1, 0), "other", grace(), lease())
        .await
        .unwrap();
    let ids: Vec<_> = by_other
        .iter()
        .map(|fire| fire.schedule.id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["new"],
        "only the new_session fire goes to a non-owner"
    );
    let left = store.schedule("here").await.unwrap().unwrap();
    assert_eq!(left.runs, 0);
    assert_eq!(left.next_fires[0], format_time(at(1, 0)), "still due");
    let by_owner = store
        .claim_due(at(1, 0), "owner", grace(), lease())
        .await
        .unwrap();
    assert_eq!(by_owner.len(), 1);
    assert_eq!(by_owner[0].schedule.id, "here");
    // The owner stops: the next claimer takes the fire and the session's lease.
    store.release_lease("s1", "owner").await.unwrap();
    let taken = store
        .claim_due(at(2, 0), "other", grace(), lease())
        .await
        .unwrap();
    assert_eq!(taken.len(), 2, "{taken:?}");
    assert_eq!(
        store.acquire_lease("s1", "owner", lease()).await.unwrap(),
        qilin_store::Lease::HeldBy {
            owner: "other".to_string()
        }
    );
}
