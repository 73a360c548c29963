//! The sandbox's answers that more than one of its modules builds: a response with a body and
//! a content type, and the token endpoint's no-store OAuth errors (RFC 6749 §5.2).

use bytes::Bytes;
use hyper::http::{header, HeaderValue, Response, StatusCode};
use serde_json::json;

use super::body::{self, Body};

pub(crate) const JSON: &str = "application/json;charset=UTF-8";

pub fn respond(status: StatusCode, content_type: &str, body: Bytes) -> Response<Body> {
    let mut response = Response::new(body::full(body));
    *response.status_mut() = status;
    if !content_type.is_empty() {
        if let Ok(v) = HeaderValue::from_str(content_type) {
            response.headers_mut().insert(header::CONTENT_TYPE, v);
        }
    }
    response
}

/// An OAuth error body (RFC 6749 §5.2), no-store like every token endpoint answer.
pub fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response<Body> {
    let body = json!({"error": error, "error_description": description}).to_string();
    let mut r = respond(status, JSON, Bytes::from(body));
    no_store(&mut r);
    r
}

pub fn no_store(response: &mut Response<Body>) {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}
