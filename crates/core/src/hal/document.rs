//! [`Document`]: a parsed body (or one of its embedded resources) read through its index. Field
//! values stay JSON text until a reader decodes them; links and embedded resources are built on
//! request.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use super::curies;
use super::index::{Children, Index};
use super::links::{self, Link, OneOrMany};
use super::walk::Key;
use crate::rels::Curie;
use crate::rels::RelIndex;

/// One HAL resource: the body it came from and where its fields are. Cheap to clone (two
/// reference counts); embedded resources share the body of the response.
#[derive(Clone)]
pub struct Document {
    body: Bytes,
    index: Arc<Index>,
}

/// What a field holds, for a reader deciding how to decode and whether to keep what it decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string, number, boolean or null.
    Scalar,
    /// An object or an array of the state.
    Composite,
    /// `_links` (validated; see [`Document::links`]).
    Links,
    /// `_embedded` (indexed; see [`Document::embedded`]).
    Embedded,
}

impl Document {
    pub(super) fn new(body: Bytes, index: Arc<Index>) -> Document {
        Document { body, index }
    }

    /// How many fields (each name once), `_links` and `_embedded` included.
    pub fn len(&self) -> usize {
        self.index.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The name of field `at` (`0..len()`, document order).
    pub fn name(&self, at: usize) -> &str {
        self.index.fields.name(&self.body, at)
    }

    /// The name of field `at` as the bytes of its text (not checked again as UTF-8).
    pub fn name_bytes(&self, at: usize) -> &[u8] {
        self.index.fields.name_bytes(&self.body, at)
    }

    /// Every field name, in document order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|at| self.name(at))
    }

