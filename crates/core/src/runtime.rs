//! Process-wide values that must be rebuilt in a child after `os.fork()`.
//!
//! A tokio runtime or a connection pool inherited through fork has no worker threads and
//! sockets shared with the parent; using it hangs (the known pyreqwest/gunicorn `--preload`
//! bug). Each value is tagged with the pid that built it and rebuilt lazily in a child. The
//! stale one is leaked, never dropped: dropping it would try to join threads that do not exist.
//! No lock is involved, so a fork that happens while another thread is inside does no harm.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::task::{ready, Poll};
use std::time::Duration;

/// This process's id, cached: `std::process::id()` is a `getpid` system call (glibc stopped
/// caching it), and a request checked the pid three times. A fork clears the cache in the
/// child (a `pthread_atfork` handler, which runs inside `fork()` before the child returns),
/// so the child's first check reads its own pid.
pub fn pid() -> u32 {
    let cached = PID.load(Ordering::Relaxed);
    if cached != 0 {
        return cached;
    }
    let pid = std::process::id();
    if forget_pid_in_children() {
        PID.store(pid, Ordering::Relaxed);
    }
    pid
}

static PID: AtomicU32 = AtomicU32::new(0);

/// Whether a fork clears the cache (the handler is registered). The handler is registered
/// before the flag is set, never under a lock or a `Once`: a fork in the middle leaves at
/// worst a second registration in the child (the handler is idempotent), never a child
/// waiting for a thread that fork left behind, nor one without the handler.
#[cfg(unix)]
fn forget_pid_in_children() -> bool {
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    extern "C" fn forget() {
        PID.store(0, Ordering::Relaxed);
    }
    if !REGISTERED.load(Ordering::Acquire) {
        // Registering a handler has no precondition; it fails only without memory (ENOMEM),
        // and then the pid is not cached (`pid()` calls getpid each time).
        #[allow(unsafe_code)]
        let failed = unsafe { libc::pthread_atfork(None, None, Some(forget)) } != 0;
        if failed {
            return false;
        }
        REGISTERED.store(true, Ordering::Release);
    }
    true
}

#[cfg(not(unix))]
fn forget_pid_in_children() -> bool {
    false // no fork: the pid is read each time, as before
}

struct Slot<T> {
    pid: u32,
    value: T,
}

/// A value per process: built on first use, built again after a fork.
pub struct PerProcess<T: 'static> {
    slot: AtomicPtr<Slot<T>>,
}

impl<T: 'static> Default for PerProcess<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: 'static> PerProcess<T> {
    pub const fn new() -> Self {
        PerProcess {
            slot: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The value of this process, built with `make` if this process has none yet.
    pub fn get_or_try_init<E>(&self, make: impl FnOnce() -> Result<T, E>) -> Result<&T, E> {
        let pid = pid();
        let current = self.slot.load(Ordering::Acquire);
        if let Some(slot) = Self::deref(current) {
            if slot.pid == pid {
                return Ok(&slot.value);
            }
        }
        let value = make()?;
        let fresh: &'static mut Slot<T> = Box::leak(Box::new(Slot { pid, value }));
        let fresh_ptr: *mut Slot<T> = fresh;
        match self
            .slot
            .compare_exchange(current, fresh_ptr, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Ok(&fresh.value),
            Err(winner) => match Self::deref(winner) {
                // Another thread published first; ours stays leaked (rare, bounded by threads).
                Some(slot) if slot.pid == pid => Ok(&slot.value),
                _ => Ok(&fresh.value),
            },
        }
    }

    /// The value of this process, if it has been built (never builds).
    pub fn get(&self) -> Option<&T> {
        Self::deref(self.slot.load(Ordering::Acquire))
            .filter(|slot| slot.pid == pid())
            .map(|slot| &slot.value)
    }

    fn deref(ptr: *mut Slot<T>) -> Option<&'static Slot<T>> {
        if ptr.is_null() {
            None
        } else {
            // Pointers stored here come only from Box::leak and are never freed.
            #[allow(unsafe_code)]
            Some(unsafe { &*ptr })
        }
    }
}

impl<T: 'static> Drop for PerProcess<T> {
    /// Statics are never dropped; a per-client cell frees its value if this process built it.
    /// A value inherited from the parent is leaked, as above.
    fn drop(&mut self) {
        let ptr = *self.slot.get_mut();
        if Self::deref(ptr).is_some_and(|slot| slot.pid == pid()) {
            // Only `get_or_try_init` publishes pointers, all from Box::leak; `&mut self`
            // guarantees no reference handed out by it is still alive.
            #[allow(unsafe_code)]
            drop(unsafe { Box::from_raw(ptr) });
        }
    }
}

static RUNTIME: PerProcess<tokio::runtime::Runtime> = PerProcess::new();

/// The process's one tokio runtime (multi-threaded; two workers are plenty for I/O).
pub fn runtime() -> crate::error::Result<&'static tokio::runtime::Runtime> {
    RUNTIME.get_or_try_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("recurring-payments-io")
            .enable_all()
            .build()
            .map_err(|e| {
                crate::error::Error::Internal(format!("cannot start the I/O runtime: {e}"))
            })
    })
}

/// The runtime if this process has started it already: a check that needs no GIL release.
pub fn started() -> Option<&'static tokio::runtime::Runtime> {
    RUNTIME.get()
}

/// A value owned by one thread of one process. After a fork the child's copy of the parent's
/// value (a runtime whose epoll fd and sockets the parent still uses) is leaked, never dropped.
pub struct ThreadOwned<T> {
    pid: u32,
    value: std::mem::ManuallyDrop<T>,
}

