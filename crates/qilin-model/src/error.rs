use std::time::Duration;

/// Why a model request failed.
///
/// `provider` is the provider's display name (`OpenAI-compatible`, `Anthropic`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an HTTP error; for 429 and 5xx after every retry was spent.
    #[error("{provider} answered HTTP {status}{}: {message}", attempts_note(*attempts))]
    Http {
        /// The provider.
        provider: &'static str,
        /// The HTTP status code.
        status: u16,
        /// The provider's error message from the response body (or the body itself).
        message: String,
        /// How many requests were sent.
        attempts: u32,
    },
    /// The provider answered HTTP 429 or 5xx asking to be retried later than Qilin waits
    /// ([`crate::RetryPolicy::max_retry_after`]).
    #[error(
        "{provider} answered HTTP {status} and asked to be retried after a wait ({asked}) longer \
         than the {} s Qilin waits; try again later. The provider said: {message}",
        limit.as_secs_f64()
    )]
    RetryAfterTooLong {
        /// The provider.
        provider: &'static str,
        /// The HTTP status code.
        status: u16,
        /// The header that asked for the wait, as the provider sent it.
        asked: String,
        /// The longest wait honoured.
        limit: Duration,
        /// The provider's error message from the response body (or the body itself).
        message: String,
    },
    /// The provider could not be reached (connection refused, DNS, TLS, connect timeout).
    #[error("could not reach {provider} at {url}{}: {reason}", attempts_note(*attempts))]
    Connect {
        /// The provider.
        provider: &'static str,
        /// The URL requested.
        url: String,
        /// What failed.
        reason: String,
        /// How many requests were tried.
        attempts: u32,
    },
    /// No byte arrived within the idle timeout.
    #[error(
        "{provider} sent nothing for {} s (the idle timeout); the answer was abandoned",
        timeout.as_secs_f64()
    )]
    IdleTimeout {
        /// The provider.
        provider: &'static str,
        /// The idle timeout that ran out.
        timeout: Duration,
    },
    /// The stream ended before the provider's end marker: the answer is incomplete.
    #[error("{provider} stream ended before {expected}: the answer is incomplete")]
    TruncatedStream {
        /// The provider.
        provider: &'static str,
        /// The end marker that never came (e.g. `data: [DONE]`).
        expected: &'static str,
    },
    /// A stream chunk could not be understood.
    #[error("{provider} sent a stream chunk Qilin cannot read ({reason}); the chunk: {chunk}")]
    InvalidChunk {
        /// The provider.
        provider: &'static str,
        /// What is wrong with it and what was expected.
        reason: String,
        /// The chunk, shortened if long.
        chunk: String,
    },
    /// The provider reported an error inside the stream.
    #[error("{provider} reported an error mid-stream: {kind}: {message}")]
    Provider {
        /// The provider.
        provider: &'static str,
        /// The error's type as the provider named it (e.g. `overloaded_error`).
        kind: String,
        /// The provider's message.
        message: String,
    },
    /// The stream failed while reading (the connection broke mid-body).
    #[error("{provider} stream failed while reading: {reason}")]
    Read {
        /// The provider.
        provider: &'static str,
        /// What failed.
        reason: String,
    },
    /// The provider is not configured well enough to send a request.
    #[error("{provider} is not configured: {reason}")]
    Config {
        /// The provider.
        provider: &'static str,
        /// What is missing or wrong, and how to fix it.
        reason: String,
    },
}

fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    }
}

/// Shortens a chunk for an error message, on a character boundary.
pub(crate) fn excerpt(text: &str) -> String {
    const LIMIT: usize = 300;
    if text.len() <= LIMIT {
        return text.to_owned();
    }
    let mut end = LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}
