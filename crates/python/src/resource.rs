//! `_ResourceCore`: the native base of `Resource` and `AsyncResource`
//! (python/recurring_payments/_resource_base.py). It holds a resource's state and answers the
//! reads a loop over a page makes thousands of times (`res["field"]`, `in`, `len`, `iter`,
//! `get`, `data`, `url`) in native slots: a Python method for each was most of the time of
//! reading a whole page (~200 ns a field, ~1 µs a `url`, BENCHMARKS.md). The Python classes
//! keep the relations, the navigation, the display and pickling.
//!
//! The document is a `Document` (a response's body, read through its index) or, for an empty
//! body or a resource made from a mapping, any Python mapping, read through its methods.

use std::cell::Cell;

use crate::client::NativeClient;
use crate::construct::Maker;
use crate::document::{Document, SelfLink};
use crate::generic_getattr::generic_getattr;
use crate::link::LinkCore;
use crate::rels::RelCache;
use crate::untracked::{track, untrack};

use pyo3::exceptions::{PyAttributeError, PyKeyError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};

/// What every resource holds, under the names `_ResourceBase` reads; `url` is the resolved
/// `self` href, kept once read.
#[pyclass(module = "recurring_payments._core", name = "_ResourceCore", subclass)]
pub struct ResourceCore {
    #[pyo3(get, name = "_session")]
    session: Option<Py<PyAny>>,
    #[pyo3(get, name = "_doc")]
    doc: Option<Py<PyAny>>,
    #[pyo3(get, name = "_status")]
    status: Option<Py<PyAny>>,
    /// `Headers`, or a reply's header pairs until first read; `None` for none (an item).
    #[pyo3(get, set, name = "_headers")]
    headers: Option<Py<PyAny>>,
    #[pyo3(get, name = "_partial")]
    partial: bool,
    /// The CURIEs of the resources that embed this one.
    #[pyo3(get, name = "_inherited")]
    inherited: Option<Py<PyAny>>,
    #[pyo3(get, set, name = "_link_map")]
    links: Option<Py<PyAny>>,
    #[pyo3(get, set, name = "_embedded_map")]
    embedded: Option<Py<PyAny>>,
    #[pyo3(get, set, name = "_index")]
    index: Option<Py<PyAny>>,
    /// Relations read as attributes.
    #[pyo3(get, set, name = "_attributes")]
    attributes: Option<Py<PyAny>>,
    url: Option<Py<PyAny>>,
}

impl ResourceCore {
    /// The document, as a `Document` when it is one (what a response's always is).
    fn document<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        match &self.doc {
            Some(doc) => doc.bind(py).clone(),
            None => py.None().into_bound(py), // only after the collector cleared it
        }
    }
}

/// The document of `slf`, read without keeping `slf` borrowed: reading a mapping that is not
/// a `Document` runs Python code, which may set a member of the same resource.
fn document_of<'py>(slf: &Bound<'py, ResourceCore>) -> Bound<'py, PyAny> {
    slf.borrow().document(slf.py())
}

fn key_error(key: &Bound<'_, PyAny>) -> PyErr {
    PyKeyError::new_err(key.clone().unbind())
}

/// Whether `key` names `_links` or `_embedded` (only a `str` can).
fn is_hal_key(key: &Bound<'_, PyAny>) -> PyResult<bool> {
    let text = key.cast::<PyString>().map(|text| text.to_str());
    Ok(matches!(text, Ok(Ok(name)) if rp_core::hal::is_reserved(name)))
}

#[pymethods]
impl ResourceCore {
    #[new]
    #[pyo3(signature = (session, document, status=None, headers=None, partial=false, curies=None))]
    fn new(
        py: Python<'_>,
        session: Py<PyAny>,
        document: Py<PyAny>,
        status: Option<Py<PyAny>>,
        headers: Option<Py<PyAny>>,
        partial: bool,
        curies: Option<Py<PyAny>>,
    ) -> Self {
        let curies = curies.unwrap_or_else(|| PyTuple::empty(py).into_any().unbind());
        ResourceCore {
            session: Some(session),
            doc: Some(document),
            status,
            headers,
            partial,
            inherited: Some(curies),
            links: None,
            embedded: None,
            index: None,
            attributes: None,
            url: None,
        }
    }

