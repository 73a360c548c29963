//! The credentials of a token request: given once (`Credentials`), or asked of a provider by
//! the leader of every token flight (`AskCredentials`, which the bindings implement: the core
//! never calls into Python). docs/guarantees.md lists what a provider may rely on.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use base64::Engine as _;
use http::header::HeaderValue;

use super::sealed::Sealer;
use crate::error::{Error, Result};
use crate::transport::header_value;

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

/// Asks a credentials provider for the credentials of one token request. The binding supplies
/// one with each call, made for where that call runs (the caller's thread, or its event loop):
/// only the leader of a token flight asks, and holds no lock while it waits.
pub trait AskCredentials: Send + Sync {
    fn ask(&self) -> Pin<Box<dyn Future<Output = Result<Credentials>> + Send + '_>>;
}

/// Where a client's credentials come from, as its constructor (or `with_options`) was given.
#[derive(Debug, Clone)]
pub enum CredentialSource {
    Fixed(Credentials),
    /// A provider, asked through the `AskCredentials` of each call; `name` is what messages
    /// call it (never its output).
    Provider {
        name: String,
    },
}

/// Credentials ready for token requests: the Basic header, and the token store's keys (derived
/// when first needed: PBKDF2 takes tens of milliseconds).
pub(crate) struct Basis {
    pub(crate) credentials: Credentials,
    pub(crate) basic: HeaderValue,
    sealer: OnceLock<Option<Arc<Sealer>>>,
}

impl Basis {
    pub(crate) fn new(credentials: Credentials) -> Result<Basis> {
        credentials.validate()?;
        let mut basic = header_value(&credentials.basic_authorization())
            .map_err(|_| Error::Configuration("credentials contain invalid characters".into()))?;
        basic.set_sensitive(true);
        Ok(Basis {
            credentials,
            basic,
            sealer: OnceLock::new(),
        })
    }

    pub(crate) fn scope(&self) -> &'static str {
        self.credentials.scope()
    }

    /// The token store's key names and sealing key for these credentials at `base_url`
    /// (`None` if they cannot be derived: the flight then does without the store).
    pub(crate) fn sealer(&self, base_url: &str) -> Option<Arc<Sealer>> {
        self.sealer
            .get_or_init(|| Sealer::new(base_url, &self.credentials).ok().map(Arc::new))
            .clone()
    }

    /// Whether the store's keys were derived (tests: only a client with a store pays for it).
    #[cfg(test)]
    pub(crate) fn sealer_derived(&self) -> bool {
        self.sealer.get().is_some()
    }
}

/// Distinct credentials a provider returned whose `Basis` is kept (a rotation goes through
/// two; a few more cost nothing).
const KEPT_BASES: usize = 4;

/// The credentials of one client identity.
pub(crate) enum Source {
    Fixed(Arc<Basis>),
    Provided(Provided),
}

pub(crate) struct Provided {
    name: String,
    /// The scope of the first credentials the provider returned: every later answer must be
    /// of the same class.
    scope: OnceLock<&'static str>,
    recent: Mutex<VecDeque<Arc<Basis>>>,
}

impl Source {
    pub(crate) fn new(source: CredentialSource) -> Result<Source> {
        Ok(match source {
            CredentialSource::Fixed(credentials) => {
                Source::Fixed(Arc::new(Basis::new(credentials)?))
            }
            CredentialSource::Provider { name } => Source::Provided(Provided {
                name,
                scope: OnceLock::new(),
                recent: Mutex::new(VecDeque::new()),
            }),
        })
    }

    /// The scope of this identity's tokens, once known (a provider's: after its first answer).
    pub(crate) fn scope(&self) -> Option<&'static str> {
        match self {
            Source::Fixed(basis) => Some(basis.scope()),
            Source::Provided(provided) => provided.scope.get().copied(),
        }
    }

    /// The credentials of the next token request: the fixed ones, or the provider's answer
    /// (asked through `ask`), checked.
    pub(crate) async fn basis(&self, ask: Option<&dyn AskCredentials>) -> Result<Arc<Basis>> {
        match self {
            Source::Fixed(basis) => Ok(basis.clone()),
            Source::Provided(provided) => {
                let ask = ask.ok_or_else(|| {
                    Error::Internal("a credentials provider was not given to this call".into())
                })?;
                let credentials = ask.ask().await?;
                provided.checked(credentials)
            }
        }
    }
}

impl Provided {
    fn checked(&self, credentials: Credentials) -> Result<Arc<Basis>> {
        let class = |scope: &str| match scope {
            "api" => "AppCredentials",
            _ => "AdminCredentials",
        };
        let scope = credentials.scope();
        let first = *self.scope.get_or_init(|| scope);
        if first != scope {
            return Err(Error::Configuration(format!(
                "the credentials provider {} returned {} after {}: it must return one class \
                 (the token's scope follows it)",
                self.name,
                class(scope),
                class(first)
            )));
        }
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        let known = recent.iter().position(|b| b.credentials == credentials);
        if let Some(basis) = known.and_then(|at| recent.remove(at)) {
            recent.push_front(basis.clone());
            return Ok(basis);
        }
        drop(recent);
        let basis = Arc::new(Basis::new(credentials).map_err(|e| match e {
            Error::Configuration(message) => Error::Configuration(format!(
                "the credentials provider {} returned unusable credentials: {message}",
                self.name
            )),
            other => other,
        })?);
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent.push_front(basis.clone());
        recent.truncate(KEPT_BASES);
        Ok(basis)
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
    fn a_provider_must_keep_to_the_class_it_first_returned() {
        let Ok(Source::Provided(provided)) = Source::new(CredentialSource::Provider {
            name: "read_secret".into(),
        }) else {
            panic!("a provider source")
        };
        assert!(provided.checked(app("one")).is_ok());
        let admin = Credentials::Admin {
            creditor: "c".into(),
            login: "l".into(),
            password: "hidden-pw".into(),
        };
        let Err(Error::Configuration(message)) = provided.checked(admin) else {
            panic!("the other class is refused")
        };
        assert!(message.contains("read_secret") && message.contains("AdminCredentials"));
        assert!(!message.contains("hidden-pw"));
        // Unusable fields are named, never quoted.
        let bad = Credentials::App {
            app_name: "a:b".into(),
            app_secret: "hidden".into(),
        };
        let Err(Error::Configuration(message)) = provided.checked(bad) else {
            panic!("a ':' in app_name is refused")
        };
        assert!(message.contains("read_secret") && !message.contains("hidden"));
    }

    #[test]
    fn equal_answers_reuse_their_basis_and_the_store_keys_follow_the_secret() {
        let Ok(Source::Provided(provided)) =
            Source::new(CredentialSource::Provider { name: "p".into() })
        else {
            panic!("a provider source")
        };
        let first = provided.checked(app("one")).unwrap();
        let again = provided.checked(app("one")).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let rotated = provided.checked(app("two")).unwrap();
        let (a, b) = (first.sealer("https://h/"), rotated.sealer("https://h/"));
        assert_ne!(a.unwrap().key(), b.unwrap().key());
        // The derivation is made once per basis.
        assert!(Arc::ptr_eq(
            &first.sealer("https://h/").unwrap(),
            &again.sealer("https://h/").unwrap()
        ));
    }
}
