//! Parsing a JSON value into the HAL model, strictly: every departure from the draft is an
//! error that names the link or the `_embedded` path it was found at.

use serde_json::{Map, Value};

use super::{Document, Link, OneOrMany, MAX_EMBEDDING_DEPTH};
use crate::error::{Error, Result};
use crate::text::double_quoted;

/// Parse a response body (JSON text) into a document.
pub fn parse(body: &[u8]) -> Result<Document> {
    // RFC 8259 §8.1 lets a parser ignore a byte order mark; some servers still send one.
    let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        // serde_json stops at 128 levels of nesting instead of overflowing the stack.
        if e.to_string().starts_with("recursion limit exceeded") {
            Error::protocol(format!(
                "response body is nested too deeply: {e} (the limit is 128 levels)"
            ))
        } else {
            Error::protocol(format!("response body is not valid JSON: {e}"))
        }
    })?;
    if !value.is_object() {
        return Err(Error::protocol(format!(
            "response body is {}, not a JSON object",
            kind(&value)
        )));
    }
    document(value)
}

pub(super) fn document(v: Value) -> Result<Document> {
    document_at(v, 0).map_err(|bad| Error::protocol(bad.to_string()))
}

/// `depth` counts the `_embedded` levels above this document.
fn document_at(v: Value, depth: usize) -> std::result::Result<Document, Malformed> {
    if depth > MAX_EMBEDDING_DEPTH {
        drop_without_recursion(v);
        return Err(Malformed::new(format!(
            "resources are nested deeper than {MAX_EMBEDDING_DEPTH} levels"
        )));
    }
    let Value::Object(mut state) = v else {
        return Err(Malformed::new(format!(
            "HAL document is {}, not an object",
            kind(&v)
        )));
    };
    let links = match state.shift_remove("_links") {
        None => Vec::new(),
        Some(Value::Object(links)) => parse_links(links).map_err(Malformed::new)?,
        Some(other) => {
            return Err(Malformed::new(format!(
                "\"_links\" is {}, not an object",
                kind(&other)
            )));
        }
    };
    let embedded = match state.shift_remove("_embedded") {
        None => Vec::new(),
        Some(Value::Object(embedded)) => parse_embedded(embedded, depth)?,
        Some(other) => {
            return Err(Malformed::new(format!(
                "\"_embedded\" is {}, not an object",
                kind(&other)
            )));
        }
    };
    Ok(Document {
        state,
        links,
        embedded,
    })
}

/// Parse a link object; the error is the end of a sentence whose subject is the link.
pub(super) fn link(v: Value) -> std::result::Result<Link, String> {
    let Value::Object(mut members) = v else {
        return Err(format!("is {}, not an object", kind(&v)));
    };
    let href = match members.shift_remove("href") {
        Some(Value::String(href)) => href,
        None => return Err("has no string \"href\"".to_owned()),
        Some(other) => return Err(format!("has no string \"href\" (it is {})", kind(&other))),
    };
    let templated = match members.shift_remove("templated") {
        None => false,
        Some(Value::Bool(templated)) => templated,
        Some(other) => {
            return Err(format!(
                "has a \"templated\" that is {}, not a bool",
                kind(&other)
            ));
        }
    };
    let mut string_member = |key: &str| match members.shift_remove(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!(
            "has a {key:?} that is {}, not a string",
            kind(&other)
        )),
    };
    Ok(Link {
        href,
        templated,
        media_type: string_member("type")?,
        deprecation: string_member("deprecation")?,
        name: string_member("name")?,
        profile: string_member("profile")?,
        title: string_member("title")?,
        hreflang: string_member("hreflang")?,
        // What is left is what the model does not name.
        extra: members,
    })
}

fn parse_links(
    links: Map<String, Value>,
) -> std::result::Result<Vec<(String, OneOrMany<Link>)>, String> {
    let mut out = Vec::with_capacity(links.len());
    for (rel, value) in links {
        let label = double_quoted(&rel);
        let parsed = match value {
            Value::Array(items) => OneOrMany::Many(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| link(item).map_err(|why| format!("link {label}[{i}] {why}")))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Value::Object(_) => {
                OneOrMany::One(link(value).map_err(|why| format!("link {label} {why}"))?)
            }
            other => {
                return Err(format!(
                    "link {label} is {}, not an object or an array of objects",
                    kind(&other)
                ));
            }
        };
        out.push((rel, parsed));
    }
    Ok(out)
}

fn parse_embedded(
    embedded: Map<String, Value>,
    depth: usize,
) -> std::result::Result<Vec<(String, OneOrMany<Document>)>, Malformed> {
    let mut out = Vec::with_capacity(embedded.len());
    for (rel, value) in embedded {
        let label = double_quoted(&rel);
        let nested = |v: Value, at: String| {
            if !v.is_object() {
                return Err(Malformed::new(format!(
                    "_embedded {at} is {}, not an object",
                    kind(&v)
                )));
            }
            document_at(v, depth + 1).map_err(|bad| bad.inside(at))
        };
        let parsed = match value {
            Value::Array(items) => OneOrMany::Many(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| nested(item, format!("{label}[{i}]")))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Value::Object(_) => OneOrMany::One(nested(value, label)?),
            other => {
                return Err(Malformed::new(format!(
                    "_embedded {label} is {}, not an object or an array of objects",
                    kind(&other)
                )));
            }
        };
        out.push((rel, parsed));
    }
    Ok(out)
}

/// What is wrong with a document, and the `_embedded` path to the resource it is wrong in.
struct Malformed {
    /// Innermost first: segments are added while the recursion unwinds.
    path: Vec<String>,
    why: String,
}

impl Malformed {
    fn new(why: String) -> Malformed {
        Malformed {
            path: Vec::new(),
            why,
        }
    }

    fn inside(mut self, segment: String) -> Malformed {
        self.path.push(segment);
        self
    }
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        /// Path segments shown at each end of a long path; the middle becomes "…".
        const SHOWN: usize = 3;
        if self.path.is_empty() {
            return f.write_str(&self.why);
        }
        let outermost_first: Vec<&str> = self.path.iter().rev().map(String::as_str).collect();
        let path = if outermost_first.len() > 2 * SHOWN {
            let head = &outermost_first[..SHOWN];
            let tail = &outermost_first[outermost_first.len() - SHOWN..];
            format!("{} > … > {}", head.join(" > "), tail.join(" > "))
        } else {
            outermost_first.join(" > ")
        };
        write!(f, "in _embedded {path}: {}", self.why)
    }
}

/// "a string", "an array", ...: what a JSON value is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Drop a value of any depth with a heap stack: the default drop recurses and a hand-built
/// value nested thousands of levels deep would overflow the thread's stack.
fn drop_without_recursion(v: Value) {
    let mut pending = vec![v];
    while let Some(v) = pending.pop() {
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(members) => pending.extend(members.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}
