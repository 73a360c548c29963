//! What tests do to a sandbox: register credentials, links, resources and routes; read the
//! journal; move the clock; arm faults. Each call takes its lock briefly and never runs user
//! code while holding it.

use std::sync::Arc;
use std::time::Duration;

use hyper::http::{HeaderName, HeaderValue, Method};
use serde_json::Value;

use super::error::{Result, SandboxError};
use super::faults::{Fault, Raw};
use super::journal::{lock, Entry};
use super::store::{path_of, EntryLink, Handler, Store};
use super::Sandbox;

impl Sandbox {
    fn with_store<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        let mut store = match self.shared().store.write() {
            Ok(store) => store,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut store)
    }

    /// Register app credentials (scope `api`); an existing app gets the new secret.
    pub fn add_app(&self, app_name: &str, app_secret: &str) -> Result<()> {
        if app_name.is_empty() || app_name.contains(':') {
            return Err(SandboxError::argument(format!(
                "app_name must be a non-empty str without ':', not {app_name:?}"
            )));
        }
        self.with_store(|s| s.add_app(app_name, app_secret));
        Ok(())
    }

    /// Register a dashboard user (scope `api_admin`, Basic user `creditor#login`).
    pub fn add_admin(&self, creditor: &str, login: &str, password: &str) -> Result<()> {
        if creditor.is_empty() || creditor.contains(['#', ':']) {
            return Err(SandboxError::argument(format!(
                "creditor must be a non-empty str without '#' or ':', not {creditor:?}"
            )));
        }
        if login.is_empty() || login.contains(':') {
            return Err(SandboxError::argument(format!(
                "login must be a non-empty str without ':', not {login:?}"
            )));
        }
        self.with_store(|s| s.add_admin(creditor, login, password));
        Ok(())
    }

    /// Add (or replace) a link of the entry point. A `rel` without ':' is put under the
    /// server's namespace; an `href` starting with '/' is made absolute when served.
    pub fn add_link(&self, rel: &str, href: &str, templated: bool, admin_only: bool) -> Result<()> {
        if rel.is_empty() || rel == "self" || rel == "profile" {
            return Err(SandboxError::argument(format!(
                "rel must be a non-empty relation name other than 'self' and 'profile', \
                 not {rel:?}"
            )));
        }
        if href.is_empty() {
            return Err(SandboxError::argument(
                "href must be a non-empty path or URL, not ''",
            ));
        }
        self.with_store(|s| {
            s.add_link(EntryLink {
                rel: rel.to_owned(),
                href: href.to_owned(),
                templated,
                admin_only,
            })
        });
        Ok(())
    }

    /// Serve a JSON document at `path` for GET (its hrefs are served as given).
    pub fn add_resource(&self, path: &str, document: &Value) -> Result<()> {
        self.with_store(|s| s.add_resource(path, document))
    }

    /// Route `method` on a path template such as `/things/{id}` to `handler`.
    pub fn route(&self, method: &str, path_template: &str, handler: Handler) -> Result<()> {
        let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).map_err(|_| {
            SandboxError::argument(format!("method must be GET, POST or PATCH, not {method:?}"))
        })?;
        self.with_store(|s| s.route(method, path_template, handler))
    }

    /// Every request received (oldest first), token requests included.
    pub fn requests(&self) -> Vec<Arc<Entry>> {
        self.shared().journal.entries()
    }

    pub fn token_requests(&self) -> Vec<Arc<Entry>> {
        let mut entries = self.requests();
        entries.retain(|e| e.is_token_request());
        entries
    }

    pub fn clear_requests(&self) {
        self.shared().journal.clear();
    }

    /// Every access token issued so far (the last 10,000), for tests that look for leaks.
    pub fn issued_tokens(&self) -> Vec<String> {
        lock(&self.shared().tokens).issued()
    }

    /// Every token issued so far stops being accepted now.
    pub fn expire_tokens(&self) {
        let now = self.shared().clock.now();
        lock(&self.shared().tokens).expire_all(now);
    }

    pub fn advance_clock(&self, by: Duration) {
        self.shared().clock.advance(by);
    }

    /// Virtual seconds since the server was created.
    pub fn clock(&self) -> Duration {
        self.shared().clock.now()
    }

    /// The next `count` matching requests are answered `status` with a `{"code","message"}`
    /// body and the extra `headers` (e.g. `Retry-After`).
    pub fn fail_next(
        &self,
        status: u16,
        count: u32,
        path: Option<&str>,
        headers: Vec<(String, String)>,
    ) -> Result<()> {
        if !(400..=599).contains(&status) {
            return Err(SandboxError::argument(format!(
                "status must be an error status, from 400 to 599, not {status}"
            )));
        }
        check_headers(&headers)?;
        self.outcome(Fault::Fail { status, headers }, count, path);
        Ok(())
    }

    /// The next `count` matching requests get their connection closed without an answer.
    pub fn drop_next(&self, count: u32, path: Option<&str>) {
        self.outcome(Fault::Drop, count, path);
    }

    /// The next `count` matching requests get a 200 whose body is not valid JSON.
    pub fn malformed_next(&self, count: u32, path: Option<&str>) {
        self.outcome(Fault::Malformed, count, path);
    }

    /// The next `count` matching requests get `raw` byte for byte (see `faults::Raw`).
    pub fn respond_next(&self, raw: Raw, count: u32, path: Option<&str>) -> Result<()> {
        if !(200..=599).contains(&raw.status) {
            return Err(SandboxError::argument(format!(
                "status must be from 200 to 599, not {}",
                raw.status
            )));
        }
        if raw.repeat == 0 {
            return Err(SandboxError::argument("repeat must be >= 1, not 0"));
        }
        check_headers(&raw.headers)?;
        self.outcome(Fault::Raw(Arc::new(raw)), count, path);
        Ok(())
    }

    /// The next `count` matching requests are answered only after `delay`.
    pub fn delay_next(&self, delay: Duration, count: u32, path: Option<&str>) {
        self.shared()
            .faults
            .add_delay(delay, count, path.map(|p| path_of(p).to_owned()));
    }

    /// Disarm every pending fault.
    pub fn clear_faults(&self) {
        self.shared().faults.clear();
    }

    fn outcome(&self, outcome: Fault, count: u32, path: Option<&str>) {
        self.shared()
            .faults
            .add_outcome(outcome, count, path.map(|p| path_of(p).to_owned()));
    }
}

/// Extra headers of an injected answer: valid names and values, and never the framing headers
/// (the sandbox sets `Content-Length`/`Transfer-Encoding` itself; see `respond_next`'s `chunked`).
fn check_headers(headers: &[(String, String)]) -> Result<()> {
    for (name, value) in headers {
        if HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(SandboxError::argument(format!(
                "headers: {name:?} is not a valid header name"
            )));
        }
        if HeaderValue::from_str(value).is_err() {
            return Err(SandboxError::argument(format!(
                "headers: the value of {name:?} has characters not allowed in a header"
            )));
        }
        if name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
        {
            return Err(SandboxError::argument(format!(
                "headers: {name:?} cannot be given (the sandbox frames the body itself)"
            )));
        }
    }
    Ok(())
}
