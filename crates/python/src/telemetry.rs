//! The attempts of a call handed to its telemetry recorder (API.md §9; the recorder is built by
//! `python/recurring_payments/_telemetry.py` in the caller's context).

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use rp_core::transport::Attempt;

/// Call `recorder(attempts, template)` once, with every attempt of the call as a tuple
/// `(method, url, status | None, start_ns, end_ns, token_request, resend_count, error_kind | None)`
/// and the template the request was expanded from (`Prepared::template`), or None.
/// Only with the GIL and no Rust lock held: on the caller's thread (sync) or the completion
/// thread (asyncio), never on a tokio worker. A failing recorder never fails the call.
pub(crate) fn record(
    py: Python<'_>,
    recorder: Option<&Py<PyAny>>,
    template: Option<&str>,
    log: &[Attempt],
) {
    let Some(recorder) = recorder else {
        return;
    };
    if log.is_empty() {
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
            )
                .into_pyobject(py)
        })
        .collect::<PyResult<Vec<Bound<'_, PyTuple>>>>()
        .and_then(|tuples| PyList::new(py, tuples));
    let outcome = records.and_then(|records| recorder.call1(py, (records, template)));
    if let Err(err) = outcome {
        err.write_unraisable(py, Some(recorder.bind(py)));
    }
}
