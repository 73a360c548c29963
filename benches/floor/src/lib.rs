//! What every floor shares: its arguments, the TLS configuration, and the follow's own work
//! (the entry point's `bench-mandate` template, the 16 ids, reading the document).
//!
//! Every floor is run as `PROGRAM BASE_URL PROFILE TOKEN N [CA_BUNDLE]`: N sequential follows
//! of the entry point's templated `bench-mandate` link, as the Python clients do them (expand,
//! GET with the profile's Accept and the Bearer token, parse the JSON, read `status` and the
//! `creditor` href), over one keep-alive connection, after a warm-up of WARMUP follows. It
//! prints microseconds per follow on stdout (benches/bench.py runs it once per round,
//! interleaved with the Python clients). CA_BUNDLE, a PEM file, is the only trust for an
//! https:// BASE_URL.

use std::sync::Arc;
use std::time::Instant;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use serde_json::Value;

/// Follows before the timed ones: connection, TLS session, allocator and caches warm.
pub const WARMUP: usize = 200;

/// Every request's headers, the same for every floor (and as the library sends them).
pub const USER_AGENT: &str = "bench-floor";

pub struct Args {
    pub base: String,
    pub profile: String,
    pub token: String,
    pub n: usize,
    pub ca: Option<String>,
}

impl Args {
    pub fn parse(program: &str) -> Args {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let usage = || panic!("usage: {program} BASE_URL PROFILE TOKEN N [CA_BUNDLE]");
        if !(4..=5).contains(&args.len()) {
            usage();
        }
        Args {
            base: args[0].trim_end_matches('/').to_owned(),
            profile: args[1].clone(),
            token: args[2].clone(),
            n: args[3].parse().unwrap_or_else(|e| panic!("N: {e}")),
            ca: args.get(4).cloned(),
        }
    }

    pub fn accept(&self) -> String {
        format!("application/hal+json; profile=\"{}\"", self.profile)
    }

    pub fn authorization(&self) -> String {
        format!("Bearer {}", self.token)
    }

    pub fn root_url(&self) -> String {
        format!("{}/", self.base)
    }
}

/// The library's TLS configuration (crates/core/src/tls.rs) for a CA bundle: rustls on ring,
/// TLS 1.2 and 1.3, ALPN h2 then http/1.1.
pub fn tls_config(ca: Option<&str>) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    if let Some(path) = ca {
        let pem = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        for cert in CertificateDer::pem_slice_iter(&pem) {
            roots
                .add(cert.unwrap_or_else(|e| panic!("{path}: {e}")))
                .unwrap_or_else(|e| panic!("{path}: {e}"));
        }
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| panic!("{e}"))
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config
}

/// The CA bundle's certificates (for a client that takes them rather than a rustls config).
pub fn ca_certificates(path: &str) -> Vec<CertificateDer<'static>> {
    let pem = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    CertificateDer::pem_slice_iter(&pem)
        .map(|cert| cert.unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

/// The follow's template and ids, read from the entry point's document.
pub struct Follow {
    template: String,
    ids: Vec<String>,
}

impl Follow {
    pub fn from_root(root: &Value) -> Follow {
        let links = root["_links"]
            .as_object()
            .unwrap_or_else(|| panic!("no _links"));
        let (_, link) = links
            .iter()
            .find(|(rel, _)| rel.ends_with("bench-mandate"))
            .unwrap_or_else(|| panic!("no bench-mandate link"));
        let template = link["href"]
            .as_str()
            .unwrap_or_else(|| panic!("no href"))
            .to_owned();
        Follow {
            template,
            ids: (0..16).map(|i| format!("MD{i:04}")).collect(),
        }
    }

    /// Follow `i`'s URL: the template expanded with the i-th id (of 16, in turn).
    pub fn url(&self, i: usize) -> String {
        self.template.replace("{id}", &self.ids[i % self.ids.len()])
    }
}

/// Parse a mandate's body and read what the Python clients read of it.
pub fn read_mandate(url: &str, body: &[u8]) {
    let doc: Value = serde_json::from_slice(body).unwrap_or_else(|e| panic!("{url}: {e}"));
    let status = doc["status"].as_str().unwrap_or_default().len();
    let creditor = doc["_links"]["creditor"]["href"]
        .as_str()
        .unwrap_or_default()
        .len();
    assert!(status > 0 && creditor > 0, "{url}: no status or creditor");
}

/// Print the µs per follow of `n` follows that started at `start`.
pub fn report(start: Instant, n: usize) {
    let n = n.max(1) as f64;
    println!("{:.2}", start.elapsed().as_secs_f64() * 1e6 / n);
}
