//! An access token as the token endpoint answers it (spec "Token response"), and when it is
//! worth sending.

use std::fmt;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use http::header::HeaderValue;

use crate::error::{Error, Result};
use crate::transport::{header_value, invalid_header_value};

/// An access token and when it runs out. `Debug` never shows the token itself.
#[derive(Clone)]
pub struct Token {
    pub access_token: String,
    pub token_type: String,
    pub scope: String,
    pub jti: String,
    /// `expires_in` as the server gave it, in seconds.
    pub expires_in: f64,
    pub(super) issued_wall: SystemTime,
    pub(super) issued: Instant,
    /// The `Authorization` value, made on first use and then cloned for every request (a
    /// reference count), not formatted and validated again each time.
    pub(super) authorization: OnceLock<Option<HeaderValue>>,
}

/// Longest token we accept: the spec allows 500 characters; leave room for a grown format.
const MAX_TOKEN_LENGTH: usize = 4096;

impl Token {
    /// Parse the token endpoint's JSON answer (spec: "Token response"). `requested_scope` is
    /// what the token request asked for: an omitted `scope` means that one (RFC 6749 §5.1).
    pub fn from_response(body: &[u8], requested_scope: &str) -> Result<Token> {
        let value: serde_json::Value = serde_json::from_slice(body)
            .map_err(|_| Error::protocol("token response is not JSON"))?;
        let object = value
            .as_object()
            .ok_or_else(|| Error::protocol("token response is not a JSON object"))?;
        let text = |key: &str| object.get(key).and_then(|v| v.as_str());
        // An optional field, if present, must be a string: a number or null is not "omitted".
        let optional_text = |key: &str| match object.get(key) {
            None => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(Error::protocol(format!(
                "token response has a {key} that is not a string"
            ))),
        };
        let access_token = text("access_token")
            .filter(|t| !t.is_empty())
            .ok_or_else(|| Error::protocol("token response has no access_token"))?;
        if access_token.len() > MAX_TOKEN_LENGTH
            || !access_token.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(Error::protocol(
                "token response has a malformed access_token",
            ));
        }
        let token_type = optional_text("token_type")?.unwrap_or("bearer");
        if !token_type.eq_ignore_ascii_case("bearer") {
            return Err(Error::protocol(format!(
                "token response has token_type {token_type:?}, expected \"bearer\""
            )));
        }
        let expires_in = match object.get("expires_in") {
            Some(v) => v
                .as_f64()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| Error::protocol("token response has an invalid expires_in"))?,
            None => return Err(Error::protocol("token response has no expires_in")),
        };
        let scope = optional_text("scope")?.unwrap_or(requested_scope);
        Ok(Token {
            access_token: access_token.to_owned(),
            // Token types are case-insensitive (RFC 6749 §5.1); we document the lower case.
            token_type: "bearer".to_owned(),
            scope: scope.to_owned(),
            jti: text("jti").unwrap_or_default().to_owned(),
            expires_in,
            issued_wall: SystemTime::now(),
            issued: Instant::now(),
            authorization: OnceLock::new(),
        })
    }

    /// Seconds of validity left (negative once expired).
    pub fn remaining(&self) -> f64 {
        self.expires_in - self.issued.elapsed().as_secs_f64()
    }

    /// When the token runs out, in seconds since the epoch.
    pub fn expires_at(&self) -> f64 {
        let issued = self
            .issued_wall
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        issued + self.expires_in
    }

    /// Still worth sending: more than `leeway` seconds left. The leeway never exceeds half the
    /// lifetime, so a short-lived token is not refetched before every request.
    pub fn is_fresh(&self, leeway: f64) -> bool {
        self.remaining() > leeway.min(self.expires_in / 2.0)
    }

    /// `Bearer <token>`, marked sensitive (http's `Debug` hides it); an error when the token
    /// cannot be a header value.
    pub fn authorization(&self) -> Result<HeaderValue> {
        self.authorization
            .get_or_init(|| {
                let mut value = header_value(&format!("Bearer {}", self.access_token)).ok()?;
                value.set_sensitive(true);
                Some(value)
            })
            .clone()
            .ok_or_else(invalid_header_value)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Token(scope={:?}, jti={:?}, expires_in={:.0})",
            self.scope,
            self.jti,
            self.remaining()
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn token(expires_in: f64) -> Token {
        let body = format!(
            r#"{{"access_token":"abc","token_type":"bearer","expires_in":{expires_in},"scope":"api","jti":"j"}}"#
        );
        Token::from_response(body.as_bytes(), "api").unwrap()
    }

    #[test]
    fn the_authorization_value_is_made_once_and_hidden_from_debug() {
        let token = token(60.0);
        let value = token.authorization().unwrap();
        assert_eq!(value.to_str().unwrap(), "Bearer abc");
        assert!(value.is_sensitive());
        assert!(!format!("{value:?}").contains("abc"));
        // The second request gets the same bytes, not a new value.
        assert_eq!(
            token.authorization().unwrap().as_bytes().as_ptr(),
            value.as_bytes().as_ptr()
        );
    }

    #[test]
    fn token_response_is_validated() {
        let t = token(998.0);
        assert_eq!((t.scope.as_str(), t.jti.as_str()), ("api", "j"));
        assert!(t.remaining() > 997.0 && t.remaining() <= 998.0);
        assert!(!format!("{t:?}").contains("abc"));
        for bad in [
            "nope",
            "[]",
            r#"{"token_type":"bearer","expires_in":1}"#,
            r#"{"access_token":"a","token_type":"mac","expires_in":1}"#,
            r#"{"access_token":"a","expires_in":"soon"}"#,
            r#"{"access_token":"a"}"#,
            r#"{"access_token":"a b","expires_in":1}"#,
            // Present but not a string: not the same as omitted.
            r#"{"access_token":"a","token_type":1,"expires_in":1}"#,
            r#"{"access_token":"a","token_type":null,"expires_in":1}"#,
            r#"{"access_token":"a","expires_in":1,"scope":["api"]}"#,
        ] {
            assert!(
                matches!(
                    Token::from_response(bad.as_bytes(), "api"),
                    Err(Error::Protocol { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn token_type_is_lower_case_and_an_omitted_scope_is_the_requested_one() {
        let body = br#"{"access_token":"a","token_type":"Bearer","expires_in":1}"#;
        let t = Token::from_response(body, "api_admin").unwrap();
        assert_eq!(
            (t.token_type.as_str(), t.scope.as_str()),
            ("bearer", "api_admin")
        );
        let body = br#"{"access_token":"a","token_type":"BEARER","expires_in":1,"scope":"api"}"#;
        let t = Token::from_response(body, "api_admin").unwrap();
        assert_eq!((t.token_type.as_str(), t.scope.as_str()), ("bearer", "api"));
        let omitted = Token::from_response(br#"{"access_token":"a","expires_in":1}"#, "api");
        assert_eq!(omitted.unwrap().token_type, "bearer");
    }

    #[test]
    fn leeway_is_at_most_half_the_lifetime() {
        assert!(token(960.0).is_fresh(30.0));
        assert!(token(20.0).is_fresh(30.0));
        assert!(!token(0.0).is_fresh(30.0));
    }
}
