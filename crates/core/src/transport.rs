//! HTTP transport on reqwest: one connection pool per process and TLS, connect and proxy
//! settings (proxy.rs decides the routes), per-attempt timeouts, GET-only retries with backoff
//! and `Retry-After`, and a response size limit enforced while the body streams in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH};
use reqwest::Method;

use crate::attempts::{self, Attempt};
use crate::error::{Error, HttpFailure, Result};
pub use crate::proxy::ProxySetting;
use crate::proxy::Routes;
use crate::request::CallOptions;
use crate::runtime::{PerProcess, ThreadOwned};
use crate::tls::Verify;

#[derive(Debug, Clone)]
pub struct TransportConfig {
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retries: u32,
    pub max_response_size: usize,
    pub verify: Verify,
    pub user_agent: String,
    /// Response headers whose first present value is the request id (API.md §11).
    pub request_id_headers: Vec<HeaderName>,
    pub proxy: ProxySetting,
}

/// One request as the transport sends it.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub method: Method,
    pub url: url::Url,
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
}

/// A complete response, body read whole (and within the size limit).
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// The URL that answered (the last hop's, after redirects).
    pub url: url::Url,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The first of the client's `request_id_headers` present (API.md §11).
    pub request_id: Option<String>,
    /// A POST/PATCH of this call was processed by an earlier hop (answered 301/302/303): a
    /// failure found in this response leaves the call's outcome unknown (API.md §8).
    pub after_processed_write: bool,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Headers as (lower-case name, value) pairs; non-UTF-8 values are decoded lossily.
    pub fn header_pairs(&self) -> Vec<(String, String)> {
        pairs(&self.headers)
    }

    /// The body as text for error messages, at most `limit` bytes of it.
    pub fn body_text(&self, limit: usize) -> String {
        let end = self.body.len().min(limit);
        String::from_utf8_lossy(&self.body[..end]).into_owned()
    }

    pub fn into_failure(self, method: &str, authentication: bool) -> Error {
        Error::Http(Box::new(HttpFailure {
            status: self.status,
            method: method.to_owned(),
            url: self.url.to_string(),
            headers: self.header_pairs(),
            // Whole (it is in memory already, within `max_response_size`): a cut at 64 KiB
            // left a long validation error's `.json`, `.code` and `.message` as None.
            body: String::from_utf8_lossy(&self.body).into_owned(),
            authentication,
            request_id: self.request_id,
            outcome_unknown: false,
        }))
    }
}

/// Where a request runs, and so which pool its connections come from. hyper spawns a
/// connection's task on the runtime current when it connects; a connection must only be used
/// where that runtime is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// A task of the process's multi-thread runtime (`runtime::runtime`): the shared pool.
    Shared,
    /// The calling thread, inside `runtime::block_on_here`: that thread's own pool, whose
    /// connections are driven only while it waits on a request. Threads sharing a client
    /// each open their own connections, and a request needs no hand-off to a worker.
    ThisThread,
}

/// What a pool's connections depend on: TLS, the connect timeout and where they are routed
/// (proxies resolved from the setting and, when trusted, the environment).
type PoolKey = (Verify, Duration, Routes);

/// Held by every `Transport` built with the same TLS, connect and proxy settings (one per key in a
/// process). The pools built for a key live as long as its lease: when the last client using
/// them is dropped, so are they and their idle connections (API.md §8; 150 clients with
/// distinct settings used to keep 300 sockets open).
#[derive(Debug)]
struct PoolLease {
    key: PoolKey,
}

/// A pool and the lease that keeps it.
struct Pool {
    lease: Weak<PoolLease>,
    client: reqwest::Client,
}

impl Pool {
    fn alive(&self) -> bool {
        self.lease.strong_count() > 0
    }
}

type Pools = HashMap<PoolKey, Pool>;
static POOLS: PerProcess<Mutex<Pools>> = PerProcess::new();

