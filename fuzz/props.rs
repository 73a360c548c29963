//! The properties the fuzz targets check, shared with `tests/fuzz_corpus.rs` (which replays the
//! committed corpus through them in plain `cargo test`). Any failed assertion is a finding.

use std::collections::HashMap;

use rp_core::hal::{self, Document, Link, OneOrMany};
use rp_core::rels::Curie;
use rp_core::rels::Lookup;
use rp_core::template::{self, Value};
use rp_core::url as urls;
use serde_json::{Map, Value as Json};

/// Bytes as a response body, through `hal::parse` (the parser the Python bindings call): it
/// never panics; what its scanner accepts jiter accepts too, with the same index; a document it accepts that serde_json reads as an object has the same fields
/// in the same order with the same values, the same links (href, templated, name) and the same
/// embedded resources, recursively; an object serde_json reads is not refused as invalid JSON;
/// and every relation is reachable by its full name and by the short name the index displays.
#[allow(dead_code)] // each fuzz target uses one of the two entry points
pub fn hal(data: &[u8]) {
    // What the scanner reads, it reads as jiter does (hal::parse tries it first).
    if let Err(difference) = hal::scanner_agrees(data) {
        panic!("{difference}");
    }
    let parsed = hal::parse(data.to_vec());
    let body = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let original = match serde_json::from_slice::<Json>(body) {
        Ok(Json::Object(original)) => Some(original),
        _ => None,
    };
    let doc = match parsed {
        Ok(doc) => doc,
        Err(e) => {
            let message = e.to_string();
            assert!(
                original.is_none() || !message.contains("not valid JSON"),
                "serde_json reads an object that is refused: {message}"
            );
            return;
        }
    };
    if let Some(original) = &original {
        same_as(&doc, original);
    }
    check_document(&doc, &[]);
}

/// `doc` holds what serde_json read from the same text.
fn same_as(doc: &Document, original: &Map<String, Json>) {
    let names: Vec<&str> = doc.names().collect();
    let expected: Vec<&str> = original.keys().map(String::as_str).collect();
    assert_eq!(names, expected, "field names");
    for (name, value) in original {
        let raw = doc.get(name).unwrap_or_default();
        let decoded = serde_json::from_slice::<Json>(raw).ok();
        assert_eq!(decoded.as_ref(), Some(value), "field {name:?}");
    }
    let links = doc.links();
    match original.get("_links") {
        Some(Json::Object(expected)) => {
            let rels: Vec<&str> = links.iter().map(|(rel, _)| rel.as_str()).collect();
            let expected_rels: Vec<&str> = expected.keys().map(String::as_str).collect();
            assert_eq!(rels, expected_rels, "link relations");
            for (rel, links) in &links {
                same_links(links, &expected[rel.as_str()]);
            }
        }
        _ => assert!(links.is_empty(), "links without _links"),
    }
    let embedded = doc.embedded();
    match original.get("_embedded") {
        Some(Json::Object(expected)) => {
            let rels: Vec<&str> = embedded.iter().map(|(rel, _)| *rel).collect();
            let expected_rels: Vec<&str> = expected.keys().map(String::as_str).collect();
            assert_eq!(rels, expected_rels, "embedded relations");
            for (rel, docs) in &embedded {
                let items = match (docs, &expected[*rel]) {
                    (OneOrMany::One(doc), value) => vec![(doc, value)],
                    (OneOrMany::Many(docs), Json::Array(values)) => {
                        assert_eq!(docs.len(), values.len(), "embedded {rel:?}");
                        docs.iter().zip(values).collect()
                    }
                    (OneOrMany::Many(_), other) => panic!("embedded {rel:?} is {other}"),
                };
                for (doc, value) in items {
                    let Json::Object(value) = value else {
                        panic!("embedded {rel:?} holds {value}");
                    };
                    same_as(doc, value);
                }
            }
        }
        _ => assert!(embedded.is_empty(), "embedded without _embedded"),
    }
}

