use super::*;

const NS: &str = "https://api.example.com/alps#";

fn index(rels: &[&str], namespace: Option<&str>) -> RelIndex {
    RelIndex::new(rels.iter().copied(), &[], namespace)
}

fn curie(name: &str, href: &str) -> Curie {
    Curie {
        name: name.into(),
        href: href.into(),
    }
}

/// The message of a `LinkNotFound`, checking that it carries the name looked up.
fn not_found(index: &RelIndex, name: &str) -> String {
    match index.resolve(name) {
        Err(Error::LinkNotFound { name: n, message }) => {
            assert_eq!(n, name);
            message
        }
        other => panic!("expected LinkNotFound for {name:?}, got {other:?}"),
    }
}

#[test]
fn namespaced_rel_by_full_short_and_attribute_name() {
    let rel = "https://api.example.com/alps#get-creditors";
    for namespace in [Some(NS), None] {
        let idx = index(&["self", rel], namespace);
        for name in [rel, "get-creditors", "get_creditors"] {
            assert_eq!(
                idx.lookup(name),
                Lookup::Found(rel),
                "{name} with {namespace:?}"
            );
            assert_eq!(idx.resolve(name).unwrap(), rel);
            assert_eq!(idx.find(name).unwrap(), Some(rel));
        }
        assert_eq!(idx.lookup("creditors"), Lookup::Missing);
        assert_eq!(idx.find("creditors").unwrap(), None);
        assert_eq!(idx.lookup("get-creditors "), Lookup::Missing);
        assert_eq!(idx.lookup("Get-Creditors"), Lookup::Missing);
    }
}

#[test]
fn a_configured_namespace_only_shortens_its_own_rels() {
    let ours = "https://api.example.com/alps#get-orders";
    let theirs = "https://other.example/rels#get-apps";
    let idx = index(&[ours, theirs], Some(NS));
    assert_eq!(idx.lookup("get-orders"), Lookup::Found(ours));
    assert_eq!(idx.lookup("get-apps"), Lookup::Missing);
    assert_eq!(idx.lookup(theirs), Lookup::Found(theirs));
    // Without a namespace any `<uri>#<name>` is shortened.
    let idx = index(&[ours, theirs], None);
    assert_eq!(idx.lookup("get-apps"), Lookup::Found(theirs));
    assert_eq!(idx.lookup("get_apps"), Lookup::Found(theirs));
}

#[test]
fn a_namespace_need_not_end_with_a_hash() {
    let rel = "https://x.example/rels/thing-one";
    let idx = index(&[rel], Some("https://x.example/rels/"));
    assert_eq!(idx.lookup("thing-one"), Lookup::Found(rel));
    assert_eq!(idx.lookup("thing_one"), Lookup::Found(rel));
    // Inference only knows `#`.
    assert_eq!(index(&[rel], None).lookup("thing-one"), Lookup::Missing);
    // An empty namespace is no namespace.
    let idx = index(&["https://a/b#c"], Some(""));
    assert_eq!(idx.lookup("c"), Lookup::Found("https://a/b#c"));
}

#[test]
fn inference_needs_a_uri_with_a_scheme_and_a_name() {
    let rels = [
        "no-scheme#name",
        "1http://x#digit",
        "https://x#",
        "urn:x:y#frag",
        "a+b.c-d:x#e",
    ];
    let idx = index(&rels, None);
    assert_eq!(idx.lookup("name"), Lookup::Missing);
    assert_eq!(idx.lookup("digit"), Lookup::Missing);
    assert_eq!(idx.lookup(""), Lookup::Missing);
    assert_eq!(idx.lookup("frag"), Lookup::Found("urn:x:y#frag"));
    assert_eq!(idx.lookup("e"), Lookup::Found("a+b.c-d:x#e"));
    for rel in rels {
        assert_eq!(idx.lookup(rel), Lookup::Found(rel));
    }
}

