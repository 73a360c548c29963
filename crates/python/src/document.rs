//! Response documents that become Python objects on access: a mapping over the core's index
//! (`rp_core::hal`, one pass that validates and indexes the body without building values).
//! A `Document` converts a field when it is read. A page of 5,000 embedded mandates of which a
//! loop reads one field each converts 5,000 strings instead of ~150,000 objects: the conversion
//! to Python, not HTTP, was most of the time of a large collection (BENCHMARKS.md).
//!
//! A resource is immutable: a scalar is converted once and kept (it cannot be changed), an
//! object or an array is converted afresh on each read, so changing what one read gave changes
//! no later read. The core bounds nesting (`hal::MAX_NESTING`), so that no Python conversion,
//! `copy.deepcopy` or `repr` of anything a resource gives can hit Python's recursion limit.

use crate::errors::to_py;
use crate::kept::Kept;
use crate::untracked::new_untracked;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use jiter::{PythonParse, StringCacheMode};
use pyo3::exceptions::PyKeyError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use smallvec::SmallVec;

use rp_core::error::Error;
use rp_core::hal::{self, Kind, LinkEntry, OneOrMany};

/// Validate and index `body` (the core's parser), for the lazy view.
pub fn parse(body: Bytes) -> Result<Document, Error> {
    hal::parse(body).map(Document::new)
}

/// A HAL document (or an embedded one) as a read-only mapping whose values are converted to
/// Python objects when read: a scalar once (then kept), an object or array on each read, so no
/// read can change what a later one gives. `_links` and `_embedded`, which only the `Resource`
/// layer reads (never handed to users as they are), are kept too.
#[pyclass(module = "recurring_payments._core", frozen, mapping)]
pub struct Document {
    doc: hal::Document,
    values: SmallVec<[Kept; INLINE_FIELDS]>,
}

/// Fields whose cells fit in the document's own object: a usual resource or page item (8
/// fields and `_links`) then needs no allocation of its own for them.
const INLINE_FIELDS: usize = 10;

impl Document {
    /// The lazy view of a document the core parsed and indexed (`rp_core::reply::Reply`).
    pub(crate) fn new(doc: hal::Document) -> Document {
        let values = (0..doc.len()).map(|_| Kept::new()).collect();
        Document { doc, values }
    }

