//! The Anthropic Messages provider (`/v1/messages` with `stream: true`).

mod body;
mod decode;

use crate::provider::ModelStream;
use crate::sse_stream::{PreparedRequest, sse_stream};
use crate::transport::HttpTransport;
use crate::{HttpSettings, ModelError, ModelProvider, ModelRequest};
use reqwest::header::{HeaderMap, HeaderValue};
use std::sync::Arc;

pub(crate) const PROVIDER: &str = "Anthropic";

/// Where and how to reach the Messages API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicConfig {
    /// The API root without `/v1` (e.g. `https://api.anthropic.com`); requests go to
    /// `BASE/v1/messages`.
    pub base_url: String,
    /// The key sent as `x-api-key`.
    pub api_key: String,
    /// `max_tokens` when the request has none (the API requires one).
    pub default_max_tokens: u32,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl AnthropicConfig {
    /// Anthropic's own API root, used when `ANTHROPIC_BASE_URL` is not set.
    pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

    /// A configuration with default `max_tokens` (8192), timeouts and retries.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        AnthropicConfig {
            base_url: base_url.into(),
            api_key: api_key.into(),
            default_max_tokens: 8192,
            http: HttpSettings::default(),
        }
    }

    /// The configuration from `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY`.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The configuration from `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY` as `lookup` reads
    /// them (an empty value counts as unset); the key is required.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let read = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        let base_url = read("ANTHROPIC_BASE_URL").unwrap_or_else(|| Self::DEFAULT_BASE_URL.into());
        let api_key = read("ANTHROPIC_API_KEY").ok_or_else(|| ModelError::Config {
            provider: PROVIDER,
            reason: "ANTHROPIC_API_KEY is not set".into(),
        })?;
        Ok(Self::new(base_url, api_key))
    }
}

/// Streams answers from `/v1/messages`.
#[derive(Debug)]
pub struct AnthropicProvider {
    transport: Arc<HttpTransport>,
    url: String,
    headers: HeaderMap,
    default_max_tokens: u32,
}

impl AnthropicProvider {
    /// A provider for `config`; fails on a base URL that is not `http://` or `https://` or a
    /// key that cannot be sent as a header.
    pub fn new(config: AnthropicConfig) -> Result<Self, ModelError> {
        let base = crate::transport::base_url(PROVIDER, &config.base_url)?;
        let key = HeaderValue::from_str(&config.api_key).map_err(|_| ModelError::Config {
            provider: PROVIDER,
            reason: "the API key contains characters an HTTP header cannot carry".into(),
        })?;
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", key);
        headers.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        Ok(AnthropicProvider {
            transport: Arc::new(HttpTransport::new(PROVIDER, config.http)?),
            url: format!("{base}/v1/messages"),
            headers,
            default_max_tokens: config.default_max_tokens,
        })
    }
}

impl ModelProvider for AnthropicProvider {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let prepared = PreparedRequest {
            url: self.url.clone(),
            headers: self.headers.clone(),
            body: body::request_body(&request, self.default_max_tokens)
                .to_string()
                .into_bytes(),
        };
        sse_stream(
            self.transport.clone(),
            prepared,
            decode::MessagesDecoder::default(),
        )
    }
}
