//! The record each attempt leaves for the DEBUG log line and the telemetry spans
//! (docs/guides/observability-otel.md): the wall-clock times a span is given, the class of the
//! exception the boundary raises for a failed attempt, which attempts were token requests and
//! how many times the caller's request had been sent before. The retries themselves are
//! attempt_loop.rs's.
//!
//! The transport fills an `Attempt` per HTTP attempt; the client marks the token requests and
//! numbers the resends; the bindings hand the records to Python once the call is over.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::Error;

/// What happened on one attempt, for the DEBUG log line the Python layer writes and the
/// telemetry spans.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub method: String,
    /// Without userinfo, signature query values redacted (`records::redacted_url`).
    pub url: String,
    pub status: Option<u16>,
    pub elapsed: Duration,
    pub attempt: u32,
    pub error: Option<String>,
    /// Wall clock, Unix nanoseconds: when the attempt started and ended.
    pub started_unix_ns: u64,
    pub ended_unix_ns: u64,
    /// A request to the token endpoint (not the caller's request).
    pub token: bool,
    /// How many times this request was sent before in this call (retries, replay, redirects).
    pub resend_count: u32,
    /// The exception class the boundary raises for this attempt's failure (no response came).
    pub error_kind: Option<&'static str>,
    /// The response's request id (docs/guides/errors.md#conflicts-rate-limits-and-request-ids), for
    /// the log line and the span.
    pub request_id: Option<String>,
}

