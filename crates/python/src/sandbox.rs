//! `_core.SandboxServer`: the sandbox server seen from Python (the request type is
//! `request.rs`, the bridge to Python route handlers `handler.rs`). The friendly `FakeServer`
//! wrapper, which checks every argument, lives in `recurring_payments/testing.py`.
//!
//! GIL discipline: start/stop release the GIL while they wait; Python route handlers run on the
//! runtime's blocking pool (never on an I/O worker) and no Rust lock is held while they run.

mod handler;
pub(crate) mod request;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::to_py;
use handler::python_handler;
use request::SandboxRequest;
use rp_core::error::Error;
use rp_sandbox::error::SandboxError;
use rp_sandbox::faults::Raw;
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
