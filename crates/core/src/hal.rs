//! The HAL model (draft-kelly-json-hal), the one that every response goes through: a single
//! pass over the body validates the JSON and the HAL shape (`_links`, `_embedded`, one nesting
//! limit) and indexes every object, without building values (our scanner reads the usual body,
//! jiter the rest). What a reader asks for
//! is decoded then: a field's JSON text, the links, the embedded resources (sharing the body),
//! the CURIEs and relation names. The Python bindings wrap [`Document`] in a lazy mapping; the
//! tests, the recorded fixtures and the fuzz targets call the same [`parse`].
//!
//! A malformed body is an `Err` naming the culprit, never a panic or a silently missing link.

mod curies;
mod document;
mod index;
mod limits;
mod links;
mod scan;
mod shape;
mod walk;

pub use curies::in_scope;
pub use document::{is_reserved, Document, Kind};
pub use index::{parse, scanner_agrees};
pub use limits::MAX_NESTING;
pub use links::{bare_href, simple_link, Link, OneOrMany};
pub use shape::{LinkEntry, Shape, ShapeRef};

#[cfg(test)]
mod tests;
