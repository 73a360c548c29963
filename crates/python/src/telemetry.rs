//! The attempts of a call handed to its telemetry recorder (docs/guides/observability-otel.md; the
//! recorder is built by `python/recurring_payments/_telemetry.py` in the caller's context).

use pyo3::prelude::*;
use pyo3::types::PyList;

use rp_core::auth::StoreEvent;
use rp_core::records::{self, Attempt};

/// One HTTP attempt of a call, as the telemetry recorder reads it.
#[pyclass(module = "recurring_payments._core", frozen, get_all)]
pub struct AttemptRecord {
    method: String,
    /// Without userinfo, signature query values redacted.
    url: String,
    status: Option<u16>,
    /// Wall clock, Unix nanoseconds.
    start_ns: u64,
    end_ns: u64,
    /// A request to the token endpoint (not the caller's request).
    token_request: bool,
    resend_count: u32,
    /// The `recurring_payments` exception class name for a failure without a response.
    error_kind: Option<&'static str>,
    request_id: Option<String>,
}

/// One command to the fleet's token store (docs/guides/fleets.md), as the recorder reads it.
#[pyclass(module = "recurring_payments._core", frozen, get_all)]
pub struct StoreRecord {
    /// `get`, `lock`, `set`, `unlock` or `discard`.
    op: &'static str,
    start_ns: u64,
    end_ns: u64,
    /// A stable kind (`timeout`, `connection_refused`, ...), `None` on success.
    error_type: Option<&'static str>,
}

impl From<&Attempt> for AttemptRecord {
    fn from(a: &Attempt) -> Self {
        AttemptRecord {
            method: a.method.clone(),
            url: a.url.clone(),
            status: a.status,
            start_ns: a.started_unix_ns,
            end_ns: a.ended_unix_ns,
            token_request: a.token,
            resend_count: a.resend_count,
            error_kind: a.error_kind,
            request_id: a.request_id.clone(),
        }
    }
}

impl From<&StoreEvent> for StoreRecord {
    fn from(event: &StoreEvent) -> Self {
        let start_ns = records::unix_ns(event.started);
        StoreRecord {
            op: event.op,
            start_ns,
            end_ns: records::end_ns(start_ns, event.elapsed),
            error_type: event.error_type,
        }
    }
}

/// Call `recorder(attempts, template, store)` once, with an `AttemptRecord` per attempt of the
/// call, the template the request was expanded from (`Prepared::template`) or None, and a
/// `StoreRecord` per command to the token store. Only with the GIL and no Rust lock held: on
/// the caller's thread (sync) or the completion thread (asyncio), never on a tokio worker. A
/// failing recorder never fails the call.
pub(crate) fn record(
    py: Python<'_>,
    recorder: Option<&Py<PyAny>>,
    template: Option<&str>,
    log: &[Attempt],
    store: &[StoreEvent],
) {
    let Some(recorder) = recorder else {
        return;
    };
    if log.is_empty() && store.is_empty() {
        return;
    }
    let attempts = PyList::new(py, log.iter().map(AttemptRecord::from));
    let commands = PyList::new(py, store.iter().map(StoreRecord::from));
    let outcome = attempts.and_then(|attempts| {
        commands.and_then(|commands| recorder.call1(py, (attempts, template, commands)))
    });
    if let Err(err) = outcome {
        err.write_unraisable(py, Some(recorder.bind(py)));
    }
}
