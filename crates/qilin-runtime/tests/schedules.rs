//! The scheduler of the session host, on a clock the tests move by hand: fires run as
//! unattended turns, missed fires follow `catch_up`, a run a stopped process left is
//! interrupted and the next fire still happens, and two hosts on one PostgreSQL run each fire
//! of a one-second schedule exactly once.

mod support;

use chrono::{DateTime, Duration as Span, TimeZone, Utc};
use qilin_protocol::EventBody;
use qilin_protocol::schedules::{
    CatchUp, CreateSchedule, RunOutcome, ScheduleRecord, ScheduleRun, ScheduleTarget,
};
use qilin_runtime::{
    Clock, CodeSandbox, LeaseTiming, ModelChoice, Runtime, SchedulerSettings, SessionHandle,
    SessionHost,
};
use qilin_store::EventStore;
use qilin_store::schedules::time::plan;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{Fixture, fixture, stored};

const ASKING_AGENT: &str = "\
name: asker
instructions: Ask before reading.
tools: [read]
skills:
  available: []
review:
  rules:
    - tool: read
      decision: ask
      reason: reading needs a yes
";

/// A clock the test moves.
struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    fn at(start: DateTime<Utc>) -> Arc<Self> {
        Arc::new(ManualClock(Mutex::new(start)))
    }

    fn advance(&self, by: Span) {
        *self.0.lock().unwrap() += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap()
    }
}

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 10, 0, 0).single().unwrap()
}

fn settings(clock: &Arc<ManualClock>) -> SchedulerSettings {
    SchedulerSettings {
        clock: Arc::clone(clock) as Arc<dyn Clock>,
        ..SchedulerSettings::default()
    }
}

/// A host named `owner` over `store`, its sessions attended and unconfined, as a server's are.
fn host_on(store: Arc<dyn EventStore>, owner: &str) -> SessionHost {
    let runtime = Runtime::new(store, CodeSandbox::InProcess);
    SessionHost::new(runtime, owner, LeaseTiming::default(), |builder| {
        builder.attended(true).no_sandbox(true)
    })
}

/// A session of the fixture's agent answering from `script` (a file in the workspace, so any
/// host can resume it), hosted by `host`.
async fn create_session(f: &Fixture, host: &SessionHost, script: &str) -> SessionHandle {
    let file = f.workspace().join("script.yaml");
    std::fs::write(&file, script).unwrap();
    let builder = host
        .runtime()
        .session(f.workspace())
        .agent_file(f.agent())
        .attended(true)
        .no_sandbox(true)
        .model(ModelChoice::Spec(format!("scripted:{}", file.display())));
    host.create(builder).await.unwrap()
}

/// Stores schedule `id` of `session` from `request` made at `now`.
async fn schedule(
    store: &dyn EventStore,
    id: &str,
    session: &str,
    request: CreateSchedule,
    now: DateTime<Utc>,
    min_interval: u64,
) -> ScheduleRecord {
    let mut planned = plan(&request, now, min_interval).unwrap();
    planned.record.id = id.to_string();
    planned.record.session_id = session.to_string();
    store
        .create_schedule(&planned.record, planned.first_fire)
        .await
        .unwrap();
    planned.record
}

fn every(every: &str, target: ScheduleTarget, catch_up: CatchUp) -> CreateSchedule {
    CreateSchedule {
        prompt: "look at the notes".into(),
        every: Some(every.into()),
        target: Some(target),
        catch_up: Some(catch_up),
        ..CreateSchedule::default()
    }
}

async fn runs_of(host: &SessionHost, settings: &SchedulerSettings) -> Vec<ScheduleRun> {
    let mut runs = Vec::new();
    for task in host.fire_due(settings).await.unwrap() {
        runs.push(
            tokio::time::timeout(Duration::from_secs(30), task)
                .await
                .expect("the run ends")
                .unwrap(),
        );
    }
    runs
}

