//! `_core.NativeClient`: the sync face of the core client. The Python
//! `Client` (python/recurring_payments/_client.py) wraps it and builds resources.

use crate::errors::{to_py, Outcome};
use std::cell::Cell;
use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use rp_core::auth::Credentials;
use rp_core::client::{Client, ClientConfig};
use rp_core::runtime::block_on_here;
use rp_core::tls::Verify;
use rp_core::transport::Driver;

use super::call::{self, Call, CallOptions};
use super::observed::{Observed, Slot};
use super::reply::{observe, parse_response, response_tuple, Observers};
use super::token::PyToken;
use super::{aio, client_async};

fn credentials_from(obj: &Bound<'_, PyAny>) -> PyResult<Credentials> {
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

fn verify_from(obj: &Bound<'_, PyAny>) -> PyResult<Verify> {
    if let Ok(flag) = obj.extract::<bool>() {
        return Ok(if flag { Verify::System } else { Verify::Off });
    }
    let path = obj.py().import("os")?.call_method1("fspath", (obj,))?;
    Ok(Verify::CaBundle(path.extract()?))
}

/// The client's settings as `_settings.Settings` holds them, read attribute by attribute: one
/// value across the boundary, so a new setting is one field here.
#[derive(FromPyObject)]
pub(crate) struct NativeSettings<'py> {
    base_url: String,
    profile: String,
    timeout: f64,
    connect_timeout: f64,
    total_timeout: f64,
    retries: u32,
    token_leeway: f64,
    max_response_size: usize,
    allow_http: bool,
    verify: Bound<'py, PyAny>,
    headers: Vec<(String, String)>,
    token_store: Option<String>,
    request_id_headers: Vec<String>,
    proxy: Option<String>,
    trust_env: bool,
}

/// The native client; one per `recurring_payments.Client`.
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct NativeClient {
    /// `None` once closed: the core goes then, and with it the client's hold on its connection
    /// pools, however long this object lives on (a kept error's frames name it; an async
    /// call's frames are in a cycle with its future, which only the GC breaks).
    core: RwLock<Option<Arc<Client>>>,
    logger: Py<PyAny>,
}

#[pymethods]
impl NativeClient {
    /// `settings` is the checked `_settings.Settings` (its fields are read by name);
    /// `user_agent` is the header's final value.
    #[new]
    #[pyo3(signature = (settings, *, credentials, user_agent, logger))]
    fn new(
        settings: NativeSettings<'_>,
        credentials: &Bound<'_, PyAny>,
        user_agent: String,
        logger: Py<PyAny>,
    ) -> Outcome<Self> {
        let config = ClientConfig {
            base_url: settings.base_url,
            profile: settings.profile,
            credentials: credentials_from(credentials)?,
            timeout: settings.timeout,
            connect_timeout: settings.connect_timeout,
            retries: settings.retries,
            token_leeway: settings.token_leeway,
            max_response_size: settings.max_response_size,
            allow_http: settings.allow_http,
            verify: verify_from(&settings.verify)?,
            user_agent,
            total_timeout: settings.total_timeout,
            headers: settings.headers,
            token_store: settings.token_store,
            request_id_headers: settings.request_id_headers,
            proxy: settings.proxy,
            trust_env: settings.trust_env,
        };
        let py = credentials.py();
        // Building the pool may read a CA file, the token store derives its keys (PBKDF2):
        // without the GIL.
        let core = py.detach(|| Client::new(config))?;
        Ok(NativeClient {
            core: RwLock::new(Some(Arc::new(core))),
            logger,
        })
    }

