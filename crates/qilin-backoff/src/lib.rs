//! Waits between retries that double after each failure, up to a cap: the one backoff every
//! Qilin crate that tries something again uses — a provider's request after HTTP 429 or 5xx
//! (jittered, so many clients failing together do not retry together), an MCP server's start,
//! a PostgreSQL listening connection.
//!
//! [`Backoff`] says how long the wait after `n` failures in a row is; [`Retries`] counts the
//! failures of one loop and waits on tokio's clock (so tests can run it on paused time).
//!
//! It is a crate of its own, with no Qilin dependency, because its users sit side by side in
//! the dependency graph (the store depends on nothing of Qilin's but the protocol, the model
//! providers and MCP on neither the store nor each other), and a backoff is no part of the
//! protocol.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::time::Duration;

/// Waits that start at `initial` and double after each further failure, up to `max`;
/// optionally jittered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The wait after the first failure.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
    /// Whether each wait is drawn at random between half and all of its length.
    pub jitter: bool,
}

impl Backoff {
    /// Waits from `initial`, doubling up to `max`, without jitter.
    pub const fn new(initial: Duration, max: Duration) -> Backoff {
        Backoff {
            initial,
            max,
            jitter: false,
        }
    }

    /// The same waits, each drawn at random between half and all of its length.
    pub const fn jittered(self) -> Backoff {
        Backoff {
            jitter: true,
            ..self
        }
    }

    /// The wait after `failures` failures in a row (0 counts as 1): `initial`, doubled for
    /// each failure after the first, at most `max`; with jitter, a random duration between
    /// half and all of that, in whole nanoseconds.
    pub fn delay(&self, failures: u32) -> Duration {
        // 2^31 times any wait of a nanosecond or more is past every cap worth having.
        let doublings = failures.saturating_sub(1).min(31);
        let full = self.initial.saturating_mul(1u32 << doublings).min(self.max);
        if !self.jitter {
            return full;
        }
        let nanos = u64::try_from(full.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(fastrand::u64(nanos / 2..=nanos))
    }

    /// A count of failures in a row, waiting as this backoff says.
    pub const fn retries(self) -> Retries {
        Retries {
            backoff: self,
            failures: 0,
        }
    }
}

/// The failures in a row of one loop that tries something until it works, and the waits they
/// earn.
#[derive(Debug, Clone)]
pub struct Retries {
    backoff: Backoff,
    failures: u32,
}

impl Retries {
    /// Counts one more failure; the wait before the next attempt.
    pub fn fail(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        self.backoff.delay(self.failures)
    }

    /// Counts one more failure and waits, on tokio's clock, before the next attempt.
    pub async fn wait(&mut self) {
        tokio::time::sleep(self.fail()).await;
    }

    /// The failures counted since the last success.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Counts a success: the next failure waits `initial` again.
    pub fn succeed(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::time::Instant;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn waits_double_from_the_first_and_stop_at_the_cap() {
        let backoff = Backoff::new(SECOND, Duration::from_secs(300));
        let waits: Vec<u64> = (1..=10).map(|n| backoff.delay(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]);
        assert_eq!(backoff.delay(0), SECOND, "no failure counts as one");
        assert_eq!(backoff.delay(u32::MAX), Duration::from_secs(300));
    }

    #[test]
    fn a_cap_past_every_wait_does_not_overflow() {
        let backoff = Backoff::new(Duration::MAX / 2, Duration::MAX);
        assert_eq!(backoff.delay(40), Duration::MAX);
    }

    #[test]
    fn jittered_waits_fall_between_half_and_all_of_theirs() {
        let backoff =
            Backoff::new(Duration::from_millis(100), Duration::from_millis(1000)).jittered();
        let within = |wait: Duration, low: u64, high: u64| {
            wait >= Duration::from_millis(low) && wait <= Duration::from_millis(high)
        };
        for _ in 0..50 {
            assert!(within(backoff.delay(1), 50, 100));
            assert!(within(backoff.delay(3), 200, 400));
            assert!(within(backoff.delay(10), 500, 1000));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_retrying_loop_waits_longer_after_each_failure_and_afresh_after_a_success() {
        let mut retries = Backoff::new(Duration::from_millis(100), SECOND).retries();
        let start = Instant::now();
        let mut waited = Vec::new();
        for _ in 0..5 {
            let before = Instant::now();
            retries.wait().await;
            waited.push(before.elapsed().as_millis());
        }
        assert_eq!(waited, [100, 200, 400, 800, 1000]);
        assert_eq!(retries.failures(), 5);
        assert_eq!(start.elapsed(), Duration::from_millis(2500));

        retries.succeed();
        assert_eq!(retries.failures(), 0);
        let before = Instant::now();
        retries.wait().await;
        assert_eq!(before.elapsed(), Duration::from_millis(100));
    }
}
