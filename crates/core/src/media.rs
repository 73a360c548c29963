//! Media types in `Accept` and `Content-Type` (RFC 9110 §8.3.1, §12.5.1): parsed properly, so
//! quoting, spacing, parameter order and extra parameters (`charset`, `q`) do not matter.

use std::borrow::Cow;
use std::cell::RefCell;

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

/// RFC 9110 §5.6.2 tchar, by table: searching a list of characters for each character cost
/// ~800 instructions a response in `is`.
const TCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    table
};

/// The grammar, walked over slices of the input: nothing is allocated unless a quoted value
/// holds an escape, so `is` (run on every response) checks a `Content-Type` without copying it.
/// Delimiters are ASCII and searched by byte: where a search stops is a character boundary.
struct Parser<'a> {
    rest: &'a str,
}

impl<'a> Parser<'a> {
    fn skip_ows(&mut self) {
        let n = self.rest.bytes().take_while(|&b| matches!(b, b' ' | b'\t'));
        self.rest = &self.rest[n.count()..];
    }

    /// The next `end` bytes, if there are any (`None` for an empty run).
    fn take(&mut self, end: Option<usize>) -> Option<&'a str> {
        let end = end.unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (taken, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(taken)
    }

    fn token(&mut self) -> Option<&'a str> {
        let end = self.rest.bytes().position(|b| !TCHAR[usize::from(b)]);
        self.take(end)
    }

    fn eat(&mut self, c: u8) -> bool {
        match self.rest.as_bytes().first() {
            Some(&first) if first == c => {
                self.rest = &self.rest[1..];
                true
            }
            _ => false,
        }
    }

    /// An unquoted parameter value. The grammar wants a token, but unquoted URIs (with ':'
    /// and '/') are common in profile parameters, so take anything up to a delimiter.
    fn bare_value(&mut self) -> Option<&'a str> {
        let delimiter = |b| matches!(b, b';' | b',' | b' ' | b'\t' | b'"');
        let end = self.rest.bytes().position(delimiter);
        self.take(end)
    }

    /// The rest of a quoted string (the opening quote eaten): borrowed unless it has escapes.
    fn quoted(&mut self) -> Option<Cow<'a, str>> {
        let end = self.rest.bytes().position(|b| b == b'"' || b == b'\\')?;
        if self.rest[end..].starts_with('"') {
            let value = &self.rest[..end];
            self.rest = &self.rest[end + 1..];
            return Some(Cow::Borrowed(value));
        }
        let mut out = String::new();
        let mut chars = self.rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &self.rest[i + 1..];
                    return Some(Cow::Owned(out));
                }
                '\\' => out.push(chars.next()?.1),
                c => out.push(c),
            }
        }
        None
    }

    /// `type/subtype *( OWS ";" OWS name "=" value )`, stopping before a `,` or the end. Each
    /// parameter goes to `param` (name as written); returns the type and subtype as written.
    fn media_type(
        &mut self,
        mut param: impl FnMut(&'a str, Cow<'a, str>),
    ) -> Option<(&'a str, &'a str)> {
        self.skip_ows();
        let kind = self.token()?;
        if !self.eat(b'/') {
            return None;
        }
        let subtype = self.token()?;
        loop {
            self.skip_ows();
            if self.rest.is_empty() || self.rest.starts_with(',') {
                break;
            }
            if !self.eat(b';') {
                return None;
            }
            self.skip_ows();
            if self.rest.is_empty() || self.rest.starts_with([',', ';']) {
                continue; // an empty parameter, as in `a/b;;c=d`
            }
            let name = self.token()?;
            // Spaces around '=' are not allowed by the grammar, but are common; accept them.
            self.skip_ows();
            if !self.eat(b'=') {
                return None;
            }
            self.skip_ows();
            let value = if self.eat(b'"') {
                self.quoted()?
            } else {
                Cow::Borrowed(self.bare_value()?)
            };
            param(name, value);
        }
        Some((kind, subtype))
    }

    /// An owned `MediaType`: essence and parameter names in lower case.
    fn media_type_owned(&mut self) -> Option<MediaType> {
        let mut params = Vec::new();
        let (kind, subtype) = self.media_type(|name, value| {
            params.push((name.to_ascii_lowercase(), value.into_owned()));
        })?;
        Some(MediaType {
            essence: format!("{kind}/{subtype}").to_ascii_lowercase(),
            params,
        })
    }
}

/// A single media type (a `Content-Type` value); `None` if malformed.
pub fn parse(value: &str) -> Option<MediaType> {
    let mut parser = Parser { rest: value };
    let media = parser.media_type_owned()?;
    parser.skip_ows();
    parser.rest.is_empty().then_some(media)
}