fn same_links(links: &OneOrMany<Link>, expected: &Json) {
    let pairs: Vec<(&Link, &Json)> = match (links, expected) {
        (OneOrMany::One(link), value) => vec![(link, value)],
        (OneOrMany::Many(links), Json::Array(values)) => {
            assert_eq!(links.len(), values.len());
            links.iter().zip(values).collect()
        }
        (OneOrMany::Many(_), other) => panic!("links {other} read as an array"),
    };
    for (link, value) in pairs {
        assert_eq!(Some(link.href.as_str()), value["href"].as_str(), "href");
        let templated = value.get("templated").and_then(Json::as_bool);
        assert_eq!(link.templated, templated.unwrap_or(false), "templated");
        assert_eq!(link.name.as_deref(), value["name"].as_str(), "name");
    }
}

fn check_document(doc: &Document, inherited: &[Curie]) {
    let rels = doc.rels();
    // The shape (what the bindings' relation cache keys on, read by scanning `_links`) agrees
    // with the decoded links.
    let shape = doc.shape(inherited);
    assert_eq!(shape.rels, rels, "shape's relations");
    assert_eq!(
        shape.curies,
        doc.curies_in_scope(inherited),
        "shape's CURIEs"
    );
    for (entry, (rel, links)) in doc.link_entries().iter().zip(doc.links()) {
        assert_eq!(entry.rel, rel, "link entry");
        // The value's JSON text starts with `[` exactly when it is an array of links (serde_json
        // cannot judge it: it refuses numbers out of f64's range, which JSON allows).
        let text = doc.link_text_at(entry);
        let first = text.iter().find(|b| !b.is_ascii_whitespace());
        assert_eq!(
            first == Some(&b'['),
            links.is_many(),
            "link entry of {rel:?}"
        );
    }
    // With no namespace, with one taken from the document, and with an unrelated one.
    let derived = rels
        .iter()
        .find_map(|rel| rel.split_once('#').map(|(ns, _)| format!("{ns}#")));
    for namespace in [
        None,
        derived.as_deref(),
        Some("https://api.example.com/alps#"),
    ] {
        let index = doc.rel_index(inherited, namespace);
        for rel in &rels {
            assert_eq!(index.lookup(rel), Lookup::Found(rel), "full rel {rel:?}");
            let short = index.short_name(rel);
            assert!(short.is_some(), "no short name for {rel:?}");
            if let Some(short) = short {
                assert_eq!(
                    index.resolve(&short).ok(),
                    Some(rel.as_str()),
                    "short name {short:?}"
                );
            }
        }
        for name in index.attribute_names() {
            assert!(
                matches!(index.lookup(&name), Lookup::Found(_)),
                "attribute {name:?}"
            );
        }
        // Misses build a message (did-you-mean, available names): must not panic.
        for probe in ["", "slef", "get_creditors", "ex:x"] {
            if let Err(e) = index.resolve(probe) {
                let _ = e.to_string();
            }
        }
        let first = rels.first().map(|rel| format!("{rel}x"));
        if let Some(Err(e)) = first.as_deref().map(|probe| index.resolve(probe)) {
            let _ = e.to_string();
        }
    }
    for (_, links) in doc.links() {
        for link in links.iter() {
            let _ = link.variables();
        }
    }
    // Embedded resources inherit the CURIEs in scope here (HAL draft §8.3).
    let curies = doc.curies_in_scope(inherited);
    for (_, docs) in doc.embedded() {
        for inner in docs.iter() {
            check_document(inner, &curies);
        }
    }
}