#[test]
fn iana_rels_as_they_are_and_in_attribute_form() {
    let rels = [
        "self",
        "next",
        "prev",
        "first",
        "last",
        "profile",
        "edit-form",
        "curies",
    ];
    let idx = index(&rels, Some(NS));
    for rel in rels {
        assert_eq!(idx.lookup(rel), Lookup::Found(rel));
        assert_eq!(idx.short_name(rel).as_deref(), Some(rel));
    }
    assert_eq!(idx.lookup("edit_form"), Lookup::Found("edit-form"));
    assert_eq!(
        idx.attribute_names(),
        [
            "curies",
            "edit_form",
            "first",
            "last",
            "next",
            "prev",
            "profile",
            "self"
        ]
    );
}

#[test]
fn curies_work_in_both_directions() {
    let curies = [curie("ex", "https://x.example/rels/{rel}")];
    let idx = RelIndex::new(
        ["ex:thing-a", "https://x.example/rels/thing-b"],
        &curies,
        None,
    );
    // Written as a CURIE: reachable by the expansion.
    assert_eq!(idx.lookup("ex:thing-a"), Lookup::Found("ex:thing-a"));
    assert_eq!(
        idx.lookup("https://x.example/rels/thing-a"),
        Lookup::Found("ex:thing-a")
    );
    // Written expanded: reachable by the CURIE.
    let b = "https://x.example/rels/thing-b";
    assert_eq!(idx.lookup(b), Lookup::Found(b));
    assert_eq!(idx.lookup("ex:thing-b"), Lookup::Found(b));
    // Both by the reference and its attribute form.
    assert_eq!(idx.lookup("thing-a"), Lookup::Found("ex:thing-a"));
    assert_eq!(idx.lookup("thing_a"), Lookup::Found("ex:thing-a"));
    assert_eq!(idx.lookup("thing-b"), Lookup::Found(b));
    assert_eq!(idx.lookup("thing_b"), Lookup::Found(b));
    assert_eq!(idx.attribute_names(), ["thing_a", "thing_b"]);
    assert_eq!(idx.short_name("ex:thing-a").as_deref(), Some("thing-a"));
    assert_eq!(idx.short_name(b).as_deref(), Some("thing-b"));
    // Other prefixes are not expanded.
    assert_eq!(idx.lookup("other:thing-a"), Lookup::Missing);
    assert_eq!(idx.lookup("ex:thing-c"), Lookup::Missing);
}

#[test]
fn curies_with_text_after_the_placeholder() {
    let curies = [curie("doc", "https://docs.example/{rel}.html")];
    let idx = RelIndex::new(
        ["https://docs.example/orders.html", "doc:items"],
        &curies,
        None,
    );
    assert_eq!(
        idx.lookup("doc:orders"),
        Lookup::Found("https://docs.example/orders.html")
    );
    assert_eq!(
        idx.lookup("orders"),
        Lookup::Found("https://docs.example/orders.html")
    );
    assert_eq!(
        idx.lookup("https://docs.example/items.html"),
        Lookup::Found("doc:items")
    );
    // Only the part between prefix and suffix is a reference: `.html` alone is not one.
    let idx = RelIndex::new(["https://docs.example/.html"], &curies, None);
    assert_eq!(idx.lookup("doc:"), Lookup::Missing);
}

#[test]
fn curies_without_exactly_one_placeholder_are_ignored() {
    let curies = [
        curie("a", "https://a/"),
        curie("b", "https://b/{rel}/{rel}"),
    ];
    let idx = RelIndex::new(["a:x", "b:y"], &curies, None);
    assert_eq!(idx.lookup("x"), Lookup::Missing);
    assert_eq!(idx.lookup("y"), Lookup::Missing);
    assert_eq!(idx.lookup("a:x"), Lookup::Found("a:x"));
}