    /// Let the core go (calls in flight finish with their own reference): idle connections
    /// close once no other client uses the same pool. Later calls raise RuntimeError.
    fn close(&self, py: Python<'_>) {
        let core = match self.core.write() {
            Ok(mut slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        // Outside the lock, without the GIL: the pools' connections are closed here.
        py.detach(|| {
            drop(core);
            rp_core::transport::release_unused_here();
        });
    }

    /// The absolute URL of an href the server sent (relative ones resolve against base_url).
    fn resolve(&self, reference: &str) -> Outcome<String> {
        self.resolve_server_href(reference)
    }

    #[getter]
    fn token(&self) -> Option<PyToken> {
        self.core().ok()?.token().map(PyToken::from)
    }

    /// `headers`: this call's extra headers for the token request (the trace context);
    /// `recorder`: called once with the attempts (`telemetry.rs`); `options`: a derived
    /// client's `CallOptions`.
    #[pyo3(signature = (*, headers=None, recorder=None, options=None))]
    fn authenticate(
        &self,
        py: Python<'_>,
        headers: Option<Vec<(String, String)>>,
        recorder: Option<Py<PyAny>>,
        options: Option<&Bound<'_, CallOptions>>,
    ) -> Outcome<PyToken> {
        let core = self.core()?;
        let headers = headers.unwrap_or_default();
        let options = call::options_of(options);
        let slot = Slot::default();
        let waited = wait(py, async {
            let mut observed = Observed::into_slot(&slot);
            let (log, store_log) = (&mut observed.log, &mut observed.store_log);
            let driver = Driver::ThisThread;
            let outcome = core.authenticate(&headers, &options, driver, log, store_log);
            let outcome = outcome.await;
            let (log, store_log, _) = observed.finish();
            (outcome, log, store_log)
        });
        let (outcome, log, store_log) = waited.inspect_err(|interrupted| {
            slot.observe(py, &self.logger, recorder.as_ref(), None, interrupted);
        })?;
        observe(
            self.logger.bind(py),
            recorder.as_ref(),
            None,
            &log,
            &store_log,
        );
        Ok(PyToken::from(outcome?))
    }

    /// Send one request, `call` (see `call::Call`: method, target, variables, body, if_match,
    /// per-call headers and options); `recorder`, if given, is called once with the attempts
    /// and the template (`telemetry.rs`). Returns (status, headers: an iterable of (name,
    /// value) pairs, made when iterated, document or None for an empty body).
    #[pyo3(signature = (call, recorder=None))]
    pub(crate) fn send<'py>(
        &self,
        py: Python<'py>,
        call: Call<'py>,
        recorder: Option<Py<PyAny>>,
    ) -> Outcome<Bound<'py, PyTuple>> {
        let core = self.core()?;
        let request = call.prepare(&core)?;
        // Only a recorder reads the template (telemetry off: nothing copied).
        let template = recorder.as_ref().and(request.template.clone());
        let slot = Slot::default();
        let waited = wait(py, async {
            // Read back from `slot` if the wait is interrupted before the call ends.
            let mut observed = Observed::into_slot(&slot);
            let method = request.method.clone();
            let (log, store_log) = (&mut observed.log, &mut observed.store_log);
            let outcome = core.send(request, Driver::ThisThread, log, store_log).await;
            let parsed = outcome.and_then(|r| parse_response(method.as_str(), r, log));
            let (log, store_log, _) = observed.finish();
            (parsed, log, store_log)
        });
        let (outcome, log, store_log) = waited.inspect_err(|interrupted| {
            let template = template.as_deref();
            slot.observe(py, &self.logger, recorder.as_ref(), template, interrupted);
        })?;
        let recorder = recorder.as_ref();
        observe(
            self.logger.bind(py),
            recorder,
            template.as_deref(),
            &log,
            &store_log,
        );
        Ok(response_tuple(py, outcome?)?)
    }

