use qilin_backoff::Backoff;
use reqwest::header::HeaderMap;
use std::time::{Duration, SystemTime};

/// How a network provider retries a request that failed before any of the answer streamed:
/// HTTP 429, HTTP 5xx and connection failures. A request is never sent again once part of
/// its answer was streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The most requests sent for one answer, the first included (at least 1).
    pub max_attempts: u32,
    /// The waits between attempts when the provider asks for none: from half to all of
    /// 500 ms before the first retry, doubling up to 30 s, by default.
    pub backoff: Backoff,
    /// The longest wait a provider's `Retry-After` may ask for: one asking for longer fails the
    /// request at once, saying what the provider asked.
    pub max_retry_after: Duration,
}

/// The longest `Retry-After` honoured by default.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            backoff: Backoff::new(Duration::from_millis(500), Duration::from_secs(30)).jittered(),
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
        }
    }
}

impl RetryPolicy {
    /// The wait before the next retry: the provider's `Retry-After` when it sent one, the
    /// jittered backoff otherwise; an `Err` with what the provider asked when that is longer
    /// than [`RetryPolicy::max_retry_after`].
    pub(crate) fn delay(&self, retry: u32, headers: &HeaderMap) -> Result<Duration, String> {
        match retry_after(headers, SystemTime::now()) {
            None => Ok(self.backoff.delay(retry)),
            Some(RetryAfter {
                wait: Some(wait), ..
            }) if wait <= self.max_retry_after => Ok(wait),
            Some(RetryAfter { asked, .. }) => Err(asked),
        }
    }
}

/// The wait a response asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RetryAfter {
    /// How long; `None` when longer than any duration (`Retry-After: 1e20`).
    pub(crate) wait: Option<Duration>,
    /// The header as the provider sent it, to quote.
    pub(crate) asked: String,
}

/// The wait a response asks for, as of `now`: `retry-after-ms` (milliseconds) or
/// `retry-after` (seconds, or an HTTP date; a date past is no wait). A value that is neither
/// (negative, not a number) asks for nothing: the backoff applies.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<RetryAfter> {
    let header = |name: &str| {
        let text = headers.get(name)?.to_str().ok()?.trim();
        Some((text, format!("`{name}: {text}`")))
    };
    if let Some((text, asked)) = header("retry-after-ms")
        && let Some(millis) = non_negative(text)
    {
        return Some(RetryAfter {
            wait: seconds(millis / 1000.0),
            asked,
        });
    }
    let (text, asked) = header("retry-after")?;
    if let Some(secs) = non_negative(text) {
        return Some(RetryAfter {
            wait: seconds(secs),
            asked,
        });
    }
    let date = httpdate::parse_http_date(text).ok()?;
    Some(RetryAfter {
        wait: Some(date.duration_since(now).unwrap_or(Duration::ZERO)),
        asked,
    })
}

/// A number of at least zero (infinity included).
fn non_negative(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|value| *value >= 0.0 && !value.is_nan())
}

/// `secs` seconds as a duration; `None` when no duration is that long.
fn seconds(secs: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn a_provider_asking_for_no_wait_gets_the_jittered_backoff() {
        let policy = RetryPolicy::default();
        for (retry, full_ms) in [(1, 500), (2, 1000), (3, 2000), (8, 30_000)] {
            let wait = policy.delay(retry, &HeaderMap::new()).unwrap();
            let full = Duration::from_millis(full_ms);
            assert!(wait >= full / 2 && wait <= full, "{retry}: {wait:?}");
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    fn wait(pairs: &[(&'static str, &'static str)]) -> Option<Option<Duration>> {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        retry_after(&headers(pairs), now).map(|asked| asked.wait)
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        assert_eq!(wait(&[]), None);
        assert_eq!(
            wait(&[("retry-after", "2")]),
            Some(Some(Duration::from_secs(2)))
        );
        assert_eq!(
            wait(&[("retry-after", "2"), ("retry-after-ms", "250")]),
            Some(Some(Duration::from_millis(250)))
        );
        assert_eq!(
            wait(&[("retry-after", "Wed, 21 Oct 2015 07:29:30 GMT")]),
            Some(Some(Duration::from_secs(90)))
        );
        // The two older date forms HTTP allows, and a date already past.
        assert_eq!(
            wait(&[("retry-after", "Wednesday, 21-Oct-15 07:28:05 GMT")]),
            Some(Some(Duration::from_secs(5)))
        );
        assert_eq!(
            wait(&[("retry-after", "Wed Oct 21 07:28:07 2015")]),
            Some(Some(Duration::from_secs(7)))
        );
        assert_eq!(
            wait(&[("retry-after", "Tue, 20 Oct 2015 07:28:00 GMT")]),
            Some(Some(Duration::ZERO))
        );
        // Nothing a duration can hold, or nothing at all.
        assert_eq!(wait(&[("retry-after", "1e20")]), Some(None));
        assert_eq!(wait(&[("retry-after", "inf")]), Some(None));
        assert_eq!(wait(&[("retry-after-ms", "1e300")]), Some(None));
        assert_eq!(wait(&[("retry-after", "-5")]), None);
        assert_eq!(wait(&[("retry-after", "NaN")]), None);
        assert_eq!(wait(&[("retry-after", "soon")]), None);
    }

    #[test]
    fn a_wait_longer_than_the_cap_is_refused_quoting_what_was_asked() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(1, &headers(&[("retry-after", "60")])),
            Ok(Duration::from_secs(60))
        );
        assert_eq!(
            policy.delay(1, &headers(&[("retry-after", "61")])),
            Err("`retry-after: 61`".to_string())
        );
        assert_eq!(
            policy.delay(1, &headers(&[("retry-after", "1e20")])),
            Err("`retry-after: 1e20`".to_string())
        );
        let backoff = policy
            .delay(1, &headers(&[("retry-after", "soon")]))
            .unwrap();
        assert!(backoff <= policy.backoff.initial);
    }
}
