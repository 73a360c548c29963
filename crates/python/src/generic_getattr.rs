//! An object's normal attribute lookup (`object.__getattribute__`: data descriptors, the
//! instance's `__dict__`, the class's attributes) that reports "not found" as `None` rather
//! than by raising `AttributeError`: on CPython 3.11, raising one formats its message
//! (~1,900 instructions), which a resource's relation read as an attribute paid on every read
//! (`resource.rs`, `__getattribute__`).
//!
//! CPython's `_PyObject_GenericGetAttrWithDict(obj, name, NULL, suppress=1)` does that lookup
//! and, when it finds nothing or a descriptor raises `AttributeError`, returns NULL with no
//! exception set (what `__getattr__` hooks run after). It is private, so the stable ABI does
//! not promise it: it is looked up by name in the running interpreter once, never linked
//! (an import must not fail where it is absent), and where it is absent the lookup is
//! `PyObject_GenericGetAttr` with its `AttributeError` caught, the same answer, dearer.

use std::ffi::c_int;
use std::sync::OnceLock;

use pyo3::exceptions::PyAttributeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// `_PyObject_GenericGetAttrWithDict`'s signature, the same in CPython 3.7 to 3.15.
type GetAttrWithDict = unsafe extern "C" fn(
    obj: *mut ffi::PyObject,
    name: *mut ffi::PyObject,
    dict: *mut ffi::PyObject,
    suppress: c_int,
) -> *mut ffi::PyObject;

/// The running interpreter's `_PyObject_GenericGetAttrWithDict`, if it exports one.
fn suppressing_lookup() -> Option<GetAttrWithDict> {
    static FOUND: OnceLock<Option<GetAttrWithDict>> = OnceLock::new();
    *FOUND.get_or_init(find_suppressing_lookup)
}

#[cfg(unix)]
fn find_suppressing_lookup() -> Option<GetAttrWithDict> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads the loaded objects'
    // symbol tables. The symbol, when present, is CPython's function of that signature (the
    // name is CPython's own, in every version that has it).
    #[allow(unsafe_code)]
    unsafe {
        let symbol = libc::dlsym(
            libc::RTLD_DEFAULT,
            c"_PyObject_GenericGetAttrWithDict".as_ptr(),
        );
        (!symbol.is_null())
            .then(|| std::mem::transmute::<*mut libc::c_void, GetAttrWithDict>(symbol))
    }
}

#[cfg(not(unix))]
fn find_suppressing_lookup() -> Option<GetAttrWithDict> {
    None
}

/// What `object.__getattribute__(obj, name)` returns, or `None` where it would raise
/// `AttributeError` (nothing found, or a property or other descriptor raising it); any other
/// error is returned.
pub(crate) fn generic_getattr<'py>(
    obj: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = obj.py();
    let (obj, name) = (obj.as_ptr(), name.as_ptr());
    // SAFETY: both objects are alive (borrowed for the call) and `name` is a `str`; a NULL
    // dict asks for the instance's own. Each returns a new reference, or NULL: with suppress,
    // with an exception set only for an error other than `AttributeError`.
    #[allow(unsafe_code)]
    let found = unsafe {
        let found = match suppressing_lookup() {
            Some(lookup) => lookup(obj, name, std::ptr::null_mut(), 1),
            None => ffi::PyObject_GenericGetAttr(obj, name),
        };
        Bound::from_owned_ptr_or_opt(py, found)
    };
    match found {
        Some(found) => Ok(Some(found)),
        None => match PyErr::take(py) {
            None => Ok(None),
            Some(e) if e.is_instance_of::<PyAttributeError>(py) => Ok(None),
            Some(e) => Err(e),
        },
    }
}
