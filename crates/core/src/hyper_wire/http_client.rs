//! A pool of connections over hyper's own connections (`hyper::client::conn`): an idle HTTP/1
//! connection is taken for one request and given back once its response was read whole; an
//! HTTP/2 connection is shared. A request on a reused connection that hyper hands back
//! unwritten (its connection closed first) goes out again on another one.
//!
//! Not hyper-util's client: per request, it hashes the origin with SipHash three times, races
//! a checkout against a connect and formats a `Host` header anew, about 10k instructions of a
//! warm follow (BENCHMARKS.md, "Instructions per follow").

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderValue, HOST};
use http::uri::{Authority, Scheme};
use http::{Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tower_service::Service;

use super::connect::{BoxError, Conn, Connector};
use crate::connect_deadline::Bounded;

/// How long an idle connection is kept for reuse.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

type Body = Full<Bytes>;

/// Why a request got no response head.
#[derive(Debug)]
pub(super) enum SendError {
    /// No connection: nothing was written.
    Connect(BoxError),
    /// The connection's own failure, as hyper reported it.
    Send(hyper::Error),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Connect(_) => f.write_str("connect failed"),
            SendError::Send(_) => f.write_str("request failed"),
        }
    }
}

impl std::error::Error for SendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SendError::Connect(e) => Some(&**e),
            SendError::Send(e) => Some(e),
        }
    }
}

/// Where a connection goes: a scheme and an authority, compared as sent.
#[derive(Debug, Clone)]
struct Origin {
    scheme: Scheme,
    authority: Authority,
}

impl Origin {
    fn of(uri: &Uri) -> Option<Origin> {
        Some(Origin {
            scheme: uri.scheme()?.clone(),
            authority: uri.authority()?.clone(),
        })
    }

    fn is(&self, other: &Origin) -> bool {
        self.authority.as_str() == other.authority.as_str() && self.scheme == other.scheme
    }

    /// What a connection to it is asked for (as hyper-util asked it).
    fn as_uri(&self) -> Result<Uri, http::Error> {
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query("/")
            .build()
    }

    /// The `Host` header of an HTTP/1 request to it: the port only when not the scheme's own.
    fn host(&self) -> Option<HeaderValue> {
        let host = self.authority.host();
        let default = match self.scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
        let value = match self.authority.port_u16() {
            Some(port) if Some(port) != default => format!("{host}:{port}"),
            _ => host.to_owned(),
        };
        HeaderValue::from_str(&value).ok()
    }
}

/// An HTTP/1 connection and what each request on it needs.
struct H1 {
    origin: Origin,
    sender: http1::SendRequest<Body>,
    host: Option<HeaderValue>,
    /// To an http proxy that takes requests in absolute form.
    forward: bool,
}

/// A connection the pool holds while no request uses it.
struct Idle {
    conn: H1,
    /// When it stops being reused (compared, not subtracted: a busy async pool holds many).
    until: Instant,
}

struct Shared {
    origin: Origin,
    sender: http2::SendRequest<Body>,
}

/// The connections of one pool (pools.rs: one per settings and driver).
pub(super) struct HttpClient {
    connector: Bounded<Connector>,
    idle: Mutex<Vec<Idle>>,
    h2: Mutex<Vec<Shared>>,
}

/// An HTTP/1 connection taken for one response: [`Taken::done`] gives it back once the
/// response was read whole; dropped before, the connection closes with the response.
pub(super) struct Taken {
    conn: Option<H1>,
    pool: Weak<HttpClient>,
}

enum Picked {
    H1(H1),
    H2(http2::SendRequest<Body>),
}

impl HttpClient {
    pub(super) fn new(connector: Bounded<Connector>) -> HttpClient {
        HttpClient {
            connector,
            idle: Mutex::new(Vec::new()),
            h2: Mutex::new(Vec::new()),
        }
    }

    /// Sends `request` (an absolute URI) on an idle connection to its origin, or a new one.
    pub(super) async fn send(
        self: &Arc<Self>,
        mut request: Request<Body>,
    ) -> Result<(Response<Incoming>, Taken), SendError> {
        let uri = request.uri().clone();
        let origin = Origin::of(&uri).ok_or_else(|| {
            SendError::Connect(format!("invalid URL, scheme and host required: {uri}").into())
        })?;
        loop {
            let (picked, reused) = match self.checkout(&origin) {
                Some(picked) => (picked, true),
                // Boxed: the handshakes' futures are large, and a warm request would move
                // their room with every future that holds this one.
                None => (Box::pin(self.connect(&origin)).await?, false),
            };
            let (sent, taken) = match picked {
                Picked::H2(mut sender) => (sender.try_send_request(request).await, None),
                Picked::H1(mut conn) => {
                    if let Some(host) = &conn.host {
                        request.headers_mut().entry(HOST).or_insert(host.clone());
                    }
                    if !conn.forward || origin.scheme == Scheme::HTTPS {
                        origin_form(request.uri_mut());
                    }
                    (conn.sender.try_send_request(request).await, Some(conn))
                }
            };
            let mut failed = match sent {
                Ok(response) => {
                    let taken = Taken {
                        conn: taken,
                        pool: Arc::downgrade(self),
                    };
                    return Ok((response, taken));
                }
                Err(failed) => failed,
            };
            // Handed back unwritten: on a reused connection that closed first, it goes out
            // again on another; on a new one, that is the failure.
            match failed.take_message() {
                Some(back) if reused => {
                    if taken.is_none() {
                        // An HTTP/2 connection that refused it (going away) is not offered
                        // again, so each turn of this loop leaves one connection fewer.
                        self.forget_shared(&origin);
                    }
                    request = back;
                    *request.uri_mut() = uri.clone();
                }
                _ => return Err(SendError::Send(failed.into_error())),
            }
        }
    }

