//! The recorded responses of the real API (`fixtures/recorded/`) through the public API of the
//! HAL model and the relation index.

// clippy's allowance for tests covers `#[test]` functions, not this crate's helpers.
#![allow(clippy::unwrap_used)]

use rp_core::error::Error;
use rp_core::hal::{self, Document, Link, OneOrMany};
use rp_core::rels::{Lookup, RelIndex};
use serde_json::Value;

const NAMESPACE: &str = "https://api.slimpay.net/alps#";

/// `.response.body` of a recorded exchange, and the bytes of it that a server would send.
fn recorded_body(file: &str) -> (Value, Vec<u8>) {
    let path = format!(
        "{}/../../fixtures/recorded/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let exchange: Value = serde_json::from_str(&text).unwrap();
    let body = exchange["response"]["body"].clone();
    let bytes = serde_json::to_vec_pretty(&body).unwrap();
    (body, bytes)
}

fn entry_point() -> (Value, Document) {
    let (body, bytes) = recorded_body("entry-point.json");
    (body, hal::parse(bytes).unwrap())
}

/// Every namespaced relation of the entry point, by short name, with its template variables
/// in order (empty for a plain link).
const ENTRY_POINT_RELS: [(&str, &[&str]); 42] = [
    ("post-token", &[]),
    ("create-orders", &[]),
    ("get-orders", &["creditorReference", "reference"]),
    ("search-order-by-id", &["id"]),
    (
        "search-orders",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "state",
            "dateCreatedBefore",
            "dateCreatedAfter",
            "page",
            "size",
        ],
    ),
    ("get-creditors", &["reference"]),
    ("create-mandates", &[]),
    (
        "get-mandates",
        &[
            "creditorReference",
            "reference",
            "rum",
            "id",
            "paymentScheme",
        ],
    ),
    (
        "search-mandates",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "mandateReference",
            "paymentScheme",
            "dateSignedBefore",
            "dateSignedAfter",
            "state",
            "page",
            "size",
        ],
    ),
    ("create-documents", &[]),
    (
        "get-documents",
        &["creditorReference", "entityReference", "reference"],
    ),
    ("create-payins", &[]),
    ("create-payouts", &[]),
    (
        "search-payments",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "mandateReference",
            "cardAliasReference",
            "scheme",
            "direction",
            "reference",
            "category",
            "currency",
            "state",
            "executionStatus",
            "processor",
            "executionDateBefore",
            "executionDateAfter",
            "page",
            "size",
        ],
    ),
    ("search-payment-by-id", &["id"]),
    (
        "search-payment-issues",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "scheme",
            "currency",
            "executionStatus",
            "dateCreatedBefore",
            "dateCreatedAfter",
            "page",
            "size",
        ],
    ),
    ("search-payment-issue-by-id", &["id"]),
    ("create-direct-debits", &[]),
    ("get-direct-debits", &["id"]),
    (
        "search-direct-debits",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "mandateReference",
            "paymentReference",
            "currency",
            "executionDateBefore",
            "executionDateAfter",
            "page",
            "size",
        ],
    ),
    (
        "search-direct-debit-issues",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "currency",
            "executionStatus",
            "dateCreatedBefore",
            "dateCreatedAfter",
            "page",
            "size",
        ],
    ),
    ("get-direct-debit-issues", &["id"]),
    ("create-recurrent-direct-debits", &[]),
    ("get-recurrent-direct-debits", &["id"]),
    (
        "search-recurrent-direct-debits",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "reference",
            "currency",
            "activated",
            "frequency",
            "dateFromBefore",
            "dateFromAfter",
            "page",
            "size",
        ],
    ),
    ("create-credit-transfers", &[]),
    ("get-credit-transfers", &["id"]),
    (
        "search-credit-transfers",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "mandateReference",
            "paymentReference",
            "currency",
            "executionDateBefore",
            "executionDateAfter",
            "page",
            "size",
        ],
    ),
    ("create-card-transactions", &[]),
    ("get-card-transactions", &["id"]),
    ("get-card-aliases", &["id"]),
    (
        "search-card-aliases",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "reference",
            "status",
            "page",
            "size",
        ],
    ),
    ("search-card-by-id", &["id"]),
    ("get-recurrent-card-transactions", &["id"]),
    (
        "search-recurrent-card-transactions",
        &[
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "reference",
            "currency",
            "activated",
            "frequency",
            "dateFromBefore",
            "dateFromAfter",
            "page",
            "size",
        ],
    ),
    ("create-recurrent-card-transactions", &[]),
    ("get-card-transaction-issues", &["id"]),
    ("search-bank-account-by-id", &["id"]),
    (
        "search-balances",
        &[
            "creditorReference",
            "entityReference",
            "currency",
            "page",
            "size",
        ],
    ),
    ("search-order-item-by-id", &["id"]),
    (
        "search-subscribers",
        &[
            "creditorReference",
            "entityReference",
            "reference",
            "page",
            "size",
        ],
    ),
    (
        "search-report",
        &["creditorReference", "entityReference", "dateFrom", "dateTo"],
    ),
];

