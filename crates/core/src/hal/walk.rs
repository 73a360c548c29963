//! What the walkers of a body share (`index.rs`, `limits.rs`, `links.rs`): the HAL field
//! names, a field name's place in the body, and why a walk refused the body.

use std::ops::Range;

use jiter::{Jiter, JiterError};

/// The fields of HAL itself; every other field of a resource is its state.
pub(super) const LINKS: &str = "_links";
pub(super) const EMBEDDED: &str = "_embedded";

/// A field name: where it is in the body, or decoded when it had escapes.
pub(super) enum Key {
    At(Range<usize>),
    Decoded(Box<str>),
}

impl Key {
    pub(super) fn of(name: &str, body: &[u8]) -> Key {
        let start = (name.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
        if start <= body.len() && name.len() <= body.len() - start {
            Key::At(start..start + name.len())
        } else {
            Key::Decoded(name.into()) // jiter decoded it into its scratch tape
        }
    }

    /// The name's bytes, for comparisons: the body was validated as UTF-8 once, and jiter cut
    /// the name at its quotes, so equal bytes are equal names without decoding them again.
    pub(super) fn bytes<'a>(&'a self, body: &'a [u8]) -> &'a [u8] {
        match self {
            Key::At(range) => &body[range.clone()],
            Key::Decoded(text) => text.as_bytes(),
        }
    }

    /// The name as text, for readers.
    pub(super) fn text<'a>(&'a self, body: &'a [u8]) -> &'a str {
        match self {
            // validated UTF-8 (the whole body is), and jiter cut it at the quotes
            Key::At(range) => std::str::from_utf8(&body[range.clone()]).unwrap_or_default(),
            Key::Decoded(text) => text,
        }
    }
}

/// Why a body was refused: JSON syntax (described with jiter's position) or HAL shape.
pub(super) enum Refusal {
    Json(JiterError),
    Hal(String),
}

impl From<JiterError> for Refusal {
    fn from(e: JiterError) -> Self {
        Refusal::Json(e)
    }
}

pub(super) type Walk<T> = std::result::Result<T, Refusal>;

/// The first name of the object at the cursor (its `{` peeked); `None` if it is empty.
pub(super) fn first_name(jiter: &mut Jiter<'_>, body: &[u8]) -> Walk<Option<Key>> {
    Ok(jiter.known_object()?.map(|name| Key::of(name, body)))
}

/// The next name of the object being walked; `None` at its `}`.
pub(super) fn next_name(jiter: &mut Jiter<'_>, body: &[u8]) -> Walk<Option<Key>> {
    Ok(jiter.next_key()?.map(|name| Key::of(name, body)))
}
