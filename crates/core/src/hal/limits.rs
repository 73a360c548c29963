//! The one nesting limit of a response body, checked while it is indexed.

use jiter::Peek;

use super::walk::{Cursor, Refusal, Walk};

/// Deepest nesting of objects and arrays in a body (the top object is level 1). Python's default
/// recursion limit (1,000) leaves room for `copy.deepcopy` of a value this deep (two frames a
/// level) from 100 frames down, and jiter's own limit (200) for converting the whole body.
/// `_embedded` resources nest to 63 (two levels each).
pub const MAX_NESTING: usize = 128;

/// An object or array at nesting `level` (the top object is 1) must be within the limit.
pub(super) fn within_limit(level: usize) -> Walk<()> {
    if level > MAX_NESTING {
        let message = format!("response body is nested deeper than {MAX_NESTING} levels");
        return Err(Refusal::hal(message));
    }
    Ok(())
}

/// Skip the value at the cursor (its start peeked), which is at nesting `level` if it is an
/// object or an array. jiter's own skip allows 200 levels from wherever it starts, so
/// containers are walked here to apply ours.
pub(super) fn skip(cursor: &mut impl Cursor, peek: Peek, level: usize) -> Walk<()> {
    match peek {
        Peek::Array => {
            within_limit(level)?;
            let mut item = cursor.first_item()?;
            while let Some(peek) = item {
                skip(cursor, peek, level + 1)?;
                item = cursor.next_item()?;
            }
        }
        Peek::Object => {
            within_limit(level)?;
            let mut more = cursor.first_name()?.is_some();
            while more {
                let peek = cursor.peek()?;
                skip(cursor, peek, level + 1)?;
                more = cursor.next_name()?.is_some();
            }
        }
        _ => cursor.skip_scalar(peek)?,
    }
    Ok(())
}
