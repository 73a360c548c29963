//! The wire on hyper's connections: pooled (pools.rs, http_client.rs) and made by our
//! connector (connect.rs: routes, TLS, HTTP/2 by ALPN), each new one bounded by its attempt
//! (connect_deadline.rs), one timer for the attempt, the body gathered within
//! `max_response_size` and gzip decoded in any spelling (body.rs), and hyper's errors told
//! apart by phase (`classify`).

mod body;
mod connect;
mod http_client;
mod pools;

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT, ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH,
    PROXY_AUTHORIZATION, RANGE, USER_AGENT,
};
use http::uri::{Authority, InvalidUri, Parts, PathAndQuery, Scheme};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Body;
use tokio::time::Sleep;

use crate::error::{Error, Result};
use crate::proxy::ProxySetting;
use crate::tls::Verify;
use crate::wire::{pairs, Driver, Limits, Outgoing, Phase, Response, Wire, WireError, WireFailure};
use body::{gunzip, is_gzip, Collected, Gunzip};
use http_client::SendError;
pub use pools::release_unused_here;

/// The most pooled connections found closed by their server (`connect::StaleConnection`)
/// that one attempt sends again past. Each one found is dropped, so this only bounds a server
/// that closed every idle connection of a busy async pool at once (a restart); past it the
/// attempt fails as one that wrote nothing.
const STALE_CONNECTIONS: u32 = 64;

/// The most headers `HyperWire::request` adds to a request's own: user-agent, accept,
/// accept-encoding and proxy-authorization.
const ADDED_HEADERS: usize = 4;

/// What the wire needs to know of the client's settings: the client's configuration holds it
/// (`ClientConfig::wire`), the wire keeps it whole and reads each field where it is used.
#[derive(Debug, Clone)]
pub struct WireSettings {
    pub verify: Verify,
    /// Part of the pool's key (clients built with another setting get their own connections);
    /// each attempt applies its own (`Limits::connect_timeout`).
    pub connect_timeout: Duration,
    pub proxy: ProxySetting,
    pub user_agent: HeaderValue,
    pub max_response_size: usize,
    /// Response headers whose first present value is the request id
    /// (docs/guides/errors.md#conflicts-rate-limits-and-request-ids).
    pub request_id_headers: Arc<[HeaderName]>,
}

/// Sends one exchange on a pooled connection; cheap to clone.
#[derive(Debug, Clone)]
pub struct HyperWire {
    lease: Arc<pools::PoolLease>,
    settings: Arc<WireSettings>,
    /// The first origin this wire sent to: the client's base URL, where its token requests
    /// and its calls go.
    origin: Arc<OnceLock<Origin>>,
}

/// An origin's scheme and authority as `http` parsed them once: a request to it is built from
/// them and its own path, without parsing the authority again (~500 instructions a request).
#[derive(Debug)]
struct Origin {
    /// As the `url` crate serializes it (canonical): `scheme://host[:port]`.
    serialized: String,
    scheme: Scheme,
    authority: Authority,
}

impl HyperWire {
    /// A wire on the pools for these settings; a bad CA bundle fails here.
    pub fn new(settings: WireSettings) -> Result<HyperWire> {
        let lease = pools::lease_for(&settings.verify, settings.connect_timeout, &settings.proxy)?;
        Ok(HyperWire {
            lease,
            settings: Arc::new(settings),
            origin: Arc::default(),
        })
    }

    /// The first of `request_id_headers` present in `headers` (names ignore case).
    fn request_id(&self, headers: &HeaderMap) -> Option<String> {
        self.settings.request_id_headers.iter().find_map(|name| {
            let value = headers.get(name)?;
            Some(String::from_utf8_lossy(value.as_bytes()).trim().to_owned())
        })
    }

