//! `_LinkCore`: the native base of `Link` and `AsyncLink`
//! (python/recurring_payments/_link_base.py). It holds a link's fields, and its call is the
//! sync face's GET in one native slot: the request is sent by the native client and the
//! `Resource` made here, with no Python frame between the caller and the core (the frames of
//! `Link.__call__`, `_send` and `Resource._make` were a fifth of a warm follow's instructions).
//! A deprecated link, a call with telemetry, or one under gevent or eventlet goes through the
//! Python method `_get`, which handles each.

use std::sync::Arc;

use crate::call::{Call, CallOptions, Href};
use crate::client::NativeClient;
use crate::construct::{new_with_args, Maker};
use crate::errors::Fallible;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};

use rp_core::template::Template;

/// A link's fields, under the names `_LinkBase` had as slots.
#[pyclass(module = "recurring_payments._core", name = "_LinkCore", subclass)]
pub struct LinkCore {
    #[pyo3(get, set, name = "_session")]
    session: Option<Py<PyAny>>,
    /// The full relation.
    ///
    /// >>> client.get_creditors.rel
    /// '...#get-creditors'
    #[pyo3(get, set)]
    rel: Option<Py<PyAny>>,
    /// The href (`href` below).
    href: Option<Py<PyAny>>,
    /// Whether it is a template (`templated` below).
    templated: bool,
    /// The href parsed as a template, on the first call that parsed it without an error; set
    /// again with `href` or `templated`.
    template: Option<Arc<Template>>,
    /// The link's ``title``, or ``None``.
    ///
    /// >>> print(client.get_creditors.title)
    /// None
    #[pyo3(get, set)]
    title: Option<Py<PyAny>>,
    /// The link's ``name`` (among links of one relation), or ``None``.
    ///
    /// >>> print(client.get_creditors.name)
    /// None
    #[pyo3(get, set)]
    name: Option<Py<PyAny>>,
    /// The media type the link's target is expected to have, or ``None``.
    ///
    /// >>> print(client.get_creditors.type)
    /// None
    #[pyo3(get, set, name = "type")]
    kind: Option<Py<PyAny>>,
    /// The link's ``profile`` URI, or ``None``.
    ///
    /// >>> print(client.get_creditors.profile)
    /// None
    #[pyo3(get, set)]
    profile: Option<Py<PyAny>>,
    /// A URL saying why the link is deprecated, or ``None``; calling a deprecated link
    /// warns (``DeprecationWarning``).
    ///
    /// >>> print(client.get_creditors.deprecation)
    /// None
    #[pyo3(get, set)]
    deprecation: Option<Py<PyAny>>,
    /// The language of the link's target, or ``None``.
    ///
    /// >>> print(client.get_creditors.hreflang)
    /// None
    #[pyo3(get, set)]
    hreflang: Option<Py<PyAny>>,
}

/// `sys.modules`, to see whether gevent's or eventlet's patcher was imported.
static MODULES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// Whether gevent or eventlet may have patched the process: a wait then runs on the hub's
/// thread pool (`_green._blocking`), in Python.
fn green(py: Python<'_>) -> PyResult<bool> {
    let modules = MODULES.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        Ok(py
            .import("sys")?
            .getattr("modules")?
            .cast_into::<PyDict>()?
            .unbind())
    })?;
    let modules = modules.bind(py);
    Ok(modules.contains(intern!(py, "gevent.monkey"))?
        || modules.contains(intern!(py, "eventlet.patcher"))?)
}

impl LinkCore {
    /// Every field unset (`None`, not templated).
    fn unset() -> Self {
        LinkCore {
            session: None,
            rel: None,
            href: None,
            templated: false,
            template: None,
            title: None,
            name: None,
            kind: None,
            profile: None,
            deprecation: None,
            hreflang: None,
        }
    }
}