/// The schedule events of a session's log, as (kind, outcome, caught_up).
async fn schedule_events(handle: &SessionHandle) -> Vec<(String, RunOutcome, bool)> {
    handle.flush().await.unwrap();
    stored(handle)
        .await
        .into_iter()
        .filter_map(|event| match event.body {
            EventBody::ScheduleFired(fired) => {
                Some(("fired".to_string(), fired.run.outcome, fired.run.caught_up))
            }
            EventBody::ScheduleFinished(finished) => Some((
                "finished".to_string(),
                finished.run.outcome,
                finished.run.caught_up,
            )),
            _ => None,
        })
        .collect()
}

/// A fired turn in an attended session runs unattended: its approval is refused at once with a
/// reason the model reads, no request waits for a person, and the turn goes on and ends.
#[tokio::test]
async fn an_unattended_run_hitting_an_approval_is_refused_and_ends() {
    let f = fixture(ASKING_AGENT);
    let store = Arc::clone(&f.store) as Arc<dyn EventStore>;
    let host = host_on(Arc::clone(&store), "server");
    let script = "turns:\n  - say: created\n  - calls: [{tool: read, args: {path: notes.txt}}]\n  - say: could not read\n";
    let session = create_session(&f, &host, script).await;
    session.submit("set it up", None).unwrap().finished().await;
    let clock = ManualClock::at(start());
    schedule(
        store.as_ref(),
        "sch1",
        session.id(),
        every("1m", ScheduleTarget::ThisSession, CatchUp::Once),
        start(),
        60,
    )
    .await;
    clock.advance(Span::minutes(1));
    let runs = runs_of(&host, &settings(&clock)).await;
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.outcome, RunOutcome::Completed, "{run:?}");
    assert_eq!(run.session_id, session.id());
    assert!(run.turn_id.is_some());
    let events = stored(&session).await;
    assert!(
        !events
            .iter()
            .any(|event| matches!(event.body, EventBody::RequestOpened(_))),
        "no request waits for a person"
    );
    let refused = events.iter().find_map(|event| match &event.body {
        EventBody::ToolResult(result) if result.tool_name == "read" => Some(result.clone()),
        _ => None,
    });
    let refused = refused.expect("the read call ended");
    let text = serde_json::to_string(&refused).unwrap();
    assert!(text.contains("no one can approve it here"), "{text}");
    assert_eq!(
        schedule_events(&session).await,
        [
            ("fired".to_string(), RunOutcome::Running, false),
            ("finished".to_string(), RunOutcome::Completed, false)
        ]
    );
    // The session is attended again for a person's next turn.
    let stored_schedule = store.schedule("sch1").await.unwrap().unwrap();
    assert_eq!(stored_schedule.runs, 1);
    assert_eq!(
        stored_schedule.last_run.unwrap().outcome,
        RunOutcome::Completed
    );
}

/// Fires missed while no server ran: `once` runs one late run, marked caught up; `skip` none.
#[tokio::test]
async fn missed_fires_follow_catch_up() {
    let f = fixture(ASKING_AGENT);
    let store = Arc::clone(&f.store) as Arc<dyn EventStore>;
    let host = host_on(Arc::clone(&store), "server");
    let session = create_session(&f, &host, "turns:\n  - say: ok\n").await;
    let clock = ManualClock::at(start());
    let once = every("1m", ScheduleTarget::NewSession, CatchUp::Once);
    schedule(store.as_ref(), "once", session.id(), once, start(), 60).await;
    let skip = every("1m", ScheduleTarget::NewSession, CatchUp::Skip);
    schedule(store.as_ref(), "skip", session.id(), skip, start(), 60).await;
    // No server for ten minutes.
    clock.advance(Span::minutes(10) + Span::seconds(5));
    let runs = runs_of(&host, &settings(&clock)).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].caught_up);
    assert_eq!(runs[0].outcome, RunOutcome::Completed, "{runs:?}");
    assert_ne!(runs[0].session_id, session.id(), "a new session ran it");
    let new = store.session(&runs[0].session_id).await.unwrap().unwrap();
    assert!(new.title.unwrap().starts_with("Scheduled:"));
    assert_eq!(store.schedule("skip").await.unwrap().unwrap().runs, 0);
    for id in ["once", "skip"] {
        let read = store.schedule(id).await.unwrap().unwrap();
        assert_eq!(read.next_fires[0], "2030-01-01T10:11:00Z", "{id}");
    }
    // On time again: both fire, neither caught up.
    clock.advance(Span::seconds(55));
    let runs = runs_of(&host, &settings(&clock)).await;
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|run| !run.caught_up));
    let events = schedule_events(&session).await;
    assert_eq!(events.len(), 6, "{events:?}");
}

