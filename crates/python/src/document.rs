//! Response documents that become Python objects on access.
//!
//! One pass of jiter over the body validates the JSON and the HAL shape and records where each
//! field of each object is; no Python object is built. A `Document` (a read-only mapping) then
//! converts a field when it is read. A page of 5,000 embedded mandates of which a loop reads one
//! field each converts 5,000 strings instead of ~150,000 objects: the conversion to Python, not
//! HTTP, was most of the time of a large collection (BENCHMARKS.md).
//!
//! A resource is immutable: a scalar is converted once and kept (it cannot be changed), an
//! object or an array is converted afresh on each read, so changing what one read gave changes
//! no later read.
//!
//! The pass also bounds nesting (objects and arrays, anywhere in the body) to `MAX_NESTING`
//! levels, so that no Python conversion, `copy.deepcopy` or `repr` of anything a resource
//! gives can hit Python's recursion limit.

use crate::errors::to_py;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use jiter::{Jiter, JiterError, Peek, PythonParse, StringCacheMode};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use rp_core::error::Error;

/// Objects with more names than this get a hash index; smaller ones are scanned.
const SCANNED: usize = 16;

/// Deepest nesting of objects and arrays in a body (the top object is level 1), about where
/// serde_json stops in the core's `hal::parse` (it accepts 127). Python's default recursion
/// limit (1,000) leaves room for `copy.deepcopy` of a value this deep (two frames a level)
/// from 100 frames down, and jiter's own limit (200) for `to_dict()` of the whole body.
/// `_embedded` resources nest to 63 (two levels each).
const MAX_NESTING: usize = 128;

/// A field name: where it is in the body, or decoded when it had escapes.
enum Key {
    At(Range<usize>),
    Decoded(Box<str>),
}

impl Key {
    fn of(name: &str, body: &[u8]) -> Key {
        let start = (name.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
        if start <= body.len() && name.len() <= body.len() - start {
            Key::At(start..start + name.len())
        } else {
            Key::Decoded(name.into()) // jiter decoded it into its scratch tape
        }
    }

    fn text<'a>(&'a self, body: &'a [u8]) -> &'a str {
        match self {
            // validated UTF-8 (the whole body is), and jiter cut it at the quotes
            Key::At(range) => std::str::from_utf8(&body[range.clone()]).unwrap_or_default(),
            Key::Decoded(text) => text,
        }
    }
}

/// Names in first-seen order, each once; found by scanning (few) or by hash (many).
#[derive(Default)]
struct Names {
    keys: Vec<Key>,
    by_name: Option<HashMap<Box<str>, usize>>,
}

impl Names {
    fn find(&self, body: &[u8], name: &str) -> Option<usize> {
        match &self.by_name {
            Some(map) => map.get(name).copied(),
            None => self.keys.iter().position(|k| k.text(body) == name),
        }
    }

    /// Where `key` is, and whether it was new (a repeated name keeps its first place).
    fn add(&mut self, body: &[u8], key: Key) -> (usize, bool) {
        if let Some(at) = self.find(body, key.text(body)) {
            return (at, false);
        }
        let at = self.keys.len();
        if let Some(map) = &mut self.by_name {
            map.insert(key.text(body).into(), at);
        }
        self.keys.push(key);
        if self.by_name.is_none() && self.keys.len() > SCANNED {
            let named = self.keys.iter().enumerate();
            self.by_name = Some(named.map(|(i, k)| (k.text(body).into(), i)).collect());
        }
        (at, true)
    }