    /// `url` (without userinfo) as `http` reads it: the same `Uri` as a parse of the whole
    /// text, its scheme and authority those of `origin` when it is on that origin.
    fn uri(&self, url: &url::Url) -> std::result::Result<Uri, InvalidUri> {
        // `http`'s limit on a whole URI (its parse refuses a longer one as too long).
        const MAX_URI: usize = u16::MAX as usize - 1;
        let (origin, rest) = url
            .as_str()
            .split_at(url[..url::Position::BeforePath].len());
        if let Some(known) = self.origin.get() {
            if known.serialized == origin && rest.starts_with('/') && url.as_str().len() <= MAX_URI
            {
                let mut parts = Parts::default();
                parts.scheme = Some(known.scheme.clone());
                parts.authority = Some(known.authority.clone());
                parts.path_and_query = Some(PathAndQuery::try_from(rest)?);
                if let Ok(uri) = Uri::from_parts(parts) {
                    return Ok(uri);
                }
            }
        }
        let uri = url.as_str().parse::<Uri>()?;
        if let (None, Some(scheme), Some(authority)) =
            (self.origin.get(), uri.scheme(), uri.authority())
        {
            let _ = self.origin.set(Origin {
                serialized: origin.to_owned(),
                scheme: scheme.clone(),
                authority: authority.clone(),
            });
        }
        Ok(uri)
    }

    /// The request as hyper sends it: the URL without userinfo (never sent), the client's
    /// headers, and the proxy's credentials when an http proxy takes it in absolute form.
    fn request(&self, outgoing: &Outgoing) -> std::result::Result<Request<Full<Bytes>>, String> {
        let uri = if outgoing.url.username().is_empty() && outgoing.url.password().is_none() {
            self.uri(&outgoing.url)
        } else {
            let mut url = outgoing.url.clone();
            crate::url::strip_userinfo(&mut url);
            self.uri(&url)
        }
        .map_err(|e| format!("invalid URL: {e}"))?;
        let body = outgoing.body.clone().unwrap_or_default();
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = outgoing.method.clone();
        // Sized once for the headers added below (a clone is sized to its length, and would
        // grow on the first insert); same names, values and order as the request's.
        let headers = request.headers_mut();
        *headers = HeaderMap::with_capacity(outgoing.headers.len() + ADDED_HEADERS);
        for (name, value) in &outgoing.headers {
            headers.append(name.clone(), value.clone());
        }
        headers.insert(USER_AGENT, self.settings.user_agent.clone());
        // What a client sends unless told otherwise: any type, and gzip, which is decoded here.
        headers
            .entry(ACCEPT)
            .or_insert_with(|| HeaderValue::from_static("*/*"));
        if !headers.contains_key(RANGE) {
            headers
                .entry(ACCEPT_ENCODING)
                .or_insert_with(|| HeaderValue::from_static("gzip"));
        }
        if uri.scheme_str() == Some("http") {
            let route = connect::route(self.lease.routes.as_deref(), &uri);
            if let Some(auth) = route.as_ref().and_then(|proxy| proxy.basic_auth()) {
                headers.insert(PROXY_AUTHORIZATION, auth.clone());
            }
        }
        *request.uri_mut() = uri;
        Ok(request)
    }
}