/// A server stopped mid-run: the next one to start ends the run as interrupted (recorded in
/// the log) and the next fire still happens.
#[tokio::test]
async fn a_run_cut_by_a_stop_is_interrupted_and_the_next_fire_happens() {
    let f = fixture(ASKING_AGENT);
    let store = Arc::clone(&f.store) as Arc<dyn EventStore>;
    let first = host_on(Arc::clone(&store), "first");
    // The scheduled turn streams slowly: it is still running when the server stops.
    let script =
        "chunk_delay_ms: 300\nturns:\n  - say: a long and slow answer that takes a while\n";
    let session = create_session(&f, &first, script).await;
    let id = session.id().to_string();
    let clock = ManualClock::at(start());
    let request = every("1m", ScheduleTarget::ThisSession, CatchUp::Once);
    schedule(store.as_ref(), "sch1", &id, request, start(), 60).await;
    clock.advance(Span::minutes(1));
    let tasks = first.fire_due(&settings(&clock)).await.unwrap();
    assert_eq!(tasks.len(), 1);
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The process stops: its run's task is gone with it, its sessions closed.
    for task in tasks {
        task.abort();
    }
    drop(session);
    first.shutdown().await;
    let running = store.schedule("sch1").await.unwrap().unwrap();
    assert_eq!(running.last_run.unwrap().outcome, RunOutcome::Running);

    let second = host_on(Arc::clone(&store), "second");
    clock.advance(Span::seconds(40));
    let ended = second
        .interrupt_abandoned_runs(&settings(&clock))
        .await
        .unwrap();
    assert_eq!(ended, 1);
    let read = store.schedule("sch1").await.unwrap().unwrap();
    let last = read.last_run.unwrap();
    assert_eq!(last.outcome, RunOutcome::Interrupted);
    assert!(last.message.unwrap().contains("stopped"));
    // The next fire happens, in the second process.
    std::fs::write(f.workspace().join("script.yaml"), "turns:\n  - say: ok\n").unwrap();
    clock.advance(Span::seconds(20));
    let runs = runs_of(&second, &settings(&clock)).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].fire_time, "2030-01-01T10:02:00Z");
    assert_ne!(runs[0].outcome, RunOutcome::Running);
    let session = match second.open(&id).await.unwrap() {
        qilin_runtime::Placement::Here(handle) => handle,
        qilin_runtime::Placement::Elsewhere(owner) => panic!("runs in {owner}"),
    };
    let events = schedule_events(&session).await;
    assert!(
        events.contains(&("finished".to_string(), RunOutcome::Interrupted, false)),
        "{events:?}"
    );
}

/// A run spending more tokens than its budget is stopped mid-turn and ends `out_of_budget`,
/// saying so; the same run within its budget completes.
#[tokio::test]
async fn a_run_over_its_token_budget_ends_out_of_budget() {
    let f = fixture(ASKING_AGENT);
    let store = Arc::clone(&f.store) as Arc<dyn EventStore>;
    let host = host_on(Arc::clone(&store), "server");
    // The second step streams slowly: the stop comes before it ends.
    let script = "chunk_delay_ms: 50\nturns:\n  - calls: [{tool: read, args: {path: notes.txt}}]\n  - say: a second step that takes a good while to stream, long enough to be cut short\n";
    let session = create_session(&f, &host, script).await;
    let clock = ManualClock::at(start());
    let request = every("1m", ScheduleTarget::ThisSession, CatchUp::Once);
    schedule(store.as_ref(), "sch1", session.id(), request, start(), 60).await;
    clock.advance(Span::minutes(1));
    let tight = SchedulerSettings {
        run_tokens: 10,
        ..settings(&clock)
    };
    let runs = runs_of(&host, &tight).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, RunOutcome::OutOfBudget, "{runs:?}");
    let message = runs[0].message.clone().unwrap();
    assert!(message.contains("budget of 10 tokens"), "{message}");
    session.flush().await.unwrap();
    let finished_steps: Vec<u32> = stored(&session)
        .await
        .into_iter()
        .filter_map(|event| match event.body {
            EventBody::StepFinished {
                step,
                stop_reason: Some(_),
                ..
            } => Some(step),
            _ => None,
        })
        .collect();
    assert_eq!(finished_steps, [1], "the second step was cut short");
    // Within its budget, the next run completes.
    clock.advance(Span::minutes(1));
    let runs = runs_of(&host, &settings(&clock)).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, RunOutcome::Completed, "{runs:?}");
}

