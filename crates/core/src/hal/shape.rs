//! What a resource's relation index depends on, read without decoding its links: the bindings
//! cache one index per [`Shape`] (the pages and items of a collection share theirs), and read a
//! single link's JSON text by its relation instead of converting the whole `_links` object.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use jiter::Jiter;

use super::curies::{self, CURIES};
use crate::rels::Curie;

use super::index::SCANNED;
use super::Document;

/// A resource's relations (those of `_links` in document order, then those of `_embedded` not
/// among them) and its CURIEs in scope (its own, then the inherited ones under other names).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    pub rels: Vec<String>,
    pub curies: Vec<Curie>,
}

/// A [`Shape`] whose relation names are borrowed from its document: what a cache hashes and
/// compares, copying the names only to keep a new shape. Its `Hash` is the `Shape`'s of the
/// same names (the same fields in the same order; a `&str` hashes as a `String`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ShapeRef<'a> {
    pub rels: Vec<&'a str>,
    pub curies: Vec<Curie>,
}

impl ShapeRef<'_> {
    /// The owned shape, to keep.
    pub fn to_shape(&self) -> Shape {
        Shape {
            rels: self.rels.iter().map(|&rel| rel.to_owned()).collect(),
            curies: self.curies.clone(),
        }
    }

    /// Whether `shape` has these relations and CURIEs.
    pub fn matches(&self, shape: &Shape) -> bool {
        self.curies == shape.curies && self.rels.iter().eq(shape.rels.iter())
    }
}

/// One relation of `_links`: its name and where the JSON text of its value (a link object or an
/// array of them) is in the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkEntry {
    pub rel: String,
    pub value: Range<usize>,
}

impl Document {
    /// The relations of `_links`, each once in first-seen order with its last value (as in the
    /// Python dict of the same text). Scans the object's names; decodes no link.
    pub fn link_entries(&self) -> Vec<LinkEntry> {
        let Some(at) = self.links_field() else {
            return Vec::new();
        };
        let mut entries = Entries::default();
        if let Some(rels) = self.recorded_link_rels() {
            for (rel, value) in rels {
                entries.add(rel.text(self.body()).to_owned(), value.clone());
            }
            return entries.out;
        }
        let range = self.value_range(at);
        // The pass validated this text: an error cannot happen, and would only cut the list.
        let _ = scan(&self.body()[range.clone()], range.start, &mut entries);
        entries.out
    }

    /// The JSON text of `_links[rel]` (`rel` exactly as in the document).
    pub fn link_text(&self, rel: &str) -> Option<&[u8]> {
        let entries = self.link_entries();
        let entry = entries.into_iter().find(|e| e.rel == rel)?;
        Some(&self.body()[entry.value])
    }

    /// The JSON text of an entry of [`Document::link_entries`].
    pub fn link_text_at(&self, entry: &LinkEntry) -> &[u8] {
        // An entry of another document would be out of range: nothing, not a panic.
        self.body().get(entry.value.clone()).unwrap_or_default()
    }

    /// The relations of `_embedded`, in document order.
    pub fn embedded_rels(&self) -> impl Iterator<Item = &str> {
        self.embedded_names()
    }

    /// This resource's [`Shape`], with the CURIEs `inherited` from the resources embedding it.
    pub fn shape(&self, inherited: &[Curie]) -> Shape {
        self.shape_of(&self.link_entries(), inherited)
    }

    /// [`Document::shape`] from this document's [`Document::link_entries`], already read.
    pub fn shape_of(&self, entries: &[LinkEntry], inherited: &[Curie]) -> Shape {
        self.shape_ref(entries, inherited).to_shape()
    }

