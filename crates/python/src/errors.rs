//! The one boundary where core errors become the Python exceptions of
//! `recurring_payments.errors` (defined in Python, shaped like httpx's tree).

use pyo3::exceptions::{PyImportError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule, PyType};

use rp_core::error::Error;

/// The classes of `recurring_payments.errors`, each bound once by `bind` when `_core` is
/// imported: a class renamed or removed there fails that import, not the first error of its kind.
macro_rules! classes {
    ($($field:ident: $name:literal),* $(,)?) => {
        struct Classes {
            $($field: Py<PyType>,)*
        }

        impl Classes {
            fn load(module: &Bound<'_, PyModule>) -> PyResult<Self> {
                let base = class(module, None, "Error")?;
                Ok(Classes {
                    $($field: class(module, Some(&base), $name)?.unbind(),)*
                })
            }
        }
    };
}

classes! {
    configuration: "ConfigurationError",
    internal: "InternalError",
    transport: "TransportError",
    timeout: "TimeoutError",
    http: "HTTPError",
    client: "ClientError",
    authentication: "AuthenticationError",
    not_found: "NotFoundError",
    precondition_failed: "PreconditionFailedError",
    conflict: "ConflictError",
    rate_limit: "RateLimitError",
    server: "ServerError",
    protocol: "ProtocolError",
    template: "TemplateError",
    link_not_found: "LinkNotFoundError",
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

/// `module.<name>`, which must be a subclass of `base`.
fn class<'py>(
    module: &Bound<'py, PyModule>,
    base: Option<&Bound<'py, PyType>>,
    name: &str,
) -> PyResult<Bound<'py, PyType>> {
    let missing = || {
        PyImportError::new_err(format!(
            "recurring_payments._core binds recurring_payments.errors.{name}, \
             which is not an exception class of recurring_payments.errors"
        ))
    };
    let class = module
        .getattr(name)
        .map_err(|_| missing())?
        .cast_into::<PyType>()
        .map_err(|_| missing())?;
    match base {
        Some(base) if !class.is_subclass(base)? => Err(missing()),
        _ => Ok(class),
    }
}

/// Bind the exception classes (at module init; see `Classes`).
pub(crate) fn bind(py: Python<'_>) -> PyResult<()> {
    CLASSES.get_or_try_init(py, || {
        Classes::load(&py.import("recurring_payments.errors")?)
    })?;
    Ok(())
}

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES
        .get(py)
        .ok_or_else(|| PyRuntimeError::new_err("recurring_payments._core is not initialised"))
}

fn convert(py: Python<'_>, error: Error) -> PyResult<PyErr> {
    let classes = classes(py)?;
    let message = error.to_string();
    let kwargs = PyDict::new(py);
    let mut cause = None;
    let class = match error {
        Error::Configuration(_) => &classes.configuration,
        Error::Provider {
            cause: given,
            interrupt,
            ..
        } => {
            cause = given.and_then(|c| c.0.downcast_ref::<Py<PyAny>>().map(|o| o.clone_ref(py)));
            if let (true, Some(cause)) = (interrupt, &cause) {
                // Ctrl-C or a cancellation in the provider: raised as it came, not wrapped.
                return Ok(PyErr::from_value(cause.bind(py).clone()));
            }
            &classes.configuration
        }
        Error::Refused {
            outcome_unknown, ..
        } => {
            kwargs.set_item("outcome_unknown", outcome_unknown)?;
            &classes.configuration
        }
        Error::Internal(_) => &classes.internal,
        Error::Template(_) => &classes.template,
        Error::LinkNotFound { .. } => &classes.link_not_found,
        Error::UnknownVariable(m) => return Ok(PyTypeError::new_err(m)),
        Error::Transport {
            method,
            url,
            outcome_unknown,
            ..
        } => {
            set_unanswered(&kwargs, method, url, outcome_unknown)?;
            &classes.transport
        }
        Error::Timeout {
            method,
            url,
            outcome_unknown,
            ..
        } => {
            set_unanswered(&kwargs, method, url, outcome_unknown)?;
            &classes.timeout
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
                kwargs.set_item("request_id", facts.request_id)?;
                kwargs.set_item("outcome_unknown", facts.outcome_unknown)?;
            }
            &classes.protocol
        }
        Error::Http(failure) => {
            kwargs.set_item("status", failure.status)?;
            kwargs.set_item("method", &failure.method)?;
            kwargs.set_item("url", &failure.url)?;
            kwargs.set_item("headers", &failure.headers)?;
            kwargs.set_item("body", &failure.body)?;
            kwargs.set_item("request_id", &failure.request_id)?;
            kwargs.set_item("outcome_unknown", failure.outcome_unknown)?;
            match failure.status {
                _ if failure.authentication => &classes.authentication,
                404 => &classes.not_found,
                409 => &classes.conflict,
                412 => &classes.precondition_failed,
                429 => &classes.rate_limit,
                400..=499 => &classes.client,
                500..=599 => &classes.server,
                _ => &classes.http,
            }
        }
    };
    let instance = class.bind(py).call((message,), Some(&kwargs))?;
    if let Some(cause) = cause {
        // What a credentials provider raised (its message is not in ours).
        instance.setattr(pyo3::intern!(py, "__cause__"), cause)?;
    }
    Ok(PyErr::from_value(instance))
}

/// The keyword arguments of a request that got no (complete) answer.
fn set_unanswered(
    kwargs: &Bound<'_, PyDict>,
    method: String,
    url: String,
    outcome_unknown: bool,
) -> PyResult<()> {
    kwargs.set_item("method", method)?;
    kwargs.set_item("url", url)?;
    kwargs.set_item("outcome_unknown", outcome_unknown)
}

/// The one boundary: a core error, or a Python one raised on the way (pyca/cryptography's
/// `CryptographyError`; the orphan rule forbids `From<rp_core::Error> for PyErr` here).
pub(crate) enum Failure {
    Core(Error),
    Py(PyErr),
}

pub(crate) type Fallible<T> = Result<T, Failure>;

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