impl<T> ThreadOwned<T> {
    pub fn new(value: T) -> Self {
        ThreadOwned {
            pid: pid(),
            value: std::mem::ManuallyDrop::new(value),
        }
    }

    /// The value in `slot` if this process built it; otherwise (empty, or a parent's copy,
    /// which is forgotten here) the one `build` makes, stored in `slot` first.
    pub fn get_or_build<E>(
        slot: &mut Option<Self>,
        build: impl FnOnce() -> Result<T, E>,
    ) -> Result<&mut T, E> {
        let pid = pid();
        let owned = match slot.take() {
            Some(owned) if owned.pid == pid => owned,
            _ => ThreadOwned::new(build()?),
        };
        Ok(&mut *slot.insert(owned).value)
    }

    /// The value in `slot` if this process built it (never builds).
    pub fn get_mut(slot: &mut Option<Self>) -> Option<&mut T> {
        slot.as_mut()
            .filter(|owned| owned.pid == pid())
            .map(|owned| &mut *owned.value)
    }
}

impl<T> Drop for ThreadOwned<T> {
    fn drop(&mut self) {
        if self.pid == pid() {
            // Built by this process and dropped once, here.
            #[allow(unsafe_code)]
            unsafe {
                std::mem::ManuallyDrop::drop(&mut self.value)
            }
        }
    }
}

/// This thread's current-thread runtime; shut down without waiting when the thread exits.
struct LocalRuntime {
    rt: Option<tokio::runtime::Runtime>,
    /// The timer of `block_on_here_checking`, kept from call to call: moving a pending timer
    /// later is one atomic store, where a new one is added to the runtime's timer wheel and
    /// removed again on every call.
    tick: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Drop for LocalRuntime {
    fn drop(&mut self) {
        self.tick = None;
        // A thread-local destructor must not block: a DNS lookup still running on the
        // runtime's blocking pool is abandoned rather than awaited.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

thread_local! {
    static LOCAL: std::cell::RefCell<Option<ThreadOwned<LocalRuntime>>> =
        const { std::cell::RefCell::new(None) };
}

/// Run `future` to completion on the calling thread, on its own current-thread runtime (built
/// on first use, again after a fork). Requests driven here use the thread's own pool
/// (`wire::Driver::ThisThread`): their connections are polled only while this thread is
/// in here, so they never serve another thread.
///
/// The future is boxed first: a request's future is several KB, and tokio's `block_on` moves
/// it by value through a few frames (memcpy measured at ~14,000 instructions per request).
pub fn block_on_here<F: Future>(future: F) -> crate::error::Result<F::Output> {
    let future = Box::pin(future);
    on_this_thread(|rt, _| rt.block_on(future))
}

/// Like `block_on_here`, and `check` runs each time `every` passes while `future` is not
/// done; an error from `check` ends the wait (dropping `future`). The timer is this thread's,
/// kept across calls.
pub fn block_on_here_checking<F: Future, E>(
    future: F,
    every: Duration,
    mut check: impl FnMut() -> Result<(), E>,
) -> crate::error::Result<Result<F::Output, E>> {
    let mut future = Box::pin(future);
    on_this_thread(|rt, tick| {
        rt.block_on(async {
            let next = || tokio::time::Instant::now() + every;
            let tick = tick.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(next())));
            tick.as_mut().reset(next());
            poll_fn(|cx| loop {
                // The call first, as a `biased` select: an outcome ready when the timer is
                // due is not lost to the check.
                if let Poll::Ready(output) = future.as_mut().poll(cx) {
                    return Poll::Ready(Ok(output));
                }
                ready!(tick.as_mut().poll(cx));
                if let Err(e) = check() {
                    return Poll::Ready(Err(e));
                }
                tick.as_mut().reset(next());
            })
            .await
        })
    })
}

/// `run` with this thread's runtime (built on first use, again after a fork) and its timer.
fn on_this_thread<T>(
    run: impl FnOnce(&tokio::runtime::Runtime, &mut Option<Pin<Box<tokio::time::Sleep>>>) -> T,
) -> crate::error::Result<T> {
    let gone = || crate::error::Error::Internal("this thread's I/O runtime is gone".into());
    LOCAL
        .try_with(|cell| {
            // Borrowed already: a request from inside a request on this thread (a signal handler
            // run by the interrupt check); tokio would panic on the nested block_on.
            let mut slot = cell.try_borrow_mut().map_err(|_| {
                crate::error::Error::Internal(
                    "a request cannot start while this thread waits for another one".into(),
                )
            })?;
            let LocalRuntime { rt, tick } = ThreadOwned::get_or_build(&mut slot, || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map(|rt| LocalRuntime {
                        rt: Some(rt),
                        tick: None,
                    })
                    .map_err(|e| {
                        crate::error::Error::Internal(format!(
                            "cannot start this thread's I/O runtime: {e}"
                        ))
                    })
            })?;
            match rt {
                Some(rt) => Ok(run(rt, tick)),
                None => Err(gone()),
            }
        })
        .map_err(|_| gone())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_once_per_process() {
        static CELL: PerProcess<Vec<u8>> = PerProcess::new();
        let a = CELL.get_or_try_init(|| Ok::<_, ()>(vec![1])).unwrap() as *const _;
        let b = CELL.get_or_try_init(|| Ok::<_, ()>(vec![2])).unwrap() as *const _;
        assert_eq!(a, b);
        assert!(CELL.get_or_try_init(|| Err("not called")).is_ok());
        assert_eq!(CELL.get().map(|v| v as *const _), Some(a));
        static EMPTY: PerProcess<u8> = PerProcess::new();
        assert!(EMPTY.get().is_none());
        assert!(runtime().is_ok());
    }
}
