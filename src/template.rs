//! RFC 6570 URI templates (levels 1-4) on std-uritemplate, plus the pieces it does not offer:
//! the list of variable names a template declares, and RFC 3986 resolution against a base URL.

use std::collections::HashMap;

pub use stduritemplate::Value;
use url::Url;

use crate::error::{Error, Result};

/// Expand `template` with `variables`; a variable that is absent is undefined (RFC 6570 §2.3).
pub fn expand(template: &str, variables: &HashMap<String, Value>) -> Result<String> {
    let expanded = std_expand(template, variables)?;
    if !(template.contains("{+") || template.contains("{#")) || !has_lone_percent(variables) {
        return Ok(encode_disallowed(expanded));
    }
    // std-uritemplate loses a `%` that is followed by another before two hex digits in `+`/`#`
    // expansions (`{+v}` with `%%41` gave `%41`). Expand expression by expression instead (RFC
    // 6570 expands each on its own), with such a `%` written `%25` for the `+`/`#` ones.
    let escaped: HashMap<String, Value> = variables
        .iter()
        .map(|(k, v)| (k.clone(), escape_lone_percent(v)))
        .collect();
    let mut out = String::with_capacity(expanded.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break; // cannot happen: the whole template expanded above
        };
        out.push_str(&std_expand(&rest[..open], variables)?);
        let expression = &rest[open..=close];
        let reserved = matches!(expression.as_bytes().get(1), Some(b'+' | b'#'));
        out.push_str(&std_expand(
            expression,
            if reserved { &escaped } else { variables },
        )?);
        rest = &rest[close + 1..];
    }
    out.push_str(&std_expand(rest, variables)?);
    Ok(encode_disallowed(out))
}

fn std_expand(template: &str, variables: &HashMap<String, Value>) -> Result<String> {
    stduritemplate::expand(template, variables)
        .map_err(|e| Error::Template(format!("malformed URI template {template:?}: {e}")))
}

/// A `%` that does not start a pct-encoded triplet (`%4`, `%%`, `50%`).
fn lone_percents(s: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = s.as_bytes();
    (0..bytes.len()).filter(move |&i| {
        bytes[i] == b'%'
            && !bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    })
}

fn has_lone_percent(variables: &HashMap<String, Value>) -> bool {
    fn value(v: &Value) -> bool {
        match v {
            Value::String(s) => lone_percents(s).next().is_some(),
            Value::List(items) => items.iter().any(value),
            Value::Map(pairs) => pairs
                .iter()
                .any(|(k, v)| lone_percents(k).next().is_some() || value(v)),
            Value::Bool(_) | Value::Integer(_) | Value::Float(_) => false,
        }
    }
    variables.values().any(value)
}