    fn key<'py>(&self, py: Python<'py>, at: usize) -> Bound<'py, PyString> {
        PyString::new(py, self.doc.name(at))
    }

    fn value<'py>(&self, py: Python<'py>, at: usize) -> PyResult<Bound<'py, PyAny>> {
        let cell = &self.values[at];
        if let Some(value) = cell.get(py) {
            return Ok(value);
        }
        let kind = self.doc.kind(at);
        let value = match kind {
            Kind::Embedded => self.embedded(py)?,
            Kind::Links => new_untracked(py, Links::new(self.doc.clone()))?
                .into_any()
                .unbind(),
            Kind::Scalar | Kind::Composite => self.state_value(py, at, kind)?.unbind(),
        };
        // An object or array of the state is converted afresh on each read (see the top).
        if kind == Kind::Composite {
            return Ok(value.into_bound(py));
        }
        Ok(cell.keep(value.into_bound(py)))
    }

    /// The state's field `at` (of `kind` `Scalar` or `Composite`), converted now.
    fn state_value<'py>(
        &self,
        py: Python<'py>,
        at: usize,
        kind: Kind,
    ) -> PyResult<Bound<'py, PyAny>> {
        let raw = self.doc.raw(at);
        let simple = match kind {
            Kind::Scalar => simple_scalar(py, raw),
            _ => None,
        };
        match simple {
            Some(value) => Ok(value),
            None => Ok(parse_python(py, raw)?.into_bound(py)),
        }
    }

    /// `_embedded` as a dict of relation -> Document (or a list of them).
    fn embedded(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let dict = PyDict::new(py);
        for (rel, children) in self.doc.embedded() {
            let value = match children {
                OneOrMany::One(doc) => Document::new(doc).into_python(py)?,
                OneOrMany::Many(docs) => {
                    let list = PyList::empty(py);
                    for doc in docs {
                        list.append(Document::new(doc).into_python(py)?)?;
                    }
                    list.into_any()
                }
            };
            dict.set_item(rel, value)?;
        }
        Ok(dict.into_any().unbind())
    }

    /// The Python object of this document. One without `_embedded` keeps only strings,
    /// numbers and `Links` (which hold no Python object): it is not tracked by the cycle
    /// collector (`untracked`). A page's items are such documents; the page itself, whose
    /// `_embedded` dict holds them, is tracked.
    pub(crate) fn into_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        if self.doc.embedded_field().is_some() {
            return Ok(Bound::new(py, self)?.into_any());
        }
        Ok(new_untracked(py, self)?.into_any())
    }

    /// The core document this view reads.
    pub(crate) fn core(&self) -> &hal::Document {
        &self.doc
    }

    /// The relations of `_links` with where their values are (empty without `_links`), read
    /// once: through the kept view of the `_links` field.
    pub(crate) fn links_view<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, Links>>> {
        let Some(at) = self.doc.links_field() else {
            return Ok(None);
        };
        let view = self.value(py, at)?;
        Ok(Some(view.cast_into::<Links>()?))
    }

    /// Where the state's field `name` is: `None` for a missing one and for `_links` and
    /// `_embedded` (`Resource["_links"]` is a `KeyError`, as for any name not in the state).
    fn find_state(&self, name: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        Ok(self.find(name)?.filter(|at| !self.doc.is_reserved_at(*at)))
    }

    /// The state's field `name` as a read gives it, or `None` (see `find_state`).
    pub(crate) fn state_field<'py>(
        &self,
        name: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.find_state(name)? {
            Some(at) => self.value(name.py(), at).map(Some),
            None => Ok(None),
        }
    }

    pub(crate) fn has_state_field(&self, name: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.find_state(name)?.is_some())
    }

    /// The state's names, in document order.
    pub(crate) fn state_keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let names = (0..self.values.len()).filter(|at| !hal::is_reserved(self.doc.name(*at)));
        PyList::new(py, names.map(|at| self.key(py, at)))
    }

    pub(crate) fn state_len(&self) -> usize {
        self.doc
            .names()
            .filter(|name| !hal::is_reserved(name))
            .count()
    }

    /// The `self` link as `Resource.url` reads it from the index, without Python objects.
    pub(crate) fn self_link(&self) -> SelfLink<'_> {
        let Some(text) = self.doc.self_link_text() else {
            return SelfLink::Absent;
        };
        if let Some(href) = hal::bare_href(text) {
            return SelfLink::Plain(Cow::Borrowed(href));
        }
        match hal::simple_link(text) {
            Some((href, false)) => SelfLink::Plain(Cow::Owned(href)),
            _ => SelfLink::Other,
        }
    }

    fn find(&self, name: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        // Only str keys exist, and none with a lone surrogate (the body is UTF-8).
        let Ok(Ok(text)) = name.cast::<PyString>().map(|name| name.to_str()) else {
            return Ok(None);
        };
        let slot = &FOUND_AT[(name.as_ptr() as usize >> 4) % FOUND_AT.len()];
        let guess = slot.load(Ordering::Relaxed);
        let found = self.doc.find_near(text, guess as usize);
        if let Some(at) = found.and_then(|at| u32::try_from(at).ok()) {
            if at != guess {
                slot.store(at, Ordering::Relaxed);
            }
        }
        Ok(found)
    }
}

/// Where a name was last found, by the address of the `str` that asked: a loop over a page
/// asks for the same names (the same objects) in items of the same shape, where each is at
/// the same place. `find_near` checks the guess (a wrong one costs a comparison), so a slot
/// shared by two names, or read while another thread writes it, only costs a search.
static FOUND_AT: [AtomicU32; 256] = [const { AtomicU32::new(0) }; 256];

