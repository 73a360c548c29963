//! The one error type of the core. `crates/python/src/errors.rs` is the single place that turns it into
//! the Python exceptions of `recurring_payments.errors`.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// What a non-2xx answer carried, kept whole so the Python exception can expose it.
#[derive(Debug, Clone)]
pub struct HttpFailure {
    pub status: u16,
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The 401 survived the single replay, or the token endpoint refused the credentials.
    pub authentication: bool,
    /// The first of the client's `request_id_headers` that the response carried
    /// (docs/guides/errors.md#conflicts-rate-limits-and-request-ids).
    pub request_id: Option<String>,
    /// A POST/PATCH of this call was processed before this answer came (answered 301/302/303):
    /// its result is not in hand (docs/guarantees.md#outcome).
    pub outcome_unknown: bool,
}

/// The status and headers of a response that broke the protocol (a 201 with a malformed body
/// still says that the resource was created, and where).
#[derive(Debug, Clone)]
pub struct ResponseFacts {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// As `HttpFailure::request_id`.
    pub request_id: Option<String>,
    /// As `HttpFailure::outcome_unknown`.
    pub outcome_unknown: bool,
}

#[derive(Debug, Clone)]
pub enum Error {
    /// Bad client settings: base URL, plain http to a remote host, bad CA file, ...
    Configuration(String),
    /// The library cannot work in the state this process or thread is in: its I/O runtime
    /// cannot start or is gone (a thread ending), a registry lock poisoned by a panic, a request
    /// started from a signal handler while this thread waits for another. Neither a setting
    /// nor the server caused it (Python `InternalError`, a `RuntimeError`).
    Internal(String),
    /// Connection refused or reset, TLS failure, body cut short. `outcome_unknown`: the
    /// caller's POST/PATCH may have reached the server and no complete answer came
    /// (docs/guarantees.md#outcome).
    Transport {
        method: String,
        url: String,
        message: String,
        outcome_unknown: bool,
    },
    Timeout {
        method: String,
        url: String,
        message: String,
        outcome_unknown: bool,
    },
    Http(Box<HttpFailure>),
    /// The peer broke the protocol: not JSON, not an object, wrong content type, too large.
    Protocol {
        method: Option<String>,
        url: Option<String>,
        message: String,
        response: Option<Box<ResponseFacts>>,
    },
    /// A redirect's target that the settings refuse (plain http off loopback, another
    /// scheme): Python `ConfigurationError`, carrying whether an earlier hop processed a write.
    Refused {
        message: String,
        outcome_unknown: bool,
    },
    /// Malformed RFC 6570 template.
    Template(String),
    /// A variable the template does not declare (Python `TypeError`).
    UnknownVariable(String),
    /// A relation lookup missed or was ambiguous.
    LinkNotFound {
        name: String,
        message: String,
    },
    /// A credentials provider raised, or returned something unusable (Python
    /// `ConfigurationError`). `cause`: what it raised, set by the binding as the exception's
    /// `__cause__`; the message names its type only (its text may hold a secret). `interrupt`:
    /// the cause is no error but an interruption (Ctrl-C, a task cancelled), raised as it is.
    Provider {
        message: String,
        cause: Option<Cause>,
        interrupt: bool,
    },
}

/// The exception a credentials provider raised, opaque to the core (a Python object, kept for
/// the binding), shared by every waiter of the flight it failed.
#[derive(Clone)]
pub struct Cause(pub Arc<dyn Any + Send + Sync>);

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cause(..)")
    }
}

impl Error {
    pub fn protocol(message: impl Into<String>) -> Self {
        Error::Protocol {
            method: None,
            url: None,
            message: message.into(),
            response: None,
        }
    }

    /// An `AuthenticationError`: from a token request, the endpoint refused the credentials.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Error::Http(failure) if failure.authentication)
    }

    /// Whether the server may have processed the caller's request (see `Transport`).
    pub fn outcome_unknown(&self) -> bool {
        match self {
            Error::Transport {
                outcome_unknown, ..
            }
            | Error::Timeout {
                outcome_unknown, ..
            }
            | Error::Refused {
                outcome_unknown, ..
            } => *outcome_unknown,
            Error::Http(failure) => failure.outcome_unknown,
            Error::Protocol {
                response: Some(facts),
                ..
            } => facts.outcome_unknown,
            _ => false,
        }
    }

    /// The same error with `outcome_unknown` set to `unknown` (where the kind carries it).
    pub fn with_outcome_unknown(mut self, unknown: bool) -> Self {
        match &mut self {
            Error::Transport {
                outcome_unknown, ..
            }
            | Error::Timeout {
                outcome_unknown, ..
            }
            | Error::Refused {
                outcome_unknown, ..
            } => *outcome_unknown = unknown,
            Error::Http(failure) => failure.outcome_unknown = unknown,
            Error::Protocol {
                response: Some(facts),
                ..
            } => facts.outcome_unknown = unknown,
            _ => {}
        }
        self
    }

    /// The request id of the response this error was raised for
    /// (docs/guides/errors.md#conflicts-rate-limits-and-request-ids), if none yet.
    pub fn with_request_id(mut self, id: Option<&str>) -> Self {
        let slot = match &mut self {
            Error::Http(failure) => &mut failure.request_id,
            Error::Protocol {
                response: Some(facts),
                ..
            } => &mut facts.request_id,
            _ => return self,
        };
        if slot.is_none() {
            *slot = id.map(str::to_owned);
        }
        self
    }

    /// The request id of the response this error was raised for
    /// (docs/guides/errors.md#conflicts-rate-limits-and-request-ids).
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Http(failure) => failure.request_id.as_deref(),
            Error::Protocol {
                response: Some(facts),
                ..
            } => facts.request_id.as_deref(),
            _ => None,
        }
    }

    /// Attach the response a protocol error was found in, if it has none yet.
    pub fn with_response(mut self, status: u16, headers: Vec<(String, String)>) -> Self {
        if let Error::Protocol { response, .. } = &mut self {
            if response.is_none() {
                *response = Some(Box::new(ResponseFacts {
                    status,
                    headers,
                    request_id: None,
                    outcome_unknown: false,
                }));
            }
        }
        self
    }

    /// Attach the request a protocol error happened on, if it has none yet.
    pub fn with_request(self, method: &str, url: &str) -> Self {
        match self {
            Error::Protocol {
                method: None,
                url: None,
                message,
                response,
            } => Error::Protocol {
                method: Some(method.to_owned()),
                url: Some(url.to_owned()),
                message,
                response,
            },
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Configuration(m)
            | Error::Internal(m)
            | Error::Template(m)
            | Error::UnknownVariable(m)
            | Error::Refused { message: m, .. }
            | Error::Provider { message: m, .. } => f.write_str(m),
            Error::Transport {
                method,
                url,
                message,
                ..
            }
            | Error::Timeout {
                method,
                url,
                message,
                ..
            } => write!(f, "{method} {url}: {message}"),
            Error::Http(h) => write!(f, "{} {}: HTTP {}", h.method, h.url, h.status),
            Error::Protocol {
                method: Some(m),
                url: Some(u),
                message,
                ..
            } => write!(f, "{m} {u}: {message}"),
            Error::Protocol { message, .. } => f.write_str(message),
            Error::LinkNotFound { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