    /// Where the field `name` is.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.index.fields.find(&self.body, name)
    }

    /// Where the field `name` is, `guess` tried first: where a sibling of the same shape has it
    /// (the items of a page share theirs), found without a search.
    pub fn find_near(&self, name: &str, guess: usize) -> Option<usize> {
        match self
            .index
            .fields
            .is_named(&self.body, guess, name.as_bytes())
        {
            true => Some(guess), // names are unique in the index
            false => self.find(name),
        }
    }

    /// Whether field `at` is `_links` or `_embedded` (see [`is_reserved`]), known from the index.
    pub fn is_reserved_at(&self, at: usize) -> bool {
        self.index.links == Some(at) || self.embedded_field() == Some(at)
    }

    /// The JSON text of field `at`'s value (of its last occurrence, should the name repeat).
    pub fn raw(&self, at: usize) -> &[u8] {
        &self.body[self.index.fields.value(at).clone()]
    }

    /// The JSON text of the field `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.find(name).map(|at| self.raw(at))
    }

    /// The JSON text of the whole resource.
    pub fn text(&self) -> &[u8] {
        &self.body[self.index.span.clone()]
    }

    pub fn kind(&self, at: usize) -> Kind {
        if self.index.links == Some(at) {
            return Kind::Links;
        }
        if self.embedded_field() == Some(at) {
            return Kind::Embedded;
        }
        match self.raw(at).iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{' | b'[') => Kind::Composite,
            _ => Kind::Scalar,
        }
    }

    /// The state: every field but `_links` and `_embedded`, as (name, JSON text).
    pub fn state(&self) -> impl Iterator<Item = (&str, &[u8])> {
        let hal = [self.index.links, self.embedded_field()];
        (0..self.len())
            .filter(move |at| !hal.contains(&Some(*at)))
            .map(|at| (self.name(at), self.raw(at)))
    }

    /// Which field is `_embedded` (`0..len()`), if the resource embeds others.
    pub fn embedded_field(&self) -> Option<usize> {
        self.index.embedded.as_ref().map(|(at, _)| *at)
    }

    /// Which field is `_links` (`0..len()`), if the resource has links.
    pub fn links_field(&self) -> Option<usize> {
        self.index.links
    }

    pub(super) fn value_range(&self, at: usize) -> std::ops::Range<usize> {
        self.index.fields.value(at).clone()
    }

    /// The relations of `_links` as the pass recorded them (a response's own only).
    pub(super) fn recorded_link_rels(&self) -> Option<&[(Key, std::ops::Range<usize>)]> {
        self.index.link_rels.as_deref()
    }

    pub(super) fn body(&self) -> &[u8] {
        &self.body
    }

    pub(super) fn embedded_names(&self) -> impl Iterator<Item = &str> {
        let embedded = self.index.embedded.as_ref().map(|(_, rels)| rels);
        embedded
            .into_iter()
            .flat_map(|rels| rels.iter(&self.body).map(|(rel, _)| rel))
    }

    /// `_links`, in document order (decoded afresh on each call).
    pub fn links(&self) -> Vec<(String, OneOrMany<Link>)> {
        match self.index.links {
            Some(at) => links::read(self.raw(at)),
            None => Vec::new(),
        }
    }

    /// The links of relation `rel`, named exactly as in `_links` (resolve short names with
    /// [`Document::rel_index`] first).
    pub fn link(&self, rel: &str) -> Option<OneOrMany<Link>> {
        let links = self.links();
        links.into_iter().find(|(r, _)| r == rel).map(|(_, l)| l)
    }

    /// The JSON text of `_links.self` (as `link_text("self")` gives it), recorded by the pass.
    pub fn self_link_text(&self) -> Option<&[u8]> {
        let range = self.index.self_link.clone()?;
        self.body.get(range)
    }

    /// The `href` of the `self` link (the first one, should it be an array).
    pub fn self_href(&self) -> Option<String> {
        self.link("self")?.first().map(|l| l.href.clone())
    }

    /// `_embedded`, in document order: each relation with its resource or array of them.
    pub fn embedded(&self) -> Vec<(&str, OneOrMany<Document>)> {
        let Some((_, embedded)) = &self.index.embedded else {
            return Vec::new();
        };
        let child = |index: &Arc<Index>| Document::new(self.body.clone(), Arc::clone(index));
        let children = |children: &Children| match children {
            Children::One(index) => OneOrMany::One(child(index)),
            Children::Many(items) => OneOrMany::Many(items.iter().map(child).collect()),
        };
        let rels = embedded.iter(&self.body);
        rels.map(|(rel, items)| (rel, children(items))).collect()
    }

    /// The embedded resources of relation `rel`, named exactly as in `_embedded`.
    pub fn embedded_by_rel(&self, rel: &str) -> Option<OneOrMany<Document>> {
        let embedded = self.embedded();
        embedded
            .into_iter()
            .find(|(r, _)| *r == rel)
            .map(|(_, d)| d)
    }

    /// Every relation of `_links`, then those of `_embedded` not already seen (from the decoded
    /// links: the reference that [`Document::shape`]'s scan is checked against).
    pub fn rels(&self) -> Vec<String> {
        let mut rels: Vec<String> = self.links().into_iter().map(|(r, _)| r).collect();
        let seen: HashSet<String> = rels.iter().cloned().collect();
        let embedded = self.embedded();
        let new = embedded
            .iter()
            .map(|(r, _)| *r)
            .filter(|r| !seen.contains(*r));
        rels.extend(new.map(str::to_owned));
        rels
    }

    /// The CURIEs this resource's `curies` links declare.
    pub fn curies(&self) -> Vec<Curie> {
        curies::declared(&self.links())
    }

    /// This resource's CURIEs, then those of the resources embedding it (`inherited`) under
    /// other names.
    pub fn curies_in_scope(&self, inherited: &[Curie]) -> Vec<Curie> {
        curies::in_scope(self.curies(), inherited)
    }

    /// The names of the relations of `_links` and `_embedded` (see `crate::rels`), with the
    /// CURIEs in scope: built from [`Document::shape`], as the bindings' cache of indexes is.
    pub fn rel_index(&self, inherited: &[Curie], namespace: Option<&str>) -> RelIndex {
        let shape = self.shape(inherited);
        RelIndex::new(
            shape.rels.iter().map(String::as_str),
            &shape.curies,
            namespace,
        )
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// Whether `name` is `_links` or `_embedded`: a field of the document that is not part of a
/// resource's state.
pub fn is_reserved(name: &str) -> bool {
    name == super::walk::LINKS || name == super::walk::EMBEDDED
}
