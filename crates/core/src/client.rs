//! The core client (docs/design.md#the-path-of-a-call): token -> send -> redirects followed hop by
//! hop -> a 401 on a hop that carried our token replays that hop once -> response. The whole call
//! is bounded by `total_timeout`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{
    HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, IF_MATCH, LOCATION,
};
use http::Method;
use url::Url;

use crate::attempt_loop::{Deadline, Policy};
use crate::auth::{
    self, AskCredentials, Basis, CredentialSource, Landed, Lead, Requester, Source, StoreEvent,
    StoreSpec, Token, TokenCache,
};
use crate::error::{Error, Result};
use crate::hyper_wire::WireSettings;
use crate::media;
use crate::records::{self, Attempt};
use crate::request::{extra_headers, seconds, CallOptions, Prepared, Request};
use crate::runtime::PerProcess;
use crate::text::double_quoted;
use crate::transport::{header_value, Transport};
use crate::wire::{is_write, Driver, Outgoing, Response};

/// A client's settings: what the wire reads is one nested value (`wire`), kept whole by the
/// wire, never copied field by field (docs/design.md#where-a-new-setting-goes).
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub base_url: String,
    pub profile: String,
    pub credentials: CredentialSource,
    pub timeout: f64,
    pub retries: u32,
    pub token_leeway: f64,
    pub allow_http: bool,
    /// Bounds one whole call: token request, attempts, pauses, redirects, replay
    /// (docs/guarantees.md#deadline).
    pub total_timeout: f64,
    /// Extra headers for requests to the API's origin (not the token endpoint)
    /// (docs/guides/configuration.md).
    pub headers: Vec<(String, String)>,
    /// A Redis URL to share the token with the fleet (docs/guides/fleets.md); `None`: in process.
    pub token_store: Option<String>,
    /// TLS, connect timeout, proxy, user agent, size limit and request-id headers.
    pub wire: WireSettings,
}

/// A client acting as one app or dashboard user: its credentials and token, over what it
/// shares with every client derived from the same original (`with_credentials`).
pub struct Client {
    shared: Arc<Shared>,
    source: Source,
    /// Per process: a child after fork starts with an empty cache and unlocked locks (and
    /// opens its own connection to the token store).
    tokens: PerProcess<TokenCache>,
}

/// What every identity of one original client shares: its settings, connections and store.
struct Shared {
    base: Url,
    token_url: Url,
    accept: HeaderValue,
    leeway: f64,
    allow_http: bool,
    total_timeout: Duration,
    extra_headers: HeaderMap,
    transport: Transport,
    store: Option<StoreSpec>,
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Client> {
        let base = crate::url::parse_base(&config.base_url)?;
        check_scheme(&base, config.allow_http)?;
        let source = Source::new(config.credentials)?;
        let timeout = seconds("timeout", config.timeout)?;
        let connect_timeout = config.wire.connect_timeout;
        let total_timeout = seconds("total_timeout", config.total_timeout)?;
        let extra_headers = extra_headers(&config.headers)?;
        if !(config.token_leeway.is_finite() && config.token_leeway >= 0.0) {
            return Err(Error::Configuration("token_leeway must be >= 0".into()));
        }
        if config.wire.max_response_size == 0 {
            return Err(Error::Configuration("max_response_size must be > 0".into()));
        }
        if config.profile.is_empty() || config.profile.contains('"') {
            return Err(Error::Configuration(
                "profile must be a non-empty URL".into(),
            ));
        }
        let accept = header_value(&format!(
            "application/hal+json; profile=\"{}\"",
            config.profile
        ))?;
        let token_url = token_endpoint(&base);
        let store = match &config.token_store {
            None => None,
            Some(url) => Some(StoreSpec::new(
                url,
                config.token_leeway,
                connect_timeout,
                timeout,
            )?),
        };
        let policy = Policy {
            timeout,
            connect_timeout,
            retries: config.retries,
        };
        let transport = Transport::new(policy, config.wire)?;
        let shared = Shared {
            base,
            token_url,
            accept,
            leeway: config.token_leeway,
            allow_http: config.allow_http,
            total_timeout,
            extra_headers,
            transport,
            store,
        };
        Ok(Client {
            shared: Arc::new(shared),
            source,
            tokens: PerProcess::new(),
        })
    }

