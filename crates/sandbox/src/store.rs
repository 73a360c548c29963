//! What the sandbox serves: registered apps and admins, the entry point's links, static
//! resources and routes. Lookups clone what they need out of the store, so no lock is held
//! while a handler runs.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use hyper::http::Method;
use percent_encoding::percent_decode_str;
use serde_json::Value;

use super::error::{Result, SandboxError};
use super::journal::Entry;
use super::tokens::Scope;

/// What a route handler gets: the journal entry of the request plus the matched path
/// parameters and where the server lives (to build absolute hrefs).
#[derive(Clone)]
pub struct HandlerRequest {
    pub entry: Arc<Entry>,
    pub path_params: Vec<(String, String)>,
    pub base_url: String,
    pub rel_namespace: String,
    pub scope: Scope,
    /// The server's state, for built-in handlers (no lock is held when a handler runs).
    pub shared: Arc<super::Shared>,
}

impl HandlerRequest {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.path_params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of a query parameter.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.entry
            .query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A handler's answer. `body` is serialized JSON (or nothing, e.g. for 204).
#[derive(Debug, Clone)]
pub struct HandlerReply {
    pub status: u16,
    pub body: Option<Bytes>,
    pub headers: Vec<(String, String)>,
}

impl HandlerReply {
    pub fn json(status: u16, body: &Value) -> Self {
        HandlerReply {
            status,
            body: Some(Bytes::from(body.to_string())),
            headers: Vec::new(),
        }
    }

    /// An API error: `{"code","message"}` as `application/json`, like the server's own.
    pub fn error(status: u16, code: u32, message: &str) -> Self {
        HandlerReply::json(
            status,
            &serde_json::json!({"code": code, "message": message}),
        )
        .with_header("content-type", "application/json;charset=UTF-8")
    }

    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }
}

/// A handler that failed (a Python exception): answered with a 500, `detail` goes to the
/// journal.
#[derive(Debug, Clone)]
pub struct HandlerFailure {
    pub message: String,
    pub detail: String,
}

pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<HandlerReply, HandlerFailure>> + Send>>;
pub type Handler = Arc<dyn Fn(HandlerRequest) -> HandlerFuture + Send + Sync>;

#[derive(Clone)]
pub enum Target {
    EntryPoint,
    /// A JSON document serialized once, when added, with its ETag.
    Static {
        body: Bytes,
        etag: String,
    },
    Handler(Handler),
}

/// A path pattern: literal segments and whole-segment `{name}` parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct PathTemplate {
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Literal(String),
    Param(String),
}

impl PathTemplate {
    /// Parse `/things/{id}`; `literal` treats braces as ordinary characters.
    pub fn parse(template: &str, literal: bool) -> Result<Self> {
        let path = path_of(template);
        if !path.starts_with('/') {
            let name = if literal { "path" } else { "path_template" };
            return Err(SandboxError::argument(format!(
                "{name} must start with '/' (or be an absolute URL), not {template:?}"
            )));
        }
        let mut segments = Vec::new();
        for raw in path[1..].split('/') {
            let segment = match raw.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) if !literal => {
                    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        return Err(SandboxError::argument(format!(
                            "path_template parameters are letters, digits and '_', \
                             not {name:?} in {template:?}"
                        )));
                    }
                    Segment::Param(name.to_owned())
                }
                _ if !literal && (raw.contains('{') || raw.contains('}')) => {
                    return Err(SandboxError::argument(format!(
                        "path_template parameters must be whole segments like \
                         '/things/{{id}}', not {template:?}"
                    )))
                }
                _ => Segment::Literal(decode(raw)),
            };
            segments.push(segment);
        }
        Ok(PathTemplate { segments })
    }

    /// The parameters if `path` matches.
    pub fn matches(&self, path: &str) -> Option<Vec<(String, String)>> {
        let mut params = Vec::new();
        let mut parts = path.strip_prefix('/')?.split('/');
        for segment in &self.segments {
            let part = decode(parts.next()?);
            match segment {
                Segment::Literal(l) if *l == part => {}
                Segment::Literal(_) => return None,
                Segment::Param(name) => params.push((name.clone(), part)),
            }
        }
        if parts.next().is_some() {
            return None;
        }
        Some(params)
    }
}

