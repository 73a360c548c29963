//! asyncio awaitables over the process's one runtime (`rp_core::runtime::runtime`).
//!
//! pyo3-async-runtimes bridges a Rust future to an `asyncio.Future`; its own tokio runtime is
//! a `OnceLock` that a forked child inherits without threads, so we plug ours in through
//! `generic::Runtime`. Cancelling the asyncio future drops the Rust future (and with it any
//! token lock it held). Completions (results handed back to the event loop) need the GIL: they
//! run on one completion thread per process, which drains every queued completion under one
//! GIL acquisition, instead of one blocking-pool thread per finished request.

use crate::errors::to_py;
use std::cell::OnceCell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll};

use pyo3::prelude::*;
use pyo3_async_runtimes::generic::{self, ContextExt};
use pyo3_async_runtimes::TaskLocals;

use super::shutdown;
use rp_core::runtime::{runtime, PerProcess};

/// The process runtime as seen by pyo3-async-runtimes.
pub struct IoRuntime;

tokio::task_local! {
    static TASK_LOCALS: OnceCell<TaskLocals>;
}

/// What `IoRuntime::spawn` hands back; pyo3-async-runtimes only awaits it to report panics.
pub enum Spawned {
    Task(tokio::task::JoinHandle<()>),
    /// Queued on the completion thread, or (unreachable, see `spawn`) never started.
    Detached,
}

impl Future for Spawned {
    type Output = Result<(), tokio::task::JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Spawned::Task(handle) => Pin::new(handle).poll(cx),
            Spawned::Detached => Poll::Ready(Ok(())),
        }
    }
}

impl generic::Runtime for IoRuntime {
    type JoinError = tokio::task::JoinError;
    type JoinHandle = Spawned;

    fn spawn<F>(fut: F) -> Spawned
    where
        F: Future<Output = ()> + Send + 'static,
    {
        // `awaitable` starts the runtime before converting, and a runtime built in this process
        // stays, so this cannot fail; if it did, the awaitable would never complete.
        match runtime() {
            Ok(rt) => Spawned::Task(rt.spawn(fut)),
            Err(_) => Spawned::Detached,
        }
    }

    fn spawn_blocking<F>(f: F) -> Spawned
    where
        F: FnOnce() + Send + 'static,
    {
        complete(Box::new(f));
        Spawned::Detached
    }
}

impl ContextExt for IoRuntime {
    fn scope<F, R>(locals: TaskLocals, fut: F) -> Pin<Box<dyn Future<Output = R> + Send>>
    where
        F: Future<Output = R> + Send + 'static,
    {
        let cell = OnceCell::new();
        let _ = cell.set(locals);
        Box::pin(TASK_LOCALS.scope(cell, fut))
    }

    fn get_task_locals() -> Option<TaskLocals> {
        TASK_LOCALS
            .try_with(|cell| cell.get().cloned())
            .unwrap_or_default()
    }
}

/// An `asyncio.Future` of the running loop that resolves to `fut`'s output, converted to Python
/// (with the GIL, on the completion thread). Must be called from a coroutine of that loop.
pub fn awaitable<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
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
    if rp_core::runtime::started().is_none() {
        py.detach(runtime).map_err(to_py)?;
    }
    generic::future_into_py::<IoRuntime, F, T>(py, fut)
}

type Job = Box<dyn FnOnce() + Send>;

/// Jobs run under one GIL acquisition before the GIL is given back to the event loop.
const BATCH: usize = 64;

static COMPLETIONS: PerProcess<mpsc::Sender<Job>> = PerProcess::new();

/// Run `job` (which takes the GIL itself) on this process's completion thread.
fn complete(job: Job) {
    match COMPLETIONS.get_or_try_init(start_completion_thread) {
        // A failed send means the thread has ended, which it does only once the interpreter
        // is shutting down: nobody awaits the result any more, so the job is dropped.
        Ok(tx) => drop(tx.send(job)),
        // No thread could be started: the blocking pool does the job.
        Err(_) => {
            if let Ok(rt) = runtime() {
                drop(rt.spawn_blocking(job));
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
                let ran = shutdown::attach(|_py| {
                    run(first);
                    for job in rx.try_iter().take(BATCH - 1) {
                        run(job);
                    }
                });
                if ran.is_none() {
                    return; // the interpreter is shutting down: nobody awaits any more
                }
            }
        })?;
    Ok(tx)
}

/// A job that panics must not take the completion thread down with it.
fn run(job: Job) {
    let _ = catch_unwind(AssertUnwindSafe(job));
}
