//! The session host: two processes (two hosts with their own owner names) over one store, leases
//! that keep a session in one of them, idle close, lost leases, recovery of abandoned sessions,
//! answers checked against the log, and the live tree.

mod support;

use futures_util::StreamExt;
use qilin_protocol::{Event, EventBody, FinishReason, RequestResolution};
use qilin_runtime::{
    CodeSandbox, HostError, LeaseTiming, ModelChoice, Placement, Runtime, SessionHandle,
    SessionHost,
};
use qilin_store::{EventStore, Lease, NewSession};
use qilin_tool::{RequestReply, ResolveError};
use std::sync::Arc;
use std::time::Duration;
use support::{Fixture, fixture};

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

/// Reads `notes.txt` (which asks first), then says done.
const READ_THEN_DONE: &str =
    "turns:\n  - calls: [{tool: read, args: {path: notes.txt}}]\n  - say: done\n";

/// Long enough for anything a test waits on.
const PATIENCE: Duration = Duration::from_secs(10);

/// A host named `owner` over the fixture's store, its sessions attended and unconfined.
fn host(f: &Fixture, owner: &str, timing: LeaseTiming) -> SessionHost {
    let store = Arc::clone(&f.store) as Arc<dyn EventStore>;
    let runtime = Runtime::new(store, CodeSandbox::InProcess);
    SessionHost::new(runtime, owner, timing, |builder| {
        builder.attended(true).no_sandbox(true)
    })
}

