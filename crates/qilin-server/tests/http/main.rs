//! `qilin serve` over real HTTP: a server on 127.0.0.1, reqwest clients, Server-Sent Events
//! read by a real SSE parser, a real store (a SQLite file; the same suite on PostgreSQL), and
//! the scripted model.

mod connections;
mod faults;
mod goals;
mod loops;
mod reviews;
mod schedules;
mod security;
mod sessions;
mod support;

use support::Backend;

/// Runs the shared suite's `name` on both stores.
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    crate::sessions::$name(crate::Backend::Sqlite).await;
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    crate::sessions::$name(crate::Backend::Postgres).await;
                }
            )*
        }
    };
}

on_both_stores!(
    a_turn_followed_with_random_drops_arrives_exactly_once,
    retried_turns_start_once_and_a_second_prompt_is_refused,
    requests_are_answered_from_a_second_client_first_answer_wins,
    an_interrupt_cancels_open_requests,
    a_restart_mid_turn_keeps_history_and_the_conversation_goes_on,
    one_stream_follows_several_sessions_and_resumes_each,
    sessions_are_listed_newest_first_a_page_at_a_time,
    child_sessions_are_listed_under_their_parent,
    a_childs_approval_is_answered_from_the_parents_client,
    compact_summarises_between_turns_and_is_refused_while_one_runs,
    search_finds_recorded_text_and_refuses_bad_queries_clearly,
);

/// Goals over HTTP, and a restart of the server with a goal active, on the SQLite store.
mod goals_on_sqlite {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_goal_survives_a_restart_paused_with_its_usage_and_resumes() {
        crate::goals::a_goal_survives_a_restart_paused_with_its_usage_and_resumes(
            crate::Backend::Sqlite,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_goal_is_paused_and_cleared_over_http() {
        crate::goals::a_goal_is_paused_and_cleared_over_http(crate::Backend::Sqlite).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_is_started_listed_and_stopped_over_http() {
    loops::a_loop_is_started_listed_and_stopped_over_http(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_call_is_listed_and_allowed_over_http() {
    reviews::a_refused_call_is_listed_and_allowed_over_http(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_are_created_listed_and_deleted_over_http() {
    schedules::schedules_are_created_listed_and_deleted_over_http(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgres_share_a_live_session() {
    sessions::two_servers_on_one_database_share_a_live_session(Backend::Postgres).await;
}

/// `GET /api/lsp`: the workspace's language servers, as its `.qilin/lsp.yaml` configures them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_language_servers_of_the_workspace_are_listed() {
    let world = support::World::new(Backend::Sqlite, support::ASKING_AGENT);
    let config = world.workspace().join(".qilin");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("lsp.yaml"),
        "servers:\n  python:\n    command: no-such-python-server\n",
    )
    .unwrap();
    let server = world.serve().await;
    let status = server.get("/api/lsp").await;
    assert_eq!(status.status, 200, "{status:?}");
    let python = status.body["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["language"] == "python")
        .unwrap()
        .clone();
    assert_eq!(python["server"], "no-such-python-server");
    assert_eq!(python["state"], "not_installed");
    assert!(
        python["hint"].as_str().unwrap().contains("lsp.yaml"),
        "{python}"
    );
    // The test server runs its sessions without the sandbox (`no_sandbox`): so would the
    // language servers, and the status says so.
    assert_eq!(python["sandboxed"], false, "{python}");
    assert_eq!(python["network"], true, "{python}");

    std::fs::write(
        config.join("lsp.yaml"),
        "servers:\n  lua:\n    command: lua-ls\n",
    )
    .unwrap();
    let refused = server.get("/api/lsp").await;
    assert_eq!((refused.status, refused.code()), (422, "lsp_config"));
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("lsp.yaml:2"),
        "{refused:?}"
    );

    let document = server.get("/api/openapi.json").await;
    assert_eq!(
        document.body["paths"]["/api/lsp"]["get"]["operationId"],
        serde_json::json!("lspStatus")
    );
    server.stop().await;
    world.finish().await;
}