/// A document's `self` link, for `Resource.url`.
pub(crate) enum SelfLink<'a> {
    Absent,
    /// `{"href": …}` (or with `"templated": false`): the href as sent.
    Plain(Cow<'a, str>),
    /// Templated, an array, or with other members: read by the Python layer.
    Other,
}

/// The `str` of a state's name for a new dict (`Document::state`): the dicts of a page's
/// items have the same names, each made once and shared (by a hash of its text, as orjson
/// caches keys) instead of once per item.
fn state_key<'a, 'py>(
    py: Python<'py>,
    bytes: &[u8],
    text: impl FnOnce() -> &'a str,
) -> Bound<'py, PyString> {
    if bytes.len() > MAX_SHARED_KEY {
        return PyString::new(py, text());
    }
    let byte = |i: usize| u64::from(bytes.get(i).copied().unwrap_or(0));
    let n = bytes.len();
    let mixed = n as u64 | byte(0) << 8 | byte(n / 2) << 16 | byte(n.wrapping_sub(1)) << 24;
    let slot = (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % SHARED_KEYS;
    SHARED.with_borrow_mut(|keys| match &keys[slot] {
        Some((name, key)) if **name == *bytes => key.bind(py).clone(),
        _ => {
            let key = PyString::new(py, text());
            keys[slot] = Some((bytes.into(), key.clone().unbind()));
            key
        }
    })
}

/// Names longer than this are made afresh (as orjson does: long keys rarely repeat).
const MAX_SHARED_KEY: usize = 64;
/// A name's text (its UTF-8 bytes) and its `str`.
type SharedKey = (Box<[u8]>, Py<PyString>);
const SHARED_KEYS: usize = 256;

thread_local! {
    /// The shared names of `state_key`, per thread (each one holding the GIL when it reads).
    static SHARED: RefCell<Vec<Option<SharedKey>>> =
        RefCell::new((0..SHARED_KEYS).map(|_| None).collect());
}

/// The Python value of a scalar the indexing pass validated, for the usual ones without a
/// parser: a string without escapes, `true`, `false`, `null`, an integer of up to 18 digits
/// (~150 instructions fewer than setting up jiter's parser, per field read; BENCHMARKS.md).
/// Anything else is `None`, for jiter to parse.
fn simple_scalar<'py>(py: Python<'py>, raw: &[u8]) -> Option<Bound<'py, PyAny>> {
    match raw {
        [b'"', text @ .., b'"'] if !text.contains(&b'\\') => {
            // JSON (no raw control characters) in a body of valid UTF-8: as is, decoded by
            // Python alone (checking the UTF-8 in Rust first was ~4% of reading a page).
            let length = ffi::Py_ssize_t::try_from(text.len()).ok()?;
            // SAFETY: the pointer and length of a live byte slice; Python copies it.
            #[allow(unsafe_code)]
            let made = unsafe { ffi::PyUnicode_FromStringAndSize(text.as_ptr().cast(), length) };
            // SAFETY: a new reference, or null with an error set (then read by jiter).
            #[allow(unsafe_code)]
            let made = unsafe { Bound::from_owned_ptr_or_err(py, made) };
            made.ok()
        }
        b"true" => Some(PyBool::new(py, true).to_owned().into_any()),
        b"false" => Some(PyBool::new(py, false).to_owned().into_any()),
        b"null" => Some(py.None().into_bound(py)),
        [b'-' | b'0'..=b'9', digits @ ..]
            if raw.len() <= 18 && digits.iter().all(u8::is_ascii_digit) =>
        {
            let number: i64 = std::str::from_utf8(raw).ok()?.parse().ok()?;
            number.into_pyobject(py).ok().map(Bound::into_any)
        }
        [b'-' | b'0'..=b'9', ..] if is_short_decimal(raw) => {
            let number: f64 = std::str::from_utf8(raw).ok()?.parse().ok()?;
            Some(PyFloat::new(py, number).into_any())
        }
        _ => None,
    }
}

