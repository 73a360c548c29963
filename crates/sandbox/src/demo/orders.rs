//! Orders: created with POST (201 + `Location`, shaped like the recorded `order-created.json`),
//! read by id or reference, searched by page, and merge-patched (RFC 7396) under an optional
//! `If-Match` precondition.

use std::sync::Mutex;

use serde_json::{json, Map, Value};

use super::data::{now_iso8601, Demo, Order};
use super::{check_creditor, invalid, not_found, page, rel, url, CREDITOR};
use crate::etag::{self, Precondition};
use crate::journal::lock;
use crate::store::{HandlerReply, HandlerRequest};

/// Where checkout pages live: a different origin, so clients must not send the token there.
pub const CHECKOUT_ORIGIN: &str = "https://checkout.sandbox.invalid";

fn document(request: &HandlerRequest, order: &Order) -> Value {
    let id = order.id();
    let path = format!("/orders/{id}");
    let mut body = Map::new();
    body.insert(
        "_links".into(),
        json!({
            "self": {"href": url(request, &path)},
            "profile": {"href": url(request, "/alps/v1/orders")},
            rel(request, "get-creditor"): {"href": url(request, &format!("/creditors/{CREDITOR}"))},
            rel(request, "get-subscriber"): {"href": url(request, &format!("{path}/subscriber"))},
            rel(request, "get-order-items"): {"href": url(request, &format!("{path}/order-items"))},
            rel(request, "user-approval"): {
                "href": format!("{CHECKOUT_ORIGIN}/userApproval?accessCode={}", order.access_code),
            },
            rel(request, "extended-user-approval"): {
                "href": url(request, &format!(
                    "/creditors/{CREDITOR}/orders/{id}/extended-user-approval{{?mode}}"
                )),
                "templated": true,
            },
        }),
    );
    body.extend(order.state.clone());
    Value::Object(body)
}

/// `create-orders`: `POST /orders`. Every field is optional; `reference` must be new.
pub fn create(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let Some(Value::Object(input)) = &request.entry.json else {
        return invalid("an order is a JSON object");
    };
    let creditor = input
        .get("creditor")
        .and_then(|c| c.get("reference"))
        .and_then(Value::as_str);
    if let Err(reply) = check_creditor(creditor) {
        return reply;
    }
    let reference = match input.get("reference") {
        None | Some(Value::Null) => None,
        Some(Value::String(r)) if !r.is_empty() => Some(r.clone()),
        Some(_) => return invalid("reference must be a non-empty string"),
    };
    let started = match input.get("started") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return invalid("started must be a boolean"),
    };
    let items = input.get("items").cloned().unwrap_or_else(|| json!([]));
    if !items.is_array() {
        return invalid("items must be an array");
    }
    let mut demo = lock(demo);
    if let Some(r) = &reference {
        if demo.orders.iter().any(|o| o.field("reference") == Some(r)) {
            return HandlerReply::error(
                409,
                901,
                &format!("duplicate order: the reference {r:?} is already used"),
            );
        }
    }
    let id = uuid::Uuid::new_v4().to_string();
    let now = now_iso8601();
    let subscriber = input
        .get("subscriber")
        .and_then(|s| s.get("reference"))
        .and_then(Value::as_str)
        .map_or_else(
            || format!("subscriber-{}", demo.orders.len() + 1),
            str::to_owned,
        );
    let mut state = Map::new();
    state.insert("id".into(), json!(id));
    state.insert(
        "reference".into(),
        json!(reference.unwrap_or_else(|| id.clone())),
    );
    state.insert(
        "state".into(),
        json!(if started {
            "open.running"
        } else {
            "open.not_running"
        }),
    );
    state.insert("started".into(), json!(started));
    state.insert("dateCreated".into(), json!(now));
    if started {
        state.insert("dateStarted".into(), json!(now));
    }
    state.insert("paymentScheme".into(), json!("SEPA.DIRECT_DEBIT.CORE"));
    state.insert("sendUserApproval".into(), json!(false));
    state.insert("checkoutActor".into(), json!("end_user"));
    let order = Order {
        state,
        subscriber,
        items,
        access_code: uuid::Uuid::new_v4().simple().to_string(),
    };
    let body = document(request, &order);
    demo.orders.push(order);
    HandlerReply::json(201, &body).with_header("location", url(request, &format!("/orders/{id}")))
}

fn find<'a>(demo: &'a Demo, request: &HandlerRequest) -> Option<&'a Order> {
    let id = request.param("id")?;
    demo.orders.iter().find(|o| o.id() == id)
}

/// `search-order-by-id`.
pub fn get(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let demo = lock(demo);
    find(&demo, request).map_or_else(
        || not_found("order"),
        |o| HandlerReply::json(200, &document(request, o)),
    )
}

