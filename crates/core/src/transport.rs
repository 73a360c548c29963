//! The transport a client sends with: its timeouts and retries, the wire its exchanges go over
//! (hyper-util's client, hyper_wire.rs) and the loop of attempts around each request
//! (attempt_loop.rs); and the converters that own the rules of the values the wire reads. The
//! types a request and its answer travel in live in wire.rs.

use std::future::Future;
use std::sync::Arc;

use http::header::{HeaderName, HeaderValue};

use crate::attempt_loop::Deadline;
use crate::attempt_loop::{self, Policy};
use crate::error::{Error, Result};
use crate::hyper_wire::{HyperWire, WireSettings};
use crate::records::Attempt;
use crate::request::CallOptions;
use crate::text::double_quoted;
use crate::wire::{Driver, Outgoing, Response};

/// Sends requests; cheap to clone.
#[derive(Debug, Clone)]
pub struct Transport {
    /// The client's timeouts and retries; a call's options replace them.
    policy: Policy,
    wire: HyperWire,
}

impl Transport {
    /// A transport on a wire for `wire`'s settings; a bad CA bundle fails here.
    pub fn new(policy: Policy, wire: WireSettings) -> Result<Transport> {
        Ok(Transport {
            policy,
            wire: HyperWire::new(wire)?,
        })
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
            timeout: options.timeout.unwrap_or(self.policy.timeout),
            connect_timeout: options
                .connect_timeout
                .unwrap_or(self.policy.connect_timeout),
            retries: options.retries.unwrap_or(self.policy.retries),
        };
        attempt_loop::send(&self.wire, request, policy, driver, log, deadline)
    }
}

/// `user_agent=` as the header the wire sends.
pub fn user_agent(value: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(value).map_err(|_| {
        Error::Configuration("user_agent contains characters not allowed in a header".into())
    })
}

/// `request_id_headers=` as the names the wire looks for, each a valid header name.
pub fn request_id_names(names: &[String]) -> Result<Arc<[HeaderName]>> {
    names
        .iter()
        .map(|name| {
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                Error::Configuration(format!(
                    "request_id_headers: {} is not a valid header name",
                    double_quoted(name)
                ))
            })
        })
        .collect()
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
    use crate::proxy::ProxySetting;
    use crate::tls::Verify;
    use std::time::Duration;

    #[test]
    fn a_bad_ca_bundle_fails_at_construction_and_the_registry_stays_usable() {
        let policy = Policy {
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            retries: 0,
        };
        let wire = move |verify| WireSettings {
            verify,
            connect_timeout: policy.connect_timeout,
            proxy: ProxySetting::Environment,
            user_agent: HeaderValue::from_static("test"),
            max_response_size: 1 << 20,
            request_id_headers: Arc::new([]),
        };
        // On a thread: the registry's lock, held by the failing build, deadlocked the caller.
        let (done, outcome) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let bad =
                || Transport::new(policy, wire(Verify::CaBundle("/nonexistent/ca.pem".into())));
            let refused = [bad(), bad()].map(|r| matches!(r, Err(Error::Configuration(_))));
            let _ = done.send((refused, Transport::new(policy, wire(Verify::Off)).is_ok()));
        });
        let outcome = outcome.recv_timeout(Duration::from_secs(20));
        assert_eq!(outcome.expect("deadlocked"), ([true, true], true));
    }
}
