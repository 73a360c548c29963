//! Rust threads that call into Python (the asyncio completion thread, sandbox handlers) must be
//! out of Python before the interpreter finalizes.
//!
//! CPython up to 3.13 ends a thread that wants the GIL back during finalization with
//! `pthread_exit`; its forced unwind through Rust frames aborts the whole process (SIGABRT
//! after a script's last line, when a completion was still writing the loop's wake-up byte). An
//! `atexit` hook, which runs before finalization starts, closes the gate and waits, without the
//! GIL, for the threads inside to leave; after that no Rust thread enters Python again.
//!
//! The state is one atomic word tagged with the pid: no lock a fork could leave held, and a
//! child starts with an open gate and nobody inside.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// pid (high 32 bits) | closing (bit 31) | threads inside Python (low 31 bits).
static GATE: AtomicU64 = AtomicU64::new(0);

const CLOSING: u64 = 1 << 31;
const INSIDE: u64 = CLOSING - 1;

/// How long the exit hook waits for a thread still in Python (a sandbox handler may be slow).
const EXIT_WAIT: Duration = Duration::from_secs(5);

fn this_process(word: u64) -> bool {
    word >> 32 == u64::from(rp_core::runtime::pid())
}

fn fresh() -> u64 {
    u64::from(rp_core::runtime::pid()) << 32
}

/// Change the gate with `step` (given the word of this process), atomically.
fn update(step: impl Fn(u64) -> Option<u64>) -> bool {
    GATE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
        step(if this_process(word) { word } else { fresh() })
    })
    .is_ok()
}

/// Run `f` with the GIL, unless the interpreter is shutting down (then `None`).
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    if !update(|word| (word & CLOSING == 0).then_some(word + 1)) {
        return None;
    }
    // Leaves on unwind too, so a panicking job cannot keep the exit hook waiting.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            update(|word| (word & INSIDE > 0).then(|| word - 1));
        }
    }
    let _leave = Leave;
    Python::try_attach(f)
}

/// Whether the exit hook has run in this process: no Rust thread enters Python any more.
pub fn closing() -> bool {
    let word = GATE.load(Ordering::Acquire);
    this_process(word) && word & CLOSING != 0
}

/// The `atexit` hook: close the gate, then wait (GIL released) for the threads inside.
#[pyfunction]
fn close_python_gate(py: Python<'_>) {
    update(|word| Some(word | CLOSING));
    py.detach(|| {
        let deadline = Instant::now() + EXIT_WAIT;
        while inside() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

fn inside() -> u64 {
    let word = GATE.load(Ordering::Acquire);
    if this_process(word) {
        word & INSIDE
    } else {
        0
    }
}

/// Register the hook (at import of the extension module).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(close_python_gate, m)?;
    m.py().import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
}
