//! Relation names: which names reach which rel of a resource
//! (docs/concepts.md#relations-and-their-names).
//!
//! A rel is reachable by, from strongest to weakest claim:
//! 1. the full rel exactly (IANA rels such as `self` or `edit-form` are full rels too);
//! 2. its CURIE equivalent: `ex:thing` for `https://x/rels/thing` and vice versa;
//! 3. its short name: the rest after the configured namespace, or with no namespace the
//!    `<name>` of any `<uri>#<name>`, or the reference of a CURIE;
//! 4. the attribute form (hyphens become underscores) of a full rel without a scheme;
//! 5. the attribute form of a short name.
//!
//! A name is decided by the strongest claim on it: when two rels claim it equally strongly it is
//! ambiguous, and each of them stays reachable by its full rel.
//!
//! Python attributes (`res.get_foo`) are looked up apart: an attribute stands for every name of
//! that attribute form, so `ns#get-foo` and `ns#get_foo` make `get_foo` ambiguous
//! (docs/concepts.md#relations-and-their-names) although `get_foo` as a name is the second rel's
//! exact short name. Only a full rel outranks short names there (`edit-form` over `ns#edit-form`
//! for `edit_form`).

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::text::{edit_distance, single_quoted};

/// CURIEs considered per resource. Real documents declare a handful; the cap keeps a hostile one
/// from making indexing quadratic (every rel is compared with every CURIE).
const MAX_CURIES: usize = 64;

/// How strongly a name designates a rel; the smaller, the stronger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Claim {
    FullRel,
    CurieEquivalent,
    ShortName,
    AttributeOfFullRel,
    AttributeOfShortName,
}

/// The rels (indexes into `RelIndex::rels`) that hold the strongest claim on one name.
#[derive(Debug, Clone)]
struct Holders {
    claim: Claim,
    rels: Vec<usize>,
}

#[derive(Debug, Clone)]
struct RelNames {
    rel: String,
    short_names: Vec<String>,
    curie_forms: Vec<String>,
}

/// The names of a resource's relations; built once per resource, looked up many times.
#[derive(Debug, Clone, Default)]
pub struct RelIndex {
    rels: Vec<RelNames>,
    names: BTreeMap<String, Holders>,
    /// Attribute form -> the rels it stands for: `FullRel` for the attribute form of a full
    /// rel, `ShortName` for that of a short name.
    attributes: BTreeMap<String, Holders>,
}

