//! The request rules of the spec, applied to every request.
//!
//! Order of the checks for API requests: a path served for no method (404, whatever the
//! headers), method (405), `Accept` (406), bearer token (401), the path's methods (405 with
//! its own `Allow`), body type (415), body JSON (400).
//!
//! Every resource served (a 200 or 201 with a body: entry point, static resources, handlers'
//! answers) carries a strong `ETag` of its bytes (see `etag.rs`), unless a handler set its own.
//! `If-Match` is evaluated where the resource lives: the demo's PATCH handlers; a Python route
//! handler sees the header and answers what it likes.
//!
//! Error bodies are `{"code": <int>, "message": "..."}` in the API's style. Codes:
//!
//! | code | status | meaning |
//! |---|---|---|
//! | 900 | 500 | a route handler failed |
//! | 901 | 409 | duplicate (an order reference already used; demo) |
//! | 902 | 404 | no such resource |
//! | 903 | 401 | missing, unknown or expired bearer token |
//! | 904 | 403 | access denied (scope too small) |
//! | 905 | 405 | method not allowed |
//! | 906 | 406 | no acceptable representation (`Accept`) |
//! | 907 | 415 | unsupported body media type |
//! | 908 | 400 | malformed JSON body |
//! | 909 | 413 | request body too large |
//! | 910 | 400 | invalid parameter or body field (demo handlers) |
//! | 911 | 412 | precondition failed: `If-Match` of a PATCH (demo handlers) |
//! | 999 | any | a failure injected with `fail_next` |

use std::sync::{Arc, OnceLock};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::http::{
    header, HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode,
};
use serde_json::json;

use super::answer::{respond, JSON};
use super::body::Body;
use super::faults::Fault;
use super::journal::{lock, Entry};
use super::store::{HandlerReply, HandlerRequest, Lookup, Target};
use super::tokens::{Refusal, Scope};
use super::{oauth, Site, TOKEN_PATH};
use rp_core::media;

/// Request bodies above this are refused (413).
const MAX_BODY: usize = 8 * 1024 * 1024;
/// Up to this, an oversized body is read and discarded before the 413, so that a client still
/// sending gets the answer instead of a broken pipe; beyond it the connection is cut.
const DRAIN_LIMIT: usize = 8 * MAX_BODY;

/// Returned to hyper to close the connection without an answer (`drop_next`).
#[derive(Debug)]
pub struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped on purpose")
    }
}

impl std::error::Error for Dropped {}

