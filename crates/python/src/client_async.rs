//! The asyncio face of `NativeClient`: the same core calls as the sync methods, returned as
//! awaitables (see `aio.rs`). Results are converted and logged when they are handed back.

use std::sync::Arc;

use pyo3::prelude::*;

use rp_core::auth::{AskCredentials, StoreEvent, Token as CoreToken};
use rp_core::client::Client;
use rp_core::error::Error;
use rp_core::records::Attempt;
use rp_core::request::{CallOptions, Prepared};
use rp_core::wire::Driver;

use super::aio;
use super::observed::Observed;
use super::provider::OnTheLoop;
use super::reply::{observe, parse_response, response_tuple, Observers, Parsed};
use super::token::PyToken;
use crate::errors::to_py;

enum Delivery {
    Response(Box<Parsed>),
    Token(Arc<CoreToken>),
}

/// A finished core call. It becomes a Python value (or exception) on the completion thread,
/// with the GIL and no Rust lock held: the only place where its DEBUG lines may be written.
struct Completion {
    /// `None` only if `Observed::finish` had none (it always has, from `Observed::later`).
    observers: Option<Observers>,
    log: Vec<Attempt>,
    store_log: Vec<StoreEvent>,
    outcome: Result<Delivery, Error>,
}

impl<'py> IntoPyObject<'py> for Completion {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(observers) = &self.observers {
            let (recorder, template) = (observers.recorder.as_ref(), observers.template.as_deref());
            observe(
                observers.logger.bind(py),
                recorder,
                template,
                &self.log,
                &self.store_log,
            );
        }
        match self.outcome.map_err(to_py)? {
            Delivery::Response(parsed) => Ok(response_tuple(py, *parsed)?.into_any()),
            Delivery::Token(inner) => Ok(Bound::new(py, PyToken::from(inner))?.into_any()),
        }
    }
}

/// Awaitable of `(status, headers, document)`, as `NativeClient.send` returns, and its `Abort`.
pub(crate) fn send<'py>(
    py: Python<'py>,
    core: Arc<Client>,
    observers: Observers,
    request: Prepared,
    ask: Option<OnTheLoop>,
) -> PyResult<(Bound<'py, PyAny>, aio::Abort)> {
    aio::awaitable(py, async move {
        // Observed by its drop if the await is cancelled before the call ends.
        let mut observed = Observed::later(observers);
        let method = request.method.clone();
        let (log, store_log) = (&mut observed.log, &mut observed.store_log);
        let ask = ask.as_ref().map(|a| a as &dyn AskCredentials);
        let outcome = core
            .send(request, Driver::Shared, ask, log, store_log)
            .await;
        let parsed = outcome.and_then(|r| parse_response(method.as_str(), r, log));
        let (log, store_log, observers) = observed.finish();
        Ok(Completion {
            observers,
            log,
            store_log,
            outcome: parsed.map(|parsed| Delivery::Response(Box::new(parsed))),
        })
    })
}

/// Awaitable of a new `Token`, and its `Abort`.
pub(crate) fn authenticate<'py>(
    py: Python<'py>,
    core: Arc<Client>,
    observers: Observers,
    headers: Vec<(String, String)>,
    options: Arc<CallOptions>,
    ask: Option<OnTheLoop>,
) -> PyResult<(Bound<'py, PyAny>, aio::Abort)> {
    aio::awaitable(py, async move {
        let mut observed = Observed::later(observers);
        let (log, store_log) = (&mut observed.log, &mut observed.store_log);
        let ask = ask.as_ref().map(|a| a as &dyn AskCredentials);
        let outcome = core
            .authenticate(&headers, &options, Driver::Shared, ask, log, store_log)
            .await;
        let (log, store_log, observers) = observed.finish();
        Ok(Completion {
            observers,
            log,
            store_log,
            outcome: outcome.map(Delivery::Token),
        })
    })
}
