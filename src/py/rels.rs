//! `RelIndex`: the relation-name index of `crate::rels`, for the Python `Resource` layer.

use pyo3::prelude::*;

use crate::hal::Curie;
use crate::rels;

/// Immutable, so shared freely between threads; every method is a lookup in the core index.
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct RelIndex {
    inner: rels::RelIndex,
}

#[pymethods]
impl RelIndex {
    #[new]
    #[pyo3(signature = (rels, curies = Vec::new(), namespace = None))]
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

    fn find(&self, name: &str) -> PyResult<Option<String>> {
        Ok(self.inner.find(name)?.map(str::to_owned))
    }

    fn resolve(&self, name: &str) -> PyResult<String> {
        Ok(self.inner.resolve(name)?.to_owned())
    }

    fn attribute_names(&self) -> Vec<String> {
        self.inner.attribute_names()
    }

    fn short_name(&self, rel: &str) -> Option<String> {
        self.inner.short_name(rel)
    }

    fn __repr__(&self) -> String {
        format!("<RelIndex of {} relations>", self.inner.len())
    }
}
