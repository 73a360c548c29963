//! `RelIndex`: the relation-name index of `rp_core::rels`, for the Python `Resource` layer.
//! Frozen (immutable), so one index is shared by every thread without a lock.

use crate::document::{Document, Links};
use crate::errors::Fallible;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;

use rp_core::error::Error;
use rp_core::hal::{self, Shape, ShapeRef};
use rp_core::rels::{self, Curie};

/// Shapes kept per cache; past this many (a hostile or very varied API), it starts afresh.
const CACHED_SHAPES: usize = 256;
/// Larger shapes are indexed for their resource alone, never kept: 256 kept shapes of a
/// hostile size each would hold gigabytes.
const CACHED_RELS: usize = 256;

/// The names of a resource's relations: full rel, CURIE form, short name, attribute form.
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct RelIndex {
    inner: rels::RelIndex,
}

impl RelIndex {
    fn of(rels: &[String], curies: &[Curie], namespace: Option<&str>) -> RelIndex {
        let inner = rels::RelIndex::new(rels.iter().map(String::as_str), curies, namespace);
        RelIndex { inner }
    }
}

fn to_curies(pairs: Vec<(String, String)>) -> Vec<Curie> {
    let curies = pairs.into_iter();
    curies.map(|(name, href)| Curie { name, href }).collect()
}

#[pymethods]
impl RelIndex {
    #[new]
    // text_signature: pyo3 cannot render `Vec::new()` as a Python default.
    #[pyo3(signature = (rels, curies = Vec::new(), namespace = None),
        text_signature = "(rels, curies=(), namespace=None)")]
    fn new(rels: Vec<String>, curies: Vec<(String, String)>, namespace: Option<String>) -> Self {
        RelIndex::of(&rels, &to_curies(curies), namespace.as_deref())
    }

    /// The full rel `name` designates, or None; LinkNotFoundError if it is ambiguous.
    fn find(&self, name: &str) -> Fallible<Option<String>> {
        Ok(self.inner.find(name)?.map(str::to_owned))
    }

    /// `find`, but a name that looks like a misspelling of a rel (the did-you-mean of `resolve`)
    /// raises that LinkNotFoundError; None when nothing is close.
    fn find_unless_misspelt(&self, name: &str) -> Fallible<Option<String>> {
        Ok(self.inner.find_unless_misspelt(name)?.map(str::to_owned))
    }

    /// The full rel `name` designates; LinkNotFoundError if none or ambiguous.
    fn resolve(&self, name: &str) -> Fallible<String> {
        Ok(self.inner.resolve(name)?.to_owned())
    }

    /// The full rel the attribute `name` stands for, or None; LinkNotFoundError if ambiguous
    /// (`ns#get-foo` and `ns#get_foo` both make the attribute `get_foo`).
    fn find_attribute(&self, name: &str) -> Fallible<Option<String>> {
        Ok(self.inner.find_attribute(name)?.map(str::to_owned))
    }

    /// The full rel the attribute `name` stands for; LinkNotFoundError if none or ambiguous.
    fn resolve_attribute(&self, name: &str) -> Fallible<String> {
        Ok(self.inner.resolve_attribute(name)?.to_owned())
    }

    /// Names usable as attributes (for dir() and tab completion), sorted.
    fn attribute_names(&self) -> Vec<String> {
        self.inner.attribute_names()
    }

    /// The shortest unambiguous name of the full rel `rel`, or None if it is not indexed.
    fn short_name(&self, rel: &str) -> Option<String> {
        self.inner.short_name(rel)
    }

    fn __repr__(&self) -> String {
        format!("<RelIndex of {} relations>", self.inner.len())
    }
}

/// Kept shapes by their hash, so that a response's shape is looked up borrowed from its
/// document ([`ShapeRef`]), its relation names copied only to keep a new one. foldhash with a
/// random seed per cache: hashing a response's 10-20 names with SipHash cost ~400 instructions a
/// follow more, and a server cannot aim at the seed (a bucket holds at most `CACHED_SHAPES`).
#[derive(Default)]
struct ShapeMap {
    hasher: foldhash::fast::RandomState,
    by_hash: HashMap<u64, Vec<(Shape, Py<RelIndex>)>, foldhash::fast::RandomState>,
    len: usize,
}

impl ShapeMap {
    fn get(&self, shape: &ShapeRef<'_>) -> Option<&Py<RelIndex>> {
        let bucket = self.by_hash.get(&self.hasher.hash_one(shape))?;
        bucket
            .iter()
            .find(|(kept, _)| shape.matches(kept))
            .map(|(_, index)| index)
    }

    fn insert(&mut self, shape: Shape, index: Py<RelIndex>) {
        let bucket = self
            .by_hash
            .entry(self.hasher.hash_one(&shape))
            .or_default();
        if !bucket.iter().any(|(kept, _)| *kept == shape) {
            bucket.push((shape, index));
            self.len += 1;
        }
    }

    fn clear(&mut self) {
        self.by_hash.clear();
        self.len = 0;
    }
}

