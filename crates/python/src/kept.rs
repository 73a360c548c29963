//! A Python value made once and kept: one pointer, set by a compare-and-swap. A document keeps
//! each field it converted in one of these: unlike a `OnceLock`, no `Once` state to set per
//! field and to check again when the item is dropped (a page read whole, every field of 5,000
//! items: 118.5M -> 114.9M instructions).

use std::mem::ManuallyDrop;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};

/// Empty, or one strong reference to a Python object.
pub(crate) struct Kept(AtomicPtr<ffi::PyObject>);

impl Kept {
    pub(crate) fn new() -> Kept {
        Kept(AtomicPtr::new(null_mut()))
    }

    /// The value kept, if any.
    #[inline]
    pub(crate) fn get<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        let kept = self.0.load(Ordering::Acquire);
        // SAFETY: a non-null pointer here is a strong reference this cell owns until it is
        // dropped, and it is never replaced: the object is alive while `self` is.
        #[allow(unsafe_code)]
        (!kept.is_null()).then(|| unsafe { Bound::from_borrowed_ptr(py, kept) })
    }

    /// Keeps `value` unless a value is already kept; returns the one kept.
    pub(crate) fn keep<'py>(&self, value: Bound<'py, PyAny>) -> Bound<'py, PyAny> {
        let py = value.py();
        let ours = value.into_ptr();
        match self
            .0
            .compare_exchange(null_mut(), ours, Ordering::AcqRel, Ordering::Acquire)
        {
            // SAFETY: the cell now owns the reference `into_ptr` gave up; this is a new one.
            #[allow(unsafe_code)]
            Ok(_) => unsafe { Bound::from_borrowed_ptr(py, ours) },
            Err(kept) => {
                // SAFETY: `ours` is the reference `into_ptr` gave up, taken back to be dropped;
                // `kept` is owned by the cell (as in `get`).
                #[allow(unsafe_code)]
                unsafe {
                    drop(Bound::from_owned_ptr(py, ours));
                    Bound::from_borrowed_ptr(py, kept)
                }
            }
        }
    }

    /// Visits the value kept, if any, for the cycle collector's traversal (which must not
    /// touch reference counts).
    pub(crate) fn visit(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        let kept = self.0.load(Ordering::Acquire);
        if kept.is_null() {
            return Ok(());
        }
        // SAFETY: the collector traverses on an attached thread, and the cell's reference is
        // only wrapped (no count taken or given back: `ManuallyDrop`) to be passed to `visit`.
        #[allow(unsafe_code)]
        let kept = unsafe { Bound::from_owned_ptr(Python::assume_attached(), kept) };
        visit.call(&*ManuallyDrop::new(kept.unbind()))
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        let kept = *self.0.get_mut();
        if kept.is_null() {
            return;
        }
        // SAFETY: a cell is only set by a read from Python, so its owner is a Python object,
        // dropped by its deallocator on an attached thread. The token only wraps the cell's
        // reference in a `Py`, whose drop releases it (or defers that if not attached).
        #[allow(unsafe_code)]
        let kept = unsafe { Bound::from_owned_ptr(Python::assume_attached(), kept) };
        drop(kept.unbind());
    }
}
