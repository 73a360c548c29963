//! Credentials providers (`credentials=` a callable): the core asks through `AskCredentials`,
//! and these implementations call the provider where the call that leads the token flight
//! runs. The sync client polls its call on the caller's thread, so `OnThisThread` calls the
//! provider right there (taking the GIL back for it). The async client's call runs on a
//! runtime worker, which must never call Python: `OnTheLoop` has the completion thread schedule
//! the call on the caller's event loop and waits for its answer (an `async def` provider is
//! awaited there as a task).
//!
//! Credentials objects are read into core credentials here too (`credentials_from`).
//!
//! What a provider raised or returned is never quoted (docs/guarantees.md): a failure names
//! the provider and the exception's type, and keeps the exception as `__cause__`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use tokio::sync::oneshot;

use rp_core::auth::{AskCredentials, Credentials};
use rp_core::error::{Cause, Error, Result};

use super::aio;

/// `AppCredentials` or `AdminCredentials` (read by attribute) as core credentials.
pub(crate) fn credentials_from(obj: &Bound<'_, PyAny>) -> PyResult<Credentials> {
    let text = |name: &str| -> PyResult<String> { obj.getattr(name)?.extract() };
    if obj.hasattr("app_secret")? {
        Ok(Credentials::App {
            app_name: text("app_name")?,
            app_secret: text("app_secret")?,
        })
    } else if obj.hasattr("password")? {
        Ok(Credentials::Admin {
            creditor: text("creditor")?,
            login: text("login")?,
            password: text("password")?,
        })
    } else {
        Err(PyValueError::new_err(
            "credentials must be AppCredentials or AdminCredentials",
        ))
    }
}

/// A client's provider and the name its messages use (its qualified name, never its repr).
#[derive(Clone)]
pub(crate) struct Provider {
    pub(crate) callable: Arc<Py<PyAny>>,
    pub(crate) name: Arc<str>,
}

impl Provider {
    fn raised(&self, py: Python<'_>, error: PyErr) -> Error {
        let kind = error
            .get_type(py)
            .qualname()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "an exception".into());
        // KeyboardInterrupt, SystemExit, CancelledError: not the provider's failure.
        let interrupt = !error.is_instance_of::<PyException>(py);
        // The library's own providers (a secret file) raise errors whose text is known to
        // quote no secret (`_message_is_safe`): that text says what to fix.
        let value = error.value(py);
        let safe = value
            .getattr(intern!(py, "_message_is_safe"))
            .and_then(|flag| flag.is_truthy())
            .unwrap_or(false);
        let shown = match safe.then(|| value.str()) {
            Some(Ok(text)) => format!(": {text}"),
            _ => " (its message is not shown: it may hold a secret)".to_owned(),
        };
        Error::Provider {
            message: format!(
                "the credentials provider {} raised {kind}{shown}",
                self.name
            ),
            cause: Some(Cause(Arc::new(error.into_value(py).into_any()))),
            interrupt,
        }
    }

    fn refused(&self, why: &str) -> Error {
        Error::Provider {
            message: format!("the credentials provider {} {why}", self.name),
            cause: None,
            interrupt: false,
        }
    }

    /// `value` (what the provider returned) as core credentials, checked as the constructor
    /// checks `credentials=`.
    fn credentials(&self, value: &Bound<'_, PyAny>) -> Result<Credentials> {
        let py = value.py();
        let checked = py
            .import(intern!(py, "recurring_payments._settings"))
            .and_then(|m| m.getattr(intern!(py, "check_credentials")))
            .and_then(|check| check.call1((value,)));
        if let Err(error) = checked {
            // `_settings` names fields, never values; the error's frames (which held the
            // value) go with it here.
            let why = error
                .value(py)
                .str()
                .map(|s| s.to_string())
                .unwrap_or_default();
            return Err(self.refused(&format!("returned unusable credentials: {why}")));
        }
        credentials_from(value)
            .map_err(|_| self.refused("returned credentials that cannot be read"))
    }

    /// Call it on this thread (with the GIL): the sync client's way.
    fn call_here(&self, py: Python<'_>) -> Result<Credentials> {
        let value = match self.callable.bind(py).call0() {
            Ok(value) => value,
            Err(error) => return Err(self.raised(py, error)),
        };
        if value.hasattr(intern!(py, "__await__")).unwrap_or(false) {
            // A coroutine never awaited would warn; close it (nothing of it ran).
            if value.hasattr(intern!(py, "close")).unwrap_or(false) {
                let _ = value.call_method0(intern!(py, "close"));
            }
            return Err(self.refused(
                "returned an awaitable: a Client needs a provider that returns the credentials \
                 (an async provider is for AsyncClient)",
            ));
        }
        self.credentials(&value)
    }
}

