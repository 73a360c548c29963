//! The core client: request -> (401 -> new token -> replay once) -> response (API.md §2-3).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::Method;
use url::Url;

use crate::auth::{Credentials, Token, TokenCache};
use crate::error::{Error, Result};
use crate::media;
use crate::runtime::PerProcess;
use crate::template;
use crate::transport::{
    header_value, Attempt, Driver, Outgoing, Response, Transport, TransportConfig, Verify,
};

#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub base_url: String,
    pub profile: String,
    pub credentials: Credentials,
    pub timeout: f64,
    pub connect_timeout: f64,
    pub retries: u32,
    pub token_leeway: f64,
    pub max_response_size: usize,
    pub allow_http: bool,
    pub verify: Verify,
    pub user_agent: String,
}

/// What a request carries.
#[derive(Debug, Clone)]
pub enum Body {
    Empty,
    /// POST: `application/json`.
    Json(Bytes),
    /// PATCH: `application/merge-patch+json`.
    MergePatch(Bytes),
}

pub struct Client {
    base: Url,
    token_url: Url,
    accept: HeaderValue,
    basic: HeaderValue,
    scope: &'static str,
    leeway: f64,
    allow_http: bool,
    transport: Transport,
    /// Per process: a child after fork starts with an empty cache and unlocked locks.
    tokens: PerProcess<TokenCache>,
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Client> {
        let base = template::parse_base(&config.base_url)?;
        check_scheme(&base, config.allow_http)?;
        config.credentials.validate()?;
        let seconds = |name: &str, value: f64| {
            if value.is_finite() && value > 0.0 && value < 1e9 {
                Ok(Duration::from_secs_f64(value))
            } else {
                Err(Error::Configuration(format!(
                    "{name} must be a positive number of seconds"
                )))
            }
        };
        let timeout = seconds("timeout", config.timeout)?;
        let connect_timeout = seconds("connect_timeout", config.connect_timeout)?;
        if !(config.token_leeway.is_finite() && config.token_leeway >= 0.0) {
            return Err(Error::Configuration("token_leeway must be >= 0".into()));
        }
        if config.max_response_size == 0 {
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
        let basic = header_value(&config.credentials.basic_authorization())
            .map_err(|_| Error::Configuration("credentials contain invalid characters".into()))?;
        let token_url = token_endpoint(&base);
        let transport = Transport::new(TransportConfig {
            timeout,
            connect_timeout,
            retries: config.retries,
            max_response_size: config.max_response_size,
            verify: config.verify,
            user_agent: config.user_agent,
        })?;
        Ok(Client {
            base,
            token_url,
            accept,
            basic,
            scope: config.credentials.scope(),
            leeway: config.token_leeway,
            allow_http: config.allow_http,
            transport,
            tokens: PerProcess::new(),
        })
    }

    pub fn base_url(&self) -> &Url {
        &self.base
    }

    /// An absolute URL for `reference` (absolute, or relative to `base_url`).
    pub fn resolve(&self, reference: &str) -> Result<Url> {
        template::resolve(&self.base, reference)
    }

    /// Same scheme, host and port as `base_url`: only there do we send the bearer token.
    pub fn is_api_origin(&self, url: &Url) -> bool {
        url.origin() == self.base.origin()
    }

    fn cache(&self) -> Result<&TokenCache> {
        self.tokens.get_or_try_init(|| Ok(TokenCache::default()))
    }

    pub fn token(&self) -> Option<Arc<Token>> {
        self.cache().ok().and_then(TokenCache::current)
    }

    /// Fetch a token now (validates the credentials).
    pub async fn authenticate(&self, driver: Driver, log: &mut Vec<Attempt>) -> Result<Arc<Token>> {
        self.cache()?.renew(|| self.fetch_token(driver, log)).await
    }

    /// One API request with the protocol's token rules; `log` receives every attempt.
    /// `driver` says where this future is polled (and so which connection pool it uses).
    pub async fn request(
        &self,
        method: Method,
        url: Url,
        body: Body,
        driver: Driver,
        log: &mut Vec<Attempt>,
    ) -> Result<Response> {
        check_scheme(&url, self.allow_http)?;
        let authorized = self.is_api_origin(&url);
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, self.accept.clone());
        let body = match body {
            Body::Empty => None,
            Body::Json(bytes) => {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                Some(bytes)
            }
            Body::MergePatch(bytes) => {
                let merge_patch = HeaderValue::from_static("application/merge-patch+json");
                headers.insert(CONTENT_TYPE, merge_patch);
                Some(bytes)
            }
        };
        let mut outgoing = Outgoing {
            method,
            url,
            headers,
            body,
        };
        let mut replayed = false;
        loop {
            let token = if authorized {
                let cache = self.cache()?;
                let token = cache
                    .get(self.leeway, || self.fetch_token(driver, log))
                    .await?;
                outgoing
                    .headers
                    .insert(AUTHORIZATION, header_value(&token.bearer())?);
                Some(token)
            } else {
                None
            };
            let response = self.transport.send(&outgoing, driver, log).await?;
            let method = outgoing.method.as_str();
            if let (401, Some(token)) = (response.status, &token) {
                // A 401 from another origin (after a redirect) is not about our token.
                if self.is_api_origin(&response.url) {
                    if replayed {
                        return Err(response.into_failure(method, true));
                    }
                    self.cache()?.invalidate(token);
                    replayed = true;
                    continue;
                }
            }
            return check_success(method, response);
        }
    }

    async fn fetch_token(&self, driver: Driver, log: &mut Vec<Attempt>) -> Result<Token> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(AUTHORIZATION, self.basic.clone());
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        let body = format!("grant_type=client_credentials&scope={}", self.scope);
        let outgoing = Outgoing {
            method: Method::POST,
            url: self.token_url.clone(),
            headers,
            body: Some(Bytes::from(body)),
        };
        let response = self.transport.send(&outgoing, driver, log).await?;
        match response.status {
            200..=299 => Token::from_response(&response.body, self.scope)
                .map_err(|e| e.with_request("POST", self.token_url.as_str())),
            400 | 401 => Err(response.into_failure("POST", true)),
            _ => Err(response.into_failure("POST", false)),
        }
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
        return Ok(response);
    }
    let content_type = response.header("content-type");
    if media::is(content_type, "application/hal+json")
        || media::is(content_type, "application/json")
    {
        return Ok(response);
    }
    let media = content_type
        .and_then(media::parse)
        .map(|m| m.essence)
        .unwrap_or_default();
    let shown = if media.is_empty() {
        "no content type".to_owned()
    } else {
        format!("content type {media:?}")
    };
    Err(Error::Protocol {
        method: Some(method.to_owned()),
        url: Some(response.url.to_string()),
        message: format!(
            "expected a JSON body, got {shown}: {:?}",
            response.body_text(120)
        ),
    })
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
