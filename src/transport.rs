//! HTTP transport on reqwest: one connection pool per process and TLS setting, per-attempt
//! timeouts, GET-only retries with backoff and `Retry-After`, and a response size limit enforced
//! while the body streams in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::Method;

use crate::error::{Error, HttpFailure, Result};
use crate::runtime::{PerProcess, ThreadOwned};

/// How server certificates are checked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Verify {
    /// The system's trust store (honours `SSL_CERT_FILE`/`SSL_CERT_DIR`).
    System,
    /// No verification at all (`verify=False`).
    Off,
    /// Only the CA certificates of this PEM bundle.
    CaBundle(String),
}

#[derive(Debug, Clone)]
pub struct TransportConfig {
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retries: u32,
    pub max_response_size: usize,
    pub verify: Verify,
    pub user_agent: String,
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
    /// The URL that answered, after redirects.
    pub url: url::Url,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Headers as (lower-case name, value) pairs; non-UTF-8 values are decoded lossily.
    pub fn header_pairs(&self) -> Vec<(String, String)> {
        self.headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect()
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
            body: self.body_text(64 * 1024),
            authentication,
        }))
    }
}

/// What happened on one attempt, for the DEBUG log line the Python layer writes.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub method: String,
    pub url: String,
    pub status: Option<u16>,
    pub elapsed: Duration,
    pub attempt: u32,
    pub error: Option<String>,
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

type PoolKey = (Verify, Duration);
type Pools = HashMap<PoolKey, reqwest::Client>;
static POOLS: PerProcess<Mutex<Pools>> = PerProcess::new();

thread_local! {
    /// `Driver::ThisThread` pools; dropped with the thread (after a fork, leaked in the child).
    static THREAD_POOLS: std::cell::RefCell<Option<ThreadOwned<Pools>>> =
        const { std::cell::RefCell::new(None) };
}

/// The pooled reqwest client for these TLS and connect settings and this driver, built once
/// per process (shared) or per thread.
fn pooled_client(config: &TransportConfig, driver: Driver) -> Result<reqwest::Client> {
    let key = (config.verify.clone(), config.connect_timeout);
    if driver == Driver::ThisThread {
        let gone = || Error::Configuration("this thread's connection pool is gone".into());
        return THREAD_POOLS
            .try_with(|cell| {
                let mut slot = cell.try_borrow_mut().map_err(|_| gone())?;
                let pools = ThreadOwned::get_or_build(&mut slot, || Ok(HashMap::new()))?;
                client_in(pools, key, config)
            })
            .map_err(|_| gone())?;
    }
    let pools = POOLS.get_or_try_init(|| Ok::<_, Error>(Mutex::new(HashMap::new())))?;
    let mut pools = pools
        .lock()
        .map_err(|_| Error::Configuration("connection pool registry poisoned".into()))?;
    client_in(&mut pools, key, config)
}

/// The client of `pools` for `key`, built and added on first use.
fn client_in(pools: &mut Pools, key: PoolKey, config: &TransportConfig) -> Result<reqwest::Client> {
    if let Some(client) = pools.get(&key) {
        return Ok(client.clone());
    }
    let client = build_client(config)?;
    pools.insert(key, client.clone());
    Ok(client)
}

fn build_client(config: &TransportConfig) -> Result<reqwest::Client> {
    // One TLS configuration per process and setting, shared by every pool (src/tls.rs).
    let tls = crate::tls::client_config(&config.verify)?;
    reqwest::Client::builder()
        .connect_timeout(config.connect_timeout)
        .pool_idle_timeout(Duration::from_secs(60))
        .tcp_nodelay(true)
        .redirect(redirect_policy())
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| {
            Error::Configuration(format!("cannot build the HTTP client: {}", describe(&e)))
        })
}

/// Redirects followed per request before giving up.
const MAX_REDIRECTS: usize = 10;