fn decode(segment: &str) -> String {
    percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

/// The path of an absolute URL, or the string itself without query and fragment.
pub fn path_of(url: &str) -> &str {
    let rest = match url.split_once("://") {
        Some((_, after_scheme)) => match after_scheme.find('/') {
            Some(i) => &after_scheme[i..],
            None => "/",
        },
        None => url,
    };
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    &rest[..end]
}

#[derive(Clone)]
struct Route {
    method: Method,
    template: PathTemplate,
    target: Target,
}

/// A link of the entry point.
#[derive(Debug, Clone)]
pub struct EntryLink {
    /// Short name (put under the namespace) or, when it contains ':', the full rel.
    pub rel: String,
    /// Absolute, or a path made absolute against the base URL when served.
    pub href: String,
    pub templated: bool,
    pub admin_only: bool,
}

pub enum Lookup {
    Found(Target, Vec<(String, String)>),
    /// The path exists for these methods only.
    MethodNotAllowed(Vec<Method>),
    NotFound,
}

#[derive(Default)]
pub struct Store {
    apps: HashMap<String, String>,
    admins: HashMap<(String, String), String>,
    links: Vec<EntryLink>,
    /// Bumped whenever `links` change: the key of the rendered entry point cache.
    links_version: u64,
    routes: Vec<Route>,
}

impl Store {
    pub fn new() -> Self {
        let mut store = Store::default();
        store.routes.push(Route {
            method: Method::GET,
            template: PathTemplate {
                segments: vec![Segment::Literal(String::new())],
            },
            target: Target::EntryPoint,
        });
        store
    }

    pub fn add_app(&mut self, name: &str, secret: &str) {
        self.apps.insert(name.to_owned(), secret.to_owned());
    }

    pub fn add_admin(&mut self, creditor: &str, login: &str, password: &str) {
        self.admins
            .insert((creditor.to_owned(), login.to_owned()), password.to_owned());
    }

    /// Registered app names, sorted.
    pub fn app_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.apps.keys().cloned().collect();
        names.sort();
        names
    }

    /// The principal a Basic `user:password` authenticates, with the scope it may ask for.
    pub fn authenticate(&self, user: &str, password: &str) -> Option<(String, Scope)> {
        if self.apps.get(user).is_some_and(|s| s == password) {
            return Some((format!("app:{user}"), Scope::Api));
        }
        let (creditor, login) = user.split_once('#')?;
        let key = (creditor.to_owned(), login.to_owned());
        if self.admins.get(&key).is_some_and(|p| p == password) {
            return Some((format!("admin:{user}"), Scope::ApiAdmin));
        }
        None
    }

    /// Add or replace (same rel) a link of the entry point.
    pub fn add_link(&mut self, link: EntryLink) {
        match self.links.iter_mut().find(|l| l.rel == link.rel) {
            Some(existing) => *existing = link,
            None => self.links.push(link),
        }
        self.links_version += 1;
    }

    pub fn links(&self) -> &[EntryLink] {
        &self.links
    }

    pub fn links_version(&self) -> u64 {
        self.links_version
    }

    /// Serve `document` at `path` (GET); replaces an earlier resource at the same path.
    pub fn add_resource(&mut self, path: &str, document: &Value) -> Result<()> {
        let template = PathTemplate::parse(path, true)?;
        let body = Bytes::from(document.to_string());
        let etag = super::etag::of(&body);
        self.routes
            .retain(|r| !(r.method == Method::GET && r.template == template));
        self.routes.push(Route {
            method: Method::GET,
            template,
            target: Target::Static { body, etag },
        });
        Ok(())
    }

    /// Route `method` on `template` to `handler`. The latest registration wins.
    pub fn route(&mut self, method: Method, template: &str, handler: Handler) -> Result<()> {
        if ![Method::GET, Method::POST, Method::PATCH].contains(&method) {
            return Err(SandboxError::argument(format!(
                "method must be GET, POST or PATCH (the API uses no other), not {method}"
            )));
        }
        let template = PathTemplate::parse(template, false)?;
        self.routes
            .retain(|r| !(r.method == method && r.template == template));
        self.routes.push(Route {
            method,
            template,
            target: Target::Handler(handler),
        });
        Ok(())
    }

    /// The most recently registered route that matches.
    pub fn lookup(&self, method: &Method, path: &str) -> Lookup {
        let mut allowed = Vec::new();
        for route in self.routes.iter().rev() {
            if let Some(params) = route.template.matches(path) {
                if route.method == *method {
                    return Lookup::Found(route.target.clone(), params);
                }
                if !allowed.contains(&route.method) {
                    allowed.push(route.method.clone());
                }
            }
        }
        if allowed.is_empty() {
            Lookup::NotFound
        } else {
            Lookup::MethodNotAllowed(allowed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_whole_segments() {
        let t = PathTemplate::parse("/things/{id}", false).unwrap();
        assert_eq!(
            t.matches("/things/a%20b"),
            Some(vec![("id".into(), "a b".into())])
        );
        assert_eq!(t.matches("/things"), None);
        assert_eq!(t.matches("/things/1/x"), None);
        assert_eq!(t.matches("/thing/1"), None);
        assert!(PathTemplate::parse("things", false).is_err());
        assert!(PathTemplate::parse("/t/x{id}", false).is_err());
        assert!(PathTemplate::parse("/t/{}", false).is_err());
        let literal = PathTemplate::parse("https://h:1/t/{id}?q=1", true).unwrap();
        assert_eq!(literal.matches("/t/%7Bid%7D"), Some(vec![]));
        assert_eq!(path_of("http://h"), "/");
    }

    #[test]
    fn latest_route_wins_and_405_lists_methods() {
        let mut store = Store::new();
        store
            .add_resource("/a", &serde_json::json!({"v": 1}))
            .unwrap();
        store
            .add_resource("/a", &serde_json::json!({"v": 2}))
            .unwrap();
        match store.lookup(&Method::GET, "/a") {
            Lookup::Found(Target::Static { body, etag }, _) => {
                assert_eq!(&body[..], br#"{"v":2}"#);
                assert_eq!(etag, crate::etag::of(&body));
            }
            _ => panic!("expected the static resource"),
        }
        match store.lookup(&Method::POST, "/a") {
            Lookup::MethodNotAllowed(m) => assert_eq!(m, vec![Method::GET]),
            _ => panic!("expected 405"),
        }
        assert!(matches!(
            store.lookup(&Method::GET, "/"),
            Lookup::Found(Target::EntryPoint, _)
        ));
        assert!(matches!(store.lookup(&Method::GET, "/b"), Lookup::NotFound));
        assert!(store
            .route(Method::DELETE, "/a", Arc::new(|_| unreachable!()))
            .is_err());
    }

    #[test]
    fn credentials_select_the_scope() {
        let mut store = Store::new();
        store.add_app("app", "s:1");
        store.add_admin("cred", "bob", "pw");
        assert_eq!(
            store.authenticate("app", "s:1"),
            Some(("app:app".into(), Scope::Api))
        );
        assert_eq!(
            store.authenticate("cred#bob", "pw"),
            Some(("admin:cred#bob".into(), Scope::ApiAdmin))
        );
        assert_eq!(store.authenticate("app", "s"), None);
        assert_eq!(store.authenticate("cred#bob", "x"), None);
        assert_eq!(store.authenticate("nobody", ""), None);
    }
}