thread_local! {
    /// `Driver::ThisThread` pools; dropped with the thread (after a fork, leaked in the child).
    static THREAD_POOLS: std::cell::RefCell<Option<ThreadOwned<Pools>>> =
        const { std::cell::RefCell::new(None) };
}

fn shared_pools() -> Result<std::sync::MutexGuard<'static, Pools>> {
    POOLS
        .get_or_try_init(|| Ok::<_, Error>(Mutex::new(HashMap::new())))?
        .lock()
        .map_err(|_| Error::Internal("connection pool registry poisoned".into()))
}

/// The lease for these settings: the one other clients already hold, or a new one.
fn lease_for(config: &TransportConfig) -> Result<Arc<PoolLease>> {
    let key = (
        config.verify.clone(),
        config.connect_timeout,
        Routes::resolve(&config.proxy),
    );
    let mut pools = shared_pools()?;
    if let Some(lease) = pools.get(&key).and_then(|p| p.lease.upgrade()) {
        return Ok(lease);
    }
    // Build the pool now so a bad CA bundle fails at construction; before the lease, whose
    // drop takes the registry's lock that this thread holds (a failure here deadlocked).
    let client = build_client(config, &key.2)?;
    let lease = Arc::new(PoolLease { key: key.clone() });
    pools.insert(
        key,
        Pool {
            lease: Arc::downgrade(&lease),
            client,
        },
    );
    Ok(lease)
}

impl Drop for PoolLease {
    /// The last client with these settings is gone: drop the process's shared pool for them.
    /// Thread pools are swept by their thread (`client_in`). Only this process's registry is
    /// touched; a lock is held for a map removal, never across an await.
    fn drop(&mut self) {
        if let Some(pools) = POOLS.get() {
            if let Ok(mut pools) = pools.lock() {
                if pools.get(&self.key).is_some_and(|p| !p.alive()) {
                    pools.remove(&self.key);
                }
            }
        }
    }
}

/// The pooled reqwest client for `lease`'s settings and this driver, built once per process
/// (shared) or per thread.
fn pooled_client(
    config: &TransportConfig,
    lease: &Arc<PoolLease>,
    driver: Driver,
) -> Result<reqwest::Client> {
    if driver == Driver::ThisThread {
        let gone = || Error::Internal("this thread's connection pool is gone".into());
        return THREAD_POOLS
            .try_with(|cell| {
                let mut slot = cell.try_borrow_mut().map_err(|_| gone())?;
                let pools = ThreadOwned::get_or_build(&mut slot, || Ok(HashMap::new()))?;
                client_in(pools, lease, config)
            })
            .map_err(|_| gone())?;
    }
    let mut pools = shared_pools()?;
    client_in(&mut pools, lease, config)
}

/// Drop this thread's pools that no client uses any more and close their idle connections:
/// for a sync client's `close` on the thread that used it. Otherwise they would wait for this
/// thread's next new pool (or its exit), their connections open until then, since those are
/// driven only while the thread waits on a request.
pub fn release_unused_here() {
    let unused: Vec<Pool> = THREAD_POOLS
        .try_with(|cell| {
            let Ok(mut slot) = cell.try_borrow_mut() else {
                return Vec::new(); // in a request on this thread (a signal handler's close)
            };
            let Some(pools) = ThreadOwned::get_mut(&mut slot) else {
                return Vec::new();
            };
            let dead = pools.extract_if(|_, pool| !pool.alive());
            dead.map(|(_, pool)| pool).collect()
        })
        .unwrap_or_default();
    if unused.is_empty() {
        return;
    }
    // Dropped on this thread's runtime, which then runs the connections' tasks, woken by
    // their pool's end, to theirs: one turn to see it, one to close.
    let _ = crate::runtime::block_on_here(async move {
        drop(unused);
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
    });
}