/// The outcome of looking a name up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// The full rel the name designates.
    Found(&'a str),
    /// Every full rel the name designates equally (two or more), in document order.
    Ambiguous(Vec<&'a str>),
    Missing,
}

impl RelIndex {
    /// Index `rels` (duplicates are ignored) with the resource's CURIEs. `namespace` is the rel
    /// namespace (e.g. `https://api.example.com/alps#`); `None` or empty infers one per rel.
    pub fn new<'a>(
        rels: impl IntoIterator<Item = &'a str>,
        curies: &[Curie],
        namespace: Option<&str>,
    ) -> RelIndex {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        let curies: Vec<(&str, &str, &str)> = curies
            .iter()
            .take(MAX_CURIES)
            .filter_map(|curie| {
                let (before, after) = curie.href.split_once("{rel}")?;
                // A second `{rel}` would make compaction ambiguous: such a CURIE is ignored.
                (!after.contains("{rel}")).then_some((curie.name.as_str(), before, after))
            })
            .collect();
        let mut index = RelIndex::default();
        for rel in rels {
            if index.id_of(rel).is_none() {
                index.add_rel(rel, &curies, namespace);
            }
        }
        index
    }

    fn add_rel(&mut self, rel: &str, curies: &[(&str, &str, &str)], namespace: Option<&str>) {
        let id = self.rels.len();
        let mut names = RelNames {
            rel: rel.to_owned(),
            short_names: Vec::new(),
            curie_forms: Vec::new(),
        };
        self.claim(rel.to_owned(), Claim::FullRel, id);
        if !rel.contains(':') {
            self.claim(attribute_form(rel), Claim::AttributeOfFullRel, id);
            claim(
                &mut self.attributes,
                attribute_form(rel),
                Claim::FullRel,
                id,
            );
        }
        for &(prefix, before, after) in curies {
            // `ex:thing` -> `https://x/rels/thing`
            if let Some(reference) = rel.strip_prefix(prefix).and_then(|r| r.strip_prefix(':')) {
                if !reference.is_empty() {
                    self.claim(
                        format!("{before}{reference}{after}"),
                        Claim::CurieEquivalent,
                        id,
                    );
                    push_new(&mut names.short_names, reference);
                }
            }
            // `https://x/rels/thing` -> `ex:thing`
            let reference = rel.strip_prefix(before).and_then(|r| r.strip_suffix(after));
            if let Some(reference) = reference.filter(|r| !r.is_empty()) {
                let compact = format!("{prefix}:{reference}");
                self.claim(compact.clone(), Claim::CurieEquivalent, id);
                push_new(&mut names.curie_forms, &compact);
                push_new(&mut names.short_names, reference);
            }
        }
        let short_name = match namespace {
            Some(namespace) => rel.strip_prefix(namespace),
            None => fragment_of_uri(rel),
        };
        if let Some(short_name) = short_name.filter(|s| !s.is_empty()) {
            push_new(&mut names.short_names, short_name);
        }
        for short_name in &names.short_names {
            self.claim(short_name.clone(), Claim::ShortName, id);
            self.claim(attribute_form(short_name), Claim::AttributeOfShortName, id);
            claim(
                &mut self.attributes,
                attribute_form(short_name),
                Claim::ShortName,
                id,
            );
        }
        self.rels.push(names);
    }

    fn claim(&mut self, name: String, strength: Claim, id: usize) {
        claim(&mut self.names, name, strength, id);
    }

    /// The full rels, in the order they were given.
    pub fn rels(&self) -> impl Iterator<Item = &str> {
        self.rels.iter().map(|r| r.rel.as_str())
    }

    pub fn len(&self) -> usize {
        self.rels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rels.is_empty()
    }

    pub fn lookup(&self, name: &str) -> Lookup<'_> {
        self.holders(self.names.get(name))
    }

    /// What the Python attribute `name` stands for (`res.get_foo`): every rel with a name of
    /// that attribute form, a full rel first. A name Python cannot spell after a dot
    /// (`getattr(res, "get-foo")`) is looked up as a name.
    pub fn lookup_attribute(&self, name: &str) -> Lookup<'_> {
        if is_identifier(name) {
            self.holders(self.attributes.get(name))
        } else {
            self.lookup(name)
        }
    }

    fn holders(&self, holders: Option<&Holders>) -> Lookup<'_> {
        match holders.map(|h| h.rels.as_slice()) {
            None | Some([]) => Lookup::Missing,
            Some([id]) => Lookup::Found(&self.rels[*id].rel),
            Some(ids) => {
                Lookup::Ambiguous(ids.iter().map(|id| self.rels[*id].rel.as_str()).collect())
            }
        }
    }

    /// The full rel `name` designates; `LinkNotFound` when there is none (with a did-you-mean
    /// and the available names) or when it is ambiguous (naming the candidates).
    pub fn resolve(&self, name: &str) -> Result<&str> {
        match self.lookup(name) {
            Lookup::Found(rel) => Ok(rel),
            Lookup::Ambiguous(rels) => Err(self.ambiguous(name, &rels)),
            Lookup::Missing => Err(self.missing(name)),
        }
    }

    /// Like `resolve`, but a name that designates nothing is `Ok(None)`; ambiguity stays an
    /// error, since guessing between two relations would follow the wrong one half the time.
    pub fn find(&self, name: &str) -> Result<Option<&str>> {
        match self.lookup(name) {
            Lookup::Found(rel) => Ok(Some(rel)),
            Lookup::Ambiguous(rels) => Err(self.ambiguous(name, &rels)),
            Lookup::Missing => Ok(None),
        }
    }

    /// Like `find`, but a name that designates nothing while looking like a misspelling of one
    /// that does (the did-you-mean of `resolve`) is `resolve`'s `LinkNotFound`: `all("mandate")`
    /// on a page of `mandates` would otherwise yield nothing, silently.
    pub fn find_unless_misspelt(&self, name: &str) -> Result<Option<&str>> {
        match self.lookup(name) {
            Lookup::Found(rel) => Ok(Some(rel)),
            Lookup::Ambiguous(rels) => Err(self.ambiguous(name, &rels)),
            Lookup::Missing if self.suggestions(name).is_empty() => Ok(None),
            Lookup::Missing => Err(self.missing(name)),
        }
    }

    /// `resolve` for a Python attribute (see `lookup_attribute`).
    pub fn resolve_attribute(&self, name: &str) -> Result<&str> {
        match self.lookup_attribute(name) {
            Lookup::Found(rel) => Ok(rel),
            Lookup::Ambiguous(rels) => Err(self.ambiguous(name, &rels)),
            Lookup::Missing => Err(self.missing(name)),
        }
    }

    /// `find` for a Python attribute (see `lookup_attribute`).
    pub fn find_attribute(&self, name: &str) -> Result<Option<&str>> {
        match self.lookup_attribute(name) {
            Lookup::Found(rel) => Ok(Some(rel)),
            Lookup::Ambiguous(rels) => Err(self.ambiguous(name, &rels)),
            Lookup::Missing => Ok(None),
        }
    }

    /// Names usable as Python attributes (for `dir()` and tab completion): every attribute
    /// that stands for one rel. Sorted.
    pub fn attribute_names(&self) -> Vec<String> {
        let unambiguous = self.attributes.iter().filter(|(_, h)| h.rels.len() == 1);
        unambiguous
            .map(|(name, _)| name)
            .filter(|name| is_identifier(name))
            .cloned()
            .collect()
    }

    /// The shortest way to name `rel` unambiguously, for display: its short name, else its
    /// CURIE form, else the rel itself (IANA rels are their own short name). `None` when `rel`
    /// is not a full rel of this index.
    pub fn short_name(&self, rel: &str) -> Option<String> {
        self.id_of(rel).map(|id| self.display_name(id).to_owned())
    }

    fn display_name(&self, id: usize) -> &str {
        let names = &self.rels[id];
        let mut candidates: Vec<&String> = names.short_names.iter().collect();
        candidates.sort_by_key(|name| name.len());
        let mut curie_forms: Vec<&String> = names.curie_forms.iter().collect();
        curie_forms.sort_by_key(|name| name.len());
        candidates.extend(curie_forms);
        candidates
            .into_iter()
            .find(|name| self.designates(name, id))
            .map_or(&names.rel, String::as_str)
    }

    /// Where the full rel `rel` is in `self.rels` (only one rel can hold a full-rel claim).
    fn id_of(&self, rel: &str) -> Option<usize> {
        let holders = self.names.get(rel)?;
        match (holders.claim, holders.rels.as_slice()) {
            (Claim::FullRel, [id]) => Some(*id),
            _ => None,
        }
    }

    fn designates(&self, name: &str, id: usize) -> bool {
        self.names
            .get(name)
            .is_some_and(|holders| holders.rels == [id])
    }

    fn ambiguous(&self, name: &str, rels: &[&str]) -> Error {
        let quoted: Vec<String> = rels.iter().map(|rel| single_quoted(rel)).collect();
        let both = if quoted.len() == 2 { "both " } else { "" };
        Error::LinkNotFound {
            name: name.to_owned(),
            message: format!(
                "relation name {} is ambiguous: it names {both}{}; use the full relation name",
                single_quoted(name),
                join_with_and(&quoted)
            ),
        }
    }

    fn missing(&self, name: &str) -> Error {
        let mut message = format!("no relation {} in this resource", single_quoted(name));
        if self.rels.is_empty() {
            message.push_str(" (it has no relations)");
        } else {
            let suggestions: Vec<String> = self
                .suggestions(name)
                .iter()
                .map(|s| single_quoted(s))
                .collect();
            if suggestions.is_empty() {
                message.push(';');
            } else {
                message.push_str(&format!("; did you mean {}?", suggestions.join(" or ")));
            }
            message.push_str(&format!(" available: {}", self.available(name)));
        }
        Error::LinkNotFound {
            name: name.to_owned(),
            message,
        }
    }

    /// Up to three names close to `query` (by edit distance), each for a different rel, written
    /// the way the query is written (attribute or relation style) when there is a choice.
    fn suggestions(&self, query: &str) -> Vec<&str> {
        const MAX_SUGGESTIONS: usize = 3;
        let limit = (query.chars().count() / 3).clamp(1, 3);
        let query_is_attribute = is_identifier(query);
        let mut close: Vec<(usize, bool, &str, usize)> = self
            .names
            .iter()
            .filter_map(|(name, holders)| {
                let [id] = holders.rels.as_slice() else {
                    return None;
                };
                let distance = edit_distance(query, name, limit)?;
                let other_style = is_identifier(name) != query_is_attribute;
                Some((distance, other_style, name.as_str(), *id))
            })
            .collect();
        close.sort();
        let mut seen_rels = Vec::new();
        let mut out = Vec::new();
        for (_, _, name, id) in close {
            if !seen_rels.contains(&id) {
                seen_rels.push(id);
                out.push(name);
            }
        }
        out.truncate(MAX_SUGGESTIONS);
        out
    }

    /// One name per rel, sorted, written in the style of `query`; long lists are cut.
    fn available(&self, query: &str) -> String {
        const MAX_LISTED: usize = 20;
        let query_is_attribute = is_identifier(query);
        let mut names: Vec<String> = (0..self.rels.len())
            .map(|id| {
                let short = self.display_name(id);
                let attribute = attribute_form(short);
                let use_attribute = query_is_attribute
                    && is_identifier(&attribute)
                    && self
                        .attributes
                        .get(&attribute)
                        .is_some_and(|h| h.rels == [id]);
                if use_attribute {
                    attribute
                } else {
                    short.to_owned()
                }
            })
            .collect();
        names.sort();
        let total = names.len();
        let mut listed = names
            .into_iter()
            .take(MAX_LISTED)
            .collect::<Vec<_>>()
            .join(", ");
        if total > MAX_LISTED {
            listed.push_str(&format!(" and {} more", total - MAX_LISTED));
        }
        listed
    }
}

