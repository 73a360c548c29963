//! The transport a client sends with: its settings, the wire its exchanges go over (hyper-util's
//! client, hyper_wire.rs) and the loop of attempts around each request (attempt_loop.rs). The types
//! a request and its answer travel in live in wire.rs.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderName, HeaderValue};

use crate::attempt_loop::Deadline;
use crate::attempt_loop::{self, Policy};
use crate::error::{Error, Result};
use crate::hyper_wire::{HyperWire, WireSettings};
use crate::proxy::ProxySetting;
use crate::records::Attempt;
use crate::request::CallOptions;
use crate::tls::Verify;
use crate::wire::{Driver, Outgoing, Response};

#[derive(Debug, Clone)]
pub struct TransportConfig {
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retries: u32,
    pub max_response_size: usize,
    pub verify: Verify,
    pub user_agent: String,
    /// Response headers whose first present value is the request id
    /// (docs/guides/errors.md#conflicts-rate-limits-and-request-ids).
    pub request_id_headers: Vec<HeaderName>,
    pub proxy: ProxySetting,
}

/// Sends requests; cheap to clone.
#[derive(Debug, Clone)]
pub struct Transport {
    config: Arc<TransportConfig>,
    wire: HyperWire,
}

impl Transport {
    pub fn new(config: TransportConfig) -> Result<Transport> {
        let user_agent = HeaderValue::from_str(&config.user_agent).map_err(|_| {
            Error::Configuration("user_agent contains characters not allowed in a header".into())
        })?;
        let wire = HyperWire::new(WireSettings {
            verify: config.verify.clone(),
            connect_timeout: config.connect_timeout,
            proxy: config.proxy.clone(),
            user_agent,
            max_response_size: config.max_response_size,
            request_id_headers: config.request_id_headers.clone().into(),
        })?;
        Ok(Transport {
            config: Arc::new(config),
            wire,
        })
    }

    pub fn config(&self) -> &TransportConfig {
        &self.config
    }

    /// Send with the retry policy of docs/guarantees.md#no-double-send (attempt_loop.rs), within
    /// `deadline`. `options`' timeouts and retries replace the client's (`with_options`,
    /// docs/guides/configuration.md#per-call-settings). The loop's own future, not one around it: a
    /// follow moves no second future state.
    pub fn send<'a>(
        &'a self,
        request: &'a Outgoing,
        options: &CallOptions,
        driver: Driver,
        log: &'a mut Vec<Attempt>,
        deadline: Deadline,
    ) -> impl Future<Output = Result<Response>> + Send + 'a {
        let policy = Policy {
            timeout: options.timeout.unwrap_or(self.config.timeout),
            connect_timeout: options
                .connect_timeout
                .unwrap_or(self.config.connect_timeout),
            retries: options.retries.unwrap_or(self.config.retries),
        };
        attempt_loop::send(&self.wire, request, policy, driver, log, deadline)
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
    use crate::tls::Verify;

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
}