#[test]
fn curie_and_namespace_names_of_one_rel_do_not_collide() {
    let rel = "https://api.example.com/alps#get-creditors";
    let curies = [curie("sp", "https://api.example.com/alps#{rel}")];
    for namespace in [Some(NS), None] {
        let idx = RelIndex::new([rel], &curies, namespace);
        for name in [rel, "sp:get-creditors", "get-creditors", "get_creditors"] {
            assert_eq!(idx.lookup(name), Lookup::Found(rel), "{name}");
        }
        assert_eq!(idx.short_name(rel).as_deref(), Some("get-creditors"));
    }
}

#[test]
fn two_rels_with_one_short_name_make_it_ambiguous() {
    let a = "https://a.example/rels#get-items";
    let b = "https://b.example/rels#get-items";
    let idx = index(&["self", a, b], None);
    assert_eq!(idx.lookup("get-items"), Lookup::Ambiguous(vec![a, b]));
    assert_eq!(idx.lookup("get_items"), Lookup::Ambiguous(vec![a, b]));
    assert_eq!(idx.lookup(a), Lookup::Found(a));
    assert_eq!(idx.lookup(b), Lookup::Found(b));
    let message = not_found(&idx, "get_items");
    assert_eq!(
        message,
        format!(
            "relation name 'get_items' is ambiguous: it names both '{a}' and '{b}'; \
             use the full relation name"
        )
    );
    assert!(matches!(
        idx.find("get-items"),
        Err(Error::LinkNotFound { .. })
    ));
    // Not offered for completion; shown by full rel.
    assert_eq!(idx.attribute_names(), ["self"]);
    assert_eq!(idx.short_name(a).as_deref(), Some(a));
}

#[test]
fn an_attribute_of_two_rels_is_ambiguous() {
    // docs/concepts.md#relations-and-their-names: two rels that map to one short name make it
    // ambiguous; for an attribute, `get-foo` and `get_foo` are the same short name.
    for namespace in [Some(NS), None] {
        let hyphenated = "https://api.example.com/alps#get-foo";
        let underscored = "https://api.example.com/alps#get_foo";
        for rels in [[hyphenated, underscored], [underscored, hyphenated]] {
            let idx = index(&rels, namespace);
            let both = Lookup::Ambiguous(rels.to_vec());
            assert_eq!(idx.lookup_attribute("get_foo"), both);
            match idx.resolve_attribute("get_foo") {
                Err(Error::LinkNotFound { name, message }) => {
                    assert_eq!(name, "get_foo");
                    assert!(message.contains("ambiguous"), "{message}");
                    assert!(message.contains(&format!("'{hyphenated}'")), "{message}");
                    assert!(message.contains(&format!("'{underscored}'")), "{message}");
                }
                other => panic!("expected ambiguity, got {other:?}"),
            }
            assert!(idx.find_attribute("get_foo").is_err());
            // The exact short names and the full rels still name one rel each.
            assert_eq!(idx.lookup("get-foo"), Lookup::Found(hyphenated));
            assert_eq!(idx.lookup("get_foo"), Lookup::Found(underscored));
            assert_eq!(idx.lookup_attribute(hyphenated), Lookup::Found(hyphenated));
            assert!(idx.attribute_names().is_empty());
            let message = not_found(&idx, "zzz");
            assert!(message.contains("available: get-foo, get_foo"), "{message}");
        }
    }
    // Through a CURIE and a namespace alike.
    let curies = [curie("ex", "https://x.example/rels/{rel}")];
    let idx = RelIndex::new(["ex:get-foo", "https://h/#get_foo"], &curies, None);
    assert_eq!(
        idx.lookup_attribute("get_foo"),
        Lookup::Ambiguous(vec!["ex:get-foo", "https://h/#get_foo"])
    );
}

