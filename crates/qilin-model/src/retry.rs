use reqwest::header::HeaderMap;
use std::time::Duration;

/// How a network provider retries a request that failed before any of the answer streamed:
/// HTTP 429, HTTP 5xx and connection failures. A request is never sent again once part of
/// its answer was streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The most requests sent for one answer, the first included (at least 1).
    pub max_attempts: u32,
    /// The wait before the first retry; each retry after doubles it.
    pub initial_backoff: Duration,
    /// The longest computed wait (a `Retry-After` from the provider is honoured as given).
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1 for the first), exponential with jitter: a
    /// random duration between half and all of `initial_backoff * 2^(retry-1)`, capped at
    /// `max_backoff`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = retry.saturating_sub(1).min(20);
        let full = self
            .initial_backoff
            .saturating_mul(1u32 << exponent)
            .min(self.max_backoff);
        full.mul_f64(0.5 + fastrand::f64() / 2.0)
    }

    /// The wait before the next retry: the provider's `Retry-After` when it sent one, the
    /// jittered backoff otherwise.
    pub(crate) fn delay(&self, retry: u32, headers: &HeaderMap) -> Duration {
        retry_after(headers).unwrap_or_else(|| self.backoff(retry))
    }
}

/// The wait a response asks for: `retry-after-ms` (milliseconds) or `retry-after` (seconds).
/// An HTTP-date `retry-after` is not honoured (the backoff applies).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .and_then(|text| text.trim().parse::<f64>().ok())
            .filter(|value| value.is_finite() && *value >= 0.0)
    };
    if let Some(millis) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(millis / 1000.0));
    }
    number("retry-after").map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_within_its_jitter_and_stops_at_the_cap() {
        let policy = RetryPolicy {
            max_attempts: 6,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
        };
        for _ in 0..50 {
            let first = policy.backoff(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.backoff(3);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let tenth = policy.backoff(10);
            assert!(tenth >= Duration::from_millis(500) && tenth <= Duration::from_millis(1000));
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&dated), None);
        let policy = RetryPolicy::default();
        assert!(policy.delay(1, &dated) <= policy.initial_backoff);
    }
}
