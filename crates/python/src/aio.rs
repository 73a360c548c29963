//! asyncio awaitables over the process's one runtime (`rp_core::runtime::runtime`).
//!
//! A call returns an `asyncio.Future` of the running loop and an `Abort`; its Rust future runs
//! as a task on the runtime. The awaiting coroutine aborts the task when its await is
//! interrupted (cancelled), which drops the Rust future, and with it any token lock it held. Results are handed back to the loops by one completion
//! thread per process (they need the GIL): it drains the finished requests in batches under one
//! GIL acquisition, converts each, and hands each event loop ONE callback per batch, which sets
//! every future of that loop: one `call_soon_threadsafe`, and one wake-up of the loop through its
//! self-pipe, per batch instead of per request.

use crate::errors::to_py;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use pyo3::IntoPyObjectExt;
use pyo3_async_runtimes::err::RustPanic;
use tokio::task::AbortHandle;

use super::shutdown;
use rp_core::runtime::{runtime, PerProcess};

/// An `asyncio.Future` of the running loop that resolves to `fut`'s output, converted to Python
/// (with the GIL, on the completion thread), and the `Abort` of its task. Must be called from
/// a coroutine of that loop, which calls `abort()` when its await is interrupted (cancelled):
/// cheaper than a done-callback on every future, which asyncio would schedule as one more
/// loop callback per request.
pub fn awaitable<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<(Bound<'py, PyAny>, Abort)>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    if shutdown::closing() {
        // Its completion could never be handed back (see `shutdown`); fail like
        // concurrent.futures does after interpreter shutdown instead of never completing.
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "cannot start a request after interpreter shutdown",
        ));
    }
    // Build the runtime (it starts threads) without the GIL, like every global of the crate;
    // once built, skip the detach: releasing and retaking the GIL on every call was measurable.
    let rt = match rp_core::runtime::started() {
        Some(rt) => rt,
        None => py.detach(runtime).map_err(to_py)?,
    };
    let event_loop = pyo3_async_runtimes::get_running_loop(py)?;
    let future = create_future(py, &event_loop)?;
    let (loop_ref, future_ref) = (event_loop.unbind(), future.clone().unbind());
    // Boxed before the spawn: the request's future is large, and the spawn would otherwise
    // copy it whole at each of its layers.
    let fut = Box::pin(fut);
    let task = rt.spawn(async move {
        let outcome = CatchUnwind(fut).await;
        complete(Finished {
            event_loop: loop_ref,
            future: future_ref,
            outcome: Box::new(move |py| match outcome {
                Ok(result) => result.and_then(|value| value.into_py_any(py)),
                Err(panic) => Err(RustPanic::new_err(format!(
                    "rust future panicked: {}",
                    panic_message(&*panic)
                ))),
            }),
        });
    });
    Ok((future, Abort(task.abort_handle())))
}

/// asyncio's `Future` class, and `BaseEventLoop.create_future`, which makes one of them.
struct Asyncio {
    future: Py<PyAny>,
    create_future: Py<PyAny>,
}

static ASYNCIO: PyOnceLock<Asyncio> = PyOnceLock::new();

/// `event_loop.create_future()`. A loop that keeps asyncio's own makes `Future(loop=loop)`,
/// made here without its Python frame (a tenth of the call's cost); any other loop (uvloop,
/// a subclass overriding it) is asked.
fn create_future<'py>(
    py: Python<'py>,
    event_loop: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let asyncio = ASYNCIO.get_or_try_init(py, || -> PyResult<Asyncio> {
        let module = py.import("asyncio")?;
        Ok(Asyncio {
            future: module.getattr("Future")?.unbind(),
            create_future: module
                .getattr("BaseEventLoop")?
                .getattr("create_future")?
                .unbind(),
        })
    })?;
    let create = intern!(py, "create_future");
    if event_loop
        .get_type()
        .getattr(create)?
        .is(asyncio.create_future.bind(py))
    {
        let kwargs = PyDict::new(py);
        kwargs.set_item(intern!(py, "loop"), event_loop)?;
        asyncio.future.bind(py).call((), Some(&kwargs))
    } else {
        event_loop.call_method0(create)
    }
}

/// The task of an awaitable: `abort()` drops its Rust future (and any token lock it held).
/// Once the result is set the task has handed it over, so aborting then changes nothing.
#[pyclass(frozen)]
pub struct Abort(AbortHandle);

#[pymethods]
impl Abort {
    fn abort(&self) {
        self.0.abort();
    }
}

/// A Rust future whose panic becomes an output (the awaiting task gets `RustPanic`).
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text
    } else {
        "unknown error"
    }
}

