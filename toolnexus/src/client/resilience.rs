//! Retries with backoff (SPEC §8 "Resilience"): which failures are retried, how long to
//! wait, and the host's `on_error` classifier. Aborts (run timeout, cancellation) never reach
//! this code — they drop the whole in-flight future instead.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::Duration;

/// Statuses retried by default.
const RETRYABLE: [u16; 5] = [429, 500, 502, 503, 504];

/// The widest `Retry-After` second count every port can hold exactly.
const RETRY_AFTER_MAX: u64 = 2_147_483_647;

/// Whether `status` is retried by default.
pub fn is_retryable_status(status: u16) -> bool {
    RETRYABLE.contains(&status)
}

/// `Retry-After` in its delay-seconds form only: a run of ASCII digits up to 2147483647,
/// `0` included ("retry now"). Anything else (HTTP-date, fractional, signed, empty) is `None`
/// and the caller falls back to backoff.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let s = value.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = s.parse().ok()?;
    (secs <= RETRY_AFTER_MAX).then(|| Duration::from_secs(secs))
}

/// Exponential backoff `base * 2^attempt` plus up to 100 ms of jitter.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX));
    let mut h = RandomState::new().build_hasher();
    h.write_u32(attempt);
    exp + Duration::from_millis(h.finish() % 100)
}

/// One failed LLM attempt, as the `on_error` classifier sees it.
#[derive(Clone, Debug)]
pub struct ErrorInfo {
    /// The HTTP status, on a non-2xx response.
    pub status: Option<u16>,
    /// The transport error text, when no response arrived.
    pub error: Option<String>,
    /// Zero-based attempt index.
    pub attempt: u32,
    /// Whether the default policy would retry (429/500/502/503/504/network).
    pub retryable: bool,
}

/// The classifier's verdict. A `Retry` is still bounded by `retries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorDecision {
    /// Try again (if the budget allows).
    Retry,
    /// Surface the error now.
    Fail,
}

/// The host's retry-vs-fail classifier.
pub type OnError = Arc<dyn Fn(&ErrorInfo) -> ErrorDecision + Send + Sync>;

/// The retry loop every provider call shares (the client's, the classifier's): `attempt(n)`
/// until it succeeds, the host's `on_error` (else [`default_decision`]) says fail, or
/// `retries` more attempts are spent. A failed attempt reports how the classifier sees it,
/// how long to wait before the next one, and the error to return if there is none.
pub(crate) async fn with_retries<T, E, Fut>(
    retries: u32,
    on_error: Option<&OnError>,
    mut attempt: impl FnMut(u32) -> Fut,
) -> Result<T, E>
where
    Fut: std::future::Future<Output = Result<T, (ErrorInfo, Duration, E)>>,
{
    let mut n = 0;
    loop {
        let (info, wait, error) = match attempt(n).await {
            Ok(reply) => return Ok(reply),
            Err(failure) => failure,
        };
        let decision = match on_error {
            Some(f) => f(&info),
            None => default_decision(&info),
        };
        if decision == ErrorDecision::Fail || n >= retries {
            return Err(error);
        }
        tracing::debug!(attempt = n, status = info.status, "request failed; retrying");
        tokio::time::sleep(wait).await;
        n += 1;
    }
}

/// The default classifier: retry exactly what is retryable.
pub(crate) fn default_decision(info: &ErrorInfo) -> ErrorDecision {
    if info.retryable {
        ErrorDecision::Retry
    } else {
        ErrorDecision::Fail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_only_in_delay_seconds_form() {
        assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("2147483647"),
            Some(Duration::from_secs(2_147_483_647))
        );
        for bad in [
            "",
            "1.5",
            "-1",
            "+3",
            "2147483648",
            "Wed, 21 Oct 2015 07:28:00 GMT",
            "٣",
        ] {
            assert_eq!(parse_retry_after(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn backoff_grows_and_stays_bounded() {
        let b = Duration::from_millis(500);
        assert!(backoff(b, 0) >= b && backoff(b, 0) < b + Duration::from_millis(100));
        assert!(backoff(b, 2) >= Duration::from_millis(2000));
        assert!(backoff(b, 40) >= Duration::from_secs(1));
    }

    #[test]
    fn default_set() {
        assert!(is_retryable_status(429) && is_retryable_status(503));
        assert!(!is_retryable_status(401) && !is_retryable_status(501) && !is_retryable_status(529));
    }
}
