//! `POST /oauth/token`: the client-credentials grant exactly as the spec describes it.
//!
//! Refusals use the OAuth shape `{"error", "error_description"}`: 400 for a bad request
//! (`invalid_request`: headers or body; `unsupported_grant_type`; `invalid_scope`, including a
//! scope that does not match the credential kind), 401 `invalid_client` for missing, malformed
//! or unknown Basic credentials (with `WWW-Authenticate: Basic`), 405 for another method.

use base64::Engine as _;
use bytes::Bytes;
use hyper::http::{header, HeaderValue, Method, Response, StatusCode};
use serde_json::json;

use super::answer::{no_store, oauth_error, respond};
use super::body::Body;
use super::journal::{lock, Entry};
use super::tokens::Scope;
use super::Site;
use rp_core::media;

pub fn token(site: &Site, method: &Method, entry: &Entry) -> Response<Body> {
    if method != Method::POST {
        let mut r = oauth_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "invalid_request",
            "the token endpoint takes POST only",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    match issue(site, entry) {
        Ok(response) => response,
        Err(refusal) => {
            let mut r = oauth_error(refusal.status, refusal.error, &refusal.description);
            if refusal.status == StatusCode::UNAUTHORIZED {
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"oauth\""),
                );
            }
            r
        }
    }
}

/// An OAuth refusal, turned into its response at the end.
struct Refusal {
    status: StatusCode,
    error: &'static str,
    description: String,
}

fn bad_request(description: &str) -> Refusal {
    refuse(StatusCode::BAD_REQUEST, "invalid_request", description)
}

fn invalid_client(description: &str) -> Refusal {
    refuse(StatusCode::UNAUTHORIZED, "invalid_client", description)
}

fn refuse(status: StatusCode, error: &'static str, description: &str) -> Refusal {
    Refusal {
        status,
        error,
        description: description.to_owned(),
    }
}

fn issue(site: &Site, entry: &Entry) -> Result<Response<Body>, Refusal> {
    let accept = entry
        .headers
        .iter()
        .filter(|(n, _)| n == "accept")
        .map(|(_, v)| v.as_str());
    if !media::accepts(accept, "application/json", None) {
        return Err(bad_request("the Accept header must be application/json"));
    }
    if !media::is(
        entry.header("content-type"),
        "application/x-www-form-urlencoded",
    ) {
        return Err(bad_request(
            "the Content-Type header must be application/x-www-form-urlencoded",
        ));
    }
    let (user, password) = basic_credentials(entry.header("authorization"))?;

    let form: Vec<(String, String)> = form_urlencoded::parse(&entry.body).into_owned().collect();
    let field = |name: &str| -> Result<Option<&str>, Refusal> {
        let mut values = form.iter().filter(|(n, _)| n == name);
        let first = values.next().map(|(_, v)| v.as_str());
        if values.next().is_some() {
            return Err(bad_request(&format!("the parameter {name} is repeated")));
        }
        Ok(first)
    };
    let grant_type = field("grant_type")?;
    let scope = field("scope")?;

    let principal = match site.shared.store.read() {
        Ok(store) => store.authenticate(&user, &password),
        Err(poisoned) => poisoned.into_inner().authenticate(&user, &password),
    };
    let Some((principal, allowed)) = principal else {
        return Err(invalid_client("bad client credentials"));
    };
    match grant_type {
        None => return Err(bad_request("the parameter grant_type is required")),
        Some("client_credentials") => {}
        Some(other) => {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("unsupported grant type {other:?}: use client_credentials"),
            ))
        }
    }
    let scope = match scope {
        None => {
            return Err(bad_request(
                "the parameter scope is required (api or api_admin)",
            ))
        }
        Some("api") => Scope::Api,
        Some("api_admin") => Scope::ApiAdmin,
        Some(other) => {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                &format!("unknown scope {other:?}: use api or api_admin"),
            ))
        }
    };
    if scope != allowed {
        let description = match allowed {
            Scope::Api => "app credentials get the scope api only",
            Scope::ApiAdmin => "administrator credentials get the scope api_admin only",
        };
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            description,
        ));
    }

    let now = site.shared.clock.now();
    let ttl = site.shared.token_ttl;
    let token = lock(&site.shared.tokens).issue(&principal, scope, now, ttl);
    let body = json!({
        "access_token": token.access_token,
        "token_type": "bearer",
        // Always the full lifetime: a repeated request resets it.
        "expires_in": ttl.as_secs_f64().ceil() as u64,
        "scope": token.scope.as_str(),
        "jti": token.jti,
    });
    let mut response = respond(
        StatusCode::OK,
        "application/json;charset=UTF-8",
        Bytes::from(body.to_string()),
    );
    no_store(&mut response);
    Ok(response)
}

/// `Basic base64(user:password)`; the password may contain ':' (the user may not).
fn basic_credentials(value: Option<&str>) -> Result<(String, String), Refusal> {
    let Some(value) = value else {
        return Err(invalid_client(
            "an Authorization: Basic header with the client credentials is required",
        ));
    };
    let encoded = match value.trim().split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("basic") => rest.trim(),
        _ => {
            return Err(invalid_client(
                "the token endpoint takes Authorization: Basic credentials",
            ))
        }
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok());
    match decoded.as_deref().and_then(|s| s.split_once(':')) {
        Some((user, password)) => Ok((user.to_owned(), password.to_owned())),
        None => Err(invalid_client(
            "malformed Basic credentials: base64 of <user>:<password> expected",
        )),
    }
}
