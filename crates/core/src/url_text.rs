//! A server's href as the text of its absolute URL, without parsing it where a parse could not
//! change it: `Resource.url` reads one on each item of a page, and a full join then its
//! serialization cost ~2,900 instructions for an href that is usually already canonical.

use std::borrow::Cow;

use url::Url;

use crate::error::Result;

/// [`crate::url::resolve_server_href`] as text: `href` itself when it is an absolute URL on
/// `base`'s origin that the URL parser would leave as it is, `base`'s origin then `href` for
/// such a path-absolute reference, else the full resolution (with its errors).
pub fn resolve_server_href_text<'a>(base: &Url, href: &'a str) -> Result<Cow<'a, str>> {
    match unchanged_by_parse(base, href) {
        Some(text) => Ok(text),
        None => crate::url::resolve_server_href(base, href).map(|url| Cow::Owned(url.into())),
    }
}

/// The resolution of `href` when it is provably what `base.join(href)` serializes to: `base`'s
/// origin (its serialization up to the path, which is canonical) followed by a path and query
/// of bytes that the WHATWG parser copies as they are, with no dot segment. `None` otherwise.
fn unchanged_by_parse<'a>(base: &Url, href: &'a str) -> Option<Cow<'a, str>> {
    let origin = &base[..url::Position::BeforePath];
    match href.strip_prefix(origin) {
        Some(path) => is_kept_as_is(path).then_some(Cow::Borrowed(href)),
        None if is_kept_as_is(href) => {
            let mut url = String::with_capacity(origin.len() + href.len());
            url.push_str(origin);
            url.push_str(href);
            Some(Cow::Owned(url))
        }
        None => None,
    }
}

/// Whether `path` (a path-absolute reference: `/`, not `//`) and its query are made only of
/// bytes the parser neither percent-encodes nor reads as a delimiter, and of no `.` or `..`
/// segment. No `%` (`%2e` is a dot), `\` (a slash in http), `#`, space, quote, `<>^{}|` or
/// backtick, non-ASCII byte, control (a tab or newline is dropped).
fn is_kept_as_is(path: &str) -> bool {
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'/') || bytes.get(1) == Some(&b'/') {
        return false;
    }
    // One pass: each segment of the path checked at its end, then the query's bytes.
    let mut segment = 0;
    for (at, &b) in bytes.iter().enumerate() {
        match b {
            b'/' | b'?' => {
                if is_dot_segment(&bytes[segment..at]) {
                    return false;
                }
                if b == b'?' {
                    let query = &bytes[at + 1..];
                    return query.iter().all(|&b| KEPT[usize::from(b)] & IN_QUERY != 0);
                }
                segment = at + 1;
            }
            _ if KEPT[usize::from(b)] & IN_PATH == 0 => return false,
            _ => {}
        }
    }
    !is_dot_segment(&bytes[segment..])
}

fn is_dot_segment(segment: &[u8]) -> bool {
    matches!(segment, b"." | b"..")
}

const IN_PATH: u8 = 1;
const IN_QUERY: u8 = 2;

/// For each byte, where the parser keeps it as it is (`IN_PATH`, `IN_QUERY`).
static KEPT: [u8; 256] = kept_table();

