use serde_json::{json, Value};

use super::index::SCANNED;
use super::*;
use crate::error::{Error, Result};
use crate::rels::Curie;

fn doc(v: Value) -> Document {
    parse(v.to_string().into_bytes()).unwrap()
}

/// A field's value, decoded with serde_json for comparison.
fn value(d: &Document, name: &str) -> Value {
    serde_json::from_slice(d.get(name).unwrap()).unwrap()
}

fn state_names(d: &Document) -> Vec<&str> {
    d.state().map(|(name, _)| name).collect()
}

/// The message of a protocol error, failing the test on anything else.
fn protocol_message(result: Result<Document>) -> String {
    match result {
        Err(Error::Protocol { message, .. }) => message,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

fn parse_error(body: &str) -> String {
    protocol_message(parse(body.as_bytes().to_vec()))
}

fn refusal(v: Value) -> String {
    protocol_message(parse(v.to_string().into_bytes()))
}

#[test]
fn parses_state_links_and_embedded_in_order() {
    let d = parse(
        &br#"{"b": 1, "_links": {"self": {"href": "/x"}, "next": {"href": "/x?page=2"}},
            "a": [true, null], "_embedded": {"items": [{"id": 1}, {"id": 2}]}}"#[..],
    )
    .unwrap();
    assert_eq!(
        d.names().collect::<Vec<_>>(),
        ["b", "_links", "a", "_embedded"]
    );
    assert_eq!(state_names(&d), ["b", "a"]);
    assert_eq!(value(&d, "a"), json!([true, null]));
    assert_eq!(d.get("a"), Some(&b"[true, null]"[..]), "the text as sent");
    let rels: Vec<String> = d.links().into_iter().map(|(r, _)| r).collect();
    assert_eq!(rels, ["self", "next"]);
    assert_eq!(d.self_href().as_deref(), Some("/x"));
    let items = d.embedded_by_rel("items").unwrap();
    assert!(items.is_many());
    assert_eq!(value(&items.as_slice()[1], "id"), json!(2));
    assert_eq!(items.as_slice()[1].text(), br#"{"id": 2}"#);
    assert!(d.link("missing").is_none());
    assert!(d.embedded_by_rel("missing").is_none());
}

#[test]
fn kinds_tell_scalars_from_composites_and_hal_members() {
    let d = doc(json!({"s": "x", "n": 1.5, "z": null, "o": {}, "a": [],
                       "_links": {}, "_embedded": {}}));
    let kinds: Vec<Kind> = (0..d.len()).map(|at| d.kind(at)).collect();
    use Kind::*;
    assert_eq!(
        kinds,
        [Scalar, Scalar, Scalar, Composite, Composite, Links, Embedded]
    );
    // Names that only look like HAL members are state.
    let d = doc(json!({"_links_not": {"href": 1}, "_Embedded": 1}));
    assert_eq!(state_names(&d), ["_links_not", "_Embedded"]);
    assert!(d.links().is_empty() && d.embedded().is_empty());
}

#[test]
fn a_document_without_links_or_embedded_is_all_state() {
    let d = parse(&br#"{"id": 7}"#[..]).unwrap();
    assert!(d.links().is_empty() && d.embedded().is_empty());
    assert_eq!(value(&d, "id"), json!(7));
    assert_eq!(d.self_href(), None);
    for empty in [&b"{}"[..], b" \n{}\n", "\u{feff}{}".as_bytes()] {
        let d = parse(empty).unwrap();
        assert!(d.is_empty(), "{empty:?}");
        assert_eq!(d.text(), b"{}");
    }
}

#[test]
fn repeated_names_keep_their_first_place_and_last_value() {
    let d = parse(&br#"{"a": 1, "b": 2, "a": 3}"#[..]).unwrap();
    assert_eq!(d.names().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(value(&d, "a"), json!(3));
    let d = parse(
        &br#"{"_links": {"x": {"href": "/1"}, "y": {"href": "/y"}, "x": [{"href": "/2"}]}}"#[..],
    )
    .unwrap();
    let links = d.links();
    assert_eq!(
        links[0],
        ("x".to_owned(), OneOrMany::Many(vec![Link::new("/2")]))
    );
    assert_eq!(links.len(), 2);
    let d = parse(&br#"{"_embedded": {"e": {"n": 1}, "e": [{"n": 2}]}}"#[..]).unwrap();
    assert!(d.embedded_by_rel("e").unwrap().is_many());
}

#[test]
fn many_fields_are_found_by_hash() {
    let fields: serde_json::Map<String, Value> =
        (0..100).map(|i| (format!("f{i}"), json!(i))).collect();
    let d = doc(Value::Object(fields));
    assert_eq!(d.len(), 100);
    for i in [0, 16, 17, 99] {
        assert_eq!(value(&d, &format!("f{i}")), json!(i));
    }
    assert!(d.find("f100").is_none());
}

#[test]
fn escaped_names_are_decoded() {
    let d =
        parse(&br#"{"caf\u00e9": 1, "a\"b": 2, "_links": {"r\/s": {"href": "\/x"}}}"#[..]).unwrap();
    assert_eq!(d.names().collect::<Vec<_>>(), ["café", "a\"b", "_links"]);
    assert_eq!(value(&d, "café"), json!(1));
    assert_eq!(d.link("r/s").unwrap().first().unwrap().href, "/x");
}

#[test]
fn link_arrays_stay_arrays() {
    let d = doc(json!({"_links": {
        "documents": [{"href": "/d/1"}],
        "none": [],
        "self": {"href": "/"}
    }}));
    let documents = d.link("documents").unwrap();
    assert!(documents.is_many());
    assert_eq!(documents.as_slice().len(), 1);
    assert_eq!(documents.first().unwrap().href, "/d/1");
    assert_eq!(d.link("none").unwrap(), OneOrMany::Many(vec![]));
    assert_eq!(d.link("none").unwrap().first(), None);
    assert!(!d.link("self").unwrap().is_many());
}

#[test]
fn embedded_one_or_many_recursively() {
    let d = doc(json!({
        "_embedded": {
            "creditor": {"reference": "c", "_links": {"self": {"href": "/c"}}},
            "mandates": [
                {"id": 1, "_embedded": {"signatory": {"name": "a"}}},
                {"id": 2, "_embedded": {"documents": [{"n": 1}, {"n": 2}]}}
            ]
        }
    }));
    let creditor = d.embedded_by_rel("creditor").unwrap();
    assert!(!creditor.is_many());
    assert_eq!(creditor.first().unwrap().self_href().as_deref(), Some("/c"));
    let mandates = d.embedded_by_rel("mandates").unwrap();
    let mandates = mandates.as_slice();
    assert_eq!(mandates.len(), 2);
    let signatory = mandates[0].embedded_by_rel("signatory").unwrap();
    assert!(!signatory.is_many());
    assert_eq!(value(signatory.first().unwrap(), "name"), json!("a"));
    let documents = mandates[1].embedded_by_rel("documents").unwrap();
    assert!(documents.is_many());
    assert_eq!(value(&documents.as_slice()[1], "n"), json!(2));
}

#[test]
fn links_read_href_templated_and_name() {
    let d = doc(json!({"_links": {"orders": {
        "href": "/orders{?id}",
        "templated": true,
        "type": "application/hal+json",
        "name": "orders",
        "title": "Orders",
        "x-vendor": {"any": ["json"]}
    }, "plain": {"href": "", "templated": false, "name": 3}}}));
    let link = d.link("orders").unwrap().first().cloned().unwrap();
    let expected = Link {
        href: "/orders{?id}".into(),
        templated: true,
        name: Some("orders".into()),
    };
    assert_eq!(link, expected);
    assert_eq!(link.variables().unwrap(), ["id"]);
    let plain = d.link("plain").unwrap().first().cloned().unwrap();
    assert_eq!(plain, Link::new(""), "a name that is no string is none");
}

#[test]
fn simple_links_are_read_without_decoding_the_object() {
    let read = |text: &str| simple_link(text.as_bytes());
    assert_eq!(read(r#"{"href": "/a"}"#), Some(("/a".into(), false)));
    assert_eq!(
        read(r#"{"templated": true, "href": "/a{?b}"}"#),
        Some(("/a{?b}".into(), true))
    );
    assert_eq!(
        read(r#"{"href": "/a", "templated": false}"#),
        Some(("/a".into(), false))
    );
    assert_eq!(
        read(r#"{"href": "/caf\u00e9\"s"}"#),
        Some(("/café\"s".into(), false))
    );
    // Anything else is decoded whole by the reader: more members, repeated ones, arrays.
    assert_eq!(read(r#"{"href": "/a", "title": "A"}"#), None);
    assert_eq!(read(r#"{"href": "/a", "href": "/b"}"#), None);
    assert_eq!(
        read(r#"{"templated": true, "templated": true, "href": "/a"}"#),
        None
    );
    assert_eq!(read(r#"[{"href": "/a"}]"#), None);
    assert_eq!(read(r#"{"templated": true}"#), None);
    assert_eq!(read("{}"), None);
}

#[test]
fn bare_hrefs_are_borrowed_and_anything_else_is_left_to_the_parser() {
    let read = |text: &'static str| bare_href(text.as_bytes());
    assert_eq!(read(r#"{"href":"/a"}"#), Some("/a"));
    assert_eq!(read(" { \"href\" :\t\"/é b\" \n} "), Some("/é b"));
    assert_eq!(read(r#"{"href": ""}"#), Some(""));
    for other in [
        r#"{"href": "/caf\u00e9"}"#,
        r#"{"href": "/a\"b"}"#,
        r#"{"href": "/a", "title": "A"}"#,
        r#"{"href": "/a", "href": "/b"}"#,
        r#"{"templated": false, "href": "/a"}"#,
        r#"{"h\u0072ef": "/a"}"#,
        r#"[{"href": "/a"}]"#,
        "{}",
    ] {
        assert_eq!(read(other), None, "{other}");
    }
}

/// The `self` link that the pass records is the one `link_text` finds by reading `_links`: the
/// last of repeated ones, under an escaped name too, in a page's items as in the page.
#[test]
fn the_recorded_self_link_is_the_one_links_give() {
    let bodies = [
        r#"{"_links": {"self": {"href": "/a"}}}"#,
        r#"{"_links": {"self": {"href": "/a"}, "x": {"href": "/x"}, "self": [{"href": "/b"}]}}"#,
        r#"{"_links": {"s\u0065lf": {"href": "/e"}}}"#,
        r#"{"_links": {"self": {"href": "/a"}}, "_links": {"x": {"href": "/x"}}}"#,
        r#"{"_links": {"x": {"href": "/x"}}, "_links": {"self": {"href": "/b"}}}"#,
        r#"{"_links": {"x": {"href": "/x"}}, "n": {"_links": {"self": {"href": "/n"}}}}"#,
        r#"{"_links": {"selfish": {"href": "/x"}, "Self": {"href": "/y"}}}"#,
        r#"{"n": 1}"#,
    ];
    for body in bodies {
        let top = parse(body.as_bytes().to_vec()).unwrap();
        let page = format!(r#"{{"_embedded": {{"items": [{body}, {body}], "one": {body}}}}}"#);
        let page = parse(page.into_bytes()).unwrap();
        let mut docs = vec![top];
        for (_, children) in page.embedded() {
            docs.extend(children.iter().cloned());
        }
        assert_eq!(docs.len(), 4);
        for d in &docs {
            assert_eq!(d.self_link_text(), d.link_text("self"), "{body}");
        }
    }
}

#[test]
fn variables_of_plain_and_templated_links() {
    let plain = Link::new("/orders{?id}");
    assert!(
        plain.variables().unwrap().is_empty(),
        "not templated: a literal href"
    );
    let templated = Link {
        templated: true,
        ..Link::new("/o{?a,b}{&c}")
    };
    assert_eq!(templated.variables().unwrap(), ["a", "b", "c"]);
    let malformed = Link {
        templated: true,
        ..Link::new("/o{?a")
    };
    assert!(matches!(malformed.variables(), Err(Error::Template(_))));
}

#[test]
fn a_malformed_template_does_not_spoil_the_document() {
    let d = doc(json!({"_links": {"bad": {"href": "/x{", "templated": true}}}));
    assert!(d.link("bad").unwrap().first().unwrap().variables().is_err());
}

#[test]
fn text_is_the_resource_as_sent() {
    let body = br#"{"_links": {"self": {"href": "/o/1"}}, "id": "1",
        "_embedded": {"one": {"x": 1, "_embedded": {"inner": [{"y": 2}]}}}}"#;
    let d = parse(&body[..]).unwrap();
    assert_eq!(d.text(), body);
    let one = d.embedded_by_rel("one").unwrap();
    let one = one.first().unwrap();
    assert_eq!(
        one.text(),
        br#"{"x": 1, "_embedded": {"inner": [{"y": 2}]}}"#
    );
    let inner = one.embedded_by_rel("inner").unwrap();
    assert_eq!(inner.first().unwrap().text(), br#"{"y": 2}"#);
}

#[test]
fn parse_rejects_what_is_not_a_json_object() {
    assert!(parse_error("").contains("not valid JSON"));
    assert!(parse_error("{\"a\": ").contains("not valid JSON"));
    assert!(parse_error("<html>").contains("not valid JSON"));
    assert!(parse_error("{} trailing").contains("not valid JSON"));
    assert!(parse_error("[1, 2").contains("not valid JSON"));
    assert!(parse_error("{\"a\": 1,}").contains("not valid JSON"));
    for body in ["[1]", "\"x\"", "null", "1"] {
        assert_eq!(parse_error(body), "response body is not a JSON object");
    }
    let invalid = protocol_message(parse(&b"{\"a\": \"\xc3\x28\"}"[..]));
    assert_eq!(
        invalid,
        "response body is not valid JSON: invalid UTF-8 at byte 7"
    );
    assert!(protocol_message(parse(&b"\xff\xfe"[..])).contains("not valid JSON"));
}

#[test]
fn bad_links_are_errors_naming_the_link() {
    let rel = "https://api.slimpay.net/alps#get-creditors";
    let cases = [
        (json!([]), "\"_links\" is not an object".to_owned()),
        (json!(null), "\"_links\" is not an object".to_owned()),
        (
            json!({"self": "/x"}),
            "link self is not an object".to_owned(),
        ),
        (
            json!({"self": ["/x"]}),
            "link self is not an object".to_owned(),
        ),
        (
            json!({ rel: {"templated": true} }),
            format!("link {rel} has no string \"href\""),
        ),
        (
            json!({ rel: {"href": null} }),
            format!("link {rel} has no string \"href\""),
        ),
        (
            json!({"item": [{"href": "/1"}, {"href": 2}]}),
            "link item has no string \"href\"".to_owned(),
        ),
        (
            json!({"s": {"href": "/s", "templated": "true"}}),
            "link s has a \"templated\" that is not a boolean".to_owned(),
        ),
        (
            json!({"s": {"href": "/s", "templated": 1}}),
            "link s has a \"templated\" that is not a boolean".to_owned(),
        ),
    ];
    for (links, expected) in cases {
        assert_eq!(refusal(json!({ "_links": links })), expected);
    }
    // Inside an embedded resource, and in a repeated `_links` that is not the last.
    let nested = json!({"_embedded": {"m": [{"_links": {"self": {"href": 5}}}]}});
    assert_eq!(refusal(nested), "link self has no string \"href\"");
    assert_eq!(
        parse_error(r#"{"_links": 1, "_links": {}}"#),
        "\"_links\" is not an object"
    );
}

#[test]
fn bad_embedded_are_errors_naming_the_relation() {
    let cases = [
        (json!([]), "\"_embedded\" is not an object"),
        (json!({"a": "x"}), "embedded a is not an object"),
        (json!({"a": [{}, 5]}), "embedded a is not an object"),
        (json!({"a": [[]]}), "embedded a is not an object"),
        (
            json!({"a": {"_links": {"self": {}}}}),
            "link self has no string \"href\"",
        ),
        (
            json!({"a": [{}, {"_embedded": {"b": {"_links": 1}}}]}),
            "\"_links\" is not an object",
        ),
        (
            json!({"m": {"_embedded": {"n": "x"}}}),
            "embedded n is not an object",
        ),
    ];
    for (embedded, expected) in cases {
        assert_eq!(refusal(json!({ "_embedded": embedded })), expected);
    }
}

/// Depth is the one input that could crash instead of failing: check it at the limit, past it,
/// and far past it, in each place of a document.
#[test]
fn deep_json_is_an_error_not_a_stack_overflow() {
    let too_deep = format!("response body is nested deeper than {MAX_NESTING} levels");
    let deep_array = "[".repeat(100_000);
    assert_eq!(parse_error(&format!("{{\"a\":{deep_array}")), too_deep);
    let deep_object = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    assert_eq!(parse_error(&deep_object), too_deep);
    let deep_embedded = "{\"_embedded\":{\"a\":".repeat(100_000);
    assert_eq!(parse_error(&deep_embedded), too_deep);
    // A top-level array is not an object, however deep; still no overflow.
    assert!(parse_error(&deep_array).contains("not valid JSON"));
}

/// `levels` of nesting in each place of a document (the top object is level 1).
fn deep_bodies(levels: usize) -> Vec<String> {
    let arrays = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    vec![
        format!("{{\"deep\": {}}}", arrays(levels - 1)),
        format!(
            "{{{}{}}}",
            "\"a\": {".repeat(levels - 1),
            "}".repeat(levels - 1)
        ),
        format!(
            "{{\"_links\": {{\"self\": {{\"href\": \"/\", \"x\": {}}}}}}}",
            arrays(levels - 3)
        ),
        format!(
            "{{\"_links\": {{\"self\": [{{\"href\": \"/\", \"x\": {}}}]}}}}",
            arrays(levels - 4)
        ),
        format!(
            "{{\"_embedded\": {{\"item\": [{{\"deep\": {}}}]}}}}",
            arrays(levels - 4)
        ),
        // 30 embeddings (60 levels), then a field: one limit for the whole body.
        format!(
            "{}{{\"deep\": {}}}{}",
            "{\"_embedded\": {\"in\": ".repeat(30),
            arrays(levels - 61),
            "}}".repeat(30)
        ),
    ]
}

#[test]
fn one_nesting_limit_in_every_place() {
    for (place, body) in deep_bodies(MAX_NESTING).into_iter().enumerate() {
        let d = parse(body.into_bytes());
        assert!(d.is_ok(), "place {place}: {d:?}");
    }
    for (place, body) in deep_bodies(MAX_NESTING + 1).into_iter().enumerate() {
        let message = protocol_message(parse(body.into_bytes()));
        assert!(
            message.contains("nested deeper than 128 levels"),
            "place {place}: {message}"
        );
    }
}

/// `{"_embedded": {"e": {"_embedded": {"e": ... {"id": n} ...}}}}`, `levels` embeddings.
fn embedded_chain(levels: usize) -> String {
    format!(
        "{}{{\"id\": {levels}}}{}",
        "{\"_embedded\": {\"e\": ".repeat(levels),
        "}}".repeat(levels)
    )
}

#[test]
fn embedding_is_followed_to_the_limit() {
    // Each embedding is two levels: 63 fit in 128.
    let at_limit = parse(embedded_chain(63).into_bytes()).unwrap();
    let mut d = at_limit;
    for _ in 0..63 {
        let inner = d.embedded_by_rel("e").unwrap();
        d = inner.first().unwrap().clone();
    }
    assert_eq!(value(&d, "id"), json!(63));
    let message = parse_error(&embedded_chain(64));
    assert_eq!(message, "response body is nested deeper than 128 levels");
}

#[test]
fn curies_come_from_named_curie_links() {
    let d = doc(json!({"_links": {"curies": [
        {"name": "ex", "href": "https://x/rels/{rel}", "templated": true},
        {"href": "https://nameless/{rel}", "templated": true},
        {"name": 7, "href": "https://number/{rel}", "templated": true},
        {"name": "doc", "href": "https://docs/{rel}.html", "templated": true}
    ]}}));
    let curie = |name: &str, href: &str| Curie {
        name: name.into(),
        href: href.into(),
    };
    assert_eq!(
        d.curies(),
        [
            curie("ex", "https://x/rels/{rel}"),
            curie("doc", "https://docs/{rel}.html")
        ]
    );
    let single = doc(json!({"_links": {"curies": {"name": "a", "href": "/{rel}"}}}));
    assert_eq!(single.curies(), [curie("a", "/{rel}")]);
    assert!(doc(json!({})).curies().is_empty());
}

#[test]
fn embedded_resources_inherit_curies_their_own_first() {
    let d = doc(json!({
        "_links": {"curies": [
            {"name": "ex", "href": "https://x/rels/{rel}", "templated": true},
            {"name": "up", "href": "https://up/{rel}", "templated": true}
        ]},
        "_embedded": {"item": {"_links": {
            "curies": {"name": "ex", "href": "https://mine/{rel}", "templated": true},
            "up:thing": {"href": "/t"}
        }}}
    }));
    let outer = d.curies_in_scope(&[]);
    let item = d.embedded_by_rel("item").unwrap();
    let item = item.first().unwrap();
    let scope = item.curies_in_scope(&outer);
    let names: Vec<(&str, &str)> = scope
        .iter()
        .map(|c| (c.name.as_str(), c.href.as_str()))
        .collect();
    assert_eq!(
        names,
        [("ex", "https://mine/{rel}"), ("up", "https://up/{rel}")]
    );
    let index = item.rel_index(&outer, None);
    assert_eq!(index.resolve("https://up/thing").unwrap(), "up:thing");
    assert_eq!(index.resolve("thing").unwrap(), "up:thing");
    // Without what it inherits, the item cannot expand `up:`.
    assert!(item.rel_index(&[], None).resolve("thing").is_err());
}

#[test]
fn rels_cover_links_then_embedded_once() {
    let d = doc(json!({
        "_links": {"self": {"href": "/"}, "ex:items": {"href": "/i"}},
        "_embedded": {"ex:items": [], "mandates": []}
    }));
    assert_eq!(d.rels(), ["self", "ex:items", "mandates"]);
    let index = d.rel_index(&[], None);
    assert_eq!(index.resolve("mandates").unwrap(), "mandates");
    assert_eq!(index.len(), 3);
}

#[test]
fn rel_index_uses_the_documents_curies() {
    let d = doc(json!({"_links": {
        "curies": [{"name": "ex", "href": "https://x/rels/{rel}", "templated": true}],
        "ex:thing": {"href": "/thing"}
    }}));
    let index = d.rel_index(&[], None);
    assert_eq!(index.resolve("https://x/rels/thing").unwrap(), "ex:thing");
    assert_eq!(index.resolve("thing").unwrap(), "ex:thing");
}

/// An object's text from (name as written in JSON, without quotes; value) pairs, and what
/// `json.loads` makes of it: each name once, in first-seen order, with its last value.
/// `decoded` gives the name a written name stands for (escapes resolved).
fn object_text(
    pairs: &[(&str, i64)],
    decoded: impl Fn(&str) -> String,
) -> (String, Vec<(String, i64)>) {
    let fields: Vec<String> = pairs.iter().map(|(n, v)| format!("\"{n}\": {v}")).collect();
    let mut model: Vec<(String, i64)> = Vec::new();
    for (written, v) in pairs {
        let name = decoded(written);
        match model.iter_mut().find(|(n, _)| *n == name) {
            Some(kept) => kept.1 = *v,
            None => model.push((name, *v)),
        }
    }
    (format!("{{{}}}", fields.join(", ")), model)
}

/// `d` has exactly the model's names, in order, each found with its value; `absent` are not found.
fn holds(d: &Document, model: &[(String, i64)], absent: &[&str]) {
    let names: Vec<&str> = model.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(d.names().collect::<Vec<_>>(), names);
    assert_eq!(d.len(), model.len());
    for (at, (name, v)) in model.iter().enumerate() {
        assert_eq!(d.find(name), Some(at), "{name:?}");
        assert_eq!(value(d, name), json!(v), "{name:?}");
    }
    for name in absent {
        assert_eq!(d.find(name), None, "{name:?}");
    }
}

fn unescape(written: &str) -> String {
    serde_json::from_str(&format!("\"{written}\"")).unwrap()
}

#[test]
fn repeated_names_across_the_scanned_boundary() {
    // Repeats before, at and after the object switches from scanning to its hash index.
    let distinct: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
    for width in [SCANNED - 1, SCANNED, SCANNED + 1, 40] {
        for repeated in [0, width / 2, width - 1] {
            for extra in 0..3 {
                let mut pairs: Vec<(&str, i64)> = Vec::new();
                for (i, name) in distinct[..width].iter().enumerate() {
                    pairs.push((name, i as i64));
                    if i == width - 1 - extra.min(width - 1) {
                        pairs.push((&distinct[repeated], 1000 + i as i64));
                    }
                }
                pairs.push((&distinct[repeated], -1)); // the last value wins
                let (text, model) = object_text(&pairs, str::to_owned);
                let d = parse(text.into_bytes()).unwrap();
                holds(&d, &model, &["n40", "n", "n00", ""]);
                assert_eq!(value(&d, &distinct[repeated]), json!(-1));
            }
        }
    }
}

#[test]
fn escaped_names_repeat_unescaped_ones() {
    let many: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    let cases: Vec<Vec<(&str, i64)>> = vec![
        vec![("a", 1), ("\\u0061", 2)],
        vec![("\\u0061", 1), ("a", 2)],
        vec![("\\u0061", 1), ("b", 2), ("\\u0061", 3), ("a", 4)],
        vec![("caf\\u00e9", 1), ("café", 2), ("cafe", 3)],
        vec![("a\\\"b", 1), ("a\\u0022b", 2), ("a", 3)],
    ];
    for pairs in &cases {
        let (text, model) = object_text(pairs, unescape);
        holds(
            &parse(text.into_bytes()).unwrap(),
            &model,
            &["\\u0061", "c"],
        );
    }
    // The same across the boundary: an escaped repeat of a scanned name once the hash is built.
    let mut pairs: Vec<(&str, i64)> = vec![("a", 0)];
    pairs.extend(
        many.iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as i64 + 1)),
    );
    pairs.push(("\\u0061", 99));
    pairs.push(("\\u006d0", 98)); // "m0"
    let (text, model) = object_text(&pairs, unescape);
    let d = parse(text.into_bytes()).unwrap();
    holds(&d, &model, &["b"]);
    assert_eq!(value(&d, "a"), json!(99));
    assert_eq!(value(&d, "m0"), json!(98));
    // An escaped `_links` is `_links`: checked as links, and found as such.
    let d = parse(&br#"{"\u005flinks": {"self": {"href": "/s"}}}"#[..]).unwrap();
    assert_eq!(d.kind(0), Kind::Links);
    assert_eq!(d.self_href().as_deref(), Some("/s"));
    let refused = parse(&br#"{"\u005flinks": 1}"#[..]);
    assert!(refused.is_err());
}

#[test]
fn names_that_share_a_prefix_or_a_length_stay_apart() {
    let pairs: Vec<(&str, i64)> = vec![
        ("ab", 1),
        ("ba", 2),
        ("a", 3),
        ("abc", 4),
        ("abd", 5),
        ("aab", 6),
        ("b", 7),
        ("abcdefghijklmnop", 8),
        ("abcdefghijklmnoq", 9),
        ("bbcdefghijklmnop", 10),
        ("abd", 11),
        ("ab", 12),
        ("a", 13),
    ];
    let (text, model) = object_text(&pairs, str::to_owned);
    let d = parse(text.into_bytes()).unwrap();
    holds(
        &d,
        &model,
        &[
            "",
            "aa",
            "abcd",
            "abcdefghijklmno",
            "c",
            "abcdefghijklmnopq",
        ],
    );
}

#[test]
fn empty_names_are_names() {
    for pairs in [
        vec![("", 1)],
        vec![("", 1), ("a", 2), ("", 3)],
        vec![("a", 1), ("", 2), ("b", 3), ("", 4), ("a", 5)],
    ] {
        let (text, model) = object_text(&pairs, str::to_owned);
        holds(&parse(text.into_bytes()).unwrap(), &model, &["b0", " "]);
    }
    let many: Vec<String> = (0..30).map(|i| format!("e{i}")).collect();
    let mut pairs: Vec<(&str, i64)> = vec![("", -5)];
    pairs.extend(many.iter().enumerate().map(|(i, n)| (n.as_str(), i as i64)));
    pairs.push(("", 7));
    let (text, model) = object_text(&pairs, str::to_owned);
    let d = parse(text.into_bytes()).unwrap();
    holds(&d, &model, &["e30", " "]);
    assert_eq!(value(&d, ""), json!(7));
}

#[test]
fn siblings_of_different_shapes_are_each_indexed_as_sent() {
    // The items of an array, wider, narrower and equal to their previous sibling, some with
    // repeats, links or their own embedded items.
    let widths = [0usize, 1, 8, 8, 3, 20, 20, 2, 17, 0, 16, 40, 1];
    let mut items = Vec::new();
    let mut models = Vec::new();
    for (k, width) in widths.iter().enumerate() {
        let names: Vec<String> = (0..*width)
            .map(|i| format!("k{}", (i * 7 + k) % 41))
            .collect();
        let mut pairs: Vec<(&str, i64)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), (k * 100 + i) as i64))
            .collect();
        if k % 3 == 1 && *width > 0 {
            pairs.push((&names[0], -(k as i64)));
        }
        let (text, model) = object_text(&pairs, str::to_owned);
        items.push(text);
        models.push(model);
    }
    let body = format!(
        r#"{{"_embedded": {{"items": [{}], "one": {{"x": 1, "_links": {{"self": {{"href": "/o"}}}}}}}}}}"#,
        items.join(", ")
    );
    let d = parse(body.into_bytes()).unwrap();
    let items = d.embedded_by_rel("items").unwrap();
    assert_eq!(items.as_slice().len(), widths.len());
    for (item, model) in items.iter().zip(&models) {
        holds(item, model, &["k41", "x"]);
    }
    let one = d.embedded_by_rel("one").unwrap();
    assert_eq!(one.first().unwrap().self_href().as_deref(), Some("/o"));
    // Nested collections: each level's siblings sized on their own.
    let inner = |n: usize| {
        let fields: Vec<String> = (0..n).map(|i| format!("\"i{i}\": {i}")).collect();
        format!("{{{}}}", fields.join(","))
    };
    let outer: Vec<String> = (0..6)
        .map(|k| {
            let list: Vec<String> = (0..k).map(|j| inner(j * 5)).collect();
            format!(
                r#"{{"o": {k}, "_embedded": {{"in": [{}]}}}}"#,
                list.join(",")
            )
        })
        .collect();
    let body = format!(r#"{{"_embedded": {{"out": [{}]}}}}"#, outer.join(","));
    let d = parse(body.into_bytes()).unwrap();
    for (k, item) in d.embedded_by_rel("out").unwrap().iter().enumerate() {
        assert_eq!(value(item, "o"), json!(k));
        let inner = item.embedded_by_rel("in").unwrap();
        for (j, doc) in inner.iter().enumerate() {
            assert_eq!(doc.len(), j * 5);
            for i in 0..j * 5 {
                assert_eq!(value(doc, &format!("i{i}")), json!(i));
            }
        }
    }
}

#[test]
fn bad_escapes_in_names_are_invalid_json_wherever_the_name_is() {
    // A bad escape in a name is refused as invalid JSON at every level (an indexed object, a
    // skipped one, `_links`, a link, `_embedded`, an item), with jiter's message and position.
    let cases = [
        ("{\"a\\x\": 1}", "response body is not valid JSON: invalid escape at line 1 column 5"),
        ("{\"\\ud800\": 1}", "response body is not valid JSON: unexpected end of hex escape at line 1 column 9"),
        ("{\"\\udc00x\": 1}", "response body is not valid JSON: lone leading surrogate in hex escape at line 1 column 8"),
        ("{\"\\ud800\\u0041\": 1}", "response body is not valid JSON: lone leading surrogate in hex escape at line 1 column 14"),
        ("{\"\\u12\": 1}", "response body is not valid JSON: invalid escape at line 1 column 7"),
        ("{\"ok\": 1, \"a\\q\": 2}", "response body is not valid JSON: invalid escape at line 1 column 14"),
        ("{\"x\": {\"\\ud800\": 1}}", "response body is not valid JSON: unexpected end of hex escape at line 1 column 15"),
        ("{\"x\": [{\"y\": {\"a\\x\": 1}}]}", "response body is not valid JSON: invalid escape at line 1 column 18"),
        ("{\"_links\": {\"\\ud800\": {\"href\": \"/\"}}}", "response body is not valid JSON: unexpected end of hex escape at line 1 column 20"),
        ("{\"_links\": {\"self\": {\"hr\\ef\": \"/\"}}}", "response body is not valid JSON: invalid escape at line 1 column 26"),
        ("{\"_embedded\": {\"\\udfff\": {}}}", "response body is not valid JSON: lone leading surrogate in hex escape at line 1 column 22"),
        ("{\"_embedded\": {\"e\": [{\"\\ud800\": 1}]}}", "response body is not valid JSON: unexpected end of hex escape at line 1 column 30"),
        ("{\"a\u{1}\": 1}", "response body is not valid JSON: control character (\\u0000-\\u001F) found while parsing a string at line 1 column 4"),
        ("{\"a\\", "response body is not valid JSON: EOF while parsing a string at line 1 column 4"),
    ];
    for (body, message) in cases {
        assert_eq!(parse_error(body), message, "{body:?}");
    }
}

/// Bodies of every shape the scanner reads, compact and indented: each is read by it, with the
/// index jiter makes.
fn scanned_bodies() -> Vec<String> {
    let item = |i: i64| {
        json!({
            "id": format!("m-{i}"), "amount": 12.5 + i as f64, "count": -i, "zero": 0,
            "negative_zero": -0.0, "active": i % 2 == 0, "note": null, "tags": ["a", [], {}],
            "text": "caf\u{e9} \"quoted\" back\\slash\ttab\n\u{1f600} \u{7f}",
            "_links": {"self": {"href": format!("https://x/m/{i}")},
                       "docs": [{"href": "/d{?page}", "templated": true, "name": "d"}]},
        })
    };
    let page = json!({
        "_links": {"self": {"href": "/page"}, "next": {"href": "/page?p=2", "templated": false}},
        "_embedded": {"items": (0..5).map(item).collect::<Vec<_>>(), "one": item(9),
                      "empty": []},
        "total": 5, "nested": {"a": [[1, 2], {"b": {"c": [true, false]}}]},
    });
    let mut bodies = vec![
        page.to_string(),
        serde_json::to_string_pretty(&page).unwrap(),
        "{}".into(),
        " \t\r\n{ } \n".into(),
        r#"{"a": 1, "a": 2, "b": {"a": 3}, "_links": {}, "_links": {"self": {"href": "/"}}}"#
            .into(),
        r#"{"s": "\u00e9\u0041\ud83d\ude00\/\b\f\n\r\t\"\\", "n": -12.0625}"#.into(),
    ];
    // Long strings and names, whose ends the scanner finds sixteen (or eight) bytes at a time.
    for length in 0..36 {
        let text = "x".repeat(length);
        bodies.push(format!(
            r#"{{"{text}": "{text}", "{text}yé": ["{text}\\n"]}}"#
        ));
    }
    bodies
}

#[test]
fn the_scanner_reads_usual_bodies_as_jiter_does() {
    for body in scanned_bodies() {
        assert_eq!(scanner_agrees(body.as_bytes()), Ok(true), "{body}");
    }
}

#[test]
fn the_scanner_leaves_to_jiter_what_it_may_read_otherwise() {
    let left = [
        r#"{"a\u0041": 1}"#,        // an escape in a name
        r#"{"a": "\ud800"}"#,       // a lone surrogate
        r#"{"a": "\udc00\ud800"}"#, // a surrogate pair the wrong way round
        r#"{"a": 1e5}"#,            // an exponent
        r#"{"a": 1.5E-3}"#,
        r#"[1]"#,       // not an object
        r#"{"a": 01}"#, // invalid
        r#"{"a": 1,}"#,
        r#"{"a": [1,]}"#,
        r#"{"a": "x\u00zz"}"#,
        r#"{"a": -}"#,
        r#"{"a": 1.}"#,
        r#"{"a": tru}"#,
        r#"{"a": 1} x"#,
        r#"{"_links": {"self": {"href": 1}}}"#, // HAL refusals
        r#"{"_embedded": {"e": [1]}}"#,
    ];
    for body in left {
        assert_eq!(scanner_agrees(body.as_bytes()), Ok(false), "{body}");
    }
    let long = format!(r#"{{"a": {}}}"#, "9".repeat(65));
    assert_eq!(scanner_agrees(long.as_bytes()), Ok(false));
    assert_eq!(
        parse(long.into_bytes()).unwrap().get("a").unwrap().len(),
        65
    );
    // What the scanner leaves is read whole by jiter.
    assert_eq!(
        value(&parse(&br#"{"a\u0041": 1e5}"#[..]).unwrap(), "aA"),
        json!(1e5)
    );
}

#[test]
fn every_one_byte_change_of_a_body_is_read_as_jiter_reads_it_or_left_to_jiter() {
    let bodies = [
        r#"{"a": [1, -2.5, "x\u00e9\n", true, false, null, {}], "_links": {"self": {"href": "/s"}, "l": [{"href": "/{x}", "templated": true}]}, "_embedded": {"e": [{"b": {"c": 0}}], "f": {"g": "h"}}}"#,
        "{ \"a\" : 1 ,\n \"b\" : [ ] , \"c\" : { } }",
    ];
    let bytes = b"\"\\{}[],: \t\n0123456789-.eE+tfnu\x01\x7fx/abcdef";
    let (mut read, mut left) = (0, 0);
    for body in bodies {
        let body = body.as_bytes();
        for at in 0..=body.len() {
            let mut changed: Vec<Vec<u8>> = Vec::new();
            for &b in bytes {
                let mut replaced = body.to_vec();
                if at < body.len() {
                    replaced[at] = b;
                    changed.push(replaced);
                }
                let mut inserted = body.to_vec();
                inserted.insert(at, b);
                changed.push(inserted);
            }
            if at < body.len() {
                let mut removed = body.to_vec();
                removed.remove(at);
                changed.push(removed);
                changed.push(body[..at].to_vec());
            }
            for body in changed {
                match scanner_agrees(&body) {
                    Ok(true) => read += 1,
                    Ok(false) => left += 1,
                    Err(difference) => panic!("{}: {difference}", String::from_utf8_lossy(&body)),
                }
            }
        }
    }
    // Both outcomes were exercised: the changes the scanner read, and those it left.
    assert!(read > 1000 && left > 1000, "read {read}, left {left}");
}

#[test]
fn the_string_end_searches_find_the_first_quote_backslash_or_control_character() {
    use super::scan::{special, special_by_word};
    let plain = |body: &[u8], from: usize| {
        let found = body[from..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20);
        found.map(|i| from + i)
    };
    // Around both steps (8 and 16 bytes), with bytes that are not special on either side of
    // each bound: a space, DEL, and the high bytes of UTF-8 (negative as signed bytes).
    for len in 0..40 {
        for at in 0..=len {
            for found in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for filler in [b'a', b' ', 0x7f, 0x80, 0xff] {
                    let mut body = vec![filler; len];
                    if at < len {
                        body[at] = found;
                    }
                    for from in 0..=len.min(3) {
                        let expected = plain(&body, from);
                        assert_eq!(special(&body, from), expected, "{body:?} from {from}");
                        assert_eq!(
                            special_by_word(&body, from),
                            expected,
                            "{body:?} from {from}"
                        );
                    }
                }
            }
        }
    }
}
