//! What fleet mode puts in Redis (docs/guides/fleets.md): a key name that names no one, and the
//! token sealed with a key only the holders of the credentials can derive.
//!
//! Both come from one master secret stretched from the credentials with PBKDF2 (a reader of
//! Redis sees the key name and the ciphertext; stretching makes guessing a weak secret from
//! them slow), expanded with HKDF into an HMAC key (the key name) and an AES-256-GCM key (the
//! value). The crypto is ring's, the provider rustls already brings (crates/core/src/tls.rs).

use std::fmt;
use std::num::NonZeroU32;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use ring::{hkdf, hmac, pbkdf2};

use super::{Credentials, Token};
use crate::error::{Error, Result};

/// Stretching of the credentials: once per client, at construction (about 30 ms).
const ITERATIONS: u32 = 100_000;
/// A fixed salt: every process of the fleet must derive the same keys from the same inputs.
const SALT: &[u8] = b"recurring_payments token store v1";
/// First byte of a stored value: the format, so a later one can be told apart.
const FORMAT: u8 = 1;

/// The key names and the sealing key of one (base_url, scope, credentials).
pub struct Sealer {
    key: String,
    lock: String,
    aead: LessSafeKey,
    random: SystemRandom,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sealer({})", self.key)
    }
}

impl Sealer {
    pub fn new(base_url: &str, credentials: &Credentials) -> Result<Sealer> {
        let failed = || Error::Configuration("cannot derive the token store keys".into());
        // Every field length-prefixed: ("a", "bc") and ("ab", "c") must not collide.
        let mut identity = Vec::new();
        let fields: Vec<&str> = match credentials {
            Credentials::App {
                app_name,
                app_secret,
            } => vec!["app", app_name, app_secret],
            Credentials::Admin {
                creditor,
                login,
                password,
            } => vec!["admin", creditor, login, password],
        };
        for field in fields.iter().chain([&base_url, &credentials.scope()]) {
            identity.extend_from_slice(&(field.len() as u64).to_be_bytes());
            identity.extend_from_slice(field.as_bytes());
        }
        let mut master = [0u8; 32];
        let iterations = NonZeroU32::new(ITERATIONS).ok_or_else(failed)?;
        pbkdf2::derive(
            pbkdf2::PBKDF2_HMAC_SHA256,
            iterations,
            SALT,
            &identity,
            &mut master,
        );
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, SALT).extract(&master);
        let naming: hmac::Key = prk
            .expand(&[b"key name"], hmac::HMAC_SHA256)
            .map_err(|_| failed())?
            .into();
        let sealing: UnboundKey = prk
            .expand(&[b"token sealing"], &AES_256_GCM)
            .map_err(|_| failed())?
            .into();
        let tag = hmac::sign(&naming, b"recurring_payments token");
        let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        Ok(Sealer {
            key: format!("recurring_payments:token:{hex}"),
            lock: format!("recurring_payments:token:{hex}:lock"),
            aead: LessSafeKey::new(sealing),
            random: SystemRandom::new(),
        })
    }

    /// The Redis key of the token.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The Redis key of the renewal lock.
    pub fn lock(&self) -> &str {
        &self.lock
    }

    /// A random value that names one lock holder.
    pub fn lock_id(&self) -> String {
        let mut bytes = [0u8; 16];
        // A failing system RNG leaves zeros: the lock then only loses its owner check.
        let _ = self.random.fill(&mut bytes);
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `token` sealed with a fresh nonce; the key name is the associated data, so a value
    /// copied under another key does not open.
    pub fn seal(&self, token: &Token) -> Result<Vec<u8>> {
        let failed = || Error::Configuration("cannot seal the token".into());
        let plain = serde_json::json!({
            "access_token": token.access_token,
            "scope": token.scope,
            "jti": token.jti,
            "expires_in": token.expires_in,
            "expires_at": token.expires_at(),
        });
        let mut data = serde_json::to_vec(&plain).map_err(|_| failed())?;
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).map_err(|_| failed())?;
        self.aead
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(self.key.as_bytes()),
                &mut data,
            )
            .map_err(|_| failed())?;
        let mut sealed = Vec::with_capacity(1 + NONCE_LEN + data.len());
        sealed.push(FORMAT);
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&data);
        Ok(sealed)
    }

    /// The token in `sealed`, or `None` if it does not open (another format, tampered with,
    /// sealed with other credentials) or does not parse.
    pub fn open(&self, sealed: &[u8]) -> Option<Token> {
        let (&format, rest) = sealed.split_first()?;
        if format != FORMAT || rest.len() < NONCE_LEN {
            return None;
        }
        let (nonce, data) = rest.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut data = data.to_vec();
        let plain = self
            .aead
            .open_in_place(nonce, Aad::from(self.key.as_bytes()), &mut data)
            .ok()?;
        let value: serde_json::Value = serde_json::from_slice(plain).ok()?;
        let text = |k: &str| value.get(k)?.as_str().map(str::to_owned);
        let number = |k: &str| value.get(k)?.as_f64().filter(|n| n.is_finite());
        let lifetime = number("expires_in")?;
        let expires_at = number("expires_at")?;
        // Issued `lifetime` before it runs out, on the wall clock; on this process's monotonic
        // clock, that many seconds before now.
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
        let age = (now.as_secs_f64() - (expires_at - lifetime)).max(0.0);
        let age = Duration::try_from_secs_f64(age).ok()?;
        let issued = Instant::now().checked_sub(age)?;
        let issued_wall = SystemTime::now().checked_sub(age)?;
        Some(Token {
            access_token: text("access_token")?,
            token_type: "bearer".to_owned(),
            scope: text("scope")?,
            jti: text("jti")?,
            expires_in: lifetime,
            issued_wall,
            issued,
            authorization: std::sync::OnceLock::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(secret: &str) -> Credentials {
        Credentials::App {
            app_name: "shop-app".into(),
            app_secret: secret.into(),
        }
    }

    fn token() -> Token {
        let body = br#"{"access_token":"tok-123","expires_in":960,"scope":"api","jti":"j-1"}"#;
        Token::from_response(body, "api").unwrap()
    }

    #[test]
    fn names_hold_no_identity_and_depend_on_every_input() {
        let a = Sealer::new("https://api.example.com/", &app("s3cr3t")).unwrap();
        assert!(a.key().starts_with("recurring_payments:token:"));
        assert_eq!(a.key().len(), "recurring_payments:token:".len() + 64);
        assert!(!a.key().contains("shop") && !a.key().contains("s3cr3t"));
        let same = Sealer::new("https://api.example.com/", &app("s3cr3t")).unwrap();
        assert_eq!(a.key(), same.key());
        let other_secret = Sealer::new("https://api.example.com/", &app("other")).unwrap();
        let other_base = Sealer::new("https://api2.example.com/", &app("s3cr3t")).unwrap();
        assert_ne!(a.key(), other_secret.key());
        assert_ne!(a.key(), other_base.key());
        assert_ne!(a.key(), a.lock());
    }

    #[test]
    fn a_sealed_token_opens_only_with_the_same_credentials() {
        let a = Sealer::new("https://h/", &app("s3cr3t")).unwrap();
        let sealed = a.seal(&token()).unwrap();
        assert!(!sealed.windows(7).any(|w| w == b"tok-123"));
        assert_ne!(sealed, a.seal(&token()).unwrap(), "a fresh nonce per write");
        let opened = a.open(&sealed).unwrap();
        assert_eq!(opened.access_token, "tok-123");
        assert_eq!((opened.scope.as_str(), opened.jti.as_str()), ("api", "j-1"));
        assert!((opened.remaining() - 960.0).abs() < 2.0);
        assert!((opened.expires_at() - token().expires_at()).abs() < 2.0);
        let b = Sealer::new("https://h/", &app("guess")).unwrap();
        assert!(b.open(&sealed).is_none());
        let mut tampered = sealed.clone();
        let last = tampered.len() - 1;
        tampered[last] ^= 1;
        assert!(a.open(&tampered).is_none());
        assert!(a.open(b"").is_none() && a.open(&[FORMAT]).is_none());
    }
}