impl Wire for HyperWire {
    async fn exchange(
        &self,
        request: &Outgoing,
        driver: Driver,
        limits: Limits,
    ) -> Result<Response, WireError> {
        let method = request.method.as_str();
        let url = request.url.as_str();
        let client = pools::pooled_client(&self.lease, driver).map_err(WireError::Refused)?;
        // One timer for the whole attempt, head and body, registered once. The request is
        // polled before the timer (`before`), so a connect cut near the attempt's end
        // (connect_deadline.rs: a connect error, nothing written) is seen as that even when
        // the thread wakes after both are due; a late wake-up (a loaded machine, an emulated
        // CPU) must not make a never-sent POST "unknown".
        let mut timer = pin!(tokio::time::sleep(limits.timeout));
        // Cut by that timer once the connection was up: the request may have been written.
        let cut = |phase| WireFailure {
            phase,
            timeout: true,
            detail: format!("no answer within {:.3} s", limits.timeout.as_secs_f64()),
        };
        let mut stale = 0;
        let (response, taken) = loop {
            let outgoing = self.request(request).map_err(|detail| WireFailure {
                phase: Phase::BeforeWrite,
                timeout: false,
                detail,
            })?;
            let sending = crate::connect_deadline::within(
                limits.timeout,
                limits.connect_timeout,
                // Boxed: built here and moved by each future around it, it would be copied
                // whole at every move (~4k instructions a request).
                Box::pin(client.send(outgoing)),
            );
            match before(timer.as_mut(), sending).await {
                Some(Ok(sent)) => break sent,
                // A pooled connection its server had closed, nothing written (connect::Conn):
                // not a failure of this attempt. Each one found is dropped by the pool, so
                // this ends with a connection that is open (or a new one).
                Some(Err(e)) if stale < STALE_CONNECTIONS && is_stale(&e) => stale += 1,
                Some(Err(e)) => return Err(classify(&e).into()),
                None => return Err(cut(Phase::AwaitingHead).into()),
            }
        };
        let limit = self.settings.max_response_size;
        let (head, mut incoming) = response.into_parts();
        let status = head.status.as_u16();
        let mut headers = head.headers;
        let request_id = self.request_id(&headers);
        let too_large = |headers: &HeaderMap| {
            WireError::Refused(
                too_large(method, url, limit)
                    .with_response(status, pairs(headers))
                    .with_request_id(request_id.as_deref()),
            )
        };
        // The Content-Length, as hyper read it.
        let announced = incoming.size_hint().exact();
        if announced.is_some_and(|length| length > limit as u64) {
            return Err(too_large(&headers));
        }
        let mut body = Collected::Empty;
        loop {
            let frame = match before(timer.as_mut(), incoming.frame()).await {
                Some(Some(read)) => read.map_err(|e| body_failure(&e))?,
                Some(None) => break,
                None => return Err(cut(Phase::ReadingBody).into()),
            };
            let Ok(chunk) = frame.into_data() else {
                continue; // trailers
            };
            if body.len() + chunk.len() > limit {
                return Err(too_large(&headers));
            }
            body.push(chunk, announced.unwrap_or(0));
        }
        taken.done();
        let mut body = body.into_bytes();
        // Content codings ignore case (RFC 9110 §8.4.1): `gzip`, `GZIP` and `x-gzip` alike.
        if is_gzip(&headers) {
            body = gunzip(&body, limit).map_err(|e| match e {
                Gunzip::TooLarge => too_large(&headers),
                // The response came whole: its outcome is known, whatever the method.
                Gunzip::Corrupt(detail) => WireError::Refused(Error::Transport {
                    method: method.to_owned(),
                    url: url.to_owned(),
                    message: format!("response body failed: gzip: {detail}"),
                    outcome_unknown: false,
                }),
            })?;
            headers.remove(CONTENT_ENCODING);
            headers.remove(CONTENT_LENGTH);
        }
        Ok(Response {
            status,
            url: request.url.clone(),
            headers,
            body,
            request_id,
            after_processed_write: false,
        })
    }
}

/// `work`'s output, or `None` once `timer` has fired; `work` is polled first (as tokio's
/// `timeout` does), so an outcome ready when both are is not lost to the timer.
async fn before<F: Future>(mut timer: Pin<&mut Sleep>, work: F) -> Option<F::Output> {
    let mut work = pin!(work);
    poll_fn(|cx| {
        if let Poll::Ready(output) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        timer.as_mut().poll(cx).map(|()| None)
    })
    .await
}

fn too_large(method: &str, url: &str, limit: usize) -> Error {
    Error::Protocol {
        method: Some(method.to_owned()),
        url: Some(url.to_owned()),
        message: format!("response body exceeds max_response_size ({limit} bytes)"),
        response: None,
    }
}

/// `error` and its causes, outermost first.
fn chain<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |e| e.source())
}

/// An error with its causes, without repeating a cause its text already holds.
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    for cause in chain(error).skip(1) {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
    }
    text
}

/// Whether the attempt ran out of time somewhere in `error`'s causes (a connect cut by
/// connect_deadline.rs is an I/O error of kind `TimedOut`).
fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    chain(error).any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
            || cause
                .downcast_ref::<hyper::Error>()
                .is_some_and(hyper::Error::is_timeout)
    })
}

