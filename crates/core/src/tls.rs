//! The rustls configuration of our HTTP clients, built once per process and `Verify` setting
//! and cloned into every pool: a sync client has a pool per thread (`wire::Driver`), and a
//! configuration built per pool would load the system trust store again (~2 ms per new thread,
//! PEM parsing). TLS 1.2 and 1.3, ALPN h2 and http/1.1.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use tokio_rustls::rustls;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::{Error, Result};
use crate::runtime::PerProcess;

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

static CONFIGS: PerProcess<Mutex<HashMap<Verify, ClientConfig>>> = PerProcess::new();

/// The TLS configuration for `verify`, built on first use in this process.
pub fn client_config(verify: &Verify) -> Result<ClientConfig> {
    let configs = CONFIGS.get_or_try_init(|| Ok::<_, Error>(Mutex::new(HashMap::new())))?;
    let mut configs = configs
        .lock()
        .map_err(|_| Error::Internal("TLS configuration registry poisoned".into()))?;
    if let Some(config) = configs.get(verify) {
        return Ok(config.clone());
    }
    let config = build(verify)?;
    configs.insert(verify.clone(), config.clone());
    Ok(config)
}

fn build(verify: &Verify) -> Result<ClientConfig> {
    let setup = |e: rustls::Error| Error::Configuration(format!("cannot set up TLS: {e}"));
    let provider = CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(setup)?;
    let mut config = match verify {
        // SSL_CERT_FILE replaces the system's store, as the Linux verifier does by itself.
        Verify::System => match ssl_cert_file() {
            Some(path) => builder
                .with_root_certificates(bundle(&path)?)
                .with_no_client_auth(),
            // The platform's verifier (on Linux it reads SSL_CERT_FILE and SSL_CERT_DIR
            // itself), made at the first certificate to check.
            None => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(SystemRoots::new(provider)))
                .with_no_client_auth(),
        },
        Verify::Off => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerifier(provider)))
            .with_no_client_auth(),
        Verify::CaBundle(path) => builder
            .with_root_certificates(bundle(path)?)
            .with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The CA certificates of the PEM file at `path`.
fn bundle<P: AsRef<std::path::Path> + std::fmt::Debug + ?Sized>(path: &P) -> Result<RootCertStore> {
    let pem = std::fs::read(path)
        .map_err(|e| Error::Configuration(format!("cannot read CA bundle {path:?}: {e}")))?;
    let invalid = |e: &dyn std::fmt::Display| {
        Error::Configuration(format!("invalid CA bundle {path:?}: {e}"))
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| invalid(&e))?;
        roots.add(cert).map_err(|e| invalid(&e))?;
    }
    if roots.is_empty() {
        return Err(Error::Configuration(format!(
            "no certificate in CA bundle {path:?}"
        )));
    }
    Ok(roots)
}

/// `SSL_CERT_FILE`, where the platform's verifier ignores it: macOS and Windows ask the
/// system's own trust store. On Linux the verifier reads it (and SSL_CERT_DIR) itself.
#[cfg(any(target_vendor = "apple", windows))]
fn ssl_cert_file() -> Option<std::ffi::OsString> {
    std::env::var_os("SSL_CERT_FILE").filter(|path| !path.is_empty())
}

#[cfg(not(any(target_vendor = "apple", windows)))]
fn ssl_cert_file() -> Option<std::ffi::OsString> {
    None
}

/// `verify=True`: the platform's verifier, made when the first certificate is checked. On
/// Linux making it reads and parses every system root (~3.5 ms, the most of a client's
/// construction): a client of plain `http://` (a test, the sandbox) never pays it, and an
/// HTTPS one pays it once per process, at its first handshake. A system without roots fails
/// that handshake (`TransportError`), as it would fail to verify anything.
#[derive(Debug)]
struct SystemRoots {
    provider: Arc<CryptoProvider>,
    verifier: OnceLock<std::result::Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl SystemRoots {
    fn new(provider: Arc<CryptoProvider>) -> SystemRoots {
        SystemRoots {
            provider,
            verifier: OnceLock::new(),
        }
    }

    fn verifier(&self) -> std::result::Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        let made = self.verifier.get_or_init(|| {
            rustls_platform_verifier::Verifier::new(self.provider.clone()).map_err(|e| {
                rustls::Error::General(format!("cannot load the system's CA certificates: {e}"))
            })
        });
        made.as_ref().map_err(Clone::clone)
    }
}

impl ServerCertVerifier for SystemRoots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls13_signature(message, cert, dss)
    }

    /// Asked for the ClientHello, before any certificate: the provider's schemes, which are
    /// what the platform's verifier (WebPKI) answers.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// `verify=False`: any certificate and any handshake signature are accepted (as curl's `-k`);
/// only the signature schemes offered come from the provider.
#[derive(Debug)]
struct NoVerifier(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerifier {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