    fn len(&self) -> usize {
        self.keys.len()
    }
}

enum Children {
    One(Arc<Index>),
    Many(Vec<Arc<Index>>),
}

/// Where everything of one JSON object of the body is.
struct Index {
    span: Range<usize>,
    /// The field names; a repeated name keeps its last value, as in a Python dict.
    names: Names,
    values: Vec<Range<usize>>,
    /// The field `_embedded`, and its relations indexed in turn.
    embedded: Option<(usize, Embedded)>,
}

#[derive(Default)]
struct Embedded {
    rels: Names,
    children: Vec<Children>,
}

/// Why a body was refused: JSON syntax (described with jiter's position) or HAL shape.
enum Refusal {
    Json(JiterError),
    Hal(String),
}

impl From<JiterError> for Refusal {
    fn from(e: JiterError) -> Self {
        Refusal::Json(e)
    }
}

type Walk<T> = Result<T, Refusal>;

/// Validate `body` (a JSON object of HAL shape) and index it.
pub fn parse(mut body: Bytes) -> Result<Document, Error> {
    // RFC 8259 §8.1 lets a parser ignore a byte order mark, as the core's `hal::parse` does.
    if body.starts_with(b"\xef\xbb\xbf") {
        body = body.slice(3..);
    }
    let invalid =
        |what: String| Error::protocol(format!("response body is not valid JSON: {what}"));
    if let Err(e) = std::str::from_utf8(&body) {
        return Err(invalid(format!(
            "invalid UTF-8 at byte {}",
            e.valid_up_to()
        )));
    }
    let mut jiter = Jiter::new(&body);
    let walked = index_body(&mut jiter, &body);
    let index = walked.map_err(|refusal| match refusal {
        Refusal::Json(e) => invalid(e.description(&jiter)),
        Refusal::Hal(message) => Error::protocol(message),
    })?;
    Ok(Document::new(body, Arc::new(index)))
}

fn index_body(jiter: &mut Jiter<'_>, body: &[u8]) -> Walk<Index> {
    let peek = jiter.peek()?;
    if peek != Peek::Object {
        jiter.known_skip(peek)?;
        jiter.finish()?; // invalid JSON is reported as such before its type
        return Err(Refusal::Hal("response body is not a JSON object".into()));
    }
    let index = object(jiter, body, 1)?;
    jiter.finish()?;
    Ok(index)
}

/// An object or array at nesting `level` (the top object is 1) must be within the limit.
fn within_limit(level: usize) -> Walk<()> {
    if level > MAX_NESTING {
        let message = format!("response body is nested deeper than {MAX_NESTING} levels");
        return Err(Refusal::Hal(message));
    }
    Ok(())
}

/// Skip the value at the cursor (its start peeked), which is at nesting `level` if it is an
/// object or an array. jiter's own skip allows 200 levels from wherever it starts.
fn skip(jiter: &mut Jiter<'_>, peek: Peek, level: usize) -> Walk<()> {
    match peek {
        Peek::Array => {
            within_limit(level)?;
            let mut item = jiter.known_array()?;
            while let Some(peek) = item {
                skip(jiter, peek, level + 1)?;
                item = jiter.array_step()?;
            }
        }
        Peek::Object => {
            within_limit(level)?;
            let mut more = jiter.known_object()?.is_some();
            while more {
                let peek = jiter.peek()?;
                skip(jiter, peek, level + 1)?;
                more = jiter.next_key()?.is_some();
            }
        }
        _ => jiter.known_skip(peek)?,
    }
    Ok(())
}

/// The first name of the object at the cursor (its `{` peeked); `None` if it is empty.
fn first_name(jiter: &mut Jiter<'_>, body: &[u8]) -> Walk<Option<Key>> {
    Ok(jiter.known_object()?.map(|name| Key::of(name, body)))
}

/// The next name of the object being walked; `None` at its `}`.
fn next_name(jiter: &mut Jiter<'_>, body: &[u8]) -> Walk<Option<Key>> {
    Ok(jiter.next_key()?.map(|name| Key::of(name, body)))
}

/// Index the object at the cursor (its `{` peeked, at nesting `level`), checking `_links` and
/// `_embedded`.
fn object(jiter: &mut Jiter<'_>, body: &[u8], level: usize) -> Walk<Index> {
    within_limit(level)?;
    let start = jiter.current_index();
    let mut index = Index {
        span: start..start,
        names: Names::default(),
        values: Vec::new(),
        embedded: None,
    };
    let mut name = first_name(jiter, body)?;
    while let Some(key) = name {
        let peek = jiter.peek()?;
        let value_start = jiter.current_index();
        let mut embedded = None;
        match key.text(body) {
            "_links" => links(jiter, body, peek, level + 1)?,
            "_embedded" => embedded = Some(embedded_rels(jiter, body, peek, level + 1)?),
            _ => skip(jiter, peek, level + 1)?,
        }
        let value = value_start..jiter.current_index();
        let at = match index.names.add(body, key) {
            (at, true) => {
                index.values.push(value);
                at
            }
            (at, false) => {
                index.values[at] = value;
                at
            }
        };
        if let Some(rels) = embedded {
            index.embedded = Some((at, rels));
        }
        name = next_name(jiter, body)?;
    }
    index.span.end = jiter.current_index();
    Ok(index)
}

/// `_links`: an object of link objects (or arrays of them), each with a string `href` and,
/// if any, a boolean `templated`.
fn links(jiter: &mut Jiter<'_>, body: &[u8], peek: Peek, level: usize) -> Walk<()> {
    if peek != Peek::Object {
        return Err(Refusal::Hal("\"_links\" is not an object".into()));
    }
    within_limit(level)?;
    let mut rel = first_name(jiter, body)?;
    while let Some(key) = rel {
        let peek = jiter.peek()?;
        if peek == Peek::Array {
            within_limit(level + 1)?;
            let mut item = jiter.known_array()?;
            while let Some(peek) = item {
                link(jiter, body, peek, &key, level + 2)?;
                item = jiter.array_step()?;
            }
        } else {
            link(jiter, body, peek, &key, level + 1)?;
        }
        rel = next_name(jiter, body)?;
    }
    Ok(())
}

fn link(jiter: &mut Jiter<'_>, body: &[u8], peek: Peek, rel: &Key, level: usize) -> Walk<()> {
    let rel = || rel.text(body);
    if peek != Peek::Object {
        return Err(Refusal::Hal(format!("link {} is not an object", rel())));
    }
    within_limit(level)?;
    let (mut href, mut templated) = (None, None);
    let mut name = first_name(jiter, body)?;
    while let Some(key) = name {
        let peek = jiter.peek()?;
        match key.text(body) {
            "href" => href = Some(peek == Peek::String),
            "templated" => templated = Some(peek == Peek::True || peek == Peek::False),
            _ => {}
        }
        skip(jiter, peek, level + 1)?;
        name = next_name(jiter, body)?;
    }
    if href != Some(true) {
        return Err(Refusal::Hal(format!(
            "link {} has no string \"href\"",
            rel()
        )));
    }
    if templated == Some(false) {
        let message = format!("link {} has a \"templated\" that is not a boolean", rel());
        return Err(Refusal::Hal(message));
    }
    Ok(())
}

/// `_embedded`: an object of objects (or arrays of them), each a HAL document, indexed.
fn embedded_rels(jiter: &mut Jiter<'_>, body: &[u8], peek: Peek, level: usize) -> Walk<Embedded> {
    if peek != Peek::Object {
        return Err(Refusal::Hal("\"_embedded\" is not an object".into()));
    }
    within_limit(level)?;
    let mut embedded = Embedded::default();
    let mut rel = first_name(jiter, body)?;
    while let Some(key) = rel {
        let not_object = || Refusal::Hal(format!("embedded {} is not an object", key.text(body)));
        let peek = jiter.peek()?;
        let children = if peek == Peek::Array {
            within_limit(level + 1)?;
            let mut items = Vec::new();
            let mut item = jiter.known_array()?;
            while let Some(peek) = item {
                if peek != Peek::Object {
                    return Err(not_object());
                }
                items.push(Arc::new(object(jiter, body, level + 2)?));
                item = jiter.array_step()?;
            }
            Children::Many(items)
        } else if peek == Peek::Object {
            Children::One(Arc::new(object(jiter, body, level + 1)?))
        } else {
            return Err(not_object());
        };
        match embedded.rels.add(body, key) {
            (_, true) => embedded.children.push(children),
            (at, false) => embedded.children[at] = children,
        }
        rel = next_name(jiter, body)?;
    }
    Ok(embedded)
}

/// A HAL document (or an embedded one) as a read-only mapping whose values are converted to
/// Python objects when read: a scalar once (then kept), an object or array on each read, so no
/// read can change what a later one gives. `_links` and `_embedded`, which only the `Resource`
/// layer reads (never handed to users as they are), are kept too.
#[pyclass(module = "recurring_payments._core", frozen, mapping)]
pub struct Document {
    body: Bytes,
    index: Arc<Index>,
    values: Box<[OnceLock<Py<PyAny>>]>,
}

impl Document {
    fn new(body: Bytes, index: Arc<Index>) -> Document {
        let values = index.values.iter().map(|_| OnceLock::new()).collect();
        Document {
            body,
            index,
            values,
        }
    }