/// The client of `pools` for `lease`, built and added on first use (or after a fork, or after
/// the lease's previous pool was dropped). Adding one sweeps the pools nobody holds any more.
fn client_in(
    pools: &mut Pools,
    lease: &Arc<PoolLease>,
    config: &TransportConfig,
) -> Result<reqwest::Client> {
    if let Some(pool) = pools.get(&lease.key) {
        if std::ptr::eq(pool.lease.as_ptr(), Arc::as_ptr(lease)) {
            return Ok(pool.client.clone());
        }
    }
    pools.retain(|_, pool| pool.alive());
    let client = build_client(config, &lease.key.2)?;
    pools.insert(
        lease.key.clone(),
        Pool {
            lease: Arc::downgrade(lease),
            client: client.clone(),
        },
    );
    Ok(client)
}

fn build_client(config: &TransportConfig, routes: &Routes) -> Result<reqwest::Client> {
    // One TLS configuration per process and setting, shared by every pool (tls.rs).
    let tls = crate::tls::client_config(&config.verify)?;
    // Proxies are ours to decide (proxy.rs): reqwest's own reading of the environment is off.
    // No `connect_timeout` here: each attempt bounds its connects (connect_deadline.rs), with
    // the call's own setting when it has one, so a derived client needs no pool of its own.
    routes
        .apply(reqwest::Client::builder().no_proxy())?
        // RFC 9112 §5.2: a user agent unfolds an obs-folded header instead of failing.
        .http1_allow_obsolete_multiline_headers_in_responses(true)
        .pool_idle_timeout(Duration::from_secs(60))
        .tcp_nodelay(true)
        .connector_layer(crate::connect_deadline::Layer)
        // Redirects are followed by the client, hop by hop (client.rs): the token, the 401
        // replay and the method rules must see each hop.
        .redirect(reqwest::redirect::Policy::none())
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| Error::Internal(format!("cannot build the HTTP client: {}", describe(&e))))
}

/// Sends requests; cheap to clone.
#[derive(Debug, Clone)]
pub struct Transport {
    config: Arc<TransportConfig>,
    user_agent: HeaderValue,
    lease: Arc<PoolLease>,
}

/// The moment a call must be over by (`total_timeout`, API.md §8), and its length for messages.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
    pub total: Duration,
}

impl Deadline {
    pub fn after(total: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + total,
            total,
        }
    }

    /// When a call still running is dropped. Attempts and pauses stop at `at` by themselves and
    /// return their error, which a token flight then hands to every waiter; this later bound
    /// only catches what does not (waiting for a flight led by another caller).
    pub fn backstop(&self) -> tokio::time::Instant {
        (self.at + Duration::from_millis(100)).into()
    }

    fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// The timeout error of a call cut at its deadline.
    pub fn exceeded(&self, method: &str, url: &str, outcome_unknown: bool) -> Error {
        Error::Timeout {
            method: method.to_owned(),
            url: url.to_owned(),
            message: format!(
                "{TOTAL_TIMEOUT} of {:.3} s exceeded",
                self.total.as_secs_f64()
            ),
            outcome_unknown,
        }
    }
}

impl Transport {
    pub fn new(config: TransportConfig) -> Result<Transport> {
        let user_agent = HeaderValue::from_str(&config.user_agent).map_err(|_| {
            Error::Configuration("user_agent contains characters not allowed in a header".into())
        })?;
        let lease = lease_for(&config)?;
        Ok(Transport {
            config: Arc::new(config),
            user_agent,
            lease,
        })
    }

    pub fn config(&self) -> &TransportConfig {
        &self.config
    }