/// `get-orders` (with `reference`: that order) and `search-orders` (without: a page).
pub fn search(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    if let Err(reply) = check_creditor(request.query("creditorReference")) {
        return reply;
    }
    let demo = lock(demo);
    if let Some(reference) = request.query("reference") {
        return match demo
            .orders
            .iter()
            .find(|o| o.field("reference") == Some(reference))
        {
            Some(order) => HandlerReply::json(200, &document(request, order)),
            None => not_found("order"),
        };
    }
    let items = demo
        .orders
        .iter()
        .filter(|o| {
            request
                .query("state")
                .is_none_or(|s| o.field("state") == Some(s))
        })
        .filter(|o| {
            request
                .query("subscriberReference")
                .is_none_or(|s| o.subscriber == s)
        })
        .map(|o| document(request, o))
        .collect();
    page(request, "orders", items)
}

/// PATCH with `application/merge-patch+json`: RFC 7396 on the order's state. `id`,
/// `reference` and the HAL reserved properties cannot be patched.
///
/// `If-Match` (RFC 9110 §13.1.1) is evaluated first, under the same lock as the change, against
/// the ETag a GET of the order would carry: a mismatch (or any `If-Match` on an order that does
/// not exist) is a 412 and changes nothing.
pub fn patch(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let mut demo = lock(demo);
    // The id, and the ETag of the bytes a GET of the order serves (`HandlerReply::json`).
    let found = find(&demo, request).map(|order| {
        let served = document(request, order).to_string();
        (order.id().to_owned(), etag::of(served.as_bytes()))
    });
    let if_match = request
        .entry
        .headers
        .iter()
        .filter(|(name, _)| name == "if-match")
        .map(|(_, value)| value.as_str());
    let current = found.as_ref().map(|(_, etag)| etag.as_str());
    if let Precondition::Failed(reason) = etag::if_match(if_match, current) {
        return HandlerReply::error(412, 911, &format!("precondition failed: {reason}"));
    }
    let Some(Value::Object(changes)) = &request.entry.json else {
        return invalid("a merge patch of an order is a JSON object");
    };
    for read_only in ["id", "reference", "_links", "_embedded"] {
        if changes.contains_key(read_only) {
            return invalid(&format!("{read_only} cannot be changed"));
        }
    }
    let Some((id, _)) = found else {
        return not_found("order");
    };
    let Some(order) = demo.orders.iter_mut().find(|o| o.id() == id) else {
        return not_found("order");
    };
    let mut state = Value::Object(std::mem::take(&mut order.state));
    merge_patch(&mut state, &Value::Object(changes.clone()));
    order.state = match state {
        Value::Object(map) => map,
        _ => Map::new(), // unreachable: an object patched with an object stays an object
    };
    HandlerReply::json(200, &document(request, order))
}

/// RFC 7396 §2: null removes, objects merge recursively, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(target) = target {
        for (key, value) in patch {
            if value.is_null() {
                target.remove(key);
            } else {
                merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

pub fn subscriber(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let demo = lock(demo);
    let Some(order) = find(&demo, request) else {
        return not_found("order");
    };
    let path = format!("/orders/{}/subscriber", order.id());
    HandlerReply::json(
        200,
        &json!({"reference": order.subscriber, "_links": {"self": {"href": url(request, &path)}}}),
    )
}

pub fn items(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let demo = lock(demo);
    let Some(order) = find(&demo, request) else {
        return not_found("order");
    };
    let path = format!("/orders/{}/order-items", order.id());
    HandlerReply::json(
        200,
        &json!({
            "_links": {"self": {"href": url(request, &path)}},
            "_embedded": {"items": order.items},
        }),
    )
}

/// `extended-user-approval{?mode}`: where to send the signatory, by `mode`.
pub fn approval(demo: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    let demo = lock(demo);
    let Some(order) = find(&demo, request) else {
        return not_found("order");
    };
    let mode = request.query("mode").unwrap_or("redirect");
    let checkout = format!(
        "{CHECKOUT_ORIGIN}/userApproval?accessCode={}",
        order.access_code
    );
    let content = match mode {
        "redirect" => Value::Null,
        "iframeembedded" | "iframepopin" => json!(format!("<iframe src=\"{checkout}\"></iframe>")),
        other => {
            return invalid(&format!(
                "unknown mode {other:?}: redirect, iframeembedded or iframepopin"
            ))
        }
    };
    HandlerReply::json(
        200,
        &json!({
            "mode": mode,
            "url": checkout,
            "content": content,
            "_links": {"self": {"href": format!("{}{}?{}", request.base_url, request.entry.path, request.entry.query_string)}},
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7396_examples() {
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (
                json!({"a": [{"b": "c"}]}),
                json!({"a": [1]}),
                json!({"a": [1]}),
            ),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (
                json!({"e": null}),
                json!({"a": 1}),
                json!({"e": null, "a": 1}),
            ),
            (
                json!([1, 2]),
                json!({"a": "b", "c": null}),
                json!({"a": "b"}),
            ),
            (
                json!({}),
                json!({"a": {"bb": {"ccc": null}}}),
                json!({"a": {"bb": {}}}),
            ),
            (json!({"a": "foo"}), json!("bar"), json!("bar")),
        ];
        for (mut target, patch, expected) in cases {
            merge_patch(&mut target, &patch);
            assert_eq!(target, expected);
        }
    }
}
