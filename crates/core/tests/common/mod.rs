//! What the wire's tests share (`wire_tls.rs`, `wire_pool.rs`): a wire with the given settings,
//! and a GET through it on this thread's pool.

// The helpers below are test code too: a setup step that fails stops the test, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderMap, HeaderValue};
use http::Method;

use rp_core::hyper_wire::{HyperWire, WireSettings};
use rp_core::proxy::ProxySetting;
use rp_core::runtime::block_on_here;
use rp_core::tls::Verify;
use rp_core::wire::{Driver, Limits, Outgoing, Response, Wire, WireError};

/// A wire with these settings, 5 s to connect.
pub fn wire(verify: Verify, proxy: ProxySetting, max_response_size: usize) -> HyperWire {
    HyperWire::new(WireSettings {
        verify,
        connect_timeout: Duration::from_secs(5),
        proxy,
        user_agent: HeaderValue::from_static("rp-wire-tests"),
        max_response_size,
        request_id_headers: Arc::new([]),
    })
    .unwrap()
}

/// A GET of `url` on `wire`, on this thread's pool, within 5 s.
pub async fn exchange_get(wire: &HyperWire, url: &str) -> Result<Response, WireError> {
    let request = Outgoing {
        method: Method::GET,
        url: url::Url::parse(url).unwrap(),
        headers: HeaderMap::new(),
        body: None,
    };
    let limits = Limits {
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(5),
    };
    wire.exchange(&request, Driver::ThisThread, limits).await
}

/// [`exchange_get`], waited for on this thread.
pub fn get(wire: &HyperWire, url: &str) -> Result<Response, WireError> {
    block_on_here(exchange_get(wire, url)).unwrap()
}