    fn __getitem__<'py>(
        slf: &Bound<'py, Self>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let doc = document_of(slf);
        if let Ok(doc) = doc.cast::<Document>() {
            return doc.get().state_field(key)?.ok_or_else(|| key_error(key));
        }
        if is_hal_key(key)? {
            return Err(key_error(key));
        }
        doc.get_item(key)
    }

    /// The value of the state's field ``key``, or ``default`` when there is none.
    ///
    /// >>> creditor = client.get_creditors(reference="democreditor")
    /// >>> creditor.get("name"), creditor.get("missing"), creditor.get("_links", 0)
    /// ('Demo Creditor SAS', None, 0)
    #[pyo3(signature = (key, default=None, /))]
    fn get<'py>(
        slf: &Bound<'py, Self>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let doc = document_of(slf);
        if let Ok(doc) = doc.cast::<Document>() {
            return Ok(doc.get().state_field(key)?.or(default));
        }
        match Self::__getitem__(slf, key) {
            Ok(value) => Ok(Some(value)),
            Err(e) if e.is_instance_of::<PyKeyError>(slf.py()) => Ok(default),
            Err(e) => Err(e),
        }
    }

    fn __contains__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let doc = document_of(slf);
        if let Ok(doc) = doc.cast::<Document>() {
            return doc.get().has_state_field(key);
        }
        Ok(doc.contains(key)? && !is_hal_key(key)?)
    }

    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Ok(state_keys(slf)?.into_any().try_iter()?.into_any())
    }

    fn __len__(slf: &Bound<'_, Self>) -> PyResult<usize> {
        let doc = document_of(slf);
        if let Ok(doc) = doc.cast::<Document>() {
            return Ok(doc.get().state_len());
        }
        Ok(state_keys(slf)?.len())
    }

    /// The state's names (a view, as a mapping's ``keys()``), in document order, made in one
    /// call rather than one lookup a name.
    ///
    /// >>> list(client.get_creditors(reference="democreditor").keys())
    /// ['reference', 'name']
    fn keys<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let names = PyDict::new(slf.py());
        for key in state_keys(slf)?.iter() {
            names.set_item(key, slf.py().None())?;
        }
        names.call_method0(intern!(slf.py(), "keys"))
    }

    /// The state's values (a view of a new ``dict`` of the state, as :attr:`data` makes it).
    ///
    /// >>> list(client.get_creditors(reference="democreditor").values())
    /// ['democreditor', 'Demo Creditor SAS']
    fn values<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::data(slf)?.call_method0(intern!(slf.py(), "values"))
    }

    /// The state's ``(name, value)`` pairs (a view of a new ``dict`` of the state, as
    /// :attr:`data` makes it): one call for the whole state.
    ///
    /// >>> dict(client.get_creditors(reference="democreditor").items())
    /// {'reference': 'democreditor', 'name': 'Demo Creditor SAS'}
    fn items<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::data(slf)?.call_method0(intern!(slf.py(), "items"))
    }

    /// The state as a new ``dict`` (a deep copy: change it freely).
    ///
    /// >>> client.get_creditors(reference="democreditor").data
    /// {'reference': 'democreditor', 'name': 'Demo Creditor SAS'}
    #[getter]
    fn data<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let doc = document_of(slf);
        if let Ok(doc) = doc.cast::<Document>() {
            // It converts objects and arrays afresh already.
            return doc.get().state(slf.py());
        }
        let py = slf.py();
        let deepcopy = py
            .import(intern!(py, "copy"))?
            .getattr(intern!(py, "deepcopy"))?;
        let data = PyDict::new(py);
        for key in state_keys(slf)?.iter() {
            data.set_item(&key, deepcopy.call1((doc.get_item(&key)?,))?)?;
        }
        Ok(data)
    }

    /// The absolute ``self`` href (also from an array of one ``self`` link), or ``None``.
    ///
    /// >>> client.get_creditors(reference="democreditor").url
    /// 'http://127.0.0.1:.../creditors/democreditor'
    #[getter]
    fn url<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let (doc, session) = {
            let me = slf.borrow();
            if let Some(url) = &me.url {
                return Ok(url.bind(py).clone());
            }
            let session = me.session.as_ref().map(|s| s.bind(py).clone());
            (me.document(py), session)
        };
        let self_link = match doc.cast::<Document>() {
            Ok(doc) => doc.get().self_link(),
            Err(_) => SelfLink::Other,
        };
        let url = match (self_link, session) {
            (SelfLink::Absent, _) => return Ok(py.None().into_bound(py)),
            (SelfLink::Plain(href), Some(session)) => resolve(&session, &href)?,
            // Templated, several members, an array, a mapping: as `_link_url` reads them.
            _ => slf.call_method0(intern!(py, "_url_of_self"))?,
        };
        slf.borrow_mut().url = Some(url.clone().unbind());
        Ok(url)
    }

    /// `resource.<name>`: first what `object.__getattribute__` finds (data descriptors, a
    /// subclass's instance `__dict__`, class attributes, methods, properties, a property
    /// raising `AttributeError` counting as nothing), looked up without making an
    /// `AttributeError` when there is nothing (CPython 3.11 formats its message, ~1,900
    /// instructions), then the relation of that name. What a `__getattr__` did, which CPython
    /// calls only after that error. Python subclasses inherit this slot as long as none of
    /// them defines `__getattr__` or `__getattribute__`.
    fn __getattribute__<'py>(
        slf: &Bound<'py, Self>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(found) = generic_getattr(slf.as_any(), name)? {
            return Ok(found);
        }
        relation(slf, name).inspect_err(|error| {
            if error.is_instance_of::<PyAttributeError>(slf.py()) {
                let raised = (name.clone().unbind(), error.clone_ref(slf.py()));
                RELATION_ERROR.set(Some(raised));
            }
        })
    }

    /// What pyo3's slot calls after `__getattribute__` raised an `AttributeError` (which it
    /// drops), as CPython calls `__getattr__`: only a missing relation comes here, and its
    /// error is raised as `__getattribute__` left it.
    fn __getattr__<'py>(
        slf: &Bound<'py, Self>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match RELATION_ERROR.take() {
            Some((raised_for, error)) if raised_for.bind(slf.py()).is(name) => Err(error),
            _ => relation(slf, name),
        }
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for member in [
            &self.session,
            &self.doc,
            &self.status,
            &self.headers,
            &self.inherited,
            &self.links,
            &self.embedded,
            &self.index,
            &self.attributes,
            &self.url,
        ] {
            visit.call(member)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.session = None;
        self.doc = None;
        self.status = None;
        self.headers = None;
        self.inherited = None;
        self.links = None;
        self.embedded = None;
        self.index = None;
        self.attributes = None;
        self.url = None;
    }
}

