//! Mandates (paged collections whose embedded items are partial; `self` gives the full one)
//! and their documents (a collection returned as an array of links).

use std::sync::Mutex;

use base64::Engine as _;
use serde_json::{json, Value};

use super::data::{Demo, Mandate};
use super::{check_creditor, not_found, page, rel, url, CREDITOR};
use crate::journal::lock;
use crate::store::{HandlerReply, HandlerRequest};

/// What a collection embeds: enough to list, not everything.
fn partial(request: &HandlerRequest, m: &Mandate) -> Value {
    json!({
        "id": m.id,
        "reference": m.reference,
        "rum": m.rum,
        "state": m.state,
        "dateSigned": m.date_signed,
        "_links": {"self": {"href": url(request, &format!("/mandates/{}", m.id))}},
    })
}

fn full(request: &HandlerRequest, m: &Mandate) -> Value {
    json!({
        "_links": {
            "self": {"href": url(request, &format!("/mandates/{}", m.id))},
            "profile": {"href": url(request, "/alps/v1/mandates")},
            rel(request, "get-creditor"): {"href": url(request, &format!("/creditors/{CREDITOR}"))},
            rel(request, "get-document"): {"href": url(request, &format!("/documents/{}", m.document_id()))},
        },
        "id": m.id,
        "reference": m.reference,
        "rum": m.rum,
        "state": m.state,
        "standard": "SEPA",
        "paymentScheme": m.payment_scheme,
        "createSequenceType": "FRST",
        "dateSigned": m.date_signed,
        "dateCreated": m.date_signed,
        "subscriberReference": m.subscriber,
        "signatory": m.signatory,
    })
}

fn matches(request: &HandlerRequest, m: &Mandate) -> bool {
    let is = |name: &str, value: &str| request.query(name).is_none_or(|q| q == value);
    is("mandateReference", &m.reference)
        && is("state", m.state)
        && is("paymentScheme", m.payment_scheme)
        && is("subscriberReference", &m.subscriber)
        // ISO 8601 strings of one format compare in time order.
        && request.query("dateSignedBefore").is_none_or(|d| m.date_signed.as_str() < d)
        && request.query("dateSignedAfter").is_none_or(|d| m.date_signed.as_str() > d)
}

/// `get-mandates` (with `reference`, `rum` or `id`: that mandate) and `search-mandates`
/// (otherwise: a page of `_embedded.mandates`).
pub fn search(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    if let Err(reply) = check_creditor(request.query("creditorReference")) {
        return reply;
    }
    let demo = lock(demo);
    let single = [("reference", 0), ("rum", 1), ("id", 2)]
        .into_iter()
        .find_map(|(name, kind)| request.query(name).map(|v| (kind, v)));
    if let Some((kind, value)) = single {
        let found = demo.mandates.iter().find(|m| match kind {
            0 => m.reference == value,
            1 => m.rum == value,
            _ => m.id == value,
        });
        return found.map_or_else(
            || not_found("mandate"),
            |m| HandlerReply::json(200, &full(request, m)),
        );
    }
    let items = demo
        .mandates
        .iter()
        .filter(|m| matches(request, m))
        .map(|m| partial(request, m))
        .collect();
    page(request, "mandates", items)
}

pub fn get(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let demo = lock(demo);
    let id = request.param("id").unwrap_or("");
    demo.mandates.iter().find(|m| m.id == id).map_or_else(
        || not_found("mandate"),
        |m| HandlerReply::json(200, &full(request, m)),
    )
}

/// `get-documents`: the documents as one relation holding an array of links.
pub fn documents(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    if let Err(reply) = check_creditor(request.query("creditorReference")) {
        return reply;
    }
    let demo = lock(demo);
    let links: Vec<Value> = demo
        .mandates
        .iter()
        .filter(|m| request.query("reference").is_none_or(|r| r == m.reference))
        .map(|m| {
            json!({
                "href": url(request, &format!("/documents/{}", m.document_id())),
                "name": m.document_id(),
                "title": format!("Signed mandate {}", m.reference),
                "type": "application/pdf",
            })
        })
        .collect();
    let self_href = match request.entry.query_string.as_str() {
        "" => url(request, "/documents"),
        q => url(request, &format!("/documents?{q}")),
    };
    HandlerReply::json(
        200,
        &json!({
            "count": links.len(),
            "_links": {"self": {"href": self_href}, rel(request, "get-document"): links},
        }),
    )
}

fn find_document<'a>(demo: &'a Demo, request: &HandlerRequest) -> Option<&'a Mandate> {
    let id = request.param("id")?;
    demo.mandates.iter().find(|m| m.document_id() == id)
}

pub fn document(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let demo = lock(demo);
    let Some(m) = find_document(&demo, request) else {
        return not_found("document");
    };
    let path = format!("/documents/{}", m.document_id());
    HandlerReply::json(
        200,
        &json!({
            "_links": {
                "self": {"href": url(request, &path)},
                rel(request, "get-mandate"): {"href": url(request, &format!("/mandates/{}", m.id))},
                rel(request, "get-binary-content"): {"href": url(request, &format!("{path}/content"))},
            },
            "id": m.document_id(),
            "reference": m.reference,
            "name": format!("mandate-{}.pdf", m.reference),
            "contentType": "application/pdf",
            "dateCreated": m.date_signed,
        }),
    )
}

/// The document's bytes, base64 in JSON (this API only speaks JSON).
pub fn content(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let demo = lock(demo);
    let Some(m) = find_document(&demo, request) else {
        return not_found("document");
    };
    let pdf = format!(
        "%PDF-1.4\n% sandbox mandate {} signed {}\n%%EOF\n",
        m.reference, m.date_signed
    );
    HandlerReply::json(
        200,
        &json!({
            "contentType": "application/pdf",
            "content": base64::engine::general_purpose::STANDARD.encode(pdf),
        }),
    )
}
