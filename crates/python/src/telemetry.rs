//! The attempts of a call handed to its telemetry recorder (docs/guides/observability-otel.md; the
//! recorder is built by `python/recurring_payments/_telemetry.py` in the caller's context).

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use rp_core::auth::StoreEvent;
use rp_core::records::Attempt;

/// Call `recorder(attempts, template, store)` once, with every attempt of the call as a tuple
/// `(method, url, status | None, start_ns, end_ns, token_request, resend_count, error_kind | None,
/// request_id | None)`,
/// the template the request was expanded from (`Prepared::template`) or None, and the token
/// store's commands (docs/guides/fleets.md) as `(op, start_ns, end_ns, error_type | None)`.
/// Only with the GIL and no Rust lock held: on the caller's thread (sync) or the completion
/// thread (asyncio), never on a tokio worker. A failing recorder never fails the call.
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
    let records = log
        .iter()
        .map(|a| {
            (
                a.method.as_str(),
                a.url.as_str(),
                a.status,
                a.started_unix_ns,
                a.ended_unix_ns,
                a.token,
                a.resend_count,
                a.error_kind,
                a.request_id.as_deref(),
            )
                .into_pyobject(py)
        })
        .collect::<PyResult<Vec<Bound<'_, PyTuple>>>>()
        .and_then(|tuples| PyList::new(py, tuples));
    let commands = store
        .iter()
        .map(|event| {
            let started = rp_core::records::unix_ns(event.started);
            let ended = rp_core::records::end_ns(started, event.elapsed);
            (event.op, started, ended, event.error_type).into_pyobject(py)
        })
        .collect::<PyResult<Vec<Bound<'_, PyTuple>>>>()
        .and_then(|tuples| PyList::new(py, tuples));
    let outcome = records.and_then(|records| {
        commands.and_then(|commands| recorder.call1(py, (records, template, commands)))
    });
    if let Err(err) = outcome {
        err.write_unraisable(py, Some(recorder.bind(py)));
    }
}
