//! The one boundary where core errors become the Python exceptions of
//! `recurring_payments.errors` (defined in Python, shaped like httpx's tree).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};

use rp_core::error::Error;

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS_MODULE
        .get_or_try_init(py, || Ok(py.import("recurring_payments.errors")?.unbind()))
        .map(|m| m.bind(py))
}

/// Instantiate `recurring_payments.errors.<class>(message, **kwargs)`.
fn build(
    py: Python<'_>,
    class: &str,
    message: String,
    kwargs: Bound<'_, PyDict>,
) -> PyResult<PyErr> {
    let instance = errors_module(py)?
        .getattr(class)?
        .call((message,), Some(&kwargs))?;
    Ok(PyErr::from_value(instance))
}

fn convert(py: Python<'_>, error: Error) -> PyResult<PyErr> {
    let message = error.to_string();
    let kwargs = PyDict::new(py);
    let class = match error {
        Error::Configuration(_) => "ConfigurationError",
        Error::Template(_) => "TemplateError",
        Error::LinkNotFound { .. } => "LinkNotFoundError",
        Error::UnknownVariable(m) => return Ok(PyTypeError::new_err(m)),
        Error::Transport {
            method,
            url,
            outcome_unknown,
            ..
        } => {
            kwargs.set_item("method", method)?;
            kwargs.set_item("url", url)?;
            kwargs.set_item("outcome_unknown", outcome_unknown)?;
            "TransportError"
        }
        Error::Timeout {
            method,
            url,
            outcome_unknown,
            ..
        } => {
            kwargs.set_item("method", method)?;
            kwargs.set_item("url", url)?;
            kwargs.set_item("outcome_unknown", outcome_unknown)?;
            "TimeoutError"
        }
        Error::Protocol {
            method,
            url,
            response,
            ..
        } => {
            kwargs.set_item("method", method)?;
            kwargs.set_item("url", url)?;
            if let Some(facts) = response {
                kwargs.set_item("status", facts.status)?;
                kwargs.set_item("headers", facts.headers)?;
            }
            "ProtocolError"
        }
        Error::Http(failure) => {
            kwargs.set_item("status", failure.status)?;
            kwargs.set_item("method", &failure.method)?;
            kwargs.set_item("url", &failure.url)?;
            kwargs.set_item("headers", &failure.headers)?;
            kwargs.set_item("body", &failure.body)?;
            match failure.status {
                _ if failure.authentication => "AuthenticationError",
                404 => "NotFoundError",
                412 => "PreconditionFailedError",
                400..=499 => "ClientError",
                500..=599 => "ServerError",
                _ => "HTTPError",
            }
        }
    };
    build(py, class, message, kwargs)
}

/// The one boundary: a core error, or a Python one raised on the way (pyca/cryptography's
/// `CryptographyError`; the orphan rule forbids `From<rp_core::Error> for PyErr` here).
pub(crate) enum Failure {
    Core(Error),
    Py(PyErr),
}

pub(crate) type Outcome<T> = Result<T, Failure>;

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Core(error)
    }
}

impl From<PyErr> for Failure {
    fn from(error: PyErr) -> Self {
        Failure::Py(error)
    }
}

impl From<Failure> for PyErr {
    fn from(failure: Failure) -> PyErr {
        match failure {
            Failure::Py(error) => error,
            Failure::Core(error) => Python::attach(|py| convert(py, error).unwrap_or_else(|e| e)),
        }
    }
}

/// A core error as the Python exception it maps to.
pub(crate) fn to_py(error: Error) -> PyErr {
    Failure::Core(error).into()
}