    /// Like `authenticate`, as an awaitable (call it from a coroutine of the running loop), and
    /// the `Abort` of its request, which that coroutine calls when its await is interrupted.
    #[pyo3(signature = (*, headers=None, recorder=None, options=None))]
    fn authenticate_async<'py>(
        &self,
        py: Python<'py>,
        headers: Option<Vec<(String, String)>>,
        recorder: Option<Py<PyAny>>,
        options: Option<&Bound<'py, CallOptions>>,
    ) -> PyResult<(Bound<'py, PyAny>, aio::Abort)> {
        let observers = Observers {
            logger: self.logger.clone_ref(py),
            recorder,
            template: None,
        };
        let headers = headers.unwrap_or_default();
        let options = call::options_of(options);
        client_async::authenticate(py, self.core()?, observers, headers, options)
    }

    /// Like `send`, as an awaitable (call it from a coroutine of the running loop), and the
    /// `Abort` of its request, which that coroutine calls when its await is interrupted.
    #[pyo3(signature = (call, recorder=None))]
    fn send_async<'py>(
        &self,
        py: Python<'py>,
        call: Call<'py>,
        recorder: Option<Py<PyAny>>,
    ) -> Outcome<(Bound<'py, PyAny>, aio::Abort)> {
        let core = self.core()?;
        let request = call.prepare(&core)?;
        let observers = Observers {
            logger: self.logger.clone_ref(py),
            template: recorder.as_ref().and(request.template.clone()),
            recorder,
        };
        Ok(client_async::send(py, core, observers, request)?)
    }
}

impl NativeClient {
    /// The core, or the error of a closed client (a call that raced `close`).
    /// The absolute URL of an href the server sent, as `resolve` gives it to Python.
    pub(crate) fn resolve_server_href(&self, href: &str) -> Outcome<String> {
        Ok(self.core()?.resolve_href(href)?.to_string())
    }

    fn core(&self) -> PyResult<Arc<Client>> {
        let slot = self
            .core
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.clone()
            .ok_or_else(|| PyRuntimeError::new_err("this client is closed"))
    }
}

/// Run a core future to completion without the GIL, on this thread's own runtime
/// (`Driver::ThisThread`). On Python's main thread it looks for signals every 100 ms, so Ctrl-C
/// interrupts a slow request (the future is dropped, which cancels the request).
///
/// The request and its connection are driven here, by the caller, as a blocking client on a
/// current-thread runtime does: no hand-off to a worker thread and back at every step.
pub(crate) fn wait<T, F>(py: Python<'_>, future: F) -> PyResult<T>
where
    F: Future<Output = T> + Send,
    T: Send,
{
    // Boxed once here: the request's future (several KB) is then moved as a pointer.
    let future = Box::pin(future);
    if !runs_signal_handlers(py) {
        // Python runs signal handlers on its main thread only: on any other there is nothing
        // to look for, so no timer per call and no GIL taken every 100 ms.
        return py.detach(|| block_on_here(future)).map_err(to_py);
    }
    py.detach(|| {
        block_on_here(async {
            tokio::pin!(future);
            loop {
                tokio::select! {
                    biased;
                    value = &mut future => return Ok(value),
                    () = tokio::time::sleep(Duration::from_millis(100)) => {
                        Python::attach(|py| py.check_signals())?;
                    }
                }
            }
        })
        .map_err(to_py)?
    })
}

/// Whether this thread is Python's main thread, the one that runs signal handlers: asked
/// once per thread and process (after a fork, the forking thread is the child's main thread).
/// When Python cannot say, it is taken as the main thread (signals are looked for, as ever).
fn runs_signal_handlers(py: Python<'_>) -> bool {
    thread_local! {
        /// (pid, answer) of the last ask on this thread; pid 0: never asked.
        static MAIN: Cell<(u32, bool)> = const { Cell::new((0, true)) };
    }
    let pid = rp_core::runtime::pid();
    match MAIN.try_with(Cell::get) {
        Ok((asked, main)) if asked == pid => main,
        _ => {
            let main = is_main_thread(py).unwrap_or(true);
            let _ = MAIN.try_with(|cell| cell.set((pid, main)));
            main
        }
    }
}

fn is_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import(pyo3::intern!(py, "threading"))?;
    let main = threading.call_method0("main_thread")?.getattr("ident")?;
    main.eq(threading.call_method0("get_ident")?)
}