thread_local! {
    /// The `AttributeError` (`LinkNotFoundError`) of the relation `__getattribute__` just looked
    /// for, and the name it was for, kept for `__getattr__` to raise: pyo3's slot calls that
    /// with the same name right after, no Python code running between.
    static RELATION_ERROR: Cell<Option<(Py<PyString>, PyErr)>> = const { Cell::new(None) };
}

/// A relation read as an attribute (`mandate.creditor`), once the normal lookup found nothing
/// (`__getattribute__`). A response's link of `href` and `templated` alone, read for the first
/// time, is made here with no Python frame: a Python `__getattr__` and its lookups were ~5,000
/// of a warm follow's instructions. Everything else (an item's `Mapping` document, an array,
/// an embedded resource, a built link map, a name Python must report) goes to
/// `_relation_slow`, once `_attributes` has no such name.
fn relation<'py>(
    slf: &Bound<'py, ResourceCore>,
    name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let slow = || slf.call_method1(intern!(py, "_relation_slow"), (name,));
    let Ok(text) = name.to_str() else {
        return slow();
    };
    if text.starts_with('_') {
        // Private names are never relations: `hasattr(res, "_x")` is simply False.
        return Err(PyAttributeError::new_err(name.clone().unbind()));
    }
    let (doc, session, inherited, attributes, mapped) = {
        let me = slf.borrow();
        let bound = |member: &Option<Py<PyAny>>| member.as_ref().map(|m| m.bind(py).clone());
        (
            me.document(py),
            bound(&me.session),
            bound(&me.inherited),
            bound(&me.attributes),
            me.links.is_some(),
        )
    };
    if let Some(attributes) = &attributes {
        if let Some(found) = attributes.cast::<PyDict>()?.get_item(name)? {
            return Ok(found);
        }
    }
    let (Ok(doc), Some(session), Some(inherited), false) =
        (doc.cast::<Document>(), session, inherited, mapped)
    else {
        return slow();
    };
    let rels = session.getattr(intern!(py, "rels"))?;
    let Ok(rels) = rels.cast::<RelCache>() else {
        return slow();
    };
    let (rel, is_link, href, templated) =
        rels.get()
            .attribute(py, doc.get(), inherited.extract()?, text)?;
    let (true, Some(href)) = (is_link, href) else {
        return slow();
    };
    let link_type = slf.get_type().getattr(intern!(py, "_link_type"))?;
    let link = LinkCore::_plain(
        link_type.cast::<PyType>()?,
        session.unbind(),
        PyString::new(py, &rel).into_any().unbind(),
        PyString::new(py, &href).into_any().unbind(),
        templated,
    )?;
    // An item of a page is untracked until it keeps an object (`resource_items`).
    track(slf.as_any());
    let attributes = match attributes {
        Some(attributes) => attributes.cast_into::<PyDict>()?,
        None => {
            let made = PyDict::new(py);
            slf.borrow_mut().attributes = Some(made.clone().into_any().unbind());
            made
        }
    };
    attributes.set_item(name, &link)?;
    Ok(link)
}

