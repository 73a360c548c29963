//! One exchange on the wire, behind one trait: send this request within these limits on this
//! driver, and get a whole response or a failure that says in which phase it happened. The
//! loop of attempts (attempt_loop.rs) decides from that phase what may be sent again, and
//! `WireFailure::into_error` is the one place that turns a failure into the error users see.
//!
//! The wire that ships is hyper-util's client (hyper_wire.rs), for both faces.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http::header::HeaderMap;
use http::Method;

use crate::error::{Error, HttpFailure};

/// One request as the wire sends it.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub method: Method,
    pub url: url::Url,
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
}

/// A complete response, body read whole (and within the size limit).
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// The URL that answered (the last hop's, after redirects).
    pub url: url::Url,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The first of the client's `request_id_headers` present
    /// (docs/guides/errors.md#conflicts-rate-limits-and-request-ids).
    pub request_id: Option<String>,
    /// A POST/PATCH of this call was processed by an earlier hop (answered 301/302/303): a
    /// failure found in this response leaves the call's outcome unknown
    /// (docs/guarantees.md#outcome).
    pub after_processed_write: bool,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Headers as (lower-case name, value) pairs; non-UTF-8 values are decoded lossily.
    pub fn header_pairs(&self) -> Vec<(String, String)> {
        pairs(&self.headers)
    }

    /// The body as text for error messages, at most `limit` bytes of it.
    pub fn body_text(&self, limit: usize) -> String {
        let end = self.body.len().min(limit);
        String::from_utf8_lossy(&self.body[..end]).into_owned()
    }

    pub fn into_failure(self, method: &str, authentication: bool) -> Error {
        Error::Http(Box::new(HttpFailure {
            status: self.status,
            method: method.to_owned(),
            url: self.url.to_string(),
            headers: self.header_pairs(),
            // Whole (it is in memory already, within `max_response_size`): a cut at 64 KiB
            // left a long validation error's `.json`, `.code` and `.message` as None.
            body: String::from_utf8_lossy(&self.body).into_owned(),
            authentication,
            request_id: self.request_id,
            outcome_unknown: false,
        }))
    }
}

/// Headers as (lower-case name, value) pairs; non-UTF-8 values are decoded lossily.
pub fn pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// A method whose request the server may have processed once written (POST, PATCH): its
/// outcome is unknown after a failure that may have come after the write.
pub fn is_write(method: &Method) -> bool {
    *method == Method::POST || *method == Method::PATCH
}

/// Where a request runs, and so which pool its connections come from. hyper spawns a
/// connection's task on the runtime current when it connects; a connection must only be used
/// where that runtime is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// A task of the process's multi-thread runtime (`runtime::runtime`): the shared pool.
    Shared,
    /// The calling thread, inside `runtime::block_on_here`: that thread's own pool, whose
    /// connections are driven only while it waits on a request. Threads sharing a client
    /// each open their own connections, and a request needs no hand-off to a worker.
    ThisThread,
}

/// The bounds of one exchange.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The whole exchange, connect to last body byte.
    pub timeout: Duration,
    /// A new connection must be up within this (and before `timeout`).
    pub connect_timeout: Duration,
}

/// How far an exchange got when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing of the request was written: DNS, connect, TLS, a proxy's CONNECT, or a pooled
    /// connection found closed before the request went out. Sending it again cannot duplicate it.
    BeforeWrite,
    /// The request was being written when the connection failed: part of it may have arrived.
    Writing,
    /// The request was written (or its write may have ended unseen) and no response head came.
    AwaitingHead,
    /// The head came; the body broke off, failed to decode, or did not finish in time.
    ReadingBody,
}

impl Phase {
    /// Whether any of the request may have reached the server.
    pub fn may_have_been_written(self) -> bool {
        self != Phase::BeforeWrite
    }
}

/// An exchange that failed on the wire.
#[derive(Debug, Clone)]
pub struct WireFailure {
    pub phase: Phase,
    /// The exchange ran out of time (the connect timeout, the attempt's timeout).
    pub timeout: bool,
    /// What failed, for the message: the wire's own words, without the URL.
    pub detail: String,
}

impl WireFailure {
    /// The error users see for this failure of `method` `url`: `outcome_unknown` when a
    /// POST/PATCH may have been written.
    pub fn into_error(self, method: &Method, url: &str) -> Error {
        let outcome_unknown = self.phase.may_have_been_written() && is_write(method);
        let detail = self.detail;
        let message = match (self.phase, self.timeout) {
            (Phase::BeforeWrite, true) => format!("connect timeout: {detail}"),
            (Phase::BeforeWrite, false) => format!("connection failed: {detail}"),
            (_, true) => format!("timed out: {detail}"),
            (Phase::ReadingBody, false) => format!("response body failed: {detail}"),
            (Phase::Writing | Phase::AwaitingHead, false) => detail,
        };
        let method = method.as_str().to_owned();
        let url = url.to_owned();
        if self.timeout {
            Error::Timeout {
                method,
                url,
                message,
                outcome_unknown,
            }
        } else {
            Error::Transport {
                method,
                url,
                message,
                outcome_unknown,
            }
        }
    }
}

/// Why an exchange gave no response.
#[derive(Debug, Clone)]
pub enum WireError {
    /// It failed on the wire, in a phase.
    Failed(WireFailure),
    /// A complete response that our limits refuse (larger than `max_response_size`: a
    /// `Protocol` error; a gzip body that does not decode: a `Transport` error), or a wire that
    /// cannot work on this thread (`Internal`). Its outcome is known: no POST is in doubt.
    Refused(Error),
}

impl From<WireFailure> for WireError {
    fn from(failure: WireFailure) -> Self {
        WireError::Failed(failure)
    }
}

/// One exchange on the wire. The future is `Send`: a shared client's calls run on the
/// multi-thread runtime.
pub trait Wire {
    fn exchange(
        &self,
        request: &Outgoing,
        driver: Driver,
        limits: Limits,
    ) -> impl Future<Output = Result<Response, WireError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(phase: Phase, timeout: bool) -> WireFailure {
        WireFailure {
            phase,
            timeout,
            detail: "tcp connect error".into(),
        }
    }

    #[test]
    fn only_a_failure_after_writing_leaves_a_write_unknown() {
        let url = "http://127.0.0.1:1/things";
        for phase in [Phase::Writing, Phase::AwaitingHead, Phase::ReadingBody] {
            let error = failure(phase, false).into_error(&Method::POST, url);
            assert!(error.outcome_unknown(), "{phase:?}");
            let error = failure(phase, false).into_error(&Method::GET, url);
            assert!(!error.outcome_unknown(), "{phase:?}");
        }
        let error = failure(Phase::BeforeWrite, true).into_error(&Method::PATCH, url);
        assert!(!error.outcome_unknown());
    }

    #[test]
    fn messages_name_the_phase() {
        let url = "http://127.0.0.1:1/";
        let text = |phase, timeout| {
            failure(phase, timeout)
                .into_error(&Method::GET, url)
                .to_string()
        };
        assert_eq!(
            text(Phase::BeforeWrite, false),
            "GET http://127.0.0.1:1/: connection failed: tcp connect error"
        );
        assert!(text(Phase::BeforeWrite, true).contains(": connect timeout: "));
        assert!(text(Phase::AwaitingHead, true).contains(": timed out: "));
        assert!(text(Phase::ReadingBody, false).contains(": response body failed: "));
        assert!(matches!(
            failure(Phase::ReadingBody, true).into_error(&Method::GET, url),
            Error::Timeout { .. }
        ));
    }
}
