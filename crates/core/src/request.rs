//! A request as data (docs/design.md#request-as-data): what the caller asked for — method,
//! target (a URL, or a template and its variables), body, per-call headers, `If-Match` — and,
//! once, here: the variable checks, the path-safe expansion, the resolution against `base_url`
//! and the method/body policy. The bindings convert Python values and call `prepare`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HOST,
    IF_MATCH,
};
use http::Method;
use url::Url;

use crate::error::{Error, Result};
use crate::template::{self, Source, Template, Value};
use crate::text::{double_quoted, single_quoted};

/// A template's variables as the caller gave them, in the order given: a list, read by name
/// (a call gives one or two; a map, its hashes and allocations cost ~1,000 instructions a
/// call), and made a map only for std-uritemplate.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    given: Vec<Given>,
}

#[derive(Debug, Clone)]
struct Given {
    name: String,
    /// `None`: undefined (it counts as given: RFC 6570 "undefined").
    value: Option<Value>,
    /// The value holds a `None` that was left out (an item of a list or dict).
    held_none: bool,
}

impl Variables {
    /// Record `name`; `value` is `None` for an undefined value, `held_none` when the value
    /// holds a `None` that was left out.
    pub fn insert(&mut self, name: String, value: Option<Value>, held_none: bool) {
        self.given.push(Given {
            name,
            value,
            held_none,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.given.is_empty()
    }

    /// Every name given, in order.
    fn names(&self) -> impl Iterator<Item = &str> {
        self.given.iter().map(|g| g.name.as_str())
    }

    /// The names whose value is `None` or holds one, in order.
    fn nones(&self) -> impl Iterator<Item = &str> {
        let none = |g: &&Given| g.value.is_none() || g.held_none;
        self.given.iter().filter(none).map(|g| g.name.as_str())
    }
}

impl template::Values for Variables {
    /// The last value given for `name` (a name given twice: the later value).
    fn get(&self, name: &str) -> Option<&Value> {
        let mut given = self.given.iter().rev();
        given.find_map(|g| {
            if g.name == name {
                g.value.as_ref()
            } else {
                None
            }
        })
    }

    fn to_map(&self) -> Cow<'_, HashMap<String, Value>> {
        let defined = self
            .given
            .iter()
            .filter_map(|g| Some((g.name.clone(), g.value.clone()?)));
        Cow::Owned(defined.collect())
    }
}

/// Where a request goes.
#[derive(Debug, Clone)]
pub struct Target {
    href: Href,
    /// The href came from a server document (a link): if it cannot be resolved, the server
    /// broke the protocol (`ProtocolError`); a caller's URL that cannot is a configuration error.
    from_document: bool,
}

#[derive(Debug, Clone)]
enum Href {
    /// An href, absolute or relative to `base_url`, sent as it is.
    Url(String),
    /// An RFC 6570 template and the values of its variables.
    Template {
        template: Source,
        variables: Variables,
    },
}

impl Target {
    /// `href` with `variables`. `templated` is what the link says (`None`: not a link but the
    /// caller's href, a template when it holds a `{`, as for `client.get(url, **vars)`); `name`
    /// is what messages call it (the link's relation, else the href itself).
    pub fn new(
        href: String,
        templated: Option<bool>,
        variables: Variables,
        name: Option<&str>,
    ) -> Result<Target> {
        // Only links say whether they are templated: their href is the server's.
        let from_document = templated.is_some();
        if templated.unwrap_or_else(|| href.contains('{')) {
            let href = Href::Template {
                template: Source::Text(href),
                variables,
            };
            return Ok(Target {
                href,
                from_document,
            });
        }
        if !variables.is_empty() {
            return Err(Error::UnknownVariable(format!(
                "{} is not a template; it takes no variables",
                single_quoted(name.unwrap_or(&href))
            )));
        }
        Ok(Target {
            href: Href::Url(href),
            from_document,
        })
    }

    /// A link's template, parsed once by the link (the checks and the expansion are those of
    /// `new` with `templated`).
    pub fn of_link(template: Arc<Template>, variables: Variables) -> Target {
        let href = Href::Template {
            template: Source::Parsed(template),
            variables,
        };
        Target {
            href,
            from_document: true,
        }
    }