/// Record in `names` that rel `id` can be reached by `name`, unless a stronger claim holds it.
fn claim(names: &mut BTreeMap<String, Holders>, name: String, strength: Claim, id: usize) {
    let holders = names.entry(name).or_insert(Holders {
        claim: strength,
        rels: Vec::new(),
    });
    if strength < holders.claim {
        *holders = Holders {
            claim: strength,
            rels: Vec::new(),
        };
    }
    if strength == holders.claim && !holders.rels.contains(&id) {
        holders.rels.push(id);
    }
}

/// `get-creditors` -> `get_creditors`.
fn attribute_form(name: &str) -> String {
    name.replace('-', "_")
}

/// The `<name>` of `<uri>#<name>`, where `<uri>` starts with a scheme (RFC 3986 §3.1).
fn fragment_of_uri(rel: &str) -> Option<&str> {
    let (uri, name) = rel.split_once('#')?;
    let (scheme, _) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let valid_scheme = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid_scheme.then_some(name)
}

/// Whether `name` can be written after a dot in Python (close enough: letters, digits, `_`).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn push_new(names: &mut Vec<String>, name: &str) {
    if !names.iter().any(|n| n == name) {
        names.push(name.to_owned());
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join_with_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A CURIE declared in the `curies` links of a HAL resource (`hal::curies` reads them).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Curie {
    pub name: String,
    pub href: String,
}

#[cfg(test)]
mod tests;
