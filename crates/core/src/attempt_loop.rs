//! The loop of attempts of one request over a wire (wire.rs), as docs/guarantees.md#no-double-send
//! says: a GET is sent again after a failure on the wire and after 429/502/503/504 (honouring
//! `Retry-After`); any method is sent again when nothing of it was written; nothing that may have
//! been written is sent again unless it is a GET. Pauses back off; no pause or attempt goes past
//! the call's deadline; every attempt is logged (records.rs). What may be sent again is read from
//! the failure's phase, never from its message.

use std::time::{Duration, Instant, SystemTime};

use http::Method;

use crate::error::{Error, Result};
use crate::records::{self, Attempt};
use crate::wire::{Driver, Limits, Outgoing, Phase, Response, Wire, WireError};

/// The moment a call must be over by (`total_timeout`, docs/guarantees.md#deadline), and its length
/// for messages.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
    pub total: Duration,
}

impl Deadline {
    pub fn after(total: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + total,
            total,
        }
    }

    /// When a call still running is dropped. Attempts and pauses stop at `at` by themselves and
    /// return their error, which a token flight then hands to every waiter; this later bound
    /// only catches what does not (waiting for a flight led by another caller).
    pub fn backstop(&self) -> tokio::time::Instant {
        (self.at + Duration::from_millis(100)).into()
    }

    fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// The timeout error of a call cut at its deadline.
    pub fn exceeded(&self, method: &str, url: &str, outcome_unknown: bool) -> Error {
        Error::Timeout {
            method: method.to_owned(),
            url: url.to_owned(),
            message: format!(
                "{TOTAL_TIMEOUT} of {:.3} s exceeded",
                self.total.as_secs_f64()
            ),
            outcome_unknown,
        }
    }
}

/// The settings one request's attempts run with (the client's, or a derived client's).
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// One attempt, connect to last body byte.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Attempts after the first.
    pub retries: u32,
}

