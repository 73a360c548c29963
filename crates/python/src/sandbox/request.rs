//! `_core.SandboxRequest`: a request the sandbox received, as a journal entry or as a route
//! handler's argument.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use rp_sandbox::journal::Entry;

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
    pub(super) entry: Arc<Entry>,
    pub(super) path_params: Vec<(String, String)>,
}

impl SandboxRequest {
    pub(super) fn journal(entry: Arc<Entry>) -> Self {
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