/// The value with every lone `%` written `%25`, which `+`/`#` expansion keeps as it is.
fn escape_lone_percent(v: &Value) -> Value {
    let text = |s: &str| {
        let lone: Vec<usize> = lone_percents(s).collect();
        let mut out = String::with_capacity(s.len() + 2 * lone.len());
        let mut last = 0;
        for i in lone {
            out.push_str(&s[last..i]);
            out.push_str("%25");
            last = i + 1;
        }
        out.push_str(&s[last..]);
        out
    };
    match v {
        Value::String(s) => Value::String(text(s)),
        Value::List(items) => Value::List(items.iter().map(escape_lone_percent).collect()),
        Value::Map(pairs) => Value::Map(
            pairs
                .iter()
                .map(|(k, v)| (text(k), escape_lone_percent(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Percent-encode what may not appear in a URI. std-uritemplate copies every ASCII character
/// but space as it is in `{+var}` and `{#var}` expansions (`<`, `"`, `{`, `|`, CR, LF, ...);
/// RFC 6570 §3.2.3 allows only unreserved and reserved characters and pct-encoded triplets.
fn encode_disallowed(expanded: String) -> String {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(c);
    if expanded.chars().all(allowed) {
        return expanded;
    }
    let mut out = String::with_capacity(expanded.len() + 16);
    for c in expanded.chars() {
        if allowed(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

/// The variable names a template declares, in order of first appearance, without duplicates.
///
/// Also checks the syntax of every expression, so a malformed template is reported even when
/// no variable is given.
pub fn variables(template: &str) -> Result<Vec<String>> {
    let malformed =
        |why: &str| Error::Template(format!("malformed URI template {template:?}: {why}"));
    let mut names: Vec<String> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return Err(malformed("'}' without '{'"));
        }
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| malformed("unclosed '{'"))?;
        let expression = &after[..close];
        if expression.contains('{') {
            return Err(malformed("'{' inside an expression"));
        }
        for name in parse_expression(expression).map_err(malformed)? {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        rest = &after[close + 1..];
    }
    // std-uritemplate has checks of its own (literals, modifiers); run them too.
    expand(template, &HashMap::new())?;
    Ok(names)
}

/// The variable names of one `{...}` expression (without braces).
fn parse_expression(expression: &str) -> std::result::Result<Vec<&str>, &'static str> {
    let body = match expression.chars().next() {
        None => return Err("empty expression"),
        Some('+' | '#' | '.' | '/' | ';' | '?' | '&') => &expression[1..],
        Some('=' | ',' | '!' | '@' | '|') => return Err("reserved operator"),
        Some(_) => expression,
    };
    let mut names = Vec::new();
    for spec in body.split(',') {
        let name = if let Some(name) = spec.strip_suffix('*') {
            name
        } else if let Some((name, length)) = spec.split_once(':') {
            let valid = !length.is_empty()
                && length.len() <= 4
                && !length.starts_with('0')
                && length.bytes().all(|b| b.is_ascii_digit());
            if !valid {
                return Err("prefix length must be 1 to 9999");
            }
            name
        } else {
            spec
        };
        if !is_varname(name) {
            return Err("invalid variable name");
        }
        names.push(name);
    }
    Ok(names)
}

/// varname = varchar *( ["."] varchar ); varchar = ALPHA / DIGIT / "_" / pct-encoded
fn is_varname(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes[0] == b'.' || bytes[bytes.len() - 1] == b'.' {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3);
                if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    return false;
                }
                i += 3;
                continue;
            }
            b'.' if bytes[i - 1] == b'.' => return false,
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

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
    base.join(reference)
        .map_err(|e| Error::Configuration(format!("cannot resolve {reference:?}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, Value)]) -> HashMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn expands_levels() {
        let v = vars(&[
            ("reference", Value::String("demo creditor".into())),
            ("size", Value::Integer(50)),
            (
                "list",
                Value::List(vec![Value::String("a".into()), Value::String("b".into())]),
            ),
        ]);
        assert_eq!(
            expand("/creditors{?reference}", &v).unwrap(),
            "/creditors?reference=demo%20creditor"
        );
        assert_eq!(expand("/m{?size,page}", &v).unwrap(), "/m?size=50");
        assert_eq!(expand("/x{/list*}", &v).unwrap(), "/x/a/b");
    }

    #[test]
    fn reserved_expansion_encodes_what_is_neither_reserved_nor_unreserved() {
        // Found by the Hypothesis reference test: `<` came out as it is, and `{`, CR, LF too.
        let v = vars(&[(
            "v",
            Value::String("a<b>\"{c}|\r\n^`\\/?#[]@!$&'()*+,;=%41 é".into()),
        )]);
        assert_eq!(
            expand("{+v}", &v).unwrap(),
            "a%3Cb%3E%22%7Bc%7D%7C%0D%0A%5E%60%5C/?#[]@!$&'()*+,;=%41%20%C3%A9"
        );
        assert_eq!(
            expand("/x{#v}", &v).unwrap(),
            "/x#a%3Cb%3E%22%7Bc%7D%7C%0D%0A%5E%60%5C/?#[]@!$&'()*+,;=%41%20%C3%A9"
        );
    }

    #[test]
    fn reserved_expansion_keeps_every_lone_percent() {
        // Found by the Hypothesis reference test: `%%` came out as `%25`, `%%41` as `%41`.
        let v = vars(&[
            ("v", Value::String("%%41%4%zz50%".into())),
            (
                "m",
                Value::Map(vec![("%%".into(), Value::String("%".into()))]),
            ),
        ]);
        assert_eq!(
            expand("/a{+v}/{v}{#m*}", &v).unwrap(),
            "/a%25%41%254%25zz50%25/%25%2541%254%25zz50%25#%25%25=%25"
        );
        assert_eq!(expand("{+v}", &vars(&[])).unwrap(), "");
    }

    #[test]
    fn lists_variables_in_order_without_duplicates() {
        assert_eq!(
            variables("https://h/orders{?creditorReference,reference}").unwrap(),
            vec!["creditorReference", "reference"]
        );
        assert_eq!(
            variables("/{id}/x{?id,list*,name:3}{&a.b}").unwrap(),
            vec!["id", "list", "name", "a.b"]
        );
        assert!(variables("/plain").unwrap().is_empty());
    }

    #[test]
    fn malformed_templates_are_errors() {
        for bad in [
            "{/id*",
            "/id*}",
            "{}",
            "{var:0}",
            "{var:01}",
            "{with space}",
            "{!x}",
            "{a{b}}",
            "{=path}",
            "{var:prefix}",
            "{hello:2*}",
            "/{default-graph-uri}",
            "{a..b}",
        ] {
            assert!(matches!(variables(bad), Err(Error::Template(_))), "{bad}");
        }
    }

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
