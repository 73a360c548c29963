use serde_json::json;

use super::*;

fn doc(v: Value) -> Document {
    Document::from_value(v).unwrap()
}

/// The message of a protocol error, failing the test on anything else.
fn protocol_message(result: Result<Document>) -> String {
    match result {
        Err(Error::Protocol { message, .. }) => message,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

fn parse_error(body: &str) -> String {
    protocol_message(parse(body.as_bytes()))
}

#[test]
fn parses_state_links_and_embedded_in_order() {
    let d = parse(
        br#"{"b": 1, "_links": {"self": {"href": "/x"}, "next": {"href": "/x?page=2"}},
            "a": [true, null], "_embedded": {"items": [{"id": 1}, {"id": 2}]}}"#,
    )
    .unwrap();
    assert_eq!(d.state.keys().collect::<Vec<_>>(), ["b", "a"]);
    assert_eq!(d.state["a"], json!([true, null]));
    let rels: Vec<&str> = d.links.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(rels, ["self", "next"]);
    assert_eq!(d.self_href(), Some("/x"));
    let items = d.embedded_by_rel("items").unwrap();
    assert!(items.is_many());
    assert_eq!(items.as_slice()[1].state["id"], json!(2));
    assert!(d.link("missing").is_none());
    assert!(d.embedded_by_rel("missing").is_none());
}

#[test]
fn a_document_without_links_or_embedded_is_all_state() {
    let d = parse(br#"{"id": 7}"#).unwrap();
    assert!(d.links.is_empty() && d.embedded.is_empty());
    assert_eq!(d.state["id"], json!(7));
    assert_eq!(d.self_href(), None);
    assert_eq!(parse(b"{}").unwrap(), Document::default());
    assert_eq!(parse(b" \n{}\n").unwrap(), Document::default());
    assert_eq!(parse("\u{feff}{}".as_bytes()).unwrap(), Document::default());
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
    assert_eq!(d.link("none").unwrap(), &OneOrMany::Many(vec![]));
    assert_eq!(d.link("none").unwrap().first(), None);
    assert!(!d.link("self").unwrap().is_many());
    assert_eq!(
        d.to_value()["_links"]["documents"],
        json!([{"href": "/d/1"}])
    );
    assert_eq!(d.to_value()["_links"]["none"], json!([]));
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
    assert_eq!(creditor.first().unwrap().self_href(), Some("/c"));
    let mandates = d.embedded_by_rel("mandates").unwrap().as_slice();
    assert_eq!(mandates.len(), 2);
    let signatory = mandates[0].embedded_by_rel("signatory").unwrap();
    assert_eq!(signatory, &OneOrMany::One(doc(json!({"name": "a"}))));
    let documents = mandates[1].embedded_by_rel("documents").unwrap();
    assert!(documents.is_many());
    assert_eq!(documents.as_slice()[1].state["n"], json!(2));
}

#[test]
fn every_link_property() {
    let link = Link::from_json(&json!({
        "href": "/orders{?id}",
        "templated": true,
        "type": "application/hal+json",
        "deprecation": "https://docs/deprecated",
        "name": "orders",
        "profile": "https://profiles/order",
        "title": "Orders",
        "hreflang": "fr",
        "x-vendor": {"any": ["json"]}
    }))
    .unwrap();
    assert_eq!(
        link,
        Link {
            href: "/orders{?id}".into(),
            templated: true,
            media_type: Some("application/hal+json".into()),
            deprecation: Some("https://docs/deprecated".into()),
            name: Some("orders".into()),
            profile: Some("https://profiles/order".into()),
            title: Some("Orders".into()),
            hreflang: Some("fr".into()),
            extra: json!({"x-vendor": {"any": ["json"]}})
                .as_object()
                .unwrap()
                .clone(),
        }
    );
    assert_eq!(link.variables().unwrap(), ["id"]);
    let minimal = Link::from_json(&json!({"href": ""})).unwrap();
    assert_eq!(minimal, Link::new(""));
    assert!(!minimal.templated);
    assert_eq!(minimal.to_json(), json!({"href": ""}));
}

#[test]
fn link_to_json_round_trips_and_named_fields_win() {
    let v = json!({"href": "/a{?b}", "templated": true, "title": "A", "name": "n",
                   "type": "t", "deprecation": "d", "profile": "p", "hreflang": "en",
                   "extension": 1});
    assert_eq!(Link::from_json(&v).unwrap().to_json(), v);
    let mut link = Link::new("/real");
    link.extra.insert("href".into(), json!("/fake"));
    link.extra.insert("templated".into(), json!("yes"));
    link.extra.insert("title".into(), json!(3));
    assert_eq!(link.to_json(), json!({"href": "/real"}));
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
fn to_value_round_trips() {
    let v = json!({
        "_links": {
            "self": {"href": "/o/1"},
            "curies": [{"href": "https://x/rels/{rel}", "templated": true, "name": "ex"}],
            "ex:items": [{"href": "/o/1/items", "title": "Items"}, {"href": "/o/1/more"}],
            "search": {"href": "/o{?q}", "templated": true, "vendor": [1, {"a": null}]}
        },
        "id": "1",
        "nested": {"deep": [1, 2, {"_links": "state, not a link"}]},
        "_embedded": {
            "one": {"_links": {"self": {"href": "/one"}}, "x": 1,
                    "_embedded": {"inner": [{"y": 2}]}},
            "many": [{"z": 3}, {"_links": {"self": [{"href": "/m"}]}}],
            "empty": []
        }
    });
    let d = doc(v.clone());
    assert_eq!(d.to_value(), v);
    // Key order is kept too, where `v` uses the order `to_value` writes: `_links`, the state,
    // `_embedded`; in a link `href`, `templated`, the string members, the others.
    assert_eq!(d.to_value().to_string(), v.to_string());
    assert_eq!(doc(d.to_value()), d);
    // Other orders compare equal (JSON objects are unordered).
    let reordered = json!({"_embedded": {"e": {"a": 1}}, "id": 1,
                           "_links": {"s": {"title": "t", "href": "/s"}}});
    assert_eq!(doc(reordered.clone()).to_value(), reordered);
}

#[test]
fn only_empty_members_are_dropped_by_to_value() {
    let d = doc(json!({"_links": {}, "_embedded": {}, "a": 1,
                       "_links_not": {"href": 1}}));
    assert_eq!(d.to_value(), json!({"a": 1, "_links_not": {"href": 1}}));
    let d = doc(json!({"_links": {"x": {"href": "/x", "templated": false}}}));
    assert_eq!(d.to_value(), json!({"_links": {"x": {"href": "/x"}}}));
}

#[test]
fn parse_rejects_what_is_not_a_json_object() {
    assert!(parse_error("").contains("not valid JSON"));
    assert!(parse_error("{\"a\": ").contains("not valid JSON"));
    assert!(parse_error("<html>").contains("not valid JSON"));
    assert!(parse_error("{} trailing").contains("not valid JSON"));
    assert_eq!(
        parse_error("[1]"),
        "response body is an array, not a JSON object"
    );
    assert_eq!(
        parse_error("\"x\""),
        "response body is a string, not a JSON object"
    );
    assert_eq!(
        parse_error("null"),
        "response body is null, not a JSON object"
    );
    assert!(protocol_message(parse(b"\xff\xfe")).contains("not valid JSON"));
}

#[test]
fn from_value_rejects_what_is_not_an_object() {
    assert_eq!(
        protocol_message(Document::from_value(json!([]))),
        "HAL document is an array, not an object"
    );
    assert_eq!(
        protocol_message(Document::from_value(json!(1))),
        "HAL document is a number, not an object"
    );
}

#[test]
fn bad_links_are_errors_naming_the_link() {
    let rel = "https://api.slimpay.net/alps#get-creditors";
    let cases = [
        (
            json!([]),
            "\"_links\" is an array, not an object".to_owned(),
        ),
        (json!(null), "\"_links\" is null, not an object".to_owned()),
        (
            json!({"self": "/x"}),
            "link \"self\" is a string, not an object or an array of objects".to_owned(),
        ),
        (
            json!({"self": ["/x"]}),
            "link \"self\"[0] is a string, not an object".to_owned(),
        ),
        (
            json!({ rel: {"templated": true} }),
            format!("link \"{rel}\" has no string \"href\""),
        ),
        (
            json!({ rel: {"href": null} }),
            format!("link \"{rel}\" has no string \"href\" (it is null)"),
        ),
        (
            json!({"item": [{"href": "/1"}, {"href": 2}]}),
            "link \"item\"[1] has no string \"href\" (it is a number)".to_owned(),
        ),
        (
            json!({"s": {"href": "/s", "templated": "true"}}),
            "link \"s\" has a \"templated\" that is a string, not a bool".to_owned(),
        ),
        (
            json!({"s": {"href": "/s", "templated": 1}}),
            "link \"s\" has a \"templated\" that is a number, not a bool".to_owned(),
        ),
    ];
    for (links, expected) in cases {
        let result = Document::from_value(json!({ "_links": links }));
        assert_eq!(protocol_message(result), expected);
    }
    for member in [
        "type",
        "deprecation",
        "name",
        "profile",
        "title",
        "hreflang",
    ] {
        let result = Document::from_value(json!({"_links": {"s": {"href": "/", member: 1}}}));
        assert_eq!(
            protocol_message(result),
            format!("link \"s\" has a \"{member}\" that is a number, not a string")
        );
        let result = Document::from_value(json!({"_links": {"s": {"href": "/", member: null}}}));
        assert!(protocol_message(result).contains("that is null, not a string"));
    }
}

#[test]
fn link_from_json_errors() {
    let message = |v: Value| match Link::from_json(&v) {
        Err(Error::Protocol { message, .. }) => message,
        other => panic!("expected a protocol error, got {other:?}"),
    };
    assert_eq!(message(json!("/x")), "link is a string, not an object");
    assert_eq!(message(json!({})), "link has no string \"href\"");
    assert_eq!(
        message(json!({"href": "/", "templated": null})),
        "link has a \"templated\" that is null, not a bool"
    );
}

#[test]
fn bad_embedded_are_errors_naming_the_path() {
    let cases = [
        (json!([]), "\"_embedded\" is an array, not an object"),
        (
            json!({"a": "x"}),
            "_embedded \"a\" is a string, not an object or an array of objects",
        ),
        (
            json!({"a": [{}, 5]}),
            "_embedded \"a\"[1] is a number, not an object",
        ),
        (
            json!({"a": [[]]}),
            "_embedded \"a\"[0] is an array, not an object",
        ),
        (
            json!({"a": {"_links": {"self": {}}}}),
            "in _embedded \"a\": link \"self\" has no string \"href\"",
        ),
        (
            json!({"a": [{}, {"_embedded": {"b": {"_links": 1}}}]}),
            "in _embedded \"a\"[1] > \"b\": \"_links\" is a number, not an object",
        ),
    ];
    for (embedded, expected) in cases {
        let result = Document::from_value(json!({ "_embedded": embedded }));
        assert_eq!(protocol_message(result), expected);
    }
}

#[test]
fn long_names_are_cut_in_messages() {
    let rel = "r".repeat(10_000);
    let message = protocol_message(Document::from_value(json!({"_links": { rel: {} }})));
    assert!(message.len() < 200, "{message}");
    assert!(message.contains("r…\" has no string \"href\""), "{message}");
}

/// Depth is the one input that could crash instead of failing: check it at the limit, past it,
/// and far past it, through the parser and through `from_value`.
#[test]
fn deep_json_is_an_error_not_a_stack_overflow() {
    let deep_array = "[".repeat(100_000);
    assert!(parse_error(&deep_array).contains("nested too deeply"));
    let deep_object = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    assert!(parse_error(&deep_object).contains("nested too deeply"));
    let deep_embedded = "{\"_embedded\":{\"a\":".repeat(100_000);
    assert!(parse_error(&deep_embedded).contains("nested too deeply"));
    // Under the limit is fine.
    let ok = format!("{{\"a\":{}{}}}", "[".repeat(120), "]".repeat(120));
    assert!(parse(ok.as_bytes()).is_ok());
}

/// `{"_embedded": {"e": {"_embedded": {"e": ... {"id": n} ...}}}}` built without recursion.
fn embedded_chain(levels: usize) -> Value {
    let mut v = json!({"id": levels});
    for _ in 0..levels {
        let mut inner = Map::new();
        inner.insert("e".to_owned(), v);
        let mut outer = Map::new();
        outer.insert("_embedded".to_owned(), Value::Object(inner));
        v = Value::Object(outer);
    }
    v
}

#[test]
fn from_value_limits_embedding_depth() {
    let at_limit = Document::from_value(embedded_chain(MAX_EMBEDDING_DEPTH)).unwrap();
    let mut d = &at_limit;
    for _ in 0..MAX_EMBEDDING_DEPTH {
        d = d.embedded_by_rel("e").unwrap().first().unwrap();
    }
    assert_eq!(d.state["id"], json!(MAX_EMBEDDING_DEPTH));

    let message = protocol_message(Document::from_value(embedded_chain(
        MAX_EMBEDDING_DEPTH + 1,
    )));
    assert!(
        message.ends_with("resources are nested deeper than 128 levels"),
        "{message}"
    );
    // The path is shortened, not 129 segments long.
    assert!(
        message.starts_with("in _embedded \"e\" > \"e\" > \"e\" > … > \"e\""),
        "{message}"
    );
    assert!(message.len() < 200, "{message}");

    // Built by hand far deeper than any parser allows: an error, and no overflow on the way
    // down nor while the rest of the value is dropped.
    let message = protocol_message(Document::from_value(embedded_chain(100_000)));
    assert!(message.contains("nested deeper than"), "{message}");
}

#[test]
fn curies_come_from_named_curie_links() {
    let d = doc(json!({"_links": {"curies": [
        {"name": "ex", "href": "https://x/rels/{rel}", "templated": true},
        {"href": "https://nameless/{rel}", "templated": true},
        {"name": "static", "href": "https://no-placeholder/"},
        {"name": "doc", "href": "https://docs/{rel}.html", "templated": true}
    ]}}));
    assert_eq!(
        d.curies(),
        [
            Curie {
                name: "ex".into(),
                href: "https://x/rels/{rel}".into()
            },
            Curie {
                name: "doc".into(),
                href: "https://docs/{rel}.html".into()
            },
        ]
    );
    let single = doc(json!({"_links": {"curies": {"name": "a", "href": "/{rel}"}}}));
    assert_eq!(single.curies().len(), 1);
    assert!(doc(json!({})).curies().is_empty());
}

#[test]
fn rels_cover_links_then_embedded_once() {
    let d = doc(json!({
        "_links": {"self": {"href": "/"}, "ex:items": {"href": "/i"}},
        "_embedded": {"ex:items": [], "mandates": []}
    }));
    assert_eq!(d.rels(), ["self", "ex:items", "mandates"]);
    let index = d.rel_index(None);
    assert_eq!(index.resolve("mandates").unwrap(), "mandates");
    assert_eq!(index.len(), 3);
}

#[test]
fn rel_index_uses_the_documents_curies() {
    let d = doc(json!({"_links": {
        "curies": [{"name": "ex", "href": "https://x/rels/{rel}", "templated": true}],
        "ex:thing": {"href": "/thing"}
    }}));
    let index = d.rel_index(None);
    assert_eq!(index.resolve("https://x/rels/thing").unwrap(), "ex:thing");
    assert_eq!(index.resolve("thing").unwrap(), "ex:thing");
}
