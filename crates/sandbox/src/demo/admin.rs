//! What an `api_admin` token adds (spec: "additional links at the entry point, used to list the
//! apps and to generate a new app secret"). The spec does not show their names or payloads;
//! the sandbox's are `get-apps` (`GET /apps`) and `generate-app-secret`
//! (`POST /apps/{appName}/secret`, answering the new secret once). App tokens get 403/904.

use std::sync::Mutex;

use serde_json::{json, Value};

use super::data::Demo;
use super::{not_found, rel, url};
use crate::store::{HandlerReply, HandlerRequest, Store};
use crate::tokens::Scope;

fn admin_only(request: &HandlerRequest) -> Result<(), HandlerReply> {
    if request.scope == Scope::ApiAdmin {
        Ok(())
    } else {
        Err(HandlerReply::error(
            403,
            904,
            "access denied: this resource needs a token of scope api_admin",
        ))
    }
}

fn with_store<T>(request: &HandlerRequest, f: impl FnOnce(&mut Store) -> T) -> T {
    let mut store = match request.shared.store.write() {
        Ok(store) => store,
        Err(poisoned) => poisoned.into_inner(),
    };
    f(&mut store)
}

fn app(request: &HandlerRequest, name: &str) -> Value {
    let path = format!("/apps/{}", encode(name));
    json!({
        "appName": name,
        "_links": {
            "self": {"href": url(request, &path)},
            rel(request, "generate-app-secret"): {"href": url(request, &format!("{path}/secret"))},
        },
    })
}

/// RFC 3986 unreserved characters stay as they are in a path segment.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn encode(segment: &str) -> String {
    percent_encoding::utf8_percent_encode(segment, SEGMENT).to_string()
}

/// `get-apps`: the registered apps (names only: secrets are never shown again).
pub fn list(_: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    if let Err(reply) = admin_only(request) {
        return reply;
    }
    let names = with_store(request, |store| store.app_names());
    let apps: Vec<Value> = names.iter().map(|n| app(request, n)).collect();
    HandlerReply::json(
        200,
        &json!({"_links": {"self": {"href": url(request, "/apps")}}, "_embedded": {"apps": apps}}),
    )
}

pub fn get(_: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    if let Err(reply) = admin_only(request) {
        return reply;
    }
    let name = request.param("appName").unwrap_or("");
    if with_store(request, |store| store.app_names())
        .iter()
        .any(|n| n == name)
    {
        HandlerReply::json(200, &app(request, name))
    } else {
        not_found("app")
    }
}

/// `generate-app-secret`: a new secret replaces the old one at once (tokens already issued
/// stay valid until they expire).
pub fn new_secret(_: &Mutex<Demo>, request: &HandlerRequest) -> HandlerReply {
    if let Err(reply) = admin_only(request) {
        return reply;
    }
    let name = request.param("appName").unwrap_or("").to_owned();
    let secret = uuid::Uuid::new_v4().simple().to_string();
    let found = with_store(request, |store| {
        let known = store.app_names().contains(&name);
        if known {
            store.add_app(&name, &secret);
        }
        known
    });
    if !found {
        return not_found("app");
    }
    let mut body = app(request, &name);
    body["appSecret"] = json!(secret);
    HandlerReply::json(201, &body).with_header(
        "location",
        url(request, &format!("/apps/{}", encode(&name))),
    )
}
