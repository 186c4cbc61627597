//! Who may talk to the server, and bad input: each refused with a clear status and a JSON
//! body naming what is wrong, and the server keeps serving.

use crate::support::*;
use reqwest::Method;
use serde_json::json;

/// No token, a wrong one, a foreign `Host`, a foreign `Origin`, a cross-site fetch: refused.
/// The bearer token, the cookie the page gets for it, and the server's own origin: let in.
#[tokio::test]
async fn requests_without_the_token_or_from_elsewhere_are_refused() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    let server = world.serve().await;
    let plain = reqwest::Client::new();
    let sessions = server.url("/api/sessions");

    let none = Server::send(plain.get(&sessions)).await;
    assert_eq!(none.status, 401, "{none:?}");
    assert_eq!(none.code(), "no_token");
    let wrong = Server::send(plain.get(&sessions).bearer_auth("0".repeat(64))).await;
    assert_eq!(wrong.status, 401, "{wrong:?}");
    assert_eq!(wrong.code(), "wrong_token");
    let document = Server::send(plain.get(server.url("/api/openapi.json"))).await;
    assert_eq!(document.status, 401, "the document needs the token too");

    let rebound = Server::send(
        server
            .request(Method::GET, "/api/sessions")
            .header("Host", "attacker.example:80"),
    )
    .await;
    assert_eq!(rebound.status, 403, "{rebound:?}");
    assert_eq!(rebound.code(), "bad_host");
    let port = server.base.rsplit(':').next().unwrap();
    let other_port = Server::send(server.request(Method::GET, "/api/sessions").header(
        "Host",
        format!("127.0.0.1:{}", port.parse::<u16>().unwrap() ^ 1),
    ))
    .await;
    assert_eq!(other_port.status, 403, "another port is another server");
    let foreign = Server::send(
        server
            .request(Method::POST, "/api/sessions")
            .header("Origin", "http://evil.example")
            .json(&json!({})),
    )
    .await;
    assert_eq!(foreign.status, 403, "{foreign:?}");
    assert_eq!(foreign.code(), "bad_origin");
    let cross_site = Server::send(
        server
            .request(Method::GET, "/api/sessions")
            .header("Sec-Fetch-Site", "cross-site"),
    )
    .await;
    assert_eq!(cross_site.status, 403, "{cross_site:?}");
    let own = Server::send(
        server
            .request(Method::GET, "/api/sessions")
            .header("Origin", server.base.clone()),
    )
    .await;
    assert_eq!(own.status, 200, "{own:?}");

    // The page trades the token for an HttpOnly, SameSite=Strict cookie that lets it in.
    let refused = Server::send(
        plain
            .post(server.url("/api/auth"))
            .json(&json!({"token": "nope"})),
    )
    .await;
    assert_eq!(refused.status, 401, "{refused:?}");
    let traded = plain
        .post(server.url("/api/auth"))
        .json(&json!({"token": server.token}))
        .send()
        .await
        .unwrap();
    assert_eq!(traded.status(), 204);
    let cookie = traded.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let with_cookie = Server::send(plain.get(&sessions).header("Cookie", pair)).await;
    assert_eq!(with_cookie.status, 200, "{with_cookie:?}");
    let with_access = Server::send(
        plain
            .get(server.url("/api/openapi.json"))
            .bearer_auth(&server.token),
    )
    .await;
    assert_eq!(with_access.status, 200);
    assert_eq!(
        with_access.body["openapi"].as_str().map(|v| &v[..2]),
        Some("3.")
    );
    assert!(with_access.body["paths"]["/api/sessions/{id}/turns"].is_object());
    server.stop().await;
    world.finish().await;
}