    /// The absolute URL: the href, or the template expanded after its variables are checked,
    /// resolved against `base` (`name` as in `new`).
    pub fn resolve(&self, base: &Url, name: Option<&str>) -> Result<Url> {
        let href = match &self.href {
            Href::Url(href) => return crate::url::resolve_href(base, href, self.from_document),
            Href::Template {
                template,
                variables,
            } => expand_declared(&template.parsed()?, variables, name)?,
        };
        crate::url::resolve_href(base, &href, self.from_document)
    }

    /// The template, moved out (a prepared request keeps it for telemetry's `url.template`).
    pub fn into_template(self) -> Option<Source> {
        match self.href {
            Href::Url(_) => None,
            Href::Template { template, .. } => Some(template),
        }
    }

    /// The template as the document holds it (telemetry's `url.template`), if any.
    pub fn template(&self) -> Option<&str> {
        match &self.href {
            Href::Url(_) => None,
            Href::Template { template, .. } => Some(template),
        }
    }
}

/// `parsed` expanded with `variables`, which it must all declare (`name` as in `Target::new`).
fn expand_declared(
    parsed: &template::Parsed<'_>,
    variables: &Variables,
    name: Option<&str>,
) -> Result<String> {
    let template = parsed.template();
    if variables.names().any(|n| !parsed.declares(n)) {
        // A template std-uritemplate refuses is reported as such first, as before any check.
        parsed.check()?;
        let declared = parsed.variables();
        let unknown: Vec<String> = variables
            .names()
            .filter(|n| !declared.contains(n))
            .map(single_quoted)
            .collect();
        let declared = if declared.is_empty() {
            "none".to_owned()
        } else {
            declared.join(", ")
        };
        return Err(Error::UnknownVariable(format!(
            "{} got unexpected variable(s) {}; it declares {declared}",
            single_quoted(name.unwrap_or(template)),
            unknown.join(", ")
        )));
    }
    refuse_missing_path_variables(parsed, variables)?;
    expand_parsed(parsed, variables)
}

/// A variable of a `{v}` or `{+v}` expansion in the path that the call does not give is an
/// `UnknownVariable` (Python `TypeError`), as `None` there is (docs/concepts.md): undefined, RFC
/// 6570 would leave it out and address another resource. `expand_uri_template` stays plain
/// RFC 6570 and does not come here.
fn refuse_missing_path_variables(
    parsed: &template::Parsed<'_>,
    variables: &Variables,
) -> Result<()> {
    let mut required = parsed.required_variables();
    match required.find(|r| !variables.names().any(|n| n == *r)) {
        None => Ok(()),
        Some(name) => Err(Error::UnknownVariable(format!(
            "URI template variable {} is missing for the path of {}: a path variable needs a \
             value (a variable is left out only in expansions such as {{/{name}}} or {{?{name}}})",
            single_quoted(name),
            single_quoted(parsed.template())
        ))),
    }
}

/// Expand `template` (no check of unknown names: `expand_uri_template` takes any mapping).
///
/// `None` is undefined, which RFC 6570 omits: right for `{?v}`, but in the path it would
/// address another resource (`/orders/{id}` with `id=None` is the collection), so it is an
/// `UnknownVariable` (Python `TypeError`) there (docs/guarantees.md#template-values).
pub fn expand(template: &str, variables: &Variables) -> Result<String> {
    expand_parsed(&template::Parsed::new(template)?, variables)
}

fn expand_parsed(parsed: &template::Parsed<'_>, variables: &Variables) -> Result<String> {
    let mut nones = variables.nones().peekable();
    if nones.peek().is_some() {
        let mut in_path = parsed.path_variables();
        if let Some(name) = nones.find(|n| in_path.any(|p| p == *n)) {
            return Err(Error::UnknownVariable(format!(
                "URI template variable {} is None (or holds None) in the path of {}: a path \
                 variable needs a value (None is left out only in query expansions such as \
                 {{?{name}}})",
                single_quoted(name),
                single_quoted(parsed.template())
            )));
        }
    }
    parsed.expand_values(variables)
}

/// The `headers=` setting: valid names and values, none that the protocol sets itself.
pub fn extra_headers(pairs: &[(String, String)]) -> Result<HeaderMap> {
    let reserved = [AUTHORIZATION, ACCEPT, CONTENT_TYPE, HOST, CONTENT_LENGTH];
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        let bad = |what: &str| Error::Configuration(format!("headers: {what}"));
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            bad(&format!(
                "{} is not a valid header name",
                double_quoted(name)
            ))
        })?;
        if reserved.contains(&name) {
            return Err(bad(&format!(
                "{name} is set by the client and cannot be given"
            )));
        }
        let value = HeaderValue::from_str(value).map_err(|_| {
            bad(&format!(
                "the value of {name} contains characters not allowed in a header"
            ))
        })?;
        headers.append(name, value);
    }
    Ok(headers)
}

