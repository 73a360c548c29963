//! New objects of the Python subclasses of the native bases (`_ResourceCore`, `_LinkCore`)
//! made without running Python (what `Resource._make` and `_LinkBase._plain` stand for): the
//! native value placed in a new object of the subclass, with no attribute lookup, argument
//! tuple or argument parsing (~700 instructions an item of a page, BENCHMARKS.md).

use std::marker::PhantomData;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;
use pyo3::{PyClass, PyClassInitializer};

/// Makes objects of `cls`, a subclass of the native `T` that keeps `T`'s `__new__`, from `T`'s
/// value: what that `__new__` does once it has parsed its arguments.
pub(crate) struct Maker<'a, 'py, T> {
    cls: &'a Bound<'py, PyType>,
    native: PhantomData<T>,
}

impl<'a, 'py, T: PyClass> Maker<'a, 'py, T> {
    /// A maker of `cls`'s objects; an error if `cls` is not a subclass of `T` or overrides
    /// `__new__` (whose code would then not run).
    pub(crate) fn of(cls: &'a Bound<'py, PyType>) -> PyResult<Self> {
        if !cls.is_subclass_of::<T>()? {
            return Err(PyTypeError::new_err(format!(
                "{} is not a native resource or link class",
                cls.name()?
            )));
        }
        if tp_new(cls) != tp_new(&T::type_object(cls.py())) {
            return Err(PyTypeError::new_err(format!(
                "{} overrides __new__",
                cls.name()?
            )));
        }
        Ok(Maker {
            cls,
            native: PhantomData,
        })
    }

    /// A new object of the class, holding `value`.
    pub(crate) fn make(
        &self,
        value: impl Into<PyClassInitializer<T>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.cls.py();
        // SAFETY: `cls` is `T`'s type object or a subclass that inherits `T`'s `tp_new` (`of`),
        // which is what `tp_new_impl` asks of it: the object is laid out as `T`'s `__new__`
        // lays it out. A non-null result is a new reference.
        #[allow(unsafe_code)]
        unsafe {
            let made =
                pyo3::impl_::pymethods::tp_new_impl(py, value.into(), self.cls.as_type_ptr())?;
            Ok(Bound::from_owned_ptr(py, made))
        }
    }
}

/// The address of `cls`'s `tp_new` slot (null for none).
fn tp_new(cls: &Bound<'_, PyType>) -> usize {
    // SAFETY: `cls` is a live type object; `PyType_GetSlot` reads static types from 3.10 on.
    #[allow(unsafe_code)]
    let new = unsafe { ffi::PyType_GetSlot(cls.as_type_ptr(), ffi::Py_tp_new) };
    new as usize
}