/// The state's names, in document order.
fn state_keys<'py>(slf: &Bound<'py, ResourceCore>) -> PyResult<Bound<'py, PyList>> {
    let doc = document_of(slf);
    if let Ok(doc) = doc.cast::<Document>() {
        return doc.get().state_keys(slf.py());
    }
    let keys = PyList::empty(slf.py());
    for key in doc.try_iter()? {
        let key = key?;
        if !is_hal_key(&key)? {
            keys.append(key)?;
        }
    }
    Ok(keys)
}

/// `href` resolved as the session resolves a server's href: by its live native client in
/// Rust, else (a closed or detached client) by the session's own `resolve`.
fn resolve<'py>(session: &Bound<'py, PyAny>, href: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = session.py();
    let native = session.getattr(intern!(py, "native"))?;
    if let Ok(native) = native.cast::<NativeClient>() {
        if let Ok(url) = native.get().resolve_server_href(py, href) {
            return Ok(url.into_any());
        }
    }
    session.call_method1(intern!(py, "resolve"), (href,))
}

/// The resources of an embedded array: for each of `documents`, what
/// `cls(session, document, partial=True, curies=curies)` makes, without running Python.
///
/// With `untracked`, each item is untracked by the cycle collector as soon as it is made, so
/// that none is ever in a generation: the collections a 5,000-item page triggers then find
/// nothing to traverse and promote, and trigger no full collection of the whole heap (~20 ms
/// in a process with a large heap, BENCHMARKS.md). The caller vouches that an item of `cls`
/// keeps nothing more than this base does until it is tracked again (`track`).
#[pyfunction]
pub(crate) fn resource_items<'py>(
    cls: &Bound<'py, PyType>,
    session: &Bound<'py, PyAny>,
    documents: &Bound<'py, PyList>,
    curies: &Bound<'py, PyAny>,
    untracked: bool,
) -> PyResult<Bound<'py, PyList>> {
    let py = cls.py();
    let maker = Maker::<ResourceCore>::of(cls)?;
    let mut items = Vec::with_capacity(documents.len());
    for doc in documents.iter() {
        let session = session.clone().unbind();
        let curies = Some(curies.clone().unbind());
        let item = maker.make(ResourceCore::new(
            py,
            session,
            doc.unbind(),
            None,
            None,
            true,
            curies,
        ))?;
        if untracked {
            untrack(&item);
        }
        items.push(item);
    }
    PyList::new(py, items)
}
