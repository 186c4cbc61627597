//! Files of a session's workspace for the client: a text preview and an image loader. Each
//! path is resolved by the file tools' own resolver ([`Workspace`]), beneath a handle on the
//! workspace root, so exactly what the `read` tool refuses is refused here: a path outside the
//! workspace, `..` above it, a link leading out, a dangling link, anything but a regular file.

use crate::ServerState;
use crate::api::{FileQuery, SessionPath, TextFile};
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery};
use axum::Json;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use qilin_tool::{PathError, PathKind, Resolved, Workspace};
use std::io::Read;

/// The largest file previewed as text.
pub const MAX_TEXT_BYTES: u64 = 2 * 1024 * 1024;

/// The largest image served.
pub const MAX_IMAGE_BYTES: u64 = 32 * 1024 * 1024;

/// `GET /api/sessions/{id}/files/text`: a text file of the session's workspace, whole.
pub async fn text(
    State(state): State<ServerState>,
    ApiPath(session): ApiPath<SessionPath>,
    ApiQuery(query): ApiQuery<FileQuery>,
) -> Result<Json<TextFile>, ApiError> {
    let workspace = workspace_of(&state, &session.id).await?;
    let file = blocking(move || {
        let (resolved, bytes) = read_file(&workspace, &query.path, MAX_TEXT_BYTES)?;
        let shown = resolved.relative().to_string();
        if image_type(&bytes).is_some() {
            return Err(unshowable(format!(
                "`{shown}` is an image; load it from `…/files/image`"
            )));
        }
        if bytes[..bytes.len().min(8192)].contains(&0) {
            return Err(unshowable(format!(
                "`{shown}` is a binary file ({} bytes) and cannot be shown as text",
                bytes.len()
            )));
        }
        let size = bytes.len() as u64;
        let text = String::from_utf8(bytes).map_err(|err| {
            unshowable(format!(
                "`{shown}` is not UTF-8 text (invalid byte at offset {})",
                err.utf8_error().valid_up_to()
            ))
        })?;
        Ok(TextFile {
            language: qilin_tools::language_of(&shown).to_string(),
            total_lines: text.lines().count() as u64,
            path: shown,
            text,
            size,
        })
    })
    .await?;
    Ok(Json(file))
}

/// `GET /api/sessions/{id}/files/image`: a PNG, JPEG, GIF or WebP file of the session's
/// workspace, as it is.
pub async fn image(
    State(state): State<ServerState>,
    ApiPath(session): ApiPath<SessionPath>,
    ApiQuery(query): ApiQuery<FileQuery>,
) -> Result<Response, ApiError> {
    let workspace = workspace_of(&state, &session.id).await?;
    let (media_type, bytes) = blocking(move || {
        let (resolved, bytes) = read_file(&workspace, &query.path, MAX_IMAGE_BYTES)?;
        match image_type(&bytes) {
            Some(media_type) => Ok((media_type, bytes)),
            None => Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "not_an_image",
                format!(
                    "`{}` is not a PNG, JPEG, GIF or WebP image; preview text from `…/files/text`",
                    resolved.relative()
                ),
            )),
        }
    })
    .await?;
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; sandbox"),
    );
    Ok(response)
}

/// The workspace of session `id`.
async fn workspace_of(state: &ServerState, id: &str) -> Result<String, ApiError> {
    let info = state
        .store()
        .session(id)
        .await?
        .ok_or_else(|| ApiError::unknown_session(id))?;
    Ok(info.workspace)
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ApiError::internal(format!("reading the file stopped: {err}")))?
}

/// 422: the file exists but cannot be shown as asked.
fn unshowable(message: String) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "cannot_show", message)
}

/// Resolves `raw` beneath `workspace` and reads the regular file it names, up to `limit`
/// bytes.
fn read_file(workspace: &str, raw: &str, limit: u64) -> Result<(Resolved, Vec<u8>), ApiError> {
    let workspace = Workspace::open(std::path::Path::new(workspace)).map_err(refused)?;
    let resolved = workspace.resolve(raw).map_err(refused)?;
    let shown = resolved.relative().to_string();
    match resolved.kind() {
        PathKind::File => {}
        PathKind::Missing => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "no_such_file",
                format!("`{shown}` does not exist in the workspace"),
            ));
        }
        PathKind::Folder | PathKind::Special => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "not_a_file",
                format!("`{shown}` is not a regular file"),
            ));
        }
    }
    let failed = |err: std::io::Error| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "unreadable_file",
            format!("`{shown}` cannot be read: {err}"),
        )
    };
    let file = resolved.open_file().map_err(failed)?;
    let size = file.metadata().map_err(failed)?.len();
    if size > limit {
        return Err(unshowable(format!(
            "`{shown}` is {size} bytes; the largest shown here is {limit}"
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > limit {
        return Err(unshowable(format!(
            "`{shown}` grew past {limit} bytes while being read"
        )));
    }
    Ok((resolved, bytes))
}

/// A path the resolver refused, with its message.
fn refused(err: PathError) -> ApiError {
    let message = err.to_string();
    match err {
        PathError::Outside { .. }
        | PathError::SymlinkOut { .. }
        | PathError::Dangling { .. }
        | PathError::TooManyLinks { .. } => {
            ApiError::new(StatusCode::FORBIDDEN, "path_refused", message)
        }
        PathError::NotAFolder { .. } => {
            ApiError::new(StatusCode::NOT_FOUND, "no_such_file", message)
        }
        PathError::Io { .. } => ApiError::new(StatusCode::FORBIDDEN, "unreadable_file", message),
        PathError::Workspace { .. } => {
            ApiError::new(StatusCode::NOT_FOUND, "workspace_missing", message)
        }
        PathError::Empty => ApiError::bad_request("invalid_file_path", message),
    }
}

/// The media type of an image the loader serves, from its first bytes.
fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}
