//! Credentials, tokens and the single-flight token cache (API.md §3).

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;

use crate::error::{Error, Result};

/// The two kinds of credentials of the spec; secrets never appear in `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// App access, scope `api`: `<app_name>:<app_secret>`.
    App {
        app_name: String,
        app_secret: String,
    },
    /// Administrative access, scope `api_admin`: `<creditor>#<login>:<password>`.
    Admin {
        creditor: String,
        login: String,
        password: String,
    },
}

impl Credentials {
    pub fn scope(&self) -> &'static str {
        match self {
            Credentials::App { .. } => "api",
            Credentials::Admin { .. } => "api_admin",
        }
    }

    /// The value of the `Authorization` header of the token request.
    pub fn basic_authorization(&self) -> String {
        let pair = match self {
            Credentials::App {
                app_name,
                app_secret,
            } => format!("{app_name}:{app_secret}"),
            Credentials::Admin {
                creditor,
                login,
                password,
            } => format!("{creditor}#{login}:{password}"),
        };
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }

    /// Reject what cannot be encoded unambiguously in a Basic header.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Configuration(format!("invalid credentials: {what}")));
        match self {
            Credentials::App { app_name, .. } if app_name.is_empty() => bad("empty app_name"),
            Credentials::App { app_name, .. } if app_name.contains(':') => {
                bad("app_name must not contain ':'")
            }
            Credentials::Admin {
                creditor, login, ..
            } if creditor.is_empty() || login.is_empty() => bad("empty creditor or login"),
            Credentials::Admin {
                creditor, login, ..
            } if creditor.contains('#') || login.contains(':') => {
                bad("creditor must not contain '#' nor login ':'")
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::App { app_name, .. } => {
                write!(f, "AppCredentials(app_name={app_name:?}, app_secret='***')")
            }
            Credentials::Admin {
                creditor, login, ..
            } => write!(
                f,
                "AdminCredentials(creditor={creditor:?}, login={login:?}, password='***')"
            ),
        }
    }
}

/// An access token and when it runs out. `Debug` never shows the token itself.
#[derive(Clone)]
pub struct Token {
    pub access_token: String,
    pub token_type: String,
    pub scope: String,
    pub jti: String,
    /// `expires_in` as the server gave it, in seconds.
    pub expires_in: f64,
    issued_wall: SystemTime,
    issued: Instant,
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

    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.access_token)
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

/// The cached token of one client, with at most one token request in flight.
#[derive(Default)]
pub struct TokenCache {
    /// Held only to read or swap the pointer, never across an await.
    current: Mutex<Option<Arc<Token>>>,
    /// Serialises token requests; a tokio mutex so waiting tasks yield and cancellation frees it.
    refresh: tokio::sync::Mutex<()>,
}

impl TokenCache {
    pub fn current(&self) -> Option<Arc<Token>> {
        self.current.lock().ok().and_then(|guard| guard.clone())
    }

    fn store(&self, token: Option<Arc<Token>>) {
        if let Ok(mut guard) = self.current.lock() {
            *guard = token;
        }
    }

    /// A fresh token: the cached one, or one fetched by exactly one caller while others wait.
    pub async fn get<F, Fut>(&self, leeway: f64, fetch: F) -> Result<Arc<Token>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Token>>,
    {
        if let Some(token) = self.current().filter(|t| t.is_fresh(leeway)) {
            return Ok(token);
        }
        let _flight = self.refresh.lock().await;
        // Whoever held the lock before us may have fetched one already.
        if let Some(token) = self.current().filter(|t| t.is_fresh(leeway)) {
            return Ok(token);
        }
        let token = Arc::new(fetch().await?);
        self.store(Some(token.clone()));
        Ok(token)
    }

    /// Fetch a new token now, whatever is cached (still one request in flight at a time).
    pub async fn renew<F, Fut>(&self, fetch: F) -> Result<Arc<Token>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Token>>,
    {
        let _flight = self.refresh.lock().await;
        let token = Arc::new(fetch().await?);
        self.store(Some(token.clone()));
        Ok(token)
    }

    /// Forget `rejected` after a 401, unless another caller has replaced it already.
    pub fn invalidate(&self, rejected: &Arc<Token>) {
        if let Ok(mut guard) = self.current.lock() {
            if guard.as_ref().is_some_and(|t| Arc::ptr_eq(t, rejected)) {
                *guard = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn token(expires_in: f64) -> Token {
        let body = format!(
            r#"{{"access_token":"abc","token_type":"bearer","expires_in":{expires_in},"scope":"api","jti":"j"}}"#
        );
        Token::from_response(body.as_bytes(), "api").unwrap()
    }

    #[test]
    fn basic_header_follows_the_spec() {
        let app = Credentials::App {
            app_name: "shop-app".into(),
            app_secret: "s3cr3t".into(),
        };
        assert_eq!(app.basic_authorization(), "Basic c2hvcC1hcHA6czNjcjN0");
        assert_eq!(app.scope(), "api");
        let admin = Credentials::Admin {
            creditor: "democreditor".into(),
            login: "admin".into(),
            password: "pw".into(),
        };
        let expected = base64::engine::general_purpose::STANDARD.encode("democreditor#admin:pw");
        assert_eq!(admin.basic_authorization(), format!("Basic {expected}"));
        assert_eq!(admin.scope(), "api_admin");
        assert!(!format!("{app:?}{admin:?}").contains("s3cr3t"));
        assert!(!format!("{admin:?}").contains("pw'"));
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_token_request_for_many_waiters() {
        let cache = Arc::new(TokenCache::default());
        let fetches = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..32 {
            let (cache, fetches) = (cache.clone(), fetches.clone());
            tasks.push(tokio::spawn(async move {
                cache
                    .get(30.0, || async {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        Ok(token(960.0))
                    })
                    .await
                    .unwrap()
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn invalidate_only_drops_the_rejected_token() {
        let cache = TokenCache::default();
        let first = cache
            .get(30.0, || async { Ok(token(960.0)) })
            .await
            .unwrap();
        let second = cache.renew(|| async { Ok(token(960.0)) }).await.unwrap();
        cache.invalidate(&first);
        assert!(Arc::ptr_eq(&cache.current().unwrap(), &second));
        cache.invalidate(&second);
        assert!(cache.current().is_none());
    }
}