/// Bytes as `template NUL name=value NUL ...` (value `@a,b` a list, `%k:v;k2:v2` a map,
/// `#12` an integer, else a string): `variables`, `expand` and `resolve` never panic, expansion
/// is deterministic, and a template `variables` accepts expands to text without braces.
#[allow(dead_code)]
pub fn template(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\u{0}');
    let template_text = parts.next().unwrap_or_default();
    same_origin_resolution(template_text);
    let vars: HashMap<String, Value> = parts.take(16).filter_map(variable).collect();

    // Differential: the template text as a value of `{v}` and `{+v}` against RFC 6570's encoding.
    let single = HashMap::from([("v".to_owned(), Value::String(template_text.to_owned()))]);
    let cases = [
        ("{v}", "", false),
        ("{+v}", "", true),
        ("/x{#v}", "/x#", true),
    ];
    for (expression, prefix, allow_reserved) in cases {
        let want = format!("{prefix}{}", rfc6570_encode(template_text, allow_reserved));
        // A value may not make a `.`/`..` segment of the path (docs/guarantees.md#template-values);
        // `#` is no path.
        let path = want.split(['?', '#']).next().unwrap_or_default();
        let moves_path = prefix.is_empty()
            && (matches!(template_text, "." | "..") || path.split('/').any(is_dot_segment));
        let got = template::expand(expression, &single);
        if moves_path {
            assert!(
                matches!(got, Err(rp_core::error::Error::Template(_))),
                "{expression} with v = {template_text:?} must be refused, got {got:?}"
            );
        } else {
            assert_eq!(
                got.ok().as_deref(),
                Some(want.as_str()),
                "{expression} with v = {template_text:?}"
            );
        }
    }

    let names = template::variables(template_text);
    let expanded = template::expand(template_text, &vars);
    let templated = Link {
        href: template_text.to_owned(),
        templated: true,
        ..Link::default()
    };
    assert_eq!(
        templated.variables().ok(),
        names.as_ref().ok().cloned(),
        "Link::variables differs from template::variables"
    );
    if let Ok(names) = &names {
        for (i, name) in names.iter().enumerate() {
            assert!(!name.is_empty() && template_text.contains(name.as_str()));
            assert!(!names[..i].contains(name), "duplicate variable {name:?}");
        }
        // `variables` runs the expansion with no variables: it must agree.
        assert!(template::expand(template_text, &HashMap::new()).is_ok());
        if let Ok(url) = &expanded {
            assert!(!url.contains(['{', '}']), "braces left in {url:?}");
        }
    }
    let Ok(url) = expanded else {
        return;
    };
    assert_eq!(
        template::expand(template_text, &vars).ok().as_ref(),
        Some(&url)
    );
    for base in ["https://api.example.com/v1/", "http://127.0.0.1:8080"] {
        if let Ok(base) = urls::parse_base(base) {
            let _ = urls::resolve(&base, &url);
        }
    }
}

/// References on the base's origin take a short path in `resolve` (the host is not parsed
/// again): it must give what the URL parser gives for the whole reference.
fn same_origin_resolution(text: &str) {
    for base in ["https://api.example.com/v1/", "http://127.0.0.1:8080"] {
        let Ok(base) = urls::parse_base(base) else {
            continue;
        };
        let origin = base.origin().ascii_serialization();
        for reference in [
            text.to_owned(),
            format!("{origin}{text}"),
            format!("{origin}/{text}"),
        ] {
            let full = base.join(&reference).ok().map(String::from);
            let ours = urls::resolve(&base, &reference).ok().map(String::from);
            assert_eq!(ours, full, "{base} + {reference:?}");
            let server = urls::resolve_server_href(&base, &reference).ok();
            assert_eq!(server.map(String::from), full, "{base} + {reference:?}");
        }
    }
}

/// `.` or `..`, also pct-encoded (WHATWG URL parsing reads `%2e` as `.` in a path).
fn is_dot_segment(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    let dots = lower.replace("%2e", ".");
    (dots == "." || dots == "..") && lower.len() <= 6
}

/// RFC 6570 §3.2.1: unreserved characters stay, and with `allow_reserved` reserved characters
/// and pct-encoded triplets too; everything else is pct-encoded UTF-8.
fn rfc6570_encode(value: &str, allow_reserved: bool) -> String {
    let bytes = value.as_bytes();
    let mut out = String::new();
    for (i, c) in value.char_indices() {
        let unreserved = c.is_ascii_alphanumeric() || "-._~".contains(c);
        let reserved = ":/?#[]@!$&'()*+,;=".contains(c);
        let triplet = c == '%'
            && bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
        if unreserved || (allow_reserved && (reserved || triplet)) {
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

fn variable(spec: &str) -> Option<(String, Value)> {
    let (name, raw) = spec.split_once('=')?;
    let value = if let Some(items) = raw.strip_prefix('@') {
        Value::List(
            items
                .split(',')
                .map(|s| Value::String(s.to_owned()))
                .collect(),
        )
    } else if let Some(pairs) = raw.strip_prefix('%') {
        Value::Map(
            pairs
                .split(';')
                .filter_map(|pair| pair.split_once(':'))
                .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
                .collect(),
        )
    } else if let Some(number) = raw.strip_prefix('#').and_then(|n| n.parse().ok()) {
        Value::Integer(number)
    } else {
        Value::String(raw.to_owned())
    };
    Some((name.to_owned(), value))
}
