//! `_links`: checked during the one pass (an object of link objects or arrays of them, each
//! with a string `href` and, if any, a boolean `templated`), read into [`Link`]s on request.

use std::ops::Range;

use jiter::{Jiter, JiterResult, Peek};

use super::limits::{skip, within_limit};
use super::walk::{Cursor, Key, Refusal, Walk, LINKS};
use crate::error::Result;
use crate::template;

/// One link object: what the client acts on. Other members (`title`, `type`, ...) stay in the
/// body, where a reader of the `_links` field finds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Link {
    /// As sent: a URI reference, or an RFC 6570 template when `templated`.
    pub href: String,
    pub templated: bool,
    /// The `name` member when it is a string (a CURIE's prefix).
    pub name: Option<String>,
}

impl Link {
    /// A plain (not templated) link to `href`.
    pub fn new(href: impl Into<String>) -> Link {
        Link {
            href: href.into(),
            ..Link::default()
        }
    }

    /// The variable names of a templated `href`, in order; empty for a plain link.
    pub fn variables(&self) -> Result<Vec<String>> {
        if self.templated {
            template::variables(&self.href)
        } else {
            Ok(Vec::new())
        }
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
}

/// The `href` and `templated` of a link object with no other member (the usual `{"href": …}`
/// and `{"href": …, "templated": true}`), read from its JSON text as the pass validated it.
/// `None` for anything else (another member, a repeated one, an array of links): the reader
/// decodes that one whole. Lets `mandate.creditor` build its link without a Python dict.
pub fn simple_link(text: &[u8]) -> Option<(String, bool)> {
    if let Some(href) = bare_href(text) {
        return Some((href.to_owned(), false));
    }
    let mut jiter = Jiter::new(text);
    let (mut href, mut templated) = (None, None);
    let mut member = jiter.next_object().ok()?.map(Member::of);
    while let Some(name) = member {
        match name {
            Member::Href if href.is_none() => href = Some(jiter.next_str().ok()?.to_owned()),
            Member::Templated if templated.is_none() => templated = Some(jiter.next_bool().ok()?),
            _ => return None,
        }
        member = jiter.next_key().ok()?.map(Member::of);
    }
    Some((href?, templated.unwrap_or(false)))
}

/// The `href` of a link object written `{"href": "…"}` (whitespace aside) whose href has no
/// escape, borrowed from its JSON text as the pass validated it; `None` for any other text.
/// The usual link, read without a parser: ~600 instructions fewer per `Resource.url`.
pub fn bare_href(text: &[u8]) -> Option<&str> {
    let rest = text.trim_ascii().strip_prefix(b"{")?.trim_ascii_start();
    let rest = rest.strip_prefix(b"\"href\"")?.trim_ascii_start();
    let rest = rest.strip_prefix(b":")?.trim_ascii_start();
    let rest = rest.strip_prefix(b"\"")?;
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    let (href, tail) = rest.split_at(end);
    if tail.strip_prefix(b"\"")?.trim_ascii() != b"}" {
        return None; // an escape, or another member
    }
    std::str::from_utf8(href).ok()
}

/// The members of a link object that [`simple_link`] reads.
enum Member {
    Href,
    Templated,
    Other,
}

impl Member {
    fn of(name: &str) -> Member {
        match name {
            "href" => Member::Href,
            "templated" => Member::Templated,
            _ => Member::Other,
        }
    }
}

/// Check the `_links` value at the cursor (`peek`ed, at nesting `level`), handing each relation
/// and where its value is to `found`. Returns where the value of `self` is (its last one).
pub(super) fn links(
    cursor: &mut impl Cursor,
    body: &[u8],
    peek: Peek,
    level: usize,
    mut found: impl FnMut(Key, Range<usize>),
) -> Walk<Option<Range<usize>>> {
    if peek != Peek::Object {
        return Err(Refusal::hal(format!("\"{LINKS}\" is not an object")));
    }
    within_limit(level)?;
    let mut self_link = None;
    let mut rel = cursor.first_name()?;
    while let Some(key) = rel {
        let peek = cursor.peek()?;
        let start = cursor.at();
        if peek == Peek::Array {
            within_limit(level + 1)?;
            let mut item = cursor.first_item()?;
            while let Some(peek) = item {
                link(cursor, body, peek, &key, level + 2)?;
                item = cursor.next_item()?;
            }
        } else {
            link(cursor, body, peek, &key, level + 1)?;
        }
        let value = start..cursor.at();
        if key.bytes(body) == b"self" {
            self_link = Some(value.clone());
        }
        found(key, value);
        rel = cursor.next_name()?;
    }
    Ok(self_link)
}

fn link(cursor: &mut impl Cursor, body: &[u8], peek: Peek, rel: &Key, level: usize) -> Walk<()> {
    let rel = || rel.text(body);
    if peek != Peek::Object {
        return Err(Refusal::hal(format!("link {} is not an object", rel())));
    }
    within_limit(level)?;
    let (mut href, mut templated) = (None, None);
    let mut name = cursor.first_name()?;
    while let Some(key) = name {
        let peek = cursor.peek()?;
        match key.bytes(body) {
            b"href" => href = Some(peek == Peek::String),
            b"templated" => templated = Some(peek == Peek::True || peek == Peek::False),
            _ => {}
        }
        skip(cursor, peek, level + 1)?;
        name = cursor.next_name()?;
    }
    if href != Some(true) {
        return Err(Refusal::hal(format!(
            "link {} has no string \"href\"",
            rel()
        )));
    }
    if templated == Some(false) {
        let message = format!("link {} has a \"templated\" that is not a boolean", rel());
        return Err(Refusal::hal(message));
    }
    Ok(())
}

/// The links of a `_links` value the pass accepted, in document order; a repeated relation keeps
/// its first place and its last value, as in the Python dict of the same text.
pub(super) fn read(json: &[u8]) -> Vec<(String, OneOrMany<Link>)> {
    let mut out: Vec<(String, OneOrMany<Link>)> = Vec::new();
    // The text was validated by the pass: an error cannot happen, and would only cut the list.
    let _ = read_into(&mut Jiter::new(json), &mut out);
    out
}

fn read_into(jiter: &mut Jiter<'_>, out: &mut Vec<(String, OneOrMany<Link>)>) -> JiterResult<()> {
    let mut rel = jiter.next_object()?.map(str::to_owned);
    while let Some(name) = rel {
        let links = if jiter.peek()? == Peek::Array {
            let mut items = Vec::new();
            let mut item = jiter.known_array()?;
            while item.is_some() {
                items.push(read_link(jiter)?);
                item = jiter.array_step()?;
            }
            OneOrMany::Many(items)
        } else {
            OneOrMany::One(read_link(jiter)?)
        };
        match out.iter_mut().find(|(r, _)| *r == name) {
            Some(kept) => kept.1 = links,
            None => out.push((name, links)),
        }
        rel = jiter.next_key()?.map(str::to_owned);
    }
    Ok(())
}

/// The link object at the cursor (its `{` peeked); a repeated member keeps its last value.
fn read_link(jiter: &mut Jiter<'_>) -> JiterResult<Link> {
    let mut link = Link::default();
    let mut member = jiter.known_object()?.map(str::to_owned);
    while let Some(key) = member {
        let peek = jiter.peek()?;
        match (key.as_str(), peek) {
            ("href", Peek::String) => link.href = jiter.known_str()?.to_owned(),
            ("templated", Peek::True | Peek::False) => link.templated = jiter.known_bool(peek)?,
            ("name", Peek::String) => link.name = Some(jiter.known_str()?.to_owned()),
            ("name", _) => {
                link.name = None;
                jiter.known_skip(peek)?;
            }
            _ => jiter.known_skip(peek)?,
        }
        member = jiter.next_key()?.map(str::to_owned);
    }
    Ok(link)
}