    /// The most recently idle open connection to `origin` (dropping those closed or idle too
    /// long), or its shared HTTP/2 one.
    fn checkout(&self, origin: &Origin) -> Option<Picked> {
        if let Ok(mut idle) = self.idle.lock() {
            let now = Instant::now();
            let mut at = idle.len();
            while at > 0 {
                at -= 1;
                let entry = &idle[at];
                if !entry.conn.origin.is(origin) {
                    continue;
                }
                let entry = idle.remove(at);
                if now < entry.until && entry.conn.sender.is_ready() {
                    return Some(Picked::H1(entry.conn));
                }
            }
        }
        let mut shared = self.h2.lock().ok()?;
        shared.retain(|s| !s.sender.is_closed());
        let found = shared.iter().find(|s| s.origin.is(origin))?;
        found
            .sender
            .is_ready()
            .then(|| Picked::H2(found.sender.clone()))
    }

    fn forget_shared(&self, origin: &Origin) {
        if let Ok(mut shared) = self.h2.lock() {
            shared.retain(|s| !s.origin.is(origin));
        }
    }

    /// A new connection to `origin`, its task spawned on the runtime polling this.
    async fn connect(&self, origin: &Origin) -> Result<Picked, SendError> {
        let dst = origin
            .as_uri()
            .map_err(|e| SendError::Connect(Box::new(e)))?;
        let io: Conn = self
            .connector
            .clone()
            .call(dst)
            .await
            .map_err(SendError::Connect)?;
        if io.is_h2() {
            let mut builder = http2::Builder::new(TokioExecutor::new());
            builder.timer(TokioTimer::new());
            let (mut sender, conn) = builder.handshake(io).await.map_err(SendError::Send)?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            sender.ready().await.map_err(SendError::Send)?;
            if let Ok(mut shared) = self.h2.lock() {
                // One per origin: a connection made alongside (requests that all found none)
                // closes once its own requests are answered.
                shared.retain(|s| !s.origin.is(origin));
                shared.push(Shared {
                    origin: origin.clone(),
                    sender: sender.clone(),
                });
            }
            return Ok(Picked::H2(sender));
        }
        let forward = io.is_forward();
        let (mut sender, conn) = http1::Builder::new()
            // RFC 9112 §5.2: a user agent unfolds an obs-folded header instead of failing.
            .allow_obsolete_multiline_headers_in_responses(true)
            .handshake(io)
            .await
            .map_err(SendError::Send)?;
        // The connection's own error when it ends before it is ready (hyper's sender only
        // says "closed").
        let (failed_tx, failed) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                let _ = failed_tx.send(e);
            }
        });
        if let Err(e) = sender.ready().await {
            // Closed: the task has ended, and sent its error if it had one.
            let cause = if e.is_closed() {
                failed.await.unwrap_or(e)
            } else {
                e
            };
            return Err(SendError::Send(cause));
        }
        Ok(Picked::H1(H1 {
            host: origin.host(),
            origin: origin.clone(),
            sender,
            forward,
        }))
    }

    /// Keeps `conn` for the next request to its origin, and lets go of the connections that
    /// closed or were idle too long.
    fn put(&self, conn: H1) {
        if let Ok(mut idle) = self.idle.lock() {
            let now = Instant::now();
            idle.retain(|e| now < e.until && !e.conn.sender.is_closed());
            idle.push(Idle {
                conn,
                until: now + IDLE_TIMEOUT,
            });
        }
    }
}

impl Taken {
    /// The response was read whole: its connection is free for the next request, now or once
    /// hyper has made it ready (unless its server or hyper closes it).
    pub(super) fn done(mut self) {
        let (Some(conn), Some(pool)) = (self.conn.take(), self.pool.upgrade()) else {
            return;
        };
        if conn.sender.is_ready() {
            pool.put(conn);
        } else if !conn.sender.is_closed() {
            let pool = Arc::downgrade(&pool);
            tokio::spawn(async move {
                let mut conn = conn;
                if conn.sender.ready().await.is_ok() {
                    if let Some(pool) = pool.upgrade() {
                        pool.put(conn);
                    }
                }
            });
        }
    }
}

/// The request target of an HTTP/1 request straight to its server or through a tunnel: the
/// path and query only (RFC 9112 §3.2.1).
fn origin_form(uri: &mut Uri) {
    let path = match uri.path_and_query() {
        Some(path) if path.as_str() != "/" => {
            let mut parts = http::uri::Parts::default();
            parts.path_and_query = Some(path.clone());
            Uri::from_parts(parts).unwrap_or_default()
        }
        _ => Uri::default(),
    };
    *uri = path;
}