/// One API call as the caller asked for it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    pub target: Target,
    /// The JSON body (`None`: not given).
    pub body: Option<Bytes>,
    /// Per-call extra headers (the trace context, docs/guides/observability-otel.md), sent to the
    /// API's origin only, the token endpoint included (unlike the client's `headers=`).
    pub headers: Vec<(String, String)>,
    /// `If-Match` (conditional PATCH, docs/guides/errors.md#conditional-updates).
    pub if_match: Option<String>,
    /// What messages call the target (a link's relation); `None`: the href.
    pub name: Option<String>,
    /// The settings of a client derived by `with_options`
    /// (docs/guides/configuration.md#per-call-settings); `None`: the client's.
    pub options: Option<Arc<CallOptions>>,
}

/// Per-call settings (`client.with_options`, docs/guides/configuration.md#per-call-settings): each
/// one given replaces the client's for every attempt, pause and token request of the call.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    pub timeout: Option<Duration>,
    /// Bounds each new connection's connect (through `connect_deadline`, so that no pool is
    /// built per setting).
    pub connect_timeout: Option<Duration>,
    pub total_timeout: Option<Duration>,
    pub retries: Option<u32>,
    /// Replaces the client's `headers=` for requests to the API's origin (already merged by
    /// name with them).
    pub headers: Option<HeaderMap>,
}

impl CallOptions {
    /// No setting of its own: the client's apply.
    pub fn none() -> &'static CallOptions {
        static NONE: CallOptions = CallOptions {
            timeout: None,
            connect_timeout: None,
            total_timeout: None,
            retries: None,
            headers: None,
        };
        &NONE
    }

    /// Checked as the client's own settings are: positive finite seconds, valid headers none
    /// of which the protocol sets itself.
    pub fn new(
        timeout: Option<f64>,
        connect_timeout: Option<f64>,
        total_timeout: Option<f64>,
        retries: Option<u32>,
        headers: Option<&[(String, String)]>,
    ) -> Result<CallOptions> {
        let seconds = |name, value: Option<f64>| value.map(|v| seconds(name, v)).transpose();
        Ok(CallOptions {
            timeout: seconds("timeout", timeout)?,
            connect_timeout: seconds("connect_timeout", connect_timeout)?,
            total_timeout: seconds("total_timeout", total_timeout)?,
            retries,
            headers: headers.map(extra_headers).transpose()?,
        })
    }
}

/// A setting in seconds: positive, finite and below a billion (`Duration` would overflow).
pub fn seconds(name: &str, value: f64) -> Result<Duration> {
    if value.is_finite() && value > 0.0 && value < 1e9 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(Error::Configuration(format!(
            "{name} must be a positive number of seconds"
        )))
    }
}

impl Request {
    /// The method policy: the API uses GET, POST and PATCH only.
    pub fn new(method: &str, target: Target) -> Result<Request> {
        let method = match method {
            "GET" => Method::GET,
            "POST" => Method::POST,
            "PATCH" => Method::PATCH,
            other => {
                return Err(Error::Configuration(format!(
                    "method must be GET, POST or PATCH (the API uses no other), not {other:?}"
                )))
            }
        };
        Ok(Request {
            method,
            target,
            body: None,
            headers: Vec::new(),
            if_match: None,
            name: None,
            options: None,
        })
    }