/// A new session of the fixture's agent answering from `script`, hosted by `host`. Its model is
/// a script file in the workspace, so another host can resume it.
async fn create(f: &Fixture, host: &SessionHost, script: &str) -> SessionHandle {
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

fn here(placement: Placement) -> SessionHandle {
    match placement {
        Placement::Here(handle) => handle,
        Placement::Elsewhere(owner) => panic!("runs in `{owner}`, not here"),
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The id of the first request `session` opens.
async fn first_request(session: &SessionHandle) -> String {
    let mut events = session.subscribe_from(0);
    loop {
        let event = tokio::time::timeout(PATIENCE, events.next())
            .await
            .expect("a request opens")
            .unwrap()
            .unwrap();
        if let EventBody::RequestOpened(opened) = event.body {
            return opened.request_id;
        }
    }
}

#[tokio::test]
async fn a_session_runs_in_the_one_host_holding_its_lease() {
    let f = fixture(ASKING_AGENT);
    let first = host(&f, "first", LeaseTiming::default());
    let second = host(&f, "second", LeaseTiming::default());
    let session = create(&f, &first, "turns:\n  - say: hello\n").await;
    let id = session.id().to_string();
    assert_eq!(first.hosted_count(), 1);

    match second.open(&id).await.unwrap() {
        Placement::Elsewhere(owner) => assert_eq!(owner, "first"),
        Placement::Here(_) => panic!("the second host took a session the first runs"),
    }
    let refused = second.delete(&id).await;
    assert!(
        matches!(&refused, Err(HostError::OwnedElsewhere { owner, .. }) if owner == "first"),
        "{refused:?}"
    );
    // No relay between them: a command for the other host cannot be passed on.
    let unrelayed = second.forward("first", &id, "{}").await;
    assert!(
        matches!(&unrelayed, Err(HostError::NoRelay { .. })),
        "{unrelayed:?}"
    );

    // Closed in the first, the session is resumed in the second on demand.
    assert!(first.close(&id).await);
    assert!(!first.close(&id).await, "closed once");
    let resumed = here(second.open(&id).await.unwrap());
    assert_eq!(resumed.id(), id);
    assert!(second.hosted(&id).is_some());
    match first.open(&id).await.unwrap() {
        Placement::Elsewhere(owner) => assert_eq!(owner, "second"),
        Placement::Here(_) => panic!("the first host took the session back"),
    }

    let unknown = second.open("no-such-session").await.err();
    assert!(
        matches!(&unknown, Some(HostError::UnknownSession(id)) if id == "no-such-session"),
        "{unknown:?}"
    );
    second.delete(&id).await.unwrap();
    assert_eq!(second.hosted_count(), 0);
    assert!(f.store.session(&id).await.unwrap().is_none());
}

#[tokio::test]
async fn callers_opening_a_session_at_once_get_one_resumed_session() {
    let f = fixture(ASKING_AGENT);
    let first = host(&f, "first", LeaseTiming::default());
    let session = create(&f, &first, READ_THEN_DONE).await;
    let id = session.id().to_string();
    assert!(first.close(&id).await);

    let second = host(&f, "second", LeaseTiming::default());
    let opening: Vec<_> = (0..8)
        .map(|_| {
            let second = second.clone();
            let id = id.clone();
            tokio::spawn(async move { here(second.open(&id).await.unwrap()) })
        })
        .collect();
    let mut handles = Vec::new();
    for opened in opening {
        handles.push(opened.await.unwrap());
    }
    assert_eq!(second.hosted_count(), 1);
    // Every caller drives the same session: a turn started through one is seen by all.
    let turn = handles[0].submit("read the notes", None).unwrap();
    for handle in &handles {
        assert_eq!(handle.running_turn().as_deref(), Some(turn.turn_id()));
    }
    second.shutdown().await;
    assert_eq!(second.hosted_count(), 0);
    assert_eq!(
        f.store
            .acquire_lease(&id, "third", Duration::from_secs(5))
            .await
            .unwrap(),
        Lease::Acquired,
        "shutting down gives the lease up"
    );
}

#[tokio::test]
async fn an_idle_session_is_closed_and_its_lease_given_up() {
    let f = fixture(ASKING_AGENT);
    let timing = LeaseTiming {
        ttl: Duration::from_millis(300),
        idle_close: Duration::from_millis(200),
    };
    let first = host(&f, "first", timing);
    let session = create(&f, &first, "turns:\n  - say: hello\n").await;
    let id = session.id().to_string();
    eventually("the idle session is closed", || first.hosted_count() == 0).await;
    let second = host(&f, "second", LeaseTiming::default());
    here(second.open(&id).await.unwrap());
}

#[tokio::test]
async fn a_session_waiting_for_an_answer_is_not_idle() {
    let f = fixture(ASKING_AGENT);
    let timing = LeaseTiming {
        ttl: Duration::from_millis(300),
        idle_close: Duration::from_millis(200),
    };
    let first = host(&f, "first", timing);
    let session = create(&f, &first, READ_THEN_DONE).await;
    let turn = session.submit("read the notes", None).unwrap();
    let request = first_request(&session).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(first.hosted(session.id()).is_some(), "kept while it waits");
    first
        .resolve(&session, &request, RequestReply::Approve, "test")
        .await
        .unwrap();
    assert_eq!(turn.finished().await.reason, FinishReason::Completed);
    eventually("closed once idle", || first.hosted_count() == 0).await;
}

#[tokio::test]
async fn a_session_whose_lease_was_taken_stops_running_here() {
    let f = fixture(ASKING_AGENT);
    let timing = LeaseTiming {
        ttl: Duration::from_millis(300),
        idle_close: Duration::from_secs(60),
    };
    let first = host(&f, "first", timing);
    let session = create(&f, &first, "turns:\n  - say: hello\n").await;
    let id = session.id().to_string();
    // Another process takes the lease (as when this one stalled past it).
    f.store.release_lease(&id, "first").await.unwrap();
    assert_eq!(
        f.store
            .acquire_lease(&id, "thief", Duration::from_secs(60))
            .await
            .unwrap(),
        Lease::Acquired
    );
    eventually("the session stops running here", || {
        first.hosted(&id).is_none()
    })
    .await;
    match first.open(&id).await.unwrap() {
        Placement::Elsewhere(owner) => assert_eq!(owner, "thief"),
        Placement::Here(_) => panic!("taken back from the lease holder"),
    }
}

fn event(seq: u64, body: EventBody) -> Event {
    Event {
        seq,
        time: "2026-01-01T00:00:00Z".into(),
        body,
    }
}

/// A session whose log stops mid-turn, leased by `owner` for `ttl`.
async fn stopped_mid_turn(f: &Fixture, id: &str, owner: &str, ttl: Duration) {
    f.store
        .create_session(NewSession {
            id: id.into(),
            workspace: f.workspace().display().to_string(),
            agent: "asker".into(),
            agent_file: None,
            model: "scripted:none.yaml".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            parent_session_id: None,
            parent_call_id: None,
        })
        .await
        .unwrap();
    f.store
        .append(
            id,
            &[event(
                1,
                EventBody::TurnStarted {
                    turn_id: "t1".into(),
                    prompt: "go".into(),
                    client_turn_id: None,
                },
            )],
        )
        .await
        .unwrap();
    assert_eq!(
        f.store.acquire_lease(id, owner, ttl).await.unwrap(),
        Lease::Acquired
    );
}

#[tokio::test]
async fn sessions_left_running_by_a_dead_process_are_closed_as_interrupted() {
    let f = fixture(ASKING_AGENT);
    stopped_mid_turn(&f, "dead", "gone", Duration::from_millis(1)).await;
    stopped_mid_turn(&f, "alive", "elsewhere", Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_millis(5)).await;

    let host = host(&f, "here", LeaseTiming::default());
    let closed = host.recover_abandoned().await.unwrap();
    assert!(closed > 0, "the dead process's turn is closed");
    let dead = f.store.read("dead", 0, 100).await.unwrap();
    assert!(
        matches!(
            &dead.last().unwrap().body,
            EventBody::TurnFinished {
                reason: FinishReason::Interrupted,
                ..
            }
        ),
        "{dead:?}"
    );
    // The lease was taken only to recover it, and given back.
    assert_eq!(host.hosted_count(), 0);
    assert_eq!(
        f.store
            .acquire_lease("dead", "next", Duration::from_secs(5))
            .await
            .unwrap(),
        Lease::Acquired
    );
    // A session whose process is alive (its lease held) is left alone.
    assert_eq!(f.store.read("alive", 0, 100).await.unwrap().len(), 1);
    assert_eq!(host.recover_abandoned().await.unwrap(), 0, "nothing left");
}

#[tokio::test]
async fn answers_come_back_as_recorded_and_refusals_say_how_the_log_ended_the_request() {
    let f = fixture(ASKING_AGENT);
    let first = host(&f, "first", LeaseTiming::default());
    let session = create(&f, &first, READ_THEN_DONE).await;
    let id = session.id().to_string();
    let turn = session.submit("read the notes", None).unwrap();
    let request = first_request(&session).await;
    let recorded = first
        .resolve(&session, &request, RequestReply::Approve, "web:tab")
        .await
        .unwrap();
    assert_eq!(recorded.request_id, request);
    assert_eq!(recorded.resolution, RequestResolution::Approved);
    assert_eq!(recorded.resolved_by, "web:tab");
    assert_eq!(turn.finished().await.reason, FinishReason::Completed);
    let again = first
        .resolve(&session, &request, RequestReply::Approve, "web:late")
        .await;
    assert!(
        matches!(&again, Err(HostError::Resolve(ResolveError::Ended { ended: "approved", resolved_by, .. })) if resolved_by == "web:tab"),
        "{again:?}"
    );

    // In another process, the request was never open: the log says who answered it.
    assert!(first.close(&id).await);
    let second = host(&f, "second", LeaseTiming::default());
    let resumed = here(second.open(&id).await.unwrap());
    let late = second
        .resolve(&resumed, &request, RequestReply::Approve, "web:other")
        .await;
    assert!(
        matches!(&late, Err(HostError::Resolve(ResolveError::Ended { ended: "approved", resolved_by, .. })) if resolved_by == "web:tab"),
        "{late:?}"
    );
    let unknown = second
        .resolve(&resumed, "req-99", RequestReply::Approve, "web:other")
        .await;
    assert!(
        matches!(&unknown, Err(HostError::Resolve(ResolveError::Unknown(id))) if id == "req-99"),
        "{unknown:?}"
    );

    // The live tree, read through either host, is the session's log folded.
    let (head, turns, active) = second
        .tree(&id, |live| {
            (live.head_seq, live.tree.turns.len(), live.active_turn())
        })
        .await
        .unwrap();
    assert_eq!(head, resumed.committed_head());
    assert_eq!((turns, active), (1, None));
    let from_first = first.tree(&id, |live| live.tree.clone()).await.unwrap();
    assert_eq!(from_first, resumed.snapshot().await.unwrap().tree);
}

/// A lead starting a background child that sleeps, then ending its turn.
const LEAD_AGENT: &str = "\
name: lead
instructions: Delegate.
tools: [agent, agent_wait]
skills:
  available: []
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_subagent_is_held_by_the_host_never_recovered_or_resumed_twice() {
    let f = fixture(LEAD_AGENT);
    let sleeper = f.workspace().join("sleeper.yaml");
    std::fs::write(
        &sleeper,
        "turns:\n  - calls: [{tool: bash, args: {command: \"sleep 1.5\"}}]\n  - say: woke\n",
    )
    .unwrap();
    std::fs::write(
        f.workspace().join("sleeper.agent"),
        format!(
            "name: sleeper\ninstructions: Sleep.\ntools: [bash]\nmodel: scripted:{}\n",
            sleeper.display()
        ),
    )
    .unwrap();
    // Leases so short that the watch for abandoned sessions runs many times during the sleep,
    // and an idle close that would close the lead while its child runs if it were idle.
    let timing = LeaseTiming {
        ttl: Duration::from_millis(150),
        idle_close: Duration::from_millis(100),
    };
    let first = host(&f, "first", timing);
    let _watch = first.watch_abandoned();
    let lead = create(
        &f,
        &first,
        "turns:\n  - calls: [{tool: agent, args: {agent: sleeper, prompt: Sleep., description: Sleep, background: true}}]\n  - say: started\n",
    )
    .await;
    let turn = lead.submit("start it", None).unwrap();
    assert_eq!(turn.finished().await.reason, FinishReason::Completed);
    lead.flush().await.unwrap();
    let child = f
        .store
        .read(lead.id(), 0, 1000)
        .await
        .unwrap()
        .into_iter()
        .find_map(|event| match event.body {
            EventBody::AgentStarted(started) => Some(started.child_session_id),
            _ => None,
        })
        .expect("agent.started");

    // Opening the running child gives the session that runs it, held by this host.
    let opened = here(first.open(&child).await.unwrap());
    assert!(opened.running_turn().is_some(), "the running child itself");
    assert!(first.hosted(&child).is_some());
    let second = host(&f, "second", LeaseTiming::default());
    assert!(
        matches!(second.open(&child).await.unwrap(), Placement::Elsewhere(owner) if owner == "first"),
        "its lease is held"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        first.hosted(lead.id()).is_some(),
        "a lead whose child runs is not idle"
    );

    eventually("the child ends", || opened.running_turn().is_none()).await;
    opened.flush().await.unwrap();
    let log = f.store.read(&child, 0, 1000).await.unwrap();
    let ends: Vec<FinishReason> = log
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::TurnFinished { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        [FinishReason::Completed],
        "the running child was never closed as abandoned"
    );
}
