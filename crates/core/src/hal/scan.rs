//! The scanner: a [`Cursor`] of our own over a body's bytes, which the walk (index.rs) tries
//! before jiter. It reads the usual body in a fraction of jiter's instructions (a wide page's
//! index, BENCHMARKS.md), because it only finds where things are: a string's end is found
//! sixteen bytes at a time (eight elsewhere than on x86-64), and nothing is decoded.
//!
//! It reads a subset of JSON that every parser reads alike: it stops (`Refusal::Unsure`) at an
//! escape in a name, a surrogate escape, a number with an exponent or longer than
//! [`MAX_NUMBER`], and at anything invalid. jiter then reads the body from the start, so a
//! refusal is always jiter's own. `hal::scanner_agrees` checks, on every fuzz input, that what
//! the scanner accepts jiter accepts too, with the same index.

use jiter::Peek;

use super::walk::{Cursor, Key, Refusal, Walk};

/// The longest number the scanner reads, in bytes: jiter reads integers of up to 4,300 digits.
const MAX_NUMBER: usize = 64;

/// A place in a body of valid UTF-8 (the scanner relies on it: a name is a range of it).
pub(super) struct Scanner<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    pub(super) fn new(body: &'a [u8]) -> Self {
        Scanner { body, at: 0 }
    }

    #[inline]
    fn byte(&self) -> Walk<u8> {
        self.body.get(self.at).copied().ok_or(Refusal::Unsure)
    }

    #[inline]
    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.body.get(self.at) {
            self.at += 1;
        }
    }

    /// A name without escapes (its `"` at the cursor) and its colon: the cursor is left on
    /// the value.
    #[inline]
    fn name(&mut self) -> Walk<Key> {
        if self.byte()? != b'"' {
            return Err(Refusal::Unsure);
        }
        let start = self.at + 1;
        let end = self.special(start)?;
        if self.body[end] != b'"' {
            return Err(Refusal::Unsure); // an escape or a control character
        }
        self.at = end + 1;
        self.space();
        if self.byte()? != b':' {
            return Err(Refusal::Unsure);
        }
        self.at += 1;
        self.space();
        Ok(Key::At(start..end))
    }

    /// Where the first `"`, `\` or control character at or after `from` is.
    #[inline]
    fn special(&self, from: usize) -> Walk<usize> {
        special(self.body, from).ok_or(Refusal::Unsure)
    }

    /// Past the string at the cursor, its escapes checked.
    #[inline]
    fn string(&mut self) -> Walk<()> {
        let mut at = self.at + 1;
        loop {
            at = self.special(at)?;
            match self.body[at] {
                b'"' => {
                    self.at = at + 1;
                    return Ok(());
                }
                b'\\' => at = self.escape(at)?,
                _ => return Err(Refusal::Unsure), // a raw control character
            }
        }
    }

    /// Past the escape whose `\` is at `at`. A surrogate pair is read; a lone surrogate is
    /// left to jiter.
    fn escape(&self, at: usize) -> Walk<usize> {
        match self.body.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
            Some(b'u') => match self.hex(at + 2)? {
                0xD800..=0xDBFF if self.body.get(at + 6..at + 8) == Some(b"\\u") => {
                    match self.hex(at + 8)? {
                        0xDC00..=0xDFFF => Ok(at + 12),
                        _ => Err(Refusal::Unsure),
                    }
                }
                0xD800..=0xDFFF => Err(Refusal::Unsure),
                _ => Ok(at + 6),
            },
            _ => Err(Refusal::Unsure),
        }
    }

    /// The four hex digits at `at`.
    fn hex(&self, at: usize) -> Walk<u32> {
        let digits = self.body.get(at..at + 4).ok_or(Refusal::Unsure)?;
        digits.iter().try_fold(0, |unit, &b| {
            let digit = char::from(b).to_digit(16).ok_or(Refusal::Unsure)?;
            Ok(unit << 4 | digit)
        })
    }

    /// Past the number at the cursor: `-?(0|[1-9][0-9]*)(.[0-9]+)?`, at most `MAX_NUMBER` bytes.
    #[inline]
    fn number(&mut self) -> Walk<()> {
        let start = self.at;
        let first = start + usize::from(self.body[start] == b'-');
        let mut at = self.digits(first);
        if at == first || (self.body[first] == b'0' && at > first + 1) {
            return Err(Refusal::Unsure); // no digit, or a leading zero
        }
        if self.body.get(at) == Some(&b'.') {
            let fraction = self.digits(at + 1);
            if fraction == at + 1 {
                return Err(Refusal::Unsure);
            }
            at = fraction;
        }
        if matches!(self.body.get(at), Some(b'e' | b'E')) || at - start > MAX_NUMBER {
            return Err(Refusal::Unsure);
        }
        self.at = at;
        Ok(())
    }

    #[inline]
    fn digits(&self, from: usize) -> usize {
        let rest = self.body.get(from..).unwrap_or_default();
        from + rest.iter().take_while(|b| b.is_ascii_digit()).count()
    }

    /// Past the `{` or `[` peeked and any whitespace: whether a member or item follows
    /// (`false` past an immediate `close`).
    #[inline]
    fn open(&mut self, close: u8) -> Walk<bool> {
        self.at += 1;
        self.space();
        if self.byte()? == close {
            self.at += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// After a member or item: past a `,` and any whitespace (`true`), or past `close`
    /// (`false`).
    #[inline]
    fn separator(&mut self, close: u8) -> Walk<bool> {
        self.space();
        match self.byte()? {
            b',' => {
                self.at += 1;
                self.space();
                Ok(true)
            }
            b if b == close => {
                self.at += 1;
                Ok(false)
            }
            _ => Err(Refusal::Unsure),
        }
    }

    #[inline]
    fn literal(&mut self, word: &[u8]) -> Walk<()> {
        if self.body.get(self.at..self.at + word.len()) != Some(word) {
            return Err(Refusal::Unsure);
        }
        self.at += word.len();
        Ok(())
    }
}

/// Whether `b` ends a run of plain string bytes: a quote, a backslash or a control character.
fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// Where the first `"`, `\` or control character of `body` at or after `from` is: sixteen bytes
/// at a time with SSE2, which every x86-64 processor has.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) fn special(body: &[u8], from: usize) -> Option<usize> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let mut at = from;
    while let Some(chunk) = body.get(at..at + 16) {
        // SAFETY: SSE2 is part of x86-64 itself (every x86-64 processor has it), and the load
        // reads the 16 bytes of `chunk`, unaligned.
        #[allow(unsafe_code)]
        let found = unsafe {
            let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
            let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
            // Below 0x20 (unsigned): the byte equals its minimum with 0x1f.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control))
        };
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize);
        }
        at += 16;
    }
    let rest = body.get(at..).unwrap_or_default();
    rest.iter().position(|&b| is_special(b)).map(|i| at + i)
}