/// A finished request: its loop, its future, and its outcome to convert with the GIL.
struct Finished {
    event_loop: Py<PyAny>,
    future: Py<PyAny>,
    outcome: Convert,
}

/// Makes the Python value (or exception) of an outcome.
type Convert = Box<dyn for<'py> FnOnce(Python<'py>) -> PyResult<Py<PyAny>> + Send>;

/// Requests handed back under one GIL acquisition before the GIL is given back to the loops.
const BATCH: usize = 64;

/// Work for the completion thread: a finished request, or what a cancelled one had done to
/// observe (its DEBUG lines and spans, `observed.rs`).
enum Job {
    Finished(Finished),
    Observe(Observe),
}

/// Writes a dropped call's DEBUG lines and spans, with the GIL.
pub(crate) type Observe = Box<dyn for<'py> FnOnce(Python<'py>) + Send>;

static COMPLETIONS: PerProcess<mpsc::Sender<Job>> = PerProcess::new();

/// Hand `finished` to this process's completion thread.
fn complete(finished: Finished) {
    send_job(Job::Finished(finished));
}

/// Have the completion thread run `observe` (from a runtime worker, which must not call
/// into Python itself).
pub(crate) fn observe_later(observe: Observe) {
    send_job(Job::Observe(observe));
}

fn send_job(job: Job) {
    match COMPLETIONS.get_or_try_init(start_completion_thread) {
        // A failed send means the thread has ended, which it does only once the interpreter
        // is shutting down: nobody awaits the result any more, so it is dropped.
        Ok(tx) => drop(tx.send(job)),
        // No thread could be started: a thread of the blocking pool hands this one back.
        Err(_) => {
            if let Ok(rt) = runtime() {
                drop(rt.spawn_blocking(move || {
                    shutdown::attach(|py| hand_back(py, std::iter::once(job)))
                }));
            }
        }
    }
}

/// Two workers racing to start it may start two; the loser's idle thread is leaked with its
/// sender (see `PerProcess`), which is harmless and happens at most once per worker.
fn start_completion_thread() -> std::io::Result<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("recurring-payments-asyncio".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let batch = std::iter::once(first).chain(rx.try_iter().take(BATCH - 1));
                if shutdown::attach(|py| hand_back(py, batch)).is_none() {
                    return; // the interpreter is shutting down: nobody awaits any more
                }
            }
        })?;
    Ok(tx)
}

/// Convert each finished request (its DEBUG lines and telemetry are written then), and give
/// each event loop one `Settle` of all its futures.
fn hand_back(py: Python<'_>, jobs: impl Iterator<Item = Job>) {
    let mut loops: Vec<(Py<PyAny>, Vec<Settled>)> = Vec::new();
    for job in jobs {
        let done = match job {
            Job::Finished(done) => done,
            Job::Observe(observe) => {
                // Like a conversion, it must not take the completion thread down.
                let _ = catch_unwind(AssertUnwindSafe(|| observe(py)));
                continue;
            }
        };
        // A conversion that panics must not take the completion thread down with it.
        let Ok(outcome) = catch_unwind(AssertUnwindSafe(|| (done.outcome)(py))) else {
            continue;
        };
        let settled = Settled {
            future: done.future,
            outcome,
        };
        match loops.iter_mut().find(|(l, _)| l.is(&done.event_loop)) {
            Some((_, futures)) => futures.push(settled),
            None => loops.push((done.event_loop, vec![settled])),
        }
    }
    for (event_loop, futures) in loops {
        let settle = Settle(std::sync::Mutex::new(futures));
        // A closed loop (its run ended with requests in flight) refuses: nobody awaits them.
        let _ = event_loop
            .bind(py)
            .call_method1(intern!(py, "call_soon_threadsafe"), (settle,));
    }
}

struct Settled {
    future: Py<PyAny>,
    outcome: PyResult<Py<PyAny>>,
}

/// The callback an event loop runs for a batch: it sets each future (not cancelled meanwhile).
#[pyclass(frozen)]
struct Settle(std::sync::Mutex<Vec<Settled>>);

#[pymethods]
impl Settle {
    fn __call__(&self, py: Python<'_>) {
        let futures = match self.0.lock() {
            Ok(mut futures) => std::mem::take(&mut *futures),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for Settled { future, outcome } in futures {
            let future = future.bind(py);
            // A future cancelled meanwhile refuses (InvalidStateError), which is all asking
            // `done()` first would have told, at one more call per request.
            let _ = match outcome {
                Ok(value) => future.call_method1(intern!(py, "set_result"), (value,)),
                Err(error) => future.call_method1(intern!(py, "set_exception"), (error,)),
            };
        }
    }
}
