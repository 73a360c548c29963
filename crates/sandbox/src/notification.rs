//! The body the API would POST to an app's notification URL for one of the sandbox's resources:
//! the document a GET of its path serves, read without a request (nothing is journaled, no token
//! is needed, no fault is taken). A test hands it to its own view (`FakeServer.notify` or the
//! framework's test client).

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use hyper::http::Method;
use serde_json::{json, Value};

use super::error::{Result, SandboxError};
use super::journal::Entry;
use super::store::{HandlerRequest, Lookup, Target};
use super::tokens::Scope;
use super::Site;

/// The document served at `target` (a path, optionally with `?query`) as a 200 with a body,
/// with a `self` link to it added when it has none. Anything else (no route, another status,
/// an empty body, a failing handler) is an `Argument` error naming the path.
pub async fn body(site: Arc<Site>, target: String) -> Result<Bytes> {
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let nothing = |why: &str| {
        SandboxError::argument(format!(
            "the sandbox serves no document at {target:?} to notify about ({why})"
        ))
    };
    let found = match site.shared.store.read() {
        Ok(store) => store.lookup(&Method::GET, path),
        Err(_) => return Err(SandboxError::Internal("sandbox store unavailable".into())),
    };
    let (route, path_params) = match found {
        Lookup::Found(route, params) => (route, params),
        Lookup::NotFound => return Err(nothing("no resource there")),
        Lookup::MethodNotAllowed(_) => return Err(nothing("nothing answers GET there")),
    };
    let body = match route {
        Target::EntryPoint => super::entry::entry_point(&site, Scope::Api).body,
        Target::Static { body, .. } => body,
        Target::Handler(handler) => {
            let request = HandlerRequest {
                entry: Arc::new(entry(&site, path, query)),
                path_params,
                base_url: site.urls.base_url.clone(),
                rel_namespace: site.urls.rel_namespace.clone(),
                scope: Scope::Api,
                shared: Arc::clone(&site.shared),
            };
            let reply = handler(request)
                .await
                .map_err(|failure| nothing(&failure.message))?;
            match (reply.status, reply.body) {
                (200, Some(body)) => body,
                (status, _) => return Err(nothing(&format!("a GET is answered {status}"))),
            }
        }
    };
    with_self(body, &site.urls.base_url, &target).ok_or_else(|| nothing("not a JSON object"))
}

/// What a route handler sees of the notification's GET: no headers, no body, the query given.
fn entry(site: &Site, path: &str, query: &str) -> Entry {
    Entry {
        method: "GET".into(),
        path: path.to_owned(),
        query_string: query.to_owned(),
        query: form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect(),
        headers: Vec::new(),
        body: Bytes::new(),
        json: None,
        time: site.shared.clock.now().as_secs_f64(),
        status: OnceLock::new(),
        error: OnceLock::new(),
    }
}

/// `body` as served when it has a `self` link; else with `{"href": <base_url><target>}` added
/// under `_links.self`. `None` when it is not a JSON object.
fn with_self(body: Bytes, base_url: &str, target: &str) -> Option<Bytes> {
    let mut document: Value = serde_json::from_slice(&body).ok()?;
    let object = document.as_object_mut()?;
    let links = object.entry("_links").or_insert_with(|| json!({}));
    let links = links.as_object_mut()?;
    if links.contains_key("self") {
        return Some(body);
    }
    links.insert(
        "self".into(),
        json!({"href": format!("{base_url}{target}")}),
    );
    Some(Bytes::from(document.to_string()))
}

#[cfg(test)]
mod tests {
    use super::with_self;
    use bytes::Bytes;

    #[test]
    fn a_document_with_a_self_link_is_sent_as_served() {
        let body = Bytes::from_static(br#"{"id": 1, "_links": {"self": {"href": "/t/1"}}}"#);
        assert_eq!(with_self(body.clone(), "http://h", "/t/1"), Some(body));
    }

    #[test]
    fn a_self_link_is_added_when_missing() {
        let added = with_self(Bytes::from_static(br#"{"id": 1}"#), "http://h", "/t/1?x=1");
        let value: serde_json::Value = serde_json::from_slice(&added.unwrap_or_default()).unwrap();
        assert_eq!(value["_links"]["self"]["href"], "http://h/t/1?x=1");
        assert_eq!(value["id"], 1);
    }

    #[test]
    fn a_body_that_is_not_an_object_is_refused() {
        assert_eq!(
            with_self(Bytes::from_static(b"[1]"), "http://h", "/t"),
            None
        );
        let links_not_an_object = Bytes::from_static(br#"{"_links": []}"#);
        assert_eq!(with_self(links_not_an_object, "http://h", "/t"), None);
    }
}
