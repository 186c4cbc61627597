//! The routes, and the OpenAPI document generated from them.

pub mod events;
pub mod files;
pub mod goals;
pub mod loops;
pub mod lsp;
pub mod reviews;
pub mod schedules;
pub mod search;
pub mod sessions;
pub mod turns;

use crate::ServerState;
use crate::api::{
    EventPage, Interrupted, OpenRequests, RequestResolved, SessionView, Snapshot, TextFile,
    TurnAccepted,
};
use crate::error::errors;
use aide::axum::ApiRouter;
use aide::axum::routing::{delete_with, get_with, post_with};
use aide::openapi::{
    MediaType, OpenApi, ReferenceOr, Response, SchemaObject, SecurityRequirement, SecurityScheme,
    StatusCode as DocStatus,
};
use aide::transform::{TransformOpenApi, TransformOperation};
use axum::Json;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use indexmap::IndexMap;
use qilin_protocol::ContextCompactedEvent;
use qilin_protocol::loops::LoopRecord;
use qilin_protocol::review::ReviewGrant;
use qilin_protocol::schedules::ScheduleRecord;
use std::sync::Arc;

/// The router of a server with `state`: every route, the OpenAPI document at
/// `/api/openapi.json`, the web client at `/`, and the checks every request passes.
pub fn app(state: ServerState) -> Router {
    aide::generate::extract_schemas(true);
    aide::generate::infer_responses(true);
    let mut api = OpenApi::default();
    let cookie = state.access().cookie_name();
    let max_body = state.inner.max_body;
    let access = Arc::clone(&state.inner.access);
    let documented = ApiRouter::new()
        .api_route(
            "/api/info",
            get_with(sessions::info, |op| {
                authed(op.id("info").summary("What this server runs"))
            }),
        )
        .api_route(
            "/api/auth",
            post_with(sessions::auth, |op| {
                let op = op
                    .id("auth")
                    .summary("Trade the token for the cookie")
                    .description(
                        "The page calls this with the token from its URL's fragment; the answer \
                         sets an `HttpOnly; SameSite=Strict` cookie that carries the token on \
                         every later request.",
                    )
                    .response_with::<204, (), _>(|r| r.description("The cookie is set."));
                let mut op = errors!(op, 400, 401, 403, 413, 415);
                op.inner_mut().security = vec![SecurityRequirement::default()];
                op
            }),
        )
        .api_route(
            "/api/sessions",
            get_with(sessions::list, |op| {
                authed(errors!(
                    op.id("listSessions")
                        .summary("Sessions, newest activity first, a page at a time"),
                    400
                ))
            })
            .post_with(sessions::create, |op| {
                authed(errors!(
                    op.id("createSession")
                        .summary("Create a session, running here")
                        .description(
                            "The workspace, agent file and `scripted:` model a request names \
                             must lie, links resolved, under the server's workspace or a folder \
                             it was started with `--allow-root`; anything else is refused with \
                             403 `outside_roots`.",
                        )
                        .response_with::<201, Json<SessionView>, _>(|r| {
                            r.description("The session, created.")
                        }),
                    400,
                    413,
                    415,
                    422,
                    503,
                    507
                ))
            }),
        )
        .api_route(
            "/api/search",
            get_with(search::search, |op| {
                authed(errors!(
                    op.id("searchSessions")
                        .summary("Hits over what the sessions recorded, best first, a page at a time")
                        .description(
                            "Every word of `q` must occur in a hit (taken literally: no \
                             character is an operator); hits with the words together as a \
                             phrase rank first. Prompts, the model's text, calls' tools, \
                             arguments, results and errors, and answers are searched; each hit \
                             names its session, turn, call and event `seq`, with a snippet \
                             marking each match as `«match»`. A query with no word, too long, \
                             or a malformed time or cursor is a 400 `invalid_query` or \
                             `invalid_cursor`.",
                        ),
                    400,
                    503
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}",
            get_with(sessions::read, |op| {
                authed(errors!(op.id("getSession").summary("A session and where it stands"), 404))
            })
            .patch_with(sessions::update, |op| {
                authed(errors!(
                    op.id("renameSession").summary("Rename a session"),
                    400,
                    404,
                    413,
                    415,
                    503
                ))
            })
            .delete_with(sessions::delete, |op| {
                authed(errors!(
                    op.id("deleteSession")
                        .summary("Delete a session and its events")
                        .response_with::<204, (), _>(|r| r.description("Deleted.")),
                    404,
                    409,
                    503
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/turns",
            post_with(turns::start, |op| {
                authed(errors!(
                    op.id("startTurn")
                        .summary("Start a turn")
                        .description(
                            "The turn runs to its end whether or not any client watches. A \
                             retried request with the same `clientTurnId` starts nothing new \
                             (`repeated: true`); a prompt while a turn runs is refused (409).",
                        )
                        .response_with::<202, Json<TurnAccepted>, _>(|r| {
                            r.description("The turn started (or had started already).")
                        }),
                    400,
                    404,
                    409,
                    413,
                    415,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/interrupt",
            post_with(turns::interrupt, |op| {
                authed(errors!(
                    op.id("interrupt")
                        .summary("Interrupt the running turn")
                        .response_with::<200, Json<Interrupted>, _>(|r| {
                            r.description("Whether a turn was running and was told to stop.")
                        }),
                    404,
                    409,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/compact",
            post_with(turns::compact, |op| {
                authed(errors!(
                    op.id("compact")
                        .summary("Summarise the conversation so far")
                        .description(
                            "The session's model writes a summary of the conversation (with no \
                             tools); it is recorded as `context.compacted` and from then on the \
                             model receives the system prompt, the summary, then what follows. \
                             Answers once the event is stored. Refused (409) while a turn runs, \
                             while another compaction does, and when no turn ran since the last \
                             one; an interrupt stops it (409 `interrupted`); a model failure \
                             changes nothing (502).",
                        )
                        .response_with::<200, Json<ContextCompactedEvent>, _>(|r| {
                            r.description("The summary, recorded.")
                        }),
                    404,
                    409,
                    502,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/schedules",
            get_with(schedules::list, |op| {
                authed(errors!(
                    op.id("listSchedules")
                        .summary("The session's schedules")
                        .description(
                            "Its scheduled tasks, deleted ones left out, newest first: each \
                             with its timing in words, next fire times and last run.",
                        ),
                    404
                ))
            })
            .post_with(schedules::create, |op| {
                authed(errors!(
                    op.id("createSchedule")
                        .summary("Schedule a prompt for the session")
                        .description(
                            "Exactly one of `cron` (five fields, read in `timezone`), `every` \
                             (\"15m\", at least a minute) and `at` (RFC 3339, in the future). \
                             422 for what cannot be honoured, saying what is wrong. The \
                             server's scheduler fires it, unattended.",
                        )
                        .response_with::<201, Json<ScheduleRecord>, _>(|r| {
                            r.description("The schedule, with its next fire times.")
                        }),
                    400,
                    404,
                    413,
                    415,
                    422
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/schedules/{scheduleId}",
            delete_with(schedules::delete, |op| {
                authed(errors!(
                    op.id("deleteSchedule")
                        .summary("Delete one of the session's schedules")
                        .description("It fires no more; a run under way finishes."),
                    404
                ))
            }),
        )
        .api_route(
            "/api/schedules",
            get_with(schedules::list_all, |op| {
                authed(errors!(
                    op.id("listAllSchedules")
                        .summary("Every schedule")
                        .description(
                            "The schedules of every session of the store, deleted ones left \
                             out, newest first.",
                        )
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/goal",
            get_with(goals::read, |op| {
                authed(errors!(
                    op.id("getGoal")
                        .summary("The session's goal")
                        .description(
                            "The latest goal, settled ones included (`goal` is null when the \
                             session never had one), as the session's `goal.created` and \
                             `goal.updated` events leave it.",
                        ),
                    404
                ))
            })
            .put_with(goals::set, |op| {
                authed(errors!(
                    op.id("setGoal")
                        .summary("Set the session's goal")
                        .description(
                            "Replaces a goal that is complete, blocked or cleared; 409 while one \
                             is active, paused or budget-limited. An idle session starts \
                             working on it at once, and goes on turn after turn until the goal \
                             is settled, paused, or its budget spent. `checks` names declared \
                             checks (409 `unknown_check` for one the session does not declare).",
                        ),
                    400,
                    404,
                    409,
                    413,
                    415,
                    422,
                    503,
                    504
                ))
            })
            .delete_with(goals::clear, |op| {
                authed(errors!(
                    op.id("clearGoal")
                        .summary("Clear the session's goal")
                        .description(
                            "Its running turn is interrupted and no turn follows. A cleared \
                             goal is returned as it is; 409 for a complete or blocked one, 404 \
                             when the session never had a goal.",
                        ),
                    404,
                    409,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/loops",
            get_with(loops::list, |op| {
                authed(errors!(
                    op.id("listLoops")
                        .summary("The session's loops")
                        .description(
                            "Every loop the session started, oldest first, each with one report \
                             per iteration, as its `loop.*` events leave it.",
                        ),
                    404
                ))
            })
            .post_with(loops::start, |op| {
                authed(errors!(
                    op.id("startLoop")
                        .summary("Start a loop")
                        .description(
                            "Runs `prompt` again and again, each iteration a fresh child \
                             session, until `until.checks` pass (or, with no check, the final \
                             answer holds `<promise>TEXT</promise>`), `maxIterations` ran, a \
                             budget is spent, it stalls, or it is stopped. Answers at once; \
                             the loop runs in the background. 400 for a check the session does \
                             not declare or a bound out of range.",
                        )
                        .response_with::<201, Json<LoopRecord>, _>(|r| {
                            r.description("The loop as it started (status running).")
                        }),
                    400,
                    404,
                    409,
                    413,
                    415,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/loops/{loopId}/stop",
            post_with(loops::stop, |op| {
                authed(errors!(
                    op.id("stopLoop")
                        .summary("Stop a loop")
                        .description(
                            "Its running iteration is interrupted (its calls end \
                             `interrupted`) and no other starts; answers with the loop as it \
                             ended. A loop that ended is returned as it is; 404 for an \
                             unknown loop.",
                        ),
                    404,
                    409,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/goal/pause",
            post_with(goals::pause, |op| {
                authed(errors!(
                    op.id("pauseGoal")
                        .summary("Pause the active goal")
                        .description(
                            "It takes effect at once: the running turn is interrupted (its calls \
                             end `interrupted`) and no turn follows until the goal is resumed. \
                             409 when the goal is not active.",
                        ),
                    404,
                    409,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/goal/resume",
            post_with(goals::resume, |op| {
                authed(errors!(
                    op.id("resumeGoal")
                        .summary("Resume a paused or budget-limited goal")
                        .description(
                            "Each bound given replaces the goal's (`{}` keeps the budget); a \
                             budget-limited goal resumes only when the new budget leaves room \
                             (409 otherwise). An idle session continues it at once. Given a \
                             bound, an active goal just takes the new budget.",
                        ),
                    400,
                    404,
                    409,
                    413,
                    415,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/events",
            get_with(events::page, |op| {
                authed(errors!(
                    op.id("listEvents")
                        .summary("A page of the session's events")
                        .response_with::<200, Json<EventPage>, _>(|r| {
                            r.description("The events after `after`, in order.")
                        }),
                    400,
                    404
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/events/stream",
            get_with(events::stream, |op| {
                authed(errors!(
                    event_stream(
                        op.id("streamEvents")
                            .summary("The session's events, stored then live, as Server-Sent Events")
                            .description(
                                "Each message's `id` is the event's `seq` and its `data` the \
                                 event. Resume with `Last-Event-ID` (browsers send it when they \
                                 reconnect) or `?after=`. A quiet stream sends `heartbeat` \
                                 events. The last message is `end`, its `data` a `StreamEnd` \
                                 saying why: `deleted` (do not reconnect), `stopping` (reconnect \
                                 after a pause) or `lagging` (the client read too slowly; \
                                 reconnect now, nothing was lost); or `error` on a failure \
                                 (reconnect to resume).",
                            )
                    ),
                    400,
                    404
                ))
            }),
        )
        .api_route(
            "/api/stream",
            get_with(events::multi, |op| {
                authed(errors!(
                    event_stream(
                        op.id("streamSessions")
                            .summary("The events of several sessions on one stream")
                            .description(
                                "Each message's `data` is `{sessionId, event}` and its `id` the \
                                 cursor of every session (`ID:SEQ,…`); reconnecting with it as \
                                 `Last-Event-ID` resumes every session where it was. A deleted \
                                 session's events end with an `end` message for it (a \
                                 `StreamEnd` with its `sessionId`); the stream itself ends with \
                                 an `end` without one (`stopping` or `lagging`).",
                            )
                    ),
                    400,
                    404
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/snapshot",
            get_with(sessions::snapshot, |op| {
                authed(errors!(
                    op.id("snapshot")
                        .summary("The call tree of the latest turns, with `headSeq`")
                        .response_with::<200, Json<Snapshot>, _>(|r| {
                            r.description("Turns folded up to `headSeq`: follow the events after it.")
                        }),
                    400,
                    404
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/requests",
            get_with(sessions::open_requests, |op| {
                authed(errors!(
                    op.id("openRequests")
                        .summary("The requests waiting for an answer")
                        .response_with::<200, Json<OpenRequests>, _>(|r| {
                            r.description("The open requests, in the order opened.")
                        }),
                    404
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/requests/{requestId}",
            post_with(turns::answer, |op| {
                authed(errors!(
                    op.id("answerRequest")
                        .summary("Answer an approval or a question")
                        .description("The first answer wins: a later one gets 409, and 410 once the request was cancelled.")
                        .response_with::<200, Json<RequestResolved>, _>(|r| {
                            r.description("The answer, as recorded.")
                        }),
                    400,
                    404,
                    409,
                    410,
                    413,
                    415,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/reviews",
            get_with(reviews::list, |op| {
                authed(errors!(
                    op.id("listReviews")
                        .summary("The calls the session's reviewer refused")
                        .description(
                            "Calls the reviewer model denied, or could not judge and that were \
                             refused, newest first (at most 50), each with its review and \
                             whether a person allowed it since.",
                        ),
                    404
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/reviews/{callId}/allow",
            post_with(reviews::allow, |op| {
                authed(errors!(
                    op.id("allowCall")
                        .summary("Allow a call the reviewer refused")
                        .description(
                            "Grants the next call of the same tool with the same canonical \
                             arguments in this session, once, without review. With `retry` \
                             (default true) a turn then asks the model to run it again (after \
                             the running turn, if one runs). 404 for an unknown call; 409 for \
                             a call the reviewer did not refuse.",
                        )
                        .response_with::<201, Json<ReviewGrant>, _>(|r| {
                            r.description("The grant, as recorded.")
                        }),
                    400,
                    404,
                    409,
                    413,
                    415,
                    422,
                    503,
                    504
                ))
            }),
        )
        .api_route(
            "/api/lsp",
            get_with(lsp::status, |op| {
                authed(errors!(
                    op.id("lspStatus")
                        .summary("The workspace's language servers")
                        .description(
                            "Each language's server: its command, its state (`not_installed`, \
                             `stopped`, `starting`, `indexing`, `ready`, `crashed`), its process \
                             id while it runs, its restarts, its progress while it indexes, its \
                             last error, and how to install it when it is not. 422 when the \
                             workspace's `.qilin/lsp.yaml` cannot be used.",
                        )
                        .response_with::<200, Json<qilin_protocol::lsp::LspStatusResponse>, _>(
                            |r| r.description("The servers, by language.")
                        ),
                    422
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/files/text",
            get_with(files::text, |op| {
                authed(errors!(
                    op.id("fileText")
                        .summary("A text file of the session's workspace, whole")
                        .response_with::<200, Json<TextFile>, _>(|r| r.description("The file.")),
                    400,
                    404,
                    422
                ))
            }),
        )
        .api_route(
            "/api/sessions/{id}/files/image",
            get_with(files::image, |op| {
                let op = op
                    .id("fileImage")
                    .summary("An image of the session's workspace, as it is");
                authed(errors!(image_response(op), 400, 404, 415, 422))
            }),
        );
    let router = documented.finish_api_with(&mut api, |doc| {
        // The `data` of the streams' `end` messages, named in their descriptions.
        aide::generate::in_context(|ctx| {
            ctx.schema.subschema_for::<crate::api::StreamEnd>();
        });
        describe(doc, &cookie)
    });
    let document: Arc<Vec<u8>> = Arc::new(serde_json::to_vec(&api).unwrap_or_default());
    let router: Router<ServerState> = router.route(
        "/api/openapi.json",
        get(move || {
            let document = Arc::clone(&document);
            async move {
                let mut response = document.as_ref().clone().into_response();
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
            }
        }),
    );
    router
        .fallback(crate::assets::serve)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(axum::middleware::from_fn_with_state(
            access,
            crate::auth::guard,
        ))
        .with_state(state)
}

/// Marks an operation as needing the token, and documents its refusals.
fn authed(op: TransformOperation<'_>) -> TransformOperation<'_> {
    errors!(op, 401, 403, 500)
        .security_requirement("bearer")
        .security_requirement("cookie")
}

/// Documents a Server-Sent Events response.
fn event_stream(mut op: TransformOperation<'_>) -> TransformOperation<'_> {
    let mut content = IndexMap::new();
    content.insert("text/event-stream".to_string(), MediaType::default());
    op.inner_mut()
        .responses
        .get_or_insert_default()
        .responses
        .insert(
            DocStatus::Code(200),
            ReferenceOr::Item(Response {
                description: "Server-Sent Events, until the client leaves.".into(),
                content,
                ..Response::default()
            }),
        );
    op
}

/// Documents an image response.
fn image_response(mut op: TransformOperation<'_>) -> TransformOperation<'_> {
    let mut content = IndexMap::new();
    for media in ["image/png", "image/jpeg", "image/gif", "image/webp"] {
        content.insert(
            media.to_string(),
            MediaType {
                schema: Some(SchemaObject {
                    json_schema: schemars::json_schema!({"type": "string", "format": "binary"}),
                    example: None,
                    external_docs: None,
                }),
                ..MediaType::default()
            },
        );
    }
    op.inner_mut()
        .responses
        .get_or_insert_default()
        .responses
        .insert(
            DocStatus::Code(200),
            ReferenceOr::Item(Response {
                description: "The image's bytes, with its media type.".into(),
                content,
                ..Response::default()
            }),
        );
    op
}

/// The document's title, description and security schemes.
fn describe<'a>(doc: TransformOpenApi<'a>, cookie: &str) -> TransformOpenApi<'a> {
    doc.title("Qilin")
        .version(env!("CARGO_PKG_VERSION"))
        .description(
            "Qilin's sessions over HTTP. Every event is committed with its session's `seq` \
             before any client sees it; a client resumes a stream from the last `seq` it saw.",
        )
        .security_scheme(
            "bearer",
            SecurityScheme::Http {
                scheme: "bearer".into(),
                bearer_format: Some("the token `qilin serve` printed".into()),
                description: Some("For scripts: `Authorization: Bearer TOKEN`.".into()),
                extensions: IndexMap::default(),
            },
        )
        .security_scheme(
            "cookie",
            SecurityScheme::ApiKey {
                location: aide::openapi::ApiKeyLocation::Cookie,
                name: cookie.to_string(),
                description: Some("For the page: set by `POST /api/auth`.".into()),
                extensions: IndexMap::default(),
            },
        )
}