    /// Check, expand and resolve against `base`; apply the body policy (GET: none; POST: JSON,
    /// `{}` when none is given; PATCH: a merge patch, required). Nothing has been sent yet.
    pub fn prepare(self, base: &Url) -> Result<Prepared> {
        let mut url = self.target.resolve(base, self.name.as_deref())?;
        // The HTTP stack would turn userinfo into a Basic header to that origin: a link's
        // `u:pw@` (chosen by a server) is never sent, nor shown in an error or a log.
        crate::url::strip_userinfo(&mut url);
        let mut headers = HeaderMap::new();
        let content_type = |value| HeaderValue::from_static(value);
        let body = match (&self.method, self.body) {
            (&Method::GET, Some(_)) => {
                return Err(Error::Configuration("GET takes no body".into()))
            }
            (&Method::GET, None) => None,
            (&Method::PATCH, None) => {
                return Err(Error::Configuration(
                    "PATCH needs a merge-patch body".into(),
                ))
            }
            (&Method::PATCH, Some(body)) => {
                headers.insert(CONTENT_TYPE, content_type("application/merge-patch+json"));
                Some(body)
            }
            (_, body) => {
                headers.insert(CONTENT_TYPE, content_type("application/json"));
                Some(body.unwrap_or_else(|| Bytes::from_static(b"{}")))
            }
        };
        if let Some(tag) = &self.if_match {
            let value = HeaderValue::from_str(tag).map_err(|_| {
                Error::Configuration("if_match contains characters not allowed in a header".into())
            })?;
            headers.insert(IF_MATCH, value);
        }
        let mut api_headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let bad = || Error::Configuration(format!("header {name:?} is not a valid header"));
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            let value = HeaderValue::from_str(value).map_err(|_| bad())?;
            api_headers.append(name, value);
        }
        let template = self.target.into_template(); // moved: a copy per call cost an allocation
        Ok(Prepared {
            method: self.method,
            url,
            headers,
            body,
            api_headers,
            template,
            options: self.options,
        })
    }
}

/// A request ready to send: the first hop of a call.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub method: Method,
    pub url: Url,
    /// Content-Type and If-Match (Accept and the token are added per hop).
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
    /// The per-call extra headers, for hops to the API's origin only (and a token request
    /// the call makes).
    pub api_headers: HeaderMap,
    /// The template the URL was expanded from (telemetry's `url.template`).
    pub template: Option<Source>,
    /// The call's own settings, shared with the derived client that made it (`None`: the
    /// client's own).
    pub options: Option<Arc<CallOptions>>,
}

