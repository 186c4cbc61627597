use crate::error::excerpt;
use crate::{ModelError, RetryPolicy};
use reqwest::header::HeaderMap;
use serde_json::Value;
use std::time::Duration;

/// Network behaviour shared by the HTTP providers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// The longest wait to open a connection.
    pub connect_timeout: Duration,
    /// The longest wait for the response headers and then between two chunks of the stream.
    pub idle_timeout: Duration,
    /// How failures before any output are retried.
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
        }
    }
}

/// One provider's HTTP client: sends a JSON body, retrying as its [`RetryPolicy`] says.
#[derive(Debug)]
pub(crate) struct HttpTransport {
    provider: &'static str,
    client: reqwest::Client,
    settings: HttpSettings,
}

impl HttpTransport {
    /// A client for `provider` with `settings`.
    pub fn new(provider: &'static str, settings: HttpSettings) -> Result<Self, ModelError> {
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .redirect(same_origin_redirects())
            .build()
            .map_err(|err| ModelError::Config {
                provider,
                reason: format!("the HTTP client could not be built: {err}"),
            })?;
        Ok(HttpTransport {
            provider,
            client,
            settings,
        })
    }

    /// The provider's display name.
    pub fn provider(&self) -> &'static str {
        self.provider
    }

    /// The idle timeout between chunks.
    pub fn idle_timeout(&self) -> Duration {
        self.settings.idle_timeout
    }

    /// POSTs `body` (JSON) to `url` and returns the successful response, its body unread.
    /// HTTP 429, 5xx and connection failures are retried; other HTTP errors are returned at
    /// once with the provider's message.
    pub async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<reqwest::Response, ModelError> {
        let policy = &self.settings.retry;
        let max_attempts = policy.max_attempts.max(1);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let request = self
                .client
                .post(url)
                .headers(headers.clone())
                .header("content-type", "application/json")
                .body(body.to_vec())
                .send();
            let sent = tokio::time::timeout(self.settings.idle_timeout, request)
                .await
                .map_err(|_| ModelError::IdleTimeout {
                    provider: self.provider,
                    timeout: self.settings.idle_timeout,
                })?;
            let delay = match sent {
                Err(err) => {
                    if attempt >= max_attempts || !(err.is_connect() || err.is_timeout()) {
                        return Err(ModelError::Connect {
                            provider: self.provider,
                            url: url.to_owned(),
                            reason: error_chain(&err),
                            attempts: attempt,
                        });
                    }
                    policy.backoff.delay(attempt)
                }
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retryable = status == 429 || (500..600).contains(&status);
                    if !retryable || attempt >= max_attempts {
                        return Err(self.http_error(response, attempt).await);
                    }
                    match policy.delay(attempt, response.headers()) {
                        Ok(delay) => delay,
                        Err(asked) => {
                            let said = self.http_error(response, attempt).await;
                            return Err(ModelError::RetryAfterTooLong {
                                provider: self.provider,
                                status,
                                asked,
                                limit: policy.max_retry_after,
                                message: match said {
                                    ModelError::Http { message, .. } => message,
                                    other => other.to_string(),
                                },
                            });
                        }
                    }
                }
            };
            tokio::time::sleep(delay).await;
        }
    }

    async fn http_error(&self, response: reqwest::Response, attempts: u32) -> ModelError {
        let status = response.status().as_u16();
        let body = tokio::time::timeout(self.settings.idle_timeout, response.text()).await;
        let message = match body {
            Ok(Ok(text)) => error_message(&text),
            Ok(Err(err)) => format!("(the error body could not be read: {err})"),
            Err(_) => "(the error body did not arrive before the idle timeout)".to_owned(),
        };
        ModelError::Http {
            provider: self.provider,
            status,
            message,
            attempts,
        }
    }
}

/// Redirects followed only within the configured server's origin (scheme, host and port): the
/// key header (`x-api-key`, `Authorization`) never goes to another host, and a redirect that
/// leads elsewhere is an error naming where it led.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    const MAX_REDIRECTS: usize = 5;
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.stop();
        };
        if first.origin() != attempt.url().origin() {
            let message = format!(
                "the server redirected to `{}`, on another host; the API key is sent only to \
                 the configured server, so the redirect was not followed (set the base URL to \
                 where the API is served)",
                attempt.url()
            );
            attempt.error(message)
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// A configured base URL without its trailing `/`; it must be `http://` or `https://`.
pub(crate) fn base_url(provider: &'static str, url: &str) -> Result<String, ModelError> {
    let trimmed = url.trim().trim_end_matches('/');
    if trimmed.starts_with("http://") || trimmed.starts_with("https://") {
        Ok(trimmed.to_owned())
    } else {
        Err(ModelError::Config {
            provider,
            reason: format!("the base URL `{url}` is not an http:// or https:// URL"),
        })
    }
}

/// The provider's message in an error body: `error.message` (with `error.type` before it when
/// present), a bare `message`, or the body itself.
pub(crate) fn error_message(body: &str) -> String {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        let error = value.get("error").unwrap_or(&value);
        if let Value::String(text) = error {
            return text.clone();
        }
        let text = |key: &str| error.get(key).and_then(Value::as_str);
        if let Some(message) = text("message") {
            return match text("type").or_else(|| text("code")) {
                Some(kind) => format!("{kind}: {message}"),
                None => message.to_owned(),
            };
        }
    }
    let trimmed = body.trim();
    if trimmed.is_empty() {
        "(empty body)".to_owned()
    } else {
        excerpt(trimmed)
    }
}

/// An error with its sources, which is where reqwest keeps the useful part.
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_either_provider_shape() {
        let openai = r#"{"error":{"message":"Invalid 'messages[1]'","type":"invalid_request_error","param":null,"code":null}}"#;
        assert_eq!(
            error_message(openai),
            "invalid_request_error: Invalid 'messages[1]'"
        );
        let anthropic = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert_eq!(
            error_message(anthropic),
            "authentication_error: invalid x-api-key"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("  Bad Gateway\n"), "Bad Gateway");
        assert_eq!(error_message(""), "(empty body)");
    }
}
