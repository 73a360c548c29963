//! The wire on reqwest (as published): pooled connections (pools.rs), each new one bounded by
//! its attempt (connect_deadline.rs), one timer for the attempt, the body gathered within
//! `max_response_size` and gzip decoded in any spelling (body.rs), and reqwest's errors told
//! apart by phase (`classify`).

mod body;
mod pools;

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH};

use crate::error::{Error, Result};
use crate::proxy::ProxySetting;
use crate::tls::Verify;
use crate::wire::{pairs, Driver, Limits, Outgoing, Phase, Response, Wire, WireError, WireFailure};
use body::{gunzip, is_gzip, Collected, Gunzip};
pub use pools::release_unused_here;

/// What the reqwest wire needs to know of the client's settings.
#[derive(Debug, Clone)]
pub struct WireSettings {
    pub verify: Verify,
    /// Part of the pool's key (clients built with another setting get their own connections);
    /// each attempt applies its own (`Limits::connect_timeout`).
    pub connect_timeout: Duration,
    pub proxy: ProxySetting,
    pub user_agent: HeaderValue,
    pub max_response_size: usize,
    /// Response headers whose first present value is the request id (API.md §11).
    pub request_id_headers: Arc<[HeaderName]>,
}

/// Sends one exchange on a pooled reqwest client; cheap to clone.
#[derive(Debug, Clone)]
pub struct ReqwestWire {
    lease: Arc<pools::PoolLease>,
    user_agent: HeaderValue,
    max_response_size: usize,
    request_id_headers: Arc<[HeaderName]>,
}

impl ReqwestWire {
    /// A wire on the pools for these settings; a bad CA bundle fails here.
    pub fn new(settings: WireSettings) -> Result<ReqwestWire> {
        let lease = pools::lease_for(&settings.verify, settings.connect_timeout, &settings.proxy)?;
        Ok(ReqwestWire {
            lease,
            user_agent: settings.user_agent,
            max_response_size: settings.max_response_size,
            request_id_headers: settings.request_id_headers,
        })
    }

    /// The first of `request_id_headers` present in `headers` (names ignore case).
    fn request_id(&self, headers: &HeaderMap) -> Option<String> {
        self.request_id_headers.iter().find_map(|name| {
            let value = headers.get(name)?;
            Some(String::from_utf8_lossy(value.as_bytes()).trim().to_owned())
        })
    }
}