/// The test database's URL, when set.
fn postgres_url() -> Option<String> {
    std::env::var("QILIN_TEST_POSTGRES_URL").ok()
}

/// Two stores on one fresh PostgreSQL schema, each with its own connection pool (as two
/// server processes have), and a way to drop the schema after.
struct PostgresPair {
    url: String,
    schema: String,
    a: Arc<dyn EventStore>,
    b: Arc<dyn EventStore>,
}

impl PostgresPair {
    async fn open() -> Self {
        let Some(url) = postgres_url() else {
            panic!(
                "QILIN_TEST_POSTGRES_URL is not set: run `export QILIN_TEST_POSTGRES_URL=\"$(bash scripts/postgres)\"`"
            );
        };
        let schema = format!("qilin_t_{:016x}", fastrand::u64(..));
        let open = || async {
            Arc::new(
                qilin_store::PostgresStore::connect_with(
                    &url,
                    qilin_store::PostgresOptions {
                        schema: schema.clone(),
                        pool_size: 8,
                    },
                )
                .await
                .unwrap(),
            ) as Arc<dyn EventStore>
        };
        let (a, b) = (open().await, open().await);
        PostgresPair { url, schema, a, b }
    }

    async fn drop_schema(self) {
        drop((self.a, self.b));
        let (client, connection) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let driver = tokio::spawn(connection);
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema))
            .await
            .unwrap();
        drop(client);
        let _ = driver.await;
    }
}

/// Connects `host`'s relay; the only commands relayed here are the host's own.
async fn relay(host: &SessionHost) {
    let handler: qilin_store::RelayHandler =
        Arc::new(|_, command| Box::pin(async move { format!("unknown command: {command}") }));
    assert!(host.connect_relay(handler).await.unwrap());
}

/// Two hosts, each with its own connection pool (as two server processes have) on one
/// PostgreSQL schema, tick together on a one-second schedule for 30 simulated seconds: each
/// fire runs exactly once, in one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hosts_on_postgres_run_each_fire_once() {
    let pair = PostgresPair::open().await;
    let (store_a, store_b) = (Arc::clone(&pair.a), Arc::clone(&pair.b));
    let f = fixture(ASKING_AGENT);
    let a = host_on(Arc::clone(&store_a), "a");
    let b = host_on(Arc::clone(&store_b), "b");
    let session = create_session(&f, &a, "turns:\n  - say: ok\n").await;
    let clock = ManualClock::at(start());
    let request = every("1s", ScheduleTarget::NewSession, CatchUp::Once);
    // Tests may lower the minimum interval the tool enforces.
    schedule(store_a.as_ref(), "fast", session.id(), request, start(), 1).await;
    let settings = settings(&clock);
    let mut tasks = Vec::new();
    for _ in 0..30 {
        clock.advance(Span::seconds(1));
        let (from_a, from_b) = tokio::join!(a.fire_due(&settings), b.fire_due(&settings));
        tasks.extend(from_a.unwrap());
        tasks.extend(from_b.unwrap());
    }
    let mut fires: BTreeMap<String, usize> = BTreeMap::new();
    for task in tasks {
        let run = tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the run ends")
            .unwrap();
        assert_eq!(run.outcome, RunOutcome::Completed, "{run:?}");
        *fires.entry(run.fire_time).or_default() += 1;
    }
    assert_eq!(fires.len(), 30, "{fires:?}");
    assert!(fires.values().all(|&count| count == 1), "{fires:?}");
    let read = store_b.schedule("fast").await.unwrap().unwrap();
    assert_eq!(read.runs, 30);
    a.shutdown().await;
    b.shutdown().await;
    drop((a, b, store_a, store_b, session));
    pair.drop_schema().await;
}