#[test]
fn attributes_name_what_names_name() {
    let rels = [
        "self",
        "edit-form",
        "https://api.example.com/alps#get-creditors",
        "ex:thing",
    ];
    let curies = [curie("ex", "https://x.example/rels/{rel}")];
    let idx = RelIndex::new(rels, &curies, Some(NS));
    for (attribute, rel) in [
        ("self", "self"),
        ("edit_form", "edit-form"),
        ("get_creditors", rels[2]),
        ("thing", "ex:thing"),
        // Not identifiers: looked up as names.
        ("edit-form", "edit-form"),
        ("ex:thing", "ex:thing"),
        ("https://x.example/rels/thing", "ex:thing"),
    ] {
        assert_eq!(
            idx.lookup_attribute(attribute),
            Lookup::Found(rel),
            "{attribute}"
        );
        assert_eq!(idx.resolve_attribute(attribute).unwrap(), rel);
    }
    assert_eq!(idx.lookup_attribute("get_creditorz"), Lookup::Missing);
    assert_eq!(idx.find_attribute("get_creditorz").unwrap(), None);
    let message = match idx.resolve_attribute("get_creditorz") {
        Err(Error::LinkNotFound { message, .. }) => message,
        other => panic!("{other:?}"),
    };
    assert!(
        message.contains("did you mean 'get_creditors'?"),
        "{message}"
    );
    assert_eq!(
        idx.attribute_names(),
        ["edit_form", "get_creditors", "self", "thing"]
    );
}

#[test]
fn ambiguity_between_three_rels_names_them_all() {
    let rels = ["https://a/#x", "https://b/#x", "https://c/#x"];
    let idx = index(&rels, None);
    assert_eq!(idx.lookup("x"), Lookup::Ambiguous(rels.to_vec()));
    let message = not_found(&idx, "x");
    assert!(
        message.contains("it names 'https://a/#x', 'https://b/#x' and 'https://c/#x';"),
        "{message}"
    );
}

#[test]
fn ambiguity_through_curies_is_kept_apart_from_full_rels() {
    // Two CURIE prefixes for one vocabulary: the expanded URI names two rels.
    let curies = [curie("a", "https://v/{rel}"), curie("b", "https://v/{rel}")];
    let idx = RelIndex::new(["a:x", "b:x"], &curies, None);
    assert_eq!(
        idx.lookup("https://v/x"),
        Lookup::Ambiguous(vec!["a:x", "b:x"])
    );
    assert_eq!(idx.lookup("a:x"), Lookup::Found("a:x"));
    assert_eq!(idx.lookup("x"), Lookup::Ambiguous(vec!["a:x", "b:x"]));
    // If the expanded URI is itself a rel, it wins over the CURIE equivalents.
    let idx = RelIndex::new(["a:x", "https://v/x"], &curies, None);
    assert_eq!(idx.lookup("https://v/x"), Lookup::Found("https://v/x"));
    assert_eq!(idx.lookup("a:x"), Lookup::Found("a:x"));
    assert_eq!(idx.lookup("b:x"), Lookup::Found("https://v/x"));
}

#[test]
fn full_rels_take_precedence_over_short_and_attribute_names() {
    let namespaced = "https://api.example.com/alps#get-creditors";
    let plain = "get-creditors";
    let idx = index(&[namespaced, plain], Some(NS));
    assert_eq!(idx.lookup("get-creditors"), Lookup::Found(plain));
    assert_eq!(idx.lookup(namespaced), Lookup::Found(namespaced));
    // The attribute form of a full rel outranks that of a short name, consistently.
    assert_eq!(idx.lookup("get_creditors"), Lookup::Found(plain));
    assert_eq!(idx.short_name(namespaced).as_deref(), Some(namespaced));

    // As a name, a short name written with `_` outranks another rel's attribute form...
    let underscored = "https://api.example.com/alps#get_x";
    let hyphenated = "https://api.example.com/alps#get-x";
    let idx = index(&[hyphenated, underscored], Some(NS));
    assert_eq!(idx.lookup("get_x"), Lookup::Found(underscored));
    assert_eq!(idx.lookup("get-x"), Lookup::Found(hyphenated));
    // ...but the attribute `get_x` stands for both (see `an_attribute_of_two_rels_is_ambiguous`).
    assert!(idx.attribute_names().is_empty());
    // The attribute form of a full rel outranks short names as an attribute too.
    let idx = index(&[namespaced, plain], Some(NS));
    assert_eq!(idx.lookup_attribute("get_creditors"), Lookup::Found(plain));

    // A full rel that looks like a short name wins over the short name (order does not matter).
    for rels in [["x", "https://h/#x"], ["https://h/#x", "x"]] {
        let idx = index(&rels, None);
        assert_eq!(idx.lookup("x"), Lookup::Found("x"));
        assert_eq!(
            idx.short_name("https://h/#x").as_deref(),
            Some("https://h/#x")
        );
    }
}

