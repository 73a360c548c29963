//! `_core.NativeClient`: the sync face of the core client. The Python
//! `Client` (python/recurring_payments/_client.py) wraps it and builds resources.

use crate::errors::{to_py, Fallible};
use std::cell::Cell;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use rp_core::auth::{AskCredentials, CredentialSource};
use rp_core::client::{Client, ClientConfig};
use rp_core::hyper_wire::WireSettings;
use rp_core::proxy::ProxySetting;
use rp_core::request::seconds;
use rp_core::runtime::{block_on_here, block_on_here_checking};
use rp_core::tls::Verify;
use rp_core::transport;
use rp_core::wire::Driver;

use super::call::{self, Call, CallOptions};
use super::observed::{Observed, Slot};
use super::provider::{credentials_from, OnTheLoop, OnThisThread, Provider};
use super::reply::{observe, parse_response, response_tuple, Observers};
use super::token::PyToken;
use super::{aio, client_async};

/// The client's settings as `_settings.Settings` holds them, read attribute by attribute: one
/// value across the boundary, converted once into the core's `ClientConfig`
/// (`NativeSettings::into_config`), so a new setting is one field here and one line there.
#[derive(FromPyObject)]
pub(crate) struct NativeSettings {
    base_url: String,
    profile: String,
    timeout: f64,
    connect_timeout: f64,
    total_timeout: f64,
    retries: u32,
    token_leeway: f64,
    max_response_size: usize,
    allow_http: bool,
    verify: VerifyArg,
    headers: Vec<(String, String)>,
    token_store: Option<String>,
    request_id_headers: Vec<String>,
    proxy: Option<String>,
    trust_env: bool,
}

/// `verify` as `_settings` leaves it: a flag, or a CA bundle's path as text.
#[derive(FromPyObject)]
enum VerifyArg {
    Flag(bool),
    CaBundle(String),
}

impl NativeSettings {
    /// The core's configuration; `user_agent` is the header's final value. The core's
    /// converters own the rules of the values the wire reads (a header name, a proxy URL).
    fn into_config(
        self,
        credentials: CredentialSource,
        user_agent: &str,
    ) -> rp_core::error::Result<ClientConfig> {
        let wire = WireSettings {
            verify: match self.verify {
                VerifyArg::Flag(true) => Verify::System,
                VerifyArg::Flag(false) => Verify::Off,
                VerifyArg::CaBundle(path) => Verify::CaBundle(path),
            },
            connect_timeout: seconds("connect_timeout", self.connect_timeout)?,
            proxy: ProxySetting::new(self.proxy.as_deref(), self.trust_env)?,
            user_agent: transport::user_agent(user_agent)?,
            max_response_size: self.max_response_size,
            request_id_headers: transport::request_id_names(&self.request_id_headers)?,
        };
        Ok(ClientConfig {
            base_url: self.base_url,
            profile: self.profile,
            credentials,
            timeout: self.timeout,
            retries: self.retries,
            token_leeway: self.token_leeway,
            allow_http: self.allow_http,
            total_timeout: self.total_timeout,
            headers: self.headers,
            token_store: self.token_store,
            wire,
        })
    }
}

/// The native client; one per `recurring_payments.Client`, and one per identity derived from
/// it (`with_credentials`).
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct NativeClient {
    /// `None` once closed: the core goes then, and with it the client's hold on its connection
    /// pools, however long this object lives on (a kept error's frames name it; an async
    /// call's frames are in a cycle with its future, which only the GC breaks).
    core: Arc<CoreSlot>,
    logger: Py<PyAny>,
    /// `credentials=` a callable: asked where each token flight's leader runs (`provider.rs`).
    provider: Option<Provider>,
    /// The identities derived from the same original: closing the original closes them all.
    family: Arc<Family>,
    original: bool,
}

type CoreSlot = RwLock<Option<Arc<Client>>>;

#[derive(Default)]
struct Family {
    members: Mutex<Vec<Weak<CoreSlot>>>,
}

/// The source of `credentials` (a provider when `provider_name` names it) and the provider.
fn source_from(
    credentials: &Bound<'_, PyAny>,
    provider_name: Option<String>,
) -> PyResult<(CredentialSource, Option<Provider>)> {
    Ok(match provider_name {
        Some(name) => {
            let provider = Provider {
                callable: Arc::new(credentials.clone().unbind()),
                name: name.as_str().into(),
            };
            (CredentialSource::Provider { name }, Some(provider))
        }
        None => (
            CredentialSource::Fixed(credentials_from(credentials)?),
            None,
        ),
    })
}

#[pymethods]
impl NativeClient {
    /// `settings` is the checked `_settings.Settings` (its fields are read by name);
    /// `user_agent` is the header's final value.
    /// `credentials`: the credentials, or a provider when `provider_name` is given (what
    /// messages call it).
    #[new]
    #[pyo3(signature = (settings, *, credentials, user_agent, logger, provider_name=None))]
    fn new(
        settings: NativeSettings,
        credentials: &Bound<'_, PyAny>,
        user_agent: String,
        logger: Py<PyAny>,
        provider_name: Option<String>,
    ) -> Fallible<Self> {
        let (source, provider) = source_from(credentials, provider_name)?;
        let py = credentials.py();
        // Building the pool may read a CA file, the token store derives its keys (PBKDF2):
        // without the GIL.
        let core = py.detach(|| Client::new(settings.into_config(source, &user_agent)?))?;
        Ok(NativeClient {
            core: Arc::new(RwLock::new(Some(Arc::new(core)))),
            logger,
            provider,
            family: Arc::default(),
            original: true,
        })
    }

