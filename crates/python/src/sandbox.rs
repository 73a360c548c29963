//! `_core.SandboxServer` and `_core.SandboxRequest`: the sandbox seen from Python. The friendly
//! `FakeServer` wrapper lives in `recurring_payments/testing.py`.
//!
//! GIL discipline: start/stop release the GIL while they wait; Python route handlers run on the
//! runtime's blocking pool (never on an I/O worker) and no Rust lock is held while they run.

use crate::errors::to_py;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

use super::shutdown;
use rp_core::error::Error;
use rp_sandbox::error::SandboxError;
use rp_sandbox::faults::Raw;
use rp_sandbox::journal::Entry;
use rp_sandbox::store::{Handler, HandlerFailure, HandlerReply, HandlerRequest};
use rp_sandbox::{Config, Sandbox};

/// The native sandbox server; use `recurring_payments.testing.FakeServer`.
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct SandboxServer {
    inner: Arc<Sandbox>,
}

/// A sandbox error is never a client error: misuse is a `ValueError`, a refusal of the OS an
/// `OSError` (a subclass by errno, as `socket.bind` raises), the runtime failing `InternalError`.
fn sandbox_error(error: SandboxError) -> PyErr {
    match error {
        SandboxError::Argument(message) => PyValueError::new_err(message),
        SandboxError::Os {
            message,
            errno: Some(errno),
        } => PyOSError::new_err((errno, message)),
        SandboxError::Os { message, .. } => PyOSError::new_err(message),
        SandboxError::Internal(message) => to_py(Error::Internal(message)),
    }
}

/// The wrapper (`recurring_payments.testing`) checks every argument; this conversion only keeps
/// a value that is no duration from panicking when `_core` is called directly.
fn duration(value: f64, what: &str) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        PyValueError::new_err(format!("{what} must be a finite number >= 0, not {value}"))
    })
}

#[pymethods]
impl SandboxServer {
    // Every argument is given by the wrapper, whose signature holds the defaults users see.
    #[new]
    fn new(
        token_ttl: f64,
        demo: bool,
        host: &str,
        port: u16,
        journal_limit: usize,
        tls: bool,
    ) -> PyResult<Self> {
        // 0 is allowed: tokens announced with `expires_in: 0` (see `Tokens::issue`).
        let ttl = duration(token_ttl, "token_ttl")?;
        let config = Config {
            host: host.to_owned(),
            port,
            token_ttl: ttl,
            demo,
            journal_limit,
            tls,
        };
        Ok(SandboxServer {
            inner: Arc::new(Sandbox::new(config)),
        })
    }

    /// Start serving; returns `(base_url, profile, rel_namespace)`.
    fn start(&self, py: Python<'_>) -> PyResult<(String, String, String)> {
        let urls = py.detach(|| self.inner.start()).map_err(sandbox_error)?;
        Ok((urls.base_url, urls.profile, urls.rel_namespace))
    }

    fn stop(&self, py: Python<'_>) {
        py.detach(|| self.inner.stop());
    }

    /// `(base_url, profile, rel_namespace)` while running, else `None`.
    #[getter]
    fn urls(&self) -> Option<(String, String, String)> {
        self.inner
            .urls()
            .map(|u| (u.base_url, u.profile, u.rel_namespace))
    }

    /// With TLS, while running: the path of the CA's PEM file (removed on stop).
    #[getter]
    fn ca_path(&self) -> Option<String> {
        let path = self.inner.urls()?.ca_path?;
        // The temporary directory's path is text on every platform the tests run on.
        Some(path.to_string_lossy().into_owned())
    }

    fn add_app(&self, app_name: &str, app_secret: &str) -> PyResult<()> {
        self.inner
            .add_app(app_name, app_secret)
            .map_err(sandbox_error)
    }

    fn add_admin(&self, creditor: &str, login: &str, password: &str) -> PyResult<()> {
        self.inner
            .add_admin(creditor, login, password)
            .map_err(sandbox_error)
    }

    fn add_link(&self, rel: &str, href: &str, templated: bool, admin_only: bool) -> PyResult<()> {
        self.inner
            .add_link(rel, href, templated, admin_only)
            .map_err(sandbox_error)
    }

    /// `document` is the JSON text of the resource (the wrapper serializes it).
    fn add_resource(&self, path: &str, document: &str) -> PyResult<()> {
        let value: serde_json::Value = serde_json::from_str(document)
            .map_err(|e| PyValueError::new_err(format!("document is not JSON: {e}")))?;
        self.inner.add_resource(path, &value).map_err(sandbox_error)
    }