const fn kept_table() -> [u8; 256] {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            table[b] = IN_PATH | IN_QUERY;
        }
        b += 1;
    }
    let common = b"-._~!$&()*+,;=:@/";
    let mut i = 0;
    while i < common.len() {
        table[common[i] as usize] = IN_PATH | IN_QUERY;
        i += 1;
    }
    table[b'?' as usize] = IN_QUERY; // a later `?` is part of the query
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    const BASES: [&str; 7] = [
        "http://127.0.0.1:8000",
        "https://api.example.com/v1/",
        "https://user:pw@example.com:8443/a/b?q=1#f",
        "http://[::1]:9/",
        "http://xn--nxasmq6b.example/",
        "http://example.com:80/x",
        "https://EXAMPLE.com:443/",
    ];

    /// What the short path gives, checked against the full join.
    fn check(base: &Url, href: &str) -> bool {
        let full = base.join(href).map(String::from);
        let text = resolve_server_href_text(base, href).map(Cow::into_owned);
        assert_eq!(text.ok(), full.clone().ok(), "{base} + {href:?}");
        match unchanged_by_parse(base, href) {
            Some(short) => {
                assert_eq!(Ok(short.into_owned()), full, "{base} + {href:?}");
                true
            }
            None => false,
        }
    }

    /// Random references, on and off the base's origin, of every byte that the parser treats
    /// specially: the short path, when taken, gives what the full join gives.
    #[test]
    fn the_short_path_equals_the_full_join_for_random_hrefs() {
        let mut rng = StdRng::seed_from_u64(3986);
        let pieces = [
            "/", "/", "/", "a", "Z", "09", "-", "_", "~", ".", "..", "%2e", "%2E", "%", "%41", "?",
            "?", "#", "\\", "\t", "\n", "\r", " ", "é", "'", "\"", "<", ">", "^", "`", "{", "}",
            "|", "[", "]", "!", "$", "&", "(", ")", "*", "+", ",", ";", "=", ":", "@", "//",
            "\u{0}", "\u{7f}", "😀",
        ];
        // Mostly bytes the short path accepts, so that it is taken often and each is tried.
        let kept = [
            "/", "a", "Z", "09", "-", "_", "~", ".", "..", "...", "?", "!", "$", "&", "(", ")",
            "*", "+", ",", ";", "=", ":", "@",
        ];
        let mut taken = 0;
        for base in BASES {
            let base = Url::parse(base).unwrap();
            let origin = base[..url::Position::BeforePath].to_owned();
            let prefixes = [
                origin.clone(),
                String::new(),
                origin.to_uppercase(),
                format!("{origin}:80"),
                origin.replacen("://", "://user@", 1),
                origin.replacen("http", "HTTP", 1),
                "http://other.example".to_owned(),
                "//127.0.0.1:8000".to_owned(),
                "http:".to_owned(),
            ];
            for _ in 0..20_000 {
                let mut href = prefixes[rng.random_range(0..prefixes.len())].clone();
                if rng.random_range(0..4) > 0 {
                    href.push('/');
                }
                for _ in 0..rng.random_range(0..8) {
                    let piece = match rng.random_range(0..8) {
                        0 => pieces[rng.random_range(0..pieces.len())],
                        _ => kept[rng.random_range(0..kept.len())],
                    };
                    href.push_str(piece);
                }
                if check(&base, &href) {
                    taken += 1;
                }
            }
        }
        assert!(taken > 15_000, "the short path was taken {taken} times");
    }

    /// The references that look canonical but are not, each left to the full join.
    #[test]
    fn what_the_parser_would_change_takes_the_full_join() {
        let base = Url::parse("http://127.0.0.1:8000/v1/").unwrap();
        let kept = [
            "/a/b",
            "/a?b=c&d=/e?",
            "http://127.0.0.1:8000/x/...;y=z@a:b",
        ];
        for href in kept {
            assert!(check(&base, href), "{href:?}");
        }
        let changed = [
            "a/b",
            "../a",
            "/a/./b",
            "/a/../b",
            "/a/%2e%2E/b",
            "/.",
            "/a/..",
            "//evil/x",
            "/\\evil",
            "/a\\b",
            "/a b",
            "/a\tb",
            "/é",
            "/a#f",
            "/a?b#f",
            "/a?'",
            "/a|b",
            "/a^b",
            "?q",
            "#f",
            "",
            "HTTP://127.0.0.1:8000/x",
            "http://127.0.0.1:80/x",
            "http://u@127.0.0.1:8000/x",
            "http://127.0.0.1:8000",
            "http://127.0.0.1:80001/x",
            "http://127.0.0.1:8000/a/../b",
            "https://127.0.0.1:8000/x",
            "http://xn--nxasmq6b.example/",
            "http://ουτοπία.example/",
        ];
        for href in changed {
            assert!(!check(&base, href), "{href:?}");
        }
    }

    /// An href the full join refuses keeps its error (a server breaking the protocol).
    #[test]
    fn an_unusable_href_is_a_protocol_error() {
        let base = Url::parse("http://127.0.0.1:8000/").unwrap();
        let error = resolve_server_href_text(&base, "http://[::1").unwrap_err();
        assert!(error.to_string().contains("unusable href"), "{error}");
    }
}
