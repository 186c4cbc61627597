//! Extractors that refuse bad input with an [`ApiError`] (a JSON body naming what is wrong)
//! instead of axum's plain-text rejections, documented in the OpenAPI document as the axum
//! extractors they wrap.

use crate::error::ApiError;
use aide::OperationInput;
use aide::generate::GenContext;
use aide::openapi::Operation;
use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// A JSON body.
pub struct ApiJson<T>(pub T);

/// The query string.
pub struct ApiQuery<T>(pub T);

/// The path's parameters.
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let value = match Json::<serde_json::Value>::from_request(req, state).await {
            Ok(Json(value)) => value,
            Err(rejection) => return Err(json_rejection(rejection)),
        };
        // Every body the API takes is an object: a list or a scalar would otherwise be read
        // field by field into a struct (`[null, null]` as a session with every field absent).
        if !value.is_object() {
            return Err(ApiError::bad_request(
                "invalid_body",
                format!(
                    "the body is {}, not an object; send a JSON object with the route's fields",
                    json_kind(&value)
                ),
            ));
        }
        serde_path_to_error::deserialize(value)
            .map(ApiJson)
            .map_err(|err| {
                let path = err.path().to_string();
                let inner = err.into_inner();
                let at = match path.as_str() {
                    "." => String::new(),
                    path => format!(" at `{path}`"),
                };
                ApiError::bad_request(
                    "invalid_body",
                    format!("the body does not fit what this route takes{at}: {inner}"),
                )
            })
    }
}

/// What kind of JSON value `value` is, for a message.
fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    let status = rejection.status();
    let text = rejection.body_text();
    match rejection {
        JsonRejection::MissingJsonContentType(_) => ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "not_json",
            "the body must be JSON, sent with `Content-Type: application/json`",
        ),
        JsonRejection::JsonSyntaxError(_) => ApiError::bad_request(
            "malformed_json",
            format!("the body is not valid JSON: {text}"),
        ),
        JsonRejection::JsonDataError(_) => ApiError::bad_request(
            "invalid_body",
            format!("the body does not fit what this route takes: {text}"),
        ),
        _ if status == StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            "the body is larger than the server accepts; send less (a prompt of at most about 1 MiB)",
        ),
        _ => ApiError::new(status, "unreadable_body", text),
    }
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(ApiQuery(value)),
            Err(rejection) => Err(query_rejection(&rejection)),
        }
    }
}

fn query_rejection(rejection: &QueryRejection) -> ApiError {
    ApiError::bad_request(
        "invalid_query",
        format!("the query string does not fit: {}", rejection.body_text()),
    )
}

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(ApiPath(value)),
            Err(rejection) => Err(path_rejection(&rejection)),
        }
    }
}

fn path_rejection(rejection: &PathRejection) -> ApiError {
    ApiError::bad_request(
        "invalid_path",
        format!("the URL path does not fit: {}", rejection.body_text()),
    )
}

impl<T: JsonSchema> OperationInput for ApiJson<T> {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        Json::<T>::operation_input(ctx, operation);
    }
}

impl<T: JsonSchema> OperationInput for ApiQuery<T> {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        Query::<T>::operation_input(ctx, operation);
    }
}

impl<T: JsonSchema> OperationInput for ApiPath<T> {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        Path::<T>::operation_input(ctx, operation);
    }
}