/// Two hosts on one PostgreSQL tick together on a one-second schedule that runs in its
/// session: every fire runs in the host holding the session, none ends skipped. When that
/// host stops, the other takes the next fire and the session with it, and the session's log
/// tells every run.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_this_session_fire_runs_where_its_session_runs_on_postgres() {
    let pair = PostgresPair::open().await;
    let f = fixture(ASKING_AGENT);
    let a = host_on(Arc::clone(&pair.a), "a");
    let b = host_on(Arc::clone(&pair.b), "b");
    relay(&a).await;
    relay(&b).await;
    let session = create_session(&f, &a, "turns:\n  - say: ok\n").await;
    let id = session.id().to_string();
    let clock = ManualClock::at(start());
    let request = every("1s", ScheduleTarget::ThisSession, CatchUp::Once);
    schedule(pair.a.as_ref(), "here", &id, request, start(), 1).await;
    let settings = settings(&clock);
    let mut from_a = Vec::new();
    for _ in 0..5 {
        clock.advance(Span::seconds(1));
        let (by_a, by_b) = tokio::join!(a.fire_due(&settings), b.fire_due(&settings));
        from_a.extend(by_a.unwrap());
        assert!(by_b.unwrap().is_empty(), "b does not run the session");
    }
    let mut fires = Vec::new();
    for task in from_a {
        let run = tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the run ends")
            .unwrap();
        assert_eq!(run.outcome, RunOutcome::Completed, "{run:?}");
        assert_eq!(run.session_id, id);
        fires.push(run.fire_time);
    }
    fires.sort();
    fires.dedup();
    assert_eq!(fires.len(), 5, "{fires:?}");
    // a stops: b takes the next fire, hosting the session.
    drop(session);
    a.shutdown().await;
    clock.advance(Span::seconds(1));
    let runs = runs_of(&b, &settings).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, RunOutcome::Completed, "{runs:?}");
    let handle = b.hosted(&id).expect("b runs the session now");
    let events = schedule_events(&handle).await;
    assert_eq!(events.len(), 12, "{events:?}");
    assert!(
        !events
            .iter()
            .any(|(_, outcome, _)| *outcome == RunOutcome::Skipped)
    );
    b.shutdown().await;
    drop((a, b, handle));
    pair.drop_schema().await;
}

/// A run another process claims (a `new_session` one) reaches the creating session's log
/// through the relay, while the session runs elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn schedule_events_reach_a_session_run_elsewhere_on_postgres() {
    let pair = PostgresPair::open().await;
    let f = fixture(ASKING_AGENT);
    let a = host_on(Arc::clone(&pair.a), "a");
    let b = host_on(Arc::clone(&pair.b), "b");
    relay(&a).await;
    relay(&b).await;
    let session = create_session(&f, &a, "turns:\n  - say: ok\n").await;
    let clock = ManualClock::at(start());
    let request = every("1m", ScheduleTarget::NewSession, CatchUp::Once);
    schedule(pair.a.as_ref(), "away", session.id(), request, start(), 60).await;
    clock.advance(Span::minutes(1));
    let runs = runs_of(&b, &settings(&clock)).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, RunOutcome::Completed, "{runs:?}");
    assert!(b.hosted(session.id()).is_none(), "a still runs the session");
    assert_eq!(
        schedule_events(&session).await,
        [
            ("fired".to_string(), RunOutcome::Running, false),
            ("finished".to_string(), RunOutcome::Completed, false)
        ]
    );
    a.shutdown().await;
    b.shutdown().await;
    drop((a, b, session));
    pair.drop_schema().await;
}