impl Prepared {
    /// The call's own settings; none when it was not made through `with_options`.
    pub fn options(&self) -> &CallOptions {
        self.options.as_deref().unwrap_or(CallOptions::none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, Option<&str>)]) -> Variables {
        let mut v = Variables::default();
        for (name, value) in pairs {
            v.insert(
                (*name).to_owned(),
                value.map(|s| Value::String(s.to_owned())),
                false,
            );
        }
        v
    }

    fn base() -> Url {
        Url::parse("https://api.example.com/v1/").unwrap()
    }

    fn prepare(method: &str, href: &str, v: Variables) -> Result<Prepared> {
        let target = Target::new(href.to_owned(), None, v, None)?;
        Request::new(method, target)?.prepare(&base())
    }

    #[test]
    fn expands_and_resolves_once() {
        let p = prepare(
            "GET",
            "orders/{id}{?q}",
            vars(&[("id", Some("7")), ("q", None)]),
        );
        let p = p.unwrap();
        assert_eq!(p.url.as_str(), "https://api.example.com/v1/orders/7");
        assert_eq!(p.template.as_deref(), Some("orders/{id}{?q}"));
        assert!(p.body.is_none());
    }

    #[test]
    fn unknown_and_missing_variables() {
        let err = prepare("GET", "/o/{id}", vars(&[("ref", Some("x"))])).unwrap_err();
        assert!(matches!(err, Error::UnknownVariable(ref m)
            if m == "'/o/{id}' got unexpected variable(s) 'ref'; it declares id"));
        let err = prepare("GET", "/o/{id}", vars(&[("id", None)])).unwrap_err();
        assert!(matches!(err, Error::UnknownVariable(ref m) if m.contains("is None")));
        let err = prepare("POST", "/o/{id}/cancel{?q}", vars(&[("q", Some("x"))])).unwrap_err();
        assert!(
            matches!(err, Error::UnknownVariable(ref m) if m == "URI template variable 'id' \
            is missing for the path of '/o/{id}/cancel{?q}': a path variable needs a value (a \
            variable is left out only in expansions such as {/id} or {?id})")
        );
        let err = prepare("GET", "{+base}/o", Variables::default()).unwrap_err();
        assert!(matches!(err, Error::UnknownVariable(ref m) if m.contains("'base' is missing")));
        let optional = "/o{/id}{.f}{;p}{?q}{&r}{#s}/{+t}";
        let p = prepare("GET", optional, Variables::default()).unwrap();
        assert_eq!(p.url.as_str(), "https://api.example.com/o/");
        // The plain RFC 6570 engine leaves an undefined path variable out.
        assert_eq!(expand("/o/{id}/x", &Variables::default()).unwrap(), "/o//x");
        let err = Target::new(
            "/o".into(),
            Some(false),
            vars(&[("a", Some("1"))]),
            Some("rel"),
        );
        assert!(matches!(err, Err(Error::UnknownVariable(ref m))
            if m == "'rel' is not a template; it takes no variables"));
    }

    /// A link's template, parsed once, gives each request what the text parsed per request
    /// gives: its own values expanded, every check run.
    #[test]
    fn a_parsed_template_prepares_as_its_text() {
        let text = "https://api.example.com/o/{id}/x{?q,r*}";
        let template = Arc::new(Template::new(text.to_owned()).unwrap());
        let calls = [
            vars(&[("id", Some("7")), ("q", Some("a b"))]),
            vars(&[("id", Some("é/8"))]),
            vars(&[("id", Some(".."))]),
            vars(&[("id", None)]),
            vars(&[("q", Some("x"))]),
            vars(&[("id", Some("1")), ("other", Some("x"))]),
        ];
        for v in calls {
            let of_link = Target::of_link(template.clone(), v.clone());
            let of_text = Target::new(text.to_owned(), Some(true), v.clone(), Some("rel")).unwrap();
            let shown = |r: Result<Url>| r.map(String::from).map_err(|e| e.to_string());
            assert_eq!(
                shown(of_link.resolve(&base(), Some("rel"))),
                shown(of_text.resolve(&base(), Some("rel"))),
                "{v:?}"
            );
        }
    }

    /// Variables are a list read by name: a name given twice has its later value, on the
    /// usual path (no map) and on std-uritemplate's (a map built from the list).
    #[test]
    fn a_name_given_twice_has_its_later_value() {
        let twice =
            |a: Option<&str>, b: Option<&str>| vars(&[("id", a), ("q", Some("x")), ("id", b)]);
        for (template, sent) in [("/o/{id}/{q}", "/o/2/x"), ("/o/{id}{?q}", "/o/2?q=x")] {
            let url = |v| {
                prepare("GET", template, v).map(|p| p.url[url::Position::BeforePath..].to_owned())
            };
            assert_eq!(url(twice(Some("1"), Some("2"))).unwrap(), sent);
            let error = |v| url(v).unwrap_err().to_string();
            assert_eq!(
                error(twice(Some("1"), None)),
                error(vars(&[("q", Some("x")), ("id", None)]))
            );
        }
        let v = twice(Some("1"), Some("2"));
        assert_eq!(expand("{?id,q}", &v).unwrap(), "?id=2&q=x");
    }

    #[test]
    fn values_stay_in_their_segment() {
        for value in [".", ".."] {
            let err = prepare("GET", "/o/{id}", vars(&[("id", Some(value))])).unwrap_err();
            assert!(matches!(err, Error::Template(_)), "{value}");
        }
        let err = prepare("GET", "/o/{+id}", vars(&[("id", Some("%2e%2E"))])).unwrap_err();
        assert!(matches!(err, Error::Template(_)));
    }

    #[test]
    fn method_and_body_policy() {
        assert!(matches!(
            prepare("DELETE", "/o", Variables::default()),
            Err(Error::Configuration(_))
        ));
        let post = prepare("POST", "/o", Variables::default()).unwrap();
        assert_eq!(post.body.as_deref(), Some(&b"{}"[..]));
        assert_eq!(post.headers[CONTENT_TYPE], "application/json");
        assert!(prepare("PATCH", "/o", Variables::default()).is_err());
        let target = Target::new("/o".into(), None, Variables::default(), None).unwrap();
        let mut patch = Request::new("PATCH", target).unwrap();
        patch.body = Some(Bytes::from_static(b"{\"a\":1}"));
        patch.if_match = Some("\"v1\"".into());
        patch.headers = vec![("traceparent".into(), "00-ab-cd-01".into())];
        let patch = patch.prepare(&base()).unwrap();
        assert_eq!(patch.headers[CONTENT_TYPE], "application/merge-patch+json");
        assert_eq!(patch.headers[IF_MATCH], "\"v1\"");
        assert_eq!(patch.api_headers["traceparent"], "00-ab-cd-01");
    }
}
