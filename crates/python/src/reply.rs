//! What a finished call hands back to Python, shared by the sync and asyncio faces and by a
//! call dropped unfinished (`observed.rs`): its attempts told to the logger and the telemetry
//! recorder, and its response (parsed by the core) turned into `(status, headers, document)`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use rp_core::auth::StoreEvent;
use rp_core::error::Error;
use rp_core::records::Attempt;
use rp_core::reply::Reply;
use rp_core::template::Source;
use rp_core::wire::Response;

use super::{convert, document, telemetry};

/// Who is told about a call's attempts: the logger (DEBUG lines) and the telemetry recorder
/// (with the template the request was expanded from, its spans' `url.template`).
pub(crate) struct Observers {
    pub logger: Py<PyAny>,
    pub recorder: Option<Py<PyAny>>,
    pub template: Option<Source>,
}

/// Tell a call's observers what it did: the logger (a DEBUG line per attempt, the token
/// store's commands) and the telemetry recorder (with the `template` the request was expanded
/// from). With the GIL and no lock held: on the caller's thread (sync) or on the completion
/// thread (asyncio).
pub(crate) fn observe(
    logger: &Bound<'_, PyAny>,
    recorder: Option<&Py<PyAny>>,
    template: Option<&str>,
    attempts: &[Attempt],
    store_events: &[StoreEvent],
) {
    log_attempts(logger, attempts);
    log_store_events(logger, store_events);
    telemetry::record(logger.py(), recorder, template, attempts, store_events);
}

/// One DEBUG line per attempt (see `observe`).
fn log_attempts(logger: &Bound<'_, PyAny>, attempts: &[Attempt]) {
    let enabled = logger
        .call_method1(pyo3::intern!(logger.py(), "isEnabledFor"), (10,))
        .and_then(|v| v.is_truthy())
        .unwrap_or(false);
    if !enabled {
        return;
    }
    for a in attempts {
        let status = a
            .status
            .map_or_else(|| a.error.clone().unwrap_or_default(), |s| s.to_string());
        let milliseconds = a.elapsed.as_secs_f64() * 1000.0;
        let _ = match &a.request_id {
            Some(id) => logger.call_method1(
                "debug",
                (
                    "%s %s -> %s in %.1f ms (attempt %d, request id %s)",
                    &a.method,
                    &a.url,
                    status,
                    milliseconds,
                    a.attempt,
                    id,
                ),
            ),
            None => logger.call_method1(
                "debug",
                (
                    "%s %s -> %s in %.1f ms (attempt %d)",
                    &a.method,
                    &a.url,
                    status,
                    milliseconds,
                    a.attempt,
                ),
            ),
        };
    }
}

/// The token store's commands (docs/guides/fleets.md): a failure is a WARNING at most once a minute
/// per client (the core decides which), else DEBUG (see `observe`).
fn log_store_events(logger: &Bound<'_, PyAny>, events: &[StoreEvent]) {
    for event in events {
        let milliseconds = event.elapsed.as_secs_f64() * 1000.0;
        let _ = match (&event.message, event.warn) {
            (Some(message), true) => logger.call_method1(
                "warning",
                (
                    "token store unavailable (%s: %s): using this process's own token; \
                     requests go on (next warning in a minute at the earliest)",
                    event.op,
                    message,
                ),
            ),
            (Some(message), false) => logger.call_method1(
                "debug",
                (
                    "token store %s failed in %.1f ms: %s",
                    event.op,
                    milliseconds,
                    message,
                ),
            ),
            (None, _) => logger.call_method1(
                "debug",
                ("token store %s in %.1f ms", event.op, milliseconds),
            ),
        };
    }
}

/// A response with its body parsed (`rp_core::reply::Reply`); its document becomes a lazy
/// view for Python in `response_tuple`.
pub(crate) struct Parsed(Reply);

/// The core's parse of a call's response (which fails the last attempt in `log` for a body
/// that is no document).
pub(crate) fn parse_response(
    method: &str,
    response: Response,
    log: &mut [Attempt],
) -> Result<Parsed, Error> {
    Reply::parse(method, response, log).map(Parsed)
}

pub(crate) fn response_tuple(py: Python<'_>, parsed: Parsed) -> PyResult<Bound<'_, PyTuple>> {
    let Parsed(reply) = parsed;
    let document = match reply.document {
        Some(document) => document::Document::new(document).into_python(py)?,
        None => py.None().into_bound(py),
    };
    // The headers as they came: `Headers` reads them on first use (most are never read).
    let headers = convert::ResponseHeaders::from(reply.headers);
    PyTuple::new(
        py,
        [
            reply.status.into_pyobject(py)?.into_any(),
            crate::untracked::new_untracked(py, headers)?.into_any(),
            document,
        ],
    )
}