/// Malformed JSON, a body that does not fit, not JSON at all, too large, unknown ids, a bad
/// `Last-Event-ID`, a path out of the workspace: each a clear 4xx with a JSON body.
#[tokio::test]
async fn bad_input_gets_a_clear_json_error_and_the_server_keeps_serving() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("tour.yaml", "turns:\n  - say: hello\n");
    std::fs::write(world.dir.path().join("secret.txt"), "outside the workspace").unwrap();
    let server = world.serve_with(|config| config.max_body = 4096).await;
    let session = server.create("tour.yaml").await;
    let turns = format!("/api/sessions/{session}/turns");

    let malformed = Server::send(
        server
            .request(Method::POST, &turns)
            .header("Content-Type", "application/json")
            .body("{\"prompt\": "),
    )
    .await;
    assert_eq!(malformed.status, 400, "{malformed:?}");
    assert_eq!(malformed.code(), "malformed_json");
    let misfit = server.post(&turns, json!({"prompt": 5})).await;
    assert_eq!(misfit.status, 400, "{misfit:?}");
    assert_eq!(misfit.code(), "invalid_body");
    assert!(
        misfit.body["message"]
            .as_str()
            .unwrap()
            .contains("`prompt`"),
        "the message names the field: {misfit:?}"
    );
    // A list or a scalar is not read field by field into the body's struct.
    for body in [
        json!([null, null]),
        json!(["hello", null]),
        json!("hello"),
        json!(7),
    ] {
        let refused = server.post("/api/sessions", body.clone()).await;
        assert_eq!(refused.status, 400, "{body}: {refused:?}");
        assert_eq!(refused.code(), "invalid_body", "{body}");
        assert!(
            refused.body["message"]
                .as_str()
                .unwrap()
                .contains("not an object"),
            "{refused:?}"
        );
    }
    // Well-formed, but naming what cannot be used: 422, saying what.
    let no_agent = server
        .post("/api/sessions", json!({"agentFile": "missing.agent"}))
        .await;
    assert_eq!(no_agent.status, 422, "{no_agent:?}");
    assert_eq!(no_agent.code(), "invalid_session");
    assert!(
        no_agent.body["message"]
            .as_str()
            .unwrap()
            .contains("missing.agent")
    );
    let no_workspace = server
        .post("/api/sessions", json!({"workspace": "no-such-folder"}))
        .await;
    assert_eq!(no_workspace.status, 422, "{no_workspace:?}");
    assert_eq!(no_workspace.code(), "invalid_workspace");
    let unknown_field = server
        .post(&turns, json!({"prompt": "x", "colour": 1}))
        .await;
    assert_eq!(unknown_field.status, 400, "{unknown_field:?}");
    let not_json = Server::send(server.request(Method::POST, &turns).body("hello")).await;
    assert_eq!(not_json.status, 415, "{not_json:?}");
    assert_eq!(not_json.code(), "not_json");
    let large = server
        .post(&turns, json!({"prompt": "x".repeat(8192)}))
        .await;
    assert_eq!(large.status, 413, "{large:?}");
    assert_eq!(large.code(), "body_too_large");

    let unknown = server
        .post("/api/sessions/nope/turns", json!({"prompt": "hi"}))
        .await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    assert_eq!(unknown.code(), "unknown_session");
    assert!(unknown.body["message"].as_str().unwrap().contains("nope"));
    let unknown_stream = server.get("/api/sessions/nope/events/stream").await;
    assert_eq!(unknown_stream.status, 404);
    let bad_last = Server::send(
        server
            .request(
                Method::GET,
                &format!("/api/sessions/{session}/events/stream"),
            )
            .header("Last-Event-ID", "twelve"),
    )
    .await;
    assert_eq!(bad_last.status, 400, "{bad_last:?}");
    assert_eq!(bad_last.code(), "invalid_last_event_id");
    let bad_after = server
        .get(&format!("/api/sessions/{session}/events?after=-1"))
        .await;
    assert_eq!(bad_after.status, 400, "{bad_after:?}");

    let text = |path: &str| {
        server
            .request(Method::GET, &format!("/api/sessions/{session}/files/text"))
            .query(&[("path", path.to_string())])
    };
    let shown = Server::send(text("notes.txt")).await;
    assert_eq!(shown.status, 200, "{shown:?}");
    assert_eq!(shown.body["text"], json!("first line\nsecond line\n"));
    assert_eq!(shown.body["totalLines"], json!(2));
    for escape in [
        "../secret.txt".to_string(),
        world.dir.path().join("secret.txt").display().to_string(),
        "/etc/passwd".to_string(),
    ] {
        let refused = Server::send(text(&escape)).await;
        assert_eq!(refused.status, 403, "{escape}: {refused:?}");
        assert_eq!(refused.code(), "path_refused", "{escape}");
        assert!(!refused.body.to_string().contains("outside the workspace\""));
    }
    std::os::unix::fs::symlink(
        world.dir.path().join("secret.txt"),
        world.workspace().join("link.txt"),
    )
    .unwrap();
    let linked = Server::send(text("link.txt")).await;
    assert_eq!(linked.status, 403, "a link leading out: {linked:?}");
    let missing = Server::send(text("missing.txt")).await;
    assert_eq!(missing.status, 404, "{missing:?}");
    std::fs::create_dir(world.workspace().join("folder")).unwrap();
    let folder = Server::send(text("folder")).await;
    assert_eq!(
        folder.status, 422,
        "a folder is not a file to show: {folder:?}"
    );
    assert_eq!(folder.code(), "not_a_file");
    let blank = Server::send(text(" \u{85}")).await;
    assert_eq!(blank.status, 400, "{blank:?}");
    assert_eq!(blank.code(), "invalid_file_path");
    let image = Server::send(
        server
            .request(Method::GET, &format!("/api/sessions/{session}/files/image"))
            .query(&[("path", "notes.txt")]),
    )
    .await;
    assert_eq!(image.status, 415, "{image:?}");

    // After all that, the server still serves.
    server.start_turn(&session, "hello").await;
    wait_for_events(&server, &session, |events| {
        events.last().is_some_and(finishes_turn)
    })
    .await;
    server.stop().await;
    world.finish().await;
}

