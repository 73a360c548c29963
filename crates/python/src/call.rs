//! One call as it crosses from Python into Rust: the request value that `_resource._send` and
//! `_async_resource._send` build once per call, and the per-call options of a client derived by
//! `with_options` (docs/guides/configuration.md#per-call-settings). Only conversions here; the
//! checks and the policy are the core's (`rp_core::request`).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use rp_core::client::Client;
use rp_core::request::{CallOptions as CoreOptions, Prepared, Request, Target};
use rp_core::template::Template;

use super::{convert, template};
use crate::errors::Fallible;

/// A request as one tuple (the cheapest value to build per call, and read here by position):
/// `(method, href, variables, body, templated, name, if_match, headers, options)`.
/// - `href`: a URL, or a template when `templated` says so (or, when it is `None`, when it
///   holds a `{`), expanded with `variables` (a mapping or `None`); or a link (`_LinkCore`),
///   its href as the link keeps it parsed;
/// - `body`: the JSON body or `None`; `if_match`: `If-Match` or `None`;
/// - `name`: what messages call the target (a link's relation) or `None`;
/// - `headers`: this call's extra headers for the API's origin, token endpoint included (the
///   trace context), or `None`;
/// - `options`: the `CallOptions` of a derived client, or `None`.
#[derive(FromPyObject)]
pub(crate) struct Call<'py>(
    PyBackedStr,
    Href,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
    Option<bool>,
    Option<String>,
    Option<String>,
    Option<Vec<(String, String)>>,
    Option<Bound<'py, CallOptions>>,
);

/// A call's href: the caller's text (a URL, or a template), or a link's template that the
/// link parsed once (`_LinkCore`).
pub(crate) enum Href {
    Text(String),
    Parsed(Arc<Template>),
}
// Read from Python by link.rs (`impl FromPyObject for Href`): text, or a link.

impl<'py> Call<'py> {
    /// A GET of a link (`Link.__call__`): no body, `If-Match` or extra headers.
    pub(crate) fn get(
        py: Python<'py>,
        href: Href,
        variables: Option<Bound<'py, PyAny>>,
        templated: bool,
        name: String,
        options: Option<Bound<'py, CallOptions>>,
    ) -> PyResult<Self> {
        let method = pyo3::intern!(py, "GET").extract::<PyBackedStr>()?;
        let (body, if_match, headers) = (None, None, None);
        let (templated, name) = (Some(templated), Some(name));
        Ok(Call(
            method, href, variables, body, templated, name, if_match, headers, options,
        ))
    }

    /// The core request of this call, checked, expanded and resolved by `core`.
    pub(crate) fn prepare(self, core: &Client) -> Fallible<Prepared> {
        let Call(method, href, variables, body, templated, name, if_match, headers, options) = self;
        let name = name.filter(|n| !n.is_empty()); // a rel named "" goes by its href
        let target = match href {
            Href::Text(href) => {
                template::target_from(href, variables.as_ref(), templated, name.as_deref())?
            }
            Href::Parsed(parsed) => {
                Target::of_link(parsed, template::variables_of(variables.as_ref())?)
            }
        };
        let mut request = Request::new(&method, target)?;
        request.body = match body {
            Some(b) if !b.is_none() => Some(bytes::Bytes::from(convert::to_json_bytes(&b)?)),
            _ => None,
        };
        request.if_match = if_match;
        request.headers = headers.unwrap_or_default();
        request.name = name;
        request.options = options.map(|o| o.get().inner.clone());
        Ok(core.prepare(request)?)
    }
}

/// The settings of a client derived by `with_options` (checked by `_settings` first, and by
/// the core again): each given one replaces the client's for every call made through it.
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct CallOptions {
    pub(crate) inner: Arc<CoreOptions>,
}

#[pymethods]
impl CallOptions {
    #[new]
    #[pyo3(signature = (*, timeout=None, connect_timeout=None, total_timeout=None, retries=None,
        headers=None))]
    fn new(
        timeout: Option<f64>,
        connect_timeout: Option<f64>,
        total_timeout: Option<f64>,
        retries: Option<u32>,
        headers: Option<Vec<(String, String)>>,
    ) -> Fallible<Self> {
        let options = CoreOptions::new(
            timeout,
            connect_timeout,
            total_timeout,
            retries,
            headers.as_deref(),
        )?;
        Ok(CallOptions {
            inner: Arc::new(options),
        })
    }
}

/// The options of a call that passed them (`authenticate`), else none of their own.
pub(crate) fn options_of(options: Option<&Bound<'_, CallOptions>>) -> Arc<CoreOptions> {
    options.map_or_else(Arc::default, |o| o.get().inner.clone())
}
