//! URLs: the client's base URL, RFC 3986 resolution of a reference against it (a caller's
//! or a server's href), and userinfo dropped before a URL is sent or shown.

use url::Url;

use crate::error::{Error, Result};

/// Parse an absolute base URL (the client's `base_url`).
pub fn parse_base(base: &str) -> Result<Url> {
    let url = Url::parse(base)
        .map_err(|e| Error::Configuration(format!("invalid base URL {base:?}: {e}")))?;
    if url.cannot_be_a_base() || !matches!(url.scheme(), "http" | "https") {
        return Err(Error::Configuration(format!(
            "base URL must be an http(s) URL, got {base:?}"
        )));
    }
    Ok(url)
}

/// Resolve a (possibly relative) reference against `base` (RFC 3986 §5).
pub fn resolve(base: &Url, reference: &str) -> Result<Url> {
    join(base, reference).map_err(|e| {
        let shown = crate::text::double_quoted(reference);
        Error::Configuration(format!("cannot resolve {shown}: {e}"))
    })
}

/// Resolve `href`: from a server document (a link) as `resolve_server_href`, else as the
/// caller's (`resolve`).
pub fn resolve_href(base: &Url, href: &str, from_document: bool) -> Result<Url> {
    if from_document {
        resolve_server_href(base, href)
    } else {
        resolve(base, href)
    }
}

/// Drop `url`'s user and password, if any (see `Request::prepare`).
pub fn strip_userinfo(url: &mut Url) {
    if !url.username().is_empty() || url.password().is_some() {
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
}

/// Whether `url` has `base`'s origin (RFC 6454: scheme, host and port, a scheme's default
/// port when none is written), `base` an http(s) URL. What `url.origin() == base.origin()`
/// says, compared in place: building both origins cost two allocations a request.
pub fn same_origin(url: &Url, base: &Url) -> bool {
    // Same scheme as `base`, so a special one: its origin is that tuple (opaque for others).
    url.scheme() == base.scheme()
        && url.host() == base.host()
        && url.port_or_known_default() == base.port_or_known_default()
}

/// Resolve an href that a server document gave (a link): one that cannot be resolved is the
/// server breaking the protocol, a `ProtocolError`, not a mistake of the caller.
pub fn resolve_server_href(base: &Url, href: &str) -> Result<Url> {
    join(base, href).map_err(|e| {
        Error::protocol(format!(
            "unusable href {} from the server: {e}",
            crate::text::double_quoted(href)
        ))
    })
}

/// `base.join(reference)`, without parsing the host again when `reference` is an absolute URL
/// on `base`'s origin, as a server's links are: the host is most of a parse (IDNA mapping, then
/// the IP address), about 10,000 instructions per request. The origin is compared byte for
/// byte with `base`'s serialization, which is canonical, and the rest is then the path-absolute
/// reference it would have been parsed as; `//` and `/\` (a network-path reference, relative
/// to `base`) are left to the full parse, as are tabs and newlines, which the parser drops
/// (`/<TAB>/evil` would become `//evil`).
fn join(base: &Url, reference: &str) -> std::result::Result<Url, url::ParseError> {
    let origin = &base[..url::Position::BeforePath];
    if let Some(rest) = reference.strip_prefix(origin) {
        let mut bytes = rest.bytes();
        if bytes.next() == Some(b'/')
            && !matches!(bytes.next(), Some(b'/' | b'\\'))
            && !rest.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r'))
        {
            return base.join(rest);
        }
    }
    base.join(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short path of `join` gives what a full parse gives, for references on the base's
    /// origin and for ones that only look like it.
    #[test]
    fn join_on_the_origin_equals_the_full_parse() {
        let bases = [
            "http://127.0.0.1:8000",
            "https://api.example.com/v1/",
            "https://user:pw@example.com:8443/a/b?q=1#f",
            "http://[::1]:9/",
            "http://xn--nxasmq6b.example/",
        ];
        let tails = [
            "",
            "/",
            "/x",
            "/x/../y",
            "/%2e%2e/z",
            "/a?b#c",
            "/?q",
            "/#f",
            "//evil/x",
            "/\\evil",
            "\\evil",
            ":80/x",
            ":8000/x",
            "@evil/",
            "/x\ty",
            "/x\ny",
            "/ sp ace",
            "/é/ü?ä#ö",
            "/a b",
            "/%zz",
            "/x/./y/",
            "?only",
            "#only",
            "/x\\y",
            "/\t/evil",
            "/\u{0}",
        ];
        for base in bases {
            let base = Url::parse(base).unwrap();
            let origin = &base[..url::Position::BeforePath];
            for tail in tails {
                for reference in [format!("{origin}{tail}"), tail.to_owned()] {
                    assert_eq!(
                        join(&base, &reference).map(String::from),
                        base.join(&reference).map(String::from),
                        "{base} + {reference:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn same_origin_is_what_origins_say() {
        let urls = [
            "http://127.0.0.1:8000/x",
            "http://127.0.0.1/x",
            "http://127.0.0.1:80/x",
            "https://127.0.0.1:8000/x",
            "http://localhost:8000/x",
            "https://api.example.com/v1/",
            "https://API.example.com:443/other?q#f",
            "https://user:pw@api.example.com/",
            "https://api.example.com.:443/",
            "https://api.example.com:8443/",
            "http://api.example.com/",
            "ws://api.example.com/",
            "file:///etc/passwd",
            "data:text/plain,x",
            "http://[::1]:9/",
            "http://[0:0::1]:9/a",
            "http://xn--nxasmq6b.example/",
            "http://ουτοπία.example/",
            "http://0x7f.1:8000/",
        ];
        for base in urls.iter().filter(|u| u.starts_with("http")) {
            let base = Url::parse(base).unwrap();
            for url in urls {
                let url = Url::parse(url).unwrap();
                let expected = url.origin() == base.origin();
                assert_eq!(same_origin(&url, &base), expected, "{url} on {base}");
            }
        }
    }

    /// The short path of simple expansions gives what std-uritemplate (and the encoding of
    /// what it leaves) gives, for random templates and values, the awkward characters
    /// included; and it is taken for the usual template.

    #[test]
    fn resolves_relative_references() {
        let base = parse_base("https://api.example.com/v1/").unwrap();
        assert_eq!(
            resolve(&base, "/orders").unwrap().as_str(),
            "https://api.example.com/orders"
        );
        assert_eq!(
            resolve(&base, "orders").unwrap().as_str(),
            "https://api.example.com/v1/orders"
        );
        assert_eq!(
            resolve(&base, "https://other/x").unwrap().as_str(),
            "https://other/x"
        );
        assert!(parse_base("/relative").is_err());
        assert!(parse_base("ftp://host/").is_err());
    }
}
