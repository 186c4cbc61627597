//! The OpenAI-compatible Chat Completions provider: OpenAI, vLLM, Ollama, llama.cpp's server
//! and the other services that speak `/chat/completions` with `stream: true`.

mod body;
mod decode;

use crate::provider::ModelStream;
use crate::sse_stream::{PreparedRequest, sse_stream};
use crate::transport::HttpTransport;
use crate::{HttpSettings, ModelError, ModelProvider, ModelRequest};
use reqwest::header::{HeaderMap, HeaderValue};
use std::sync::Arc;

pub(crate) const PROVIDER: &str = "OpenAI-compatible";

/// Where and how to reach an OpenAI-compatible server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The API root, `/v1` included (e.g. `http://127.0.0.1:11434/v1`); requests go to
    /// `BASE/chat/completions`.
    pub base_url: String,
    /// The bearer token; local servers often need none.
    pub api_key: Option<String>,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl OpenAiConfig {
    /// OpenAI's own API root, used when `OPENAI_BASE_URL` is not set.
    pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

    /// A configuration for `base_url` with default timeouts and retries.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key,
            http: HttpSettings::default(),
        }
    }

    /// The configuration from `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The configuration from `OPENAI_BASE_URL` and `OPENAI_API_KEY` as `lookup` reads them
    /// (an empty value counts as unset). The key is required for OpenAI's own API and
    /// optional for any other base URL.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let read = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        let base_url = read("OPENAI_BASE_URL").unwrap_or_else(|| Self::DEFAULT_BASE_URL.into());
        let api_key = read("OPENAI_API_KEY");
        if api_key.is_none() && base_url.trim_end_matches('/') == Self::DEFAULT_BASE_URL {
            return Err(ModelError::Config {
                provider: PROVIDER,
                reason: "OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL to a \
                         compatible server that needs no key"
                    .into(),
            });
        }
        Ok(Self::new(base_url, api_key))
    }
}

/// Streams answers from `/chat/completions`.
#[derive(Debug)]
pub struct OpenAiProvider {
    transport: Arc<HttpTransport>,
    url: String,
    headers: HeaderMap,
}

impl OpenAiProvider {
    /// A provider for `config`; fails on a base URL that is not `http://` or `https://` or a
    /// key that cannot be sent as a header.
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let base = crate::transport::base_url(PROVIDER, &config.base_url)?;
        let mut headers = HeaderMap::new();
        if let Some(key) = &config.api_key {
            let value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                ModelError::Config {
                    provider: PROVIDER,
                    reason: "the API key contains characters an HTTP header cannot carry".into(),
                }
            })?;
            headers.insert("authorization", value);
        }
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        Ok(OpenAiProvider {
            transport: Arc::new(HttpTransport::new(PROVIDER, config.http)?),
            url: format!("{base}/chat/completions"),
            headers,
        })
    }
}

impl ModelProvider for OpenAiProvider {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let prepared = PreparedRequest {
            url: self.url.clone(),
            headers: self.headers.clone(),
            body: body::request_body(&request).to_string().into_bytes(),
        };
        sse_stream(
            self.transport.clone(),
            prepared,
            decode::ChatDecoder::default(),
        )
    }
}
