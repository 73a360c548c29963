//! `demo=True`: the recorded entry point's relations (`fixtures/recorded/entry-point.json`,
//! rewritten to this server) with working handlers for creditors, orders, mandates and
//! documents, over plausible deterministic data (creditor `democreditor`, 120 mandates).
//!
//! Relations without a handler here answer 404 like any unknown path.

mod admin;
mod data;
mod mandates;
mod orders;

use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex};

use hyper::http::Method;
use serde_json::{json, Value};

use super::store::{EntryLink, Handler, HandlerReply, HandlerRequest, Store};
use data::Demo;

pub const CREDITOR: &str = "democreditor";

/// The recorded entry point; its hrefs are made relative to this server when installed.
const RECORDED_ENTRY_POINT: &str = include_str!("../../../../fixtures/recorded/entry-point.json");
const RECORDED_NAMESPACE: &str = "https://api.slimpay.net/alps#";
const RECORDED_BASE: &str = "https://api.preprod.slimpay.com";

/// The recorded relations as (short name, path or path template, templated).
pub fn recorded_links() -> Vec<(String, String, bool)> {
    let Ok(recorded) = serde_json::from_str::<Value>(RECORDED_ENTRY_POINT) else {
        return Vec::new();
    };
    let Some(links) = recorded
        .pointer("/response/body/_links")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    links
        .iter()
        .filter_map(|(rel, link)| {
            let name = rel.strip_prefix(RECORDED_NAMESPACE)?;
            let href = link.get("href")?.as_str()?;
            let path = href.strip_prefix(RECORDED_BASE).unwrap_or(href);
            let templated = link.get("templated").and_then(Value::as_bool) == Some(true);
            Some((name.to_owned(), path.to_owned(), templated))
        })
        .collect()
}

type Native = fn(&Mutex<Demo>, &HandlerRequest) -> HandlerReply;

fn native(demo: &Arc<Mutex<Demo>>, f: Native) -> Handler {
    let demo = Arc::clone(demo);
    Arc::new(move |request| {
        let reply = f(&demo, &request);
        Box::pin(std::future::ready(Ok(reply)))
    })
}

pub fn install(store: &mut Store) {
    for (rel, href, templated) in recorded_links() {
        store.add_link(EntryLink {
            rel,
            href,
            templated,
            admin_only: false,
        });
    }
    for (rel, href, templated) in [
        ("get-apps", "/apps", false),
        ("generate-app-secret", "/apps/{appName}/secret", true),
    ] {
        store.add_link(EntryLink {
            rel: rel.into(),
            href: href.into(),
            templated,
            admin_only: true,
        });
    }
    let demo = Arc::new(Mutex::new(Demo::new()));
    let routes: [(Method, &str, Native); 17] = [
        (Method::GET, "/creditors", creditors),
        (Method::GET, "/creditors/{reference}", creditor),
        (Method::POST, "/orders", orders::create),
        (Method::GET, "/orders", orders::search),
        (Method::GET, "/orders/{id}", orders::get),
        (Method::PATCH, "/orders/{id}", orders::patch),
        (Method::GET, "/orders/{id}/subscriber", orders::subscriber),
        (Method::GET, "/orders/{id}/order-items", orders::items),
        (
            Method::GET,
            "/creditors/{creditor}/orders/{id}/extended-user-approval",
            orders::approval,
        ),
        (Method::GET, "/mandates", mandates::search),
        (Method::GET, "/mandates/{id}", mandates::get),
        (Method::GET, "/documents", mandates::documents),
        (Method::GET, "/documents/{id}", mandates::document),
        (Method::GET, "/documents/{id}/content", mandates::content),
        (Method::GET, "/apps", admin::list),
        (Method::GET, "/apps/{appName}", admin::get),
        (Method::POST, "/apps/{appName}/secret", admin::new_secret),
    ];
    for (method, path, handler) in routes {
        // The paths are constants known to parse; a failure would only lose one route.
        let _ = store.route(method, path, native(&demo, handler));
    }
}

/// Absolute URL of a path on this server.
pub(crate) fn url(request: &HandlerRequest, path: &str) -> String {
    format!("{}{path}", request.base_url)
}

/// A namespaced relation name.
pub(crate) fn rel(request: &HandlerRequest, name: &str) -> String {
    format!("{}{name}", request.rel_namespace)
}

pub(crate) fn not_found(what: &str) -> HandlerReply {
    HandlerReply::error(404, 902, &format!("{what} not found"))
}

pub(crate) fn invalid(message: &str) -> HandlerReply {
    HandlerReply::error(400, 910, message)
}

