//! The one pass over a response body: the walk validates the JSON and the HAL shape and records
//! where each field of each object is, without building any value. It reads the body with the
//! scanner (`scan.rs`), or with jiter where the scanner leaves it. Readers (the Python view,
//! `Document`'s accessors) decode a field only when it is asked for.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use jiter::Peek;

use super::limits::{skip, within_limit};
use super::links::links;
use super::scan::Scanner;
use super::walk::{Cursor, JiterCursor, Key, Refusal, Walk, EMBEDDED, LINKS};
use super::Document;
use crate::error::{Error, Result};

/// Objects with more names than this get a hash index; smaller ones are scanned.
pub(super) const SCANNED: usize = 16;

/// Names in first-seen order, each once with its value (of its last occurrence, as in a Python
/// dict); found by scanning (few) or by hash (many).
#[derive(PartialEq)]
pub(super) struct Names<V> {
    entries: Vec<(Key, V)>,
    /// The `mark`s of the names so far: a name whose bit is clear is new without a scan (the
    /// usual case: names rarely repeat, so a scan would compare them all in vain).
    marks: u64,
    by_name: Option<HashMap<Box<[u8]>, usize>>,
}

/// One of 64 bits for a name, from its length and first, middle and last bytes (a
/// multiplicative hash of them): the few names of one object mostly get different bits.
#[inline]
fn mark(name: &[u8]) -> u64 {
    let n = name.len();
    let byte = |i: usize| u64::from(name.get(i).copied().unwrap_or(0));
    let mixed = n as u64 | byte(0) << 8 | byte(n / 2) << 16 | byte(n.wrapping_sub(1)) << 24;
    1 << (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

impl<V> Default for Names<V> {
    fn default() -> Self {
        Names::with_capacity(0)
    }
}

impl<V> Names<V> {
    fn with_capacity(capacity: usize) -> Self {
        Names {
            entries: Vec::with_capacity(capacity),
            marks: 0,
            by_name: None,
        }
    }

    pub(super) fn find(&self, body: &[u8], name: &str) -> Option<usize> {
        let name = name.as_bytes();
        self.position(body, name, mark(name))
    }

    fn position(&self, body: &[u8], name: &[u8], mark: u64) -> Option<usize> {
        match &self.by_name {
            Some(map) => map.get(name).copied(),
            None if self.marks & mark == 0 => None,
            None => self.entries.iter().position(|(k, _)| k.bytes(body) == name),
        }
    }

    /// Give `key`'s name `value`: a new name goes last, a repeated one keeps its first place.
    /// Returns where the name is.
    fn insert(&mut self, body: &[u8], key: Key, value: V) -> usize {
        let name = key.bytes(body);
        let mark = mark(name);
        if let Some(at) = self.position(body, name, mark) {
            self.entries[at].1 = value;
            return at;
        }
        self.marks |= mark;
        let at = self.entries.len();
        if let Some(map) = &mut self.by_name {
            map.insert(name.into(), at);
        }
        self.entries.push((key, value));
        if self.by_name.is_none() && self.entries.len() > SCANNED {
            let named = self.entries.iter().enumerate();
            self.by_name = Some(named.map(|(i, (k, _))| (k.bytes(body).into(), i)).collect());
        }
        at
    }

    /// Drop the spare capacity, if any (none when a sibling's width was right).
    fn shrink(&mut self) {
        if self.entries.capacity() > self.entries.len() {
            self.entries.shrink_to_fit();
        }
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the name at `at` is `name` (`false` past the end).
    pub(super) fn is_named(&self, body: &[u8], at: usize, name: &[u8]) -> bool {
        self.entries
            .get(at)
            .is_some_and(|(k, _)| k.bytes(body) == name)
    }

    pub(super) fn name_bytes<'a>(&'a self, body: &'a [u8], at: usize) -> &'a [u8] {
        self.entries[at].0.bytes(body)
    }

    pub(super) fn name<'a>(&'a self, body: &'a [u8], at: usize) -> &'a str {
        self.entries[at].0.text(body)
    }

    pub(super) fn value(&self, at: usize) -> &V {
        &self.entries[at].1
    }

    /// (name, value) in order.
    pub(super) fn iter<'a>(&'a self, body: &'a [u8]) -> impl Iterator<Item = (&'a str, &'a V)> {
        self.entries.iter().map(move |(k, v)| (k.text(body), v))
    }
}

/// The resources of one embedded relation: an object, or an array of them (kept as sent).
#[derive(PartialEq)]
pub(super) enum Children {
    One(Arc<Index>),
    Many(Vec<Arc<Index>>),
}

/// Where everything of one JSON object of the body is.
#[derive(PartialEq)]
pub(super) struct Index {
    pub(super) span: Range<usize>,
    /// Each field's name and where its value is.
    pub(super) fields: Names<Range<usize>>,
    /// Which field is `_links` (validated, decoded on request).
    pub(super) links: Option<usize>,
    /// The field `_embedded`, and its relations indexed in turn.
    pub(super) embedded: Option<(usize, Embedded)>,
    /// The relations of the response's own `_links` as sent (repeats included) and where
    /// their values are, recorded by the pass: reading them later took a second jiter pass over
    /// `_links`. Embedded resources have none: a page's thousands of items mostly never read
    /// their links, and scan them when they do.
    pub(super) link_rels: Option<Vec<(Key, Range<usize>)>>,
    /// Where the value of `_links.self` is (its last occurrence), recorded by the pass for
    /// every resource: `Resource.url` reads it on each item of a page.
    pub(super) self_link: Option<Range<usize>>,
}

/// The relations of `_embedded`, each with its resources.
pub(super) type Embedded = Names<Children>;

/// The UTF-8 byte order mark, which RFC 8259 §8.1 lets a parser ignore.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Validate `body` (a JSON object of HAL shape) and index it: the parser of every response.
/// The scanner (`scan.rs`) reads the usual body; what it leaves, jiter reads, and words the
/// refusal of.
pub fn parse(body: impl Into<Bytes>) -> Result<Document> {
    let mut body = body.into();
    // Some servers still send one.
    if body.starts_with(BOM) {
        body = body.slice(BOM.len()..);
    }
    if let Err(e) = std::str::from_utf8(&body) {
        return Err(invalid_json(format!(
            "invalid UTF-8 at byte {}",
            e.valid_up_to()
        )));
    }
    let index = match index_body(&mut Scanner::new(&body), &body) {
        Ok(index) => index,
        Err(_) => walk(&body)?,
    };
    Ok(Document::new(body, Arc::new(index)))
}

/// For the fuzz targets and tests: whether the scanner read `body` (`Ok(true)`), left it to
/// jiter (`Ok(false)`), or accepted it otherwise than jiter does (`Err`: what differs).
#[doc(hidden)]
pub fn scanner_agrees(body: &[u8]) -> std::result::Result<bool, String> {
    let body = body.strip_prefix(BOM).unwrap_or(body);
    if std::str::from_utf8(body).is_err() {
        return Ok(false); // never scanned
    }
    let Ok(scanned) = index_body(&mut Scanner::new(body), body) else {
        return Ok(false);
    };
    match walk(body) {
        Ok(walked) if walked == scanned => Ok(true),
        Ok(_) => Err("the scanner indexed the body otherwise than jiter".into()),
        Err(e) => Err(format!(
            "the scanner accepted a body that jiter refuses: {e}"
        )),
    }
}

fn invalid_json(what: String) -> Error {
    Error::protocol(format!("response body is not valid JSON: {what}"))
}

/// The index of `body` (valid UTF-8) read with jiter, or the refusal it words.
fn walk(body: &[u8]) -> Result<Index> {
    let mut cursor = JiterCursor::new(body);
    index_body(&mut cursor, body).map_err(|refusal| match refusal {
        Refusal::Json(e) => invalid_json(e.description(&cursor.jiter)),
        Refusal::Hal(message) => Error::protocol(*message),
        Refusal::Unsure => Error::protocol("response body could not be read"), // not jiter's
    })
}

fn index_body(cursor: &mut impl Cursor, body: &[u8]) -> Walk<Index> {
    let peek = cursor.peek()?;
    if peek != Peek::Object {
        cursor.skip_any(peek)?;
        cursor.finish()?; // invalid JSON is reported as such before its type
        return Err(Refusal::hal("response body is not a JSON object".into()));
    }
    // Room for a usual resource's fields at once: growing from none took three allocations.
    let index = object(cursor, body, 1, 8)?;
    cursor.finish()?;
    Ok(index)
}

/// Index the object at the cursor (its `{` peeked, at nesting `level`), checking `_links` and
/// `_embedded`; its table starts with room for `width` fields.
fn object(cursor: &mut impl Cursor, body: &[u8], level: usize, width: usize) -> Walk<Index> {
    within_limit(level)?;
    let start = cursor.at();
    let mut index = Index {
        span: start..start,
        fields: Names::with_capacity(width),
        links: None,
        embedded: None,
        link_rels: None,
        self_link: None,
    };
    let mut name = cursor.first_name()?;
    while let Some(key) = name {
        let peek = cursor.peek()?;
        let value_start = cursor.at();
        let mut embedded = None;
        let name_bytes = key.bytes(body);
        let is_links = name_bytes == LINKS.as_bytes();
        let is_embedded = name_bytes == EMBEDDED.as_bytes();
        // A repeated `_links` replaces the earlier one, its `self` included.
        if is_links && level == 1 {
            let mut rels = Vec::with_capacity(4);
            index.self_link = links(cursor, body, peek, level + 1, |rel, value| {
                rels.push((rel, value))
            })?;
            index.link_rels = Some(rels);
        } else if is_links {
            index.self_link = links(cursor, body, peek, level + 1, |_, _| {})?;
        } else if is_embedded {
            embedded = Some(embedded_rels(cursor, body, peek, level + 1)?);
        } else {
            skip(cursor, peek, level + 1)?;
        }
        let value = value_start..cursor.at();
        let at = index.fields.insert(body, key, value);
        if is_links {
            index.links = Some(at);
        }
        if let Some(rels) = embedded {
            index.embedded = Some((at, rels));
        }
        name = cursor.next_name()?;
    }
    index.fields.shrink();
    index.span.end = cursor.at();
    Ok(index)
}

/// `_embedded`: an object of objects (or arrays of them), each a HAL document, indexed.
fn embedded_rels(
    cursor: &mut impl Cursor,
    body: &[u8],
    peek: Peek,
    level: usize,
) -> Walk<Embedded> {
    if peek != Peek::Object {
        return Err(Refusal::hal(format!("\"{EMBEDDED}\" is not an object")));
    }
    within_limit(level)?;
    let mut embedded = Embedded::default();
    let mut rel = cursor.first_name()?;
    while let Some(key) = rel {
        let not_object = || Refusal::hal(format!("embedded {} is not an object", key.text(body)));
        let peek = cursor.peek()?;
        let children = if peek == Peek::Array {
            within_limit(level + 1)?;
            let mut items = Vec::new();
            // The items of a collection share a shape: each table starts at its previous
            // sibling's width, so that it is allocated once, at its size.
            let mut width = 0;
            let mut item = cursor.first_item()?;
            while let Some(peek) = item {
                if peek != Peek::Object {
                    return Err(not_object());
                }
                let index = object(cursor, body, level + 2, width)?;
                width = index.fields.len();
                items.push(Arc::new(index));
                item = cursor.next_item()?;
            }
            Children::Many(items)
        } else if peek == Peek::Object {
            Children::One(Arc::new(object(cursor, body, level + 1, 0)?))
        } else {
            return Err(not_object());
        };
        embedded.insert(body, key, children);
        rel = cursor.next_name()?;
    }
    embedded.shrink();
    Ok(embedded)
}