/// The media ranges of an `Accept` value; malformed elements are skipped.
pub fn parse_list(value: &str) -> Vec<MediaType> {
    let mut out = Vec::new();
    let mut parser = Parser { rest: value };
    loop {
        if let Some(media) = parser.media_type_owned() {
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

/// Whether a `Content-Type` value is `essence` (lower case; parameters allowed). The same
/// grammar as `parse`, without building the `MediaType`: this runs on every response.
pub fn is(content_type: Option<&str>, essence: &str) -> bool {
    let Some(value) = content_type else {
        return false;
    };
    let mut parser = Parser { rest: value };
    let Some((kind, subtype)) = parser.media_type(|_, _| {}) else {
        return false;
    };
    parser.skip_ows();
    parser.rest.is_empty() && is_essence(kind, subtype, essence)
}

/// Whether a `Content-Type` value is a JSON document's (`application/hal+json` or
/// `application/json`, parameters allowed), as `is` says. An API sends the same value on every
/// response: the last one found JSON on this thread is kept, and the same bytes again are
/// compared, not parsed (~1,200 instructions a response).
pub fn is_json(content_type: Option<&str>) -> bool {
    thread_local! {
        static LAST_JSON: RefCell<String> = const { RefCell::new(String::new()) };
    }
    let Some(value) = content_type else {
        return false;
    };
    let seen = |last: &RefCell<String>| last.try_borrow().is_ok_and(|last| *last == value);
    if !value.is_empty() && LAST_JSON.with(seen) {
        return true;
    }
    let json = is(Some(value), "application/hal+json") || is(Some(value), "application/json");
    if json {
        LAST_JSON.with(|last| {
            if let Ok(mut last) = last.try_borrow_mut() {
                last.clear();
                last.push_str(value);
            }
        });
    }
    json
}

/// `kind/subtype`, lower-cased, equals `essence` (compared in place, nothing built).
fn is_essence(kind: &str, subtype: &str, essence: &str) -> bool {
    let (k, s) = (kind.as_bytes(), subtype.as_bytes());
    let e = essence.as_bytes();
    let lower_eq = |a: &[u8], b: &[u8]| a.iter().zip(b).all(|(x, y)| x.to_ascii_lowercase() == *y);
    e.len() == k.len() + 1 + s.len()
        && lower_eq(k, &e[..k.len()])
        && e[k.len()] == b'/'
        && lower_eq(s, &e[k.len() + 1..])
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
    fn json_content_types_are_known_again() {
        let values = [
            r#"application/hal+json; profile="http://h/alps/v1";charset=UTF-8"#,
            "application/json",
            "application/hal+json; profile",
            "Application/JSON ; charset=utf-8",
            "text/html",
            "application/json, text/plain",
            "",
        ];
        // Each after each: what was seen last never changes the answer.
        for first in values {
            for value in values {
                is_json(Some(first));
                let expected = is(Some(value), HAL) || is(Some(value), "application/json");
                assert_eq!(is_json(Some(value)), expected, "{value:?} after {first:?}");
                assert_eq!(is_json(Some(value)), expected, "{value:?} again");
            }
        }
        assert!(!is_json(None));
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

    const HAL: &str = "application/hal+json";

    /// `is` walks the grammar without building a `MediaType`: it must agree with `parse`.
    fn same_as_parse(value: &str, essence: &str) -> bool {
        let fast = is(Some(value), essence);
        let full = parse(value).is_some_and(|m| m.essence == essence);
        assert_eq!(fast, full, "{value:?} as {essence:?}");
        fast
    }

    #[test]
    fn hal_content_type_edges() {
        let yes = [
            r#"application/hal+json; profile="http://127.0.0.1:1/alps/v1""#,
            "application/hal+json",
            "Application/HAL+JSON",
            "  application/hal+json  ",
            "\tapplication/hal+json;\tcharset=utf-8",
            r#"application/hal+json;profile="http://h/alps/v1""#,
            r#"application/hal+json ; profile = "http://h/alps/v1" ; charset=UTF-8"#,
            "application/hal+json; profile=http://h/alps/v1",
            r#"application/hal+json; profile="x \"y\" z""#,
            r#"application/hal+json; profile="a;b,c""#,
            "application/hal+json;;charset=utf-8;",
            r#"application/hal+json; profile="""#,
            r#"application/hal+json; title="é, ü""#,
            "application/hal+json; title=é",
        ];
        for value in yes {
            assert!(same_as_parse(value, HAL), "{value:?}");
        }
        let no = [
            "application/hal+jsonx",
            "application/hal+json2; profile=x",
            "application/hal-json",
            "application/json",
            "application/hal",
            "application/hal+json, text/plain",
            "application/hal+json; profile",
            r#"application/hal+json; profile="unterminated"#,
            r#"application/hal+json; profile="x"y"#,
            "application/hal+json; =x",
            "application/hal+json x",
            "xapplication/hal+json",
            "text/hal+json",
            "application /hal+json",
            "application/ hal+json",
            "/hal+json",
            "",
            "applicationé/hal+json",
            "application/hal+jsoné",
            "application/hal+json; é=x",
        ];
        for value in no {
            assert!(!same_as_parse(value, HAL), "{value:?}");
        }
        assert!(same_as_parse(
            "application/json; charset=utf-8",
            "application/json"
        ));
        assert!(!same_as_parse(HAL, "application/json"));
        // The essence is given in lower case; one that is not matches nothing, as with `parse`.
        assert!(!same_as_parse(HAL, "application/HAL+json"));
    }
}
