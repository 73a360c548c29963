//! Where requests are routed (docs/guides/tls-and-proxies.md#proxies): the `proxy=` setting, or the
//! environment's `HTTP(S)_PROXY`/`ALL_PROXY`/`NO_PROXY` when `trust_env`, or nothing. We decide it
//! rather than hyper-util's environment matcher, whose `NO_PROXY=*` exempts domain names only:
//! curl, requests and httpx bypass the proxy for every host, IP literals included.
//!
//! A proxy URL may hold the proxy's Basic credentials: no `Debug` or message here shows them.

use std::fmt;

use crate::error::{Error, Result};

/// The client's proxy setting.
#[derive(Clone, PartialEq, Eq)]
pub enum ProxySetting {
    /// `proxy=`: every request goes through it, token requests included; `NO_PROXY` is not read.
    Url(url::Url),
    /// `proxy=None, trust_env=True`: the environment's variables, read when a pool is built.
    Environment,
    /// `proxy=None, trust_env=False`: straight to the server, whatever the environment says.
    Off,
}

impl ProxySetting {
    /// The setting for `proxy` and `trust_env`; a malformed URL is a `Configuration` error
    /// that quotes no part of it (it may hold a password).
    pub fn new(proxy: Option<&str>, trust_env: bool) -> Result<ProxySetting> {
        let Some(text) = proxy else {
            return Ok(if trust_env {
                ProxySetting::Environment
            } else {
                ProxySetting::Off
            });
        };
        let bad = |why: &str| Error::Configuration(format!("proxy {why} (the URL is not shown)"));
        let url = url::Url::parse(text)
            .map_err(|_| bad("must be an http:// or https:// URL such as http://host:3128"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("must be an http:// or https:// URL"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad("must name a host"));
        }
        if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
            return Err(bad(
                "must be scheme://[user:password@]host[:port], without a path",
            ));
        }
        Ok(ProxySetting::Url(url))
    }
}

impl fmt::Debug for ProxySetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxySetting::Url(url) => write!(f, "Url({})", without_userinfo(url)),
            ProxySetting::Environment => f.write_str("Environment"),
            ProxySetting::Off => f.write_str("Off"),
        }
    }
}

/// The proxies a pool's connections take, resolved once (part of the pool's key: clients with
/// other proxies, or built under another environment, get their own connections).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Routes {
    http: Option<String>,
    https: Option<String>,
    /// `NO_PROXY` as read (environment proxies only); a `*` entry leaves no proxy at all.
    no: String,
}

impl Routes {
    pub fn resolve(setting: &ProxySetting) -> Routes {
        match setting {
            ProxySetting::Url(url) => Routes {
                http: Some(url.to_string()),
                https: Some(url.to_string()),
                no: String::new(),
            },
            ProxySetting::Off => Routes::default(),
            ProxySetting::Environment => Routes::from_env(),
        }
    }

    fn from_env() -> Routes {
        // A CGI script's HTTP_PROXY may come from the request's `Proxy:` header (httpoxy):
        // hyper-util, whose rules these are, then reads no proxy variable at all.
        if std::env::var_os("REQUEST_METHOD").is_some() {
            return Routes::default();
        }
        let no = first_env(&["NO_PROXY", "no_proxy"]).unwrap_or_default();
        if no.split(',').any(|entry| entry.trim() == "*") {
            return Routes::default();
        }
        let all = first_env(&["ALL_PROXY", "all_proxy"]);
        Routes {
            http: first_env(&["HTTP_PROXY", "http_proxy"]).or_else(|| all.clone()),
            https: first_env(&["HTTPS_PROXY", "https_proxy"]).or(all),
            no,
        }
    }

    /// These routes as hyper-util matches them (its `NO_PROXY` rules); `None` when there is
    /// no proxy. A variable that is no usable URL is ignored, as hyper-util's reading of it is.
    pub fn matcher(&self) -> Option<hyper_util::client::proxy::matcher::Matcher> {
        if self.http.is_none() && self.https.is_none() {
            return None;
        }
        let matcher = hyper_util::client::proxy::matcher::Matcher::builder()
            .http(self.http.clone().unwrap_or_default())
            .https(self.https.clone().unwrap_or_default())
            .no(self.no.clone())
            .build();
        Some(matcher)
    }
}

impl fmt::Debug for Routes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |route: &Option<String>| {
            route.as_deref().map(|r| match url::Url::parse(r) {
                Ok(url) => without_userinfo(&url),
                Err(_) => "<unparsed>".to_owned(),
            })
        };
        f.debug_struct("Routes")
            .field("http", &shown(&self.http))
            .field("https", &shown(&self.https))
            .field("no", &self.no)
            .finish()
    }
}

fn first_env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|name| std::env::var(name).ok())
        .filter(|value| !value.trim().is_empty())
}

/// `url` without its user and password.
pub fn without_userinfo(url: &url::Url) -> String {
    let mut url = url.clone();
    crate::url::strip_userinfo(&mut url);
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_proxy_is_refused_without_quoting_it() {
        for bad in [
            "not a url",
            "socks5://u:hunter2@h:1080",
            "http://u:hunter2@h:3128/path",
            "http://u:hunter2@:3128",
            "ftp://u:hunter2@h",
        ] {
            match ProxySetting::new(Some(bad), true) {
                Err(Error::Configuration(message)) => {
                    assert!(!message.contains("hunter2"), "{message}");
                    assert!(message.starts_with("proxy "), "{message}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
        let good = ProxySetting::new(Some("http://u:hunter2@h:3128"), false).unwrap();
        assert_eq!(format!("{good:?}"), "Url(http://h:3128/)");
        let routes = Routes::resolve(&good);
        assert!(!format!("{routes:?}").contains("hunter2"));
    }

    #[test]
    fn no_proxy_star_or_trust_env_off_routes_nothing_from_the_environment() {
        assert_eq!(Routes::resolve(&ProxySetting::Off), Routes::default());
    }
}