/// The sync client's way: the provider is called on the thread that polls the call, the
/// caller's (`client::wait` polls it there, without the GIL, which is taken back here).
pub(crate) struct OnThisThread(pub(crate) Provider);

impl AskCredentials for OnThisThread {
    fn ask(&self) -> Pin<Box<dyn Future<Output = Result<Credentials>> + Send + '_>> {
        Box::pin(async move { Python::attach(|py| self.0.call_here(py)) })
    }
}

/// The async client's way: the provider is called on the event loop of the call.
pub(crate) struct OnTheLoop {
    pub(crate) provider: Provider,
    pub(crate) event_loop: Arc<Py<PyAny>>,
}

impl AskCredentials for OnTheLoop {
    fn ask(&self) -> Pin<Box<dyn Future<Output = Result<Credentials>> + Send + '_>> {
        let (sender, receiver) = oneshot::channel();
        let provider = self.provider.clone();
        let event_loop = self.event_loop.clone();
        // The completion thread holds the GIL and is no runtime worker: it schedules the call.
        aio::observe_later(Box::new(move |py| {
            let call = AskOnLoop {
                provider,
                reply: Reply::new(sender),
            };
            // A closed loop refuses: `call` is dropped with its sender, and the ask fails.
            let _ = event_loop
                .bind(py)
                .call_method1(intern!(py, "call_soon_threadsafe"), (call,));
        }));
        let name = self.provider.name.clone();
        Box::pin(async move {
            receiver.await.unwrap_or_else(|_| {
                Err(Error::Provider {
                    message: format!(
                        "the credentials provider {name} could not be called: the event loop \
                         of the call is closed"
                    ),
                    cause: None,
                    interrupt: false,
                })
            })
        })
    }
}

/// Where the loop's answer goes: the leader of the flight, if it still waits.
struct Reply(Mutex<Option<oneshot::Sender<Result<Credentials>>>>);

impl Reply {
    fn new(sender: oneshot::Sender<Result<Credentials>>) -> Arc<Reply> {
        Arc::new(Reply(Mutex::new(Some(sender))))
    }

    fn waited_for(&self) -> bool {
        let sender = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        sender.as_ref().is_some_and(|s| !s.is_closed())
    }

    fn send(&self, outcome: Result<Credentials>) {
        let sender = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(sender) = sender {
            let _ = sender.send(outcome);
        }
    }
}

/// The callback that calls the provider on the event loop.
#[pyclass(frozen)]
struct AskOnLoop {
    provider: Provider,
    reply: Arc<Reply>,
}

#[pymethods]
impl AskOnLoop {
    fn __call__(&self, py: Python<'_>) {
        if !self.reply.waited_for() {
            return; // the call was cancelled meanwhile: nobody needs the credentials
        }
        let provider = &self.provider;
        let value = match provider.callable.bind(py).call0() {
            Ok(value) => value,
            Err(error) => return self.reply.send(Err(provider.raised(py, error))),
        };
        if !value.hasattr(intern!(py, "__await__")).unwrap_or(false) {
            return self.reply.send(provider.credentials(&value));
        }
        // An `async def` provider: awaited as a task of this loop.
        let scheduled = py
            .import(intern!(py, "asyncio"))
            .and_then(|asyncio| asyncio.call_method1(intern!(py, "ensure_future"), (value,)))
            .and_then(|task| {
                let done = ProviderDone {
                    provider: provider.clone(),
                    reply: self.reply.clone(),
                };
                task.call_method1(intern!(py, "add_done_callback"), (done,))
            });
        if let Err(error) = scheduled {
            self.reply.send(Err(provider.raised(py, error)));
        }
    }
}

/// The done-callback of an `async def` provider's task.
#[pyclass(frozen)]
struct ProviderDone {
    provider: Provider,
    reply: Arc<Reply>,
}

#[pymethods]
impl ProviderDone {
    fn __call__(&self, task: &Bound<'_, PyAny>) {
        let py = task.py();
        let outcome = match task.call_method0(intern!(py, "result")) {
            Ok(value) => self.provider.credentials(&value),
            Err(error) => Err(self.provider.raised(py, error)),
        };
        self.reply.send(outcome);
    }
}
