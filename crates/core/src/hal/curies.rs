//! CURIEs (HAL draft §8.2): `name:ref` stands for a `curies` link's `href` with `{rel}` = `ref`.
//! Embedded resources inherit those of the resources that embed them (§8.3).

use super::links::{Link, OneOrMany};

/// The relation that declares a resource's CURIEs.
pub(super) const CURIES: &str = "curies";

use crate::rels::Curie;

/// The CURIEs of a resource's links: every `curies` link with a string `name`, in order. Those
/// whose `href` has not exactly one `{rel}` expand nothing; the relation index skips them.
pub(super) fn declared(links: &[(String, OneOrMany<Link>)]) -> Vec<Curie> {
    let Some((_, curies)) = links.iter().find(|(rel, _)| rel == CURIES) else {
        return Vec::new();
    };
    curies
        .iter()
        .filter_map(|link| {
            Some(Curie {
                name: link.name.clone()?,
                href: link.href.clone(),
            })
        })
        .collect()
}

/// A resource's own CURIEs, then those it inherits under other names (its own win).
pub fn in_scope(mut own: Vec<Curie>, inherited: &[Curie]) -> Vec<Curie> {
    let fresh: Vec<Curie> = inherited
        .iter()
        .filter(|curie| !own.iter().any(|mine| mine.name == curie.name))
        .cloned()
        .collect();
    own.extend(fresh);
    own
}
