//! Who may talk to the server: every request's `Host` must name the server (loopback names on
//! its port, which defeats DNS rebinding), its `Origin`, when present, must be the server's own
//! (no CORS, no cross-site request), and every API request must carry the token — as
//! `Authorization: Bearer TOKEN` (scripts) or as the `HttpOnly; SameSite=Strict` cookie the page
//! gets by trading the token from its URL's fragment (`POST /api/auth`).

use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::sync::Arc;

/// The token's length in bytes: 256 bits.
pub const TOKEN_BYTES: usize = 32;

/// Which `Host` values name this server.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hosts {
    /// `127.0.0.1`, `localhost` and `[::1]` on the server's port, plus these (the bound
    /// address of a non-loopback bind, names given with `--allow-host`).
    Named(Vec<String>),
    /// Any: the server listens on every interface, so no name can be known in advance; the
    /// token still guards every API request.
    Any,
}

/// The server's token and the names it answers to.
#[derive(Debug, Clone)]
pub struct Access {
    token: String,
    token_hash: [u8; 32],
    port: u16,
    hosts: Hosts,
}

impl Access {
    /// The access rules of a server listening on `bound` with `token`: loopback names on its
    /// port, the bound address when it is not loopback, and every name when it listens on all
    /// interfaces.
    pub fn new(token: impl Into<String>, bound: SocketAddr) -> Self {
        let token = token.into();
        let port = bound.port();
        let mut names: Vec<String> = ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|host| format!("{host}:{port}"))
            .collect();
        let hosts = if bound.ip().is_unspecified() {
            Hosts::Any
        } else {
            if !bound.ip().is_loopback() {
                names.push(bound.to_string());
            }
            Hosts::Named(names)
        };
        Access {
            token_hash: hash(&token),
            token,
            port,
            hosts,
        }
    }

    /// A new random token: 256 bits from the operating system's generator, as hex.
    pub fn random_token() -> Result<String, getrandom::Error> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes)?;
        Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
    }

    /// The token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cookie that carries the token: named after the port, since browsers share cookies
    /// across the ports of one host.
    pub fn cookie_name(&self) -> String {
        format!("qilin_token_{}", self.port)
    }

    /// The `Set-Cookie` value that hands the token to a page.
    pub(crate) fn cookie(&self) -> String {
        format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/",
            self.cookie_name(),
            self.token
        )
    }

    /// Whether `given` is the token, compared in constant time.
    pub(crate) fn is_token(&self, given: &str) -> bool {
        let given = hash(given);
        given
            .iter()
            .zip(self.token_hash.iter())
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
    }

    /// Checks `Host` and `Origin` (and `Sec-Fetch-Site`) of a request.
    fn check_origin(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let forbidden =
            |code: &str, message: String| ApiError::new(StatusCode::FORBIDDEN, code, message);
        let host = headers
            .get(HOST)
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| forbidden("bad_host", "the request has no `Host` header".into()))?;
        let known = match &self.hosts {
            Hosts::Any => true,
            Hosts::Named(names) => names.iter().any(|name| name.eq_ignore_ascii_case(host)),
        };
        if !known {
            return Err(forbidden(
                "bad_host",
                format!(
                    "`Host: {host}` does not name this server; use http://127.0.0.1:{}/",
                    self.port
                ),
            ));
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            if !origin.eq_ignore_ascii_case(&format!("http://{host}")) {
                return Err(forbidden(
                    "bad_origin",
                    format!(
                        "requests from `{origin}` are refused: only this server's own pages may call it"
                    ),
                ));
            }
        }
        if headers
            .get("sec-fetch-site")
            .is_some_and(|site| site.as_bytes() == b"cross-site")
        {
            return Err(forbidden(
                "bad_origin",
                "cross-site requests are refused: only this server's own pages may call it".into(),
            ));
        }
        Ok(())
    }

    /// Checks that a request carries the token, as a bearer token or as the cookie.
    fn check_token(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let bearer = headers
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        let cookie_name = self.cookie_name();
        let cookie = headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == cookie_name)
            .map(|(_, value)| value);
        match bearer.or(cookie) {
            Some(token) if self.is_token(token.trim()) => Ok(()),
            Some(_) => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "wrong_token",
                "the token is wrong; use the one `qilin serve` printed (or wrote to its token file)",
            )),
            None => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "no_token",
                "this API needs the server's token: send `Authorization: Bearer TOKEN`, or open \
                 the URL `qilin serve` printed",
            )),
        }
    }
}

fn hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// The paths that need no token: the page and its files (public build output), and the route
/// that trades the token for the cookie (it checks the token itself).
fn needs_token(path: &str) -> bool {
    path.starts_with("/api/") && path != "/api/auth"
}

/// The middleware every request passes: `Host`, `Origin`, then the token where needed; and
/// the headers every response carries.
pub(crate) async fn guard(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let checked = access.check_origin(request.headers()).and_then(|()| {
        if needs_token(request.uri().path()) {
            access.check_token(request.headers())
        } else {
            Ok(())
        }
    });
    let mut response = match checked {
        Ok(()) => next.run(request).await,
        Err(refused) => axum::response::IntoResponse::into_response(refused),
    };
    let headers = response.headers_mut();
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    if api {
        headers.insert("cache-control", HeaderValue::from_static("no-store"));
    }
    response
}
