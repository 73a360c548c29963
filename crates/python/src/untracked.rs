//! Objects the cycle collector never needs to see. Every `#[pyclass]` is a GC type, so each
//! response `Document` and each item of a 5,000-item page was traversed at every collection
//! while the page was alive. An object that holds no Python object, or only strings and
//! numbers (which reference nothing), cannot be part of a reference cycle: untracking it can
//! only make the collector see fewer objects, never free one too early (what an untracked
//! object references counts as referenced from outside).
//!
//! A page's embedded `Resource`s are made untracked too (`resource::resource_items`): while nothing
//! was read of them but fields, what they hold (their session, document and CURIEs) cannot
//! lead back to them, and the Python layer tracks one again (`track`) before it keeps
//! anything else (links, embedded resources, relations read as attributes).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::PyClass;

/// `value` as a new Python object that the cycle collector does not track. Only for values
/// that never hold, now or later, a Python object other than a string or a number.
pub(crate) fn new_untracked<T: PyClass + Into<PyClassInitializer<T>>>(
    py: Python<'_>,
    value: T,
) -> PyResult<Bound<'_, T>> {
    let object = Bound::new(py, value)?;
    untrack(object.as_any());
    Ok(object)
}

/// Track `object` again if it is a GC object the collector does not track (else nothing):
/// before an untracked item keeps an object through which a cycle could close.
#[pyfunction]
pub(crate) fn track(object: &Bound<'_, PyAny>) {
    let pointer = object.as_ptr();
    // SAFETY: `object` is alive (we hold a reference) and fully made. Tracking is only for GC
    // objects (checked by their type's flag) that are not tracked (checked first: tracking
    // one twice is a fatal error).
    #[allow(unsafe_code)]
    unsafe {
        if is_gc(pointer) && ffi::PyObject_GC_IsTracked(pointer) == 0 {
            ffi::PyObject_GC_Track(pointer.cast());
        }
    }
}

/// Stop the collector tracking `object`, if it is a GC object (else nothing).
pub(crate) fn untrack(object: &Bound<'_, PyAny>) {
    let pointer = object.as_ptr();
    // SAFETY: `object` is alive (we hold a reference); untracking a GC object is allowed at
    // any time, tracked or not (CPython's and pyo3's deallocators untrack again harmlessly).
    // A non-GC object has no GC header to touch: checked by its type's flag.
    #[allow(unsafe_code)]
    unsafe {
        if is_gc(pointer) {
            ffi::PyObject_GC_UnTrack(pointer.cast());
        }
    }
}

/// Whether `object`'s type is a GC type (has the collector's header before the object).
///
/// # Safety
/// `object` must point to a live Python object.
#[allow(unsafe_code)]
unsafe fn is_gc(object: *mut ffi::PyObject) -> bool {
    // SAFETY: a live object has a live type.
    unsafe { ffi::PyType_HasFeature(ffi::Py_TYPE(object), ffi::Py_TPFLAGS_HAVE_GC) != 0 }
}