#[test]
fn duplicates_are_one_rel() {
    let idx = index(&["self", "self", "https://h/#a", "https://h/#a"], None);
    assert_eq!(idx.len(), 2);
    assert_eq!(idx.lookup("a"), Lookup::Found("https://h/#a"));
    assert_eq!(idx.rels().collect::<Vec<_>>(), ["self", "https://h/#a"]);
}

#[test]
fn empty_index() {
    let idx = RelIndex::new([], &[], None);
    assert!(idx.is_empty());
    assert_eq!(idx.lookup("self"), Lookup::Missing);
    assert_eq!(
        not_found(&idx, "self"),
        "no relation 'self' in this resource (it has no relations)"
    );
    assert!(idx.attribute_names().is_empty());
    assert_eq!(idx.short_name("self"), None);
}

#[test]
fn short_name_of_unknown_rel_is_none() {
    let idx = index(&["https://h/#a"], None);
    assert_eq!(idx.short_name("a"), None, "a name, not a full rel");
    assert_eq!(idx.short_name("https://h/#b"), None);
}

#[test]
fn did_you_mean_and_available_names() {
    let rels = [
        "self",
        "https://api.example.com/alps#get-creditors",
        "https://api.example.com/alps#get-orders",
        "https://api.example.com/alps#create-orders",
    ];
    let idx = index(&rels, Some(NS));
    assert_eq!(
        not_found(&idx, "get_creditorz"),
        "no relation 'get_creditorz' in this resource; did you mean 'get_creditors'? \
         available: create_orders, get_creditors, get_orders, self"
    );
    // Written with hyphens: answered with hyphens.
    assert_eq!(
        not_found(&idx, "get-order"),
        "no relation 'get-order' in this resource; did you mean 'get-orders'? \
         available: create-orders, get-creditors, get-orders, self"
    );
    // Transpositions count as one edit.
    assert!(not_found(&idx, "slef").contains("did you mean 'self'?"));
    // Nothing close: no guess, just the list.
    assert_eq!(
        not_found(&idx, "mandates"),
        "no relation 'mandates' in this resource; \
         available: create_orders, get_creditors, get_orders, self"
    );
    // Several close names, each once, closest first.
    let message = not_found(&idx, "get_ordrs");
    assert!(message.contains("did you mean 'get_orders'?"), "{message}");
    let message = not_found(&idx, "cet_orders");
    assert!(
        message.contains("did you mean 'get_orders' or 'create_orders'?"),
        "{message}"
    );
}

#[test]
fn find_unless_misspelt_refuses_only_a_near_miss() {
    let idx = index(&["self", "mandates", "orders"], Some(NS));
    assert_eq!(
        idx.find_unless_misspelt("mandates").unwrap(),
        Some("mandates")
    );
    assert_eq!(idx.find_unless_misspelt("payments").unwrap(), None);
    let err = idx.find_unless_misspelt("mandate").unwrap_err();
    assert_eq!(
        err.to_string(),
        idx.resolve("mandate").unwrap_err().to_string(),
        "the error of res.embedded[rel]"
    );
    assert!(err.to_string().contains("did you mean 'mandates'?"));
    assert_eq!(
        index(&[], None).find_unless_misspelt("mandates").unwrap(),
        None
    );
}

