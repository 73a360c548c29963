//! Media types in `Accept` and `Content-Type` (RFC 9110 §8.3.1, §12.5.1): parsed properly, so
//! quoting, spacing, parameter order and extra parameters (`charset`, `q`) do not matter.

/// One media type or media range: lower-case `type/subtype`, parameters with lower-case names.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaType {
    pub essence: String,
    pub params: Vec<(String, String)>,
}

impl MediaType {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// `q=0` means "not acceptable"; an unparsable `q` counts as acceptable.
    fn acceptable(&self) -> bool {
        self.param("q")
            .and_then(|q| q.trim().parse::<f32>().ok())
            .is_none_or(|q| q > 0.0)
    }
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

struct Parser<'a> {
    rest: &'a str,
}

impl Parser<'_> {
    fn skip_ows(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t']);
    }

    fn token(&mut self) -> Option<String> {
        let end = self.rest.find(|c| !is_tchar(c)).unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (token, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(token.to_owned())
    }

    fn eat(&mut self, c: char) -> bool {
        match self.rest.strip_prefix(c) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    /// An unquoted parameter value. The grammar wants a token, but unquoted URIs (with ':'
    /// and '/') are common in profile parameters, so take anything up to a delimiter.
    fn bare_value(&mut self) -> Option<String> {
        let end = self
            .rest
            .find([';', ',', ' ', '\t', '"'])
            .unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (value, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(value.to_owned())
    }

    fn quoted(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &self.rest[i + 1..];
                    return Some(out);
                }
                '\\' => out.push(chars.next()?.1),
                c => out.push(c),
            }
        }
        None
    }

    /// `type/subtype *( OWS ";" OWS name "=" value )`, stopping before a `,` or the end.
    fn media_type(&mut self) -> Option<MediaType> {
        self.skip_ows();
        let kind = self.token()?;
        if !self.eat('/') {
            return None;
        }
        let subtype = self.token()?;
        let mut params = Vec::new();
        loop {
            self.skip_ows();
            if self.rest.is_empty() || self.rest.starts_with(',') {
                break;
            }
            if !self.eat(';') {
                return None;
            }
            self.skip_ows();
            if self.rest.is_empty() || self.rest.starts_with([',', ';']) {
                continue; // an empty parameter, as in `a/b;;c=d`
            }
            let name = self.token()?.to_ascii_lowercase();
            // Spaces around '=' are not allowed by the grammar, but are common; accept them.
            self.skip_ows();
            if !self.eat('=') {
                return None;
            }
            self.skip_ows();
            let value = if self.eat('"') {
                self.quoted()?
            } else {
                self.bare_value()?
            };
            params.push((name, value));
        }
        Some(MediaType {
            essence: format!("{kind}/{subtype}").to_ascii_lowercase(),
            params,
        })
    }
}

/// A single media type (a `Content-Type` value); `None` if malformed.
pub fn parse(value: &str) -> Option<MediaType> {
    let mut parser = Parser { rest: value };
    let media = parser.media_type()?;
    parser.skip_ows();
    parser.rest.is_empty().then_some(media)
}

/// The media ranges of an `Accept` value; malformed elements are skipped.
pub fn parse_list(value: &str) -> Vec<MediaType> {
    let mut out = Vec::new();
    let mut parser = Parser { rest: value };
    loop {
        if let Some(media) = parser.media_type() {
            out.push(media);
        }
        // Skip to the next element (after an error, past whatever is left of this one).
        match parser.rest.find(',') {
            Some(_) if parser.rest.starts_with(',') => parser.rest = &parser.rest[1..],
            Some(i) => {
                let before = &parser.rest[..i];
                if before.contains('"') {
                    // A malformed element with quotes: give up on the rest rather than guess.
                    return out;
                }
                parser.rest = &parser.rest[i + 1..];
            }
            None => return out,
        }
    }
}

/// Whether any acceptable range of the `Accept` values is exactly `essence` (no wildcards: the
/// API accepts one representation and says so). With `profile`, the range must also carry that
/// profile (RFC 6906 allows a space-separated list of profile URIs).
pub fn accepts<'a>(
    accept_values: impl Iterator<Item = &'a str>,
    essence: &str,
    profile: Option<&str>,
) -> bool {
    accept_values.flat_map(parse_list).any(|m| {
        m.essence == essence
            && m.acceptable()
            && profile.is_none_or(|wanted| {
                m.param("profile")
                    .is_some_and(|p| p.split_ascii_whitespace().any(|p| p == wanted))
            })
    })
}

/// Whether a `Content-Type` value is `essence` (parameters allowed).
pub fn is(content_type: Option<&str>, essence: &str) -> bool {
    content_type
        .and_then(parse)
        .is_some_and(|m| m.essence == essence)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "http://127.0.0.1:1/alps/v1";

    fn ok(accept: &str) -> bool {
        accepts([accept].into_iter(), "application/hal+json", Some(P))
    }

    #[test]
    fn accept_variants() {
        assert!(ok(
            r#"application/hal+json; profile="http://127.0.0.1:1/alps/v1""#
        ));
        assert!(ok(
            r#"application/hal+json;profile="http://127.0.0.1:1/alps/v1";charset=UTF-8"#
        ));
        assert!(ok(
            "Application/HAL+JSON ; charset=utf-8 ; PROFILE = http://127.0.0.1:1/alps/v1"
        ));
        assert!(ok(
            r#"text/html, application/hal+json; profile="x http://127.0.0.1:1/alps/v1""#
        ));
        assert!(ok(
            r#"a/b; x="1,2", application/hal+json; profile="http://127.0.0.1:1/alps/v1""#
        ));
        assert!(!ok("application/hal+json"));
        assert!(!ok("*/*"));
        assert!(!ok(
            r#"application/hal+json; profile="http://127.0.0.1:1/alps/v2""#
        ));
        assert!(!ok(
            r#"application/hal+json; profile="http://127.0.0.1:1/alps/v1"; q=0"#
        ));
        assert!(!ok(
            r#"application/json; profile="http://127.0.0.1:1/alps/v1""#
        ));
        assert!(!ok(
            r#"application/hal+json; profile="http://127.0.0.1:1/alps/v1"#
        ));
        assert!(!ok(""));
        assert!(accepts(
            ["text/plain", "application/json;charset=UTF-8"].into_iter(),
            "application/json",
            None
        ));
    }

    #[test]
    fn content_types() {
        assert!(is(Some("application/json"), "application/json"));
        assert!(is(
            Some("application/JSON; charset=utf-8"),
            "application/json"
        ));
        assert!(!is(
            Some("application/json, text/plain"),
            "application/json"
        ));
        assert!(!is(Some("application/jsonx"), "application/json"));
        assert!(!is(None, "application/json"));
        assert_eq!(
            parse(r#"a/b; p="q\"uo;te""#).unwrap().param("p"),
            Some(r#"q"uo;te"#)
        );
    }
}