pub async fn handle(
    site: Arc<Site>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Dropped> {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    let body = if declared.is_some_and(|n| n > DRAIN_LIMIT) {
        None
    } else {
        read_body(body).await
    };
    let entry = Arc::new(new_entry(&site, &parts, body.clone().unwrap_or_default()));
    site.shared.journal.record(Arc::clone(&entry));
    let is_token = entry.path == TOKEN_PATH;

    let (delay, outcome) = site.shared.faults.take(&entry.path, is_token);
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let response = match outcome {
        Some(Fault::Drop) => return Err(Dropped),
        Some(Fault::Fail { status, headers }) => {
            let mut r = api_error(status, 999, "failure injected by the sandbox (fail_next)");
            add_headers(&mut r, &headers);
            r
        }
        Some(Fault::Malformed) => {
            let mut r = respond(
                StatusCode::OK,
                &site.hal_content_type,
                Bytes::from_static(br#"{"_links": {"self": {"href": "#),
            );
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Some(Fault::Raw(raw)) => super::raw::response(&raw, &site.hal_content_type),
        None if body.is_none() => api_error(413, 909, "request body too large or unreadable"),
        None if is_token => oauth::token(&site, &parts.method, &entry),
        None => api(&site, &parts.method, &parts.headers, &entry).await,
    };
    let _ = entry.status.set(response.status().as_u16());
    Ok(response)
}

/// The body, or `None` when it is over `MAX_BODY` or cannot be read.
async fn read_body(mut body: Incoming) -> Option<Bytes> {
    let mut buffer = BytesMut::new();
    let mut total = 0usize;
    while let Some(frame) = body.frame().await {
        // Trailers carry no body bytes.
        let Ok(chunk) = frame.ok()?.into_data() else {
            continue;
        };
        total = total.saturating_add(chunk.len());
        if total > DRAIN_LIMIT {
            return None;
        }
        if total <= MAX_BODY {
            buffer.extend_from_slice(&chunk);
        }
    }
    (total <= MAX_BODY).then(|| buffer.freeze())
}

fn new_entry(site: &Site, parts: &hyper::http::request::Parts, body: Bytes) -> Entry {
    let query_string = parts.uri.query().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let json_body = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| media::parse(v.to_str().ok()?))
        .is_some_and(|m| m.essence == "application/json" || m.essence.ends_with("+json"));
    let json = if json_body && !body.is_empty() {
        serde_json::from_slice(&body).ok()
    } else {
        None
    };
    Entry {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: form_urlencoded::parse(query_string.as_bytes())
            .into_owned()
            .collect(),
        query_string,
        headers,
        body,
        json,
        time: site.shared.clock.now().as_secs_f64(),
        status: OnceLock::new(),
        error: OnceLock::new(),
    }
}

async fn api(
    site: &Site,
    method: &Method,
    headers: &HeaderMap,
    entry: &Arc<Entry>,
) -> Response<Body> {
    // A path served for no method is a 404 whatever else is wrong: a client pointed at the
    // wrong base URL learns that, not what its headers lack.
    let lookup = match site.shared.store.read() {
        Ok(store) => store.lookup(method, &entry.path),
        Err(_) => return api_error(500, 900, "sandbox store unavailable"),
    };
    // The 405 of a path served for other methods comes after the token check, as before.
    let route = match lookup {
        Lookup::Found(target, params) => Ok((target, params)),
        Lookup::MethodNotAllowed(allowed) => Err(method_not_allowed(method, entry, &allowed)),
        Lookup::NotFound => return api_error(404, 902, &format!("no resource at {}", entry.path)),
    };
    if ![Method::GET, Method::POST, Method::PATCH].contains(method) {
        let mut r = api_error(405, 905, &format!("method {method} is not allowed"));
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, POST, PATCH"));
        return r;
    }
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok());
    if !media::accepts(accept, "application/hal+json", Some(&site.urls.profile)) {
        return api_error(
            406,
            906,
            &format!(
                "no acceptable representation: send Accept: application/hal+json; profile=\"{}\"",
                site.urls.profile
            ),
        );
    }
    let scope = match bearer(site, headers) {
        Ok(scope) => scope,
        Err((error, message)) => return unauthorized(error, message),
    };
    let (target, path_params) = match route {
        Ok(found) => found,
        Err(refusal) => return refusal,
    };
    if let Some(refusal) = check_body(method, headers, entry) {
        return refusal;
    }
    match target {
        Target::EntryPoint => {
            let entry = super::entry::entry_point(site, scope);
            resource(site, StatusCode::OK, entry.body, &entry.etag)
        }
        Target::Static { body, etag } => resource(site, StatusCode::OK, body, &etag),
        Target::Handler(handler) => {
            let request = HandlerRequest {
                entry: Arc::clone(entry),
                path_params,
                base_url: site.urls.base_url.clone(),
                rel_namespace: site.urls.rel_namespace.clone(),
                scope,
                shared: Arc::clone(&site.shared),
            };
            match handler(request).await {
                Ok(reply) => from_reply(site, reply, entry),
                Err(failure) => {
                    let _ = entry.error.set(failure.detail);
                    api_error(500, 900, &failure.message)
                }
            }
        }
    }
}

/// The 405 of a path served for the `allowed` methods only, with its own `Allow`.
fn method_not_allowed(method: &Method, entry: &Entry, allowed: &[Method]) -> Response<Body> {
    let allow: Vec<&str> = allowed.iter().map(Method::as_str).collect();
    let mut r = api_error(
        405,
        905,
        &format!("method {method} is not allowed on {}", entry.path),
    );
    if let Ok(v) = HeaderValue::from_str(&allow.join(", ")) {
        r.headers_mut().insert(header::ALLOW, v);
    }
    r
}

/// The scope of a valid, unexpired bearer token, or the OAuth error code (none when no
/// credentials were sent) and message of the 401 to answer.
fn bearer(site: &Site, headers: &HeaderMap) -> Result<Scope, (Option<&'static str>, &'static str)> {
    let value = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let Some(value) = value else {
        return Err((
            None,
            "an Authorization: Bearer <access token> header is required",
        ));
    };
    let token = match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => {
            return Err((
                Some("invalid_request"),
                "the Authorization scheme must be Bearer",
            ))
        }
    };
    let now = site.shared.clock.now();
    lock(&site.shared.tokens)
        .check(token, now)
        .map_err(|refusal| match refusal {
            Refusal::Unknown => (Some("invalid_token"), "the access token is unknown"),
            Refusal::Expired => (Some("invalid_token"), "the access token has expired"),
        })
}

