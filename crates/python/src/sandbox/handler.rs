//! A Python callable as a sandbox route handler: called on the runtime's blocking pool (never
//! on an I/O worker) with the GIL and no Rust lock held; what it returns becomes the answer,
//! what it raises a 500 whose journal entry keeps the traceback.

use std::sync::Arc;

use bytes::Bytes;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use super::request::SandboxRequest;
use crate::shutdown;
use rp_sandbox::store::{Handler, HandlerFailure, HandlerReply, HandlerRequest};

pub(super) fn python_handler(callable: Py<PyAny>) -> Handler {
    let callable = Arc::new(callable);
    Arc::new(move |request: HandlerRequest| {
        let callable = Arc::clone(&callable);
        Box::pin(async move {
            let joined = tokio::task::spawn_blocking(move || {
                shutdown::attach(|py| call_handler(py, &callable, request)).unwrap_or_else(|| {
                    Err(HandlerFailure {
                        message: "the Python interpreter is shutting down".into(),
                        detail: "the Python interpreter is shutting down".into(),
                    })
                })
            })
            .await;
            joined.unwrap_or_else(|e| {
                Err(HandlerFailure {
                    message: format!("the handler did not complete: {e}"),
                    detail: e.to_string(),
                })
            })
        })
    })
}

fn call_handler(
    py: Python<'_>,
    callable: &Py<PyAny>,
    request: HandlerRequest,
) -> Result<HandlerReply, HandlerFailure> {
    let argument = SandboxRequest {
        entry: request.entry,
        path_params: request.path_params,
    };
    let outcome = callable
        .bind(py)
        .call1((argument,))
        .and_then(|result| to_reply(py, &result));
    outcome.map_err(|err| failure(py, &err))
}

/// `dict | list | None` (200, or 204 for None), `(status, body)` or `(status, body, headers)`.
fn to_reply(py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<HandlerReply> {
    let (status, body, headers) = match result.cast::<PyTuple>() {
        Ok(tuple) if tuple.len() == 2 || tuple.len() == 3 => {
            let status: u16 = tuple.get_item(0)?.extract()?;
            let mut headers = Vec::new();
            if tuple.len() == 3 && !tuple.get_item(2)?.is_none() {
                for item in tuple.get_item(2)?.call_method0("items")?.try_iter()? {
                    headers.push(item?.extract::<(String, String)>()?);
                }
            }
            (status, tuple.get_item(1)?, headers)
        }
        Ok(_) => {
            return Err(PyTypeError::new_err(
                "a handler returns body, (status, body) or (status, body, headers)",
            ))
        }
        Err(_) if result.is_none() => (204, result.clone(), Vec::new()),
        Err(_) => (200, result.clone(), Vec::new()),
    };
    let body = if body.is_none() {
        None
    } else {
        // allow_nan=False: NaN is not JSON, and the client under test must never see it.
        let options = PyDict::new(py);
        options.set_item("allow_nan", false)?;
        options.set_item("separators", (",", ":"))?;
        let text = py
            .import("json")?
            .call_method("dumps", (body,), Some(&options))?;
        Some(Bytes::from(text.cast::<PyString>()?.to_str()?.to_owned()))
    };
    Ok(HandlerReply {
        status,
        body,
        headers,
    })
}

fn failure(py: Python<'_>, err: &PyErr) -> HandlerFailure {
    let value = err.value(py);
    let message = match (value.get_type().name(), value.str()) {
        (Ok(kind), Ok(text)) => format!("handler raised {kind}: {text}"),
        _ => "the handler raised an exception".to_owned(),
    };
    let detail = py
        .import("traceback")
        // The three-argument form: on Python < 3.12 the value may not carry its traceback.
        .and_then(|tb| {
            tb.call_method1(
                "format_exception",
                (err.get_type(py), value, err.traceback(py)),
            )
        })
        .and_then(|lines| PyString::new(py, "").call_method1("join", (lines,)))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_else(|_| message.clone());
    HandlerFailure { message, detail }
}