    /// [`Document::shape_of`] with the relation names borrowed from `entries` and this document.
    pub fn shape_ref<'a>(&'a self, entries: &'a [LinkEntry], inherited: &[Curie]) -> ShapeRef<'a> {
        let own = match entries.iter().find(|e| e.rel == CURIES) {
            // Rare: decode the links only when the document declares CURIEs.
            Some(_) => self.curies(),
            None => Vec::new(),
        };
        let mut rels: Vec<&str> = entries.iter().map(|e| e.rel.as_str()).collect();
        // By hash past a few links (a hostile body can send a million relations of each).
        let linked: HashSet<&str> = match entries.len() > SCANNED {
            true => entries.iter().map(|e| e.rel.as_str()).collect(),
            false => HashSet::new(),
        };
        for rel in self.embedded_rels() {
            let known = match linked.is_empty() {
                true => entries.iter().any(|e| e.rel == rel),
                false => linked.contains(rel),
            };
            if !known {
                rels.push(rel);
            }
        }
        ShapeRef {
            rels,
            curies: curies::in_scope(own, inherited),
        }
    }
}

/// The relations of `_links` each once, in first-seen order with its last value. A hostile body
/// can send a million of them: past `SCANNED`, repeated relations are found by hash, not by
/// scanning those already read.
#[derive(Default)]
struct Entries {
    out: Vec<LinkEntry>,
    by_rel: Option<HashMap<String, usize>>,
}

impl Entries {
    fn add(&mut self, name: String, value: Range<usize>) {
        let out = &mut self.out;
        let seen = match &self.by_rel {
            Some(map) => map.get(&name).copied(),
            None => out.iter().position(|e| e.rel == name),
        };
        if let Some(kept) = seen.and_then(|at| out.get_mut(at)) {
            kept.value = value;
            return;
        }
        if let Some(map) = &mut self.by_rel {
            map.insert(name.clone(), out.len());
        }
        out.push(LinkEntry { rel: name, value });
        if self.by_rel.is_none() && out.len() > SCANNED {
            let named = out.iter().enumerate();
            self.by_rel = Some(named.map(|(at, e)| (e.rel.clone(), at)).collect());
        }
    }
}

