//! `recurring_payments.Token`: an access token as Python sees it (its secret never shown).

use std::sync::Arc;

use pyo3::prelude::*;

use rp_core::auth::Token as CoreToken;

/// An access token (``client.token``, ``client.authenticate()``), renewed by the client as
/// needed. Its ``repr()`` never shows the token itself.
///
/// >>> token = client.authenticate()
/// >>> token
/// Token(scope="api", jti="...", expires_in=960)
/// >>> token == client.token
/// True
#[pyclass(name = "Token", module = "recurring_payments", frozen)]
pub struct PyToken {
    inner: Arc<CoreToken>,
}

#[pymethods]
impl PyToken {
    /// ``api`` (app credentials) or ``api_admin`` (admin credentials).
    ///
    /// >>> client.authenticate().scope
    /// 'api'
    #[getter]
    fn scope(&self) -> &str {
        &self.inner.scope
    }
    /// The token identifier (a UUID), the same in the server's logs.
    ///
    /// >>> len(client.authenticate().jti)
    /// 36
    #[getter]
    fn jti(&self) -> &str {
        &self.inner.jti
    }
    /// Always ``bearer``.
    ///
    /// >>> client.authenticate().token_type
    /// 'bearer'
    #[getter]
    fn token_type(&self) -> &str {
        &self.inner.token_type
    }
    /// When the token runs out, in seconds since the epoch.
    ///
    /// >>> import time
    /// >>> 900 < client.authenticate().expires_at - time.time() <= 960
    /// True
    #[getter]
    fn expires_at(&self) -> f64 {
        self.inner.expires_at()
    }
    /// Seconds of validity left (the client renews the token ``token_leeway`` seconds early).
    ///
    /// >>> round(client.authenticate().expires_in)
    /// 960
    #[getter]
    fn expires_in(&self) -> f64 {
        self.inner.remaining().max(0.0)
    }
    fn __repr__(&self) -> String {
        format!(
            "Token(scope={:?}, jti={:?}, expires_in={:.0})",
            self.inner.scope,
            self.inner.jti,
            self.inner.remaining().max(0.0)
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyToken>()
            .is_ok_and(|o| Arc::ptr_eq(&o.get().inner, &self.inner))
    }
    fn __hash__(&self) -> u64 {
        Arc::as_ptr(&self.inner) as u64
    }
}

impl From<Arc<CoreToken>> for PyToken {
    fn from(inner: Arc<CoreToken>) -> Self {
        PyToken { inner }
    }
}
