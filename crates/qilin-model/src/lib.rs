//! Qilin's model providers.
//!
//! A [`ModelRequest`] is the provider-neutral conversation: system prompt, tools (as
//! [`qilin_tool::DirectDefinition`]s), messages, and optionally how much to reason
//! ([`ReasoningSetting`]). A [`ModelProvider`] streams the answer as [`ModelEvent`]s: text
//! deltas (a refusal's text included), reasoning deltas, reasoning blocks to keep in the
//! history ([`Reasoning`]), tool calls (start, raw argument deltas, end), usage, and
//! `Finished` with the [`StopReason`] (`end_turn`, `tool_use`, `max_tokens`, `refusal`,
//! `content_filter`). Three providers:
//!
//! - [`OpenAiProvider`]: OpenAI-compatible Chat Completions (OpenAI, vLLM, Ollama,
//!   llama.cpp's server, ...), configured by `OPENAI_BASE_URL` / `OPENAI_API_KEY`.
//! - [`AnthropicProvider`]: Anthropic Messages, configured by `ANTHROPIC_BASE_URL` /
//!   `ANTHROPIC_API_KEY`, with cache markers on the system prompt and the last tool.
//! - [`ScriptedProvider`]: answers from a YAML script, offline (format in `SCRIPTED.md`).
//!
//! The network providers retry HTTP 429, 5xx and connection failures with jittered
//! exponential backoff honouring `Retry-After` (seconds or an HTTP date, up to
//! [`DEFAULT_MAX_RETRY_AFTER`]: a longer wait fails the request at once, saying what the
//! provider asked), only before any of the answer streamed; they
//! time out an idle stream; a stream that ends before its end marker is
//! [`ModelError::TruncatedStream`], never a silently short answer, and a stream that fails
//! after announcing usage yields that usage before its error. Chunk and block kinds a
//! decoder does not know are skipped with a `tracing` debug line. [`select_model`] turns
//! `openai:NAME`, `anthropic:NAME` or `scripted:FILE` into a provider.
//!
//! Tool results with images: Anthropic receives them as image blocks; Chat Completions tool
//! messages are text-only, so an image is described there as `[image: MEDIA_TYPE, N bytes]`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod anthropic;
mod compaction;
mod error;
mod event;
mod openai;
mod provider;
mod request;
mod response;
mod retry;
mod scripted;
mod select;
mod sse;
mod sse_stream;
mod transport;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use compaction::{
    COMPACT_INSTRUCTION, COMPACT_SYSTEM, SUMMARY_PREFIX, is_summary_request, starts_from_summary,
};
pub use error::ModelError;
pub use event::{ModelEvent, Reasoning, StopReason};
pub use openai::{OpenAiConfig, OpenAiProvider};
pub use provider::{ModelProvider, ModelStream};
pub use qilin_backoff::Backoff;
pub use request::{
    AssistantToolCall, Message, ModelRequest, ReasoningEffort, ReasoningSetting, ToolCallResult,
};
pub use response::ModelResponse;
pub use retry::{DEFAULT_MAX_RETRY_AFTER, RetryPolicy};
pub use scripted::{
    CHUNK_BYTES, SCRIPT_EXHAUSTED, Script, ScriptError, ScriptTurn, ScriptedCall, ScriptedProvider,
};
pub use select::{ModelSpec, SelectError, SelectedModel, select_model};
pub use transport::HttpSettings;