    /// Send with the retry policy (API.md §2, §8): a GET is retried on connection errors and
    /// 429/502/503/504 (honouring `Retry-After`); any method is retried when the failure
    /// proves the request never left (connection refused, DNS, connect timeout). Nothing that
    /// may have been written is retried unless it is a GET. No pause or attempt goes past
    /// `deadline`: the last outcome is returned instead, and an attempt is cut at it.
    /// `options`' timeouts and retries replace the client's (`with_options`, API.md §11).
    pub async fn send(
        &self,
        request: &Outgoing,
        options: &CallOptions,
        driver: Driver,
        log: &mut Vec<Attempt>,
        deadline: Deadline,
    ) -> Result<Response> {
        let idempotent = request.method == Method::GET;
        let timeout = options.timeout.unwrap_or(self.config.timeout);
        let connect_timeout = options
            .connect_timeout
            .unwrap_or(self.config.connect_timeout);
        let retries = options.retries.unwrap_or(self.config.retries);
        let mut attempt = 0;
        loop {
            let started = Instant::now();
            let started_unix_ns = attempts::unix_ns(SystemTime::now());
            // Logged before it is sent, completed after: a call dropped meanwhile (a cancelled
            // await, a KeyboardInterrupt) still tells of it (`attempts::cancel_pending`).
            log.push(Attempt {
                method: request.method.to_string(),
                url: attempts::redacted_url(&request.url),
                status: None,
                elapsed: Duration::ZERO,
                attempt: attempt + 1,
                error: None,
                started_unix_ns,
                ended_unix_ns: attempts::PENDING,
                token: false,
                resend_count: 0,
                error_kind: None,
                request_id: None,
            });
            let remaining = deadline.remaining();
            let cut = remaining < timeout;
            let limits = (remaining.min(timeout), connect_timeout);
            let mut outcome = self.send_once(request, driver, limits).await;
            if cut && deadline.remaining() < MIN_ATTEMPT {
                // The attempt ran to the call's deadline, not to `timeout` or `connect_timeout`:
                // say so, keeping what it knows of the outcome (a connect cut there sent nothing).
                if let Err(Error::Timeout {
                    method,
                    url,
                    outcome_unknown,
                    ..
                }) = &outcome
                {
                    outcome = Err(deadline.exceeded(method, url, *outcome_unknown));
                }
            }
            let elapsed = started.elapsed();
            if let Some(logged) = log.last_mut() {
                logged.status = outcome.as_ref().ok().map(|r| r.status);
                logged.elapsed = elapsed;
                logged.error = outcome.as_ref().err().map(|e| e.to_string());
                logged.ended_unix_ns = attempts::end_ns(started_unix_ns, elapsed);
                logged.error_kind = outcome.as_ref().err().map(attempts::error_kind);
                logged.request_id = match &outcome {
                    Ok(response) => response.request_id.clone(),
                    Err(error) => error.request_id().map(str::to_owned),
                };
            }
            let wait = match &outcome {
                _ if attempt >= retries => None,
                // The pause the server asks for, however long: the call's deadline bounds it
                // (below), as the caller set it.
                Ok(response) if idempotent && matches!(response.status, 429 | 502..=504) => {
                    Some(retry_after(response).unwrap_or_else(|| backoff(attempt)))
                }
                Err(error) if never_sent(error) => Some(backoff(attempt)),
                Err(Error::Transport { .. }) if idempotent => Some(backoff(attempt)),
                _ => None,
            };
            match wait {
                // The pause and at least a moment of the next attempt must fit in the deadline.
                // (A `Retry-After` of u64::MAX seconds must not overflow the sum.)
                Some(delay) if delay.saturating_add(MIN_ATTEMPT) < deadline.remaining() => {
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                _ => return outcome,
            }
        }
    }

    /// One attempt, cut at `timeout`; a new connection must be up within `connect_timeout`
    /// (and before the attempt's end).
    async fn send_once(
        &self,
        request: &Outgoing,
        driver: Driver,
        (timeout, connect_timeout): (Duration, Duration),
    ) -> Result<Response> {
        let method = request.method.as_str();
        let url = request.url.as_str();
        let failed = |e: &reqwest::Error| classify(e, &request.method, url);
        if driver == Driver::ThisThread {
            // This thread's idle connections were not polled while it was away: one turn reads
            // the pending I/O events, the next runs the woken connection tasks, so a close the
            // server sent meanwhile is seen before the pool hands that connection out.
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
        }
        if timeout.is_zero() {
            return Err(Error::Timeout {
                method: method.to_owned(),
                url: url.to_owned(),
                message: format!("{TOTAL_TIMEOUT} exceeded before the request was sent"),
                outcome_unknown: false,
            });
        }
        let client = pooled_client(&self.config, &self.lease, driver)?;
        let mut builder = client
            .request(request.method.clone(), request.url.clone())
            .headers(request.headers.clone())
            .header(reqwest::header::USER_AGENT, self.user_agent.clone());
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        // One timer for the whole attempt, ours rather than reqwest's `.timeout`: tokio's
        // `timeout_at` polls the request before its timer, so a connect cut near the attempt's
        // end (connect_deadline.rs: a connect error, nothing written) is seen as that even when
        // the thread wakes after both timers are due. reqwest checked its own timer first, and
        // a late wake-up (a loaded machine, an emulated CPU) made a never-sent POST "unknown".
        let ends = tokio::time::Instant::now() + timeout;
        let cut = || attempt_timed_out(&request.method, url, timeout);
        let sending = crate::connect_deadline::within(timeout, connect_timeout, builder.send());
        let mut response = match tokio::time::timeout_at(ends, sending).await {
            Ok(sent) => sent.map_err(|e| failed(&e))?,
            Err(_) => return Err(cut()),
        };
        let limit = self.config.max_response_size;
        let status = response.status().as_u16();
        let mut headers = std::mem::take(response.headers_mut());
        let request_id = self.request_id(&headers);
        let too_large = |headers: &HeaderMap| {
            too_large(method, url, limit)
                .with_response(status, pairs(headers))
                .with_request_id(request_id.as_deref())
        };
        if let Some(length) = response.content_length() {
            if length > limit as u64 {
                return Err(too_large(&headers));
            }
        }
        let announced = response.content_length().unwrap_or(0);
        let mut body = Collected::Empty;
        loop {
            let chunk = match tokio::time::timeout_at(ends, response.chunk()).await {
                Ok(read) => read.map_err(|e| failed(&e))?,
                Err(_) => return Err(cut()),
            };
            let Some(chunk) = chunk else { break };
            if body.len() + chunk.len() > limit {
                return Err(too_large(&headers));
            }
            body.push(chunk, announced);
        }
        let mut body = body.into_bytes();
        // reqwest decodes `gzip` spelled in lower case only; content codings ignore case
        // (RFC 9110 §8.4.1), so another spelling is decoded here.
        if is_gzip(&headers) {
            body = gunzip(&body, limit).map_err(|e| match e {
                Gunzip::TooLarge => too_large(&headers),
                Gunzip::Corrupt(detail) => Error::Transport {
                    method: method.to_owned(),
                    url: url.to_owned(),
                    message: format!("response body failed: gzip: {detail}"),
                    outcome_unknown: false,
                },
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

    /// The first of `request_id_headers` present in `headers` (names ignore case).
    fn request_id(&self, headers: &HeaderMap) -> Option<String> {
        self.config.request_id_headers.iter().find_map(|name| {
            let value = headers.get(name)?;
            Some(String::from_utf8_lossy(value.as_bytes()).trim().to_owned())
        })
    }
}

/// A `Content-Encoding` that is gzip in another spelling than reqwest's (`GZIP`, `x-gzip`).
fn is_gzip(headers: &HeaderMap) -> bool {
    let mut codings = headers.get_all(CONTENT_ENCODING).iter();
    match (codings.next(), codings.next()) {
        (Some(value), None) => value.to_str().is_ok_and(|v| {
            let v = v.trim();
            v.eq_ignore_ascii_case("gzip") || v.eq_ignore_ascii_case("x-gzip")
        }),
        _ => false,
    }
}

enum Gunzip {
    TooLarge,
    Corrupt(String),
}

/// A gzip body decoded, at most `limit` bytes of it (a small bomb stays small).
fn gunzip(body: &[u8], limit: usize) -> std::result::Result<Bytes, Gunzip> {
    use std::io::Read;
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    flate2::read::MultiGzDecoder::new(body)
        .take(cap)
        .read_to_end(&mut out)
        .map_err(|e| Gunzip::Corrupt(e.to_string()))?;
    if out.len() > limit {
        return Err(Gunzip::TooLarge);
    }
    Ok(Bytes::from(out))
}

/// A response body as it arrives. Most bodies come in one chunk, kept as it is (never copied);
/// a longer one is gathered in one buffer sized by its `Content-Length` (at most
/// `max_response_size`, checked before), not grown by doubling, which copied a large page
/// about twice more.
enum Collected {
    Empty,
    One(Bytes),
    Many(Vec<u8>),
}

impl Collected {
    fn len(&self) -> usize {
        match self {
            Collected::Empty => 0,
            Collected::One(chunk) => chunk.len(),
            Collected::Many(all) => all.len(),
        }
    }

    fn push(&mut self, chunk: Bytes, announced: u64) {
        *self = match std::mem::replace(self, Collected::Empty) {
            Collected::Empty => Collected::One(chunk),
            Collected::One(first) => {
                let size = first.len() + chunk.len();
                let announced = usize::try_from(announced).unwrap_or(size);
                let mut all = Vec::with_capacity(announced.max(size));
                all.extend_from_slice(&first);
                all.extend_from_slice(&chunk);
                Collected::Many(all)
            }
            Collected::Many(mut all) => {
                all.extend_from_slice(&chunk);
                Collected::Many(all)
            }
        };
    }

    fn into_bytes(self) -> Bytes {
        match self {
            Collected::Empty => Bytes::new(),
            Collected::One(chunk) => chunk,
            Collected::Many(all) => Bytes::from(all),
        }
    }
}

/// Headers as (lower-case name, value) pairs; non-UTF-8 values are decoded lossily.
pub fn pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// The failure proves the request never left this machine: retrying cannot duplicate it.
fn never_sent(error: &Error) -> bool {
    match error {
        Error::Transport { message, .. } => message.starts_with(CONNECT_FAILED),
        Error::Timeout { message, .. } => message.starts_with(CONNECT_TIMEOUT),
        _ => false,
    }
}

/// An attempt with less time than this left before the deadline is not started.
const MIN_ATTEMPT: Duration = Duration::from_millis(50);
const CONNECT_TIMEOUT: &str = "connect timeout";
const CONNECT_FAILED: &str = "connection failed";
const TOTAL_TIMEOUT: &str = "total_timeout";

/// Exponential backoff with jitter: ~0.1 s, 0.2 s, 0.4 s ... capped at 5 s.
fn backoff(attempt: u32) -> Duration {
    let base = 0.1 * 2f64.powi(attempt.min(6) as i32);
    let jitter = rand::random::<f64>() * base * 0.25;
    Duration::from_secs_f64((base + jitter).min(5.0))
}

/// `Retry-After` as seconds or an HTTP date.
fn retry_after(response: &Response) -> Option<Duration> {
    let value = response.header("retry-after")?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

fn too_large(method: &str, url: &str, limit: usize) -> Error {
    Error::Protocol {
        method: Some(method.to_owned()),
        url: Some(url.to_owned()),
        message: format!("response body exceeds max_response_size ({limit} bytes)"),
        response: None,
    }
}

/// reqwest's error with its causes, without the URL (we name the request ourselves).
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A reqwest failure as our error. Only a connect failure proves that nothing was written;
/// anything later may have reached the server, so a POST/PATCH's outcome is then unknown.
fn classify(error: &reqwest::Error, method: &Method, url: &str) -> Error {
    // reqwest names the URL in its text; we name the request ourselves, once.
    let mut detail = describe(error);
    if let Some(u) = error.url() {
        detail = detail
            .replace(&format!(" ({u})"), "")
            .replace(u.as_str(), "<url>");
    }
    let connect = error.is_connect();
    let outcome_unknown = !connect && is_write(method);
    let method = method.as_str().to_owned();
    let url = url.to_owned();
    if error.is_timeout() {
        let message = if connect {
            format!("{CONNECT_TIMEOUT}: {detail}")
        } else {
            format!("timed out: {detail}")
        };
        return Error::Timeout {
            method,
            url,
            message,
            outcome_unknown,
        };
    }
    let message = if connect {
        format!("{CONNECT_FAILED}: {detail}")
    } else if error.is_body() || error.is_decode() {
        format!("response body failed: {detail}")
    } else {
        detail
    };
    Error::Transport {
        method,
        url,
        message,
        outcome_unknown,
    }
}

/// A method whose request the server may have processed once written (POST, PATCH): its
/// outcome is unknown after a failure that may have come after the write.
pub fn is_write(method: &Method) -> bool {
    *method == Method::POST || *method == Method::PATCH
}

/// An attempt cut at its `timeout` after its connection was up: the request may have been
/// written, so a POST/PATCH's outcome is unknown (as `classify` says of a reqwest timeout).
fn attempt_timed_out(method: &Method, url: &str, timeout: Duration) -> Error {
    Error::Timeout {
        method: method.as_str().to_owned(),
        url: url.to_owned(),
        message: format!("timed out: no answer within {:.3} s", timeout.as_secs_f64()),
        outcome_unknown: is_write(method),
    }
}

/// Build a header value, rejecting control characters instead of panicking.
pub fn header_value(value: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(value).map_err(|_| invalid_header_value())
}

/// The error of a header value that HTTP does not allow (`header_value`, the token's).
pub fn invalid_header_value() -> Error {
    Error::Configuration("header value contains invalid characters".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_ca_bundle_fails_at_construction_and_the_registry_stays_usable() {
        let config = |verify| TransportConfig {
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            retries: 0,
            max_response_size: 1 << 20,
            verify,
            user_agent: "test".into(),
            request_id_headers: Vec::new(),
            proxy: ProxySetting::Environment,
        };
        // On a thread: the registry's lock, held by the failing build, deadlocked the caller.
        let (done, outcome) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let bad = || Transport::new(config(Verify::CaBundle("/nonexistent/ca.pem".into())));
            let refused = [bad(), bad()].map(|r| matches!(r, Err(Error::Configuration(_))));
            let _ = done.send((refused, Transport::new(config(Verify::Off)).is_ok()));
        });
        let outcome = outcome.recv_timeout(Duration::from_secs(20));
        assert_eq!(outcome.expect("deadlocked"), ([true, true], true));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert!(
            backoff(0) >= Duration::from_millis(100) && backoff(0) < Duration::from_millis(130)
        );
        assert!(backoff(3) >= Duration::from_millis(800));
        assert!(backoff(30) <= Duration::from_secs(5));
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        let response = Response {
            status: 503,
            url: url::Url::parse("https://h/").unwrap(),
            headers,
            body: Bytes::new(),
            request_id: None,
            after_processed_write: false,
        };
        assert_eq!(retry_after(&response), Some(Duration::from_secs(3)));
        let mut dated = response.clone();
        let later = std::time::SystemTime::now() + Duration::from_secs(120);
        dated.headers.insert(
            "retry-after",
            header_value(&httpdate::fmt_http_date(later)).unwrap(),
        );
        let wait = retry_after(&dated).unwrap();
        assert!(wait > Duration::from_secs(100) && wait <= Duration::from_secs(120));
    }
}