/// Whether `raw` (a JSON number) is `-?digits.digits` of at most 15 digits: exactly a double
/// once divided by a power of ten of at most 15, so that every correct parser (jiter's, Rust's,
/// Python's `float`) gives the same value.
fn is_short_decimal(raw: &[u8]) -> bool {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    let mut dots = 0;
    for &b in digits {
        match b {
            b'.' => dots += 1,
            b'0'..=b'9' => {}
            _ => return false,
        }
    }
    dots == 1 && digits.len() <= 16
}

/// Python objects of a JSON text already validated by the indexing pass.
fn parse_python(py: Python<'_>, json: &[u8]) -> PyResult<Py<PyAny>> {
    let parser = PythonParse {
        cache_mode: StringCacheMode::Keys,
        ..PythonParse::default()
    };
    let value = parser.python_parse(py, json).map_err(|e| {
        let message = format!("response body is not valid JSON: {}", e.description(json));
        to_py(Error::protocol(message))
    })?;
    Ok(value.unbind())
}

#[pymethods]
impl Document {
    /// The document of a JSON body, validated and indexed as a response's is: how a pickled
    /// resource comes back (`__reduce__`), and how a notification's body is read.
    #[new]
    fn py_new(body: &[u8]) -> PyResult<Document> {
        parse(Bytes::copy_from_slice(body)).map_err(to_py)
    }

    /// Pickled as the JSON text of this document (an embedded one's own part of the body):
    /// loading indexes it again, so reads after a round trip are as fast as before it.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> (Bound<'py, pyo3::types::PyType>, (Bound<'py, PyBytes>,)) {
        let text = PyBytes::new(py, self.doc.text());
        (py.get_type::<Document>(), (text,))
    }

    /// Immutable: a copy is the document itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (memo, /))]
    fn __deepcopy__(slf: Py<Self>, memo: &Bound<'_, PyAny>) -> Py<Self> {
        let _ = memo; // nothing inside is copied
        slf
    }

    fn __getitem__<'py>(&self, name: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.find(name)? {
            Some(at) => self.value(name.py(), at),
            None => Err(PyKeyError::new_err(name.clone().unbind())),
        }
    }

    #[pyo3(signature = (key, default = None, /))]
    fn get<'py>(
        &self,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.find(key)? {
            Some(at) => self.value(key.py(), at).map(Some),
            None => Ok(default),
        }
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.find(name)?.is_some())
    }

    fn __len__(&self) -> usize {
        self.doc.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.keys(py)?.into_any().try_iter().map(Bound::into_any)
    }

    /// The names, in document order.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, (0..self.values.len()).map(|at| self.key(py, at)))
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let values = (0..self.values.len()).map(|at| self.value(py, at));
        PyList::new(py, values.collect::<PyResult<Vec<_>>>()?)
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = (0..self.values.len()).map(|at| {
            let pair = [self.key(py, at).into_any(), self.value(py, at)?];
            PyTuple::new(py, pair)
        });
        PyList::new(py, items.collect::<PyResult<Vec<_>>>()?)
    }

    /// The state as a new dict: every field but `_links` and `_embedded`, with the value a
    /// read gives (a kept scalar shared, the rest converted afresh and not kept: a dict of
    /// every field is rarely followed by reads of them). `Resource.data` in one call, without
    /// making the `_links` view or `_embedded`'s documents only to drop them.
    pub(crate) fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let state = PyDict::new(py);
        for (at, cell) in self.values.iter().enumerate() {
            let kind = self.doc.kind(at);
            if matches!(kind, Kind::Links | Kind::Embedded) {
                continue;
            }
            // A new dict: what is kept is shared, the rest converted without keeping it.
            let value = match cell.get(py) {
                Some(value) => value,
                None => self.state_value(py, at, kind)?,
            };
            let name = self.doc.name_bytes(at);
            state.set_item(state_key(py, name, || self.doc.name(at)), value)?;
        }
        Ok(state)
    }

    /// The whole object as new Python objects (embedded documents as dicts too).
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        parse_python(py, self.doc.text())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("<Document {}>", self.keys(py)?.repr()?))
    }

    /// Only the kept `_embedded` dict can be part of a reference cycle: the other kept values
    /// are scalars and `Links` (which hold no Python object). The GC traverses every young
    /// `Document` at each collection, thousands per page: visiting one slot, not every field,
    /// is what keeps that cheap.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        match self.doc.embedded_field().and_then(|at| self.values.get(at)) {
            Some(embedded) => embedded.visit(&visit),
            None => Ok(()),
        }
    }
}