/// Follow up to `MAX_REDIRECTS` redirects, but never from https down to plain http: that would
/// send the request (and whatever it carries) in clear after the caller asked for TLS.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let downgrade = attempt.url().scheme() == "http"
            && attempt.previous().iter().any(|u| u.scheme() == "https");
        if downgrade {
            attempt.error("refusing a redirect from https to plain http")
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// Sends requests; cheap to clone.
#[derive(Debug, Clone)]
pub struct Transport {
    config: Arc<TransportConfig>,
}

impl Transport {
    pub fn new(config: TransportConfig) -> Result<Transport> {
        // Build (or find) the pool now so a bad CA bundle fails at construction.
        pooled_client(&config, Driver::Shared)?;
        Ok(Transport {
            config: Arc::new(config),
        })
    }

    pub fn config(&self) -> &TransportConfig {
        &self.config
    }

    /// Send with the retry policy: only GET is retried, on connection errors and 502/503/504.
    pub async fn send(
        &self,
        request: &Outgoing,
        driver: Driver,
        log: &mut Vec<Attempt>,
    ) -> Result<Response> {
        let retries = if request.method == Method::GET {
            self.config.retries
        } else {
            0
        };
        let mut attempt = 0;
        loop {
            let started = Instant::now();
            let outcome = self.send_once(request, driver).await;
            log.push(Attempt {
                method: request.method.to_string(),
                url: request.url.to_string(),
                status: outcome.as_ref().ok().map(|r| r.status),
                elapsed: started.elapsed(),
                attempt: attempt + 1,
                error: outcome.as_ref().err().map(|e| e.to_string()),
            });
            let wait = match &outcome {
                _ if attempt >= retries => None,
                Ok(response) if matches!(response.status, 502..=504) => {
                    retry_after(response).map_or(Some(backoff(attempt)), |d| {
                        // A server asking for a long pause gets its answer, not a stalled caller.
                        (d <= MAX_RETRY_AFTER).then_some(d)
                    })
                }
                Err(Error::Transport { .. }) => Some(backoff(attempt)),
                Err(Error::Timeout { message, .. }) if message.starts_with(CONNECT_TIMEOUT) => {
                    Some(backoff(attempt))
                }
                _ => None,
            };
            match wait {
                Some(delay) => {
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                None => return outcome,
            }
        }
    }

    async fn send_once(&self, request: &Outgoing, driver: Driver) -> Result<Response> {
        let method = request.method.as_str();
        if driver == Driver::ThisThread {
            // This thread's idle connections were not polled while it was away: one turn reads
            // the pending I/O events, the next runs the woken connection tasks, so a close the
            // server sent meanwhile is seen before the pool hands that connection out.
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
        }
        let client = pooled_client(&self.config, driver)?;
        let mut builder = client
            .request(request.method.clone(), request.url.clone())
            .headers(request.headers.clone())
            .header(reqwest::header::USER_AGENT, &self.config.user_agent)
            .timeout(self.config.timeout);
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let url = request.url.as_str();
        let mut response = builder
            .send()
            .await
            .map_err(|e| classify(&e, method, url))?;
        let limit = self.config.max_response_size;
        if let Some(length) = response.content_length() {
            if length > limit as u64 {
                return Err(too_large(method, url, limit));
            }
        }
        let status = response.status().as_u16();
        let final_url = response.url().clone();
        let headers = std::mem::take(response.headers_mut());
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| classify(&e, method, url))?
        {
            if body.len() + chunk.len() > limit {
                return Err(too_large(method, url, limit));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Response {
            status,
            url: final_url,
            headers,
            body: Bytes::from(body),
        })
    }
}

const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: &str = "connect timeout";

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

fn classify(error: &reqwest::Error, method: &str, url: &str) -> Error {
    // reqwest names the URL in its text; we name the request ourselves, once.
    let mut detail = describe(error);
    if let Some(u) = error.url() {
        detail = detail
            .replace(&format!(" ({u})"), "")
            .replace(u.as_str(), "<url>");
    }
    if error.is_timeout() {
        let message = if error.is_connect() {
            format!("{CONNECT_TIMEOUT}: {detail}")
        } else {
            format!("timed out: {detail}")
        };
        return Error::Timeout {
            method: method.to_owned(),
            url: url.to_owned(),
            message,
        };
    }
    let message = if error.is_connect() {
        format!("connection failed: {detail}")
    } else if error.is_redirect() {
        format!("redirect failed: {detail}")
    } else if error.is_body() || error.is_decode() {
        format!("response body failed: {detail}")
    } else {
        detail
    };
    Error::Transport {
        method: method.to_owned(),
        url: url.to_owned(),
        message,
    }
}

/// Build a header value, rejecting control characters instead of panicking.
pub fn header_value(value: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(value)
        .map_err(|_| Error::Configuration("header value contains invalid characters".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