/// The phase of a failure before the head came, read from its kind and its causes, never from
/// its text.
fn classify(error: &SendError) -> WireFailure {
    // The error's own text names only its kind: the causes say it.
    let detail = match std::error::Error::source(error) {
        Some(cause) => describe(cause),
        None => error.to_string(),
    };
    let hyper_error = cause::<hyper::Error>(error);
    let phase = if matches!(error, SendError::Connect(_))
        || hyper_error.is_some_and(hyper::Error::is_canceled)
        || is_stale(error)
    {
        // hyper cancels a request only when it hands it back unwritten (a pooled connection
        // that closed before the request went out, one not ready); http_client.rs sends it
        // again on another connection when it can, and this is what is left when not; a stale
        // connection is refused before anything is written (connect::Conn).
        Phase::BeforeWrite
    } else if hyper_error.is_some_and(hyper::Error::is_body_write_aborted)
        || cause::<std::io::Error>(error)
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    {
        // EPIPE comes from a write only.
        Phase::Writing
    } else {
        // hyper does not say whether a failed write was the head's or the body's, nor tell it
        // from a read of the answer (`is_incomplete_message`, `is_closed`): written, maybe.
        Phase::AwaitingHead
    };
    WireFailure {
        phase,
        timeout: timed_out(error),
        detail,
    }
}

/// Whether `error` is a request refused, unwritten, on a pooled connection its server had
/// closed (`connect::StaleConnection`).
fn is_stale(error: &SendError) -> bool {
    cause::<std::io::Error>(error)
        .and_then(|io| io.get_ref())
        .is_some_and(|inner| inner.is::<connect::StaleConnection>())
}

/// A failure while the body was read: the head had come.
fn body_failure(error: &hyper::Error) -> WireFailure {
    WireFailure {
        phase: Phase::ReadingBody,
        timeout: timed_out(error),
        detail: describe(error),
    }
}

/// The first cause of `error` (itself excluded) that is an `E`.
fn cause<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    chain(error)
        .skip(1)
        .find_map(|cause| cause.downcast_ref::<E>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A URL on the wire's first origin is built from that origin's parts: the same `Uri` as
    /// a parse of its whole text, for any path, query or fragment, at the length limit too;
    /// other origins are parsed whole.
    #[test]
    fn a_uri_on_the_known_origin_is_the_parse_of_its_text() {
        let wire = HyperWire::new(WireSettings {
            verify: Verify::Off,
            connect_timeout: Duration::from_secs(5),
            proxy: ProxySetting::Off,
            user_agent: HeaderValue::from_static("rp-tests"),
            max_response_size: 1 << 20,
            request_id_headers: Arc::new([]),
        })
        .unwrap();
        let long = |n: usize| format!("http://127.0.0.1:8000/{}", "a".repeat(n));
        let limit = u16::MAX as usize - 1 - "http://127.0.0.1:8000/".len();
        let urls = [
            "http://127.0.0.1:8000/oauth/token".to_owned(),
            "http://127.0.0.1:8000/".to_owned(),
            "http://127.0.0.1:8000/a/b?c=d&e#frag".to_owned(),
            "http://127.0.0.1:8000/é ü/%zz?q=é#f g".to_owned(),
            "http://127.0.0.1:8000?q".to_owned(),
            "http://127.0.0.1:8001/x".to_owned(),
            "https://127.0.0.1:8000/x".to_owned(),
            "http://localhost:8000/x".to_owned(),
            "http://u:p@127.0.0.1:8000/x".to_owned(),
            "http://[::1]:8000/x".to_owned(),
            long(limit),
            long(limit + 1),
        ];
        for text in urls {
            let url = url::Url::parse(&text).unwrap();
            let whole = url.as_str().parse::<Uri>().map_err(|e| e.to_string());
            let built = wire.uri(&url).map_err(|e| e.to_string());
            assert_eq!(built, whole, "{text:.80}");
        }
        assert_eq!(
            wire.origin.get().unwrap().serialized,
            "http://127.0.0.1:8000"
        );
    }
}
