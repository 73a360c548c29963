//! A response body as the reqwest wire gathers it: chunks kept or gathered in one buffer, and
//! gzip in any spelling decoded within the size limit.

use bytes::Bytes;
use reqwest::header::{HeaderMap, CONTENT_ENCODING};

/// A `Content-Encoding` that is gzip in another spelling than reqwest's (`GZIP`, `x-gzip`).
pub(super) fn is_gzip(headers: &HeaderMap) -> bool {
    let mut codings = headers.get_all(CONTENT_ENCODING).iter();
    match (codings.next(), codings.next()) {
        (Some(value), None) => value.to_str().is_ok_and(|v| {
            let v = v.trim();
            v.eq_ignore_ascii_case("gzip") || v.eq_ignore_ascii_case("x-gzip")
        }),
        _ => false,
    }
}

pub(super) enum Gunzip {
    TooLarge,
    Corrupt(String),
}

/// A gzip body decoded, at most `limit` bytes of it (a small bomb stays small).
pub(super) fn gunzip(body: &[u8], limit: usize) -> std::result::Result<Bytes, Gunzip> {
    use std::io::Read;
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    flate2::read::MultiGzDecoder::new(body)
        .take(cap)
        .read_to_end(&mut out)
        .map_err(|e| Gunzip::Corrupt(e.to_string()))?;
    if out.len() > limit {
        return Err(Gunzip::TooLarge);
    }
    Ok(Bytes::from(out))
}

/// A response body as it arrives. Most bodies come in one chunk, kept as it is (never copied);
/// a longer one is gathered in one buffer sized by its `Content-Length` (at most
/// `max_response_size`, checked before), not grown by doubling, which copied a large page
/// about twice more.
pub(super) enum Collected {
    Empty,
    One(Bytes),
    Many(Vec<u8>),
}

impl Collected {
    pub(super) fn len(&self) -> usize {
        match self {
            Collected::Empty => 0,
            Collected::One(chunk) => chunk.len(),
            Collected::Many(all) => all.len(),
        }
    }

    pub(super) fn push(&mut self, chunk: Bytes, announced: u64) {
        *self = match std::mem::replace(self, Collected::Empty) {
            Collected::Empty => Collected::One(chunk),
            Collected::One(first) => {
                let size = first.len() + chunk.len();
                let announced = usize::try_from(announced).unwrap_or(size);
                let mut all = Vec::with_capacity(announced.max(size));
                all.extend_from_slice(&first);
                all.extend_from_slice(&chunk);
                Collected::Many(all)
            }
            Collected::Many(mut all) => {
                all.extend_from_slice(&chunk);
                Collected::Many(all)
            }
        };
    }

    pub(super) fn into_bytes(self) -> Bytes {
        match self {
            Collected::Empty => Bytes::new(),
            Collected::One(chunk) => chunk,
            Collected::Many(all) => Bytes::from(all),
        }
    }
}