/// `_links` as a read-only mapping of relation -> link object (or array of them), each
/// converted when read and afresh on each read. Only the `Resource` layer reads it, usually one
/// relation of several (`mandate.creditor`): converting the whole object was most of the cost
/// of that attribute (BENCHMARKS.md).
#[pyclass(module = "recurring_payments._core", frozen, mapping)]
pub struct Links {
    doc: hal::Document,
    entries: Vec<LinkEntry>,
    /// Relation -> entry, for the rare `_links` of many relations (a hostile body can send a
    /// million): a few are scanned.
    by_rel: Option<HashMap<String, usize>>,
}

/// Relations scanned by `Links::find`; past this many, found by hash.
const SCANNED_RELS: usize = 16;

impl Links {
    pub(crate) fn entries(&self) -> &[LinkEntry] {
        &self.entries
    }

    fn new(doc: hal::Document) -> Links {
        let entries = doc.link_entries();
        let by_rel = (entries.len() > SCANNED_RELS).then(|| {
            let named = entries.iter().enumerate();
            named.map(|(at, e)| (e.rel.clone(), at)).collect()
        });
        Links {
            doc,
            entries,
            by_rel,
        }
    }

    /// The entry of the relation `rel`, exactly as in the document.
    pub(crate) fn entry(&self, rel: &str) -> Option<&LinkEntry> {
        match &self.by_rel {
            Some(map) => map.get(rel).and_then(|at| self.entries.get(*at)),
            None => self.entries.iter().find(|e| e.rel == rel),
        }
    }

    /// The JSON text of an entry's value (a link object or an array of them).
    pub(crate) fn text(&self, entry: &LinkEntry) -> &[u8] {
        self.doc.link_text_at(entry)
    }

    fn find(&self, rel: &Bound<'_, PyAny>) -> PyResult<Option<&LinkEntry>> {
        // Only str keys exist, and none with a lone surrogate (the body is UTF-8).
        let Ok(Ok(rel)) = rel.cast::<PyString>().map(|rel| rel.to_str()) else {
            return Ok(None);
        };
        Ok(self.entry(rel))
    }

    fn value<'py>(&self, py: Python<'py>, entry: &LinkEntry) -> PyResult<Bound<'py, PyAny>> {
        Ok(parse_python(py, self.text(entry))?.into_bound(py))
    }
}

#[pymethods]
impl Links {
    fn __getitem__<'py>(&self, rel: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.find(rel)? {
            Some(entry) => self.value(rel.py(), entry),
            None => Err(PyKeyError::new_err(rel.clone().unbind())),
        }
    }

    #[pyo3(signature = (rel, default = None, /))]
    fn get<'py>(
        &self,
        rel: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.find(rel)? {
            Some(entry) => self.value(rel.py(), entry).map(Some),
            None => Ok(default),
        }
    }

    fn __contains__(&self, rel: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.find(rel)?.is_some())
    }

    fn __len__(&self) -> usize {
        self.entries.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.keys(py)?.into_any().try_iter().map(Bound::into_any)
    }

    /// The relations, in document order.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.entries.iter().map(|e| PyString::new(py, &e.rel)))
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let values = self.entries.iter().map(|e| self.value(py, e));
        PyList::new(py, values.collect::<PyResult<Vec<_>>>()?)
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self.entries.iter().map(|e| {
            let pair = [PyString::new(py, &e.rel).into_any(), self.value(py, e)?];
            PyTuple::new(py, pair)
        });
        PyList::new(py, items.collect::<PyResult<Vec<_>>>()?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("<Links {}>", self.keys(py)?.repr()?))
    }
}