/// The links of a document as (rel, links), and the field names of its state.
fn links_of(doc: &Document) -> Vec<(String, OneOrMany<Link>)> {
    doc.links()
}

fn state_of(doc: &Document) -> Vec<(&str, Value)> {
    doc.state()
        .map(|(name, raw)| (name, serde_json::from_slice(raw).unwrap()))
        .collect()
}

#[test]
fn entry_point_has_44_relations_42_of_them_namespaced() {
    let (_, doc) = entry_point();
    let links = links_of(&doc);
    assert_eq!(links.len(), 44);
    assert!(state_of(&doc).is_empty() && doc.embedded().is_empty());
    let namespaced = links.iter().filter(|(r, _)| r.starts_with(NAMESPACE));
    assert_eq!(namespaced.count(), 42);
    assert_eq!(links[0].0, "self");
    assert_eq!(links[1].0, "profile");
    assert_eq!(
        doc.self_href().as_deref(),
        Some("https://api.preprod.slimpay.com/")
    );
    // Document order is kept.
    let shorts: Vec<&str> = links[2..]
        .iter()
        .map(|(r, _)| r.strip_prefix(NAMESPACE).unwrap())
        .collect();
    let expected: Vec<&str> = ENTRY_POINT_RELS.iter().map(|(s, _)| *s).collect();
    assert_eq!(shorts, expected);
}

#[test]
fn every_relation_by_full_short_and_attribute_name() {
    let (_, doc) = entry_point();
    for namespace in [Some(NAMESPACE), None] {
        let index = doc.rel_index(&[], namespace);
        for (short, _) in ENTRY_POINT_RELS {
            let rel = format!("{NAMESPACE}{short}");
            let attribute = short.replace('-', "_");
            for name in [rel.as_str(), short, attribute.as_str()] {
                assert_eq!(
                    index.lookup(name),
                    Lookup::Found(&rel),
                    "{name} {namespace:?}"
                );
                assert_eq!(index.resolve(name).unwrap(), rel);
            }
            assert_eq!(index.short_name(&rel).as_deref(), Some(short));
            assert!(doc.link(&rel).is_some());
        }
        for iana in ["self", "profile"] {
            assert_eq!(index.resolve(iana).unwrap(), iana);
        }
        let mut expected: Vec<String> = ENTRY_POINT_RELS
            .iter()
            .map(|(short, _)| short.replace('-', "_"))
            .chain(["self".to_owned(), "profile".to_owned()])
            .collect();
        expected.sort();
        assert_eq!(index.attribute_names(), expected);
    }
}

#[test]
fn template_variables_of_every_relation() {
    let (_, doc) = entry_point();
    let index = doc.rel_index(&[], None);
    for (short, variables) in ENTRY_POINT_RELS {
        let rel = index.resolve(short).unwrap();
        let Some(OneOrMany::One(link)) = doc.link(rel) else {
            panic!("{rel} is not a single link");
        };
        assert_eq!(link.templated, !variables.is_empty(), "{short}");
        assert_eq!(link.variables().unwrap(), variables, "{short}");
    }
    let variables_of = |short: &str| {
        let links = doc.link(&format!("{NAMESPACE}{short}")).unwrap();
        links.first().unwrap().variables().unwrap()
    };
    assert_eq!(variables_of("get-creditors"), ["reference"]);
    assert_eq!(
        variables_of("search-orders"),
        [
            "creditorReference",
            "entityReference",
            "subscriberReference",
            "state",
            "dateCreatedBefore",
            "dateCreatedAfter",
            "page",
            "size"
        ]
    );
    assert!(variables_of("create-orders").is_empty());
    assert_eq!(variables_of("search-payments").len(), 17);
}