    /// A client acting with other credentials (`with_options(credentials=…)`): the same
    /// settings, connections and token store, its own token and token flight.
    pub fn with_credentials(&self, credentials: CredentialSource) -> Result<Client> {
        Ok(Client {
            shared: self.shared.clone(),
            source: Source::new(credentials)?,
            tokens: PerProcess::new(),
        })
    }

    /// The scope of this client's tokens, once known (a provider's: after its first answer).
    pub fn scope(&self) -> Option<&'static str> {
        self.source.scope()
    }

    pub fn base_url(&self) -> &Url {
        &self.shared.base
    }

    /// An absolute URL for `reference` (absolute, or relative to `base_url`).
    pub fn resolve(&self, reference: &str) -> Result<Url> {
        crate::url::resolve(&self.shared.base, reference)
    }

    /// An absolute URL for an href the server sent: one that cannot be resolved broke the
    /// protocol (`Protocol`), where a reference the caller gave is a `Configuration` error.
    pub fn resolve_href(&self, href: &str) -> Result<Url> {
        crate::url::resolve_server_href(&self.shared.base, href)
    }

    /// Same scheme, host and port as `base_url`: only there do we send the bearer token.
    pub fn is_api_origin(&self, url: &Url) -> bool {
        crate::url::same_origin(url, &self.shared.base)
    }

    fn cache(&self) -> Result<&TokenCache> {
        self.tokens.get_or_try_init(|| {
            Ok(match &self.shared.store {
                Some(spec) => TokenCache::with_store(spec),
                None => TokenCache::default(),
            })
        })
    }

    pub fn token(&self) -> Option<Arc<Token>> {
        self.cache().ok().and_then(TokenCache::current)
    }

    /// Fetch a token now (validates the credentials), within `total_timeout`. `headers`: this
    /// call's extra headers for the token request (the trace context,
    /// docs/guides/observability-otel.md); `store_log` receives the token store commands sent
    /// (docs/guides/fleets.md), as `log` the HTTP attempts. `ask`: how this call asks the
    /// credentials provider, if the client has one.
    #[allow(clippy::too_many_arguments)]
    pub async fn authenticate(
        &self,
        headers: &[(String, String)],
        options: &CallOptions,
        driver: Driver,
        ask: Option<&dyn AskCredentials>,
        log: &mut Vec<Attempt>,
        store_log: &mut Vec<StoreEvent>,
    ) -> Result<Arc<Token>> {
        let deadline = Deadline::after(options.total_timeout.unwrap_or(self.shared.total_timeout));
        let headers = extra_headers(headers)?;
        let cache = self.cache()?;
        let renewal = cache.renew(store_log, |lead| {
            self.lead_flight(lead, ask, &headers, options, driver, log, deadline)
        });
        let outcome = match tokio::time::timeout_at(deadline.backstop(), renewal).await {
            Ok(outcome) => outcome,
            Err(_) => Err(deadline.exceeded("POST", self.shared.token_url.as_str(), false)),
        };
        records::settle(log, outcome.as_ref().err());
        outcome
    }

    /// Check, expand and resolve `request` (see `Request::prepare`): nothing is sent.
    pub fn prepare(&self, request: Request) -> Result<Prepared> {
        request.prepare(&self.shared.base)
    }

    /// One API call with the protocol's rules; `log` receives every attempt, `store_log` the
    /// token store commands (docs/guides/fleets.md). `driver` says where this future is polled (and
    /// so which connection pool it uses); `ask` how it asks the credentials provider, if there is
    /// one.
    pub async fn send(
        &self,
        request: Prepared,
        driver: Driver,
        ask: Option<&dyn AskCredentials>,
        log: &mut Vec<Attempt>,
        store_log: &mut Vec<StoreEvent>,
    ) -> Result<Response> {
        let total_timeout = request.options().total_timeout;
        let deadline = Deadline::after(total_timeout.unwrap_or(self.shared.total_timeout));
        // A POST/PATCH of this call was processed: answered by 301/302/303 (a 401, 307 or 308
        // says it was not).
        let mut processed = false;
        // Boxed where it is made: the hops' future (KBs) is then never moved by value by the
        // futures that await this call.
        let call = self.follow_hops(
            request,
            driver,
            ask,
            log,
            store_log,
            deadline,
            &mut processed,
        );
        let outcome = Box::pin(call).await;
        records::settle(log, outcome.as_ref().err());
        // A failure after a POST/PATCH of this call was processed (answered by 301/302/303):
        // the call's outcome is unknown to the caller even though this hop was a GET, whatever
        // the failure (a 401 that stays, a refused Location, a transport error:
        // docs/guarantees.md#outcome).
        match outcome {
            Ok(mut response) => {
                response.after_processed_write = processed;
                Ok(response)
            }
            Err(e) if processed => Err(e.with_outcome_unknown(true)),
            Err(e) => Err(e),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn follow_hops(
        &self,
        request: Prepared,
        driver: Driver,
        ask: Option<&dyn AskCredentials>,
        log: &mut Vec<Attempt>,
        store_log: &mut Vec<StoreEvent>,
        deadline: Deadline,
        processed: &mut bool,
    ) -> Result<Response> {
        let api_headers = request.api_headers;
        let options = request.options;
        let options = options.as_deref().unwrap_or(CallOptions::none());
        // A derived client's headers replace the client's (merged by name in `with_options`).
        let shared = &*self.shared;
        let extra_headers = options.headers.as_ref().unwrap_or(&shared.extra_headers);
        let mut hop = Hop {
            method: request.method,
            url: request.url,
            headers: request.headers,
            body: request.body,
        };
        hop.headers.insert(ACCEPT, shared.accept.clone());
        let mut redirects = 0;
        // Once a chain leaves the API's origin, no later hop carries our token, even one that
        // comes back: the other origin chose where it leads (requests and httpx do the same).
        let mut left_origin = false;
        let mut replayed = false;
        loop {
            check_scheme(&hop.url, shared.allow_http).map_err(|e| match e {
                // A hop the server chose: refused as the settings say, but its error must be
                // able to say that an earlier hop processed a write (`Client::send`).
                Error::Configuration(message) if redirects > 0 => Error::Refused {
                    message,
                    outcome_unknown: false,
                },
                other => other,
            })?;
            let ours = !left_origin && self.is_api_origin(&hop.url);
            let mut headers = hop.headers.clone();
            if ours {
                for (name, value) in extra_headers.iter().chain(&api_headers) {
                    headers.insert(name, value.clone());
                }
            }
            let token = if ours {
                let cache = self.cache()?;
                let token = match cache.fresh(shared.leeway) {
                    Some(token) => token,
                    // Boxed: the flight's future (~3.4 KB) is not part of every hop's state,
                    // which a warm call moves and copies.
                    None => {
                        let flight = cache.get(shared.leeway, store_log, |lead| {
                            self.lead_flight(
                                lead,
                                ask,
                                &api_headers,
                                options,
                                driver,
                                log,
                                deadline,
                            )
                        });
                        within_backstop(deadline, &hop, Box::pin(flight))
                            .await
                            .map_err(|e| e.with_outcome_unknown(false))?
                    }
                };
                headers.insert(AUTHORIZATION, token.authorization()?);
                Some(token)
            } else {
                None
            };
            let outgoing = Outgoing {
                method: hop.method.clone(),
                url: hop.url.clone(),
                headers,
                body: hop.body.clone(),
            };
            // Each attempt stops at the deadline by itself (attempt_loop.rs): no backstop.
            let response = shared
                .transport
                .send(&outgoing, options, driver, log, deadline)
                .await?;
            *processed |= is_write(&outgoing.method) && matches!(response.status, 301..=303);
            let method = outgoing.method.as_str();
            if response.status == 401 && self.is_api_origin(&response.url) {
                match &token {
                    // The hop carried our token: renew it and send this hop again, once.
                    Some(token) if !replayed => {
                        let cache = self.cache()?;
                        // Boxed, as the flight above: rare, and not carried by every hop.
                        let forgetting = cache.invalidate(token, store_log, deadline.at);
                        let forgetting = async {
                            Box::pin(forgetting).await;
                            Ok(())
                        };
                        within_backstop(deadline, &hop, forgetting).await?;
                        replayed = true;
                        continue;
                    }
                    _ => return Err(response.into_failure(method, true)),
                }
            }
            if let Some(next) = self.redirect(&hop, &response)? {
                redirects += 1;
                if redirects > MAX_REDIRECTS {
                    return Err(redirect_error(
                        &hop,
                        format!("more than {MAX_REDIRECTS} redirects"),
                    ));
                }
                left_origin |= !self.is_api_origin(&next.url);
                hop = next;
                replayed = false;
                continue;
            }
            return check_success(method, response);
        }
    }

    /// The next hop when `response` is a redirect to follow, else `None` (RFC 9110 §15.4).
    fn redirect(&self, hop: &Hop, response: &Response) -> Result<Option<Hop>> {
        if !matches!(response.status, 301 | 302 | 303 | 307 | 308) {
            return Ok(None);
        }
        let Some(location) = response.header(LOCATION.as_str()) else {
            return Ok(None); // a 3xx without a target is answered as it is
        };
        let mut url = hop.url.join(location).map_err(|_| {
            redirect_error(
                hop,
                format!("unusable Location {}", double_quoted(location)),
            )
        })?;
        // The server's `u:pw@` is never sent as Basic credentials, nor shown (see `prepare`).
        crate::url::strip_userinfo(&mut url);
        if url.scheme() == "http" && hop.url.scheme() == "https" {
            return Err(redirect_error(
                hop,
                "refusing a redirect from https to plain http".into(),
            ));
        }
        if !matches!(url.scheme(), "http" | "https") {
            return Err(redirect_error(
                hop,
                format!("refusing a redirect to {:?}", url.scheme()),
            ));
        }
        // 303, and 301/302 after a POST or PATCH, continue as a GET without the body: the
        // request was processed and is never sent again. 307/308 send it again, as asked.
        let keep = match response.status {
            303 => false,
            301 | 302 => hop.method == Method::GET,
            _ => true,
        };
        Ok(Some(if keep {
            Hop { url, ..hop.clone() }
        } else {
            let mut headers = hop.headers.clone();
            headers.remove(CONTENT_TYPE);
            headers.remove(IF_MATCH);
            Hop {
                method: Method::GET,
                url,
                headers,
                body: None,
            }
        }))
    }

    /// The leader's work in a token flight (`auth::lead`): the provider asked once, and the
    /// token obtained from the store or the token endpoint.
    #[allow(clippy::too_many_arguments)]
    async fn lead_flight(
        &self,
        lead: Lead<'_>,
        ask: Option<&dyn AskCredentials>,
        call_headers: &HeaderMap,
        options: &CallOptions,
        driver: Driver,
        log: &mut Vec<Attempt>,
        deadline: Deadline,
    ) -> Result<Landed> {
        let mut requester = TokenRequester {
            client: self,
            lead,
            call_headers,
            options,
            driver,
            log,
            deadline,
        };
        auth::lead(&self.source, ask, &mut requester).await
    }

    async fn fetch_token(
        &self,
        basis: &Basis,
        call_headers: &HeaderMap,
        options: &CallOptions,
        driver: Driver,
        log: &mut Vec<Attempt>,
        deadline: Deadline,
    ) -> Result<Token> {
        let mut headers = call_headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(AUTHORIZATION, basis.basic.clone());
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        let scope = basis.scope();
        let body = format!("grant_type=client_credentials&scope={scope}");
        let shared = &*self.shared;
        let outgoing = Outgoing {
            method: Method::POST,
            url: shared.token_url.clone(),
            headers,
            body: Some(Bytes::from(body)),
        };
        // The token request is not the caller's request: its outcome is never "unknown".
        let first = log.len();
        let sent = (shared.transport)
            .send(&outgoing, options, driver, log, deadline)
            .await;
        records::mark_token_requests(log.get_mut(first..).unwrap_or_default());
        let response = sent.map_err(|e| e.with_outcome_unknown(false))?;
        match response.status {
            200..=299 => Token::from_response(&response.body, scope).map_err(|e| {
                e.with_request("POST", shared.token_url.as_str())
                    .with_response(response.status, response.header_pairs())
                    .with_request_id(response.request_id.as_deref())
            }),
            400 | 401 => Err(response.into_failure("POST", true)),
            _ => Err(response.into_failure("POST", false)),
        }
    }
}

/// The token requests of one flight, made by its leader (see `auth::lead`).
struct TokenRequester<'a, 'c> {
    client: &'c Client,
    lead: Lead<'a>,
    call_headers: &'c HeaderMap,
    options: &'c CallOptions,
    driver: Driver,
    log: &'c mut Vec<Attempt>,
    deadline: Deadline,
}

impl Requester for TokenRequester<'_, '_> {
    async fn obtain(&mut self, basis: Arc<Basis>) -> Result<Landed> {
        let client = self.client;
        let (headers, options, driver, deadline) =
            (self.call_headers, self.options, self.driver, self.deadline);
        let log = &mut *self.log;
        let base_url = client.shared.base.as_str();
        self.lead
            .obtain(&basis, base_url, deadline.at, || {
                client.fetch_token(&basis, headers, options, driver, log, deadline)
            })
            .await
    }
}

/// Redirects followed per call before giving up.
const MAX_REDIRECTS: usize = 10;

/// One request of a call's redirect chain.
#[derive(Debug, Clone)]
struct Hop {
    method: Method,
    url: Url,
    /// Accept, and for a body its Content-Type and If-Match (not the token: added per hop).
    headers: HeaderMap,
    body: Option<Bytes>,
}

/// `wait` cut at the call's backstop (`Deadline::backstop`): for the waits that do not stop
/// at the deadline by themselves (a token flight led by another caller). Nothing of `hop` is
/// written while it waits.
async fn within_backstop<T>(
    deadline: Deadline,
    hop: &Hop,
    wait: impl Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout_at(deadline.backstop(), wait).await {
        Ok(outcome) => outcome,
        Err(_) => Err(deadline.exceeded(hop.method.as_str(), hop.url.as_str(), false)),
    }
}

fn redirect_error(hop: &Hop, message: String) -> Error {
    Error::Transport {
        method: hop.method.to_string(),
        url: hop.url.to_string(),
        message: format!("redirect failed: {message}"),
        outcome_unknown: false,
    }
}

/// `{base_url}/oauth/token`, keeping any path prefix of the base URL.
fn token_endpoint(base: &Url) -> Url {
    let mut url = base.clone();
    let path = format!("{}/oauth/token", base.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// Plain http only to loopback hosts, unless `allow_http`.
fn check_scheme(url: &Url, allow_http: bool) -> Result<()> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if allow_http || is_loopback(url) => Ok(()),
        "http" => Err(Error::Configuration(format!(
            "refusing plain http to {} (not a loopback host); use https or allow_http=True",
            url.host_str().unwrap_or_default()
        ))),
        other => Err(Error::Configuration(format!(
            "unsupported URL scheme {other:?} in {url}"
        ))),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// 2xx with a JSON body (or none) passes; anything else is the matching error.
fn check_success(method: &str, response: Response) -> Result<Response> {
    if !(200..300).contains(&response.status) {
        return Err(response.into_failure(method, false));
    }
    if response.body.is_empty() {
        // An empty body is a document only where HTTP gives none
        // (docs/concepts.md#links-and-what-they-send).
        if matches!(response.status, 201 | 202 | 204) {
            return Ok(response);
        }
        let status = response.status;
        return Err(Error::Protocol {
            method: Some(method.to_owned()),
            url: Some(response.url.to_string()),
            message: format!("HTTP {status} with an empty body (expected a JSON document)"),
            response: None,
        }
        .with_response(status, response.header_pairs())
        .with_request_id(response.request_id.as_deref()));
    }
    let content_type = response.header("content-type");
    if media::is_json(content_type) {
        return Ok(response);
    }
    let shown = match (content_type, content_type.and_then(media::parse)) {
        (None, _) => "no content type".to_owned(),
        (Some(_), Some(media)) => format!("content type {:?}", media.essence),
        // Present but not one media type (`application/json, text/html`): quoted, shortened.
        (Some(raw), None) => format!(
            "a Content-Type that is not a media type: {:?}",
            raw.chars().take(80).collect::<String>()
        ),
    };
    Err(Error::Protocol {
        method: Some(method.to_owned()),
        url: Some(response.url.to_string()),
        message: format!(
            "expected a JSON body, got {shown}: {:?}",
            response.body_text(120)
        ),
        response: None,
    }
    .with_response(response.status, response.header_pairs())
    .with_request_id(response.request_id.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_only_to_loopback() {
        let ok = [
            "https://api.example.com/",
            "http://localhost:8080/",
            "http://127.0.0.5/",
            "http://[::1]:1/",
        ];
        for u in ok {
            assert!(check_scheme(&Url::parse(u).unwrap(), false).is_ok(), "{u}");
        }
        let remote = Url::parse("http://api.example.com/").unwrap();
        assert!(matches!(
            check_scheme(&remote, false),
            Err(Error::Configuration(_))
        ));
        assert!(check_scheme(&remote, true).is_ok());
        assert!(check_scheme(&Url::parse("ftp://h/").unwrap(), true).is_err());
    }

    #[test]
    fn token_endpoint_keeps_the_path_prefix() {
        let at = |b: &str| token_endpoint(&Url::parse(b).unwrap()).to_string();
        assert_eq!(at("https://h/"), "https://h/oauth/token");
        assert_eq!(at("https://h/api/?x=1"), "https://h/api/oauth/token");
    }
}
