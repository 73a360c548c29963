//! `RelIndex`: the relation-name index of `rp_core::rels`, for the Python `Resource` layer.
//! Frozen (immutable), so one index is shared by every thread without a lock.

use crate::errors::Outcome;
use pyo3::prelude::*;

use rp_core::hal::Curie;
use rp_core::rels;

/// The names of a resource's relations: full rel, CURIE form, short name, attribute form.
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct RelIndex {
    inner: rels::RelIndex,
}

#[pymethods]
impl RelIndex {
    #[new]
    // text_signature: pyo3 cannot render `Vec::new()` as a Python default.
    #[pyo3(signature = (rels, curies = Vec::new(), namespace = None),
        text_signature = "(rels, curies=(), namespace=None)")]
    fn new(rels: Vec<String>, curies: Vec<(String, String)>, namespace: Option<String>) -> Self {
        let curies: Vec<Curie> = curies
            .into_iter()
            .map(|(name, href)| Curie { name, href })
            .collect();
        let inner = rels::RelIndex::new(
            rels.iter().map(String::as_str),
            &curies,
            namespace.as_deref(),
        );
        RelIndex { inner }
    }

    /// The full rel `name` designates, or None; LinkNotFoundError if it is ambiguous.
    fn find(&self, name: &str) -> Outcome<Option<String>> {
        Ok(self.inner.find(name)?.map(str::to_owned))
    }

    /// The full rel `name` designates; LinkNotFoundError if none or ambiguous.
    fn resolve(&self, name: &str) -> Outcome<String> {
        Ok(self.inner.resolve(name)?.to_owned())
    }

    /// The full rel the attribute `name` stands for, or None; LinkNotFoundError if ambiguous
    /// (`ns#get-foo` and `ns#get_foo` both make the attribute `get_foo`).
    fn find_attribute(&self, name: &str) -> Outcome<Option<String>> {
        Ok(self.inner.find_attribute(name)?.map(str::to_owned))
    }

    /// The full rel the attribute `name` stands for; LinkNotFoundError if none or ambiguous.
    fn resolve_attribute(&self, name: &str) -> Outcome<String> {
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