#[pymethods]
impl LinkCore {
    /// Every field unset (`None`, not templated): `_LinkBase.__init__` sets them.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyAny>, _kwargs: Option<&Bound<'_, PyAny>>) -> Self {
        LinkCore::unset()
    }

    /// A link of `cls` with `href` and `templated` alone (what `_LinkBase._plain` makes).
    #[classmethod]
    pub(crate) fn _plain<'py>(
        cls: &Bound<'py, PyType>,
        session: Py<PyAny>,
        rel: Py<PyAny>,
        href: Py<PyAny>,
        templated: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let link = LinkCore {
            session: Some(session),
            rel: Some(rel),
            href: Some(href),
            templated,
            ..LinkCore::unset()
        };
        Maker::<LinkCore>::of(cls)?.make(link)
    }

    /// The href as sent: a template when ``templated``.
    ///
    /// >>> client.get_creditors.href
    /// 'http://127.0.0.1:.../creditors{?reference}'
    #[getter]
    fn href(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.href.as_ref().map(|href| href.clone_ref(py))
    }

    #[setter]
    fn set_href(&mut self, href: Py<PyAny>) {
        self.href = Some(href);
        self.template = None;
    }

    /// Whether ``href`` is an RFC 6570 template.
    ///
    /// >>> client.get_creditors.templated, client.create_orders.templated
    /// (True, False)
    #[getter]
    fn templated(&self) -> bool {
        self.templated
    }

    #[setter]
    fn set_templated(&mut self, templated: bool) {
        self.templated = templated;
        self.template = None;
    }

    /// The names of the template's variables, in order (none for a plain link), read from
    /// the template kept with the link; `TemplateError` if it is malformed.
    fn _declared(slf: &Bound<'_, Self>) -> Fallible<Vec<String>> {
        let templated = slf.borrow().templated;
        Ok(match Self::call_href(slf)? {
            Href::Parsed(template) => template.parsed().checked_variables()?,
            Href::Text(text) if templated => rp_core::template::variables(&text)?,
            Href::Text(_) => Vec::new(),
        })
    }

    /// GET this link; same as :meth:`get`. Template variables are keyword arguments.
    ///
    /// >>> client.get_creditors(reference="democreditor").status
    /// 200
    /// >>> client.get_creditors("democreditor")
    /// Traceback (most recent call last):
    /// ...
    /// TypeError: ... as keyword arguments: get_creditors(reference=...)
    //
    // `Link.__call__` (the sync face's; `AsyncLink` has its own), as a method rather than the
    // slot: its signature then reads as the twin's, `(self, *positional, **variables)`.
    #[pyo3(signature = (*positional, **variables), text_signature = "(self, *positional, **variables)")]
    fn _call<'py>(
        slf: &Bound<'py, Self>,
        positional: &Bound<'py, PyTuple>,
        variables: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        if !positional.is_empty() {
            // Template variables are keywords: the link says which (`_LinkBase`).
            let error = slf.call_method0(intern!(py, "_positional_error"))?;
            return Err(PyErr::from_value(error));
        }
        let fields = {
            let me = slf.borrow();
            match (&me.deprecation, &me.session, &me.rel) {
                (None, Some(session), Some(rel)) if me.href.is_some() => Some((
                    session.bind(py).clone(),
                    rel.bind(py).extract::<String>(),
                    me.templated,
                )),
                _ => None,
            }
        };
        let slow = |variables: Option<Bound<'py, PyDict>>| {
            let variables = variables.unwrap_or_else(|| PyDict::new(py));
            slf.call_method1(intern!(py, "_get"), (variables,))
        };
        // With telemetry, `_get` sends with the recorder started here.
        let recording = |variables: Option<Bound<'py, PyDict>>, recorder| {
            let variables = variables.unwrap_or_else(|| PyDict::new(py));
            slf.call_method1(intern!(py, "_get"), (variables, recorder))
        };
        let Some((session, Ok(rel), templated)) = fields else {
            return slow(variables);
        };
        let native = session.getattr(intern!(py, "native"))?;
        let Ok(native) = native.cast::<NativeClient>() else {
            return slow(variables); // a closed or detached client: its error, from Python
        };
        if green(py)? {
            return slow(variables);
        }
        // Telemetry on (the default) records nothing unless an SDK is configured or the
        // context has a span: its `start` says so (None), and the call stays native.
        let telemetry = session.getattr(intern!(py, "telemetry"))?;
        if !telemetry.is_none() {
            let recorder = telemetry.call_method0(intern!(py, "start"))?;
            if !recorder.is_none() {
                return recording(variables, recorder);
            }
        }
        let options = session.getattr(intern!(py, "options"))?;
        let options = match options.is_none() {
            true => None,
            false => Some(options.cast_into::<CallOptions>()?),
        };
        let Ok(href) = Self::call_href(slf) else {
            return slow(variables); // an href that is not text: its error, from Python
        };
        let variables = variables.map(Bound::into_any);
        let call = Call::get(py, href, variables, templated, rel, options)?;
        let reply = native.get().send(py, call, None)?;
        let resource_type = slf.get_type().getattr(intern!(py, "_resource_type"))?;
        new_resource(resource_type.cast::<PyType>()?, &session, reply)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for member in [
            &self.session,
            &self.rel,
            &self.href,
            &self.title,
            &self.name,
            &self.kind,
            &self.profile,
            &self.deprecation,
            &self.hreflang,
        ] {
            visit.call(member)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.session = None;
        self.rel = None;
        self.href = None;
        self.title = None;
        self.name = None;
        self.kind = None;
        self.profile = None;
        self.deprecation = None;
        self.hreflang = None;
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Href {
    type Error = PyErr;

    /// A call's href (`Call`): text, or a link (`_LinkCore`), whose template is parsed once
    /// and kept with it.
    fn extract(href: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match href.cast::<LinkCore>() {
            Ok(link) => LinkCore::call_href(&link),
            Err(_) => Ok(Href::Text(href.extract()?)),
        }
    }
}

impl LinkCore {
    /// What a call of this link sends to: its template as parsed on the first call that
    /// parsed it and kept with the link, or its href as text. A template that does not parse
    /// is not kept: the request reports it where it always has (after the variables are
    /// converted), on every call.
    pub(crate) fn call_href(link: &Bound<'_, LinkCore>) -> PyResult<Href> {
        let (text, templated) = {
            let me = link.borrow();
            if let Some(template) = &me.template {
                return Ok(Href::Parsed(template.clone()));
            }
            let text = match &me.href {
                Some(href) => href.bind(link.py()).extract::<String>(),
                // Unset: the property says why.
                None => link
                    .getattr(intern!(link.py(), "href"))?
                    .extract::<String>(),
            };
            (text?, me.templated)
        };
        if !templated {
            return Ok(Href::Text(text));
        }
        Ok(match Template::new(text.clone()) {
            Ok(template) => {
                let template = Arc::new(template);
                if let Ok(mut fields) = link.try_borrow_mut() {
                    fields.template = Some(template.clone());
                }
                Href::Parsed(template)
            }
            Err(_) => Href::Text(text),
        })
    }
}

/// The resource of a reply, `(status, headers, document)` (`NativeClient.send`), as
/// `cls._make(session, document or {}, status, headers, False, ())` makes it.
pub(crate) fn new_resource<'py>(
    cls: &Bound<'py, PyType>,
    session: &Bound<'py, PyAny>,
    reply: Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let (status, headers, document) = (reply.get_item(0)?, reply.get_item(1)?, reply.get_item(2)?);
    let document = match document.is_none() {
        true => PyDict::new(py).into_any(),
        false => document,
    };
    let partial = pyo3::types::PyBool::new(py, false).to_owned().into_any();
    let curies = PyTuple::empty(py).into_any();
    let args = PyTuple::new(
        py,
        [session, &document, &status, &headers, &partial, &curies],
    )?;
    // `_resource_type` is the face's `Resource`, a `_ResourceCore` subclass: set by the package.
    new_with_args(cls, &args)
}
