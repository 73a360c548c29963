//! What the walkers of a body share (`index.rs`, `limits.rs`, `links.rs`): the HAL field
//! names, a field name's place in the body, why a walk refused the body, and the [`Cursor`]
//! it reads the body with.

use std::ops::Range;

use jiter::{Jiter, JiterError, Peek};

/// The fields of HAL itself; every other field of a resource is its state.
pub(super) const LINKS: &str = "_links";
pub(super) const EMBEDDED: &str = "_embedded";

/// A field name: where it is in the body, or decoded when it had escapes.
#[derive(Debug, PartialEq, Eq)]
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
    #[inline]
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

/// Why a body was refused: JSON syntax (described with jiter's position) or HAL shape; or,
/// from the scanner (`scan.rs`), that it leaves the body to jiter. Boxed, so that a walk's
/// result fits in two registers: every step of the walk returns one.
pub(super) enum Refusal {
    Json(Box<JiterError>),
    #[allow(clippy::box_collection)] // one word, where a `String` takes three and a `Box<str>` two
    Hal(Box<String>),
    Unsure,
}

impl Refusal {
    pub(super) fn hal(message: String) -> Refusal {
        Refusal::Hal(Box::new(message))
    }
}

impl From<JiterError> for Refusal {
    fn from(e: JiterError) -> Self {
        Refusal::Json(Box::new(e))
    }
}

pub(super) type Walk<T> = std::result::Result<T, Refusal>;

// Returned in two registers rather than through memory (a parse 29.6M -> 28.6M instructions).
const _: () = assert!(std::mem::size_of::<Walk<()>>() <= 16);

/// What the walk reads a body with: jiter, which words every refusal, or the scanner of
/// `scan.rs`, which is quicker and refuses (`Refusal::Unsure`) whatever it might not read as
/// jiter does. The HAL rules are written once, in the walk, over this.
pub(super) trait Cursor {
    /// What the value at the cursor starts with (whitespace passed); the cursor stays on it.
    fn peek(&mut self) -> Walk<Peek>;
    /// Where the cursor is in the body.
    fn at(&self) -> usize;
    /// Into the object whose `{` was peeked: its first name (and colon), or `None` if empty.
    fn first_name(&mut self) -> Walk<Option<Key>>;
    /// Past a member's value: the next name (and colon), or `None` past the object's `}`.
    fn next_name(&mut self) -> Walk<Option<Key>>;
    /// Into the array whose `[` was peeked: what its first item starts with, or `None`.
    fn first_item(&mut self) -> Walk<Option<Peek>>;
    /// Past an item: what the next one starts with, or `None` past the array's `]`.
    fn next_item(&mut self) -> Walk<Option<Peek>>;
    /// Past the string, number or literal that was peeked.
    fn skip_scalar(&mut self, peek: Peek) -> Walk<()>;
    /// Past any value that was peeked, with no nesting limit of ours (a body refused anyway).
    fn skip_any(&mut self, peek: Peek) -> Walk<()>;
    /// Nothing but whitespace is left.
    fn finish(&mut self) -> Walk<()>;
}

/// jiter over a body, its names placed in the body (`Key::of`).
pub(super) struct JiterCursor<'a> {
    pub(super) jiter: Jiter<'a>,
    body: &'a [u8],
}

impl<'a> JiterCursor<'a> {
    pub(super) fn new(body: &'a [u8]) -> Self {
        JiterCursor {
            jiter: Jiter::new(body),
            body,
        }
    }
}

impl Cursor for JiterCursor<'_> {
    fn peek(&mut self) -> Walk<Peek> {
        Ok(self.jiter.peek()?)
    }

    fn at(&self) -> usize {
        self.jiter.current_index()
    }

    fn first_name(&mut self) -> Walk<Option<Key>> {
        let body = self.body;
        Ok(self.jiter.known_object()?.map(|name| Key::of(name, body)))
    }

    fn next_name(&mut self) -> Walk<Option<Key>> {
        let body = self.body;
        Ok(self.jiter.next_key()?.map(|name| Key::of(name, body)))
    }

    fn first_item(&mut self) -> Walk<Option<Peek>> {
        Ok(self.jiter.known_array()?)
    }

    fn next_item(&mut self) -> Walk<Option<Peek>> {
        Ok(self.jiter.array_step()?)
    }

    fn skip_scalar(&mut self, peek: Peek) -> Walk<()> {
        Ok(self.jiter.known_skip(peek)?)
    }

    fn skip_any(&mut self, peek: Peek) -> Walk<()> {
        Ok(self.jiter.known_skip(peek)?)
    }

    fn finish(&mut self) -> Walk<()> {
        Ok(self.jiter.finish()?)
    }
}
