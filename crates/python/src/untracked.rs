//! Objects the cycle collector never needs to see. Every `#[pyclass]` is a GC type, so each
//! response `Document` and each item of a 5,000-item page was traversed at every collection
//! while the page was alive. An object that holds no Python object, or only strings and
//! numbers (which reference nothing), cannot be part of a reference cycle: untracking it can
//! only make the collector see fewer objects, never free one too early (what an untracked
//! object references counts as referenced from outside).

use pyo3::prelude::*;
use pyo3::PyClass;

/// `value` as a new Python object that the cycle collector does not track. Only for values
/// that never hold, now or later, a Python object other than a string or a number.
pub(crate) fn new_untracked<T: PyClass + Into<PyClassInitializer<T>>>(
    py: Python<'_>,
    value: T,
) -> PyResult<Bound<'_, T>> {
    let object = Bound::new(py, value)?;
    // SAFETY: the object was just created and is alive (we hold a reference); untracking an
    // object is allowed at any time, and pyo3's dealloc untracks it again harmlessly.
    #[allow(unsafe_code)]
    unsafe {
        pyo3::ffi::PyObject_GC_UnTrack(object.as_ptr().cast());
    }
    Ok(object)
}