#[test]
fn a_typo_gets_a_suggestion_and_a_cut_list() {
    let (_, doc) = entry_point();
    let index = doc.rel_index(&[], Some(NAMESPACE));
    let Err(Error::LinkNotFound { name, message }) = index.resolve("get_creditorz") else {
        panic!("expected LinkNotFound");
    };
    assert_eq!(name, "get_creditorz");
    assert!(
        message.starts_with(
            "no relation 'get_creditorz' in this resource; did you mean 'get_creditors'? \
             available: create_card_transactions, create_credit_transfers,"
        ),
        "{message}"
    );
    assert!(message.ends_with(" and 24 more"), "{message}");
    assert_eq!(index.find("get_creditorz").unwrap(), None);
}

#[test]
fn entry_point_text_is_the_body() {
    let (body, doc) = entry_point();
    let text: Value = serde_json::from_slice(doc.text()).unwrap();
    assert_eq!(text, body);
    // Every link's href is the recorded one.
    for (rel, links) in links_of(&doc) {
        let recorded = &body["_links"][rel.as_str()];
        assert_eq!(links.first().unwrap().href, recorded["href"], "{rel}");
    }
}

#[test]
fn order_created() {
    let (body, bytes) = recorded_body("order-created.json");
    let doc = hal::parse(bytes).unwrap();
    // A state property called `state` is state like any other; `_links` is not.
    let state = state_of(&doc);
    let keys: Vec<&str> = state.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        keys,
        [
            "id",
            "reference",
            "state",
            "started",
            "dateCreated",
            "dateStarted",
            "paymentScheme",
            "sendUserApproval",
            "checkoutActor"
        ]
    );
    assert_eq!(state[2].1, "open.running");
    assert_eq!(state[3].1, true);
    assert_eq!(
        doc.self_href().as_deref(),
        Some("https://api.preprod.slimpay.com/orders/31061884-3975-11e8-8fd1-000000000000")
    );
    for namespace in [Some(NAMESPACE), None] {
        let index = doc.rel_index(&[], namespace);
        let approval = index.resolve("user_approval").unwrap();
        assert_eq!(approval, "https://api.slimpay.net/alps#user-approval");
        let links = doc.link(approval).unwrap();
        let link = links.first().unwrap();
        assert!(link
            .href
            .starts_with("https://checkout.preprod.slimpay.com/"));
        assert!(!link.templated);
        let extended = index.resolve("extended-user-approval").unwrap();
        let links = doc.link(extended).unwrap();
        assert_eq!(links.first().unwrap().variables().unwrap(), ["mode"]);
        assert_eq!(
            index.attribute_names(),
            [
                "extended_user_approval",
                "get_creditor",
                "get_order_items",
                "get_subscriber",
                "profile",
                "self",
                "user_approval"
            ]
        );
    }
    // The resource's text is the body, as sent.
    let text: Value = serde_json::from_slice(doc.text()).unwrap();
    assert_eq!(text, body);
}

#[test]
fn rel_index_from_the_rels_alone() {
    let (_, doc) = entry_point();
    let links = links_of(&doc);
    let index = RelIndex::new(links.iter().map(|(r, _)| r.as_str()), &[], None);
    assert_eq!(index.len(), 44);
    assert_eq!(
        index.resolve("get_mandates").unwrap(),
        "https://api.slimpay.net/alps#get-mandates"
    );
}

#[test]
fn the_scanner_reads_every_recorded_body_as_jiter_does() {
    for file in [
        "entry-point.json",
        "order-created.json",
        "token-response.json",
    ] {
        let (body, bytes) = recorded_body(file);
        let compact = serde_json::to_vec(&body).unwrap();
        for text in [bytes, compact] {
            assert_eq!(hal::scanner_agrees(&text), Ok(true), "{file}");
        }
    }
}