/// Send `request` on `wire` with the retry policy; `log` receives every attempt. No pause or
/// attempt goes past `deadline`: the last outcome is returned instead, and an attempt is cut
/// at it.
pub async fn send<W: Wire>(
    wire: &W,
    request: &Outgoing,
    policy: Policy,
    driver: Driver,
    log: &mut Vec<Attempt>,
    deadline: Deadline,
) -> Result<Response> {
    let idempotent = request.method == Method::GET;
    let mut attempt = 0;
    loop {
        let started = Instant::now();
        let started_unix_ns = records::unix_ns(SystemTime::now());
        // Logged before it is sent, completed after: a call dropped meanwhile (a cancelled
        // await, a KeyboardInterrupt) still tells of it (`records::cancel_pending`).
        log.push(Attempt {
            method: request.method.to_string(),
            url: records::redacted_url(&request.url),
            status: None,
            elapsed: Duration::ZERO,
            attempt: attempt + 1,
            error: None,
            started_unix_ns,
            ended_unix_ns: records::PENDING,
            token: false,
            resend_count: 0,
            error_kind: None,
            request_id: None,
        });
        let remaining = deadline.remaining();
        let cut = remaining < policy.timeout;
        let limits = Limits {
            timeout: remaining.min(policy.timeout),
            connect_timeout: policy.connect_timeout,
        };
        let exchanged = if limits.timeout.is_zero() {
            Err(WireError::Refused(Error::Timeout {
                method: request.method.as_str().to_owned(),
                url: request.url.as_str().to_owned(),
                message: format!("{TOTAL_TIMEOUT} exceeded before the request was sent"),
                outcome_unknown: false,
            }))
        } else {
            wire.exchange(request, driver, limits).await
        };
        // Each outcome with whether it may be sent again (before the deadline's say).
        let (mut outcome, again) = match exchanged {
            Ok(response) => {
                let again = idempotent && matches!(response.status, 429 | 502..=504);
                (Ok(response), again)
            }
            Err(WireError::Failed(failure)) => {
                // Nothing written: sending it again cannot duplicate it
                // (docs/guarantees.md#no-double-send). Perhaps written:
                // a GET only, and not after a timeout (docs/guarantees.md#no-double-send).
                let again = failure.phase == Phase::BeforeWrite || (idempotent && !failure.timeout);
                (
                    Err(failure.into_error(&request.method, request.url.as_str())),
                    again,
                )
            }
            // A GET whose gzip body did not decode; nothing else refused is sent again.
            Err(WireError::Refused(error)) => {
                let again = idempotent && matches!(error, Error::Transport { .. });
                (Err(error), again)
            }
        };
        if cut && deadline.remaining() < MIN_ATTEMPT {
            // The attempt ran to the call's deadline, not to `timeout` or `connect_timeout`:
            // say so, keeping what it knows of the outcome (a connect cut there sent nothing).
            if let Err(Error::Timeout {
                method,
                url,
                outcome_unknown,
                ..
            }) = &outcome
            {
                outcome = Err(deadline.exceeded(method, url, *outcome_unknown));
            }
        }
        let elapsed = started.elapsed();
        if let Some(logged) = log.last_mut() {
            logged.status = outcome.as_ref().ok().map(|r| r.status);
            logged.elapsed = elapsed;
            logged.error = outcome.as_ref().err().map(|e| e.to_string());
            logged.ended_unix_ns = records::end_ns(started_unix_ns, elapsed);
            logged.error_kind = outcome.as_ref().err().map(records::error_kind);
            logged.request_id = match &outcome {
                Ok(response) => response.request_id.clone(),
                Err(error) => error.request_id().map(str::to_owned),
            };
        }
        let wait = match &outcome {
            _ if !again || attempt >= policy.retries => None,
            // The pause the server asks for, however long: the call's deadline bounds it
            // (below), as the caller set it.
            Ok(response) => Some(retry_after(response).unwrap_or_else(|| backoff(attempt))),
            Err(_) => Some(backoff(attempt)),
        };
        match wait {
            // The pause and at least a moment of the next attempt must fit in the deadline.
            // (A `Retry-After` of u64::MAX seconds must not overflow the sum.)
            Some(delay) if delay.saturating_add(MIN_ATTEMPT) < deadline.remaining() => {
                tokio::time::sleep(delay).await;
                attempt += 1;
            }
            _ => return outcome,
        }
    }
}

/// An attempt with less time than this left before the deadline is not started.
const MIN_ATTEMPT: Duration = Duration::from_millis(50);
const TOTAL_TIMEOUT: &str = "total_timeout";

/// Exponential backoff with jitter: ~0.1 s, 0.2 s, 0.4 s ... capped at 5 s.
fn backoff(attempt: u32) -> Duration {
    let base = 0.1 * 2f64.powi(attempt.min(6) as i32);
    let jitter = rand::random::<f64>() * base * 0.25;
    Duration::from_secs_f64((base + jitter).min(5.0))
}

/// `Retry-After` as seconds or an HTTP date.
fn retry_after(response: &Response) -> Option<Duration> {
    let value = response.header("retry-after")?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http::header::{HeaderMap, HeaderValue};

    #[test]
    fn backoff_grows_and_is_capped() {
        assert!(
            backoff(0) >= Duration::from_millis(100) && backoff(0) < Duration::from_millis(130)
        );
        assert!(backoff(3) >= Duration::from_millis(800));
        assert!(backoff(30) <= Duration::from_secs(5));
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        let response = Response {
            status: 503,
            url: url::Url::parse("https://h/").unwrap(),
            headers,
            body: Bytes::new(),
            request_id: None,
            after_processed_write: false,
        };
        assert_eq!(retry_after(&response), Some(Duration::from_secs(3)));
        let mut dated = response.clone();
        let later = std::time::SystemTime::now() + Duration::from_secs(120);
        dated.headers.insert(
            "retry-after",
            HeaderValue::from_str(&httpdate::fmt_http_date(later)).unwrap(),
        );
        let wait = retry_after(&dated).unwrap();
        assert!(wait > Duration::from_secs(100) && wait <= Duration::from_secs(120));
    }
}