/// [`special`] eight bytes at a time, each word tested for the three at once (the lowest
/// flagged byte is always a true one: a borrow only flags bytes above the byte that caused
/// it): for processors other than x86-64, and compared with the SSE2 search in the tests.
#[cfg(any(not(target_arch = "x86_64"), test))]
#[cfg_attr(not(target_arch = "x86_64"), inline)]
pub(super) fn special_by_word(body: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |word: u64| word.wrapping_sub(ONES) & !word;
    let mut at = from;
    while let Some(chunk) = body.get(at..at + 8) {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let word = u64::from_le_bytes(bytes);
        let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
        let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        let found = (quote | backslash | control) & HIGH;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = body.get(at..).unwrap_or_default();
    rest.iter().position(|&b| is_special(b)).map(|i| at + i)
}

#[cfg(not(target_arch = "x86_64"))]
use special_by_word as special;

impl Cursor for Scanner<'_> {
    #[inline]
    fn peek(&mut self) -> Walk<Peek> {
        self.space();
        Ok(Peek::new(self.byte()?))
    }

    #[inline]
    fn at(&self) -> usize {
        self.at
    }

    #[inline]
    fn first_name(&mut self) -> Walk<Option<Key>> {
        match self.open(b'}')? {
            true => self.name().map(Some),
            false => Ok(None),
        }
    }

    #[inline]
    fn next_name(&mut self) -> Walk<Option<Key>> {
        match self.separator(b'}')? {
            true => self.name().map(Some),
            false => Ok(None),
        }
    }

    #[inline]
    fn first_item(&mut self) -> Walk<Option<Peek>> {
        match self.open(b']')? {
            true => self.peek().map(Some),
            false => Ok(None),
        }
    }

    #[inline]
    fn next_item(&mut self) -> Walk<Option<Peek>> {
        match self.separator(b']')? {
            true => self.peek().map(Some), // a `]` here is refused by whoever reads the item
            false => Ok(None),
        }
    }

    #[inline]
    fn skip_scalar(&mut self, peek: Peek) -> Walk<()> {
        match peek.into_inner() {
            b'"' => self.string(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Refusal::Unsure),
        }
    }

    fn skip_any(&mut self, _peek: Peek) -> Walk<()> {
        Err(Refusal::Unsure) // a body that is not an object: jiter words why
    }

    fn finish(&mut self) -> Walk<()> {
        self.space();
        match self.at == self.body.len() {
            true => Ok(()),
            false => Err(Refusal::Unsure),
        }
    }
}
