//! The entry point `GET /`: `self`, `profile`, then the registered links (admin-only ones for
//! `api_admin` tokens only). Rendered, with its ETag, once per links version and scope: every
//! client starts here, and benchmarks hammer it.

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::journal::lock;
use super::store::Store;
use super::tokens::Scope;
use super::Site;

/// A rendered entry point and its ETag.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub body: Bytes,
    pub etag: String,
}

pub fn entry_point(site: &Site, scope: Scope) -> Rendered {
    let store = match site.shared.store.read() {
        Ok(store) => store,
        Err(poisoned) => poisoned.into_inner(),
    };
    let version = store.links_version();
    if let Some((_, _, rendered)) = lock(&site.entry_cache)
        .iter()
        .find(|(v, s, _)| *v == version && *s == scope)
    {
        return rendered.clone();
    }
    let body = Bytes::from(render(site, &store, scope).to_string());
    drop(store);
    let rendered = Rendered {
        etag: super::etag::of(&body),
        body,
    };
    let mut cache = lock(&site.entry_cache);
    cache.retain(|(v, _, _)| *v == version);
    cache.push((version, scope, rendered.clone()));
    rendered
}

fn render(site: &Site, store: &Store, scope: Scope) -> Value {
    let mut links = Map::new();
    links.insert(
        "self".into(),
        json!({"href": format!("{}/", site.urls.base_url)}),
    );
    links.insert("profile".into(), json!({"href": site.urls.profile}));
    let visible = store
        .links()
        .iter()
        .filter(|l| !l.admin_only || scope == Scope::ApiAdmin);
    for link in visible {
        // A rel with ':' is already a URI (or a CURIE); others go under the namespace.
        let rel = if link.rel.contains(':') {
            link.rel.clone()
        } else {
            format!("{}{}", site.urls.rel_namespace, link.rel)
        };
        let href = if link.href.starts_with('/') {
            format!("{}{}", site.urls.base_url, link.href)
        } else {
            link.href.clone()
        };
        let mut object = json!({"href": href});
        if link.templated {
            object["templated"] = Value::Bool(true);
        }
        links.insert(rel, object);
    }
    json!({"_links": links})
}
