//! Issued access tokens. One token per principal (app or admin user): asking again while it is
//! valid returns the same token with its lifetime reset, as the spec prescribes.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use base64::Engine as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Api,
    ApiAdmin,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Api => "api",
            Scope::ApiAdmin => "api_admin",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Token {
    pub access_token: String,
    pub scope: Scope,
    pub jti: String,
    /// Virtual time (see `Clock`) at which the token stops being accepted.
    pub expires_at: Duration,
}

/// Why a bearer token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Unknown,
    Expired,
}

#[derive(Debug, Default)]
pub struct Tokens {
    by_token: HashMap<String, Token>,
    /// Principal (`app:<name>` or `admin:<creditor>#<login>`) to its current access token.
    by_principal: HashMap<String, String>,
    /// Every access token issued, oldest first (the last `ISSUED_KEPT`): a test aid, so that a
    /// suite can check that no token ever shows in its logs (tests/secret_watch.py).
    issued: VecDeque<String>,
}

const ISSUED_KEPT: usize = 10_000;

impl Tokens {
    /// The principal's token: the current one with its lifetime reset while it is valid,
    /// otherwise a fresh one (the expired one is forgotten).
    ///
    /// A zero `ttl` (announced as `expires_in: 0`) gives a token accepted until `expire_all`:
    /// what a client must do with such a token is use it for the requests that waited for it,
    /// and that needs a server that still takes it.
    pub fn issue(&mut self, principal: &str, scope: Scope, now: Duration, ttl: Duration) -> Token {
        let expires_at = if ttl.is_zero() {
            Duration::MAX
        } else {
            now.saturating_add(ttl)
        };
        if let Some(current) = self.by_principal.get(principal) {
            if let Some(token) = self.by_token.get_mut(current) {
                if token.expires_at > now && token.scope == scope {
                    token.expires_at = expires_at;
                    return token.clone();
                }
            }
            let stale = current.clone();
            self.by_token.remove(&stale);
        }
        let token = Token {
            access_token: new_access_token(),
            scope,
            jti: uuid::Uuid::new_v4().to_string(),
            expires_at,
        };
        self.by_principal
            .insert(principal.to_owned(), token.access_token.clone());
        self.by_token
            .insert(token.access_token.clone(), token.clone());
        if self.issued.len() == ISSUED_KEPT {
            self.issued.pop_front();
        }
        self.issued.push_back(token.access_token.clone());
        token
    }

    /// The access tokens issued so far (the last 10,000), oldest first.
    pub fn issued(&self) -> Vec<String> {
        self.issued.iter().cloned().collect()
    }

    pub fn check(&self, access_token: &str, now: Duration) -> Result<Scope, Refusal> {
        match self.by_token.get(access_token) {
            None => Err(Refusal::Unknown),
            Some(t) if t.expires_at <= now => Err(Refusal::Expired),
            Some(t) => Ok(t.scope),
        }
    }

    /// Make every issued token expired as of `now`.
    pub fn expire_all(&mut self, now: Duration) {
        for token in self.by_token.values_mut() {
            token.expires_at = token.expires_at.min(now);
        }
    }
}

/// 48 random bytes, URL-safe base64: 64 characters, far below the 500-character limit.
fn new_access_token() -> String {
    let bytes: [u8; 48] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(960);

    #[test]
    fn a_zero_lifetime_lasts_until_expired_by_hand() {
        let mut tokens = Tokens::default();
        let a = tokens.issue("app:x", Scope::Api, Duration::ZERO, Duration::ZERO);
        let later = Duration::from_secs(1 << 40);
        assert_eq!(tokens.check(&a.access_token, later), Ok(Scope::Api));
        let b = tokens.issue("app:x", Scope::Api, later, Duration::ZERO);
        assert_eq!(
            a.access_token, b.access_token,
            "the same token while it is valid"
        );
        tokens.expire_all(later);
        assert_eq!(tokens.check(&a.access_token, later), Err(Refusal::Expired));
        let c = tokens.issue("app:x", Scope::Api, later, Duration::ZERO);
        assert_ne!(a.access_token, c.access_token);
    }

    #[test]
    fn same_token_while_valid_then_a_new_one() {
        let mut tokens = Tokens::default();
        let a = tokens.issue("app:x", Scope::Api, Duration::ZERO, TTL);
        assert!(a.access_token.len() <= 500);
        let b = tokens.issue("app:x", Scope::Api, Duration::from_secs(100), TTL);
        assert_eq!(a.access_token, b.access_token);
        assert_eq!(a.jti, b.jti);
        assert_eq!(b.expires_at, Duration::from_secs(1060));
        assert_eq!(
            tokens.check(&a.access_token, Duration::from_secs(1059)),
            Ok(Scope::Api)
        );
        assert_eq!(
            tokens.check(&a.access_token, Duration::from_secs(1060)),
            Err(Refusal::Expired)
        );
        let c = tokens.issue("app:x", Scope::Api, Duration::from_secs(2000), TTL);
        assert_ne!(a.access_token, c.access_token);
        assert_eq!(
            tokens.check(&a.access_token, Duration::ZERO),
            Err(Refusal::Unknown)
        );
        tokens.expire_all(Duration::from_secs(2001));
        assert_eq!(
            tokens.check(&c.access_token, Duration::from_secs(2001)),
            Err(Refusal::Expired)
        );
        // A renewed token is not issued again; a new one is.
        assert_eq!(tokens.issued(), vec![a.access_token, c.access_token]);
        assert_ne!(
            tokens
                .issue("app:y", Scope::Api, Duration::ZERO, TTL)
                .access_token,
            ""
        );
    }
}
