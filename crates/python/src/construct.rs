//! New objects of the Python subclasses of the native bases (`_ResourceCore`, `_LinkCore`)
//! made without running Python: their `tp_new` called directly, with no attribute lookup or
//! keyword dict (what `Resource._make` and `_LinkBase._plain` stand for).

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use pyo3::PyTypeInfo;

/// A new object of `cls`, a subclass of `T`, as `cls.__new__(cls, *args)` makes it.
pub(crate) fn new_of_type<'py, T: PyTypeInfo>(
    cls: &Bound<'py, PyType>,
    args: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    tp_new_of::<T>(cls)?.call(cls, args)
}

/// The `tp_new` of `cls`, checked to be a subclass of `T` (whose `tp_new` it inherits).
pub(crate) struct New(ffi::newfunc);

pub(crate) fn tp_new_of<T: PyTypeInfo>(cls: &Bound<'_, PyType>) -> PyResult<New> {
    if !cls.is_subclass_of::<T>()? {
        return Err(PyTypeError::new_err(format!(
            "{} is not a native resource or link class",
            cls.name()?
        )));
    }
    // SAFETY: `cls` is a live type object; `PyType_GetSlot` reads static types from 3.10 on.
    #[allow(unsafe_code)]
    let new = unsafe { ffi::PyType_GetSlot(cls.as_type_ptr(), ffi::Py_tp_new) };
    if new.is_null() {
        return Err(PyTypeError::new_err(format!(
            "{} has no __new__",
            cls.name()?
        )));
    }
    // SAFETY: what `Py_tp_new` holds is a `newfunc`.
    #[allow(unsafe_code)]
    Ok(New(unsafe {
        std::mem::transmute::<*mut std::ffi::c_void, ffi::newfunc>(new)
    }))
}

impl New {
    /// `cls.__new__(cls, *args)` without the lookup: the function with the type and an
    /// argument tuple, as Python calls it.
    pub(crate) fn call<'py>(
        &self,
        cls: &Bound<'py, PyType>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: `cls`'s own `tp_new` (`tp_new_of`) with `cls` and an argument tuple, both
        // alive; a null result sets an error.
        #[allow(unsafe_code)]
        unsafe {
            let made = (self.0)(cls.as_type_ptr(), args.as_ptr(), std::ptr::null_mut());
            Bound::from_owned_ptr_or_err(cls.py(), made)
        }
    }
}
