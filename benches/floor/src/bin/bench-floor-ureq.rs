//! `bench-floor-ureq BASE_URL PROFILE TOKEN N [CA_BUNDLE]`: the benchmark's follow (lib.rs) on
//! ureq 3, a blocking client with no async runtime: a candidate wire for the sync face. TLS is
//! its rustls given the ring provider and the CA bundle (ureq builds the rustls configuration
//! itself, HTTP/1.1 only); gzip on, no proxy (by default ureq would take the environment's),
//! no redirects, TCP_NODELAY.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ureq::tls::{Certificate, RootCerts, TlsConfig, TlsProvider};

use floor::{read_mandate, Args, Follow, USER_AGENT, WARMUP};

fn agent(ca: Option<&str>) -> ureq::Agent {
    let mut tls = TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()));
    if let Some(path) = ca {
        let certs = floor::ca_certificates(path);
        let certs: Vec<Certificate<'static>> = certs
            .iter()
            .map(|der| Certificate::from_der(der).to_owned())
            .collect();
        tls = tls.root_certs(RootCerts::new_with_certs(&certs));
    }
    ureq::Agent::config_builder()
        .tls_config(tls.build())
        .proxy(None)
        .max_redirects(0)
        .http_status_as_error(false)
        .no_delay(true)
        .user_agent(USER_AGENT)
        .max_idle_age(Duration::from_secs(60))
        .build()
        .into()
}

fn get(agent: &ureq::Agent, url: &str, accept: &str, auth: &str) -> Vec<u8> {
    let mut response = agent
        .get(url)
        .header("accept", accept)
        .header("authorization", auth)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    assert!(
        response.status().is_success(),
        "GET {url}: {}",
        response.status()
    );
    response
        .body_mut()
        .read_to_vec()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

fn main() {
    let args = Args::parse("bench-floor-ureq");
    let (accept, auth) = (args.accept(), args.authorization());
    let agent = agent(args.ca.as_deref());
    let root = get(&agent, &args.root_url(), &accept, &auth);
    let root = serde_json::from_slice(&root).unwrap_or_else(|e| panic!("entry point: {e}"));
    let follow = Follow::from_root(&root);
    let one = |i: usize| {
        let url = follow.url(i);
        let body = get(&agent, &url, &accept, &auth);
        read_mandate(&url, &body);
    };
    for i in 0..WARMUP {
        one(i);
    }
    let start = Instant::now();
    for i in 0..args.n {
        one(i);
    }
    floor::report(start, args.n);
}
