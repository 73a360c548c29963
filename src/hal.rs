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
use crate::text::double_quoted;

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

/// The string members of a link object, with the field each one fills.
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
        Link::parse(v).map_err(|why| Error::protocol(format!("link {why}")))
    }

    /// Parse a link object; the error is the end of a sentence whose subject is the link.
    fn parse(v: &Value) -> std::result::Result<Link, String> {
        let Value::Object(members) = v else {
            return Err(format!("is {}, not an object", kind(v)));
        };
        let href = match members.get("href") {
            Some(Value::String(href)) => href.clone(),
            None => return Err("has no string \"href\"".to_owned()),
            Some(other) => return Err(format!("has no string \"href\" (it is {})", kind(other))),
        };
        let templated = match members.get("templated") {
            None => false,
            Some(Value::Bool(templated)) => *templated,
            Some(other) => return Err(format!("has a \"templated\" that is {}", kind(other))),
        };
        let string_member = |key: &str| match members.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!(
                "has a {key:?} that is {}, not a string",
                kind(other)
            )),
        };
        let extra = members
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "href" | "templated"))
            .filter(|(key, _)| !STRING_MEMBERS.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Ok(Link {
            href,
            templated,
            media_type: string_member("type")?,
            deprecation: string_member("deprecation")?,
            name: string_member("name")?,
            profile: string_member("profile")?,
            title: string_member("title")?,
            hreflang: string_member("hreflang")?,
            extra,
        })
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

/// Parse a response body (JSON text) into a document.
pub fn parse(body: &[u8]) -> Result<Document> {
    // RFC 8259 §8.1 lets a parser ignore a byte order mark; some servers still send one.
    let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        // serde_json stops at 128 levels of nesting instead of overflowing the stack.
        if e.to_string().starts_with("recursion limit exceeded") {
            Error::protocol(format!(
                "response body is nested too deeply: {e} (the limit is 128 levels)"
            ))
        } else {
            Error::protocol(format!("response body is not valid JSON: {e}"))
        }
    })?;
    if !value.is_object() {
        return Err(Error::protocol(format!(
            "response body is {}, not a JSON object",
            kind(&value)
        )));
    }
    Document::from_value(value)
}

impl Document {
    pub fn from_value(v: Value) -> Result<Document> {
        Document::from_value_at(v, 0).map_err(|bad| Error::protocol(bad.to_string()))
    }

    /// `depth` counts the `_embedded` levels above this document.
    fn from_value_at(v: Value, depth: usize) -> std::result::Result<Document, Malformed> {
        if depth > MAX_EMBEDDING_DEPTH {
            drop_without_recursion(v);
            return Err(Malformed::new(format!(
                "resources are nested deeper than {MAX_EMBEDDING_DEPTH} levels"
            )));
        }
        let Value::Object(mut state) = v else {
            return Err(Malformed::new(format!(
                "HAL document is {}, not an object",
                kind(&v)
            )));
        };
        let links = match state.shift_remove("_links") {
            None => Vec::new(),
            Some(Value::Object(links)) => parse_links(links).map_err(Malformed::new)?,
            Some(other) => {
                return Err(Malformed::new(format!(
                    "\"_links\" is {}, not an object",
                    kind(&other)
                )));
            }
        };
        let embedded = match state.shift_remove("_embedded") {
            None => Vec::new(),
            Some(Value::Object(embedded)) => parse_embedded(embedded, depth)?,
            Some(other) => {
                return Err(Malformed::new(format!(
                    "\"_embedded\" is {}, not an object",
                    kind(&other)
                )));
            }
        };
        Ok(Document {
            state,
            links,
            embedded,
        })
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

fn parse_links(
    links: Map<String, Value>,
) -> std::result::Result<Vec<(String, OneOrMany<Link>)>, String> {
    links
        .into_iter()
        .map(|(rel, value)| {
            let label = double_quoted(&rel);
            let parsed = match &value {
                Value::Array(items) => OneOrMany::Many(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| {
                            Link::parse(item).map_err(|why| format!("link {label}[{i}] {why}"))
                        })
                        .collect::<std::result::Result<_, _>>()?,
                ),
                Value::Object(_) => OneOrMany::One(
                    Link::parse(&value).map_err(|why| format!("link {label} {why}"))?,
                ),
                other => {
                    return Err(format!(
                        "link {label} is {}, not an object or an array of objects",
                        kind(other)
                    ));
                }
            };
            Ok((rel, parsed))
        })
        .collect()
}

fn parse_embedded(
    embedded: Map<String, Value>,
    depth: usize,
) -> std::result::Result<Vec<(String, OneOrMany<Document>)>, Malformed> {
    let mut out = Vec::with_capacity(embedded.len());
    for (rel, value) in embedded {
        let label = double_quoted(&rel);
        let nested = |v: Value, at: String| {
            if !v.is_object() {
                return Err(Malformed::new(format!(
                    "_embedded {at} is {}, not an object",
                    kind(&v)
                )));
            }
            Document::from_value_at(v, depth + 1).map_err(|bad| bad.inside(at))
        };
        let parsed = match value {
            Value::Array(items) => OneOrMany::Many(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| nested(item, format!("{label}[{i}]")))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Value::Object(_) => OneOrMany::One(nested(value, label)?),
            other => {
                return Err(Malformed::new(format!(
                    "_embedded {label} is {}, not an object or an array of objects",
                    kind(&other)
                )));
            }
        };
        out.push((rel, parsed));
    }
    Ok(out)
}

/// What is wrong with a document, and the `_embedded` path to the resource it is wrong in.
struct Malformed {
    /// Innermost first: segments are added while the recursion unwinds.
    path: Vec<String>,
    why: String,
}

impl Malformed {
    fn new(why: String) -> Malformed {
        Malformed {
            path: Vec::new(),
            why,
        }
    }

    fn inside(mut self, segment: String) -> Malformed {
        self.path.push(segment);
        self
    }
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        /// Path segments shown at each end of a long path; the middle becomes "…".
        const SHOWN: usize = 3;
        if self.path.is_empty() {
            return f.write_str(&self.why);
        }
        let outermost_first: Vec<&str> = self.path.iter().rev().map(String::as_str).collect();
        let path = if outermost_first.len() > 2 * SHOWN {
            let head = &outermost_first[..SHOWN];
            let tail = &outermost_first[outermost_first.len() - SHOWN..];
            format!("{} > … > {}", head.join(" > "), tail.join(" > "))
        } else {
            outermost_first.join(" > ")
        };
        write!(f, "in _embedded {path}: {}", self.why)
    }
}

/// "a string", "an array", ...: what a JSON value is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Drop a value of any depth with a heap stack: the default drop recurses and a hand-built
/// value nested thousands of levels deep would overflow the thread's stack.
fn drop_without_recursion(v: Value) {
    let mut pending = vec![v];
    while let Some(v) = pending.pop() {
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(members) => pending.extend(members.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