/// Read `_links`' relations into `out` (an embedded resource's: the pass did not record them).
fn scan(text: &[u8], offset: usize, out: &mut Entries) -> jiter::JiterResult<()> {
    let mut jiter = Jiter::new(text);
    let mut rel = jiter.next_object()?.map(str::to_owned);
    while let Some(name) = rel {
        let peek = jiter.peek()?;
        let start = jiter.current_index();
        jiter.known_skip(peek)?;
        out.add(name, offset + start..offset + jiter.current_index());
        rel = jiter.next_key()?.map(str::to_owned);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hal::parse;

    fn rels(shape: &Shape) -> Vec<&str> {
        shape.rels.iter().map(String::as_str).collect()
    }

    #[test]
    fn link_entries_keep_first_place_and_last_value_like_a_python_dict() {
        let body = r#"{"_links": {"self": {"href": "/a"}, "x\u0079": [{"href": "/1"}],
            "self": {"href": "/b"}}, "n": 1}"#;
        let doc = parse(body.as_bytes().to_vec()).unwrap();
        let entries = doc.link_entries();
        let names: Vec<&str> = entries.iter().map(|e| e.rel.as_str()).collect();
        assert_eq!(names, ["self", "xy"]);
        assert_eq!(doc.link_text("self").unwrap(), br#"{"href": "/b"}"#);
        assert_eq!(doc.link_text("xy").unwrap(), br#"[{"href": "/1"}]"#);
        assert_eq!(doc.link_text("x\\u0079"), None);
        assert_eq!(doc.link_text("n"), None);
    }

    /// The pass records a response's own relations; an embedded resource's are scanned when
    /// read: both give the same entries.
    #[test]
    fn recorded_and_scanned_link_entries_agree() {
        let links = r#"{"self": {"href": "/a"}, "x\u0079": [{"href": "/1"}],
            "self": {"href": "/b"}, "t": {"href": "/t{?q}", "templated": true}}"#;
        let top = parse(format!(r#"{{"_links": {links}}}"#).into_bytes()).unwrap();
        let body = format!(r#"{{"_embedded": {{"e": {{"_links": {links}}}}}}}"#);
        let outer = parse(body.into_bytes()).unwrap();
        let embedded = outer.embedded_by_rel("e").unwrap();
        let inner = embedded.first().unwrap();
        let texts = |d: &Document| -> Vec<(String, Vec<u8>)> {
            let entries = d.link_entries();
            let text = |e: &LinkEntry| d.link_text_at(e).to_vec();
            entries.iter().map(|e| (e.rel.clone(), text(e))).collect()
        };
        assert_eq!(texts(&top), texts(inner));
        assert_eq!(texts(&top).len(), 3);
        assert_eq!(top.link_text("self").unwrap(), br#"{"href": "/b"}"#);
    }

    /// A cache finds a kept `Shape` by the hash of a `ShapeRef`: the two hash alike.
    #[test]
    fn a_borrowed_shape_hashes_and_compares_as_its_owned_shape() {
        use std::hash::BuildHasher;
        let body = br#"{"_links": {"curies": [{"name": "ex", "href": "/x/{rel}",
            "templated": true}], "self": {"href": "/"}, "ex:a": {"href": "/a"}},
            "_embedded": {"ex:b": {}}}"#;
        let doc = parse(body.to_vec()).unwrap();
        let entries = doc.link_entries();
        let inherited = [Curie {
            name: "up".into(),
            href: "/up/{rel}".into(),
        }];
        let borrowed = doc.shape_ref(&entries, &inherited);
        let owned = borrowed.to_shape();
        assert_eq!(rels(&owned), ["curies", "self", "ex:a", "ex:b"]);
        assert!(borrowed.matches(&owned));
        let state = std::hash::RandomState::new();
        assert_eq!(state.hash_one(&borrowed), state.hash_one(&owned));
        assert!(!doc.shape_ref(&entries, &[]).matches(&owned));
    }

    #[test]
    fn a_document_without_links_has_no_entries() {
        let doc = parse(br#"{"n": {"_links": {"self": {"href": "/"}}}}"#.to_vec()).unwrap();
        assert!(doc.link_entries().is_empty());
        assert_eq!(doc.shape(&[]).rels, Vec::<String>::new());
    }

    #[test]
    fn the_shape_lists_links_then_embedded_rels_not_among_them() {
        let body = br#"{"_links": {"self": {"href": "/"}, "items": {"href": "/i"}},
            "_embedded": {"items": [], "other": {"_links": {}}}}"#;
        let doc = parse(body.to_vec()).unwrap();
        assert_eq!(rels(&doc.shape(&[])), ["self", "items", "other"]);
        assert!(doc.shape(&[]).curies.is_empty());
    }

    #[test]
    fn the_shape_has_own_curies_first_then_inherited_ones_under_other_names() {
        let body =
            br#"{"_links": {"curies": [{"name": "ex", "href": "/x/{rel}", "templated": true},
            {"href": "/nameless/{rel}"}], "ex:a": {"href": "/a"}}}"#;
        let doc = parse(body.to_vec()).unwrap();
        let curie = |name: &str, href: &str| Curie {
            name: name.into(),
            href: href.into(),
        };
        let inherited = [curie("ex", "/parent/{rel}"), curie("up", "/up/{rel}")];
        let shape = doc.shape(&inherited);
        assert_eq!(rels(&shape), ["curies", "ex:a"]);
        assert_eq!(
            shape.curies,
            [curie("ex", "/x/{rel}"), curie("up", "/up/{rel}")]
        );
    }

    #[test]
    fn items_of_one_collection_share_their_shape() {
        let body = br#"{"_embedded": {"m": [
            {"_links": {"self": {"href": "/1"}, "c": {"href": "/c/1"}}, "s": 1},
            {"s": 2, "_links": {"self": {"href": "/2"}, "c": {"href": "/c/2"}}}]}}"#;
        let doc = parse(body.to_vec()).unwrap();
        let embedded = doc.embedded_by_rel("m").unwrap();
        let shapes: Vec<Shape> = embedded.iter().map(|d| d.shape(&[])).collect();
        assert_eq!(shapes[0], shapes[1]);
        assert_eq!(
            embedded.as_slice()[1].link_text("c").unwrap(),
            br#"{"href": "/c/2"}"#
        );
    }
}
