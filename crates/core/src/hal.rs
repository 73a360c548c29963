//! The HAL document model (draft-kelly-json-hal): a resource's state, its `_links` and its
//! `_embedded` resources, parsed strictly so that a malformed document is an `Err` naming the
//! culprit, never a panic or a silently missing link.
//!
//! `to_value` gives back what was parsed: the order of properties and rels is kept (serde_json
//! `preserve_order`) and link members this model does not name are kept in [`Link::extra`].
//! Not kept: the members that carry no information (an empty `_links`/`_embedded` object,
//! `"templated": false`), where `_links` and `_embedded` stood among the properties (they are
//! written first and last), and the order of the members inside a link object.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::rels::RelIndex;
use crate::template;

mod parse;
pub use parse::parse;

/// How deep `_embedded` resources may nest. Equal to serde_json's nesting limit, so whatever
/// `parse` accepts passes; only a `Value` built by hand can go deeper.
pub const MAX_EMBEDDING_DEPTH: usize = 128;

/// One link object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Link {
    /// As sent: a URI reference, or an RFC 6570 template when `templated`.
    pub href: String,
    pub templated: bool,
    /// The `type` member: a media type hint.
    pub media_type: Option<String>,
    /// A URL explaining that the link is deprecated.
    pub deprecation: Option<String>,
    pub name: Option<String>,
    pub profile: Option<String>,
    pub title: Option<String>,
    pub hreflang: Option<String>,
    /// Members this model does not name, kept for `to_json`. Named members win over these.
    pub extra: Map<String, Value>,
}

/// The string members of a link object, in the order `to_json` writes them; each fills the field
/// of the same name (`type` fills `media_type`).
const STRING_MEMBERS: [&str; 6] = [
    "type",
    "deprecation",
    "name",
    "profile",
    "title",
    "hreflang",
];

impl Link {
    /// A plain (not templated) link to `href`.
    pub fn new(href: impl Into<String>) -> Link {
        Link {
            href: href.into(),
            ..Link::default()
        }
    }

    pub fn from_json(v: &Value) -> Result<Link> {
        parse::link(v.clone()).map_err(|why| Error::protocol(format!("link {why}")))
    }

    /// The variable names of a templated `href`, in order; empty for a plain link.
    pub fn variables(&self) -> Result<Vec<String>> {
        if self.templated {
            template::variables(&self.href)
        } else {
            Ok(Vec::new())
        }
    }

    pub fn to_json(&self) -> Value {
        let mut members = Map::new();
        members.insert("href".to_owned(), Value::String(self.href.clone()));
        if self.templated {
            members.insert("templated".to_owned(), Value::Bool(true));
        }
        let strings = [
            &self.media_type,
            &self.deprecation,
            &self.name,
            &self.profile,
            &self.title,
            &self.hreflang,
        ];
        for (key, value) in STRING_MEMBERS.iter().zip(strings) {
            if let Some(value) = value {
                members.insert((*key).to_owned(), Value::String(value.clone()));
            }
        }
        for (key, value) in &self.extra {
            let named = matches!(key.as_str(), "href" | "templated")
                || STRING_MEMBERS.contains(&key.as_str());
            if !named {
                members.insert(key.clone(), value.clone());
            }
        }
        Value::Object(members)
    }
}

/// A relation maps to one link (or resource) or to an array of them; which one was sent matters
/// to users (`res.links["documents"]` is a list even with one item), so it is kept.
#[derive(Debug, Clone, PartialEq)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    pub fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(item) => std::slice::from_ref(item),
            OneOrMany::Many(items) => items,
        }
    }

    /// The single item, or the first of an array (`None` for an empty array).
    pub fn first(&self) -> Option<&T> {
        self.as_slice().first()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.as_slice().iter()
    }

    pub fn is_many(&self) -> bool {
        matches!(self, OneOrMany::Many(_))
    }

    fn to_json(&self, item_to_json: impl Fn(&T) -> Value) -> Value {
        match self {
            OneOrMany::One(item) => item_to_json(item),
            OneOrMany::Many(items) => Value::Array(items.iter().map(item_to_json).collect()),
        }
    }
}

/// A CURIE declared in the `curies` links: `name:ref` stands for `href` with `{rel}` = `ref`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Curie {
    pub name: String,
    pub href: String,
}

/// One HAL resource.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// Every property except `_links` and `_embedded`, in the order received.
    pub state: Map<String, Value>,
    /// `_links`, in the order received.
    pub links: Vec<(String, OneOrMany<Link>)>,
    /// `_embedded`, in the order received.
    pub embedded: Vec<(String, OneOrMany<Document>)>,
}

impl Document {
    pub fn from_value(v: Value) -> Result<Document> {
        parse::document(v)
    }

    /// The document as JSON: `_links` first, then the state, then `_embedded`.
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        if !self.links.is_empty() {
            let links = self
                .links
                .iter()
                .map(|(rel, links)| (rel.clone(), links.to_json(Link::to_json)))
                .collect();
            out.insert("_links".to_owned(), Value::Object(links));
        }
        for (key, value) in &self.state {
            out.insert(key.clone(), value.clone());
        }
        if !self.embedded.is_empty() {
            let embedded = self
                .embedded
                .iter()
                .map(|(rel, docs)| (rel.clone(), docs.to_json(Document::to_value)))
                .collect();
            out.insert("_embedded".to_owned(), Value::Object(embedded));
        }
        Value::Object(out)
    }

    /// The links of relation `rel`, named exactly as in `_links` (resolve short names with
    /// [`Document::rel_index`] first).
    pub fn link(&self, rel: &str) -> Option<&OneOrMany<Link>> {
        self.links.iter().find(|(r, _)| r == rel).map(|(_, l)| l)
    }

    /// The embedded resources of relation `rel`, named exactly as in `_embedded`.
    pub fn embedded_by_rel(&self, rel: &str) -> Option<&OneOrMany<Document>> {
        self.embedded.iter().find(|(r, _)| r == rel).map(|(_, d)| d)
    }

    /// The `href` of the `self` link (the first one, should it be an array).
    pub fn self_href(&self) -> Option<&str> {
        self.link("self")?.first().map(|l| l.href.as_str())
    }

    /// Every relation of `_links`, then those of `_embedded` not already seen.
    pub fn rels(&self) -> Vec<&str> {
        let mut rels: Vec<&str> = self.links.iter().map(|(r, _)| r.as_str()).collect();
        if !self.embedded.is_empty() {
            let seen: HashSet<&str> = rels.iter().copied().collect();
            let new = self.embedded.iter().map(|(r, _)| r.as_str());
            rels.extend(new.filter(|r| !seen.contains(r)));
        }
        rels
    }

    /// The CURIEs declared by this document's `curies` links. Links without a `name` or whose
    /// `href` lacks `{rel}` cannot expand anything and are left out.
    pub fn curies(&self) -> Vec<Curie> {
        let Some(curies) = self.link("curies") else {
            return Vec::new();
        };
        curies
            .iter()
            .filter(|link| link.href.contains("{rel}"))
            .filter_map(|link| {
                Some(Curie {
                    name: link.name.clone()?,
                    href: link.href.clone(),
                })
            })
            .collect()
    }

    /// The names of the relations of `_links` and `_embedded` (see `crate::rels`).
    pub fn rel_index(&self, namespace: Option<&str>) -> RelIndex {
        RelIndex::new(self.rels(), &self.curies(), namespace)
    }
}

#[cfg(test)]
mod tests;