#[test]
fn did_you_mean_a_full_rel() {
    let rel = "https://api.example.com/alps#get-creditors";
    let idx = index(&["self", rel], Some(NS));
    let message = not_found(&idx, "https://api.example.com/alps#get-creditor");
    assert!(
        message.contains(&format!("did you mean '{rel}'?")),
        "{message}"
    );
    assert!(
        message.ends_with("available: get-creditors, self"),
        "{message}"
    );
}

#[test]
fn long_lists_of_available_names_are_cut() {
    let rels: Vec<String> = (0..50).map(|i| format!("https://h/#rel-{i:02}")).collect();
    let idx = RelIndex::new(rels.iter().map(String::as_str), &[], None);
    let message = not_found(&idx, "zzz");
    assert!(message.ends_with("rel_18, rel_19 and 30 more"), "{message}");
    assert!(message.contains("available: rel_00, rel_01,"), "{message}");
}

#[test]
fn ambiguous_names_are_listed_by_an_unambiguous_name() {
    let a = "https://a/#x";
    let b = "https://b/#x";
    let idx = index(&[a, b, "self"], None);
    let message = not_found(&idx, "y");
    assert!(
        message.ends_with(&format!("available: {a}, {b}, self")),
        "{message}"
    );
}

#[test]
fn names_are_quoted_safely_in_messages() {
    let idx = index(&["self"], None);
    let message = not_found(&idx, "a'b\nc");
    assert!(
        message.starts_with("no relation 'a\\'b\\nc' in"),
        "{message}"
    );
    let long = "x".repeat(5000);
    assert!(not_found(&idx, &long).len() < 300);
}

#[test]
fn attribute_names_skip_what_python_cannot_spell() {
    let rels = [
        "https://h/#9lives",
        "https://h/#with.dot",
        "https://h/#ok-name",
        "https://h/#ünïcode-ok",
        "edit-form",
    ];
    let idx = index(&rels, None);
    assert_eq!(
        idx.attribute_names(),
        ["edit_form", "ok_name", "ünïcode_ok"]
    );
    // Still reachable by name.
    assert_eq!(idx.lookup("9lives"), Lookup::Found("https://h/#9lives"));
    assert_eq!(idx.lookup("with.dot"), Lookup::Found("https://h/#with.dot"));
}

#[test]
fn only_the_first_curies_are_used() {
    let curies: Vec<Curie> = (0..=MAX_CURIES)
        .map(|i| curie(&format!("c{i}"), &format!("https://c{i}/{{rel}}")))
        .collect();
    let last = format!("c{MAX_CURIES}:x");
    let idx = RelIndex::new(["c0:x", last.as_str()], &curies, None);
    assert_eq!(idx.lookup("https://c0/x"), Lookup::Found("c0:x"));
    assert_eq!(
        idx.lookup(&format!("https://c{MAX_CURIES}/x")),
        Lookup::Missing
    );
}

/// A hostile document with very many rels and CURIEs: indexing and a failed lookup stay
/// linear in the rels (well under a second here; a quadratic index takes minutes).
#[test]
fn many_rels_and_curies_index_quickly() {
    let rels: Vec<String> = (0..30_000).map(|i| format!("https://h/#r{i}")).collect();
    let mut curies = vec![curie("h", "https://h/#{rel}")];
    curies.extend((0..10_000).map(|i| curie(&format!("c{i}"), "https://elsewhere/{rel}")));
    let idx = RelIndex::new(rels.iter().map(String::as_str), &curies, None);
    assert_eq!(idx.len(), 30_000);
    assert_eq!(idx.lookup("r29999"), Lookup::Found("https://h/#r29999"));
    assert_eq!(idx.lookup("h:r7"), Lookup::Found("https://h/#r7"));
    assert!(not_found(&idx, "r5000x").contains("did you mean 'r5000'"));
    assert_eq!(idx.attribute_names().len(), 30_000);
}
