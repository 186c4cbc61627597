//! The web client's files, built into the binary when `web/app/dist` existed at build time,
//! served at `/`; any other path that is not a file of the client gets its `index.html`, so the
//! client's own routes (`/sessions/ID`) load the page. A binary built without the client serves
//! a page saying how to build it.

use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// Whether the web client is built into this binary.
pub const WEB_CLIENT_BUILT: bool = cfg!(qilin_web_app);

#[cfg(qilin_web_app)]
static CLIENT: include_dir::Dir<'_> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../web/app/dist");

/// The page of a binary built without the client.
const NOT_BUILT: &str = r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Qilin</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:4rem auto;padding:0 1rem}code{background:#8882;padding:.1em .3em;border-radius:3px}</style>
</head>
<body>
<h1>Qilin is running</h1>
<p>This <code>qilin</code> binary was built without the web client, so there is no page to show.
The API works: <code>/api/openapi.json</code> describes it (send the token as
<code>Authorization: Bearer TOKEN</code>).</p>
<p>To get the page, build the client and then Qilin, from the repository:</p>
<pre><code>npm --prefix web ci
npm --prefix web run build:app
cargo build -p qilin-cli</code></pre>
<p>The client is built into <code>web/app/dist</code>, which the Rust build embeds when it is there.</p>
</body>
</html>
"#;

/// The policy of every page: scripts and everything else from this server only.
const PAGE_POLICY: &str = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' \
                           'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; \
                           base-uri 'none'; form-action 'none'";

/// Serves a file of the client, or its `index.html`.
pub async fn serve(uri: Uri) -> Response {
    if uri.path().starts_with("/api/") {
        return crate::error::ApiError::new(
            StatusCode::NOT_FOUND,
            "no_such_route",
            format!(
                "no API route `{}`; `/api/openapi.json` lists them",
                uri.path()
            ),
        )
        .into_response();
    }
    file(uri.path().trim_start_matches('/'))
}

#[cfg(qilin_web_app)]
fn file(path: &str) -> Response {
    match CLIENT.get_file(path).filter(|_| !path.is_empty()) {
        Some(found) => {
            let mut response = found.contents().into_response();
            let headers = response.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(media_type(path)));
            // Vite names built assets by their hash: they never change under one name.
            let cache = if path.starts_with("assets/") {
                "public, max-age=31536000, immutable"
            } else {
                "no-cache"
            };
            headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
            headers.insert(
                CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(PAGE_POLICY),
            );
            response
        }
        None => match CLIENT.get_file("index.html") {
            Some(index) => page(index.contents()),
            None => page(NOT_BUILT.as_bytes()),
        },
    }
}

#[cfg(not(qilin_web_app))]
fn file(_path: &str) -> Response {
    page(NOT_BUILT.as_bytes())
}

/// An HTML page.
fn page(html: &'static [u8]) -> Response {
    let mut response = html.into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_POLICY),
    );
    response
}

/// The media type of a built file, by its extension.
#[cfg(qilin_web_app)]
fn media_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    match extension {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "wasm" => "application/wasm",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}