    fn route(&self, method: &str, path_template: &str, handler: Py<PyAny>) -> PyResult<()> {
        self.inner
            .route(method, path_template, python_handler(handler))
            .map_err(sandbox_error)
    }

    /// The body the API would POST to a notification URL for the resource at `path` (see
    /// `FakeServer.notification_body`). Without the GIL: a Python route handler may run.
    fn notification_body<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyBytes>> {
        let body = py
            .detach(|| self.inner.notification_body(path))
            .map_err(sandbox_error)?;
        Ok(PyBytes::new(py, &body))
    }

    fn requests(&self) -> Vec<SandboxRequest> {
        self.inner
            .requests()
            .into_iter()
            .map(SandboxRequest::journal)
            .collect()
    }

    fn token_requests(&self) -> Vec<SandboxRequest> {
        self.inner
            .token_requests()
            .into_iter()
            .map(SandboxRequest::journal)
            .collect()
    }

    fn clear_requests(&self) {
        self.inner.clear_requests();
    }

    /// Every access token issued so far (the last 10,000): a test aid for leak checks.
    fn issued_tokens(&self) -> Vec<String> {
        self.inner.issued_tokens()
    }

    fn expire_tokens(&self) {
        self.inner.expire_tokens();
    }

    fn advance_clock(&self, seconds: f64) -> PyResult<()> {
        self.inner.advance_clock(duration(seconds, "seconds")?);
        Ok(())
    }

    /// Virtual seconds since the server was created.
    fn clock(&self) -> f64 {
        self.inner.clock().as_secs_f64()
    }

    fn fail_next(
        &self,
        status: u16,
        count: u32,
        path: Option<&str>,
        headers: Vec<(String, String)>,
    ) -> PyResult<()> {
        self.inner
            .fail_next(status, count, path, headers)
            .map_err(sandbox_error)
    }

    fn drop_next(&self, count: u32, path: Option<&str>) {
        self.inner.drop_next(count, path);
    }

    fn delay_next(&self, seconds: f64, count: u32, path: Option<&str>) -> PyResult<()> {
        self.inner
            .delay_next(duration(seconds, "seconds")?, count, path);
        Ok(())
    }

    fn malformed_next(&self, count: u32, path: Option<&str>) {
        self.inner.malformed_next(count, path);
    }

    /// `reply`: the answer to serve, a dict with the keys of [`RawReply`].
    fn respond_next(&self, reply: RawReply, count: u32, path: Option<&str>) -> PyResult<()> {
        let raw = Raw {
            status: reply.status,
            headers: reply.headers,
            body: Bytes::from(reply.body),
            repeat: reply.repeat,
            cut_after: reply.cut_after,
            chunk_delay: duration(reply.chunk_delay, "chunk_delay")?,
            chunked: reply.chunked,
        };
        self.inner
            .respond_next(raw, count, path)
            .map_err(sandbox_error)
    }

    fn clear_faults(&self) {
        self.inner.clear_faults();
    }
}

/// The raw answer of `respond_next`, as the wrapper's dict holds it (checked there).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct RawReply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    repeat: u64,
    cut_after: Option<u64>,
    chunk_delay: f64,
    chunked: bool,
}

/// A request the sandbox received: a journal entry (``server.requests``), or what a route
/// handler is given.
///
/// >>> _ = client.post("/orders", {"reference": "o-1"})
/// >>> request = server.requests[-1]
/// >>> request
/// <SandboxRequest POST /orders -> 201>
/// >>> request.json, request.headers["content-type"]
/// ({'reference': 'o-1'}, 'application/json')
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct SandboxRequest {
    entry: Arc<Entry>,
    path_params: Vec<(String, String)>,
}

impl SandboxRequest {
    fn journal(entry: Arc<Entry>) -> Self {
        SandboxRequest {
            entry,
            path_params: Vec::new(),
        }
    }
}

#[pymethods]
impl SandboxRequest {
    /// The HTTP method.
    ///
    /// >>> _ = client.root()
    /// >>> [request.method for request in server.requests]
    /// ['POST', 'GET']
    #[getter]
    fn method(&self) -> &str {
        &self.entry.method
    }

    /// The path, without the query.
    ///
    /// >>> _ = client.get_creditors(reference="democreditor")
    /// >>> server.requests[-1].path
    /// '/creditors'
    #[getter]
    fn path(&self) -> &str {
        &self.entry.path
    }