/// 403 when the request names a creditor other than the demo's (the app has no access).
pub(crate) fn check_creditor(reference: Option<&str>) -> Result<(), HandlerReply> {
    match reference {
        Some(r) if r != CREDITOR => Err(HandlerReply::error(
            403,
            904,
            &format!("access denied: the app has no access to creditor {r:?}"),
        )),
        _ => Ok(()),
    }
}

fn creditor_document(request: &HandlerRequest) -> Value {
    let path = format!("/creditors/{CREDITOR}");
    json!({
        "reference": CREDITOR,
        "name": "Demo Creditor SAS",
        "_links": {
            "self": {"href": url(request, &path)},
            "profile": {"href": url(request, "/alps/v1/creditors")},
            rel(request, "get-mandates"): {
                "href": url(request, &format!("/mandates?creditorReference={CREDITOR}{{&page,size}}")),
                "templated": true,
            },
            rel(request, "search-orders"): {
                "href": url(request, &format!("/orders?creditorReference={CREDITOR}{{&reference,state,page,size}}")),
                "templated": true,
            },
            rel(request, "create-orders"): {"href": url(request, "/orders")},
            rel(request, "get-documents"): {
                "href": url(request, &format!("/documents?creditorReference={CREDITOR}{{&reference}}")),
                "templated": true,
            },
        },
    })
}

/// `get-creditors`: `/creditors?reference=democreditor`.
fn creditors(_: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    match request.query("reference") {
        None => invalid("the parameter reference is required"),
        Some(CREDITOR) => HandlerReply::json(200, &creditor_document(request)),
        Some(other) => check_creditor(Some(other))
            .err()
            .unwrap_or_else(|| not_found("creditor")),
    }
}

fn creditor(_: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    match request.param("reference") {
        Some(CREDITOR) => HandlerReply::json(200, &creditor_document(request)),
        _ => not_found("creditor"),
    }
}

/// A page of a collection: `_embedded.<name>`, the `page` object, and `self`/`first`/`last`/
/// `next`/`prev` links that keep the request's other query parameters.
pub(crate) fn page(request: &HandlerRequest, name: &str, items: Vec<Value>) -> HandlerReply {
    let number = match query_number(request, "page", 0, 0..=u32::MAX as usize) {
        Ok(n) => n,
        Err(reply) => return reply,
    };
    let size = match query_number(request, "size", 20, 1..=100) {
        Ok(n) => n,
        Err(reply) => return reply,
    };
    let total = items.len();
    let pages = total.div_ceil(size);
    let content: Vec<Value> = items
        .into_iter()
        .skip(number.saturating_mul(size))
        .take(size)
        .collect();
    let link = |n: usize| {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (k, v) in request
            .entry
            .query
            .iter()
            .filter(|(k, _)| k != "page" && k != "size")
        {
            query.append_pair(k, v);
        }
        query.append_pair("page", &n.to_string());
        query.append_pair("size", &size.to_string());
        json!({"href": format!("{}{}?{}", request.base_url, request.entry.path, query.finish())})
    };
    let mut links = serde_json::Map::new();
    links.insert("self".into(), link(number));
    links.insert("first".into(), link(0));
    if number > 0 {
        links.insert(
            "prev".into(),
            link((number - 1).min(pages.saturating_sub(1))),
        );
    }
    if number + 1 < pages {
        links.insert("next".into(), link(number + 1));
    }
    links.insert("last".into(), link(pages.saturating_sub(1)));
    HandlerReply::json(
        200,
        &json!({
            "_links": links,
            "_embedded": {name: content},
            "page": {"size": size, "totalElements": total, "totalPages": pages, "number": number},
        }),
    )
}

/// The query parameter `name` as a number in `range`, `default` when absent; else a 400 (910)
/// that states the range.
fn query_number(
    request: &HandlerRequest,
    name: &str,
    default: usize,
    range: RangeInclusive<usize>,
) -> Result<usize, HandlerReply> {
    match request.query(name) {
        None => Ok(default),
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                let (min, max) = (range.start(), range.end());
                invalid(&format!(
                    "{name} must be an integer between {min} and {max}, not {text:?}"
                ))
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_relations_are_all_there() {
        let links = recorded_links();
        // 44 relations in all: these 42 namespaced ones plus `self` and `profile`.
        assert_eq!(links.len(), 42);
        assert!(links.contains(&("post-token".into(), "/oauth/token".into(), false)));
        assert!(links.contains(&(
            "get-creditors".into(),
            "/creditors{?reference}".into(),
            true
        )));
        assert!(links.iter().all(|(_, href, _)| href.starts_with('/')));
    }
}