fn unauthorized(error: Option<&str>, message: &str) -> Response<Body> {
    let mut r = api_error(401, 903, message);
    // RFC 6750 §3: no error code when the request carried no credentials at all.
    let challenge = match error {
        Some(e) => format!("Bearer realm=\"api\", error=\"{e}\", error_description=\"{message}\""),
        None => "Bearer realm=\"api\"".to_owned(),
    };
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

/// POST bodies are `application/json`, PATCH bodies `application/merge-patch+json`, and both
/// must parse. A POST without a body needs no type.
fn check_body(method: &Method, headers: &HeaderMap, entry: &Entry) -> Option<Response<Body>> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("?"));
    let wanted = match *method {
        Method::POST if content_type.is_none() && entry.body.is_empty() => return None,
        Method::POST => "application/json",
        Method::PATCH => "application/merge-patch+json",
        _ => return None,
    };
    if !media::is(content_type, wanted) {
        return Some(api_error(
            415,
            907,
            &format!(
                "{method} bodies must be sent as Content-Type: {wanted}, not {}",
                content_type.unwrap_or("(none)")
            ),
        ));
    }
    if entry.json.is_none() {
        let message = if entry.body.is_empty() {
            "the body is empty"
        } else {
            "the body is not valid JSON"
        };
        return Some(api_error(400, 908, message));
    }
    None
}

fn from_reply(site: &Site, reply: HandlerReply, entry: &Entry) -> Response<Body> {
    let Some(status) = StatusCode::from_u16(reply.status)
        .ok()
        .filter(|s| (200..600).contains(&s.as_u16()))
    else {
        let message = format!("the handler returned an invalid status {}", reply.status);
        let _ = entry.error.set(message.clone());
        return api_error(500, 900, &message);
    };
    let tagged = matches!(status, StatusCode::OK | StatusCode::CREATED)
        && !reply
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("etag"));
    let mut response = match reply.body {
        Some(body) if tagged => {
            let etag = super::etag::of(&body);
            resource(site, status, body, &etag)
        }
        Some(body) => hal(site, status, body),
        None => respond(status, "", Bytes::new()),
    };
    for (name, value) in &reply.headers {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            // Framing is hyper's business: a wrong Content-Length would corrupt the stream.
            (Ok(name), Ok(_))
                if name == header::CONTENT_LENGTH
                    || name == header::TRANSFER_ENCODING
                    || name == header::CONNECTION => {}
            (Ok(name), Ok(value)) => {
                response.headers_mut().insert(name, value);
            }
            _ => {
                let message = format!("the handler returned an invalid header {name:?}");
                let _ = entry.error.set(message.clone());
                return api_error(500, 900, &message);
            }
        }
    }
    response
}

fn add_headers(response: &mut Response<Body>, headers: &[(String, String)]) {
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(n, v);
        }
    }
}

fn hal(site: &Site, status: StatusCode, body: Bytes) -> Response<Body> {
    respond(status, &site.hal_content_type, body)
}

/// A representation of a resource: HAL with its strong ETag.
fn resource(site: &Site, status: StatusCode, body: Bytes, etag: &str) -> Response<Body> {
    let mut response = hal(site, status, body);
    if let Ok(v) = HeaderValue::from_str(etag) {
        response.headers_mut().insert(header::ETAG, v);
    }
    response
}

/// `{"code","message"}` with the given status (500 if it is not a valid status).
pub fn api_error(status: u16, code: u32, message: &str) -> Response<Body> {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    respond(
        status,
        JSON,
        Bytes::from(json!({"code": code, "message": message}).to_string()),
    )
}