    /// Decoded query parameters; the first value of a repeated name.
    ///
    /// >>> _ = client.get("/mandates?creditorReference=democreditor&size=5")
    /// >>> server.requests[-1].query
    /// {'creditorReference': 'democreditor', 'size': '5'}
    #[getter]
    fn query<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        // In the order sent; a repeated name keeps its first value.
        for (name, value) in &self.entry.query {
            if !dict.contains(name)? {
                dict.set_item(name, value)?;
            }
        }
        Ok(dict)
    }

    /// Every decoded query pair, in order.
    ///
    /// >>> _ = client.get("/mandates?creditorReference=democreditor&size=5")
    /// >>> server.requests[-1].query_list
    /// [('creditorReference', 'democreditor'), ('size', '5')]
    #[getter]
    fn query_list(&self) -> Vec<(String, String)> {
        self.entry.query.clone()
    }

    /// The raw query, as sent (without ``?``).
    ///
    /// >>> _ = client.get("/mandates?creditorReference=democreditor&size=5")
    /// >>> server.requests[-1].query_string
    /// 'creditorReference=democreditor&size=5'
    #[getter]
    fn query_string(&self) -> &str {
        &self.entry.query_string
    }

    /// The request headers: lower-case names; repeated headers joined with ", ".
    ///
    /// >>> _ = client.root()
    /// >>> server.requests[-1].headers["accept"]
    /// 'application/hal+json; profile="http://127.0.0.1:.../alps/v1"'
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in &self.entry.headers {
            match dict.get_item(name)? {
                Some(previous) => {
                    let joined = format!("{}, {value}", previous.extract::<String>()?);
                    dict.set_item(name, joined)?;
                }
                None => dict.set_item(name, value)?,
            }
        }
        Ok(dict)
    }

    /// The body, as bytes.
    ///
    /// >>> _ = client.post("/orders", {"reference": "o-1"})
    /// >>> server.requests[-1].body
    /// b'{"reference":"o-1"}'
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.entry.body)
    }

    /// The body parsed as JSON when it was sent as JSON, else ``None``.
    ///
    /// >>> _ = client.create_orders.post({"reference": "o-1", "started": True})
    /// >>> server.requests[-1].json
    /// {'reference': 'o-1', 'started': True}
    #[getter]
    fn json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.entry.json.is_none() {
            return Ok(py.None().into_bound(py));
        }
        py.import("json")?
            .call_method1("loads", (PyBytes::new(py, &self.entry.body),))
    }

    /// The parameters of the route's path template (``/things/{id}``), for a handler.
    ///
    /// >>> server.route("GET", "/things/{id}", lambda request: dict(request.path_params))
    /// >>> client.get("/things/42")["id"]
    /// '42'
    #[getter]
    fn path_params(&self) -> std::collections::HashMap<String, String> {
        self.path_params.iter().cloned().collect()
    }

    /// The status answered (``None`` before the answer, or when the connection was dropped).
    ///
    /// >>> _ = client.get_creditors(reference="democreditor")
    /// >>> [request.status for request in server.requests]
    /// [200, 200, 200]
    #[getter]
    fn status(&self) -> Option<u16> {
        self.entry.status.get().copied()
    }

    /// A failing handler's traceback (the client got a 500), else ``None``.
    ///
    /// >>> server.route("GET", "/boom", lambda request: 1 / 0)
    /// >>> client.get("/boom").status
    /// Traceback (most recent call last):
    /// ...
    /// recurring_payments.errors.ServerError: GET http://...: HTTP 500 (900: ...)
    /// >>> server.requests[-1].error.splitlines()[-1]
    /// 'ZeroDivisionError: division by zero'
    #[getter]
    fn error(&self) -> Option<&str> {
        self.entry.error.get().map(String::as_str)
    }

    /// Virtual time of arrival (seconds since the server was created; see ``advance_clock``).
    ///
    /// >>> server.advance_clock(30)
    /// >>> _ = client.root()
    /// >>> server.requests[-1].time >= 30
    /// True
    #[getter]
    fn time(&self) -> f64 {
        self.entry.time
    }

    fn __repr__(&self) -> String {
        let query = if self.entry.query_string.is_empty() {
            String::new()
        } else {
            format!("?{}", self.entry.query_string)
        };
        match self.entry.status.get() {
            Some(status) => format!(
                "<SandboxRequest {} {}{query} -> {status}>",
                self.entry.method, self.entry.path
            ),
            None => format!(
                "<SandboxRequest {} {}{query}>",
                self.entry.method, self.entry.path
            ),
        }
    }
}

fn python_handler(callable: Py<PyAny>) -> Handler {
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