    fn key<'py>(&self, py: Python<'py>, at: usize) -> Bound<'py, PyString> {
        PyString::new(py, self.index.names.keys[at].text(&self.body))
    }

    fn value<'py>(&self, py: Python<'py>, at: usize) -> PyResult<Bound<'py, PyAny>> {
        let cell = &self.values[at];
        if let Some(value) = cell.get() {
            return Ok(value.bind(py).clone());
        }
        let value = self.convert(py, at)?;
        if !self.kept(at) {
            return Ok(value.into_bound(py));
        }
        // Under the GIL and without releasing it, nobody else can have set it meanwhile.
        let kept = cell.get_or_init(|| value);
        Ok(kept.bind(py).clone())
    }

    /// Whether field `at` is converted once: a scalar (immutable in Python), or a HAL member.
    fn kept(&self, at: usize) -> bool {
        let text = &self.body[self.index.values[at].clone()];
        let first = text.iter().find(|b| !b.is_ascii_whitespace());
        let mutable = matches!(first, Some(b'{' | b'['));
        !mutable
            || self
                .index
                .embedded
                .as_ref()
                .is_some_and(|(field, _)| *field == at)
            || self.index.names.keys[at].text(&self.body) == "_links"
    }

    fn convert(&self, py: Python<'_>, at: usize) -> PyResult<Py<PyAny>> {
        if let Some((field, embedded)) = &self.index.embedded {
            if *field == at {
                return self.embedded(py, embedded);
            }
        }
        parse_python(py, &self.body[self.index.values[at].clone()])
    }

    /// `_embedded` as a dict of relation -> Document (or a list of them).
    fn embedded(&self, py: Python<'_>, embedded: &Embedded) -> PyResult<Py<PyAny>> {
        let child = |index: &Arc<Index>| Document::new(self.body.clone(), Arc::clone(index));
        let dict = PyDict::new(py);
        for (key, children) in embedded.rels.keys.iter().zip(&embedded.children) {
            let value = match children {
                Children::One(index) => Bound::new(py, child(index))?.into_any(),
                Children::Many(items) => {
                    let list = PyList::empty(py);
                    for index in items {
                        list.append(Bound::new(py, child(index))?)?;
                    }
                    list.into_any()
                }
            };
            dict.set_item(key.text(&self.body), value)?;
        }
        Ok(dict.into_any().unbind())
    }

    fn find(&self, name: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        match name.cast::<PyString>() {
            Ok(name) => Ok(self.index.names.find(&self.body, name.to_str()?)),
            Err(_) => Ok(None), // only str keys exist
        }
    }
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
        self.index.names.len()
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

    /// The whole object as new Python objects (embedded documents as dicts too).
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        parse_python(py, &self.body[self.index.span.clone()])
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("<Document {}>", self.keys(py)?.repr()?))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for value in self.values.iter() {
            if let Some(value) = value.get() {
                visit.call(value)?;
            }
        }
        Ok(())
    }
}