/// The relation indexes of one client's resources, one per [`Shape`] (relations and CURIEs in
/// scope) under the client's namespace: the responses of one endpoint and the items of a
/// collection share theirs, so each is built once. The key is read from the body in Rust,
/// without converting `_links` to Python.
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct RelCache {
    namespace: Option<String>,
    // Held only for the map's own work: no Python object is made or run while it is taken
    // (always with the GIL held, so a fork, which needs the GIL, never happens meanwhile).
    indexes: Mutex<ShapeMap>,
}

impl RelCache {
    fn index(&self, py: Python<'_>, shape: ShapeRef<'_>) -> Fallible<Py<RelIndex>> {
        if let Some(index) = self.indexes()?.get(&shape) {
            return Ok(index.clone_ref(py));
        }
        // Made with no lock held: creating a Python object may run the garbage collector, and
        // a finalizer it runs may read a resource's relations, that is come back here.
        let namespace = self.namespace.as_deref();
        let rels = shape.rels.iter().copied();
        let index = rels::RelIndex::new(rels, &shape.curies, namespace);
        let index = Py::new(py, RelIndex { inner: index })?;
        if shape.rels.len() > CACHED_RELS {
            return Ok(index);
        }
        let mut indexes = self.indexes()?;
        if indexes.len >= CACHED_SHAPES {
            indexes.clear(); // dropping the indexes runs no Python code: they hold none
        }
        indexes.insert(shape.to_shape(), index.clone_ref(py));
        Ok(index)
    }

    /// The index of `document`'s relations (see `of_document`), and its `_links` view if any.
    fn document_index<'py>(
        &self,
        py: Python<'py>,
        document: &Document,
        inherited: Vec<(String, String)>,
    ) -> Fallible<(Py<RelIndex>, Option<Bound<'py, Links>>)> {
        let inherited = to_curies(inherited);
        let links = document.links_view(py)?;
        let index = match &links {
            Some(links) => {
                let shape = document.core().shape_ref(links.get().entries(), &inherited);
                self.index(py, shape)?
            }
            None => {
                let entries = document.core().link_entries();
                self.index(py, document.core().shape_ref(&entries, &inherited))?
            }
        };
        Ok((index, links))
    }

    fn indexes(&self) -> Fallible<MutexGuard<'_, ShapeMap>> {
        let poisoned = |_| Error::Internal("the relation index cache is poisoned".into());
        Ok(self.indexes.lock().map_err(poisoned)?)
    }
}

#[pymethods]
impl RelCache {
    #[new]
    #[pyo3(signature = (namespace = None))]
    fn new(namespace: Option<String>) -> Self {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        RelCache {
            namespace,
            indexes: Mutex::new(ShapeMap::default()),
        }
    }

    /// The index of `document`'s relations (`_links`, then `_embedded`), with its CURIEs and
    /// then the `inherited` ones (from the resources embedding it) under other names.
    #[pyo3(signature = (document, inherited = Vec::new()), text_signature = "($self, document, inherited=())")]
    fn of_document(
        &self,
        py: Python<'_>,
        document: &Document,
        inherited: Vec<(String, String)>,
    ) -> Fallible<Py<RelIndex>> {
        Ok(self.document_index(py, document, inherited)?.0)
    }

    /// What the attribute `resource.<name>` stands for, in one call (`mandate.creditor`): the
    /// full rel (`LinkNotFoundError` if none or ambiguous, as `resolve_attribute`), whether it
    /// is a relation of `_links` (a link, not an embedded resource), and, when its value is one
    /// link object of `href` and `templated` alone, that href and templated; else None and
    /// False (the resource reads the link object whole). Converting `_links` and the link
    /// object to Python was ~15,000 of the ~32,000 instructions of that attribute.
    #[pyo3(signature = (document, inherited, name))]
    pub(crate) fn attribute(
        &self,
        py: Python<'_>,
        document: &Document,
        inherited: Vec<(String, String)>,
        name: &str,
    ) -> Fallible<(String, bool, Option<String>, bool)> {
        let (index, links) = self.document_index(py, document, inherited)?;
        let rel = index.get().inner.resolve_attribute(name)?.to_owned();
        let entry = links.as_ref().and_then(|l| Some((l, l.get().entry(&rel)?)));
        let Some((links, entry)) = entry else {
            return Ok((rel, false, None, false));
        };
        let (href, templated) = match hal::simple_link(links.get().text(entry)) {
            Some((href, templated)) => (Some(href), templated),
            None => (None, false),
        };
        Ok((rel, true, href, templated))
    }

    /// The index of `rels` with `curies` (as `RelIndex(rels, curies, namespace)`, cached).
    #[pyo3(signature = (rels, curies = Vec::new()), text_signature = "($self, rels, curies=())")]
    fn of(
        &self,
        py: Python<'_>,
        rels: Vec<String>,
        curies: Vec<(String, String)>,
    ) -> Fallible<Py<RelIndex>> {
        let shape = ShapeRef {
            rels: rels.iter().map(String::as_str).collect(),
            curies: to_curies(curies),
        };
        self.index(py, shape)
    }

    /// How many shapes are cached (at most 256).
    fn __len__(&self) -> usize {
        self.indexes.lock().map(|i| i.len).unwrap_or_default()
    }

    fn __repr__(&self) -> String {
        format!("<RelCache of {} shapes>", self.__len__())
    }
}