    /// A client acting with `credentials` (or the provider `provider_name` names): this one's
    /// settings, connections and token store, its own token and token flight. No I/O.
    #[pyo3(signature = (credentials, *, provider_name=None))]
    fn with_credentials(
        &self,
        credentials: &Bound<'_, PyAny>,
        provider_name: Option<String>,
    ) -> Fallible<NativeClient> {
        let (source, provider) = source_from(credentials, provider_name)?;
        let core = self.core()?.with_credentials(source)?;
        let slot = Arc::new(RwLock::new(Some(Arc::new(core))));
        let mut members = self
            .family
            .members
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        members.retain(|member| member.strong_count() > 0);
        members.push(Arc::downgrade(&slot));
        drop(members);
        Ok(NativeClient {
            core: slot,
            logger: self.logger.clone_ref(credentials.py()),
            provider,
            family: self.family.clone(),
            original: false,
        })
    }

    /// Let the core go (calls in flight finish with their own reference): idle connections
    /// close once no other client uses the same pool. Later calls raise RuntimeError. The
    /// original client's close closes every identity derived from it.
    fn close(&self, py: Python<'_>) {
        let mut cores = vec![take(&self.core)];
        if self.original {
            let members = std::mem::take(
                &mut *self
                    .family
                    .members
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            cores.extend(members.iter().filter_map(Weak::upgrade).map(|m| take(&m)));
        }
        // Outside the locks, without the GIL: the pools' connections are closed here.
        py.detach(|| {
            drop(cores);
            rp_core::hyper_wire::release_unused_here();
        });
    }

    /// The absolute URL of an href the server sent (relative ones resolve against base_url).
    fn resolve<'py>(&self, py: Python<'py>, reference: &str) -> Fallible<Bound<'py, PyString>> {
        self.resolve_server_href(py, reference)
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
    ) -> Fallible<PyToken> {
        let core = self.core()?;
        let headers = headers.unwrap_or_default();
        let options = call::options_of(options);
        let ask = self.provider.clone().map(OnThisThread);
        let slot = Slot::default();
        let waited = wait(py, async {
            let mut observed = Observed::into_slot(&slot);
            let (log, store_log) = (&mut observed.log, &mut observed.store_log);
            let driver = Driver::ThisThread;
            let ask = ask.as_ref().map(|a| a as &dyn AskCredentials);
            let outcome = core.authenticate(&headers, &options, driver, ask, log, store_log);
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
    ) -> Fallible<Bound<'py, PyTuple>> {
        let core = self.core()?;
        let request = call.prepare(&core)?;
        // Only a recorder reads the template (telemetry off: nothing copied).
        let template = recorder.as_ref().and(request.template.clone());
        let ask = self.provider.clone().map(OnThisThread);
        let slot = Slot::default();
        let waited = wait(py, async {
            // Read back from `slot` if the wait is interrupted before the call ends.
            let mut observed = Observed::into_slot(&slot);
            let method = request.method.clone();
            let (log, store_log) = (&mut observed.log, &mut observed.store_log);
            let ask = ask.as_ref().map(|a| a as &dyn AskCredentials);
            let outcome = core.send(request, Driver::ThisThread, ask, log, store_log);
            let outcome = outcome.await;
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
        let ask = self.ask_on_the_loop(py)?;
        client_async::authenticate(py, self.core()?, observers, headers, options, ask)
    }

    /// Like `send`, as an awaitable (call it from a coroutine of the running loop), and the
    /// `Abort` of its request, which that coroutine calls when its await is interrupted.
    #[pyo3(signature = (call, recorder=None))]
    fn send_async<'py>(
        &self,
        py: Python<'py>,
        call: Call<'py>,
        recorder: Option<Py<PyAny>>,
    ) -> Fallible<(Bound<'py, PyAny>, aio::Abort)> {
        let core = self.core()?;
        let request = call.prepare(&core)?;
        let observers = Observers {
            logger: self.logger.clone_ref(py),
            template: recorder.as_ref().and(request.template.clone()),
            recorder,
        };
        let ask = self.ask_on_the_loop(py)?;
        Ok(client_async::send(py, core, observers, request, ask)?)
    }
}

fn take(slot: &CoreSlot) -> Option<Arc<Client>> {
    slot.write().unwrap_or_else(PoisonError::into_inner).take()
}

impl NativeClient {
    /// How an async call asks the provider (if any): on the running loop, the caller's.
    fn ask_on_the_loop(&self, py: Python<'_>) -> PyResult<Option<OnTheLoop>> {
        let Some(provider) = &self.provider else {
            return Ok(None);
        };
        let event_loop = pyo3_async_runtimes::get_running_loop(py)?;
        Ok(Some(OnTheLoop {
            provider: provider.clone(),
            event_loop: Arc::new(event_loop.unbind()),
        }))
    }

    /// The absolute URL of an href the server sent, as `resolve` gives it to Python.
    pub(crate) fn resolve_server_href<'py>(
        &self,
        py: Python<'py>,
        href: &str,
    ) -> Fallible<Bound<'py, PyString>> {
        let core = self.core()?;
        let url = rp_core::url_text::resolve_server_href_text(core.base_url(), href)?;
        Ok(PyString::new(py, &url))
    }

    /// The core, or the error of a closed client (a call that raced `close`).
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
        let check = || Python::attach(|py| py.check_signals());
        block_on_here_checking(future, Duration::from_millis(100), check).map_err(to_py)?
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
