//! The sandbox's HTTPS mode: a throwaway CA made up at start, a server certificate it signs for
//! the loopback names, and the CA's PEM in a temporary file that clients can be told to trust.
//! Nothing is kept across a restart: each start makes a new CA.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

use super::error::{Result, SandboxError};

/// What a running HTTPS sandbox needs: the acceptor and the CA file (removed on drop).
pub struct Tls {
    pub acceptor: TlsAcceptor,
    pub ca_file: CaFile,
}

/// The CA certificate (PEM) in the system's temporary directory, removed when dropped.
#[derive(Debug)]
pub struct CaFile {
    path: PathBuf,
}

impl CaFile {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for CaFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The crypto library failed to make a key or a certificate: nothing the caller can change.
fn tls_error(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Internal(format!("sandbox server cannot set up TLS: {what}: {e}"))
}

/// A new CA, a server certificate for `localhost`, `127.0.0.1`, `::1` and `host`, and the
/// acceptor serving it (HTTP/1.1 over TLS 1.2 or 1.3, ring like the client).
pub fn setup(host: &str) -> Result<Tls> {
    let ca_key = KeyPair::generate().map_err(|e| tls_error("CA key", e))?;
    let mut ca_params = CertificateParams::default();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "recurring_payments sandbox CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params
        .self_signed(&ca_key)
        .map_err(|e| tls_error("CA certificate", e))?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let wildcard = host.is_empty() || host == "0.0.0.0" || host == "::";
    if !wildcard && !names.iter().any(|n| n == host) {
        names.push(host.to_owned());
    }
    let server_key = KeyPair::generate().map_err(|e| tls_error("server key", e))?;
    let mut params = CertificateParams::new(names).map_err(|e| tls_error("server names", e))?;
    params
        .distinguished_name
        .push(DnType::CommonName, "recurring_payments sandbox");
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = params
        .signed_by(&server_key, &issuer)
        .map_err(|e| tls_error("server certificate", e))?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error("protocol versions", e))?
        .with_no_client_auth()
        .with_single_cert(vec![server_cert.der().clone()], key)
        .map_err(|e| tls_error("server certificate", e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];

    Ok(Tls {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        ca_file: write_ca(&ca_cert.pem())?,
    })
}

/// Write the CA's PEM to a new file of the temporary directory (never an existing one).
fn write_ca(pem: &str) -> Result<CaFile> {
    let path = std::env::temp_dir().join(format!(
        "recurring-payments-sandbox-ca-{}.pem",
        uuid::Uuid::new_v4().simple()
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| SandboxError::os(format!("sandbox server cannot write {path:?}"), &e))?;
    let ca_file = CaFile { path };
    file.write_all(pem.as_bytes()).map_err(|e| {
        SandboxError::os(
            format!("sandbox server cannot write {:?}", ca_file.path),
            &e,
        )
    })?;
    Ok(ca_file)
}