impl Wire for ReqwestWire {
    async fn exchange(
        &self,
        request: &Outgoing,
        driver: Driver,
        limits: Limits,
    ) -> Result<Response, WireError> {
        let method = request.method.as_str();
        let url = request.url.as_str();
        if driver == Driver::ThisThread {
            // This thread's idle connections were not polled while it was away: one turn reads
            // the pending I/O events, the next runs the woken connection tasks, so a close the
            // server sent meanwhile is seen before the pool hands that connection out.
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
        }
        let client = pools::pooled_client(&self.lease, driver).map_err(WireError::Refused)?;
        let mut builder = client
            .request(request.method.clone(), request.url.clone())
            .headers(request.headers.clone())
            .header(reqwest::header::USER_AGENT, self.user_agent.clone());
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        // One timer for the whole attempt, ours rather than reqwest's `.timeout`: tokio's
        // `timeout_at` polls the request before its timer, so a connect cut near the attempt's
        // end (connect_deadline.rs: a connect error, nothing written) is seen as that even when
        // the thread wakes after both timers are due. reqwest checked its own timer first, and
        // a late wake-up (a loaded machine, an emulated CPU) made a never-sent POST "unknown".
        let ends = tokio::time::Instant::now() + limits.timeout;
        // Cut by that timer once the connection was up: the request may have been written.
        let cut = |phase| WireFailure {
            phase,
            timeout: true,
            detail: format!("no answer within {:.3} s", limits.timeout.as_secs_f64()),
        };
        let sending =
            crate::connect_deadline::within(limits.timeout, limits.connect_timeout, builder.send());
        let mut response = match tokio::time::timeout_at(ends, sending).await {
            Ok(sent) => sent.map_err(|e| classify(&e, false))?,
            Err(_) => return Err(cut(Phase::AwaitingHead).into()),
        };
        let limit = self.max_response_size;
        let status = response.status().as_u16();
        let mut headers = std::mem::take(response.headers_mut());
        let request_id = self.request_id(&headers);
        let too_large = |headers: &HeaderMap| {
            WireError::Refused(
                too_large(method, url, limit)
                    .with_response(status, pairs(headers))
                    .with_request_id(request_id.as_deref()),
            )
        };
        if let Some(length) = response.content_length() {
            if length > limit as u64 {
                return Err(too_large(&headers));
            }
        }
        let announced = response.content_length().unwrap_or(0);
        let mut body = Collected::Empty;
        loop {
            let chunk = match tokio::time::timeout_at(ends, response.chunk()).await {
                Ok(read) => read.map_err(|e| classify(&e, true))?,
                Err(_) => return Err(cut(Phase::ReadingBody).into()),
            };
            let Some(chunk) = chunk else { break };
            if body.len() + chunk.len() > limit {
                return Err(too_large(&headers));
            }
            body.push(chunk, announced);
        }
        let mut body = body.into_bytes();
        // reqwest decodes `gzip` spelled in lower case only; content codings ignore case
        // (RFC 9110 §8.4.1), so another spelling is decoded here.
        if is_gzip(&headers) {
            body = gunzip(&body, limit).map_err(|e| match e {
                Gunzip::TooLarge => too_large(&headers),
                // The response came whole: its outcome is known, whatever the method.
                Gunzip::Corrupt(detail) => WireError::Refused(Error::Transport {
                    method: method.to_owned(),
                    url: url.to_owned(),
                    message: format!("response body failed: gzip: {detail}"),
                    outcome_unknown: false,
                }),
            })?;
            headers.remove(CONTENT_ENCODING);
            headers.remove(CONTENT_LENGTH);
        }
        Ok(Response {
            status,
            url: request.url.clone(),
            headers,
            body,
            request_id,
            after_processed_write: false,
        })
    }
}

fn too_large(method: &str, url: &str, limit: usize) -> Error {
    Error::Protocol {
        method: Some(method.to_owned()),
        url: Some(url.to_owned()),
        message: format!("response body exceeds max_response_size ({limit} bytes)"),
        response: None,
    }
}

/// An error with its causes, without repeating a cause its text already holds.
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The phase of a reqwest failure, read from its kind and its causes, never from its text.
/// `reading_body`: it came while the body was read (the head had come).
fn classify(error: &reqwest::Error, reading_body: bool) -> WireFailure {
    // reqwest names the URL in its text; we name the request ourselves, once.
    let mut detail = describe(error);
    if let Some(u) = error.url() {
        detail = detail
            .replace(&format!(" ({u})"), "")
            .replace(u.as_str(), "<url>");
    }
    let phase = if reading_body || error.is_body() || error.is_decode() {
        Phase::ReadingBody
    } else if error.is_connect() || cause::<hyper::Error>(error).is_some_and(|e| e.is_canceled()) {
        // hyper cancels a request only when it hands it back unwritten (a pooled connection
        // that closed before the request went out, one not ready); hyper-util retries it on a
        // new connection when it can, and this is what is left when it could not.
        Phase::BeforeWrite
    } else if cause::<std::io::Error>(error)
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    {
        // EPIPE comes from a write only.
        Phase::Writing
    } else {
        // hyper does not say whether a failed write was the head's or the body's, nor tell it
        // from a read of the answer (its write errors have no public test): written, maybe.
        Phase::AwaitingHead
    };
    WireFailure {
        phase,
        timeout: error.is_timeout(),
        detail,
    }
}

/// The first cause of `error` (itself excluded) that is an `E`.
fn cause<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(found) = cause.downcast_ref::<E>() {
            return Some(found);
        }
        source = cause.source();
    }
    None
}