/// The page loads without the token (it trades the token itself), on `/` and on the client's
/// own routes, under a policy that allows scripts from this server only; with the client built
/// in, its script is served with its media type and cached for good, else the page says how
/// to build it. An unknown API path is a JSON 404, never the page.
#[tokio::test]
async fn the_page_is_served_at_the_root_and_on_client_routes() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    let server = world.serve().await;
    let plain = reqwest::Client::new();
    let mut script = None;
    for path in ["/", "/sessions/some-id"] {
        let response = plain.get(server.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let headers = response.headers().clone();
        assert_eq!(
            headers["content-type"], "text/html; charset=utf-8",
            "{path}"
        );
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(policy.contains("default-src 'self'"), "{policy}");
        let html = response.text().await.unwrap();
        if qilin_server::WEB_CLIENT_BUILT {
            assert!(html.contains(r#"<div id="root">"#), "{html}");
            let at = html
                .find("/assets/")
                .expect("the page loads a built script");
            let end = html[at..].find('"').unwrap();
            script = Some(html[at..at + end].to_string());
        } else {
            assert!(html.contains("built without the web client"), "{html}");
        }
    }
    if let Some(script) = script {
        let response = plain.get(server.url(&script)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{script}");
        assert_eq!(
            response.headers()["content-type"],
            "text/javascript; charset=utf-8"
        );
        assert!(
            response.headers()["cache-control"]
                .to_str()
                .unwrap()
                .contains("immutable")
        );
    }
    let missing = Server::send(plain.get(server.url("/api/no-such-thing"))).await;
    assert_eq!(
        missing.status, 401,
        "the API needs the token before anything else"
    );
    let missing = server.get("/api/no-such-thing").await;
    assert_eq!(missing.status, 404, "{missing:?}");
    assert_eq!(missing.code(), "no_such_route");
    server.stop().await;
    world.finish().await;
}

/// A session's workspace, agent file and scripted model must lie under the server's workspace
/// or a folder it allows (`--allow-root`), links resolved: `/etc`, `..`, a link leading out and
/// a file beside the workspace are refused with 403 before anything runs, so no session serves
/// their files. Under the workspace, or an allowed folder, sessions are created as before.
#[tokio::test]
async fn sessions_are_confined_to_the_servers_folders() {
    let mut world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("tour.yaml", "turns:\n  - say: hello\n");
    let outside = world.dir.path().join("outside");
    let allowed = world.dir.path().join("allowed");
    for folder in [&outside, &allowed] {
        std::fs::create_dir_all(folder).unwrap();
        std::fs::write(folder.join("agent.agent"), ASKING_AGENT).unwrap();
        std::fs::write(folder.join("tour.yaml"), "turns:\n  - say: hello\n").unwrap();
        std::fs::write(folder.join("secret.txt"), "not for clients").unwrap();
    }
    std::os::unix::fs::symlink(&outside, world.workspace().join("link-out")).unwrap();
    std::fs::create_dir_all(world.workspace().join("sub")).unwrap();
    world.allowed_roots = vec![allowed.clone()];
    let server = world.serve().await;
    let script = format!("scripted:{}", world.workspace().join("tour.yaml").display());

    let refused = [
        json!({"workspace": "/etc", "model": script}),
        json!({"workspace": "..", "model": script}),
        json!({"workspace": "link-out", "model": script}),
        json!({"workspace": outside.to_str().unwrap(), "model": script}),
        json!({"agentFile": outside.join("agent.agent").to_str().unwrap(), "model": script}),
        json!({"agentFile": "link-out/agent.agent", "model": script}),
        json!({"model": format!("scripted:{}", outside.join("tour.yaml").display())}),
        json!({"model": "scripted:../outside/tour.yaml"}),
        json!({"model": "scripted:link-out/tour.yaml"}),
    ];
    for body in refused {
        let answer = server.post("/api/sessions", body.clone()).await;
        assert_eq!(answer.status, 403, "{body}: {answer:?}");
        assert_eq!(answer.code(), "outside_roots", "{body}");
        let message = answer.body["message"].as_str().unwrap();
        assert!(
            message.contains("lies outside the folders this server lets a client use")
                && !message.contains("--"),
            "{body}: {message}"
        );
    }
    let listed = server.get("/api/sessions").await;
    assert_eq!(listed.body["sessions"], json!([]), "nothing was created");

    let inside = server
        .post(
            "/api/sessions",
            json!({"workspace": "sub", "model": script}),
        )
        .await;
    assert_eq!(inside.status, 201, "{inside:?}");
    let elsewhere = server
        .post(
            "/api/sessions",
            json!({
                "workspace": allowed.to_str().unwrap(),
                "agentFile": "agent.agent",
                "model": "scripted:tour.yaml",
            }),
        )
        .await;
    assert_eq!(elsewhere.status, 201, "an allowed folder: {elsewhere:?}");
    let id = elsewhere.body["id"].as_str().unwrap();
    let file = server
        .get(&format!("/api/sessions/{id}/files/text?path=secret.txt"))
        .await;
    assert_eq!(file.status, 200, "{file:?}");
    server.stop().await;
    world.finish().await;
}

/// A session whose agent uses the MCP servers of a workspace's `.qilin/mcp.yaml` the user has
/// not trusted (this server keeps no answers: none is trusted) is refused with 403 before any
/// server starts.
#[tokio::test]
async fn a_session_using_untrusted_workspace_servers_is_refused() {
    let world = World::new(Backend::Sqlite, ASKING_AGENT);
    world.script("tour.yaml", "turns:\n  - say: hello\n");
    let workspace = world.workspace();
    let started = world.dir.path().join("started");
    std::fs::create_dir_all(workspace.join(".qilin")).unwrap();
    std::fs::write(
        workspace.join(".qilin/mcp.yaml"),
        format!(
            "mcp_servers:\n  probe:\n    command: sh\n    args: [-c, 'touch {}']\n",
            started.display()
        ),
    )
    .unwrap();
    std::fs::write(
        workspace.join("probe.agent"),
        "name: probe\ninstructions: Probe.\nmcp_servers: [probe]\n",
    )
    .unwrap();
    let server = world.serve().await;
    let refused = server
        .post(
            "/api/sessions",
            json!({"agentFile": "probe.agent", "model": "scripted:tour.yaml"}),
        )
        .await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(refused.code(), "untrusted_mcp_servers");
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.contains(".qilin/mcp.yaml declares MCP servers") && message.contains("probe: sh"),
        "{message}"
    );
    assert!(!started.exists(), "the server was never started");
    server.stop().await;
    world.finish().await;
}