/// Nanoseconds since the Unix epoch (what OpenTelemetry timestamps are); 0 before 1970.
pub fn unix_ns(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The end of an attempt that started at `started` (wall clock) and lasted `elapsed`
/// (monotonic clock: a wall clock stepped meanwhile does not make a negative span).
pub fn end_ns(started: u64, elapsed: Duration) -> u64 {
    let end = started.saturating_add(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
    end.min(PENDING - 1)
}

/// The bare name of the `recurring_payments` exception class the boundary raises for `error`
/// (`crates/python/src/errors.rs`): a span's `error.type` when no response came.
pub fn error_kind(error: &Error) -> &'static str {
    match error {
        Error::Configuration(_) => "ConfigurationError",
        Error::Transport { .. } => "TransportError",
        Error::Timeout { .. } => "TimeoutError",
        Error::Protocol { .. } => "ProtocolError",
        Error::Template(_) => "TemplateError",
        Error::UnknownVariable(_) => "TypeError",
        Error::LinkNotFound { .. } => "LinkNotFoundError",
        Error::Internal(_) => "InternalError",
        Error::Refused { .. } | Error::Provider { .. } => "ConfigurationError",
        Error::Http(failure) if failure.authentication => "AuthenticationError",
        Error::Http(_) => "HTTPError",
    }
}

/// `Attempt::ended_unix_ns` of an attempt under way (logged before it is sent).
pub const PENDING: u64 = u64::MAX;

/// The attempts of a call dropped before it ended (its await cancelled, a KeyboardInterrupt):
/// the one under way ends now, failed with `kind` (`error.type`: the class the caller got,
/// `CancelledError`, `KeyboardInterrupt`). The others ended before and stay as they are.
pub fn cancel_pending(log: &mut [Attempt], kind: &'static str) {
    let now = unix_ns(std::time::SystemTime::now());
    for attempt in log.iter_mut().filter(|a| a.ended_unix_ns == PENDING) {
        attempt.ended_unix_ns = now.max(attempt.started_unix_ns).min(PENDING - 1);
        attempt.elapsed = Duration::from_nanos(
            attempt
                .ended_unix_ns
                .saturating_sub(attempt.started_unix_ns),
        );
        attempt.error = Some(format!("{kind} before it ended"));
        attempt.error_kind = Some(kind);
    }
}

/// A call's attempts once it is over: its resends numbered, and the last attempt failed with
/// the call when the call failed on that attempt's answer (`fail_last`).
pub fn settle(log: &mut [Attempt], failure: Option<&Error>) {
    count_resends(log);
    if let Some(error) = failure {
        fail_last(log, error);
    }
}

/// A call that failed on the answer its last attempt got (a 2xx that is no JSON document, a
/// bad token response, one redirect too many): that attempt failed too, for its span (status
/// ERROR, `error.type` `ProtocolError`) and its log line. Other failures are their attempt's own.
pub fn fail_last(log: &mut [Attempt], error: &Error) {
    if let (Error::Protocol { .. }, Some(last)) = (error, log.last_mut()) {
        if last.error.is_none() {
            last.error = Some(error.to_string());
            last.error_kind = Some(error_kind(error));
        }
    }
}

/// The attempts in `log` were sent to the token endpoint.
pub fn mark_token_requests(log: &mut [Attempt]) {
    for attempt in log {
        attempt.token = true;
    }
}

/// Number the resends of one call: each attempt of the caller's request after the first (a
/// retry, the 401 replay, a redirect hop: the semantic conventions count them all) gets its
/// ordinal; a token request counts its own retries.
pub fn count_resends(log: &mut [Attempt]) {
    let mut sent = 0;
    for attempt in log {
        if attempt.token {
            attempt.resend_count = attempt.attempt.saturating_sub(1);
        } else {
            attempt.resend_count = sent;
            sent += 1;
        }
    }
}

/// `url` as a span's `url.full` may hold it: no user or password, and the values of query
/// parameters that are signatures or keys by convention replaced with `REDACTED` (the
/// semantic conventions' list).
pub fn redacted_url(url: &url::Url) -> String {
    let mut url = url.clone();
    crate::url::strip_userinfo(&mut url);
    let secret = |name: &str| {
        SECRET_QUERY_PARAMETERS
            .iter()
            .any(|s| s.eq_ignore_ascii_case(name))
    };
    if url.query_pairs().any(|(name, _)| secret(&name)) {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(name, value)| {
                let value = if secret(&name) {
                    "REDACTED".to_owned()
                } else {
                    value.into_owned()
                };
                (name.into_owned(), value)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    url.to_string()
}

/// Query parameters whose values are credentials (OpenTelemetry HTTP semantic conventions,
/// `url.full`; plus the OAuth ones).
const SECRET_QUERY_PARAMETERS: &[&str] = &[
    "AWSAccessKeyId",
    "Signature",
    "sig",
    "X-Goog-Signature",
    "access_token",
    "client_secret",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(token: bool, number: u32) -> Attempt {
        Attempt {
            method: "GET".into(),
            url: "https://h/".into(),
            status: Some(200),
            elapsed: Duration::ZERO,
            attempt: number,
            error: None,
            started_unix_ns: 0,
            ended_unix_ns: 0,
            token,
            resend_count: 0,
            error_kind: None,
            request_id: None,
        }
    }

    #[test]
    fn resends_are_counted_per_request() {
        // token (2 attempts), GET, GET retried, replay after a 401
        let mut log = vec![
            attempt(true, 1),
            attempt(true, 2),
            attempt(false, 1),
            attempt(false, 2),
            attempt(false, 1),
        ];
        count_resends(&mut log);
        let counts: Vec<u32> = log.iter().map(|a| a.resend_count).collect();
        assert_eq!(counts, [0, 1, 0, 1, 2]);
    }

    #[test]
    fn urls_lose_userinfo_and_signatures() {
        let url = url::Url::parse("https://u:p@h:8443/a?sig=abc&page=2&Signature=x").unwrap();
        assert_eq!(
            redacted_url(&url),
            "https://h:8443/a?sig=REDACTED&page=2&Signature=REDACTED"
        );
        let plain = url::Url::parse("https://h/a?x=%7Bb%7D").unwrap();
        assert_eq!(redacted_url(&plain), "https://h/a?x=%7Bb%7D");
    }

    #[test]
    fn wall_clock_end_follows_the_monotonic_length() {
        assert_eq!(end_ns(1_000, Duration::from_micros(2)), 3_000);
        // Saturated short of PENDING, which marks an attempt under way.
        assert_eq!(end_ns(u64::MAX, Duration::from_secs(1)), PENDING - 1);
    }

    #[test]
    fn a_dropped_call_ends_its_pending_attempt_as_the_caller_saw_it() {
        let mut log = vec![attempt(true, 1), attempt(false, 1)];
        log[1].status = None;
        log[1].started_unix_ns = unix_ns(std::time::SystemTime::now()) - 5_000_000;
        log[1].ended_unix_ns = PENDING;
        cancel_pending(&mut log, "CancelledError");
        assert_eq!(log[0].error_kind, None); // ended before: as it was
        assert_eq!(log[1].error_kind, Some("CancelledError"));
        assert!(log[1].elapsed >= Duration::from_millis(5));
        assert!(log[1].ended_unix_ns < PENDING && log[1].ended_unix_ns > log[1].started_unix_ns);
    }
}
